"""Protocol suite files (TOML): what a session runs, validated before anything moves.

    [suite]
    name = "free_motion"
    description = "..."
    repeats = 5                    # each trial, unless the trial overrides it (1 to MAX_REPEATS)
    [suite.settle]                 # when a trial counts as finished (the paper's steady-state rule)
    speed_deg_s = 0.1              # the model (dry run, comparisons): the paper's rule
    measured_speed_deg_s = 1.0     # the rig: slope of the mocap joint angles over window_s
    window_s = 1.0
    hold_s = 0.1                   # shorter than timeout_s
    timeout_s = 20.0               # at most MAX_TRIAL_S
    [suite.limits]                 # may only tighten the rig's ceilings (rig.toml [limits], protocols/limits.py);
    max_excursion_mm = 20.0        # absent: the ceiling. Or per tendon: max_excursion_mm = { FDP = 20.0, ED = 10.0 }
    max_tendon_force_N = 40.0
    max_fingertip_force_N = 15.0

    [[trial]]
    name = "free/FDP"
    pose = "Flex"                  # Flex, Hook or Curl
    pulls = [{ tendon = "FDP", amplitude_mm = 15.0, duration_s = 4.0, start_s = 0.0 }]   # ends by MAX_TRIAL_S
    surface_angle_deg = 45.0       # optional: present = a surface-contact trial
    return = true                  # back to zero excursion after it settled
    repeats = 3                    # optional override

A suite is validated against a rig's ceilings (``parse_suite(..., ceilings=)``, ``within(suite, ceilings)``;
default: the default ceilings, so no suite ever asks for more than them): a limit above a ceiling is
refused, and so is a pull whose amplitude plus the worst pretension offset exceeds its excursion limit.

Every problem is reported as ``file:LINE: key: reason`` (keys like ``trial[3].pulls[0].tendon``), all of
them at once, so a protocol is fixed in one pass.
"""

from __future__ import annotations

import hashlib
import math
import re
import tomllib
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path

from uartlab.drivers.interfaces import ConfigError
from uartlab.names import MAX_SURFACE_ANGLE_DEG
from uartlab.protocols.limits import (  # noqa: F401 - DEFAULT_MAX_* re-exported: their old home
    DEFAULT_CEILINGS,
    DEFAULT_MAX_EXCURSION_MM,
    DEFAULT_MAX_FINGERTIP_FORCE_N,
    DEFAULT_MAX_TENDON_FORCE_N,
    Ceilings,
    Limits,
    excursion_overruns,
)
from uartlab.protocols.trajectories import Trajectory
from uartlab.schema import NAME_BYTES
from uartlab.sim.inputs import Sigmoid as SimSigmoid
from uartlab.sim.names import POSES, TENDONS
from uartlab.sim.scenarios import DURATION_S, REPEATS, Trial
from uartlab.sim.toml_lines import line_of_key, not_toml

BUILTIN_SUITES: tuple[str, ...] = ("free_motion", "surface_contact")

# Defaults. Settle: the paper's rule, "all joint angle velocities were less than 0.1 deg/s"; the hold
# and timeout match sim.integrators (STEADY_HOLD_S) and Finger.simulate (settle_timeout_s).
DEFAULT_SPEED_DEG_S = 0.1
DEFAULT_HOLD_S = 0.1
DEFAULT_TIMEOUT_S = 20.0
# The rig cannot apply the paper's 0.1 deg/s to measured angles: per-frame IK noise is ~0.1-0.8 deg (DIP
# worst, drivers/joint_angles.py), so even the slope of a least-squares line over 1 s of 100 Hz frames
# scatters by ~0.3 deg/s. 1 deg/s over 1 s is ~3 sigma above that noise and still 1/200 of a 4 s pull's
# mean speed (~50 deg/s); the model side keeps the paper's rule.
DEFAULT_MEASURED_SPEED_DEG_S = 1.0
DEFAULT_WINDOW_S = 1.0
# est.: the paper's trials pull for 4 s and settle within seconds; a pull that ends, or a settle that times
# out, later than this is a typo. The model and the run hold a trial's samples in memory (at 10 ms a
# step, 35 states): ten minutes is 60 000 steps, where 1e6 s took 26 GiB.
MAX_TRIAL_S = 600.0
# est.: the paper repeats each trial five times; 100 repeats of its 22 trials is some 6 h at the rig, and
# more is a typo (the limits are checked over every repeat of the plan: 1e8 of them took minutes).
MAX_REPEATS = 100

