"""FixedRate on an injected clock: deadlines on a grid, late ones run at once, stalls skipped and counted."""

from __future__ import annotations

import math

import pytest
from uartlab.pacing import FixedRate, Tick


class FakeClock:
    """A clock that moves only when the loop sleeps or the test says work took time."""

    def __init__(self, now_s: float = 100.0):
        self.now_s = now_s
        self.slept_s: list[float] = []

    def __call__(self) -> float:
        return self.now_s

    def sleep(self, seconds: float) -> None:
        self.slept_s.append(seconds)
        self.now_s += seconds


def _rate(clock: FakeClock, period_s: float = 0.01, **kwargs) -> FixedRate:
    return FixedRate(period_s, clock=clock, sleep=clock.sleep, **kwargs)


def test_sleeps_to_each_deadline_without_drift():
    clock = FakeClock()
    pace = _rate(clock)
    for k in range(1, 101):
        clock.now_s += 0.003  # the work
        assert pace.wait() == Tick(0.0, 0)
        assert clock.now_s == pytest.approx(100.0 + k * 0.01, abs=1e-12)
    assert pace.ticks == 100 and pace.missed == 0
    assert clock.slept_s[-1] == pytest.approx(0.007)


def test_a_late_deadline_returns_at_once_and_the_grid_holds():
    clock = FakeClock()
    pace = _rate(clock)
    clock.now_s += 0.015  # half a period past the first deadline
    tick = pace.wait()
    assert tick.missed == 0 and tick.late_s == pytest.approx(0.005) and clock.slept_s == []
    pace.wait()  # the next deadline is still start + 2 periods
    assert clock.now_s == pytest.approx(100.02)


def test_a_stall_skips_and_counts_the_missed_deadlines():
    clock = FakeClock()
    pace = _rate(clock)
    clock.now_s += 0.0555  # deadlines at +10, +20, +30, +40, +50 ms have passed
    tick = pace.wait()
    assert tick.missed == 4 and tick.late_s == pytest.approx(0.0055) and pace.missed == 4
    assert pace.wait() == Tick(0.0, 0) and clock.now_s == pytest.approx(100.06)


def test_max_late_sets_when_skipping_starts():
    clock = FakeClock()
    pace = _rate(clock, max_late_s=1.0)
    clock.now_s += 0.5  # late, not yet a stall: no skip, the next waits return at once
    assert pace.wait().missed == 0 and pace.wait().late_s == pytest.approx(0.48)
    clock.now_s += 2.005  # now 2.505 s in; the third deadline (+30 ms) is 2.475 s past
    tick = pace.wait()
    assert tick.missed == 247 and tick.late_s == pytest.approx(0.005)


def test_infinite_max_late_never_skips():
    clock = FakeClock()
    pace = _rate(clock, max_late_s=math.inf)
    clock.now_s += 10.0
    assert [pace.wait().missed for _ in range(5)] == [0] * 5 and pace.ticks == 5


@pytest.mark.parametrize("period_s", [0.0, -1.0, math.inf, math.nan])
def test_a_period_that_is_not_positive_and_finite_is_refused(period_s):
    with pytest.raises(ValueError, match="period"):
        FixedRate(period_s)
