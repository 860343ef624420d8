"""The window's line to the rig core (app/serve/): attach to a running core or start one, ask it things,
mirror its streams, and send the E-stop on a path that never waits for the window's Python threads.

The core owns the rig, the control loop and the recorder; the window only asks. Of this, only the
E-stop's send runs on the GUI thread:

- requests (``request``) run on the window's worker threads (``tasks.Tasks``): a slow answer (a rig
  starting, a pre-flight) never freezes a frame;
- the status poller asks for the core's status every ``STATUS_PERIOD_S`` and keeps the newest answer,
  which the GUI thread reads without waiting (``status``); a late answer keeps the last one for
  ``STATUS_KEPT_S`` (with ``status_error`` saying why), so a stalled core does not blank the window;
- the E-stop goes from the key's handler to the core's E-stop socket through ``EstopLine``
  (app/gui/estop_line.py): queued in microseconds on the GUI thread, forwarded by ZeroMQ in C, acted on
  by the core at once; the acknowledgement is collected when the window polls (``estop_answers``).

A core the window started (``uartlab rig serve`` as a child process) is asked to shut down when the window
lets go of it, after its run: the trial completes and the file is closed. A core that was running before
the window outlives it.
"""

from __future__ import annotations

import contextlib
import math
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from uartlab.app.gui.estop_line import EstopAck, EstopLine
from uartlab.app.serve.endpoints import is_local
from uartlab.app.serve.runs import run_busy
from uartlab.app.serve.spawn import core_present, start_core, wait_until_answers
from uartlab.hub import Hub, Subscription
from uartlab.processes import end_process, how_it_ended, is_alive
from uartlab.schema import EVENTS

STATUS_PERIOD_S = 0.2      # the status poller's period: the panels show health and the run 5x a second
ATTACH_TIMEOUT_S = 10.0    # a core known to be there (its lock, its answer) but slow on a busy PC
SHUTDOWN_TIMEOUT_S = 30.0  # a core asked to shut down closes the run and its file first
STOP_TIMEOUT_S = 5.0       # SIGTERM to a core that did not shut down or never attached
STATUS_TIMEOUT_S = 2.0     # a status the core has not answered by then is stale: the poller asks again
STATUS_KEPT_S = 10.0       # the last answer still shown (marked "has not answered for N s") while a core is late
VIEWER_QUEUE = 10_000      # hub items (~10 s of every stream at full rate): the GUI may stall that long unseen


