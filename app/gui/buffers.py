"""The GUI's data model: hub Records into fixed-size, preallocated ring buffers, decimated for display.

No Qt here: the buffers are plain numpy so the benchmark and the tests can drive them directly, and so
the memory they use is fixed when a channel is first seen (an hour of streaming costs what a minute does).

Why decimate on the way in: a plot is ~1000 pixels wide, so a 10 s window needs ~60 values per second
per curve. The USB-6210 can deliver 19.2 kHz per channel; keeping (and redrawing) every sample would cost
200x more memory and drawing time for nothing visible. Each bin of ``factor`` samples is kept as its min
and its max (peak-preserving, what pyqtgraph's "peak" downsampling does), so a spike of one sample still
shows. A stream at <= ``BINS_PER_S`` Hz is kept sample for sample.

Ring buffers are stored twice over (index i and i + capacity) so the newest ``n`` values are always one
contiguous slice: ``view()`` is free (no copy), and setData gets a plain array every frame.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from uartlab.app.rig.config import MAX_TWIN_SPEED
from uartlab.streams import Record, StreamSpec

WINDOW_S = 10.0            # the scrolling window operators see
BINS_PER_S = 60.0          # display resolution: ~17 ms bins, 600 per window: about one per pixel of a plot
MARGIN = 1.25              # capacity beyond the window: a stream faster than its nominal rate still fills it
# A stream faster than it declares (a twin rig at N x speed delivers N x its samples per host second) is
# binned N x coarser and its ring grows to keep the whole window, up to the twin's top speed.
MAX_GROWTH = int(MAX_TWIN_SPEED)
DEFAULT_RATE_HZ = 250.0    # a stream that declares no rate (Motive before it says): the fastest mocap rate
JUMP_BACK_S = 0.5          # time going back more than this (a replay seek, a new source) clears the buffers
GAP_S = 0.25               # samples further apart than this (and 5 periods) are not joined by a line: the live
                           # model between two trials, a stalled device


class Ring:
    """Fixed-size ring of (time, value columns) with min/max decimation on the way in."""

    def __init__(self, width: int, rate_hz: float, window_s: float = WINDOW_S, bins_per_s: float = BINS_PER_S):
        self.width = int(width)
        self.window_s = window_s
        self.factor = max(1, int(round(rate_hz / bins_per_s)))
        per_s = rate_hz if self.factor == 1 else 2.0 * rate_hz / self.factor  # min and max per bin
        self.capacity = int(math.ceil(per_s * window_s * MARGIN)) + 16
        self.most = self.capacity * MAX_GROWTH
        self._t = np.full(2 * self.capacity, np.nan)
        self._y = np.full((self.width, 2 * self.capacity), np.nan)  # one contiguous row per curve
        self._pend_t = np.empty(0)
        self._pend_y = np.empty((self.width, 0))
        self._w = 0
        self.n = 0
        self.last_t = -math.inf
        self.last_y = np.full(self.width, np.nan)  # the newest raw sample, for read-outs
        self.gap_s = max(GAP_S, 5.0 / rate_hz)

    def clear(self) -> None:
        self._t[:] = np.nan
        self._y[:] = np.nan
        self._pend_t = np.empty(0)
        self._pend_y = np.empty((self.width, 0))
        self._w = self.n = 0
        self.last_t = -math.inf
        self.last_y[:] = np.nan

    def extend(self, t: np.ndarray, y: np.ndarray) -> None:
        """Append samples: t (n,), y (n, width)."""
        if t.shape[0] == 0:
            return
        gaps = np.flatnonzero(np.diff(t) > self.gap_s)   # within a batch of records: each part on its own
        if gaps.size:
            y = np.asarray(y).reshape(t.shape[0], self.width)
            for part in np.split(np.arange(t.shape[0]), gaps + 1):
                self.extend(t[part], y[part])
            return
        y = np.asarray(y, dtype=float).reshape(t.shape[0], self.width).T
        if t[0] - self.last_t > self.gap_s and math.isfinite(self.last_t):   # a break in the curve, not a line
            self._pend_t, self._pend_y = np.empty(0), np.empty((self.width, 0))
            self._write(np.array([self.last_t]), np.full((self.width, 1), np.nan))
        self.last_t, self.last_y = float(t[-1]), y[:, -1].copy()
        if self.factor == 1:
            self._write(t, y)
            return
        if self._pend_t.size:  # the partial bin left by the previous block
            t = np.concatenate([self._pend_t, t])
            y = np.concatenate([self._pend_y, y], axis=1)
        f = self.factor
        nb = t.shape[0] // f
        self._pend_t, self._pend_y = t[nb * f:].copy(), y[:, nb * f:].copy()
        if nb == 0:
            return
        bins = y[:, : nb * f].reshape(self.width, nb, f)
        tb = t[: nb * f].reshape(nb, f)
        out_t = np.empty(2 * nb)
        out_t[0::2], out_t[1::2] = tb[:, 0], tb[:, -1]
        out_y = np.empty((self.width, 2 * nb))
        out_y[:, 0::2], out_y[:, 1::2] = bins.min(axis=2), bins.max(axis=2)
        self._write(out_t, out_y)

    def _write(self, t: np.ndarray, y: np.ndarray) -> None:
        if self.n + t.shape[0] > self.capacity and self.capacity < self.most:
            self._grow_if_short(float(t[-1]))
        m, cap = t.shape[0], self.capacity
        if m > cap:
            t, y, m = t[-cap:], y[:, -cap:], cap
        first = min(m, cap - self._w)  # up to the end of the first copy, then wrap
        for dst, src in ((self._w, slice(0, first)), (0, slice(first, m))):
            k = src.stop - src.start
            if k <= 0:
                continue
            self._t[dst:dst + k] = t[src]
            self._t[dst + cap:dst + cap + k] = t[src]
            self._y[:, dst:dst + k] = y[:, src]
            self._y[:, dst + cap:dst + cap + k] = y[:, src]
        self._w = (self._w + m) % cap
        self.n = min(self.n + m, cap)

    def _grow_if_short(self, newest_t: float) -> None:
        """Full with less than the window kept (the stream comes faster than declared): from here on the
        samples are binned as much coarser as they come faster, so a window is as many points to draw as
        declared, and the ring has room for those kept so far and a whole window more."""
        kept_t, kept_y = self.view()
        span_s = newest_t - kept_t[0] if self.n else 0.0
        if not 0 < span_s < self.window_s:
            return
        self.factor = int(math.ceil(self.factor * self.window_s / span_s))
        cap = min(self.n + self.capacity, self.most)
        t, y = kept_t.copy(), kept_y.copy()
        self._t = np.full(2 * cap, np.nan)
        self._y = np.full((self.width, 2 * cap), np.nan)
        self.capacity, self._w, self.n = cap, 0, 0
        self._write(t, y)

    def view(self) -> tuple[np.ndarray, np.ndarray]:
        """(t (n,), y (width, n)): every kept value, oldest first, as views into the ring (valid until the
        next ``extend``)."""
        end = self._w + self.capacity
        return self._t[end - self.n:end], self._y[:, end - self.n:end]

    @property
    def nbytes(self) -> int:
        return self._t.nbytes + self._y.nbytes


@dataclass(frozen=True)
class Channel:
    """What the GUI keeps of one field: (stream, field) and which of its flattened columns."""

    stream: str
    field: str
    columns: tuple[int, ...] | None = None  # None: all


class LiveData:
    """Hub Records -> one Ring per wanted (stream, field), created when the stream's spec is first known.

    ``want`` lists the channels the views draw; anything else in a Record is ignored (not copied). The
    same object takes records from the live rig's hub and from a ReplayRig's hub.
    """

    def __init__(self, want: Iterable[Channel], window_s: float = WINDOW_S, bins_per_s: float = BINS_PER_S):
        self.want: dict[tuple[str, str], Channel] = {(c.stream, c.field): c for c in want}
        self.window_s, self.bins_per_s = window_s, bins_per_s
        self.rings: dict[tuple[str, str], Ring] = {}
        self.specs: dict[str, StreamSpec] = {}
        self.samples: dict[str, int] = {}   # samples taken per stream since the last clear
        self.now_s = -math.inf              # newest host time seen on any stream: the plots' "0 s"
        self.version = 0                    # changes with every add/clear: the views redraw only then
        self.last_t: dict[str, float] = {}  # newest host time per stream

    @property
    def streams(self) -> list[str]:
        """The streams the views draw from: a live source need send no other."""
        return sorted({stream for stream, _ in self.want})

    def set_specs(self, specs: dict[str, StreamSpec]) -> None:
        """Forget every buffer and use these stream descriptors (a new source: rig or replay)."""
        self.specs = dict(specs)
        self.rings.clear()
        self.samples.clear()
        self.last_t.clear()
        self.now_s = -math.inf
        self.version += 1

    def clear(self) -> None:
        for ring in self.rings.values():
            ring.clear()
        self.samples.clear()
        self.last_t.clear()
        self.now_s = -math.inf
        self.version += 1

    def _ring(self, key: tuple[str, str], spec: StreamSpec) -> Ring | None:
        ring = self.rings.get(key)
        if ring is None:
            try:
                fspec = spec.field(key[1])
            except KeyError:
                return None
            full = int(np.prod(fspec.shape)) if fspec.shape else 1
            cols = self.want[key].columns
            width = full if cols is None else len(cols)
            rate = spec.nominal_rate_hz or DEFAULT_RATE_HZ
            ring = self.rings[key] = Ring(width, rate, self.window_s, self.bins_per_s)
        return ring

    def add(self, record: Record) -> None:
        self.add_all([record])

    def add_all(self, records: Iterable[Record]) -> None:
        """Records in the order they came: each stream's consecutive records are taken in as one block (the
        window drains dozens a frame; one ring write per channel a frame, not one per record)."""
        pending: dict[str, list[Record]] = {}
        for record in records:
            if record.stream not in self.specs or len(record) == 0:
                continue
            newest = float(record.host_time_s[-1])
            # A seek backwards: old curves would draw over the new ones. Judged per stream: streams may disagree
            # about "now" (a device clock sync running ahead) without any of them going back.
            if newest < self.last_t.get(record.stream, -math.inf) - JUMP_BACK_S:
                self._take(pending)
                pending = {}
                self.clear()
            self.last_t[record.stream] = newest
            pending.setdefault(record.stream, []).append(record)
        self._take(pending)

    def _take(self, pending: dict[str, list[Record]]) -> None:
        for stream, records in pending.items():
            spec = self.specs[stream]
            t = np.concatenate([np.asarray(r.host_time_s, dtype=float) for r in records])
            for (want_stream, name), chan in self.want.items():
                if want_stream != stream or name not in records[0].data:
                    continue
                ring = self._ring((stream, name), spec)
                if ring is None:
                    continue
                values = np.concatenate([np.asarray(r.data[name]).reshape(len(r), -1) for r in records])
                if chan.columns is not None:
                    values = values[:, list(chan.columns)]
                ring.extend(t, values)
            self.samples[stream] = self.samples.get(stream, 0) + len(t)
            self.now_s = max(self.now_s, float(t[-1]))
            self.version += 1

    def get(self, stream: str, field: str) -> Ring | None:
        return self.rings.get((stream, field))

    def latest(self, stream: str, field: str) -> np.ndarray | None:
        """The newest raw sample of a channel (not decimated), or None before the first."""
        ring = self.rings.get((stream, field))
        return None if ring is None or ring.n == 0 and not np.isfinite(ring.last_t) else ring.last_y

    @property
    def nbytes(self) -> int:
        return sum(r.nbytes for r in self.rings.values())
