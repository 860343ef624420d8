"""An experiment on the rig: a suite's protocol runner, driven by the engine's control loop.

    exp = Experiment(rig, builtin_suite("free_motion"), session)   # session: a RecordingSession or None
    exp.start()                      # pre-flight, tare, torque on holding, arm, then one tick per control period
    exp.pause(); exp.resume(); exp.abort("why"); exp.estop("why")
    exp.wait(); exp.status(); exp.close()

The runner (protocols/runner.py) is pure logic; the engine (app/run/engine.py) is the loop that owns it, as
Bluesky's RunEngine owns plans. What is the suite's own: pre-flight (calibrations present, mocap tracking
every bone), the Nano17 tared while nothing touches it, the finger placed for each trial on a twin, and
each trial and its steady state written into the session file.
"""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass, field

import numpy as np
from uartlab.app.run.engine import PRE_TRIP_S, TERMINAL, Engine, PreflightError  # noqa: F401 - PreflightError: where runs raise it
from uartlab.app.run.rig_like import RigLike
from uartlab.app.run.state import (  # noqa: F401 - PHASES, WATCHED_STREAMS, runner_spec re-exported for the stream's users
    DEFAULT_CONTROL_RATE_HZ,
    PHASES,
    WATCHED_STREAMS,
    SteadyState,
    runner_spec,
)
from uartlab.errors import RecordingError
from uartlab.protocols.interlocks import InterlockLimits, Interlocks
from uartlab.protocols.runner import Action, Phase, Pretension, Runner, TrialResult
from uartlab.protocols.suite import Suite, SuiteTrial
from uartlab.schema import Outcome
from uartlab.streams import EventKind


@dataclass(frozen=True)
class ExperimentStatus:
    phase: Phase
    trial_index: int
    n_trials: int
    trial_name: str
    repeat: int                          # 1-based, of ``repeats[trial_name]``
    fault_reason: str | None
    progress: float                      # 0..1, trials with an outcome over the trials this run plans
    results: list[TrialResult] = field(default_factory=list)
    message: str = ""                    # the newest runner event
    repeats: dict[str, int] = field(default_factory=dict)   # each trial's repeats in this run (overrides applied)


