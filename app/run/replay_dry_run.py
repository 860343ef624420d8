"""`uartlab run SUITE --replay FILE`: what these interlock limits would have done on a recorded run.

    uartlab run short.toml --replay recordings/session_x.h5 --max-tendon-force 3

Each trial of the recorded run, as the file's `runner` stream bounds it (pretension to the end of the
return), is replayed at 1x on a ``ReplayedRig`` (null actuators: nothing moves) with the suite's engine on
it - ``Experiment`` with that one trial, the same interlocks every tick, the limits as given: the suite's,
any ``--max-*`` in their place, capped by the rig's ceilings as any run is. The interlocks see the
recorded forces, excursions, saturation and stream ages; the runner commands its own trajectory into the
null servos. A trial's verdict: the first interlock trip inside the recorded trial (what, value, limit, the
seconds into the trial) or "completed". Each trial starts from clean interlocks, so every trial is judged,
not only the first to trip. Nothing is written.
"""

from __future__ import annotations

import json
import math
import re
import time
from dataclasses import asdict, dataclass, replace

import numpy as np
from uartlab.app.record.player import SessionFile
from uartlab.app.rig.config import RigConfig
from uartlab.app.run.engine import PreflightError
from uartlab.app.run.experiment import Experiment
from uartlab.app.run.replayed_rig import ReplayedRig
from uartlab.errors import InputFileError
from uartlab.hub import EVENTS
from uartlab.protocols.interlocks import InterlockLimits, Trip
from uartlab.protocols.limits import Limits, effective
from uartlab.protocols.suite import Suite
from uartlab.schema import RUNNER, RUNNER_STREAM
from uartlab.sim.names import TENDONS
from uartlab.streams import Event, EventKind

PREROLL_S = 0.5    # recorded seconds replayed before a trial: its pre-flight sees every stream delivering
TRIAL_LABEL = re.compile(r"trial '(.+)' repeat (\d+)/")   # the runner's phase events name the trial so


@dataclass(frozen=True)
class RecordedTrial:
    """One trial of the recorded run: recorded host seconds from its pretension to the end of its return."""

    name: str
    repeat: int
    start_s: float
    stop_s: float


@dataclass(frozen=True)
class Verdict:
    trial: str
    repeat: int
    outcome: str                  # "completed", "tripped", "stopped" (the runner, not an interlock), "not run"
    check: str = ""               # the interlock: force, excursion, fingertip_force, saturation, stale_stream ...
    subject: str = ""             # the tendon, servo or stream
    value: float = math.nan
    limit: float = math.nan
    at_s: float = math.nan        # recorded seconds into the trial (from its pretension)
    reason: str = ""


def recorded_trials(file: SessionFile) -> list[RecordedTrial]:
    """The trials of the recorded run, bounded by the `runner` stream's trial index; InputFileError when the
    file holds no run (a `uartlab record` session, or a run that never started a trial)."""
    if RUNNER_STREAM not in file.streams or file.length(RUNNER_STREAM) == 0:
        raise InputFileError(f"{file.path}: no `{RUNNER_STREAM}` stream: not a recorded run of a suite")
    runner = file.read(RUNNER_STREAM)
    t, index = runner.host_time_s, np.asarray(runner.data[RUNNER.trial_index])
    edges = np.flatnonzero(np.diff(index) != 0) + 1
    table = file.trials()
    events = [e for e in file.events() if e.kind == "phase"]
    out = []
    for lo, hi in zip(np.r_[0, edges], np.r_[edges, len(index)], strict=True):
        if index[lo] < 0:
            continue
        start_s, stop_s = float(t[lo]), float(t[hi - 1])
        row = next((r for r in table if start_s <= r["start_host_time_s"] <= stop_s), None)
        if row is not None:
            name, repeat = row["name"], int(row["repeat"])
        else:  # stopped before its pull: the runner's phase events still named it
            said = next((m for e in events if start_s - 0.1 <= e.host_time_s <= stop_s
                         and (m := TRIAL_LABEL.search(e.message))), None)
            name, repeat = (said.group(1), int(said.group(2))) if said else (f"plan index {int(index[lo])}", 0)
        out.append(RecordedTrial(name, repeat, start_s, stop_s))
    if not out:
        raise InputFileError(f"{file.path}: the recorded run started no trial")
    return out


def with_overrides(suite: Suite, tendon_force_N: float | None = None, fingertip_force_N: float | None = None,
                   excursion_mm: float | None = None) -> Suite:
    """The suite with the given limits in place of its own (every run caps them by the rig's ceilings)."""
    lim = suite.limits
    return replace(suite, limits=Limits(
        dict.fromkeys(TENDONS, excursion_mm) if excursion_mm is not None else lim.max_excursion_mm,
        lim.max_tendon_force_N if tendon_force_N is None else tendon_force_N,
        lim.max_fingertip_force_N if fingertip_force_N is None else fingertip_force_N))


