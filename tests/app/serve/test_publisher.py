"""The core's publisher (app/serve/publisher.py) on a real XPUB socket: what no client subscribes to is not
encoded, a subscriber gets its streams and only those, and a client gone is a subscription gone."""

from __future__ import annotations

import time

import numpy as np
import zmq
from conftest import wait_for
from uartlab.app.serve import wire
from uartlab.app.serve.publisher import Publisher
from uartlab.hub import Hub
from uartlab.schema import EVENTS, EventKind, declared_specs
from uartlab.streams import Event, Record

SPECS = declared_specs()


def a_record(stream: str) -> Record:
    spec = SPECS[stream]
    data = {f.name: np.zeros((1, *f.shape), dtype=f.dtype) for f in spec.fields}
    return Record(stream, np.array([time.monotonic()]), data)


def publish_all(hub: Hub) -> None:
    hub.publish(a_record("runner"))
    hub.publish(a_record("daq"))
    hub.event(EventKind.OPERATOR, "test", "hello")


def test_only_what_a_client_subscribes_to_is_encoded_and_sent():
    context = zmq.Context()
    hub = Hub()
    for spec in SPECS.values():
        hub.register(spec)
    socket = context.socket(zmq.XPUB)
    port = socket.bind_to_random_port("tcp://127.0.0.1")
    publisher = Publisher(hub, socket).start()
    sub = context.socket(zmq.SUB)
    try:
        publish_all(hub)
        assert wait_for(lambda: publisher.unwanted == 3, 5.0)
        assert publisher.sent == 0                        # nobody listens: nothing encoded

        sub.connect(f"tcp://127.0.0.1:{port}")
        for topic in ("runner", EVENTS):
            sub.setsockopt(zmq.SUBSCRIBE, topic.encode())
        got: list = []

        def received() -> bool:
            publish_all(hub)                              # until the subscriptions have reached the publisher
            while sub.poll(50):
                got.append(wire.decode(sub.recv_multipart(), SPECS))
            return any(isinstance(i, Event) for i in got) and any(isinstance(i, Record) for i in got)

        assert wait_for(received, 10.0)
        assert {i.stream for i in got if isinstance(i, Record)} == {"runner"}      # not the DAQ's blocks
        assert publisher.topics == {b"runner", EVENTS.encode()}

        sub.close(linger=0)                               # the client goes: so do its subscriptions
        assert wait_for(lambda: (publish_all(hub), not publisher.topics)[1], 10.0)
        sent, unwanted = publisher.sent, publisher.unwanted
        publish_all(hub)
        assert wait_for(lambda: publisher.unwanted >= unwanted + 3, 5.0) and publisher.sent == sent
    finally:
        publisher.close()
        sub.close(linger=0)
        context.term()
