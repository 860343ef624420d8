"""The core's side of the live model process: a warm one waiting, handed each run's job, stopped at its close.

    host = ModelProcessHost(core_base)        # the core, once serving: a process starts and warms up now
    run = Run(suite, rig=rig, ..., model_host=host)   # the run's live model: the waiting process, given the job
    host.close()                              # the core stops: the waiting process goes too

    model = ModelSupervisor(hub, core_base).spawn()     # `python -m uartlab.app.serve.model_process`
    model.begin(job)                          # the job (app/serve/model_job.py), after the `model` stream is registered
    model.wait_ready(READY_WAIT_S)            # attached (False: it joins the run when it is)
    model.close()                             # its last samples and its counts are in the hub, it has exited

Why a process waits: importing and warming the model takes 3-6 s on a quiet 2-core machine and 40 s on a
loaded one (measured), longer than a run's start. So the core keeps one process warm while idle and hands it the
next run's job; the next one starts when that run's model closes, not while a trial runs.

The process gets its job as one line on its stdin and keeps reading stdin: the end of it (``close``, or the core
dying) is its signal to finish the queued ticks, send its last samples and its counts and exit. It runs in its
own session (a Ctrl-C at the core's terminal is the core's to handle), with this interpreter and this
environment, so it loads the compiled model from the same kernel cache (sim/kernel_cache.py: $UARTLAB_CACHE_DIR
or the per-user folder, keyed by this Python and numba).

Whatever the process does, the run does not wait for it: one that dies is announced at once as a `model` event
("the run goes on without the model"), one that is late at ``close`` is terminated, then killed. The drop counts
always reach the file as a `drops` event from "live model": the process's own final report when it made one,
else the last of the reports it prints every second on its stdout, said to be that. The residuals of each trial
(``summaries``, as ``LiveModel.summaries``) come from the `model` samples that reached the core's hub.
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
from collections.abc import Callable
from typing import IO

from uartlab.app.run.residuals import ResidualSummary, TrialResiduals
from uartlab.app.serve.model_job import ModelJob
from uartlab.hub import Hub, Subscription
from uartlab.processes import end_process
from uartlab.schema import DEFAULT_CONTROL_RATE_HZ, EVENTS, MODEL_SOURCE, MODEL_STREAM, EventKind, model_spec
from uartlab.streams import Event, Record

MODULE = "uartlab.app.serve.model_process"
# A warm process attaches in under a second (measured 0.7 s). One still starting (imports and warm-up: 5 s on a
# quiet 2-core machine, 40 s measured at a load average of 25) is waited for up to this long before the run's
# first trial, as the operator asked for the model; a first compile of the kernels (a minute or more) is not:
# the run goes on and the model joins when it is ready.
READY_WAIT_S = 60.0
CLOSE_WAIT_S = 10.0        # est.: the queued ticks (at most a few seconds behind) and the last samples on the socket
KILL_WAIT_S = 2.0
WATCH_QUEUE = 20_000       # model samples and events: minutes of them, for a thread that only adds squares

log = logging.getLogger(__name__)


def is_final_report(item) -> bool:
    """The model process's last word, sent after its last `model` sample: its counts."""
    return isinstance(item, Event) and item.kind == EventKind.DROPS and item.source == MODEL_SOURCE


