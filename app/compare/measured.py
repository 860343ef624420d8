"""Trials out of session files, as the comparison needs them.

A trial's time range in the session file is [actuation start, steady state reached] (the trial rows
app/run/experiment.py writes; the sigmoid's t = 0 is ``start_host_time_s``). For each trial we read, relative
to that start and in protocol seconds (host seconds x the trial's ``time_scale``: a twin at 4x runs a 4 s pull
in 1 s of host time):

- tendon excursions (``actuators.excursion_m``), the model's inputs;
- input tendon tensions from the SEAs (``daq.tendon_force_N``);
- joint angles from mocap IK (``joints.angles_rad``, anatomical, JOINTS order);
- the fingertip contact force from the Nano17 (``daq.wrench``), turned into the model's world frame.

Where a dedicated stream is missing, the runner's per-tick copy of the same quantity is used
(``runner.excursion_m`` ...). Initial values are averaged over ``INITIAL_WINDOW_S`` before actuation starts
(the finger is at rest then; the paper: "allowing for noise in measurements"), steady values over the last
``STEADY_WINDOW_S`` of the trial (the runner ends a trial after the joints have been still for its settle hold).

Force frame. The world frame is the model's: X distal along the metacarpal, Y radial, Z dorsal. The force we
report, measured and simulated alike, is the force the surface applies to the fingertip — what
``SimResult.fingertip_force_N`` gives. The Nano17 sits under the surface with its axes along the surface frame
(s_x, s_y, n of ``sim.surface.PlaneSurface``; this is how the twin plant builds ``sensor_wrench``) and measures
the force the finger applies to it, so  F_tip,world = -R_surface(angle) · M · F_sensor,  with M the sensor's
mounting rotation in the surface frame (``sim.surface.NANO17_IN_SURFACE``, identity on the twin and the paper's
rig); ``sim.surface.fingertip_force_from_sensor`` is that one conversion.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np
from uartlab.app.record.integrity import DAMAGED_BYTES
from uartlab.app.record.player import DamagedData, SessionFile
from uartlab.errors import InputFileError
from uartlab.schema import ACTUATORS, DAQ, JOINTS_IK, NANO17_TARED, RUNNER
from uartlab.sim.names import EM_TENDONS, FLEXORS, TENDONS
from uartlab.sim.surface import fingertip_force_from_sensor

INITIAL_WINDOW_S = 0.1   # rest before actuation: averaged for the initial state
STEADY_WINDOW_S = 0.1    # end of the trial: averaged for the steady state (the suites' settle hold is 0.1 s)
PRE_S = 0.5              # how much before the start we read (for the initial window and plots)
USABLE_OUTCOMES = ("settled",)

# quantity -> (stream, field) sources, preferred first
SOURCES: dict[str, tuple[tuple[str, str], ...]] = {
    "excursion_m": ((ACTUATORS.stream, ACTUATORS.excursion_m), (RUNNER.stream, RUNNER.excursion_m)),
    "tendon_force_N": ((DAQ.stream, DAQ.tendon_force_N), (RUNNER.stream, RUNNER.tendon_force_N)),
    "joint_angles_rad": ((JOINTS_IK.stream, JOINTS_IK.angles_rad), (RUNNER.stream, RUNNER.joint_angles_rad)),
    "wrench": ((DAQ.stream, DAQ.wrench), (RUNNER.stream, RUNNER.wrench)),
}
REQUIRED = ("excursion_m", "tendon_force_N", "joint_angles_rad")


class PulledTendons:
    """The flexor and the EM tendon among a trial's actively ``pulled`` tendons (None where none is): the
    paper's row labels of Tables 5-6."""

    pulled: tuple[str, ...]

    @property
    def flexor(self) -> str | None:
        return next((t for t in self.pulled if t in FLEXORS), None)

    @property
    def em(self) -> str | None:
        return next((t for t in self.pulled if t in EM_TENDONS), None)


class CompareError(InputFileError):
    """A comparison cannot be made from this input; the message names the file, trial or key."""


