"""The live model in a process of its own, attached to a rig core as a client.

    python -m uartlab.app.serve.model_process --core ipc:///run/user/1000/uartlab/core < job-line
    python -m uartlab.app.serve.model_process --core tcp://127.0.0.1:5650 --job job.json    # by hand

The core starts one while it waits for a run (app/serve/model_supervisor.py) and writes the run's job
(app/serve/model_job.py: the parameters with their sources, the runner's plan, the time scale) as the first
line of its stdin. It

1. loads and warms the model before the job comes: the compiled kernels come from the kernel cache every
   uartlab process shares (sim/kernel_cache.py), and a few synthetic ticks through a scratch ``LiveModel``
   make every first call (the start state's statics, the stepper, the contact law) before a real trial needs
   them, so the first step of the run's first trial is as quick as any other; then prints ``warm {...}``;
2. with its job, warms the run's own finger the same way (a tenth of a second: the kernels are loaded),
   attaches to the core, mirrors its `runner` stream into a local Hub and runs the unchanged
   ``LiveModel`` (app/run/live_model.py) on it, on the model's own thread, in this process's own GIL;
   prints ``ready {...}``;
3. PUSHes every `model` record and the model's events to the core's ingest socket, which publishes them into
   the core's hub, so the session file records them as when the model ran inside the core; prints
   ``report {...}`` (its counts) every second;
4. stops when its stdin ends (the core closed it, or the core is gone) or on SIGTERM/SIGINT: the ticks already
   received are modelled, the last samples sent, and its counts sent last as a `drops` event from "live model"
   (ticks received, model samples sent, ticks dropped from its queue, samples that could not be sent). A stdin
   that ends before the job came (the core stopped while it waited) ends it at once.

Nothing it does reaches the control loop: the core publishes the runner stream through a bounded PUB socket
(a slow model loses ticks there, and merges over them), and the ingest is a socket the core drains on its own
thread, and the process runs at a lower priority than the core, from its start (``model_nice``: nice 0 beside a
raised core, level with ordinary load, which must not starve it; 5 beside a core at 0): the model is the one to
fall behind, and its warm-up never takes the core's devices' CPU. (Where the
OS schedules by session, the model's session competes as a whole: app/run/realtime.py, "Sessions".)
Exit status: 0 after a clean stop, 2 for a bad job, 3 when no core answers.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import signal
import sys
import threading
import time
from typing import TYPE_CHECKING

import numpy as np
from uartlab.errors import EXIT_DONE, UartlabError, exit_code
from uartlab.hub import Hub
from uartlab.processes import exit_at_once
from uartlab.schema import (
    DEFAULT_CONTROL_RATE_HZ,
    EVENTS,
    MODEL_SOURCE,
    MODEL_STREAM,
    RUNNER_STREAM,
    EventKind,
    runner_spec,
)
from uartlab.streams import Event, Record

if TYPE_CHECKING:   # the model (numba, scipy) is imported once the process runs at its own priority
    from uartlab.app.serve.model_job import ModelJob

ATTACH_TIMEOUT_S = 5.0    # est.: a core answers a hello in ms; a busy 2-core machine may take a second
REPORT_EVERY_S = 1.0
WARM_UP_SURFACE_DEG = 30.0  # any surface: the contact kernels are the same for every angle
# Below the core's: a model that falls behind merges ticks; a core that falls behind drops them. Not below
# ordinary load: where nice orders every process (no autogroup: a desktop's cgroups, most servers) a model at
# nice 10 got 6 % of a core beside two busy processes at nice 0 (measured), and falls seconds behind a trial.
BELOW_CORE_NICE = 5
SEND_QUEUE = 20_000       # items between the model's hub and the socket: minutes of model samples


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m uartlab.app.serve.model_process",
                                     description="the live model beside a rig core, in its own process")
    parser.add_argument("--core", help="the core's address (default: $UARTLAB_CORE or the per-user ipc socket)")
    parser.add_argument("--job", default="-", help="the job file (app/serve/model_job.py); - : the first line of stdin")
    args = parser.parse_args(argv)
    # From the start: the core's device threads run all the time (a twin's bus answers on deadlines), and
    # the model's import and warm-up must not take their CPU on a busy machine.
    with contextlib.suppress(OSError):
        os.setpriority(os.PRIO_PROCESS, 0, model_nice(os.getpriority(os.PRIO_PROCESS, 0)))
    try:
        return run(args.core, args.job)
    except UartlabError as exc:
        print(f"live model process: {exc}", file=sys.stderr, flush=True)
        return exit_code(exc)


def model_nice(core_nice: int) -> int:
    """The model's nice for a core at ``core_nice`` (the process inherits the core's): below the core, and
    level with ordinary load (0) when the core runs raised (-10 where allowed), behind the operator's window."""
    return max(0, core_nice + BELOW_CORE_NICE)


