"""An experiment on the rig: the protocol runner driven by a control loop on its own thread.

    exp = Experiment(rig, builtin_suite("free_motion"), session)   # session: a RecordingSession or None
    exp.start()                      # pre-flight, torque on holding, arm, then one tick per control period
    exp.pause(); exp.resume(); exp.abort("why"); exp.estop("why")
    exp.wait(); exp.status(); exp.close()

The runner (protocols/runner.py) is pure logic; this is the loop that owns it, as Bluesky's RunEngine owns
plans. Every tick (100 Hz by default): drain the hub (actuators, daq, mocap, joints, events) into the
newest value of everything (``Latest``), build one Observation, ``runner.tick``, send the one command that
comes back, publish one `runner` record (command, measurements, phase) so the file holds what the loop saw
and did. The loop never blocks on anything but the bus: devices, IK, recording and the live model all run
on their own threads behind bounded queues.

Time: the runner counts protocol seconds, host seconds x ``rig.time_scale`` (1 on hardware; the twin's
speed on an all-twin rig, so a twin at 4x runs a 4 s sigmoid in 1 s of host time). Stream ages for the
interlocks stay in host seconds: staleness is about delivery.

Faults: an interlock trip, a device thread that died (its "fault" event), a command the bus refused, the
recorder failing, or the E-stop — each latches FAULT with one sentence, recorded as a "trip" event with
the window of the seconds before it; the servos then only get the safe action (hold, or torque off).
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import threading
import time
from collections import deque
from dataclasses import dataclass, field

import numpy as np
from uartlab.drivers.interfaces import DeviceError
from uartlab.protocols.interlocks import InterlockLimits, Interlocks, Observation
from uartlab.protocols.runner import Action, Phase, Pretension, Runner, RunnerEvent, TrialResult
from uartlab.protocols.suite import Suite, SuiteTrial

from uartlab.errors import RecordingError

from .hub import EVENTS
from .run_state import (  # noqa: F401 - PHASES, WATCHED_STREAMS, runner_spec re-exported for the stream's users
    DEFAULT_CONTROL_RATE_HZ,
    PHASES,
    WATCHED_STREAMS,
    Latest,
    SteadyState,
    runner_spec,
)
from .streams import Record

log = logging.getLogger(__name__)
PRE_TRIP_S = 5.0                 # est.: the seconds before a trip an operator wants to look at
TERMINAL = (Phase.DONE, Phase.ABORTED, Phase.FAULT)


class PreflightError(DeviceError):
    """The rig is not ready for a run; ``problems`` lists every reason, one sentence each."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("rig", "not ready: " + "; ".join(problems))


@dataclass(frozen=True)
class ExperimentStatus:
    phase: str
    trial_index: int
    n_trials: int
    trial_name: str
    repeat: int
    fault_reason: str | None
    progress: float                      # 0..1, trials finished over trials planned
    results: list[TrialResult] = field(default_factory=list)
    message: str = ""                    # the newest runner event