_SUITE_KEYS = {"name", "description", "repeats", "settle", "limits"}
_SETTLE_KEYS = {"speed_deg_s", "measured_speed_deg_s", "window_s", "hold_s", "timeout_s"}
_LIMIT_KEYS = {"max_excursion_mm", "max_tendon_force_N", "max_fingertip_force_N"}
_TRIAL_KEYS = {"name", "pose", "pulls", "surface_angle_deg", "return", "repeats"}
_PULL_KEYS = {"tendon", "amplitude_mm", "duration_s", "start_s"}


class SuiteError(ConfigError):
    """A suite file is wrong; ``errors`` holds every ``file:line: key: reason`` found."""

    def __init__(self, errors: list[str]):
        self.errors = errors
        super().__init__("\n".join(errors))


@dataclass(frozen=True)
class Settle:
    speed_deg_s: float = DEFAULT_SPEED_DEG_S                     # model: every joint slower than this
    hold_s: float = DEFAULT_HOLD_S                               # ... continuously for this long
    timeout_s: float = DEFAULT_TIMEOUT_S
    measured_speed_deg_s: float = DEFAULT_MEASURED_SPEED_DEG_S   # rig: the same rule on measured angles
    window_s: float = DEFAULT_WINDOW_S                           # ... whose speed is a slope over this window


@dataclass(frozen=True)
class Pull:
    tendon: str
    amplitude_mm: float
    duration_s: float = DURATION_S
    start_s: float = 0.0


@dataclass(frozen=True)
class SuiteTrial:
    name: str
    pose: str
    pulls: tuple[Pull, ...]
    surface_angle_deg: float | None = None
    return_to_start: bool = False
    repeats: int = REPEATS

    @property
    def kind(self) -> str:
        return "free" if self.surface_angle_deg is None else "contact"

    def trajectory(self, return_at_s: float | None = None) -> Trajectory:
        """The pulls as excursion data; with ``return_at_s`` every pulled tendon then returns to 0."""
        return Trajectory.pulls(((p.tendon, p.amplitude_mm * 1e-3, p.duration_s, p.start_s) for p in self.pulls),
                                return_at_s if self.return_to_start else None)

    def sim_trial(self) -> Trial:
        """The same trial as sim.scenarios describes it, for trial_start and comparisons."""
        pulls = tuple(SimSigmoid(p.tendon, p.amplitude_mm * 1e-3, p.duration_s, p.start_s) for p in self.pulls)
        return Trial(self.kind, self.pose, pulls, self.surface_angle_deg)


@dataclass(frozen=True)
class Suite:
    name: str
    description: str
    repeats: int
    settle: Settle
    limits: Limits
    trials: tuple[SuiteTrial, ...]
    source: str          # the file name errors and the session file refer to
    text: str            # the exact file text, stored in the session file

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


# ------------------------------------------------------------------ loading
def load_suite(path: str | Path, ceilings: Ceilings | None = None) -> Suite:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise SuiteError([f"{path}: not a suite file: not UTF-8 text (byte {exc.start})"]) from None
    except OSError as exc:
        raise SuiteError([f"{path}: cannot read the suite: {(exc.strerror or str(exc)).lower()}"]) from None
    return parse_suite(text, str(path), ceilings)


def builtin_suite(name: str, ceilings: Ceilings | None = None) -> Suite:
    """One of the paper's suites shipped with the package ("free_motion", "surface_contact")."""
    if name not in BUILTIN_SUITES:
        raise ConfigError(f"unknown built-in suite {name!r}; expected one of {', '.join(BUILTIN_SUITES)}")
    text = resources.files("uartlab.protocols").joinpath("suites", f"{name}.toml").read_text(encoding="utf-8")
    return parse_suite(text, f"{name}.toml", ceilings)


