"""The window's E-stop line to the rig core: from the key handler to the core's E-stop socket with no Python
thread to wake on the way.

The GUI thread sends the request on an inproc socket (a copy into ZeroMQ's queue: microseconds, never
blocks) the moment Esc, F1 or the button is pressed. A forwarding thread sits in ``zmq.proxy``, which runs
in C with the GIL released: it passes the request to the core's E-stop socket and the core's
acknowledgement back, whatever the window's Python threads are doing (a long paint, a busy machine where a
waiting Python thread is scheduled late). The core acts on the request at once (torque off, read back,
latched, the reason and sender recorded; app/serve/estop_server.py) and acknowledges; the GUI thread
collects acknowledgements when it polls (``acks``) and reports any request left unacknowledged past
``ACK_TIMEOUT_S``. The request is the core's own E-stop message (``{"id", "reason", "who"}``).
"""

from __future__ import annotations

import itertools
import threading
import time
from dataclasses import dataclass

import zmq
from uartlab.app.serve import wire

ACK_TIMEOUT_S = 1.0   # the core acknowledges in milliseconds; `uartlab estop` gives up after the same


@dataclass
class EstopAck:
    reason: str
    sent_s: float                # monotonic: when the GUI thread handed it to ZeroMQ
    acked_s: float | None = None  # when the acknowledgement reached the GUI thread's poll
    torque_off_s: float | None = None  # the core's own: from the request's arrival until torque was off
    received_s: float | None = None    # when the request reached the core (its monotonic clock: one machine's)
    error: str | None = None      # the core's refusal, or "no acknowledgement"
    recorded_in: str | None = None  # the session file that holds the E-stop (None: no file open to)


class EstopLine:
    def __init__(self, estop_endpoint: str, who: str):
        self.who = who
        self._context = zmq.Context()
        self._ids = itertools.count(1)
        self.pending: dict[int, EstopAck] = {}
        inner = f"inproc://gui-estop-{id(self)}"
        front = self._context.socket(zmq.DEALER)   # the proxy's side of the inproc pair
        back = self._context.socket(zmq.DEALER)    # to the core's E-stop ROUTER
        for s in (front, back):
            s.setsockopt(zmq.LINGER, 0)
        front.bind(inner)
        back.connect(estop_endpoint)
        self._sender = self._context.socket(zmq.DEALER)   # the GUI thread's own
        self._sender.setsockopt(zmq.LINGER, 0)
        self._sender.connect(inner)
        self._thread = threading.Thread(target=_forward, args=(front, back), name="gui-estop-forward", daemon=True)
        self._thread.start()

    def send(self, reason: str) -> None:
        """On the GUI thread, in the key's own handler: queued for the core at once, never blocking."""
        request_id = next(self._ids)
        self.pending[request_id] = EstopAck(reason, time.monotonic())
        self._sender.send(wire.dumps({"id": request_id, "reason": reason, "who": self.who}), zmq.NOBLOCK)

    def collect(self) -> list[EstopAck]:
        """On the GUI thread: the requests answered since the last call, and those overdue (``error`` set)."""
        done = []
        while self._sender.poll(0):
            reply = wire.loads(self._sender.recv())
            ack = self.pending.pop(int(reply.get("id") or 0), None)
            if ack is not None:
                ack.acked_s = time.monotonic()
                ack.error = None if reply.get("ok") else str(reply.get("error"))
                ack.recorded_in = reply.get("recorded_in")
                ack.torque_off_s, ack.received_s = reply.get("acted_s"), reply.get("received_s")
                done.append(ack)
        now = time.monotonic()
        for request_id, ack in list(self.pending.items()):
            if now - ack.sent_s > ACK_TIMEOUT_S:
                del self.pending[request_id]
                ack.error = f"the rig core did not acknowledge the E-stop within {ACK_TIMEOUT_S:g} s"
                done.append(ack)
        return done

    def close(self) -> None:
        """Ending the context makes zmq.proxy return; the forwarding thread then closes its own sockets
        (a socket is closed by the thread that uses it), which lets the end complete."""
        self._sender.close(linger=0)
        self._context.term()
        self._thread.join(1.0)


def _forward(front: zmq.Socket, back: zmq.Socket) -> None:
    try:
        zmq.proxy(front, back)
    except zmq.ZMQError:   # ETERM: the window let go of the core
        pass
    finally:
        front.close(linger=0)
        back.close(linger=0)
