"""The E-stop socket (ROUTER) on its own thread: acted on at once, acknowledged to the sender.

It shares nothing with the command server or the data path: a client stuck in a long request, a hung
viewer or a busy publisher cannot delay it. A request is ``{"reason", "who", "id"}``; the core's ``estop``
(``estop_rig`` for the run or move holding the servos: torque off from this thread, FAULT latched, the
reason and who sent it recorded) runs before the reply ``{"id", "ok": true, "acted_s", "recorded_in",
"received_s"}`` goes back (``acted_s``: until torque was off; ``recorded_in``: the session file that holds the
E-stop, or None; ``received_s``: when the request reached the core, on its machine's monotonic clock).
Every key may stop the rig, viewers' too (app/serve/keys.py).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import zmq
from uartlab.app.run import realtime
from uartlab.app.serve import keys, wire
from uartlab.app.serve.socket_thread import SocketThread

log = logging.getLogger(__name__)

POLL_MS = 50


def estop_reason(reason: str, who: str) -> str:
    """What an E-stop from a client is recorded and said as: the operator's words, and who sent it."""
    return f"{reason} (E-stop from {who})"


def where_recorded(recorded_in: str | None) -> str:
    """An acknowledgement's ``recorded_in`` as the operator reads it."""
    return f"recorded in {recorded_in}" if recorded_in else "no session file open to record it"


class EstopServer(SocketThread):
    def __init__(self, socket: zmq.Socket, act: Callable[[str, str], dict]):
        super().__init__(socket, "core-estop", POLL_MS)
        self.act = act

    def _run(self) -> None:
        # As the control loop's: on a busy machine the E-stop's wake-up must not wait behind ordinary load.
        realtime.raise_thread_priority()
        super()._run()

    def take(self, frames: list[zmq.Frame]) -> None:
        if len(frames) >= 2:   # [sender, request]
            self.socket.send_multipart([frames[0], self._handle(frames[1])], copy=False)

    def _handle(self, frame: zmq.Frame) -> bytes:
        request_id = None
        try:
            request = wire.loads(frame)
            request_id = request.get("id")
            reason = str(request.get("reason") or "E-stop")
            who = keys.user_of(frame) or str(request.get("who") or "unknown client")
            acted = self.act(reason, who)   # its own "acted_s": torque off, not the look for its record after
            return wire.dumps({"id": request_id, "ok": True, **acted})
        except Exception as exc:  # noqa: BLE001 - the sender hears that the E-stop failed, in one line
            log.exception("E-stop failed")
            return wire.dumps({"id": request_id, "ok": False, "error": " ".join(str(exc).split()),
                               "kind": "DeviceError"})