class ModelSupervisor:
    """One live model process for one run; see the module docstring."""

    def __init__(self, hub: Hub, core_base: str, *, python: str = sys.executable,
                 on_close: Callable[[], None] | None = None):
        self.hub, self.core_base, self.python, self.on_close = hub, core_base, python, on_close
        self.job: ModelJob | None = None
        self.warm = threading.Event()               # imported and warmed up, waiting for its job
        self.ready = threading.Event()              # attached to the core with its job
        self.ready_info: dict = {}
        self.last_report: dict | None = None        # the newest counts it printed
        self.final_report: dict | None = None       # its counts, sent after its last sample
        self.returncode: int | None = None
        self._final = threading.Event()
        self._residuals = TrialResiduals()
        self._proc: subprocess.Popen | None = None
        self._closing = threading.Event()
        self._threads: list[threading.Thread] = []
        self._watch: Subscription | None = None

    # ------------------------------------------------------------ life
    def spawn(self) -> ModelSupervisor:
        """Start the process: it imports and warms the model, then waits for its job."""
        self._proc = subprocess.Popen(
            [self.python, "-m", MODULE, "--core", self.core_base], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, env=dict(os.environ), start_new_session=True)
        for target, name in ((self._read_stdout, "model-stdout"), (self._read_stderr, "model-stderr")):
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None and not self._closing.is_set()

    def begin(self, job: ModelJob) -> ModelSupervisor:
        """Hand the process its run's job (the `model` stream registered in the hub already)."""
        self.job = job
        self._residuals = TrialResiduals([t.name for t in job.trials])
        # What comes back through the core's ingest, as the core's hub has it: the trials' residuals, the report.
        self._watch = self.hub.subscribe("live model supervisor", {MODEL_STREAM, EVENTS}, maxsize=WATCH_QUEUE)
        thread = threading.Thread(target=self._read_hub, args=(self._watch,), name="model-watch", daemon=True)
        thread.start()
        self._threads.append(thread)
        try:
            stdin = self._pipe(self._proc.stdin if self._proc is not None else None)
            stdin.write(job.to_json() + "\n")
            stdin.flush()
        except OSError as exc:   # it has died: its stdout's end says so
            log.warning("live model process: the job could not be sent (%s)", exc)
        if self.returncode is not None:
            self._died()
        return self

    @property
    def summaries(self) -> list[tuple[str, ResidualSummary]]:
        """(trial name, its RMS residuals) per trial run, from the `model` samples that reached the core."""
        return self._residuals.summaries()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def wait_ready(self, timeout_s: float) -> bool:
        """True once the process is attached with its job; False after ``timeout_s`` or once it has exited."""
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
        try:
            alive = proc.poll() is None
            with contextlib.suppress(OSError):   # it has exited: the pipe is closed already
                self._pipe(proc.stdin).close()
            if self.job is not None and alive and not self._final.wait(CLOSE_WAIT_S):
                log.warning("live model process: no final report within %.0f s of its stop", CLOSE_WAIT_S)
            self._end(proc)
            if self._watch is not None:
                self._watch.close()
            for thread in self._threads:
                thread.join(timeout=KILL_WAIT_S)
            if self.job is not None and self.final_report is None:
                self._say_counts("its last report before it stopped" if self.last_report else "no report")
        finally:
            if self.on_close is not None:
                self.on_close()
        return self.final_report or self.last_report

    def _end(self, proc: subprocess.Popen) -> None:
        if self.job is not None:   # its ticks to finish and its report; a spare without a job has neither
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=CLOSE_WAIT_S)
        if proc.poll() is None and self.job is not None:
            self.say(EventKind.MODEL, f"the live model process did not exit within {CLOSE_WAIT_S:g} s of "
                                         "its stop; terminated")
        self.returncode = end_process(proc, KILL_WAIT_S)

    # ------------------------------------------------------------ what it says
    def _read_hub(self, watch: Subscription) -> None:
        for item in watch:
            if isinstance(item, Record):
                self._residuals.add_record(item)
            elif is_final_report(item):
                self.final_report = json.loads(item.message)
                self._final.set()

    def _read_stdout(self) -> None:
        proc = self._proc
        assert proc is not None
        for line in self._pipe(proc.stdout):
            word, _, rest = line.strip().partition(" ")
            try:
                info = json.loads(rest) if rest else {}
            except ValueError:
                info = None
            if word == "warm" and isinstance(info, dict):
                log.info("live model process %s warm, waiting for a run: %s", proc.pid, info)
                self.warm.set()
            elif word == "ready" and isinstance(info, dict):
                self.ready_info = info
                self.ready.set()
            elif word == "report" and isinstance(info, dict):
                self.last_report = info
            else:
                log.info("live model process: %s", line.rstrip())
        self.returncode = proc.wait()
        if self.job is not None:
            self._died()
        elif not self._closing.is_set():
            log.warning("live model process (waiting for a run) %s", _how_it_ended(self.returncode))

    def _died(self) -> None:
        if not self._closing.is_set():
            self.say(EventKind.MODEL, f"the live model process {_how_it_ended(self.returncode)} during the run; "
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
        self.say(EventKind.DROPS, json.dumps(counts))

    def say(self, kind: EventKind, message: str) -> None:
        self.hub.event(kind, MODEL_SOURCE, message)   # the recorder fits it to the events table


class ModelProcessHost:
    """``Run(model_host=...)`` for a core at ``core_base`` whose hub is ``hub``: each run's live model in a
    process of its own, warmed while the core was idle. Waits up to ``ready_wait_s`` for it to attach; a slower
    one (a first compile) joins the run when it is ready, which the file says."""

    def __init__(self, hub: Hub, core_base: str, ready_wait_s: float = READY_WAIT_S):
        self.hub, self.core_base, self.ready_wait_s = hub, core_base, ready_wait_s
        self._lock = threading.Lock()
        self._waiting: ModelSupervisor | None = None
        self._closed = False
        self._spawn()

    def _spawn(self) -> None:
        with self._lock:
            if not self._closed and (self._waiting is None or not self._waiting.alive):
                self._waiting = ModelSupervisor(self.hub, self.core_base, on_close=self._spawn).spawn()

    def __call__(self, hub: Hub, params, sources, suite, time_scale: float) -> ModelSupervisor:
        hub.register(model_spec(DEFAULT_CONTROL_RATE_HZ))   # what the process sends back is recorded
        job = ModelJob.for_run(params, sources, suite, time_scale, DEFAULT_CONTROL_RATE_HZ)
        with self._lock:
            model, self._waiting = self._waiting, None
        if model is None or not model.alive or model.hub is not hub:
            if model is not None:
                model.on_close = None
                model.close()
            model = ModelSupervisor(hub, self.core_base, on_close=self._spawn).spawn()
        log.info("live model process %s: the run's job handed over (%s)", model.pid,
                 "warm" if model.warm.is_set() else "still warming up")
        model.begin(job)
        if model.wait_ready(self.ready_wait_s):
            log.info("live model process %s ready: %s", model.pid, model.ready_info)
        elif model.returncode is None:
            model.say(EventKind.MODEL, f"the live model process is not ready after {self.ready_wait_s:g} s "
                                          "(compiling the model?); the run does not wait: it joins when ready")
        return model

    def close(self) -> None:
        """The core stops: the waiting process goes (a run's own is closed by its run)."""
        with self._lock:
            self._closed = True
            model, self._waiting = self._waiting, None
        if model is not None:
            model.on_close = None
            model.close()


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