class Experiment:
    def __init__(self, rig, suite: Suite, session=None, *, safe_action: str = "hold",
                 control_rate_hz: float = DEFAULT_CONTROL_RATE_HZ, setup=None,
                 pretension: Pretension | None = None):
        self.rig, self.suite, self.session = rig, suite, session
        self.control_rate_hz = control_rate_hz
        self.time_scale = rig.time_scale
        ages = dict(rig.config.interlocks.max_stream_age_s)   # rig.toml [interlocks]
        if rig.joints is None:
            ages.pop("joints")
        self._streams = tuple(ages)
        place = setup or self._place_finger
        limits = InterlockLimits.for_run(suite.limits, rig.config.ceilings, ages)  # rig.toml [limits] caps the suite
        self.runner = Runner(suite, Interlocks(limits), safe_action,
                             pretension, on_event=self._on_runner_event, on_setup=place)
        nano17 = rig.nano17
        self.latest = Latest(suite.settle.window_s, nano17 is not None,
                             None if nano17 is None else nano17.cal.saturated)
        self._lock = threading.RLock()
        self._sub = rig.hub.subscribe("experiment", {"actuators", "daq", "mocap", "joints", EVENTS}, maxsize=8192)
        self._stop = threading.Event()
        self._finished = threading.Event()
        self._thread = threading.Thread(target=self._run, name="experiment-control", daemon=True)
        self._t0_host = time.monotonic()
        self._trial_open = False
        self._last_sent: np.ndarray | None = None
        self._torque_off_sent = False
        self._recent: deque[Record] = deque()
        self.trip_snapshot: Record | None = None     # the runner records of the PRE_TRIP_S before a trip
        self.steady: list[SteadyState] = []
        self.warnings: list[str] = []               # said before the run started (stale calibrations)
        self._message = ""

    # ------------------------------------------------------------ operator
    def start(self, preflight_timeout_s: float = 5.0) -> Experiment:
        """Pre-flight, then torque on (holding where the servos are), arm, and start the control loop."""
        self.preflight(preflight_timeout_s)
        for warning in self.rig.calibration_status()[1]:  # stale: said before anything moves, then run
            self.rig.hub.event("calibration", "rig", f"stale calibration: {warning}")
            self.warnings.append(warning)
        self._tare()
        with self._lock:
            self.rig.actuators.enable()
            self._t0_host = time.monotonic()
            self.latest.slope.clear()  # its samples were timed from the old origin
            self.runner.arm(self._protocol_now())
        self._thread.start()
        return self

    def preflight(self, timeout_s: float = 5.0) -> None:
        """Every device streaming, calibrations loaded, mocap tracking every bone — or PreflightError."""
        deadline = time.monotonic() + timeout_s
        while True:
            self._drain()
            problems = self._preflight_problems()
            if not problems or time.monotonic() >= deadline:
                break
            time.sleep(0.05)
        if problems:
            raise PreflightError(problems)

    def _place_finger(self, trial: SuiteTrial, changed: bool) -> bool:
        """The twin places its finger for every trial, as the paper's operator did; on a real rig the return
        brings the finger back, and only a new pose or surface needs a person (False pauses for them)."""
        if self.rig.places_finger_itself:
            placed = self.rig.place_finger(trial.pose, trial.surface_angle_deg)
            # Without this, the window of still frames from before the move would end PRETENSION on the
            # next tick, and the trial would start from the previous trial's pose and tensions.
            self.latest.forget_pose(time.monotonic())
            return placed
        return not changed

    def _tare(self) -> None:
        """Zero the Nano17 while nothing touches it: before a free-motion run, or before the twin places the
        finger on its surface. A person placing a real finger on a surface must tare before doing so."""
        if self.rig.nano17 is None:
            return
        first = self.runner.plan[0][0] if self.runner.plan else None
        if first is not None and (first.surface_angle_deg is None or self.rig.places_finger_itself):
            if not self.rig.tare_nano17(wait_s=2.0):
                raise PreflightError(["the Nano17 could not be tared: no DAQ block within 2 s"])
        else:
            self.rig.hub.event("operator", "experiment", "Nano17 not tared by the run: the finger is on the "
                                                         "surface already (tare before placing it)")

    def _preflight_problems(self) -> list[str]:
        rig, latest, now = self.rig, self.latest, time.monotonic()
        problems = [f"{h.device} {h.state}: {h.last_error}" for h in rig.health().values() if h.state == "failed"]
        problems += [f"no {s} data for {now - latest.host_time_s.get(s, -math.inf):.3g} s"
                     for s in self._streams if now - latest.host_time_s.get(s, -math.inf) > 1.0]
        if rig.joints is None:
            problems.append("no joint angles: the mocap has no marker calibration for this rig "
                            "(run `uartlab calibrate mocap`)")
        elif "joints" in latest.host_time_s and not latest.well_posed:
            problems.append("mocap does not track every bone (too few markers on a phalanx)")
        if rig.sea_forces is None:
            problems.append("no SEA calibration loaded")
        if latest.faults:
            problems.append(latest.faults[-1])
        missing, _ = rig.calibration_status()
        return problems + missing

    def pause(self) -> None:
        with self._lock:
            self.runner.pause(self._protocol_now())

    def resume(self) -> None:
        with self._lock:
            self.runner.resume(self._protocol_now())

    def abort(self, why: str = "operator abort") -> None:
        with self._lock:
            self.runner.abort(self._protocol_now(), why)

    def reset(self) -> None:
        with self._lock:
            self.runner.reset(self._protocol_now())
            self._finished.clear()

    def estop(self, why: str = "E-stop") -> None:
        """Torque off at once, from the calling thread, then latch FAULT (the loop sends nothing more)."""
        with self._lock:
            self.runner.estop(self._protocol_now(), why)
            self.rig.hub.event("estop", "operator", why)
            self._torque_off()

    def wait(self, timeout_s: float | None = None) -> bool:
        """True once the run is DONE, ABORTED or FAULT."""
        return self._finished.wait(timeout_s)

    def status(self) -> ExperimentStatus:
        with self._lock:
            r = self.runner
            current = r.current
            trial, repeat = current if current is not None else (None, 0)
            running = r.phase not in (Phase.SAFE, Phase.DONE)
            return ExperimentStatus(r.phase.name, r.index if running else -1, len(r.plan),
                                    trial.name if trial else "", repeat, r.fault_reason,
                                    min(1.0, len([x for x in r.results if x.outcome != "interrupted by pause"])
                                        / max(1, len(r.plan))), list(r.results), self._message)

    def close(self) -> None:
        """Stop the control loop (the servos keep their last goal or stay off); close the trial if open."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=3)
        with self._lock:
            if self._trial_open:
                self._end_trial(f"aborted: {self.runner.phase.name} when the run was closed")
        self._sub.close()

    def __enter__(self) -> Experiment:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------ the loop
    def _run(self) -> None:
        period_s = 1.0 / self.control_rate_hz
        due = time.monotonic()
        while not self._stop.is_set():
            try:
                self._tick()
            except Exception as exc:  # a bug or a dead bus must not leave the servos moving
                log.exception("control tick failed")
                with self._lock:
                    self.runner.fault(self._protocol_now(), "device", "control loop",
                                      f"control loop error: {type(exc).__name__}: {exc}")
                    self._torque_off()
            due += period_s
            due = max(due, time.monotonic() - period_s)  # after a stall, do not burst to catch up
            self._stop.wait(max(0.0, due - time.monotonic()))

    def _tick(self) -> None:
        with self._lock:
            self._drain()
            self._check_recording()
            now = time.monotonic()
            obs = self.latest.observation(now, self._streams)
            command = self.runner.tick(self._protocol_now(now), obs)
            sent = self._send(command)
            self._publish(now, obs, sent)
            if self.runner.phase in TERMINAL:
                self._finished.set()

    def _drain(self) -> None:
        for item in self._sub.drain():
            self.latest.update(item, self._protocol_now)

    def _check_recording(self) -> None:
        """The recorder failing (disk full, folder gone) stops a running plan like a trip: FAULT, the configured
        safe action, the recorder's sentence (which file, what it keeps) as the reason. Checked before the
        interlocks, which would otherwise trip on the session's "fault" event with less to say."""
        error = getattr(self.session, "error", None)
        if error is None or self.runner.phase in (*TERMINAL, Phase.SAFE):
            return
        safe = "the servos holding" if self.runner.safe_action is Action.HOLD else "torque off"
        self.runner.fault(self._protocol_now(), "recording", "recorder", f"{error}; the run stopped with {safe}")

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
            self.rig.actuators.command(x)
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
            self.rig.actuators.stop(torque_off=True)
        except Exception as exc:  # the bus may be the fault; the driver's own fault path already tried
            self.rig.hub.event("fault", "experiment", f"torque off failed: {exc}")

    def _publish(self, now: float, obs: Observation, command: np.ndarray) -> None:
        r, latest = self.runner, self.latest
        in_trial = r.phase in (Phase.PRETENSION, Phase.ACTUATE, Phase.SETTLE, Phase.RECORD, Phase.RETURN)
        record = Record.single("runner", now, phase=PHASES.index(r.phase), trial_index=r.index if in_trial else -1,
                               command_m=command, excursion_m=obs.excursion_m, tendon_force_N=obs.tendon_force_N,
                               joint_angles_rad=latest.angles_rad, joint_speed_deg_s=obs.joint_speed_deg_s,
                               wrench=latest.wrench, fingertip_force_N=obs.fingertip_force_N,
                               hardware_error=np.asarray(obs.hardware_error, dtype=np.int64),
                               stream_age_s=[now - latest.host_time_s.get(s, -math.inf) for s in WATCHED_STREAMS])
        self.rig.hub.publish(record)
        self._recent.append(record)
        while self._recent and self._recent[0].host_time_s[0] < now - PRE_TRIP_S:
            self._recent.popleft()

    # ------------------------------------------------------------ runner events -> hub, trials -> file
    def _on_runner_event(self, event: RunnerEvent) -> None:
        now = time.monotonic()
        phase = self.runner.phase
        self._message = event.message
        self.rig.hub.event("phase", "runner", event.message, now)
        if phase is Phase.ACTUATE:
            self._begin_trial(now)
        elif phase is Phase.RECORD and self._trial_open:
            self._record_steady_state(now)
            self._end_trial(self.runner.results[-1].outcome, now)
        elif phase in (Phase.PAUSED, Phase.ABORTED, Phase.FAULT) and self._trial_open:
            outcome = {Phase.PAUSED: "interrupted by pause", Phase.ABORTED: "aborted"}.get(
                phase, f"fault: {self.runner.fault_reason}")
            self._end_trial(outcome, now)
        if phase is Phase.FAULT:
            self.trip_snapshot = Record.concatenate(list(self._recent)) if self._recent else None
            self.rig.hub.event("trip", "interlocks", f"{self.runner.fault_reason} (the {PRE_TRIP_S:g} s before it: "
                                                     f"host time {now - PRE_TRIP_S:.3f} to {now:.3f} s)", now)

    def _record_steady_state(self, now: float) -> None:
        """RECORD: what the finger settled at, kept for the summary and written as a "steady" event."""
        trial, repeat = self.runner.current
        latest, result = self.latest, self.runner.results[-1]
        steady = SteadyState(trial.name, repeat, result.outcome, result.settle_time_s,
                             np.degrees(latest.angles_rad), latest.tendon_force_N.copy(), latest.wrench[:3].copy())
        self.steady.append(steady)
        self.rig.hub.event("steady", "runner", json.dumps(steady.to_dict(), separators=(",", ":")), now)

    def _begin_trial(self, now: float) -> None:
        trial, repeat = self.runner.current
        self._trial_open = True
        self.rig.hub.event("trial", "runner", f"start {trial.name!r} repeat {repeat}/{trial.repeats}", now)
        if self.session is not None:
            with self._unless_recording_failed():
                self.session.begin_trial(trial.name, self.suite.name, self.trial_parameters(trial, repeat), repeat,
                                         now)

    def _end_trial(self, outcome: str, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        self._trial_open = False
        self.rig.hub.event("trial", "runner", f"stop: {outcome}", now)
        if self.session is not None:
            with self._unless_recording_failed():
                self.session.end_trial(outcome, now)

    @contextlib.contextmanager
    def _unless_recording_failed(self):
        """A failed recording refuses trials; that must not raise through the loop (whose error path turns
        torque off): the next tick's _check_recording latches FAULT with the configured safe action."""
        try:
            yield
        except RecordingError:
            if getattr(self.session, "error", None) is None:
                raise

    def trial_parameters(self, trial: SuiteTrial, repeat: int) -> dict:
        """What the session file's trial says about itself (docs/session-file.md, "Trials")."""
        return {"suite": self.suite.name, "suite_sha256": self.suite.sha256, "trial": trial.name,
                "kind": trial.kind, "pose": trial.pose, "surface_angle_deg": trial.surface_angle_deg,
                "pulls": [{"tendon": p.tendon, "amplitude_mm": p.amplitude_mm, "duration_s": p.duration_s,
                           "start_s": p.start_s} for p in trial.pulls],
                "repeat": repeat, "repeats": trial.repeats, "time_scale": self.time_scale,
                "pretension_excursion_m": [float(v) for v in self.runner.offset_m]}

    def _protocol_now(self, host_s: float | None = None) -> float:
        return ((time.monotonic() if host_s is None else host_s) - self._t0_host) * self.time_scale