def resolve_suite(name_or_path: str, ceilings: Ceilings | None = None) -> Suite:
    """A built-in name or a path to a suite file (what the CLI's SUITE argument accepts), validated against a
    rig's ``ceilings`` (default: the default ceilings)."""
    if name_or_path in BUILTIN_SUITES:
        return builtin_suite(name_or_path, ceilings)
    path = Path(name_or_path)
    if not path.exists() and path.suffix.lower() != ".toml" and len(path.parts) == 1:   # a mistyped name
        import difflib

        close = difflib.get_close_matches(name_or_path, BUILTIN_SUITES, n=1)
        hint = f": did you mean {close[0]}?" if close else ""
        raise ConfigError(f"unknown suite {name_or_path!r}{hint} (built-in: {', '.join(BUILTIN_SUITES)}; "
                          "or a path to a .toml)")
    return load_suite(name_or_path, ceilings)


def parse_suite(text: str, name: str = "<suite>", ceilings: Ceilings | None = None) -> Suite:
    """Validate a suite file's text against a rig's ``ceilings`` (default: the default ceilings); its
    limits are then the effective ones: the suite's where it sets them, else the ceilings'."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SuiteError([not_toml(name, exc, text)]) from None
    return _Parser(text, name, ceilings or DEFAULT_CEILINGS).suite(data)


def within(suite: Suite, ceilings: Ceilings) -> Suite:
    """``suite`` validated again, from its own text, against this rig's ``ceilings`` (a suite chosen before the
    rig was known, in the window); its limits become this rig's effective ones, its trials stay as chosen."""
    return replace(parse_suite(suite.text, suite.source, ceilings), trials=suite.trials)