def replay_trial(file: SessionFile, trial: RecordedTrial, suite: Suite, config: RigConfig,
                 safe_action: str = "hold") -> Verdict:
    """Run ``suite`` (narrowed to ``trial``) on the replayed trial; its verdict."""
    names = [t.name for t in suite.trials]
    if trial.name not in names:
        return Verdict(trial.name, trial.repeat, "not run", reason=f"the suite {suite.name!r} has no such trial")
    one = replace(suite, trials=tuple(replace(t, repeats=1) for t in suite.trials if t.name == trial.name))
    rig = ReplayedRig(file, max(file.time_span_s()[0], trial.start_s - PREROLL_S), trial.stop_s, config)
    trips = rig.hub.subscribe("replay-dry-run", {EVENTS}, maxsize=4096)
    exp = Experiment(rig, one, None, safe_action=safe_action)
    rig.start()
    try:
        # Armed when the recorded trial begins: the preroll only gives the pre-flight fresh streams, and a
        # trip in it (the run before this trial) would latch and hide the trial's own.
        while rig.recorded_time_s(time.monotonic()) < trial.start_s and not rig.finished.is_set():
            time.sleep(0.005)
        try:
            exp.start(preflight_timeout_s=2.0)
        except PreflightError as exc:
            return Verdict(trial.name, trial.repeat, "not run", reason=str(exc))
        # Until the recorded trial is over (the interlocks check every tick, DONE included), then no more
        # ticks: after the file's last sample every stream would look stale.
        rig.finished.wait(trial.stop_s - trial.start_s + 10.0)
        exp.close()
        runner = exp.runner
        tripped = [e for e in trips.drain() if isinstance(e, Event) and e.kind == EventKind.TRIP]
        at_s = rig.recorded_time_s(tripped[0].host_time_s) - trial.start_s if tripped else math.nan
        trip = runner.interlocks.tripped
        if trip is not None:
            return Verdict(trial.name, trial.repeat, "tripped", trip.check, trip.subject, trip.value,
                           limit_of(trip, runner.interlocks.limits), at_s, trip.reason)
        if runner.fault_reason:
            return Verdict(trial.name, trial.repeat, "stopped", "runner", at_s=at_s, reason=runner.fault_reason)
        return Verdict(trial.name, trial.repeat, "completed")
    finally:
        exp.close()
        trips.close()
        rig.stop()


def limit_of(trip: Trip, limits: InterlockLimits) -> float:
    """The limit a trip went over (NaN for the checks without one: saturation, hardware error, device)."""
    if trip.check == "force":
        return limits.max_tendon_force_N
    if trip.check == "excursion":
        return float(limits.max_excursion_m[TENDONS.index(trip.subject)] * 1e3)
    if trip.check == "fingertip_force":
        return limits.max_fingertip_force_N
    if trip.check == "stale_stream":
        return limits.max_stream_age_s.get(trip.subject, math.nan)
    return math.nan


def replay(path: str, suite: Suite, config: RigConfig | None = None, safe_action: str = "hold",
           say=None, only: set[str] | None = None) -> tuple[list[Verdict], Limits, dict[str, float]]:
    """Every recorded trial of ``path`` (or those named in ``only``), replayed: (verdicts, the effective
    limits, the stream ages), for ``config``'s rig (default: the one the session embeds)."""
    from uartlab.app.run.replayed_rig import recorded_rig_config

    with SessionFile(path) as file:
        trials = recorded_trials(file)
        config = config if config is not None else recorded_rig_config(file)
        verdicts = []
        for trial in trials:
            if only is not None and trial.name not in only:
                continue
            if say is not None:
                say(f"replaying trial {trial.name!r} repeat {trial.repeat} ({trial.stop_s - trial.start_s:.1f} s)")
            verdicts.append(replay_trial(file, trial, suite, config, safe_action))
    ages = dict(config.interlocks.max_stream_age_s)
    return verdicts, effective(config.ceilings, suite.limits), ages


# ------------------------------------------------------------------ the command
def main(args, suite: Suite, config: RigConfig) -> int:
    """Print each recorded trial's verdict (text or --json); exit 1 when any would have tripped or stopped."""
    import sys

    suite = with_overrides(suite, args.max_tendon_force, args.max_fingertip_force, args.max_excursion)
    quiet = args.json or getattr(args, "quiet", 0) > 0
    say = None if quiet else (lambda m: print(m, file=sys.stderr, flush=True))
    only = set(args.trials) if args.trials else None
    verdicts, limits, ages = replay(str(args.replay), suite, config, args.safe_action, say, only)
    if args.json:
        print(json.dumps({"session_file": str(args.replay), "suite": suite.name, "limits": asdict(limits),
                          "max_stream_age_s": ages, "trials": [_jsonable(v) for v in verdicts]}, indent=2))
    else:
        print(verdict_table(str(args.replay), suite, verdicts, limits, ages))
    return 1 if any(v.outcome in ("tripped", "stopped") for v in verdicts) else 0


def _jsonable(v: Verdict) -> dict:
    return {k: (None if isinstance(x, float) and math.isnan(x) else x) for k, x in asdict(v).items()}


def verdict_table(path: str, suite: Suite, verdicts: list[Verdict], limits: Limits, ages: dict[str, float]) -> str:
    excursion = sorted(set(limits.max_excursion_mm.values()))
    lines = [f"suite {suite.name!r} on the recorded run {path} (replayed, nothing moved)",
             f"limits: tendon force {limits.max_tendon_force_N:g} N, fingertip force "
             f"{limits.max_fingertip_force_N:g} N, excursion {'/'.join(f'{x:g}' for x in excursion)} mm, stream age "
             + ", ".join(f"{s} {a:g} s" for s, a in ages.items()),
             f"{'trial':<24} {'rep':>3} {'outcome':<10} {'interlock':<16} {'value':>8} {'limit':>8} {'at s':>6}"]
    for v in verdicts:
        if v.outcome == "tripped":
            lines.append(f"{v.trial:<24} {v.repeat:>3} {v.outcome:<10} {f'{v.check} {v.subject}'.strip():<16} "
                         f"{v.value:8.3g} {v.limit:8.3g} {v.at_s:6.2f}  {v.reason}")
        else:
            lines.append(f"{v.trial:<24} {v.repeat:>3} {v.outcome:<10} {v.reason}".rstrip())
    tripped = sum(v.outcome == "tripped" for v in verdicts)
    lines.append(f"{tripped} of {len(verdicts)} trials would have tripped")
    return "\n".join(lines)

