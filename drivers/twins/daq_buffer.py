"""USB-6210 twin: the PC-side buffer of a task, its every-N-samples registrations, what a read returns,
and the counters every task adds to."""

from __future__ import annotations

import queue
import threading
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np


@dataclass
class DaqStats:
    tasks_created: int = 0
    samples_produced: int = 0   # per channel (scans), summed over tasks
    overflows: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def count(self, name: str, n: int = 1) -> None:
        with self._lock:  # every task's acquisition thread counts into one DaqStats
            setattr(self, name, getattr(self, name) + n)


class SampleBuffer:
    """The PC-side circular buffer; positions count samples per channel since the task started."""

    def __init__(self, capacity: int, n_chan: int):
        self.data = np.zeros((capacity, n_chan))
        self.written = self.read_pos = 0

    @property
    def available(self) -> int:
        return self.written - self.read_pos

    def write(self, scans: np.ndarray) -> bool:
        """Append; False (and nothing written) when that would overwrite unread samples."""
        if self.available + len(scans) > len(self.data):
            return False
        self.data[(self.written + np.arange(len(scans))) % len(self.data)] = scans
        self.written += len(scans)
        return True

    def take(self, n: int) -> np.ndarray:
        out = self.data[(self.read_pos + np.arange(n)) % len(self.data)]
        self.read_pos += n
        return out


class EveryNSubscription:
    """One every-N-samples-acquired-into-buffer registration; its gRPC stream drains ``events``."""

    def __init__(self, n_samples: int):
        self.n_samples = self.next_at = n_samples
        self.events: queue.SimpleQueue[int | None] = queue.SimpleQueue()

    def close(self) -> None:
        self.events.put(None)  # ends the stream now rather than at its next poll


class DoneSubscription:
    """One done-event registration; its gRPC stream drains ``events``: the status each time the task
    finishes by itself (0 when a finite acquisition completes, the error code when an error stops it)."""

    def __init__(self) -> None:
        self.events: queue.SimpleQueue[int | None] = queue.SimpleQueue()

    def close(self) -> None:
        self.events.put(None)


@dataclass
class ReadBlock:
    """What one read returns, before it is laid out for a reply."""

    scans: np.ndarray     # (samples read, channels read) volts
    wanted: int           # samples per channel asked for: the reply's stride
    status: int           # 0, or -200284 when the timeout expired first
    t0: datetime          # UTC time of the first sample
    dt_s: float           # sample period; 0 for on-demand reads
