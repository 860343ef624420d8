"""The core's side of the live model process: start it for a run, watch it, stop it at the run's close.

    run = Run(suite, rig=rig, ..., model_host=ModelProcessHost(core_base))   # what the core does: that is all

    hub.register(model_spec(rate))                  # before the recorder starts: the `model` stream is recorded
    model = ModelSupervisor(rig.hub, job, core_base).start()   # `python -m uartlab.app.serve.model_process`
    model.wait_ready(READY_WAIT_S)                  # attached and warm (False: it joins the run when it is)
    ...
    model.close()                                   # its last samples and its counts are in the hub, it has exited

The process gets the job (app/serve/model_job.py) as one line on its stdin and keeps reading stdin: the end of
it (``close``, or the core dying) is its signal to finish the queued ticks, send its last samples and its counts
and exit. It runs in its own session (a Ctrl-C at the core's terminal is the core's to handle), with this
interpreter and this environment, so it loads the compiled model from the same kernel cache
(sim/kernel_cache.py: $UARTLAB_CACHE_DIR or the per-user folder, keyed by this Python and numba).

Whatever the process does, the run does not wait for it: a process that dies is announced at once as a `model`
event ("the run goes on without the model"), one that is late at ``close`` is terminated, then killed. The
drop counts always reach the file as a `drops` event from "live model": the process's own final report when it
made one, else the last of the reports it prints every second on its stdout, said to be that.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
import sys
import threading
import time
from typing import IO

from uartlab.app.run.residuals import ResidualSummary, TrialResiduals
from uartlab.app.serve.model_job import ModelJob
from uartlab.hub import Hub
from uartlab.schema import DEFAULT_CONTROL_RATE_HZ, EVENTS, MODEL_STREAM, EventKind, model_spec
from uartlab.streams import Event, Record

SOURCE = "live model"      # app/run/live_model.py's: every event about the model says it is the model's
MODULE = "uartlab.app.serve.model_process"
# est.: a warm start takes 2-5 s on a busy 2-core machine; a first compile (a minute) is not waited for
READY_WAIT_S = 15.0
WATCH_QUEUE = 20_000       # model samples and events: minutes of them, for a thread that only adds squares
CLOSE_WAIT_S = 10.0        # est.: the queued ticks (at most a few seconds behind) and the last samples on the socket
KILL_WAIT_S = 2.0

log = logging.getLogger(__name__)


def is_final_report(item) -> bool:
    """The model process's last word, sent after its last `model` sample: its counts."""
    return isinstance(item, Event) and item.kind == EventKind.DROPS and item.source == SOURCE


