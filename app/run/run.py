"""One suite run on a rig, its whole life in one place, for `uartlab run` and the operator window alike.

    run = Run(suite, rig=rig, folder=Path("recordings"), operator="kim")   # or config=... : the run starts the rig
    run.assemble()     # the log, the rig, the live model, the session file (free-space pre-flight), the Experiment
    run.start()        # pre-flight, tare, torque on holding, arm: the servos are moved from here on
    run.wait(0.1); run.status(); run.pause(); run.resume(); run.abort("why")
    run.estop("why")   # from any thread and in any state: torque off now, latched, the reason in the file
    run.close()        # teardown in order, whatever happened; safe to call twice and from any thread

Teardown order: a run still going is aborted (the configured safe action: the servos hold or torque off,
the reason recorded) and its control loop stopped, which closes an open trial; then the live model; then
the session file (its own, not one it was given); then the rig if the run started it; then the log file.
A failure in ``assemble`` or ``start`` tears down what was opened before it is raised.

The E-stop has one path, :func:`estop_rig`: the engine moving the servos (a run or an operator's move)
latches FAULT and turns torque off, and torque off is repeated on the actuators directly, so the E-stop
never depends on the control loop.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from uartlab.errors import RecordingError
from uartlab.schema import EventKind  # light: the E-stop path imports this module

if TYPE_CHECKING:
    from uartlab.app.run.experiment import Experiment
    from uartlab.app.run.live_model import LiveModel

log = logging.getLogger(__name__)

class LiveModelLike(Protocol):
    """What a run keeps of its live model, wherever it runs: the trials' residuals, and its stop."""

    @property
    def summaries(self) -> list:  # (trial name, residuals.ResidualSummary) per trial run
        ...

    def close(self) -> Any: ...


class ModelHost(Protocol):
    """Starts the live model of a run somewhere other than a thread of this process: registers the `model`
    stream in ``hub`` (before the session file opens, so it is recorded) and returns it."""

    def __call__(self, hub: Any, params: Any, sources: list[str], suite: Any, time_scale: float) -> LiveModelLike:
        ...


CLOSE_WAIT_S = 5.0   # est.: an aborted run returns to its safe action within a few ticks; this is generous


def estop_rig(rig: Any, reason: str) -> float:
    """The E-stop: torque off on all six servos now and the reason recorded, from the calling thread.
    The engine moving the servos, if any, latches FAULT (its loop sends nothing more). Returns when
    (monotonic s) torque was first off."""
    engine = getattr(rig, "engine", None)
    if engine is not None:
        try:
            off_s = engine.estop(reason)
        finally:
            rig.actuators.torque_off()  # and directly: the E-stop must not depend on the runner
        return off_s
    if getattr(rig, "actuators", None) is not None:
        rig.actuators.torque_off()
        rig.hub.event(EventKind.ESTOP, "operator", reason)
    return time.monotonic()


