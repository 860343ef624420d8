"""The core's command socket (ROUTER) on a thread of its own: requests in, one reply each.

A request is one JSON frame ``{"op", "id", "who", "args"}`` from a DEALER; the reply is ``{"id", "ok": true,
"result"}`` (plus data frames for a snapshot's history) or ``{"id", "ok": false, "error", "kind"}``, where
``kind`` names the error class the client raises again (app/serve/wire.py ``ERROR_KINDS``). An op that
changes the rig is refused to a viewer key (app/serve/keys.py) and recorded as an ``operator`` event with
who sent it: the CurveZMQ key's name, else the client's own ``user@host pid N``. The E-stop does not come
here: it has its own socket and thread (app/serve/estop_server.py).
"""

from __future__ import annotations

import faulthandler
import logging
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import zmq
from uartlab.app.serve import keys, wire
from uartlab.app.serve.socket_thread import SocketThread
from uartlab.app.serve.wire import error_kind
from uartlab.schema import EventKind

log = logging.getLogger(__name__)

POLL_MS = 100      # how often the thread looks at its stop flag
# A request not answered by then has every thread's stack written to the core's log (stderr): clients give up
# at 10 s, and a core that stalls on a busy PC must say where, not only that it did.
SLOW_REQUEST_S = 5.0


@dataclass
class Reply:
    """A result with data frames after the JSON (a snapshot's history records)."""

    result: Any
    frames: list[Any] = field(default_factory=list)


@dataclass(frozen=True)
class Op:
    handler: Callable[[dict, str], Any]      # (args, who) -> a JSON-able result or a Reply
    commands: bool = True                    # changes the rig: operators only, recorded as an event


class CommandServer(SocketThread):
    def __init__(self, socket: zmq.Socket, ops: dict[str, Op], hub):
        super().__init__(socket, "core-commands", POLL_MS)
        socket.setsockopt(zmq.ROUTER_MANDATORY, 0)   # a reply to a client gone is dropped, not an error
        self.ops, self.hub = ops, hub
        self._stacks_to = _with_file_descriptor(sys.stderr) or _with_file_descriptor(sys.__stderr__)

    def take(self, frames: list[zmq.Frame]) -> None:
        if len(frames) < 2:   # [sender, request]
            return
        t0 = time.monotonic()
        if self._stacks_to is not None:
            faulthandler.dump_traceback_later(SLOW_REQUEST_S, file=self._stacks_to)
        try:
            out = self.handle(frames[1])
        finally:
            if self._stacks_to is not None:
                faulthandler.cancel_dump_traceback_later()
        if (took_s := time.monotonic() - t0) > SLOW_REQUEST_S:
            log.warning("a request took %.1f s to answer (the threads' stacks are above)", took_s)
        self.socket.send_multipart([frames[0], *out], copy=False)

    def handle(self, frame: zmq.Frame) -> list[Any]:
        request_id = None
        try:
            request = wire.loads(frame)
            request_id = request.get("id")
            name, args = str(request.get("op", "")), request.get("args") or {}
            op = self.ops.get(name)
            if op is None:
                raise ValueError(f"unknown request {name!r}; the core answers {', '.join(sorted(self.ops))}")
            user = keys.user_of(frame)
            who = user or str(request.get("who") or "unknown client")
            if op.commands:
                if not keys.may_command(user):
                    raise PermissionError(f"{name}: refused: {user} may watch this core but not command it "
                                          "(its key is in viewers/)")
                self.hub.event(EventKind.OPERATOR, "core", f"{who}: {name}{_brief(args)}")
            result = op.handler(args, who)
        except Exception as exc:  # noqa: BLE001 - every failure goes back as one line
            text = " ".join(str(exc).split()) or type(exc).__name__
            kind = "PermissionError" if isinstance(exc, PermissionError) else error_kind(exc)
            if kind == "internal":
                log.exception("request failed")
            return [wire.dumps({"id": request_id, "ok": False, "error": text, "kind": kind})]
        reply = result if isinstance(result, Reply) else Reply(result)
        return [wire.dumps({"id": request_id, "ok": True, "result": reply.result}), *reply.frames]


def _with_file_descriptor(stream):
    """``stream`` if faulthandler can write to it (a real file descriptor), else None."""
    try:
        stream.fileno()
    except (AttributeError, OSError, ValueError):
        return None
    return stream


def _brief(args: dict) -> str:
    """The request's options for the event, without a suite's or parameter file's whole text."""
    shown = {k: v for k, v in args.items() if not k.endswith("_text") and v not in (None, "", [], {})}
    return (" " + ", ".join(f"{k}={v}" for k, v in shown.items())) if shown else ""