class ModelSupervisor:
    """One live model process for one run; see the module docstring."""

    def __init__(self, hub: Hub, job: ModelJob, core_base: str, *, python: str = sys.executable):
        self.hub, self.job, self.core_base, self.python = hub, job, core_base, python
        self.ready = threading.Event()
        self.ready_info: dict = {}
        self.last_report: dict | None = None      # the newest counts it printed
        self.returncode: int | None = None
        self.final_report: dict | None = None     # its counts, sent after its last sample
        self._final = threading.Event()
        self._residuals = TrialResiduals([t.name for t in job.trials])
        self._proc: subprocess.Popen | None = None
        self._closing = threading.Event()
        self._threads: list[threading.Thread] = []
        self._watch = None

    # ------------------------------------------------------------ life
    def start(self) -> ModelSupervisor:
        # What comes back through the core's ingest, as the core's hub has it: the residuals of each trial
        # (``summaries``, as LiveModel's) and the final report.
        self._watch = self.hub.subscribe("live model supervisor", {MODEL_STREAM, EVENTS}, maxsize=WATCH_QUEUE)
        self._threads.append(threading.Thread(target=self._read_hub, name="model-watch", daemon=True))
        self._proc = subprocess.Popen(
            [self.python, "-m", MODULE, "--core", self.core_base], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, env=dict(os.environ), start_new_session=True)
        stdin = self._pipe(self._proc.stdin)
        try:
            stdin.write(self.job.to_json() + "\n")
            stdin.flush()
        except OSError as exc:   # it died at once: the watcher says so
            log.warning("live model process: the job could not be sent (%s)", exc)
        for target, name in ((self._read_stdout, "model-stdout"), (self._read_stderr, "model-stderr")):
            self._threads.append(threading.Thread(target=target, name=name, daemon=True))
        for thread in self._threads:
            thread.start()
        return self

    @property
    def summaries(self) -> list[tuple[str, ResidualSummary]]:
        """(trial name, its RMS residuals) per trial run, from the `model` samples that reached the core."""
        return self._residuals.summaries()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def wait_ready(self, timeout_s: float) -> bool:
        """True once the process is attached and warm; False after ``timeout_s`` or when it has exited."""
        deadline = time.monotonic() + timeout_s
        while not self.ready.wait(0.05):
            if time.monotonic() > deadline or self.returncode is not None:
                return self.ready.is_set()
        return True

    def close(self) -> dict | None:
        """End the process: its stdin closed (it finishes and reports), then terminated, then killed. Returns
        the counts recorded (its final report, or its last one)."""
        proc = self._proc
        if proc is None or self._closing.is_set():
            return self.final_report or self.last_report
        self._closing.set()
        alive = proc.poll() is None
        with contextlib.suppress(OSError):   # it has exited: the pipe is closed already
            self._pipe(proc.stdin).close()
        if alive and not self._final.wait(CLOSE_WAIT_S):
            log.warning("live model process: no final report within %.0f s of its stop", CLOSE_WAIT_S)
        self._end(proc)
        if self._watch is not None:
            self._watch.close()
        for thread in self._threads:
            thread.join(timeout=KILL_WAIT_S)
        if self.final_report is not None:
            return self.final_report
        self._say_counts("its last report before it stopped" if self.last_report else "no report")
        return self.last_report

    def _read_hub(self) -> None:
        assert self._watch is not None
        for item in self._watch:
            if isinstance(item, Record):
                self._residuals.add_record(item)
            elif is_final_report(item):
                self.final_report = json.loads(item.message)
                self._final.set()

    def _end(self, proc: subprocess.Popen) -> None:
        try:
            proc.wait(timeout=CLOSE_WAIT_S)
        except subprocess.TimeoutExpired:
            self._event(EventKind.MODEL, f"the live model process did not exit within {CLOSE_WAIT_S:g} s of its "
                                         "stop; terminated")
            proc.terminate()
            try:
                proc.wait(timeout=KILL_WAIT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.returncode = proc.returncode

    # ------------------------------------------------------------ its output
    def _read_stdout(self) -> None:
        proc = self._proc
        assert proc is not None
        for line in self._pipe(proc.stdout):
            word, _, rest = line.strip().partition(" ")
            try:
                info = json.loads(rest) if rest else {}
            except ValueError:
                info = None
            if word == "ready" and isinstance(info, dict):
                self.ready_info = info
                self.ready.set()
            elif word == "report" and isinstance(info, dict):
                self.last_report = info
            else:
                log.info("live model process: %s", line.rstrip())
        self.returncode = proc.wait()
        if not self._closing.is_set():
            self._event(EventKind.MODEL, f"the live model process {_how_it_ended(proc.returncode)} during the run; "
                                         "the run goes on without the model")

    def _read_stderr(self) -> None:
        assert self._proc is not None
        for line in self._pipe(self._proc.stderr):
            if line.strip():
                log.info("live model process: %s", line.rstrip())  # into the run's log file

    @staticmethod
    def _pipe(pipe: IO[str] | None) -> IO[str]:
        assert pipe is not None, "the process is started with its pipes"
        return pipe

    def _say_counts(self, which: str) -> None:
        counts = dict(self.last_report or {})
        counts["from"] = which
        counts["exit"] = _how_it_ended(self.returncode)
        self._event(EventKind.DROPS, json.dumps(counts))

    def _event(self, kind: EventKind, message: str) -> None:
        self.hub.event(kind, SOURCE, message[:500])   # the session's events table keeps 512 bytes

    def __enter__(self) -> ModelSupervisor:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()


def _how_it_ended(returncode: int | None) -> str:
    if returncode is None:
        return "is still running"
    if returncode < 0:
        import signal

        try:
            return f"was killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"was killed by signal {-returncode}"
    return "exited" if returncode == 0 else f"exited with status {returncode}"



class ModelProcessHost:
    """``Run(model_host=...)`` for a core at ``core_base``: each run's live model in a process of its own.
    Waits up to ``ready_wait_s`` for it to be attached and warm; a slower one (a first compile) joins the run
    when it is ready, which the file says."""

    def __init__(self, core_base: str, ready_wait_s: float = READY_WAIT_S):
        self.core_base, self.ready_wait_s = core_base, ready_wait_s

    def __call__(self, hub: Hub, params, sources, suite, time_scale: float) -> ModelSupervisor:
        hub.register(model_spec(DEFAULT_CONTROL_RATE_HZ))   # what the process sends back is recorded
        job = ModelJob.for_run(params, sources, suite, time_scale, DEFAULT_CONTROL_RATE_HZ)
        model = ModelSupervisor(hub, job, self.core_base).start()
        if model.wait_ready(self.ready_wait_s):
            log.info("live model process %s ready: %s", model.pid, model.ready_info)
        elif model.returncode is None:
            model._event(EventKind.MODEL, f"the live model process is not ready after {self.ready_wait_s:g} s "
                                          "(compiling the model?); the run does not wait: it joins when ready")
        return model
