"""What of a session file can still be read: every object opened, every chunk read through its filters.

The writer gives each stream chunk a Fletcher-32 checksum (``StreamStorage``), so a flipped bit on an old
disk, a bad sector or a copy gone wrong shows up as a chunk HDF5 refuses to hand back. Opening a file reads
none of that: a file can open, list every stream and still fail halfway through a replay or a comparison.
``scan(f)`` reads it all, one chunk at a time (memory stays at one chunk), and says which rows of which
dataset, and which objects, cannot be read. ``verify`` reports them; ``repair`` leaves them out of its copy.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import h5py
import numpy as np

# What HDF5 says of a chunk whose checksum or decompression fails, in the words an operator can act on.
DAMAGED_BYTES = "a chunk fails its checksum or decompression"


@dataclass(frozen=True)
class Damage:
    where: str                       # the object's path in the file
    rows: tuple[int, int] | None     # [start, stop) rows of a dataset that cannot be read; None: the object
    reason: str

    def __str__(self) -> str:
        if self.rows is None:
            return f"{self.where}: damaged, cannot be opened ({self.reason})"
        start, stop = self.rows
        return f"{self.where}: rows {start}-{stop - 1} damaged ({self.reason})"


def scan(f: h5py.Group) -> list[Damage]:
    """Every object under ``f`` opened and every dataset read: what could not be, in file order."""
    found: list[Damage] = []
    for name in f:
        where = f"{f.name.rstrip('/')}/{name}"
        try:
            obj = f[name]
        except (KeyError, OSError, ValueError) as exc:   # a header or B-tree node damaged
            found.append(Damage(where, None, " ".join(str(exc).split())))
            continue
        if isinstance(obj, h5py.Group):
            found += scan(obj)
        elif isinstance(obj, h5py.Dataset):
            found += [Damage(where, rows, DAMAGED_BYTES) for rows in unreadable_rows(obj)]
    return found


def unreadable_rows(d: h5py.Dataset) -> list[tuple[int, int]]:
    """[start, stop) ranges of rows (first axis) that cannot be read, adjacent ranges merged."""
    if not d.shape:                  # a scalar: a configuration text
        return [] if _reads(d, ()) else [(0, 1)]
    if d.size == 0:
        return []
    if d.chunks is None:             # contiguous: no filter, read whole
        return [] if _reads(d, slice(None)) else [(0, d.shape[0])]
    ranges: list[tuple[int, int]] = []
    for selection in d.iter_chunks():
        if _reads(d, selection):
            continue
        start, stop = selection[0].start, selection[0].stop
        if ranges and ranges[-1][1] >= start:
            ranges[-1] = (ranges[-1][0], max(stop, ranges[-1][1]))
        else:
            ranges.append((start, stop))
    return ranges


def readable_rows(d: h5py.Dataset, n: int | None = None) -> np.ndarray:
    """The first ``n`` rows (all) that can be read, the damaged ones left out."""
    n = d.shape[0] if n is None else min(n, d.shape[0])
    try:
        return d[:n]
    except OSError:
        spans = keep_spans(n, unreadable_rows(d))
        return np.concatenate([d[a:b] for a, b in spans]) if spans else np.empty((0, *d.shape[1:]), d.dtype)


def keep_spans(n: int, damaged: list[tuple[int, int]], start: int = 0) -> list[tuple[int, int]]:
    """The [start, stop) spans of rows ``start``..n outside the damaged [start, stop) ranges."""
    spans, at = [], start
    for lo, hi in sorted(damaged):
        if lo > at:
            spans.append((at, min(lo, n)))
        at = max(at, hi)
    if at < n:
        spans.append((at, n))
    return [(a, b) for a, b in spans if b > a]


# A file still being written (SWMR) may have a chunk rewritten under the read: its checksum then fails once.
# Damage stays; a rewrite is over within the writer's flush (milliseconds).
LIVE_RETRIES = 3
LIVE_RETRY_S = 0.05


def read(d: h5py.Dataset, selection=slice(None), live: bool = False):
    """``d[selection]``; in a file being written a failed read is tried again (LIVE_RETRIES) before it counts
    as damage (the OSError is raised)."""
    for _ in range(LIVE_RETRIES if live else 0):
        try:
            return d[selection]
        except OSError:
            time.sleep(LIVE_RETRY_S)
            d.refresh()
    return d[selection]


def _reads(d: h5py.Dataset, selection) -> bool:
    try:
        read(d, selection, live=d.file.swmr_mode)
    except OSError:
        return False
    return True