class NoTrials(CompareError):
    """A session file recorded without a protocol suite: nothing in it to compare (a batch goes on without it)."""

    def __init__(self, path: str):
        self.reason = ("the session has no trials (record with a protocol suite; `uartlab record` alone records "
                       "streams but no trials)")
        super().__init__(f"{path}: {self.reason}")


@dataclass
class Signal:
    t_s: np.ndarray        # (n,) relative to actuation start
    values: np.ndarray     # (n, k)
    source: str            # "stream.field"

    def window_mean(self, t0: float, t1: float) -> np.ndarray:
        """Mean over t0 <= t <= t1; the nearest sample when none falls inside (slow streams)."""
        inside = (self.t_s >= t0) & (self.t_s <= t1)
        if not inside.any():
            inside = np.zeros(self.t_s.size, bool)
            inside[int(np.argmin(np.abs(self.t_s - 0.5 * (t0 + t1))))] = True
        return np.nanmean(self.values[inside], axis=0)

    def on_grid(self, grid_s: np.ndarray) -> np.ndarray:
        """Linear interpolation onto grid_s, held constant outside the recorded range."""
        return np.column_stack([np.interp(grid_s, self.t_s, v) for v in self.values.T])


@dataclass
class MeasuredTrial(PulledTendons):
    """One recorded repeat of one trial."""

    session: str
    index: int
    name: str
    repeat: int
    kind: str                       # "free" or "contact"
    pose: str
    surface_angle_deg: float | None
    pulled: tuple[str, ...]         # the actively pulled tendons
    duration_s: float               # actuation start -> steady state
    signals: dict[str, Signal] = field(repr=False)
    notes: list[str] = field(default_factory=list)  # what the reader of the report must know about this repeat

    @property
    def label(self) -> str:
        return f"{os.path.basename(self.session)}#{self.index} {self.name} (repeat {self.repeat})"

    def has(self, quantity: str) -> bool:
        return quantity in self.signals

    def initial(self, quantity: str) -> np.ndarray:
        return self.signals[quantity].window_mean(-INITIAL_WINDOW_S, 0.0)

    def steady(self, quantity: str) -> np.ndarray:
        return self.signals[quantity].window_mean(self.duration_s - STEADY_WINDOW_S, self.duration_s)

    def inputs(self) -> tuple[np.ndarray, np.ndarray]:
        """The model's input table: times (n,) from 0 to the trial end and excursions (n, 6) relative to the
        rest before actuation (the model's excursions start at zero)."""
        sig = self.signals["excursion_m"]
        base = self.initial("excursion_m")
        keep = (sig.t_s > 0.0) & (sig.t_s <= self.duration_s)
        t = np.concatenate([[0.0], sig.t_s[keep]])
        e = np.vstack([np.zeros((1, 6)), sig.values[keep] - base])
        t, first = np.unique(t, return_index=True)  # strictly increasing, as table inputs need
        e = e[first]
        if t.size < 2 or t[-1] < self.duration_s:
            t = np.append(t, max(self.duration_s, t[-1] + 1e-3))
            e = np.vstack([e, e[-1]])
        return t, e


def open_session(path: str | os.PathLike) -> SessionFile:
    """The session file; a missing, damaged or foreign file is a CompareError naming it (SessionFile says why)."""
    try:
        return SessionFile(path)
    except InputFileError as exc:
        raise CompareError(str(exc)) from None