class _Parser:
    """Reads one file; every check appends to ``errors`` so all of them are reported together."""

    def __init__(self, text: str, name: str, ceilings: Ceilings = DEFAULT_CEILINGS):
        self.text, self.name = text, name
        self.errors: list[str] = []
        self.ceilings = ceilings

    def error(self, key: str, reason: str) -> None:
        line = key_line(self.text, key)
        self.errors.append(f"{self.name}:{line}: {key}: {reason}" if line else f"{self.name}: {key}: {reason}")

    def unknown(self, prefix: str, table: dict, allowed: set[str]) -> None:
        for k in table:
            if k not in allowed:
                self.error(f"{prefix}.{k}" if prefix else k,
                           f"unknown key; expected one of {', '.join(sorted(allowed))}")

    def number(self, key: str, value: object, default: float, positive: bool = True) -> float:
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            self.error(key, f"must be a number, got {value!r}")
            return default
        if positive and value <= 0:
            self.error(key, f"must be > 0, got {value!r}")
        return float(value)

    def repeats(self, key: str, value: object, default: int) -> int:
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_REPEATS:
            self.error(key, f"must be a whole number from 1 to {MAX_REPEATS}, got {value!r}")
            return default
        return value

    def checked_name(self, key: str, value: object) -> str:
        """A suite's or trial's name: what the session file and the reports know it by, whole."""
        name = self.string(key, value)
        n_bytes = len(name.encode("utf-8"))
        if n_bytes > NAME_BYTES:
            self.error(key, f"{n_bytes} bytes long; at most {NAME_BYTES} (UTF-8)")
        return name

    def string(self, key: str, value: object, default: str = "") -> str:
        if value is None:
            return default
        if not isinstance(value, str):
            self.error(key, f"must be a string, got {value!r}")
            return default
        return value

    def table(self, key: str, value: object) -> dict:
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.error(key, f"must be a table, got {value!r}")
            return {}
        return value

    def suite(self, data: dict) -> Suite:
        self.unknown("", data, {"suite", "trial"})
        head = self.table("suite", data.get("suite"))
        if "suite" not in data:
            self.error("suite", "missing [suite] table")
        self.unknown("suite", head, _SUITE_KEYS)
        name = self.checked_name("suite.name", head.get("name"))
        if not name and "suite" in data:
            self.error("suite.name", "missing: every suite needs a name")
        repeats = self.repeats("suite.repeats", head.get("repeats"), REPEATS)
        settle = self.settle(self.table("suite.settle", head.get("settle")))
        limits = self.limits(self.table("suite.limits", head.get("limits")))
        raw_trials = data.get("trial", [])
        if not isinstance(raw_trials, list) or not raw_trials:
            self.error("trial", "needs at least one [[trial]]")
            raw_trials = []
        trials, seen, indices = [], set(), []
        clean = True   # the worst-case excursions are only worked out for trials read without errors
        for i, raw in enumerate(raw_trials):
            before = len(self.errors)
            trial = self.trial(i, raw, repeats, limits)
            clean = clean and len(self.errors) == before
            if trial is None:
                continue
            if trial.name in seen:
                self.error(f"trial[{i}].name", f"duplicate trial name {trial.name!r}")
            seen.add(trial.name)
            trials.append(trial)
            indices.append(i)
        # The runner commands pretension offset + pull: refuse what would always trip the interlock.
        for overrun in excursion_overruns(trials, limits) if clean else ():
            self.error(f"trial[{indices[overrun.trial_index]}].pulls[{overrun.pull_index}].amplitude_mm",
                       overrun.reason)
        description = self.string("suite.description", head.get("description"))
        if self.errors:
            raise SuiteError(self.errors)
        return Suite(name, description, repeats, settle, limits, tuple(trials), self.name, self.text)

    def settle(self, t: dict) -> Settle:
        self.unknown("suite.settle", t, _SETTLE_KEYS)
        settle = Settle(*(self.number(f"suite.settle.{k}", t.get(k), d)
                          for k, d in (("speed_deg_s", DEFAULT_SPEED_DEG_S), ("hold_s", DEFAULT_HOLD_S),
                                       ("timeout_s", DEFAULT_TIMEOUT_S),
                                       ("measured_speed_deg_s", DEFAULT_MEASURED_SPEED_DEG_S),
                                       ("window_s", DEFAULT_WINDOW_S))))
        if settle.timeout_s > MAX_TRIAL_S:
            self.error("suite.settle.timeout_s", f"{settle.timeout_s:g} s is longer than a trial may wait "
                                                 f"({MAX_TRIAL_S:g} s)")
        if settle.hold_s >= settle.timeout_s:
            self.error("suite.settle.hold_s", f"{settle.hold_s:g} s is not shorter than timeout_s "
                                              f"({settle.timeout_s:g} s): no trial could ever settle")
        return settle

    def limits(self, t: dict) -> Limits:
        """The suite's limits, each at most the rig's ceiling; an absent key is the ceiling."""
        self.unknown("suite.limits", t, _LIMIT_KEYS)
        cap = self.ceilings.limits
        key = "suite.limits.max_excursion_mm"
        raw = t.get("max_excursion_mm")
        per_tendon = dict(cap.max_excursion_mm)
        if isinstance(raw, dict):
            for tendon, value in raw.items():
                canon = _tendon(tendon)
                if canon is None:
                    self.error(f"{key}.{tendon}", f"unknown tendon; expected one of {', '.join(TENDONS)}")
                else:
                    per_tendon[canon] = self.capped(f"{key}.{tendon}", value, cap.max_excursion_mm[canon], "mm")
        elif raw is not None:
            value = self.number(key, raw, min(cap.max_excursion_mm.values()))
            over = [tendon for tendon in TENDONS if value > cap.max_excursion_mm[tendon]]
            if over:  # one message, at the lowest ceiling it is above
                self.capped(key, value, min(cap.max_excursion_mm[tendon] for tendon in over), "mm")
            per_tendon = {tendon: min(value, cap.max_excursion_mm[tendon]) for tendon in TENDONS}
        return Limits(per_tendon,
                      self.capped("suite.limits.max_tendon_force_N", t.get("max_tendon_force_N"),
                                  cap.max_tendon_force_N, "N"),
                      self.capped("suite.limits.max_fingertip_force_N", t.get("max_fingertip_force_N"),
                                  cap.max_fingertip_force_N, "N"))

    def capped(self, key: str, value: object, ceiling: float, unit: str) -> float:
        """A positive, finite limit no higher than the rig's ``ceiling`` (refused above it, kept at it)."""
        number = self.number(key, value, ceiling)
        if number > ceiling:
            self.error(key, f"{number:g} {unit} is above this rig's ceiling of {ceiling:g} {unit} "
                            f"({self.ceilings.source})")
            return ceiling
        return number

    def trial(self, i: int, raw: object, repeats: int, limits: Limits) -> SuiteTrial | None:
        k = f"trial[{i}]"
        if not isinstance(raw, dict):
            self.error(k, "must be a [[trial]] table")
            return None
        self.unknown(k, raw, _TRIAL_KEYS)
        name = self.checked_name(f"{k}.name", raw.get("name"))
        if not name:
            self.error(f"{k}.name", "missing: every trial needs a name")
        pose = self.string(f"{k}.pose", raw.get("pose"))
        canon_pose = next((p for p in POSES if p.lower() == pose.lower()), None)
        if "pose" not in raw:
            self.error(f"{k}.pose", f"missing; expected one of {', '.join(POSES)}")
        elif canon_pose is None:
            self.error(f"{k}.pose", f"unknown pose {pose!r}; expected one of {', '.join(POSES)}")
        angle = raw.get("surface_angle_deg")
        if angle is not None:
            angle = self.number(f"{k}.surface_angle_deg", angle, 0.0, positive=False)
            if abs(angle) > MAX_SURFACE_ANGLE_DEG:
                self.error(f"{k}.surface_angle_deg", f"must be within ±{MAX_SURFACE_ANGLE_DEG:g} deg, got {angle:g}")
        back = raw.get("return", False)
        if not isinstance(back, bool):
            self.error(f"{k}.return", f"must be true or false, got {back!r}")
            back = False
        pulls = self.pulls(k, raw.get("pulls"), limits)
        return SuiteTrial(name, canon_pose or "Flex", pulls, angle, back,
                          self.repeats(f"{k}.repeats", raw.get("repeats"), repeats))

    def pulls(self, k: str, raw: object, limits: Limits) -> tuple[Pull, ...]:
        if not isinstance(raw, list) or not raw:
            self.error(f"{k}.pulls", "needs at least one pull: [{ tendon = ..., amplitude_mm = ..., "
                                     "duration_s = ... }]")
            return ()
        out, seen = [], set()
        for j, p in enumerate(raw):
            pk = f"{k}.pulls[{j}]"
            if not isinstance(p, dict):
                self.error(pk, f"must be a table {{ tendon = ..., amplitude_mm = ... }}, got {p!r}")
                continue
            self.unknown(pk, p, _PULL_KEYS)
            tendon = _tendon(self.string(f"{pk}.tendon", p.get("tendon")))
            if tendon is None:
                self.error(f"{pk}.tendon", f"unknown tendon {p.get('tendon')!r}; expected one of {', '.join(TENDONS)}")
            elif tendon in seen:
                self.error(f"{pk}.tendon", f"{tendon} is pulled twice in one trial")
            seen.add(tendon)
            amplitude = self.number(f"{pk}.amplitude_mm", p.get("amplitude_mm"), math.nan, positive=False)
            if "amplitude_mm" not in p:
                self.error(f"{pk}.amplitude_mm", "missing")
            elif tendon is not None and abs(amplitude) > limits.max_excursion_mm[tendon]:
                self.error(f"{pk}.amplitude_mm", f"{amplitude:g} mm is beyond the limit max_excursion_mm = "
                                                 f"{limits.max_excursion_mm[tendon]:g} mm for {tendon}")
            duration = self.number(f"{pk}.duration_s", p.get("duration_s"), DURATION_S)
            start = self.number(f"{pk}.start_s", p.get("start_s"), 0.0, positive=False)
            if start < 0:
                self.error(f"{pk}.start_s", f"must be >= 0 s, got {start:g}")
            if start + duration > MAX_TRIAL_S:
                self.error(f"{pk}.duration_s" if "duration_s" in p else f"{pk}.start_s",
                           f"the pull ends at {start + duration:g} s, later than a trial may ({MAX_TRIAL_S:g} s)")
            out.append(Pull(tendon or "FDP", amplitude, duration, start))
        return tuple(out)


