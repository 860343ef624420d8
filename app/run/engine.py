"""The engine: the one control loop that moves the servos, whatever is being run.

    engine.start()             # pre-flight, torque on holding, arm, then one tick per control period
    engine.pause(); engine.resume(); engine.abort("why"); engine.estop("why")
    engine.wait(); engine.close()

What runs is a runner with one interface (``arm``, ``tick(now, obs) -> Command``, ``pause``, ``resume``,
``abort``, ``estop``, ``fault``, ``reset``, ``phase``): a suite's protocol runner (protocols/runner.py,
driven by ``Experiment``) or the step runner of a procedure (protocols/steps.py, ``ProcedureRun``). Every
tick (100 Hz by default): drain the hub (actuators, daq, mocap, joints, events) into the newest value of
everything (``Latest``), build one Observation, ``runner.tick``, send the one command that comes back,
publish one `runner` record (command, measurements, phase) so the file holds what the loop saw and did.
The interlocks are the runner's, evaluated on every tick. The loop never blocks on anything but the bus:
devices, IK, recording and the live model all run on their own threads behind bounded queues.

Time: the loop is time-triggered: tick k starts at ``t0 + k * period`` (no drift); a tick more than a
period late skips the deadlines it missed (counted in ``timing``), never a burst of catch-up ticks. Its
thread asks for real-time scheduling and the process for a short GIL switch interval (app/run/realtime.py:
used when the OS allows, never required); automatic garbage collection is off while the servos are armed,
and the young generations are collected right after a tick, in the slack before the next deadline.

The rig is a ``RigLike`` (app/run/rig_like.py): the live rig, a replayed session with null actuators
(``uartlab run SUITE --replay FILE``) or a test's scripted rig; the loop uses nothing else of it.

Nothing else sends goals to the servos (tests/app/procedures/test_procedure_safety.py checks the source);
the only other path to them is torque off, on the E-stop and on a failure the driver itself detects.

Time: the runner counts protocol seconds, host seconds x ``rig.time_scale`` (1 on hardware; the twin's
speed on an all-twin rig). Stream ages for the interlocks stay in host seconds: staleness is about delivery.

Faults: an interlock trip, a device thread that died (its "fault" event), a command the bus refused, the
recorder failing, or the E-stop - each latches FAULT with one sentence, recorded as a "trip" event with
the window of the seconds before it; the servos then only get the safe action (hold, or torque off).
"""

from __future__ import annotations

import contextlib
import logging
import math
import threading
import time
from collections import deque
from dataclasses import dataclass

import numpy as np
from uartlab.app.run import realtime
from uartlab.app.run.rig_like import RigActuators, RigLike
from uartlab.app.run.state import DEFAULT_CONTROL_RATE_HZ, PHASES, WATCHED_STREAMS, Latest
from uartlab.drivers.interfaces import DeviceError
from uartlab.hub import EVENTS
from uartlab.pacing import FixedRate
from uartlab.protocols.interlocks import Observation
from uartlab.protocols.runner import Action, Phase
from uartlab.schema import RUNNER_STREAM
from uartlab.streams import Event, EventKind, Record

log = logging.getLogger(__name__)
PRE_TRIP_S = 5.0                 # est.: the seconds before a trip an operator wants to look at
TERMINAL = (Phase.DONE, Phase.ABORTED, Phase.FAULT)
TRIAL_PHASES = (Phase.PRETENSION, Phase.ACTUATE, Phase.SETTLE, Phase.RECORD, Phase.RETURN)


@dataclass
class TickTiming:
    """How the loop kept time: ticks run, deadlines skipped after a stall, the latest a tick started after
    its deadline, and the scheduling its thread got."""

    ticks: int = 0
    missed: int = 0
    max_late_s: float = 0.0
    scheduling: str = ""          # what the loop's thread got (realtime.Scheduling.policy)


