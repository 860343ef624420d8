"""Device clocks onto the host's monotonic time base: offset and drift per device, and tick unwrapping.

Each stream thread of the rig (app/rig/rig.py) feeds its device's (device clock in s, host time the sample
reached us) pairs to one ``ClockSync``. host = offset + device + latency, latency >= 0, so the *smallest*
host - device seen is the tightest bound. Observations are binned by device time (1 s bins, the last 120
kept) and each bin keeps its minimum-latency point: the lower envelope, free of scheduling and USB/network
delays. A least-squares line host = a + b * device through those envelope points gives offset and drift
(b - 1); until they span 10 s the drift is taken as 0 (two close points would give a wild slope) and the
offset is the envelope minimum. The twin's device clocks follow the plant clock (``rate``: its speed), so
only real drift is left to fit. ``TickUnwrap`` turns the MX-64's wrapping Realtime Tick into a running count.
"""

from __future__ import annotations

import math
import threading
from collections import deque
from dataclasses import dataclass

import numpy as np
from uartlab.drivers.mx64 import REALTIME_TICK_WRAP


@dataclass(frozen=True)
class ClockEstimate:
    device: str
    offset_s: float          # host - device at the newest device time
    drift_ppm: float         # (b - 1) * 1e6: + = the device clock runs slow against the host
    points: int              # envelope points the fit used
    span_s: float            # device time they span
    latency_floor_s: float   # mean envelope latency above the fitted line (how tight the envelope is)


class ClockSync:
    """Minimum-latency envelope + least squares; see the module docstring."""

    def __init__(self, device: str, bin_s: float = 1.0, bins: int = 120, min_span_s: float = 10.0,
                 rate: float = 1.0):
        """``rate``: the device clock's nominal seconds per host second - 1 for hardware; a twin run at N x
        speed keeps plant time, N. The fit then only has the real drift (ppm) to find, not a factor."""
        self.device, self.bin_s, self.min_span_s, self.rate = device, bin_s, min_span_s, rate
        self._bins: deque[list[float]] = deque(maxlen=bins)   # [bin index, device_s, host_s]
        self._lock = threading.Lock()
        self._fit = (math.nan, 0.0, 0.0)    # (a, c, d_mean): host = d + a + c * (d - d_mean)

    def reset(self) -> None:
        """Forget every observation (the device clock restarted); the next ones set the offset again."""
        with self._lock:
            self._bins.clear()
            self._fit = (math.nan, 0.0, 0.0)

    def observe(self, device_s: float, host_s: float) -> None:
        device_s = device_s / self.rate
        k = math.floor(device_s / self.bin_s)
        with self._lock:
            last = self._bins[-1] if self._bins else None
            if last is not None and last[0] == k:
                if host_s - device_s < last[2] - last[1]:
                    last[1], last[2] = device_s, host_s
                return
            self._bins.append([k, device_s, host_s])
            self._refit()

    def _refit(self) -> None:
        d = np.array([b[1] for b in self._bins])
        r = np.array([b[2] - b[1] for b in self._bins])
        if len(d) >= 3 and d[-1] - d[0] >= self.min_span_s:
            d_mean = float(d.mean())
            c, a = np.polyfit(d - d_mean, r, 1)
            self._fit = (float(a), float(c), d_mean)
        else:
            self._fit = (float(r.min()), 0.0, 0.0)

    def to_host(self, device_s: float | np.ndarray) -> float | np.ndarray:
        """The host monotonic time of a device clock reading."""
        a, c, d_mean = self._fit
        device_s = np.asarray(device_s) / self.rate if self.rate != 1.0 else device_s
        return device_s + a + c * (np.asarray(device_s) - d_mean)

    def estimate(self) -> ClockEstimate:
        with self._lock:
            a, c, d_mean = self._fit
            pts = [(b[1], b[2]) for b in self._bins]
        if not pts:
            return ClockEstimate(self.device, math.nan, 0.0, 0, 0.0, math.nan)
        d = np.array([p[0] for p in pts])
        h = np.array([p[1] for p in pts])
        fitted = d + a + c * (d - d_mean)
        return ClockEstimate(self.device, float(fitted[-1] - d[-1]), c * 1e6, len(pts), float(d[-1] - d[0]),
                             float(np.mean(h - fitted)))


class TickUnwrap:
    """Realtime Tick (ms, wraps at 32768) -> a continuous device time in s."""

    def __init__(self, wrap: int = REALTIME_TICK_WRAP):
        self.wrap, self._turns = wrap, 0
        self._last: int | None = None

    def __call__(self, tick_ms: int) -> float:
        if self._last is not None and tick_ms < self._last - self.wrap // 2:
            self._turns += 1
        self._last = tick_ms
        return (self._turns * self.wrap + tick_ms) * 1e-3


# ------------------------------------------------------------------ one device stream
