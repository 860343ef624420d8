"""The stream hub: devices publish Records and Events, consumers take them from their own bounded queues.

    hub = Hub()
    hub.register(spec)                                  # once per stream (StreamSpec)
    sub = hub.subscribe("recorder", {"daq", EVENTS}, maxsize=10_000)
    hub.publish(record)                                 # from a device thread: never blocks
    hub.event(EventKind.FAULT, "daq", "USB-6210 Dev1: ...")     # an Event, delivered like a record
    item = sub.get(timeout_s=0.1)                       # Record | Event | None, in publish order

Policy, and why:
- A publisher never waits for a consumer: ``publish`` appends to each subscriber's queue under that
  queue's lock (held for a deque append) and returns. No consumer code runs in a publisher's thread:
  there are no callbacks, consumers pull from their queues in their own threads.
- A full queue drops its **oldest** item (drop-oldest): a live consumer (GUI, live model, interlocks)
  wants the newest data, and a consumer that must keep everything (the recorder) sizes its queue for its
  worst stall. What is dropped is counted per subscriber and per stream (records and samples), the first
  drop of each (subscriber, stream) is announced once as a "drop" Event, and ``stats()`` gives the
  full counts for the session file at close.
- Events are the pseudo-stream ``EVENTS`` ("events"); the hub also keeps the last ``history`` events so
  a consumer that subscribes late (or drops some) can still write every fault.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from uartlab.schema import EVENTS  # the stream name Events travel under (declared with the streams)
from uartlab.streams import Event, EventKind, Record, StreamSpec

DEFAULT_MAXSIZE = 1000         # items; ~5 s of the actuator stream at 200 Hz, 50 s of DAQ blocks at 20 Hz


@dataclass
class StreamCounts:
    delivered_records: int = 0
    delivered_samples: int = 0
    dropped_records: int = 0
    dropped_samples: int = 0


@dataclass
class SubscriberStats:
    name: str
    maxsize: int
    queued: int
    streams: dict[str, StreamCounts] = field(default_factory=dict)

    @property
    def dropped(self) -> int:
        return sum(c.dropped_records for c in self.streams.values())


def _stream_of(item: Record | Event) -> str:
    return EVENTS if isinstance(item, Event) else item.stream


def _samples(item: Record | Event) -> int:
    return 1 if isinstance(item, Event) else len(item)


class Subscription:
    """One consumer's bounded queue. Iterate, or ``get``/``drain``; ``close`` to leave the hub."""

    def __init__(self, hub: Hub, name: str, streams: frozenset[str] | None, maxsize: int):
        if maxsize < 1:
            raise ValueError(f"subscription {name}: maxsize must be >= 1, got {maxsize}")
        self.hub, self.name, self.streams, self.maxsize = hub, name, streams, int(maxsize)
        self._queue: deque[Record | Event] = deque()
        self._cond = threading.Condition(threading.Lock())
        self._counts: dict[str, StreamCounts] = {}
        self.closed = False

    def wants(self, stream: str) -> bool:
        return self.streams is None or stream in self.streams

    @property
    def subscribed(self) -> bool:
        """Whether the hub still hands this queue what is published (False once ``close`` has begun)."""
        return self in self.hub._subs

    def _offer(self, item: Record | Event) -> str | None:
        """Append, dropping the oldest if full; returns the dropped item's stream if that is its first drop."""
        first_drop = None
        with self._cond:
            if len(self._queue) >= self.maxsize:
                old = self._queue.popleft()
                counts = self._counts.setdefault(_stream_of(old), StreamCounts())
                if counts.dropped_records == 0:
                    first_drop = _stream_of(old)
                counts.dropped_records += 1
                counts.dropped_samples += _samples(old)
                counts.delivered_records -= 1
                counts.delivered_samples -= _samples(old)
            counts = self._counts.setdefault(_stream_of(item), StreamCounts())
            counts.delivered_records += 1
            counts.delivered_samples += _samples(item)
            self._queue.append(item)
            self._cond.notify()
        return first_drop

    def get(self, timeout_s: float | None = None) -> Record | Event | None:
        """The oldest queued item; None after timeout_s (None: wait until one comes or the hub closes us)."""
        with self._cond:
            if not self._queue and not self.closed:
                self._cond.wait_for(lambda: self._queue or self.closed, timeout_s)
            return self._queue.popleft() if self._queue else None

    def drain(self) -> list[Record | Event]:
        """Everything queued now, oldest first, without waiting."""
        with self._cond:
            items = list(self._queue)
            self._queue.clear()
        return items

    def __iter__(self) -> Iterator[Record | Event]:
        """Items until close()."""
        while True:
            item = self.get(timeout_s=None)
            if item is None:
                return
            yield item

    @property
    def dropped(self) -> dict[str, int]:
        """Records dropped per stream."""
        with self._cond:
            return {s: c.dropped_records for s, c in self._counts.items() if c.dropped_records}

    def stats(self) -> SubscriberStats:
        """``delivered`` counts what reached the queue and was not dropped from it."""
        with self._cond:
            counts = {s: StreamCounts(**vars(c)) for s, c in self._counts.items()}
            return SubscriberStats(self.name, self.maxsize, len(self._queue), counts)

    def close(self) -> None:
        self.hub.unsubscribe(self)
        with self._cond:
            self.closed = True
            self._cond.notify_all()

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Hub:
    """Publish/subscribe between device threads and consumers; see the module docstring for the policy."""

    def __init__(self, history: int = 10_000, validate: bool = False):
        self._lock = threading.Lock()
        self._specs: dict[str, StreamSpec] = {}
        # Copy-on-write: publish reads the tuple without the hub lock; subscribe/unsubscribe replace it.
        self._subs: tuple[Subscription, ...] = ()
        self._history: deque[Event] = deque(maxlen=history)
        self.validate = validate  # check every record against its spec (tests; costs a few us per record)
        self.published: dict[str, int] = {}  # items published per stream (events included)
        self._closed: list[Subscription] = []  # kept so their counts still reach the session file

    # ------------------------------------------------------------ streams
    def register(self, spec: StreamSpec) -> None:
        with self._lock:
            known = self._specs.get(spec.name)
            if known is not None and known != spec:
                raise ValueError(f"stream {spec.name} is already registered with a different descriptor")
            self._specs[spec.name] = spec

    @property
    def specs(self) -> dict[str, StreamSpec]:
        with self._lock:
            return dict(self._specs)

    # ------------------------------------------------------------ publishing
    def publish(self, item: Record | Event) -> None:
        """Hand a Record (of a registered stream) or an Event to every subscriber that wants it. Never blocks."""
        stream = _stream_of(item)
        if isinstance(item, Event):
            self._history.append(item)
        else:
            spec = self._specs.get(stream)
            if spec is None:
                raise KeyError(f"stream {stream!r} is not registered with the hub")
            if self.validate:
                item.validate(spec)
        with self._lock:  # events come from many threads
            self.published[stream] = self.published.get(stream, 0) + 1
        drops = []
        for sub in self._subs:
            if sub.wants(stream) and (dropped := sub._offer(item)) is not None:
                drops.append((sub.name, dropped))
        for name, dropped_stream in drops:  # announced after delivery, outside every lock
            self.event(EventKind.DROP, "hub", f"subscriber {name} is not keeping up: oldest {dropped_stream} items "
                                              "dropped (counted in the hub's stats)")

    def event(self, kind: EventKind, source: str, message: str, host_time_s: float | None = None) -> Event:
        """Publish an Event now (or at host_time_s); returns it."""
        event = Event(time.monotonic() if host_time_s is None else host_time_s, kind, source, message)
        self.publish(event)
        return event

    def recent_events(self) -> list[Event]:
        return list(self._history)

    # ------------------------------------------------------------ subscribing
    def subscribe(self, name: str, streams: Iterable[str] | None = None,
                  maxsize: int = DEFAULT_MAXSIZE) -> Subscription:
        """A new bounded queue of the given streams (None: all, events included)."""
        sub = Subscription(self, name, None if streams is None else frozenset(streams), maxsize)
        with self._lock:
            self._subs = (*self._subs, sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        with self._lock:
            if sub in self._subs:
                self._subs = tuple(s for s in self._subs if s is not sub)
                self._closed.append(sub)

    def stats(self) -> dict[str, SubscriberStats]:
        """Per subscriber (closed ones too), per stream: delivered and dropped records and samples.
        A name used twice gets "#2", "#3" ... so no subscriber's counts are lost."""
        with self._lock:
            subs = [*self._closed, *self._subs]
        out: dict[str, SubscriberStats] = {}
        for sub in subs:
            name, k = sub.name, 1
            while name in out:
                k += 1
                name = f"{sub.name}#{k}"
            out[name] = sub.stats()
        return out

    def drop_counts(self) -> dict[str, dict[str, int]]:
        """{subscriber: {stream: dropped records}}, only where something was dropped (for the session file)."""
        return {name: {s: c.dropped_records for s, c in st.streams.items() if c.dropped_records}
                for name, st in self.stats().items() if st.dropped}