def read_job(where: str) -> ModelJob | None:
    """The job from a file, or the first line of stdin (None: stdin ended first, the core needs no model)."""
    from uartlab.app.serve.model_job import ModelJob

    if where == "-":
        line = sys.stdin.readline()
        return ModelJob.from_json(line, "the job on stdin") if line.strip() else None
    try:
        with open(where, encoding="utf-8") as f:
            text = f.read()
    except OSError as exc:
        from uartlab.errors import InputFileError

        raise InputFileError(f"{where}: cannot read the job: {(exc.strerror or str(exc)).lower()}") from None
    return ModelJob.from_json(text, where)


def run(core: str | None, job_source: str) -> int:
    from uartlab.app.run.live_model import LiveModel
    from uartlab.sim import Finger, FingerParams

    t0 = time.monotonic()
    warm_s = warm_up(Finger(FingerParams.uart()))   # the kernels and first calls, before the job comes
    from uartlab.sim.kernel_cache import kernel_dir

    _say("warm", {"pid": os.getpid(), "warm_up_s": round(warm_s, 3), "start_s": round(time.monotonic() - t0, 3),
                  "kernel_cache": str(kernel_dir())})
    job = read_job(job_source)
    if job is None:
        return EXIT_DONE
    t_job = time.monotonic()
    finger = Finger(job.params)
    warm_up(finger)                  # again with the run's own finger: what it sets up once is set up now
    hub = Hub()
    live = LiveModel(hub, finger, list(job.trials), control_rate_hz=job.control_rate_hz, time_scale=job.time_scale)
    link = CoreLink(core, hub)       # attached: the runner stream is mirrored into ``hub`` from here on
    sender = Sender(hub, link)
    stop = threading.Event()
    _stop_on_signals(stop)
    if job_source == "-":
        threading.Thread(target=_wait_for_eof, args=(stop,), name="stdin", daemon=True).start()
    # What the imports and the warm-up left is kept out of the collector's reach: a full collection over it
    # (20-30 ms) would otherwise fall on some step of the run.
    gc.collect()
    gc.freeze()
    live.start()
    _say("ready", {"pid": os.getpid(), "attach_s": round(time.monotonic() - t_job, 3),
                   "sources": list(job.params_sources)})
    while not stop.wait(REPORT_EVERY_S):
        _say("report", counts(live, link, sender))
    link.stop_receiving()            # no more ticks: model what came (all the core sent), send it, the counts
    live.close()
    sender.close()
    final = counts(live, link, sender)
    link.send(Event(time.monotonic(), EventKind.DROPS, MODEL_SOURCE, json.dumps(final)))
    link.close()
    _say("report", final)
    return EXIT_DONE


def counts(live, link: CoreLink, sender: Sender) -> dict:
    """What the model received, sent and lost, for the session file's `drops` event from "live model"."""
    return {**live.stats.counts(), "records_sent": sender.sent, "records_not_sent": sender.not_sent,
            "messages_refused": link.refused}