class Run:
    """A suite run: assembled, started, watched, E-stopped and torn down. ``rig``: a started rig the caller
    keeps; or ``config``: the run starts a rig from it and stops it at close. ``folder``: record into a new
    session file there (with its log file beside it); or ``session``: an open recording the run writes its
    trials into and leaves open; neither: not recorded. ``live_model``: run the bond-graph model beside the
    rig, with ``params`` (a (FingerParams, [where they came from]) pair) or the rig's calibrated values;
    ``model_host`` says where: None, on a thread of this process (a LiveModel); a rig core gives one that runs
    it in a process of its own (app/serve/model_supervisor.py ``ModelHost``)."""

    def __init__(self, suite, *, rig: Any = None, config=None, folder: Path | None = None, session=None,
                 operator: str = "", notes: str = "", safe_action: str = "hold", live_model: bool = True,
                 params=None, title: str = "uartlab run", model_host: ModelHost | None = None,
                 command_line: str = ""):
        if (rig is None) == (config is None):
            raise ValueError("Run: give one of rig (started) and config (the run starts the rig)")
        if folder is not None and session is not None:
            raise ValueError("Run: give one of folder (a new session file) and session (an open one)")
        self.suite, self.rig, self.config = suite, rig, config
        self.folder = Path(folder) if folder is not None else None
        self.session, self.owns_session = session, False
        self.path: Path | None = None
        if self.folder is not None:
            from uartlab.app.record.session import session_path

            self.path = session_path(self.folder, suite.name)
        self.operator, self.notes, self.safe_action = operator, notes, safe_action
        self.want_live_model, self.params, self.title = live_model, params, title
        self.model_host = model_host
        self.unmodelled: str | None = None   # the `unmodelled` event's JSON, when the model missed trials
        self.command_line = command_line   # the client's command, for the session file ("": this process's)
        self.live_model: LiveModel | LiveModelLike | None = None
        self.experiment: Experiment | None = None
        self.warnings: list[str] = []               # the session's free-space warning, stale calibrations
        self.session_summary: dict | None = None    # what the session's close said (drops, clock estimates)
        self.close_error: RecordingError | None = None  # the file failed after the run ended
        self.estop_reason: str | None = None
        self.abort_reason: str | None = None
        self._outer = contextlib.ExitStack()         # the log file and the rig the run started: closed last
        self._lock = threading.Lock()                # the E-stop against start and close
        self._started = self._closed = self._session_closed = False

    # ------------------------------------------------------------ assembly
    def assemble(self) -> Run:
        """Open everything the run needs, in order; on any failure close what was opened, then raise."""
        try:
            self._assemble()
        except BaseException as exc:
            self._teardown(exc)
            raise
        return self

    def _assemble(self) -> None:
        if self.path is not None:
            from uartlab.app.record.logs import log_file

            self.path.parent.mkdir(parents=True, exist_ok=True)   # the folder
            self._outer.enter_context(log_file(self.path.with_suffix(".log")))  # the run's log beside its file
        if self.rig is None:
            from uartlab.app.rig.rig import Rig

            self.rig = Rig(self.config).start()   # a start that fails half-way stops what it started
            self._outer.callback(self.rig.stop)
        if self.path is not None:
            log.info("%s %s: session %s", self.title, self.suite.name, self.path.name)
        sources = self._start_live_model()   # before the session: its `model` stream is recorded
        if self.path is not None:
            from uartlab.app.record.free_space import suite_seconds
            from uartlab.app.record.session import RecordingSession

            # The free-space pre-flight may refuse (RecordingError) before anything moves.
            self.session = RecordingSession(self.rig, self.path, operator=self.operator, notes=self.notes,
                                            protocol=self.suite, expected_s=suite_seconds(self.suite),
                                            command_line=self.command_line)
            self.owns_session = True
            self.warnings += self.session.warnings
        for source in sources:  # into the session's events: which calibrations the model ran with
            self.rig.hub.event(EventKind.CALIBRATION, "model", f"live model uses {source}")
        from uartlab.app.run.experiment import Experiment

        experiment = Experiment(self.rig, self.suite, self.session, safe_action=self.safe_action)
        with self._lock:
            self.experiment, aborted = experiment, self.abort_reason
        if aborted is not None:   # asked while the run was being assembled: it ends ABORTED before arming
            experiment.abort(aborted)

    def _start_live_model(self) -> list[str]:
        if not self.want_live_model:
            return []
        from uartlab.app.run.live_model import LiveModel
        from uartlab.sim import Finger

        params, sources = self.params if self.params is not None else self.rig.model_params()
        if self.model_host is not None:   # registers the `model` stream in the rig's hub: it is recorded
            self.live_model = self.model_host(self.rig.hub, params, sources, self.suite, self.rig.time_scale)
            return list(sources)
        self.live_model = LiveModel(self.rig.hub, Finger(params), self.suite,
                                    time_scale=self.rig.time_scale).start()
        return list(sources)

    # ------------------------------------------------------------ the run
    def start(self) -> Run:
        """Pre-flight and start the control loop (``assemble`` first if not yet). Refused when the E-stop
        was pressed before; a failure tears the run down before it is raised."""
        from uartlab.app.run.engine import PreflightError

        if self.experiment is None:
            self.assemble()
        experiment = self._assembled
        try:
            with self._lock:
                if self.estop_reason is not None:
                    raise PreflightError([f"E-stop before the run started ({self.estop_reason})"])
            experiment.start()
            with self._lock:
                self._started = True
                if self.estop_reason is not None:   # pressed while the pre-flight ran
                    experiment.estop(self.estop_reason)
        except BaseException as exc:
            self._teardown(exc)
            raise
        self.warnings += experiment.warnings
        return self

    @property
    def _assembled(self) -> Experiment:
        """The run's Experiment; a clear error when asked of a run not assembled."""
        if self.experiment is None:
            raise RuntimeError(f"{self.title}: the run is not assembled (assemble() or start() first)")
        return self.experiment

    def estop(self, reason: str) -> float:
        """Torque off now and latch, from any thread, in any state (assembling, running, over, closed; a rig
        the run started and has stopped is torqued off already, by its close). Returns when (monotonic s)
        torque was off."""
        with self._lock:
            self.estop_reason = self.estop_reason or reason
            rig = None if self._closed and self.config is not None else self.rig
        return estop_rig(rig, reason) if rig is not None else time.monotonic()

    def abort(self, why: str = "operator abort") -> None:
        """The run goes to its safe action and ends ABORTED; asked before the servos are armed (while the
        run is assembled or pre-flighted), it ends there and nothing moves."""
        with self._lock:
            self.abort_reason = self.abort_reason or why
            experiment = self.experiment
        if experiment is not None:
            experiment.abort(why)

    def pause(self) -> None:
        self._assembled.pause()

    def resume(self) -> None:
        self._assembled.resume()

    def wait(self, timeout_s: float | None = None) -> bool:
        """True once the run is over (DONE, ABORTED or FAULT)."""
        return self._assembled.wait(timeout_s)

    def status(self):
        """The Experiment's status (phase, trial, progress, results), or None before it exists."""
        return self.experiment.status() if self.experiment is not None else None

    @property
    def over(self) -> bool:
        from uartlab.protocols.runner import RUN_OVER

        status = self.status()
        return status is not None and status.phase in RUN_OVER

    # ------------------------------------------------------------ teardown
    def close(self, why: str = "the run was closed") -> None:
        """Tear down in order: a run still going aborted (``why``, the configured safe action) and its loop
        stopped, the live model, the session file, the rig if the run started it, the log file. A session
        file that failed after the run ended is kept in ``close_error``; one that failed during the run has
        already ended it in FAULT with the sentence as its reason."""
        self._teardown(None, why)

    def owns(self, session) -> bool:
        """Whether ``session`` is the file this run opened (and closes), not one it was given."""
        return session is not None and self.owns_session and session is self.session

    def close_session(self) -> dict | None:
        """Close the run's own session file now (the rest of the run is untouched); idempotent. Returns its
        summary, or None when it failed (``close_error``, or the run's fault reason) or it is not the run's."""
        with self._lock:
            session = self.session if self.owns_session and not self._session_closed else None
            self._session_closed = True
        if session is None:
            return self.session_summary
        try:
            self.session_summary = session.close()
        except RecordingError as exc:
            reason = (self.experiment.status().fault_reason if self.experiment is not None else None) or ""
            if str(exc) not in reason:
                self.close_error = exc
        return self.session_summary

    def _teardown(self, exc: BaseException | None, why: str = "the run was closed") -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        try:
            self._stop_experiment(why)
        finally:
            try:
                if self.live_model is not None:
                    self._say_unmodelled(self.live_model.close())
            finally:
                try:
                    self.close_session()
                finally:
                    if exc is None:
                        self._outer.close()
                    else:  # the log file says how the run ended
                        self._outer.__exit__(type(exc), exc, exc.__traceback__)

    def _say_unmodelled(self, closed: Any) -> None:
        """Into the session file before it closes, and to every viewer: the trials measured that the live
        model made no samples for. ``closed``: what its close returned (its counts, or LiveStats)."""
        from uartlab.app.run.unmodelled import unmodelled, unmodelled_message
        from uartlab.schema import MODEL_SOURCE

        exp, live = self.experiment, self.live_model
        if exp is None or live is None:
            return
        missing = unmodelled(exp.runner.plan, live.summaries, exp.steady)
        if not missing:
            return
        counts = closed if isinstance(closed, dict) or closed is None else closed.counts()   # LiveStats
        self.unmodelled = unmodelled_message(missing, len(exp.steady), counts)
        self.rig.hub.event(EventKind.UNMODELLED, MODEL_SOURCE, self.unmodelled)

    def _stop_experiment(self, why: str) -> None:
        from uartlab.protocols.runner import RUN_OVER, Phase

        exp = self.experiment
        if exp is None:
            return
        status = exp.status()
        if self._started and status.phase is not Phase.SAFE and status.phase not in RUN_OVER:
            exp.abort(why)
            exp.wait(CLOSE_WAIT_S)
        exp.close()
        if self._started:
            status = exp.status()
            log.info("run ended %s: %d of %d trials run%s", status.phase, len(status.results), status.n_trials,
                     f"; {status.fault_reason}" if status.fault_reason else "")

    def __enter__(self) -> Run:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self._teardown(exc)