class PreflightError(DeviceError):
    """The rig is not ready for a run; ``problems`` lists every reason, one sentence each."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("rig", "not ready: " + "; ".join(problems))


class Engine:
    """The control loop over ``runner`` on ``rig``; ``streams``: the stale-stream interlocks it watches
    (default: every stream rig.toml [interlocks] names that this rig has)."""

    def __init__(self, rig: RigLike, runner, *, control_rate_hz: float = DEFAULT_CONTROL_RATE_HZ,
                 settle_window_s: float = 1.0, streams: tuple[str, ...] | None = None):
        self.rig, self.runner = rig, runner
        self.control_rate_hz = control_rate_hz
        self.time_scale = rig.time_scale
        self.latest = Latest(settle_window_s, rig.has_nano17, rig.nano17_saturated if rig.has_nano17 else None)
        self._lock = threading.RLock()
        self._ticked = threading.Condition(self._lock)
        self._sub = rig.hub.subscribe("engine", {*WATCHED_STREAMS, EVENTS}, maxsize=8192)
        self._stop = threading.Event()
        self._finished = threading.Event()
        self._thread = threading.Thread(target=self._run, name="engine-control", daemon=True)
        self._t0_host = time.monotonic()
        self._last_sent: np.ndarray | None = None
        self.start_m: np.ndarray | None = None     # the excursions when the run started
        self._torque_off_sent = False
        self._recent: deque[Record] = deque()
        self.trip_snapshot: Record | None = None     # the runner records of the PRE_TRIP_S before a trip
        self._message = ""
        self.estop_reason: str | None = None         # the first E-stop's reason, once pressed
        self.timing = TickTiming()
        self._no_gc = contextlib.ExitStack()          # automatic GC off from arming to the loop's end

    @staticmethod
    def stream_ages(rig: RigLike, streams: tuple[str, ...] | None = None) -> dict[str, float]:
        """The stale-stream limits of rig.toml [interlocks] for the streams this rig has (or ``streams``)."""
        ages = rig.stream_age_limits_s()
        return ages if streams is None else {s: ages[s] for s in streams if s in ages}

    @property
    def _streams(self) -> tuple[str, ...]:
        return tuple(self.runner.interlocks.limits.max_stream_age_s)

    @property
    def _actuators(self) -> RigActuators:
        actuators = self.rig.actuators
        if actuators is None:
            raise DeviceError("rig", "not started: no servos to command")
        return actuators

    # ------------------------------------------------------------ operator
    def start(self, preflight_timeout_s: float = 5.0):
        """Pre-flight, then torque on (holding where the servos are), arm, and start the control loop. Refused
        while another engine moves this rig's servos: one loop commands them at a time."""
        with self._lock:
            other = self.rig.engine
            if other is not None and other is not self:
                raise DeviceError("rig", f"the servos are already moved by {other.describe()}; stop it first")
            self.rig.engine = self  # claimed from the pre-flight on, so an E-stop meanwhile latches here
        try:
            if self._aborted_before_arming():
                return self
            self.preflight(preflight_timeout_s)
            start_m = self.start_m = np.asarray(self.latest.excursion_m, dtype=float).copy()  # "return to start"
            self._before_arm(start_m)
            realtime.prepare_process()
            self._no_gc.enter_context(realtime.no_gc_pauses())  # no collection pauses while armed
            with self._lock:
                if self.estop_reason is not None:  # pressed during the pre-flight: torque stays off
                    raise PreflightError([f"E-stop before the servos were armed ({self.estop_reason})"])
                if self._aborted_before_arming():
                    return self
                self._actuators.enable()
                self._t0_host = time.monotonic()
                self.latest.slope.clear()  # its samples were timed from the old origin
                self.runner.arm(self._protocol_now())
        except BaseException:
            self._release()
            raise
        self._thread.start()
        return self

    def _aborted_before_arming(self) -> bool:
        """An abort that came while the run was being prepared ends it there, ABORTED: the servos are never
        enabled, nothing moves, and ``wait`` returns at once."""
        with self._lock:
            if self.runner.phase is not Phase.ABORTED:
                return False
        self._release()
        self._finished.set()
        return True

    def _release(self) -> None:
        with self._lock:
            if self.rig.engine is self:
                self.rig.engine = None
        self._no_gc.close()

    def _before_arm(self, start_m: np.ndarray) -> None:
        """What a kind of run does after pre-flight, before the servos are enabled (the tendons at ``start_m``)."""

    def preflight(self, timeout_s: float = 5.0) -> None:
        """Every watched device streaming and nothing failed - or PreflightError."""
        deadline = time.monotonic() + timeout_s
        while True:
            self._drain()
            problems = self._preflight_problems()
            if not problems or time.monotonic() >= deadline:
                break
            time.sleep(0.05)
        if problems:
            raise PreflightError(problems)

    def _preflight_problems(self) -> list[str]:
        rig, latest, now = self.rig, self.latest, time.monotonic()
        problems = [f"{h.device} {h.state}: {h.last_error}" for h in rig.health().values() if h.state == "failed"]
        problems += [f"no {s} data for {now - latest.host_time_s.get(s, -math.inf):.3g} s"
                     for s in self._streams if now - latest.host_time_s.get(s, -math.inf) > 1.0]
        if latest.faults:
            problems.append(latest.faults[-1])
        return problems

    def pause(self) -> None:
        with self._lock:
            self.runner.pause(self._protocol_now())

    def resume(self) -> None:
        with self._lock:
            self.runner.resume(self._protocol_now())

    def abort(self, why: str = "operator abort") -> None:
        with self._lock:
            self.runner.abort(self._protocol_now(), why)
            self._ticked.notify_all()

    def reset(self) -> None:
        with self._lock:
            self.runner.reset(self._protocol_now())
            self._finished.clear()

    def estop(self, why: str = "E-stop") -> float:
        """Torque off at once, from the calling thread, then latch FAULT (the loop sends nothing more). Before
        the servos are armed (during the pre-flight) it also refuses the arming. Torque goes off before the
        engine's lock is taken: a tick holds it through a trial's set-up (the twin placing its finger: a call
        to another process, seconds on a busy machine), and the tick sends nothing once torque is off.
        Returns when (monotonic s) torque was off, which the latch may follow by that set-up."""
        self._torque_off()
        off_s = time.monotonic()
        with self._lock:
            self.estop_reason = self.estop_reason or why
            self.runner.estop(self._protocol_now(), why)
            self.rig.hub.event(EventKind.ESTOP, "operator", why)
            self._ticked.notify_all()
        return off_s

    def wait(self, timeout_s: float | None = None) -> bool:
        """True once the run is DONE, ABORTED or FAULT."""
        return self._finished.wait(timeout_s)

    def close(self) -> None:
        """Stop the control loop (the servos keep their last goal or stay off)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=3)
        self._sub.close()
        if self.rig.engine is self:
            self.rig.engine = None

    def describe(self) -> str:
        """What this engine runs, for messages ("suite 'free_motion'", "procedure 'sea'")."""
        name = getattr(self.runner, "name", None) or getattr(getattr(self.runner, "suite", None), "name", "?")
        return f"the run {name!r}"

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------ the loop
    def _run(self) -> None:
        self.timing.scheduling = realtime.raise_thread_priority().policy
        pace = FixedRate(1.0 / self.control_rate_hz, sleep=self._stop.wait)  # after a stall: no burst
        timing = self.timing
        # The rig's bus lock keeps reads from starting just before a tick (app/rig/locked_actuators.py)
        announce = getattr(self.rig.actuators, "announce_tick", None)
        stall = realtime.StallReport()
        try:
            while not self._stop.is_set():
                stall.alive(time.monotonic())
                try:
                    self._tick()
                except Exception as exc:  # a bug or a dead bus must not leave the servos moving
                    log.exception("control tick failed")
                    with self._lock:
                        self.runner.fault(self._protocol_now(), "device", "control loop",
                                          f"control loop error: {type(exc).__name__}: {exc}")
                        self._torque_off()
                        self._ticked.notify_all()
                realtime.collect_young_if_due()  # in this tick's slack, not at a random allocation
                if announce is not None:
                    announce(pace.deadline_s)
                tick = pace.wait()
                timing.ticks += 1
                timing.missed += tick.missed
                if tick.late_s > timing.max_late_s:
                    timing.max_late_s = tick.late_s
        finally:
            stall.close()
            self._no_gc.close()

    def _tick(self) -> None:
        with self._lock:
            self._drain()
            self._before_tick()
            now = time.monotonic()
            obs = self.latest.observation(now, self._streams)
            command = self.runner.tick(self._protocol_now(now), obs)
            sent = self._send(command)
            self._publish(now, obs, sent)
            if self.runner.phase in TERMINAL:
                self._finished.set()
                self._no_gc.close()  # the run is over: automatic collection back
            self._ticked.notify_all()

    def _before_tick(self) -> None:
        """What a kind of run checks on every tick before the runner's interlocks (its recording)."""

    def _drain(self) -> None:
        for item in self._sub.drain():
            self.latest.update(item, self._protocol_now)

    def _send(self, command) -> np.ndarray:
        """Send the runner's command; returns what was commanded (NaN: nothing)."""
        if command.action is Action.TORQUE_OFF:
            self._torque_off()
            return np.full(6, np.nan)
        if command.action is Action.IDLE or self._torque_off_sent:
            return np.full(6, np.nan)
        x = command.excursion_m
        if command.action is Action.HOLD and self._last_sent is not None and np.array_equal(x, self._last_sent):
            return x  # the servos hold their goal; no need to say it again
        try:
            self._actuators.command(x)
            self._last_sent = x.copy()
        except (DeviceError, ValueError) as exc:  # the driver has already torqued off on a servo fault
            self.runner.fault(self._protocol_now(), "device", "actuators", f"command refused: {exc}")
            self._torque_off()
            return np.full(6, np.nan)
        return x

    def _torque_off(self) -> None:
        if self._torque_off_sent:
            return
        self._torque_off_sent = True
        try:
            self._actuators.stop(torque_off=True)
        except Exception as exc:  # the bus may be the fault; the driver's own fault path already tried
            self.rig.hub.event(EventKind.FAULT, "engine", f"torque off failed: {exc}")

    def _trial_index(self) -> int:
        return self.runner.index if self.runner.phase in TRIAL_PHASES else -1

    def _publish(self, now: float, obs: Observation, command: np.ndarray) -> None:
        r, latest = self.runner, self.latest
        record = Record.single(RUNNER_STREAM, now, phase=PHASES.index(r.phase), trial_index=self._trial_index(),
                               command_m=command, excursion_m=obs.excursion_m, tendon_force_N=obs.tendon_force_N,
                               joint_angles_rad=latest.angles_rad, joint_speed_rad_s=np.radians(obs.joint_speed_deg_s),
                               wrench=latest.wrench, fingertip_force_N=obs.fingertip_force_N,
                               hardware_error=np.asarray(obs.hardware_error, dtype=np.int64),
                               stream_age_s=[now - latest.host_time_s.get(s, -math.inf) for s in WATCHED_STREAMS])
        self.rig.hub.publish(record)
        self._recent.append(record)
        while self._recent and self._recent[0].host_time_s[0] < now - PRE_TRIP_S:
            self._recent.popleft()

    # ------------------------------------------------------------ runner events -> hub
    def _on_runner_event(self, event: Event) -> None:
        now = time.monotonic()
        phase = self.runner.phase
        self._message = event.message
        self.rig.hub.event(EventKind.PHASE, "runner", event.message, now)
        self._on_phase(phase, now)
        if phase is Phase.FAULT:
            self.trip_snapshot = Record.concatenate(list(self._recent)) if self._recent else None
            self.rig.hub.event(EventKind.TRIP, "interlocks",
                               f"{self.runner.fault_reason} (the {PRE_TRIP_S:g} s before it: "
                               f"host time {now - PRE_TRIP_S:.3f} to {now:.3f} s)", now)

    def _on_phase(self, phase: Phase, now: float) -> None:
        """What a kind of run does when the runner enters ``phase`` (before a trip is recorded)."""

    def _protocol_now(self, host_s: float | None = None) -> float:
        return ((time.monotonic() if host_s is None else host_s) - self._t0_host) * self.time_scale
