"""The one fixed-rate loop helper: every loop that paces itself (the control loop, the rig's actuator
thread, the mocap twin's frames, the joint stream, the benches) waits on a `FixedRate`.

    pace = FixedRate(0.005, sleep=stop.wait)   # 200 Hz; a stop event's wait ends the sleep at once
    while not stop.is_set():
        work()
        tick = pace.wait()                      # tick.late_s, tick.missed

Deadlines are ``start + k * period_s`` (drift-free: a slow iteration does not shift the ones after it).
A wait that finds its deadline passed returns at once; when it is more than ``max_late_s`` past (one
period unless told), the deadlines missed are skipped and counted rather than run back to back, so after
a stall the loop resumes on its grid instead of bursting to catch up. ``max_late_s=math.inf`` never skips
(a bench that must deliver every block). Clock and sleep are injectable, so tests need no real time.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import NamedTuple


class Tick(NamedTuple):
    """What one `FixedRate.wait` found: how late the deadline it returned for was, and how many it skipped."""

    late_s: float
    missed: int


class FixedRate:
    """Deadlines every ``period_s`` from ``start_s`` (construction unless given); `wait` sleeps until the next."""

    def __init__(self, period_s: float, *, max_late_s: float | None = None, start_s: float | None = None,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], object] = time.sleep):
        if not period_s > 0 or not math.isfinite(period_s):
            raise ValueError(f"a fixed rate needs a finite period > 0 s, got {period_s}")
        self.period_s = period_s
        self.max_late_s = period_s if max_late_s is None else max_late_s
        self._clock, self._sleep = clock, sleep
        self.start_s = clock() if start_s is None else start_s  # a time on ``clock``: several loops on one grid
        self.ticks = 0          # deadlines passed so far, the skipped ones included
        self.missed = 0         # deadlines skipped so far

    @property
    def deadline_s(self) -> float:
        """The deadline the next `wait` returns at (before any skipping)."""
        return self.start_s + (self.ticks + 1) * self.period_s

    def wait(self) -> Tick:
        """Sleep until the next deadline (at once if it has passed); skip and count missed ones."""
        now = self._clock()
        late_s = now - self.deadline_s
        missed = 0
        if late_s > self.max_late_s:
            missed = int(late_s // self.period_s)
            self.ticks += missed
            self.missed += missed
            late_s = now - self.deadline_s
        self.ticks += 1
        if late_s < 0:
            self._sleep(-late_s)
            return Tick(0.0, missed)
        return Tick(late_s, missed)
