"""A client of the rig core: requests, the E-stop, the streams mirrored into a local Hub, model records back.

    with CoreClient() as core:                      # $UARTLAB_CORE or the default address; NoCoreError if none
        core.hello["specs"]; core.status()
        core.request("run", suite="free_motion", repeats=1, folder="recordings")
        sub = core.hub.subscribe("plots", {"daq", "runner"})   # the core's streams, as on a local rig
        core.estop("why")                           # on the E-stop socket: acted on, acknowledged
        core.push_model(record)                     # a `model` record (or the model's event) back, recorded

``CoreClient(attach_history=True)`` first publishes the core's last ~30 s of every stream and its recent
events into the local hub, then the live data, so a window attached mid-run shows the present and the past.
The mirror thread reads the data socket as fast as it comes; the local hub's queues are bounded and drop
their oldest items, so a consumer here that never reads costs the core nothing.

Light on purpose (zmq, numpy, the package root): a window or a live-model process loads no rig, no h5py,
no numba to attach (an import-linter contract in pyproject.toml holds that).
"""

from __future__ import annotations

import getpass
import itertools
import logging
import os
import socket as _socket
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import zmq
from uartlab.app.serve import keys as core_keys
from uartlab.app.serve import wire
from uartlab.app.serve.endpoints import Endpoints, endpoints_for, ipc_path
from uartlab.errors import DeviceError, UartlabError
from uartlab.hub import Hub
from uartlab.schema import EVENTS, MODEL_STREAM, EventKind, StreamSpec
from uartlab.streams import Event, Record

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 1.0    # a core on this machine answers in milliseconds; `uartlab estop` gives up after this
REQUEST_TIMEOUT_S = 10.0   # est.: the slowest request (a recording's close flushing its file) takes ~1-2 s
PUSH_LINGER_MS = 2000      # est.: a model's last samples reach a core on this machine in milliseconds
PROBE_TIMEOUT_S = 0.5      # is a core already listening there? a live core answers status in milliseconds
RCVHWM = 10_000            # ~10 s of every stream at the twin's rates, while the mirror thread catches up
DRAIN_QUIET_MS = 200       # est.: a backlog moves in ms; a loaded machine schedules the I/O thread within this
DRAIN_S = 5.0              # at most, half the time the core gives a stopping model (model_supervisor.CLOSE_WAIT_S)


class NoCoreError(DeviceError):
    """No rig core answered at the address in time."""


class CoreRequestError(UartlabError):
    """The core refused a request; ``kind`` is the error class it met."""


def error_from(kind: str, text: str) -> Exception:
    """The error the core met (its kind's name and one line), as the client raises it."""
    if kind == "internal":
        return RuntimeError(text)
    return wire.ERROR_KINDS.get(kind, CoreRequestError)(text)


def who_am_i() -> str:
    return f"{getpass.getuser()}@{_socket.gethostname()} pid {os.getpid()}"


def _ms_left(deadline_s: float) -> int:
    """Whole milliseconds until ``deadline_s`` (monotonic), 0 once it has passed: ZeroMQ's poll timeout."""
    return int(max(0.0, deadline_s - time.monotonic()) * 1000)


def _sent(socket: zmq.Socket, message: bytes, deadline_s: float) -> bool:
    """Send by ``deadline_s`` (monotonic); False if the socket could not take it by then. A DEALER with no
    peer blocks in send (ZeroMQ: "no peers at all"), and a connection the core refused (a client without a
    key it knows: the CURVE handshake fails) leaves none: a plain send would wait forever."""
    if not socket.poll(_ms_left(deadline_s), zmq.POLLOUT):
        return False
    try:
        socket.send(message, flags=zmq.NOBLOCK)
    except zmq.Again:
        return False
    return True