# ------------------------------------------------------------------ warm-up
def warm_up(finger, rate_hz: float = DEFAULT_CONTROL_RATE_HZ) -> float:
    """A few synthetic ticks of a free and a contact trial through a scratch LiveModel: every kernel and first
    call a trial start makes (the kernels load from the cache), made now. Returns the seconds it took."""
    from uartlab.app.run.feed import runner_record
    from uartlab.app.run.live_model import LiveModel
    from uartlab.app.serve.model_job import PlannedTrial
    from uartlab.protocols.runner import Phase
    from uartlab.sim.scenarios import start_state

    t0 = time.perf_counter()
    plan = [PlannedTrial("warm-up free", None), PlannedTrial("warm-up contact", WARM_UP_SURFACE_DEG)]
    phases = [Phase.PRETENSION] + [Phase.ACTUATE] * 3 + [Phase.SETTLE, Phase.RECORD, Phase.RETURN]
    ticks, t = [], 0.0
    for index, trial in enumerate(plan):
        x0, _ = start_state(finger, "Flex", trial.surface_angle_deg)
        excursion = np.zeros(6)
        for phase in phases:
            excursion = excursion + (1e-4 if phase is Phase.ACTUATE else 0.0)
            ticks.append(runner_record(t, phase, index, excursion, x0.F_input, x0.theta, np.zeros(6)))
            t += 1.0 / rate_hz
    hub = Hub()
    hub.register(runner_spec(rate_hz))
    scratch = LiveModel(hub, finger, plan, control_rate_hz=rate_hz)
    scratch.process(ticks)
    scratch.close()
    return time.perf_counter() - t0


# ------------------------------------------------------------------ the core
class CoreLink:
    """The process's link to the core (app/serve/client.py ``CoreClient``): the `runner` stream mirrored into
    ``hub``, the model's records and events pushed back to the core's ingest."""

    def __init__(self, core: str | None, hub: Hub):
        from uartlab.app.serve.client import CoreClient

        self.client = CoreClient(core, streams={RUNNER_STREAM}, hub=hub, timeout_s=ATTACH_TIMEOUT_S)

    @property
    def refused(self) -> int:
        return self.client.refused

    def send(self, item: Record | Event) -> bool:
        return self.client.push_model(item)

    def stop_receiving(self) -> None:
        self.client.stop_mirror(drain=True)

    def close(self) -> None:
        self.client.close()


class Sender:
    """The model's records and events, from its local hub to the core, on a thread of its own."""

    def __init__(self, hub: Hub, link: CoreLink):
        self.link = link
        self.sent = self.not_sent = 0
        self._sub = hub.subscribe("to the core", {MODEL_STREAM, EVENTS}, maxsize=SEND_QUEUE)
        self._thread = threading.Thread(target=self._run, name="model-sender", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while (item := self._sub.get(timeout_s=None)) is not None:
            self._send(item)

    def _send(self, item: Record | Event) -> None:
        if isinstance(item, Event) and item.source != MODEL_SOURCE:
            return   # the hub's own notices stay here; the model's drops are counted in the final report
        if self.link.send(item):
            self.sent += 1
        else:
            self.not_sent += 1

    def close(self) -> None:
        """Send what is queued, then stop."""
        self._sub.close()
        self._thread.join(timeout=10)
        for item in self._sub.drain():
            self._send(item)


# ------------------------------------------------------------------ plumbing
def _say(word: str, info: dict) -> None:
    """One line on stdout for the supervisor (app/serve/model_supervisor.py)."""
    with contextlib.suppress(BrokenPipeError, ValueError):   # the core is gone: stdin's end stops us next
        print(word, json.dumps(info), flush=True)


def _wait_for_eof(stop: threading.Event) -> None:
    while sys.stdin.readline():
        pass
    stop.set()


def _stop_on_signals(stop: threading.Event) -> None:
    def handler(signum, frame) -> None:
        stop.set()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, handler)


if __name__ == "__main__":
    exit_at_once(main())
