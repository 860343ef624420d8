"""Every stream and event of the core's hub onto the data socket (PUB), on a thread of its own.

Two bounds keep a viewer from ever slowing the core: the hub subscription ("publisher") drops its oldest
items when this thread falls behind, and the PUB socket drops what a slow or hung subscriber's pipe cannot
take (ZeroMQ's high-water mark: a PUB never blocks). The recorder is not a viewer: it is the session's own
hub consumer in the core, with its own large queue, and never reads from here.
"""

from __future__ import annotations

import logging
import threading

import zmq
from uartlab.app.serve import wire
from uartlab.hub import Hub
from uartlab.streams import Event

log = logging.getLogger(__name__)

SNDHWM = 2000              # messages per subscriber: ~2 s of every stream at the twin's rates
QUEUE_ITEMS = 5000         # the hub's side of the same bound, when this thread itself lags


class Publisher:
    def __init__(self, hub: Hub, socket: zmq.Socket):
        self.hub, self.socket = hub, socket
        socket.setsockopt(zmq.SNDHWM, SNDHWM)
        socket.setsockopt(zmq.LINGER, 0)
        self._sub = hub.subscribe("publisher", None, maxsize=QUEUE_ITEMS)
        self._thread = threading.Thread(target=self._run, name="core-publisher", daemon=True)
        self.sent = 0

    def start(self) -> Publisher:
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            while (item := self._sub.get(timeout_s=None)) is not None:
                spec = None if isinstance(item, Event) else self.hub.specs.get(item.stream)
                self.socket.send_multipart(wire.encode(item, spec), copy=False)
                self.sent += 1
        except zmq.ZMQError as exc:  # the context was terminated under us: the core is stopping
            log.debug("publisher: %s", exc)
        finally:
            self.socket.close(linger=0)

    def close(self) -> None:
        self._sub.close()
        self._thread.join(timeout=2)