class CoreLink:
    """One attached core. Built off the GUI thread with :meth:`attach_or_start`."""

    def __init__(self, client: Any, viewer: Subscription, process: subprocess.Popen | None = None):
        self.client, self.viewer, self.process = client, viewer, process
        self.address: str = client.ends.base
        self.hello: dict = client.hello        # the core's description: pid, specs, its rig.toml's text and source
        self._latest: dict | None = None
        self._asked_s = -math.inf
        self._answered_s = -math.inf
        self._status_error: str | None = None
        self._stop = threading.Event()
        # The client's sockets are used by the poller and the window's worker threads; ZeroMQ sockets must not
        # be closed while another thread is in them, so ``close`` waits for every request under way first.
        self._requests = threading.Condition()
        self._in_flight = 0
        self._closing = False
        self.estop_line = EstopLine(client.ends.estop, client.who)
        self.estop_acks: deque[EstopAck] = deque(maxlen=100)   # answered (or overdue) E-stops, newest last
        self._poller = threading.Thread(target=self._poll, name="gui-core-status", daemon=True)
        self._poller.start()

    # ------------------------------------------------------------ attach
    @classmethod
    def attach_or_start(cls, address: str | None, rig_toml: str = "", *, streams: Iterable[str] | None = None,
                        log_path: Path | None = None, check: Callable[[], object] | None = None) -> CoreLink:
        """The core listening at ``address`` (app/serve's default when None); if none answers there,
        ``uartlab rig serve`` on ``rig_toml`` ("" the twin rig) as a child process, waited for. The window's
        viewer subscription is made before the client fills the hub, so it gets the core's history first.
        ``streams``: mirror only these (and the events; None: all): what the window draws, so the mirror
        thread does not decode at the window's expense what nobody looks at. ``check``: called before a core
        is started (the rig.toml read here, so bad input is one line at once, not a core that dies)."""
        from uartlab.app.serve.endpoints import endpoints_for

        address = endpoints_for(address).base
        process = None
        if not core_present(address):
            if check is not None:
                check()
            process = start_core(address, rig_toml, log_path=log_path)
        try:
            if process is not None:
                wait_until_answers(process, address)
            client, viewer = _attach(address, streams)
            return cls(client, viewer, process)
        except BaseException:
            if process is not None:
                end_process(process, STOP_TIMEOUT_S)
            raise

    @property
    def started_here(self) -> bool:
        return self.process is not None

    def ended(self) -> str | None:
        """Once the core has ended: how, for one this window started ("the rig core this window started
        (pid N) was killed by SIGKILL"); that it has, for one started elsewhere on this machine ("the rig
        core (pid N) has exited": not our child, its exit status is not ours to read). None while it runs."""
        if self._closing:
            return None
        process = self.process
        if process is not None:
            code = process.poll()
            if code is None:
                return None
            return f"the rig core this window started (pid {process.pid}) {how_it_ended(code)}"
        # A pid not seen is trusted only from a core that does not answer either: another PID namespace (a
        # container sharing the socket folder) would hide a live one.
        pid = self.hello.get("pid")
        if self._status_error is None or not isinstance(pid, int) or not is_local(self.address) or is_alive(pid):
            return None
        return f"the rig core (pid {pid}) has exited"

    @property
    def hub(self) -> Hub:
        """The client's mirror of the core's streams (the core's history first, then live)."""
        return self.client.hub

    # ------------------------------------------------------------ asking
    def request(self, op: str, timeout_s: float | None = None, **args) -> Any:
        """Ask the core (blocking: worker threads only). The core's refusal is raised as its sentence."""
        with self._requests:
            if self._closing:
                raise RuntimeError(f"{op}: the window has let go of the rig core")
            self._in_flight += 1
        try:
            timeout = {} if timeout_s is None else {"timeout_s": timeout_s}
            return self.client.request(op, **timeout, **args)
        finally:
            with self._requests:
                self._in_flight -= 1
                self._requests.notify_all()

    def status(self) -> dict | None:
        """The newest status the poller got (None before the first, or after the core stopped answering)."""
        return self._latest

    def status_at(self) -> tuple[float, dict | None]:
        """The newest status and when (monotonic s) the poller asked for it: an answer asked for after a
        request was taken reflects that request."""
        return self._asked_s, self._latest

    @property
    def answered_s(self) -> float:
        """When (monotonic s) the poller asked for the status the core last answered; -inf before any."""
        return self._answered_s

    @property
    def status_error(self) -> str | None:
        """Why the last status request failed (the core went away), or None."""
        return self._status_error

    def _poll(self) -> None:
        while not self._stop.wait(STATUS_PERIOD_S):
            asked = time.monotonic()
            try:
                self._latest, self._status_error = self.request("status", STATUS_TIMEOUT_S), None
                self._asked_s = self._answered_s = asked
            except Exception as exc:  # noqa: BLE001 - shown by the window; the poller goes on
                self._status_error = str(exc) or type(exc).__name__
                # One late answer on a busy PC must not blank the run panel; a core gone for good does.
                if time.monotonic() - self._answered_s > STATUS_KEPT_S:
                    self._latest = None

    # ------------------------------------------------------------ E-stop
    def estop(self, reason: str) -> None:
        """On the GUI thread, in the key's handler: on its way to the core at once (``EstopLine``)."""
        self.estop_line.send(reason)

    def estop_answers(self) -> list[EstopAck]:
        """On the GUI thread: the E-stops the core acknowledged since the last call, and any it did not
        (``error`` set), which the window reports."""
        answers = self.estop_line.collect()
        self.estop_acks.extend(answers)
        return answers

    # ------------------------------------------------------------ letting go
    def close(self, shutdown: bool | None = None) -> None:
        """Detach. ``shutdown`` (default: only a core this window started) asks the core to exit once its run
        is over: a trial still going completes and its file is closed, whoever let go of the core."""
        shutdown = self.started_here if shutdown is None else shutdown
        run_going = run_busy(self._latest)
        self._stop.set()
        self._poller.join()            # within one status request (STATUS_TIMEOUT_S)
        self.estop_line.close()
        # A core this window started that has ended is not asked (the request would wait out its timeout
        # while the operator waits to connect again).
        gone = self.process is not None and self.process.poll() is not None
        try:
            if shutdown and not gone:
                with contextlib.suppress(Exception):   # one that does not answer is ended below
                    self.request("shutdown", after_run=True)
        finally:
            with self._requests:       # requests of the window's workers end within their own timeout
                self._closing = True
                self._requests.wait_for(lambda: self._in_flight == 0)
            self.viewer.close()
            self.client.close()
            if self.process is not None and shutdown and not run_going:   # else it exits after its run
                end_process(self.process, STOP_TIMEOUT_S, wait_first_s=SHUTDOWN_TIMEOUT_S)


def _attach(address: str, streams: Iterable[str] | None) -> tuple[Any, Subscription]:
    """A client mirroring every stream of the core into a fresh Hub, the core's last seconds first, and the
    window's subscription to that hub, made before anything is published into it."""
    from uartlab.app.serve.client import CoreClient

    hub = Hub()
    viewer = hub.subscribe("gui", maxsize=VIEWER_QUEUE)
    wanted = None if streams is None else [*streams, EVENTS]
    try:
        return CoreClient(address, hub=hub, attach_history=True, streams=wanted, timeout_s=ATTACH_TIMEOUT_S), viewer
    except BaseException:
        viewer.close()
        raise


