"""The last ~30 s of every stream and the recent events, for a client that attaches mid-run.

A hub consumer on its own thread (subscriber "history", drop-oldest like any viewer): it keeps each stream's
records whose newest sample is younger than ``span_s``; ``snapshot()`` gives one concatenated Record per
stream and the hub's recent events. It never touches the control loop.
"""

from __future__ import annotations

import threading
import time
from collections import deque

from uartlab.hub import Hub
from uartlab.streams import Event, Record

HISTORY_S = 30.0          # what a window attached mid-run shows of the past: its plots' longest span
QUEUE_ITEMS = 20_000      # est.: 2 s of every stream at the twin's rates, ~20 x what the thread lags
RECENT_EVENTS = 500       # a run's phase, trial and operator events for its last minutes


class History:
    def __init__(self, hub: Hub, span_s: float = HISTORY_S):
        self.hub, self.span_s = hub, span_s
        self._records: dict[str, deque[Record]] = {}
        self._lock = threading.Lock()
        self._sub = hub.subscribe("history", None, maxsize=QUEUE_ITEMS)
        self._thread = threading.Thread(target=self._run, name="core-history", daemon=True)

    def start(self) -> History:
        self._thread.start()
        return self

    def _run(self) -> None:
        while (item := self._sub.get(timeout_s=None)) is not None:
            if isinstance(item, Event) or len(item) == 0:
                continue
            with self._lock:
                kept = self._records.setdefault(item.stream, deque())
                kept.append(item)
                oldest = float(item.host_time_s[-1]) - self.span_s
                while kept and float(kept[0].host_time_s[-1]) < oldest:
                    kept.popleft()

    def snapshot(self) -> tuple[list[Record], list[Event]]:
        """One Record per stream (the last ``span_s``) and the most recent events, oldest first."""
        now = time.monotonic()
        with self._lock:
            kept = {name: list(records) for name, records in self._records.items()}
        records = []
        for records_of_stream in kept.values():
            fresh = [r for r in records_of_stream if float(r.host_time_s[-1]) >= now - self.span_s]
            if fresh:
                records.append(Record.concatenate(fresh))
        return records, self.hub.recent_events()[-RECENT_EVENTS:]

    def close(self) -> None:
        self._sub.close()
        self._thread.join(timeout=2)
