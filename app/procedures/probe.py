"""RigProbe: what a calibration procedure at the rig needs of a started rig, and nothing more.

    probe = RigProbe(rig, say=print)
    with probe.procedure("servo-zero"):          # torque on, holding; any failure: hold, say why, re-raise
        probe.command(goal_m)                    # six tendon excursions through the rig's MX-64 driver
        probe.wait(0.5)                          # protocol seconds (a twin may run faster than real time)
        forces = probe.fresh(DAQ.stream, (DAQ.tendon_force_N,), 0.02)[DAQ.tendon_force_N]
        with probe.tape() as tape:               # every record of the streams while the block runs
            ...

It reads the rig's streams from its own hub subscription (the DAQ's pots, reference and gauges, the
SEA forces, mocap frames, the joints stream). It never commands the servos: every goal, hold and "wait
until still" is a step (protocols/steps.py) the rig's engine runs (``rig.motion``, app/run/procedure.py),
tick by tick under the interlocks a suite's trials have - tendon force, travel from where the procedure
began, fingertip force, Nano17 saturation, stale streams, device faults, the E-stop. A trip ends the
procedure on the tick it happens; any exception or Ctrl-C inside ``procedure`` leaves the servos holding
where they are (the engine's safe action) and the reason is said before the exception goes on, so the
caller writes nothing.

Typed over ``RigLike`` (app/run/rig_like.py: ``hub``, ``actuators``, ``time_scale``, ``motion``,
``has_sea_forces``), which the live rig satisfies. Streams and fields are named through uartlab.schema
(``DAQ.tendon_force_N``), which every layer may import.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import numpy as np
from uartlab.app.run.rig_like import RigLike
from uartlab.drivers.interfaces import ActuatorSample
from uartlab.drivers.sea import NOMINAL_REFERENCE_V
from uartlab.errors import CalibrationError
from uartlab.protocols.runner import Action, Phase
from uartlab.protocols.steps import Hold, Move, ProcedureStopped, WaitUntilStill
from uartlab.schema import ACTUATORS, DAQ, WATCHED_STREAMS
from uartlab.sim.names import TENDONS
from uartlab.streams import Event, EventKind

if TYPE_CHECKING:
    from uartlab.app.run.procedure import ProcedureRun

log = logging.getLogger(__name__)
STREAMS = WATCHED_STREAMS   # actuators daq mocap joints
KEEP_HOST_S = 5.0            # recent records kept outside a tape: several windows of the longest read
MAX_TRAVEL_M = 0.060         # est.: beyond the 50 mm servo-zero let-out plus a tendon's working range
ACTUATOR_SILENCE_S = 1.0     # host seconds without an actuator sample: the bus is gone, stop
HOLD_TRAVEL_M = 0.005        # a procedure that does not move: the held servos may not drift more than this


class Tape:
    """Every record of the probe's streams while a ``probe.tape()`` block runs, by stream."""

    def __init__(self):
        self.records: dict[str, list] = {s: [] for s in STREAMS}

    def field(self, stream: str, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(host_time_s (n,), values (n, ...)) of one field over the tape; empty arrays if none came."""
        recs = self.records[stream]
        if not recs:
            return np.empty(0), np.empty((0,))
        return (np.concatenate([r.host_time_s for r in recs]),
                np.concatenate([np.asarray(r.data[name]) for r in recs]))


class RigProbe:
    def __init__(self, rig: RigLike, say: Callable[[str], None] | None = None, max_travel_m: float = MAX_TRAVEL_M):
        self.rig, self.say = rig, say or log.warning
        self.time_scale = float(rig.time_scale)
        self.max_travel_m = max_travel_m
        self.name = "calibration"
        self._sub = rig.hub.subscribe("calibration", {*STREAMS, "events"}, maxsize=20_000)
        self._recent: dict[str, list] = {s: [] for s in STREAMS}
        self._tapes: list[Tape] = []
        self._last_actuator_s = time.monotonic()
        self._start_m: np.ndarray | None = None   # set when a procedure begins
        self._goal_m: np.ndarray | None = None
        self._run: ProcedureRun | None = None   # the rig's engine while a procedure runs (rig.motion)

    def close(self) -> None:
        self._sub.close()

    @property
    def start_m(self) -> np.ndarray:
        """The excursions (6,) m where the servos were when the procedure began."""
        if self._start_m is None:
            raise CalibrationError(self.name, "no procedure has begun: probe.procedure() first")
        return self._start_m

    @property
    def goal_m(self) -> np.ndarray:
        """The excursions (6,) m the servos were last sent to (the start until a command)."""
        if self._goal_m is None:
            raise CalibrationError(self.name, "no procedure has begun: probe.procedure() first")
        return self._goal_m

    def __enter__(self) -> RigProbe:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------ the procedure's frame
    @contextmanager
    def procedure(self, name: str, moves: bool = True, max_tendon_force_N: float | None = None,
                  streams: tuple[str, ...] = (ACTUATORS.stream, DAQ.stream)) -> Iterator[RigProbe]:
        """Run a procedure under the rig's engine (``rig.motion``): torque on holding where the servos are,
        the interlocks watching ``streams``, tendon forces (at most ``max_tendon_force_N``), travel (at most
        ``max_travel_m`` from the start; a procedure that does not move may drift ``HOLD_TRAVEL_M``), the
        fingertip force and device faults every tick; with ``moves``, back to where the servos began at the
        end. On any exception (a trip, Ctrl-C too) the engine stops with the servos holding, the reason is
        said, and the exception goes on (so nothing is written)."""
        self.name = name
        self.pump()
        try:
            run = self._run = self.rig.motion(name, max_travel_m=self.max_travel_m if moves else HOLD_TRAVEL_M,
                                              max_tendon_force_N=max_tendon_force_N, streams=streams,
                                              forces_required=self.rig.has_sea_forces)
            if run.start_m is None:   # a started engine has read them
                raise CalibrationError(name, "the engine started without reading where the servos are")
            self._start_m = run.start_m.copy()
            self._goal_m = self._start_m.copy()
            yield self
            if moves:
                self.command(self._start_m)
                self.settle()
            run.finish("the procedure is over")
        except BaseException as exc:
            stopper = None
            if isinstance(exc, KeyboardInterrupt):   # its argument, if any, names who stopped it (the CLI's signals)
                stopper = str(exc.args[0]) if exc.args else "Ctrl-C"
                reason = f"interrupted ({stopper})"
            else:
                reason = str(exc)
            how = self.hold()
            if how == f"torque off ({stopper})":   # the E-stop that interrupted it: named once
                how = "torque off"
            message = f"{name} calibration stopped: {reason}; {how}; nothing written"
            self.rig.hub.event(EventKind.CALIBRATION, "calibration", message)  # for whoever records or shows the rig
            self.say(message)
            raise
        finally:
            if self._run is not None:
                self._run.close()
                self._run = None

    def hold(self) -> str:
        """Stop the procedure's motion: the engine's safe action (hold where the goals are). Says what happened."""
        run = self._run
        if run is None:
            return "the servos were not moved"
        if run.estop_reason is not None:
            return f"torque off ({run.estop_reason})"
        if run.phase is Phase.FAULT:
            reason = run.runner.fault_reason or ""
            trip = run.runner.interlocks.tripped
            # The servo bus failed ("actuators:", its stream's fault), or the engine saw a servo's error bits
            # first: those come only in the sample of the read that failed, after the driver turned torque off.
            if reason.startswith("actuators:") or (trip is not None and trip.check == "hardware_error"):
                return "torque off (the MX-64 driver turns it off when a servo faults)"
            return f"the servos {'are off' if run.runner.safe_action is Action.TORQUE_OFF else 'hold'} " \
                   f"(tripped: {reason})"
        run.abort(f"{self.name} calibration stopped")
        run.wait(1.0)
        if run.estop_reason is not None:   # an E-stop from another thread while it stopped
            return f"torque off ({run.estop_reason})"
        return "the servos hold where they are"

    # ------------------------------------------------------------ servos
    def read(self) -> ActuatorSample:
        """The actuators now (one bus read through the rig's driver)."""
        actuators = self.rig.actuators
        if actuators is None:
            raise CalibrationError(self.name, "the rig is not started: no servos to read")
        return actuators.read()

    def command(self, excursion_m: np.ndarray) -> None:
        """Six goals (m, + = reeled in), each within ``max_travel_m`` of where the procedure began, moved to
        by the engine; raises if the engine has tripped or stopped (a device fault first, from the hub)."""
        self.pump()
        x = np.asarray(excursion_m, dtype=float).reshape(-1)
        if self._start_m is not None:
            far = np.flatnonzero(np.abs(x - self._start_m) > self.max_travel_m)
            if far.size:
                k = int(far[0])
                raise CalibrationError(self.name, f"a goal {(x[k] - self._start_m[k]) * 1e3:+.1f} mm from the start "
                                                  f"exceeds the {self.max_travel_m * 1e3:g} mm travel limit",
                                       f"tendon {TENDONS[k]}")
        self._step(Move(tuple(x)))
        self._goal_m = x.copy()

    def settle(self, within_m: float = 0.5e-3, timeout_s: float = 5.0) -> None:
        """Wait (rig time) until no servo is moving and each is within ``within_m`` of its goal: whatever
        comes next (a hold, the next procedure, a person placing the finger) starts from rest."""
        self._step(WaitUntilStill(within_m, timeout_s))

    def _step(self, step) -> None:
        if self._run is None:
            raise CalibrationError(self.name, "the servos move only inside probe.procedure()")
        try:
            self._run.step(step)
        except ProcedureStopped as exc:
            raise CalibrationError(self.name, str(exc)) from None

    # ------------------------------------------------------------ time and streams
    def wait(self, protocol_s: float) -> None:
        """Let ``protocol_s`` of rig time pass (host seconds / time_scale), watching for device faults; inside
        a procedure the engine holds meanwhile, its interlocks watching."""
        if self._run is not None:
            self.pump()
            self._step(Hold(protocol_s))
            self.pump()
            return
        end = time.monotonic() + protocol_s / self.time_scale
        while True:
            self.pump()
            left = end - time.monotonic()
            if left <= 0:
                return
            time.sleep(min(left, 0.02))

    def pump(self) -> None:
        """Take what the hub has queued: records into the recent buffers (and any tape), faults raised."""
        now = time.monotonic()
        for item in self._sub.drain():
            if isinstance(item, Event):
                if item.kind == EventKind.FAULT:
                    raise CalibrationError(self.name, f"a device failed: {item.message}")
                continue
            stream = item.stream
            self._recent[stream].append(item)
            for tape in self._tapes:
                tape.records[stream].append(item)
            if stream == ACTUATORS.stream:
                self._last_actuator_s = now
        for recs in self._recent.values():
            while recs and recs[0].host_time_s[-1] < now - KEEP_HOST_S:
                recs.pop(0)
        if now - self._last_actuator_s > ACTUATOR_SILENCE_S:
            raise CalibrationError(self.name, f"no actuator data for {now - self._last_actuator_s:.1f} s: "
                                              "is the MX-64 bus still there?")

    def fresh(self, stream: str, fields: tuple[str, ...], protocol_s: float, min_samples: int = 1,
              timeout_s: float = 3.0) -> dict[str, np.ndarray]:
        """Samples that arrive from now on, covering ``protocol_s`` of rig time and at least ``min_samples``:
        {field: (n, ...)} plus "host_time_s". CalibrationError if the stream does not deliver them."""
        start = time.monotonic()
        end, deadline = start + protocol_s / self.time_scale, start + timeout_s + protocol_s / self.time_scale
        while True:
            self.pump()
            recs = [r for r in self._recent[stream] if r.host_time_s[-1] >= start]
            n = sum(int(np.count_nonzero(r.host_time_s >= start)) for r in recs)
            if recs and recs[-1].host_time_s[-1] >= end and n >= min_samples:
                break
            if time.monotonic() > deadline:
                raise CalibrationError(self.name, f"no {stream} data for {time.monotonic() - start:.1f} s: is the "
                                                  "device streaming?")
            time.sleep(0.005)
        out: dict[str, np.ndarray] = {}
        t = np.concatenate([r.host_time_s for r in recs])
        keep = t >= start
        out["host_time_s"] = t[keep]
        for name in fields:
            out[name] = np.concatenate([np.asarray(r.data[name]) for r in recs])[keep]
        return out

    def pot_V(self, protocol_s: float = 0.2) -> np.ndarray:
        """(6,) mean SEA pot volts over the next ``protocol_s``, ratiometrically corrected by the sensed +5 V
        reference (raw when the reference is not wired)."""
        d = self.fresh(DAQ.stream, (DAQ.pot_V, DAQ.reference_V), protocol_s)
        ref = d[DAQ.reference_V]
        if np.all(np.isfinite(ref)):
            return np.mean(d[DAQ.pot_V] * (NOMINAL_REFERENCE_V / ref)[:, None], axis=0)
        return np.mean(d[DAQ.pot_V], axis=0)

    def tendon_force_N(self, protocol_s: float = 0.02) -> np.ndarray:
        """(6,) mean SEA forces (the rig's SEA calibration) over the next ``protocol_s``."""
        return self.fresh(DAQ.stream, (DAQ.tendon_force_N,), protocol_s)[DAQ.tendon_force_N].mean(axis=0)

    @contextmanager
    def tape(self) -> Iterator[Tape]:
        """Keep every record of the probe's streams while the block runs."""
        self.pump()
        tape = Tape()
        self._tapes.append(tape)
        try:
            yield tape
        finally:
            self.pump()
            self._tapes.remove(tape)
