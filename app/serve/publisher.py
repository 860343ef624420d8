"""Every stream and event of the core's hub onto the data socket (XPUB), on a thread of its own.

Two bounds keep a viewer from ever slowing the core: the hub subscription ("publisher") drops its oldest
items when this thread falls behind, and the socket drops what a slow or hung subscriber's pipe cannot
take (ZeroMQ's high-water mark: a PUB never blocks). The recorder is not a viewer: it is the session's own
hub consumer in the core, with its own large queue, and never reads from here.

The socket is an XPUB so that this thread sees the subscriptions (ZeroMQ passes each topic's first
subscribe and last unsubscribe, a departed client's included): an item no client has subscribed to is not
encoded at all. A headless run or `uartlab run` (which only asks for status) has no subscriber, and the
encoding held the core's GIL for 5 % of a core, beside the control loop.
"""

from __future__ import annotations

import logging
import threading

import zmq
from uartlab.app.serve import wire
from uartlab.hub import Hub
from uartlab.schema import EVENTS
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
        self.sent = self.unwanted = 0     # items sent; items no client subscribed to (not encoded)
        self.topics: set[bytes] = set()   # the prefixes some client subscribes to ("": everything)

    def start(self) -> Publisher:
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            while (item := self._sub.get(timeout_s=None)) is not None:
                self._take_subscriptions()
                stream = EVENTS if isinstance(item, Event) else item.stream
                if not any(stream.encode().startswith(prefix) for prefix in self.topics):
                    self.unwanted += 1
                    continue
                self.socket.send_multipart(wire.encode(item, self.hub.specs.get(stream)), copy=False)
                self.sent += 1
        except zmq.ZMQError as exc:  # the context was terminated under us: the core is stopping
            log.debug("publisher: %s", exc)
        finally:
            self.socket.close(linger=0)

    def _take_subscriptions(self) -> None:
        """The (un)subscriptions that came since the last item: b"\\x01topic" or b"\\x00topic"."""
        while True:
            try:
                message = self.socket.recv(zmq.NOBLOCK)
            except zmq.Again:
                return
            if message[:1] == b"\x01":
                self.topics.add(message[1:])
            elif message[:1] == b"\x00":
                self.topics.discard(message[1:])

    def close(self) -> None:
        self._sub.close()
        self._thread.join(timeout=2)