def _tendon(name: str) -> str | None:
    return next((t for t in TENDONS if t.lower() == str(name).lower()), None)


# ------------------------------------------------------------------ lines of array-of-table keys
_INDEXED = re.compile(r"^(\w+)\[(\d+)\]\.?(.*)$")


def key_line(text: str, key: str) -> int | None:
    """Line of a key, also inside ``[[trial]]`` tables and inline arrays: ``trial[3].pulls[0].tendon``.

    sim.toml_lines does not know arrays of tables, so for an indexed key we find the Nth ``[[trial]]``
    header, then the key in that block, then the Nth inline table of an inline array.
    """
    m = _INDEXED.match(key)
    if not m:
        return line_of_key(text, key)
    table, index, rest = m.group(1), int(m.group(2)), m.group(3)
    lines = text.splitlines()
    headers = [n for n, raw in enumerate(lines) if re.match(rf"^\s*\[\[\s*{re.escape(table)}\s*\]\]", raw)]
    if index >= len(headers):
        return None
    start = headers[index]
    end = next((n for n in range(start + 1, len(lines)) if re.match(r"^\s*\[", lines[n])), len(lines))
    if not rest:
        return start + 1
    sub = _INDEXED.match(rest)
    name, tail = (sub.group(1), sub.group(3)) if sub else (rest.split(".")[0], "")
    key_at = next((n for n in range(start, end) if re.match(rf"^\s*{re.escape(name)}\s*=", lines[n])), None)
    if key_at is None:
        return start + 1
    if not sub:
        return key_at + 1
    # Walk the inline array: the Nth "{" from the key line, then the inner key within that table.
    body = "\n".join(line.split("#", 1)[0] for line in lines[key_at:end])
    opens = [pos for pos, ch in enumerate(body) if ch == "{"]
    if int(sub.group(2)) >= len(opens):
        return key_at + 1
    pos = opens[int(sub.group(2))]
    close = body.find("}", pos)
    inner = re.compile(rf"\b{re.escape(tail.split('.')[0])}\s*=").search(body, pos, close) if tail else None
    at = inner.start() if inner else pos
    return key_at + 1 + body.count("\n", 0, at)


