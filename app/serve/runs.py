"""The core's one suite run at a time: submitted by a client, run on a worker thread, reported when over.

    slot = RunSlot(rig)
    slot.submit(request, session=None)   # checks the suite now (bad input: ConfigError), then runs it
    slot.status()                         # JSON: state, phase, trial, progress, who it waits for, the report
    slot.confirm(); slot.pause(); slot.resume(); slot.abort(why); slot.estop(why); slot.close(why)

The run is the same ``Run`` (app/run/run.py) `uartlab run` and the window drive: the worker assembles and
starts it, waits for it to end, closes it (the file closed, the servos holding or off) and keeps its report
(app/run/report.py) until the next run or ``reset``. A client that leaves changes nothing here.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from uartlab.app.run.report import session_file
from uartlab.app.run.run import Run
from uartlab.app.serve.wire import error_kind
from uartlab.drivers.interfaces import DeviceError
from uartlab.errors import ConfigError
from uartlab.protocols.runner import RUN_OVER
from uartlab.schema import EventKind

log = logging.getLogger(__name__)

@dataclass
class RunRequest:
    """What a client submits: the suite (a built-in name, or a file's text and name) and the run's options."""

    suite: str = ""
    suite_text: str | None = None
    trials: list[str] | None = None
    repeats: int | None = None
    operator: str = ""
    notes: str = ""
    folder: str | None = None            # a new session file there; None: into the core's open recording, if any
    safe_action: str = "hold"
    live_model: bool = True
    params_text: str | None = None       # the live model's parameter TOML, as given
    params_tables: dict[str, str] = field(default_factory=dict)   # the moment-arm tables it names: file -> CSV
    params_source: str = ""
    title: str = "uartlab run"           # what the run's log and messages call it: the client's command
    command_line: str = ""               # the client's exact command line, for the session file ("": the core's)
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_args(cls, args: dict[str, Any]) -> RunRequest:
        known = set(cls.__dataclass_fields__) - {"extra"}
        unknown = sorted(set(args) - known)
        if unknown:
            raise ConfigError(f"run: unknown option(s) {', '.join(unknown)}")
        request = cls(**args)
        if request.safe_action not in ("hold", "torque_off"):
            raise ConfigError(f"run: safe_action must be hold or torque_off, got {request.safe_action!r}")
        return request


BUSY_STATES = ("starting", "running", "closing")   # a run owns the servos, its file or its live model


def run_busy(status: dict | None) -> bool:
    """Whether a core's answer to ``status`` says its run owns the rig (BUSY_STATES)."""
    return ((status or {}).get("run") or {}).get("state") in BUSY_STATES


class RunSlot:
    def __init__(self, rig, model_host=None):
        self.rig = rig
        self.model_host = model_host   # where a run's live model runs (app/serve/model_supervisor.py)
        self.run: Run | None = None
        self.count = 0
        self.state = "idle"            # idle, starting, running, closing, over
        self.error: BaseException | None = None
        self.report: dict | None = None
        self.start_m = None            # where the last run's tendons started ("return to start")
        self.submitted_s = 0.0         # when (host monotonic s, the events' clock) the run was submitted
        self._lock = threading.Lock()
        self._worker: threading.Thread | None = None

    @property
    def busy(self) -> bool:
        return self.state in BUSY_STATES

    def submit(self, request: RunRequest, session=None, who: str = "") -> int:
        """Check the suite against this rig and start the run on a worker; returns the run's number."""
        from uartlab.protocols.suite import parse_suite, resolve_suite, select_trials

        if self.busy:
            raise DeviceError("rig", f"a run is already {self.state} ({self.run.suite.name if self.run else '?'}); "
                                     "abort it or wait for it to end")
        if self.rig.engine is not None:
            raise DeviceError("rig", f"the servos are moved by {self.rig.engine.describe()}; wait for it to end")
        ceilings = self.rig.config.ceilings
        if request.suite_text is not None:
            suite = parse_suite(request.suite_text, request.suite or "<suite>", ceilings)
        else:
            suite = resolve_suite(request.suite, ceilings)
        suite = select_trials(suite, request.trials, request.repeats)
        params = None
        if request.params_text is not None and request.live_model:
            from uartlab.sim import FingerParams

            params = (FingerParams.from_toml_text(request.params_text, request.params_source or "<params>",
                                                  tables=request.params_tables),
                      [f"parameters {request.params_source}"])
        folder = Path(request.folder) if request.folder else None
        if folder is None and session is None:   # nothing open to record into: the rig's recording folder
            folder = Path(self.rig.config.recording.folder)
        run = Run(suite, rig=self.rig, folder=folder, session=None if folder else session,
                  operator=request.operator, notes=request.notes, safe_action=request.safe_action,
                  live_model=request.live_model, params=params, title=request.title, model_host=self.model_host,
                  command_line=request.command_line)
        with self._lock:
            self.count += 1
            self.run, self.state, self.error, self.report, self.start_m = run, "starting", None, None, None
            self.submitted_s = time.monotonic()
            self._worker = threading.Thread(target=self._work, args=(run, who), name=f"core-run-{self.count}",
                                            daemon=True)
            self._worker.start()
        return self.count

    def _work(self, run: Run, who: str) -> None:
        try:
            run.assemble()
            log.info("rig started from %s, in the rig core (pid %d)", self.rig.config.source, os.getpid())
            # Into the run's own file (opened by assemble): who asked for this run.
            self.rig.hub.event(EventKind.OPERATOR, "core", f"run {run.suite.name!r} submitted by {who}")
            run.start()
            self.start_m = run.experiment.start_m if run.experiment is not None else None
            self.state = "running"
            while not run.wait(0.2):
                pass
        except BaseException as exc:  # noqa: BLE001 - kept for the client; the run tears itself down
            self.error = exc
            log.warning("run %s failed: %s", run.suite.name, exc)
        finally:
            self.state = "closing"
            try:
                run.close("the run ended")
            finally:
                self._finish(run)

    def _finish(self, run: Run) -> None:
        report = None
        if run.experiment is not None and self.error is None:
            from uartlab.app.run.report import report_json, report_text

            report = {"json": report_json(run), "text": report_text(run)}
        with self._lock:
            self.report = report
            self.state = "over"

    # ------------------------------------------------------------ the operator
    def _experiment(self, what: str):
        run = self.run
        if run is None or run.experiment is None or self.state not in ("starting", "running"):
            raise DeviceError("rig", f"{what}: no run is going")
        return run.experiment

    def pause(self) -> None:
        self._experiment("pause").pause()

    def resume(self) -> None:
        self._experiment("resume").resume()

    def confirm(self) -> None:
        """The operator has set the finger up for the next trial: the run goes on."""
        exp = self._experiment("confirm")
        if not exp.runner.awaiting_setup:
            raise DeviceError("rig", "confirm: the run is not waiting for the operator")
        exp.resume()

    def abort(self, why: str) -> None:
        if self.run is not None and self.busy:
            self.run.abort(why)

    def estop(self, why: str) -> float | None:
        """The run's E-stop (latched even while it starts): when (monotonic s) torque was off; None when there
        is no run to stop."""
        run = self.run
        if run is None or not self.busy:
            return None
        return run.estop(why)

    def reset(self) -> None:
        """The operator acknowledges the last run: its report is forgotten."""
        if self.busy:
            raise DeviceError("rig", f"reset: the run is {self.state}; abort it first")
        with self._lock:
            self.run, self.state, self.error, self.report = None, "idle", None, None

    def close(self, why: str) -> None:
        """The core is stopping: a run going is aborted (its safe action) and its file closed."""
        run, worker = self.run, self._worker
        if run is not None:
            run.close(why)
        if worker is not None:
            worker.join(timeout=10)

    # ------------------------------------------------------------ status
    def status(self) -> dict[str, Any]:
        run = self.run
        out: dict[str, Any] = {"id": self.count, "state": self.state}
        if run is None:
            return out
        out.update(suite=run.suite.name, session_file=session_file(run), submitted_s=self.submitted_s,
                   warnings=list(run.warnings), estop_reason=run.estop_reason)
        status = run.status()
        if status is not None:
            out.update(phase=str(status.phase), trial_index=status.trial_index, n_trials=status.n_trials,
                       trial_name=status.trial_name, repeat=status.repeat, progress=status.progress,
                       message=status.message, fault_reason=status.fault_reason,
                       over=status.phase in RUN_OVER, operator_needed=self._operator_needed(),
                       results=[asdict(r) for r in status.results], repeats=status.repeats)
        if self.error is not None:
            out["error"] = {"text": " ".join(str(self.error).split()) or type(self.error).__name__,
                            "kind": error_kind(self.error)}
        if run.close_error is not None:
            out["close_error"] = str(run.close_error)
        if self.report is not None:
            out["report"] = self.report
        return out

    @property
    def awaiting_setup(self) -> bool:
        """The run is paused for a person to set the finger up for its next trial (servos holding)."""
        exp = self.run.experiment if self.run is not None else None
        return exp is not None and exp.runner.awaiting_setup

    def _operator_needed(self) -> dict | None:
        exp = self.run.experiment if self.run is not None else None
        if exp is None or not exp.runner.awaiting_setup or exp.runner.current is None:
            return None
        trial, repeat = exp.runner.current
        return {"trial": trial.name, "repeat": repeat, "pose": trial.pose, "surface_angle_deg": trial.surface_angle_deg}