class CoreClient:
    def __init__(self, base: str | None = None, *, timeout_s: float = CONNECT_TIMEOUT_S, subscribe: bool = True,
                 streams: Iterable[str] | None = None, attach_history: bool = False, keys_dir: Path | None = None,
                 hub: Hub | None = None, hello: bool = True):
        self.ends: Endpoints = endpoints_for(base)
        self.who = who_am_i()
        self._keys = core_keys.load_client_keys(keys_dir) if keys_dir is not None else None
        self._context = zmq.Context()
        self._ids = itertools.count(1)
        self._lock = threading.Lock()           # the command socket, for callers on several threads
        self._estop_lock = threading.Lock()
        self._stop = threading.Event()
        self._drain_on_stop = False
        self._thread: threading.Thread | None = None
        self._estop_socket: zmq.Socket | None = None
        self._push: zmq.Socket | None = None
        self.specs: dict[str, StreamSpec] = {}
        self.hub = hub if hub is not None else Hub()
        self.refused = 0                        # data messages that did not match the declared streams
        try:
            self._command = self._socket(zmq.DEALER, self.ends.command)
            # The E-stop alone looks for its own socket: a calibration procedure at the rig serves only that.
            self._no_core_unless_present(self.ends.command if hello else self.ends.estop)
            self.hello: dict = {}
            if not hello:   # the E-stop alone: one round trip, and it does not wait on the command server
                return
            self.hello = self.request("hello", timeout_s=timeout_s)
            self.specs = {d["name"]: wire.spec_from_dict(d) for d in self.hello["specs"]}
            for spec in self.specs.values():
                self.hub.register(spec)
            if subscribe:
                self._subscribe(streams, attach_history)
        except BaseException:
            self.close()
            raise

    def _socket(self, kind: int, address: str) -> zmq.Socket:
        socket = self._context.socket(kind)
        socket.setsockopt(zmq.LINGER, 0)
        if self._keys is not None:
            core_keys.make_client(socket, self._keys)
        socket.connect(address)
        return socket

    def _no_core_unless_present(self, endpoint: str) -> None:
        path = ipc_path(endpoint)
        if path is not None and not path.exists():
            raise NoCoreError(f"no core serves {self.ends.base} (start one: uartlab rig serve)")

    # ------------------------------------------------------------ requests
    def request(self, op: str, timeout_s: float = REQUEST_TIMEOUT_S, **args: Any) -> Any:
        """Send one request and wait for its reply; the core's refusal is raised as its kind of error."""
        reply, _ = self.request_frames(op, timeout_s, **args)
        return reply

    def request_frames(self, op: str, timeout_s: float = REQUEST_TIMEOUT_S, **args: Any) -> tuple[Any, list]:
        with self._lock:
            request_id = next(self._ids)
            deadline = time.monotonic() + timeout_s
            if not _sent(self._command, wire.dumps({"op": op, "id": request_id, "who": self.who, "args": args}),
                         deadline):
                raise NoCoreError(f"no rig core takes requests at {self.ends.base} within {timeout_s:g} s"
                                  + (" (start one: uartlab rig serve)" if op == "hello" else ""))
            while True:
                if not self._command.poll(_ms_left(deadline)):
                    raise NoCoreError(f"no rig core answers at {self.ends.base} within {timeout_s:g} s"
                                                  + (" (start one: uartlab rig serve)" if op == "hello" else ""))
                frames = self._command.recv_multipart(copy=False)
                reply = wire.loads(frames[0])
                if reply.get("id") == request_id:   # a late reply to an earlier request that timed out: skipped
                    break
        if not reply.get("ok"):
            raise error_from(str(reply.get("kind")), str(reply.get("error")))
        return reply.get("result"), list(frames[1:])

    def status(self) -> dict:
        return self.request("status")

    def snapshot(self) -> tuple[dict, list[Record], list[Event]]:
        """The core's description, the last ~30 s of every stream, and its recent events."""
        result, frames = self.request_frames("snapshot")
        records, i = [], 0
        while i < len(frames):
            count = wire.record_frame_count(frames[i])
            item = wire.decode([b"", *frames[i:i + count]], self.specs)
            if isinstance(item, Record):
                records.append(item)
            i += count
        events = [Event(e["t"], EventKind.read(e["event"]), e["source"], e["message"])
                  for e in result.pop("events", [])]
        return result, records, events

    # ------------------------------------------------------------ the E-stop
    def estop(self, reason: str, timeout_s: float = CONNECT_TIMEOUT_S) -> dict:
        """On the E-stop socket: the core turns torque off and latches, then acknowledges (NoCoreError if it
        does not within ``timeout_s``)."""
        with self._estop_lock:
            if self._estop_socket is None:
                self._estop_socket = self._socket(zmq.DEALER, self.ends.estop)
            request_id = next(self._ids)
            deadline = time.monotonic() + timeout_s
            if not _sent(self._estop_socket, wire.dumps({"id": request_id, "reason": reason, "who": self.who}),
                         deadline):
                raise NoCoreError(f"no rig core takes the E-stop at {self.ends.base} within {timeout_s:g} s")
            while True:
                if not self._estop_socket.poll(_ms_left(deadline)):
                    raise NoCoreError(f"no rig core acknowledged the E-stop at {self.ends.base} "
                                                  f"within {timeout_s:g} s")
                reply = wire.loads(self._estop_socket.recv())
                if reply.get("id") == request_id:
                    break
        if not reply.get("ok"):
            raise DeviceError(f"rig core: the E-stop failed: {reply.get('error')}")
        return reply

    # ------------------------------------------------------------ model records back
    def push_model(self, item: Record | Event) -> bool:
        """A `model` record (or the live model's event) to the core, which records it and publishes it to every
        viewer. Never blocks: False when a core that does not keep up left no room for it (the PUSH socket's
        high-water mark). What was queued is still sent at ``close`` (for up to PUSH_LINGER_MS)."""
        if self._push is None:
            self._push = self._socket(zmq.PUSH, self.ends.ingest)
            self._push.setsockopt(zmq.SNDHWM, 1000)
        spec = None if isinstance(item, Event) else self.specs.get(MODEL_STREAM)
        try:
            self._push.send_multipart(wire.encode(item, spec), copy=False, flags=zmq.NOBLOCK)
        except zmq.Again:
            log.debug("model record dropped: the core's ingest is full")
            return False
        return True

    # ------------------------------------------------------------ the streams
    def _subscribe(self, streams: Iterable[str] | None, attach_history: bool) -> None:
        sub = self._socket(zmq.SUB, self.ends.data)
        sub.setsockopt(zmq.RCVHWM, RCVHWM)
        wanted = set(streams) if streams is not None else None
        for topic in wanted if wanted is not None else [""]:
            sub.setsockopt(zmq.SUBSCRIBE, topic.encode())
        newest: dict[str, float] = {}
        if attach_history:  # live data queues on the SUB socket meanwhile; what the history has is skipped
            _, records, events = self.snapshot()
            items: list[Record | Event] = [*events, *records]
            for item in items:
                if wanted is None or _stream(item) in wanted:
                    self.hub.publish(item)
                    if isinstance(item, Record) and len(item):
                        newest[item.stream] = float(item.host_time_s[-1])
        self._thread = threading.Thread(target=self._mirror, args=(sub, wanted, newest), name="core-client-data",
                                        daemon=True)
        self._thread.start()

    def _mirror(self, sub: zmq.Socket, wanted: set[str] | None, newest: dict[str, float]) -> None:
        try:
            while not self._stop.is_set():
                if sub.poll(100):
                    self._take(sub.recv_multipart(copy=False), wanted, newest)
            # What the core had sent before the stop: still on its way through ZeroMQ's I/O thread and the
            # socket's buffers when this process was held up, so read until it has gone quiet, not until empty.
            deadline = time.monotonic() + DRAIN_S
            while self._drain_on_stop and time.monotonic() < deadline and sub.poll(DRAIN_QUIET_MS):
                self._take(sub.recv_multipart(copy=False), wanted, newest)
        except zmq.ZMQError as exc:
            log.debug("client data: %s", exc)
        finally:
            sub.close(linger=0)

    def _take(self, frames: list[zmq.Frame], wanted: set[str] | None, newest: dict[str, float]) -> None:
        try:
            item = wire.decode(frames, self.specs)
        except wire.WireError as exc:
            self.refused += 1
            if self.refused == 1:
                log.warning("core data refused: %s", exc)
            return
        stream = _stream(item)
        if wanted is not None and stream not in wanted:
            return
        if isinstance(item, Record) and stream in newest:
            if float(item.host_time_s[-1]) <= newest[stream]:
                return   # already published from the history
            del newest[stream]
        self.hub.publish(item)

    # ------------------------------------------------------------ the end
    def stop_mirror(self, drain: bool = False) -> None:
        """No more data from the core into the local hub (what it has stays); requests and pushes go on.
        ``drain``: what reached this process's socket before the stop goes into the hub first (a consumer that
        fell behind, as a starved live model, still gets every tick the core sent it). The mirror thread sees
        the stop within one 100 ms poll and is waited for: destroying the context closes every socket, and a
        ZeroMQ socket closed while another thread is in it crashes the process."""
        self._drain_on_stop = drain
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def close(self) -> None:
        """Callers of ``request`` on other threads must have returned (CoreClient's users own those threads)."""
        self.stop_mirror()
        if self._push is not None:   # the model's last records and its final report still reach the core
            self._push.close(linger=PUSH_LINGER_MS)
        self._context.destroy(linger=0)

    def __enter__(self) -> CoreClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def core_answers(address: str, timeout_s: float = PROBE_TIMEOUT_S) -> bool:
    """Does a core answer at ``address`` within ``timeout_s``?"""
    try:
        with CoreClient(address, timeout_s=timeout_s, subscribe=False):
            return True
    except NoCoreError:
        return False


def _stream(item: Record | Event) -> str:
    return EVENTS if isinstance(item, Event) else item.stream