def select_trials(suite: Suite, trials: list[str] | None, repeats: int | None) -> Suite:
    """The suite narrowed to some trials and/or another repeat count (the file's text and hash stay); what
    `uartlab run --trial/--repeats` and a core's run request ask for."""
    chosen = suite.trials
    if trials:
        names = [t.name for t in suite.trials]
        unknown = [t for t in trials if t not in names]
        if unknown:
            import difflib

            close = difflib.get_close_matches(unknown[0].lower(), [n.lower() for n in names], n=1, cutoff=0.6)
            hint = next((f"; did you mean {n}?" for n in names if close and n.lower() == close[0]), "")
            raise ConfigError(f"--trial: {suite.source} has no trial named {', '.join(map(repr, unknown))}{hint} "
                              f"(the suite has {', '.join(names)})")
        chosen = tuple(t for t in suite.trials if t.name in trials)
    if repeats is not None:
        if not 1 <= repeats <= MAX_REPEATS:
            raise ConfigError(f"--repeats must be from 1 to {MAX_REPEATS}, got {repeats}")
        chosen = tuple(replace(t, repeats=repeats) for t in chosen)
        # More repeats of a trial that does not return start each where the last left the tendon.
        if overruns := excursion_overruns(chosen, suite.limits):
            raise ConfigError(f"{suite.source}: with --repeats {repeats}: {overruns[0].reason}")
    return replace(suite, trials=chosen)
