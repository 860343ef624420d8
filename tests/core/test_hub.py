"""The stream hub: publishing never blocks, drops are counted per subscriber and stream, order is kept."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from uartlab.hub import EVENTS, Hub
from uartlab.streams import Event, FieldSpec, Record, StreamSpec

SPEC_A = StreamSpec("a", "test", (FieldSpec("x", "f8", (), "m"),), 100.0)
SPEC_B = StreamSpec("b", "test", (FieldSpec("y", "i8", (2,)),), 10.0)


def rec_a(k: int) -> Record:
    return Record.single("a", float(k), x=float(k))


def rec_b(k: int) -> Record:
    return Record.single("b", float(k), y=np.array([k, k]))


@pytest.fixture
def hub() -> Hub:
    h = Hub(validate=True)
    h.register(SPEC_A)
    h.register(SPEC_B)
    return h


def test_publish_never_blocks_on_a_stuck_subscriber(hub):
    stuck = hub.subscribe("stuck", maxsize=10)   # never read
    t0 = time.perf_counter()
    for k in range(20_000):
        hub.publish(rec_a(k))
    assert time.perf_counter() - t0 < 2.0
    kept = stuck.drain()
    # drop-oldest: the newest ten are what is left
    assert [r.data["x"][0] for r in kept if isinstance(r, Record)][-1] == 19_999
    assert stuck.dropped["a"] >= 20_000 - 10


def test_drops_are_counted_per_subscriber_and_stream(hub):
    hub.subscribe("slow", {"a", "b"}, maxsize=5)  # never read
    fast = hub.subscribe("fast", {"a", "b"}, maxsize=1000)
    for k in range(10):
        hub.publish(rec_a(k))
        hub.publish(rec_b(k))
    stats = hub.stats()
    assert stats["slow"].dropped == 15 and stats["fast"].dropped == 0
    counts = stats["slow"].streams
    assert counts["a"].dropped_records + counts["b"].dropped_records == 15
    assert counts["a"].delivered_records + counts["b"].delivered_records == 5
    assert hub.drop_counts() == {"slow": {s: c.dropped_records for s, c in counts.items() if c.dropped_records}}
    assert len(fast.drain()) == 20
    # the first drop of each stream is announced once, as an event everyone may record
    drops = [e for e in hub.recent_events() if e.kind == "drop"]
    assert len(drops) == 2 and all("slow" in e.message for e in drops)


def test_a_fast_subscriber_gets_everything_in_order_from_a_publisher_thread(hub):
    sub = hub.subscribe("consumer", {"a"}, maxsize=1000)
    n = 5000
    got = []

    def consume():
        for item in sub:
            got.append(item.data["x"][0])
            if len(got) == n:
                return

    consumer = threading.Thread(target=consume)
    consumer.start()
    for k in range(n):
        hub.publish(rec_a(k))
        if k % 50 == 0:
            time.sleep(0.001)  # a device's pace: the consumer keeps up
    consumer.join(timeout=5)
    assert got == list(range(n))
    assert sub.stats().streams["a"].dropped_records == 0


def test_streams_filter_and_events_travel_like_records(hub):
    only_b = hub.subscribe("b-only", {"b"})
    events = hub.subscribe("log", {EVENTS})
    everything = hub.subscribe("all")
    hub.publish(rec_a(1))
    fault = hub.event("fault", "daq", "USB-6210 Dev1: gone")
    hub.publish(rec_b(2))
    assert [r.stream for r in only_b.drain()] == ["b"]
    assert events.drain() == [fault]
    items = everything.drain()
    assert [type(i) for i in items] == [Record, Event, Record] and items[1].source == "daq"
    assert hub.recent_events()[-1] == fault


def test_get_waits_then_times_out_and_close_ends_iteration(hub):
    sub = hub.subscribe("w", {"a"})
    t0 = time.monotonic()
    assert sub.get(timeout_s=0.05) is None and time.monotonic() - t0 >= 0.04
    threading.Timer(0.05, sub.close).start()
    assert list(sub) == []
    hub.publish(rec_a(0))  # a closed subscription gets nothing, and its counts stay in stats
    assert sub.drain() == [] and "w" in hub.stats()


def test_unknown_streams_and_bad_records_are_refused(hub):
    with pytest.raises(KeyError, match="not registered"):
        hub.publish(Record.single("nope", 0.0, x=1.0))
    with pytest.raises(ValueError, match="missing fields"):
        hub.publish(Record.single("a", 0.0, z=1.0))
    with pytest.raises(ValueError, match="different descriptor"):
        hub.register(StreamSpec("a", "other", (FieldSpec("x", "f8"),)))
