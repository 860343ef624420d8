"""The model-ingest socket (PULL): `model` records and the model's events from its own process, into the hub.

The live model runs beside the core as a client (app/serve/client.py ``CoreClient``: it subscribes to the
streams it needs and ``push_model(item)`` sends each prediction and each of its events back). Here each
record is checked against the core's ``model`` StreamSpec (an event: that it is the live model's, source
"live model") and published into the hub, so the session file records it and
every viewer sees it, exactly as if the model ran in the core. A record that does not match is refused
with one logged line (and counted); it never reaches the file.
"""

from __future__ import annotations

import logging

import zmq
from uartlab.app.serve import wire
from uartlab.app.serve.socket_thread import SocketThread
from uartlab.hub import Hub
from uartlab.schema import MODEL_SOURCE, MODEL_STREAM
from uartlab.streams import Event

log = logging.getLogger(__name__)

POLL_MS = 100
RCVHWM = 1000     # ~10 s of model records at 100 Hz; a flooding client is held back at its own end


class Ingest(SocketThread):
    def __init__(self, socket: zmq.Socket, hub: Hub):
        super().__init__(socket, "core-ingest", POLL_MS)
        socket.setsockopt(zmq.RCVHWM, RCVHWM)
        self.hub = hub
        self.received = self.refused = 0

    def take(self, frames: list[zmq.Frame]) -> None:
        spec = self.hub.specs.get(MODEL_STREAM)
        try:
            item = wire.decode(frames, {MODEL_STREAM: spec} if spec is not None else {})
            if isinstance(item, Event):
                if item.source != MODEL_SOURCE:
                    raise wire.WireError(f"an event from {item.source!r}: only the live model's are taken here")
            else:
                item.validate(spec)  # type: ignore[arg-type]  # decode refused every stream but the model's
        except (wire.WireError, ValueError) as exc:
            self.refused += 1
            if self.refused == 1 or self.refused % 1000 == 0:
                log.warning("model ingest: refused (%d so far): %s", self.refused, exc)
            return
        self.received += 1
        self.hub.publish(item)