def load_trials(path: str | os.PathLike) -> tuple[list[MeasuredTrial], list[tuple[str, str]]]:
    """The usable trials of one session file, and (label, reason) for every trial skipped."""
    path = os.fspath(path)
    session = open_session(path)
    try:
        rows = session.trials()
        if not rows:
            raise NoTrials(path)
        # the Nano17 reads relative to its last tare (app/rig/rig.py); untared, its offset is in every force
        tares = [e.host_time_s for e in session.events() if e.message.startswith(NANO17_TARED)]
        trials, skipped = [], []
        for row in rows:
            label = f"{os.path.basename(path)}#{row['index']} {row['name']}"
            if row["outcome"] not in USABLE_OUTCOMES:
                why = row["outcome"] or "not finished (no stop time)"
                skipped.append((label, f"outcome {why!r}: no steady state to compare"))
                continue
            try:
                trials.append(_trial(session, row, tares))
            except DamagedData as exc:   # the other trials of the file are still worth comparing
                skipped.append((label, f"{exc.where}: damaged ({DAMAGED_BYTES}; `uartlab verify` lists it)"))
        return trials, skipped
    except CompareError:
        raise
    except InputFileError as exc:  # SessionFile's own words name the file
        raise CompareError(str(exc)) from None
    except (KeyError, OSError, ValueError, TypeError, IndexError) as exc:  # truncated or edited by hand
        raise CompareError(f"{path}: unreadable session layout ({' '.join(str(exc).split())})") from None
    finally:
        session.close()


def _trial(session: SessionFile, row: dict, tares: list[float]) -> MeasuredTrial:
    where = f"{session.path}: trial {row['index']} ({row['name']})"
    p = row["parameters"]
    for key in ("kind", "pose", "pulls"):
        if key not in p:
            raise CompareError(f"{where}: parameters_json has no {key!r}")
    kind = str(p["kind"])
    if kind not in ("free", "contact"):
        raise CompareError(f"{where}: parameters_json kind {kind!r} is neither 'free' nor 'contact'")
    angle = p.get("surface_angle_deg")
    if kind == "contact" and angle is None:
        raise CompareError(f"{where}: a contact trial without surface_angle_deg in parameters_json")
    try:
        pulled = tuple(TENDONS[[t.lower() for t in TENDONS].index(str(q["tendon"]).lower())] for q in p["pulls"])
    except (KeyError, TypeError, ValueError):
        raise CompareError(f"{where}: parameters_json pulls must name tendons of {', '.join(TENDONS)}") from None
    start, stop = float(row["start_host_time_s"]), float(row["stop_host_time_s"])
    # A twin at N x speed runs protocol time N x faster than the host clock: the model runs in protocol time.
    scale = float(p.get("time_scale", 1.0) or 1.0)
    if not scale > 0:
        raise CompareError(f"{where}: parameters_json time_scale must be > 0, got {scale}")
    signals: dict[str, Signal] = {}
    for quantity, sources in SOURCES.items():
        for stream, fname in sources:
            spec = session.streams.get(stream)
            if spec is None or fname not in [f.name for f in spec.fields]:
                continue
            i0, i1 = session.rows_between(stream, start - PRE_S / scale, np.nextafter(stop, np.inf))
            rec = session.read(stream, i0, i1)
            values = np.asarray(rec.data[fname], dtype=float).reshape(len(rec), -1)
            usable = np.isfinite(values).any(axis=1)
            if usable.sum() >= 1:
                signals[quantity] = Signal((rec.host_time_s[usable] - start) * scale, values[usable],
                                           f"{stream}.{fname}")
                break
    for quantity in REQUIRED:
        if quantity not in signals:
            names = " or ".join(f"{s}.{f}" for s, f in SOURCES[quantity])
            raise CompareError(f"{where}: no samples of {names} in the trial's time range")
    if kind == "contact" and "wrench" in signals:
        w = signals.pop("wrench")
        tip = fingertip_force_from_sensor(w.values[:, :3], angle)
        signals["fingertip_force_N"] = Signal(w.t_s, tip, w.source + " (world)")
    else:
        signals.pop("wrench", None)
    notes = []
    if "fingertip_force_N" in signals and not any(t <= start for t in tares):
        notes.append("the Nano17 was not tared before this trial (no 'Nano17 tared' event): its forces include "
                     "the sensor's offset")
    return MeasuredTrial(session.path, int(row["index"]), str(row["name"]), int(row["repeat"]), kind,
                         str(p["pose"]), None if angle is None else float(angle), pulled, (stop - start) * scale,
                         signals, notes)