class Experiment(Engine):
    def __init__(self, rig: RigLike, suite: Suite, session=None, *, safe_action: str = "hold",
                 control_rate_hz: float = DEFAULT_CONTROL_RATE_HZ, setup=None,
                 pretension: Pretension | None = None):
        self.suite, self.session = suite, session
        ages = self.stream_ages(rig)   # rig.toml [interlocks]
        limits = InterlockLimits.for_run(suite.limits, rig.config.ceilings, ages)  # rig.toml [limits] caps the suite
        runner = Runner(suite, Interlocks(limits), safe_action,
                        pretension, on_event=self._on_runner_event, on_setup=setup or self._place_finger)
        super().__init__(rig, runner, control_rate_hz=control_rate_hz, settle_window_s=suite.settle.window_s)
        self._trial_open = False
        self.steady: list[SteadyState] = []
        self.warnings: list[str] = []               # said before the run started (stale calibrations)

    # ------------------------------------------------------------ before the servos move
    def _before_arm(self, start_m: np.ndarray) -> None:
        for warning in self.rig.calibration_status()[1]:  # stale: said before anything moves, then run
            self.rig.hub.event(EventKind.CALIBRATION, "rig", f"stale calibration: {warning}")
            self.warnings.append(warning)
        self._tare()

    def _preflight_problems(self) -> list[str]:
        """Every device streaming, calibrations loaded, mocap tracking every bone."""
        rig, latest = self.rig, self.latest
        problems = super()._preflight_problems()
        if not rig.has_joint_angles:
            problems.append("no joint angles: the mocap has no marker calibration for this rig "
                            "(run `uartlab calibrate mocap`)")
        elif "joints" in latest.host_time_s and not latest.well_posed:
            problems.append("mocap does not track every bone (too few markers on a phalanx)")
        if not rig.has_sea_forces:
            problems.append("no SEA calibration loaded")
        missing, _ = rig.calibration_status()
        return problems + missing

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
        if not self.rig.has_nano17:
            return
        first = self.runner.plan[0][0] if self.runner.plan else None
        if first is not None and (first.surface_angle_deg is None or self.rig.places_finger_itself):
            if not self.rig.tare_nano17(wait_s=2.0):
                raise PreflightError(["the Nano17 could not be tared: no DAQ block within 2 s"])
        else:
            self.rig.hub.event(EventKind.OPERATOR, "experiment", "Nano17 not tared by the run: the finger is on the "
                                                                 "surface already (tare before placing it)")

    # ------------------------------------------------------------ operator
    def status(self) -> ExperimentStatus:
        with self._lock:
            r = self.runner
            current = r.current
            trial, repeat = current if current is not None else (None, 0)
            running = r.phase not in (Phase.SAFE, Phase.DONE)
            ended = [x for x in r.results if x.outcome != Outcome.INTERRUPTED]
            return ExperimentStatus(r.phase, r.index if running else -1, len(r.plan),
                                    trial.name if trial else "", repeat, r.fault_reason,
                                    min(1.0, len(ended) / max(1, len(r.plan))), list(r.results), self._message,
                                    {t.name: t.repeats for t in self.suite.trials})

    def close(self) -> None:
        """Stop the control loop (the servos keep their last goal or stay off); close the trial if open."""
        super().close()
        with self._lock:
            if self._trial_open:
                self._end_trial(Outcome.ABORTED.because(f"{self.runner.phase.name} when the run was closed"))

    # ------------------------------------------------------------ trials -> file
    def _before_tick(self) -> None:
        """The recorder failing (disk full, folder gone) stops a running plan like a trip: FAULT, the configured
        safe action, the recorder's sentence (which file, what it keeps) as the reason. Checked before the
        interlocks, which would otherwise trip on the session's "fault" event with less to say."""
        error = getattr(self.session, "error", None)
        if error is None or self.runner.phase in (*TERMINAL, Phase.SAFE):
            return
        safe = "the servos holding" if self.runner.safe_action is Action.HOLD else "torque off"
        self.runner.fault(self._protocol_now(), "recording", "recorder", f"{error}; the run stopped with {safe}")

    def _on_phase(self, phase: Phase, now: float) -> None:
        if phase is Phase.ACTUATE:
            self._begin_trial(now)
        elif phase is Phase.RECORD and self._trial_open:
            self._record_steady_state(now)
            self._end_trial(self.runner.results[-1].outcome, now)
        elif phase is Phase.PAUSED and self._trial_open:
            self._end_trial(Outcome.INTERRUPTED, now)
        elif phase in (Phase.ABORTED, Phase.FAULT) and self._trial_open:
            self._end_trial(self.runner.results[-1].outcome, now)   # the runner's: tripped/E-stopped/aborted, why

    def _record_steady_state(self, now: float) -> None:
        """RECORD: what the finger settled at, kept for the summary and written as a "steady" event."""
        trial, repeat = self.runner.current
        latest, result = self.latest, self.runner.results[-1]
        steady = SteadyState(trial.name, repeat, result.outcome, result.settle_time_s,
                             np.degrees(latest.angles_rad), latest.tendon_force_N.copy(), latest.wrench[:3].copy())
        self.steady.append(steady)
        self.rig.hub.event(EventKind.STEADY, "runner", json.dumps(steady.to_dict(), separators=(",", ":")), now)

    def _begin_trial(self, now: float) -> None:
        trial, repeat = self.runner.current
        self._trial_open = True
        self.rig.hub.event(EventKind.TRIAL, "runner", f"start {trial.name!r} repeat {repeat}/{trial.repeats}", now)
        if self.session is not None:
            with self._unless_recording_failed():
                self.session.begin_trial(trial.name, self.suite.name, self.trial_parameters(trial, repeat), repeat,
                                         now)

    def _end_trial(self, outcome: str, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        self._trial_open = False
        outcome = str(outcome)   # plain text in the file, an Outcome member or not
        self.rig.hub.event(EventKind.TRIAL, "runner", f"stop: {outcome}", now)
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
