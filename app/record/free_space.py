"""Pre-flight for a recording: is there room on the disk for the session about to start?

The estimate is deliberately plain: the streams' own declarations (every field's bytes per sample, times
the stream's nominal rate, plus 8 bytes of host time) times the seconds the session is expected to last,
plus what the recorder keeps in reserve (it stops a flush that would leave less than one chunk per dataset
free: writer.py ``_check_free_space``) and a few MB for the file's metadata, events and embedded texts.

Seconds are protocol seconds. On hardware those are wall seconds; on a twin running at speed s, the device
streams (DAQ, mocap) deliver s times faster in wall time, so protocol seconds x nominal rate counts them
right, and the host-paced streams (actuators, runner, model) are over-counted: the estimate errs high.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
from uartlab.app.record.writer import CHUNK_BYTES
from uartlab.errors import RecordingError
from uartlab.protocols.runner import DEFAULT_PRETENSION_TIMEOUT_S
from uartlab.protocols.suite import Suite
from uartlab.streams import StreamSpec

METADATA_BYTES = 8 * 1024 * 1024   # est.: chunk indexes, events, trials, the embedded rig/suite/calibration texts
OPEN_ENDED_WARN_S = 600.0          # a recording without an end: warn when less than 10 minutes fit


def bytes_per_second(specs: dict[str, StreamSpec]) -> float:
    """What the streams write per (protocol) second at their nominal rates."""
    total = 0.0
    for spec in specs.values():
        row = 8 + sum(np.dtype(f.dtype).itemsize * int(np.prod(f.shape, dtype=int)) for f in spec.fields)
        total += row * float(spec.nominal_rate_hz or 0.0)
    return total


def reserve_bytes(specs: dict[str, StreamSpec]) -> int:
    """Room the recorder needs besides the samples: a chunk per dataset (writer.py) and the metadata."""
    n_datasets = sum(1 + len(spec.fields) for spec in specs.values())
    return CHUNK_BYTES * n_datasets + METADATA_BYTES


def suite_seconds(suite: Suite) -> float:
    """The longest the suite runs without a fault: per trial and repeat, the pretension timeout, the pulls,
    the settle timeout and the return (as long as the pull). Most trials settle sooner: the estimate errs high."""
    total = 0.0
    for trial in suite.trials:
        pull_s = max((p.start_s + p.duration_s for p in trial.pulls), default=0.0)
        return_s = max((p.duration_s for p in trial.pulls), default=0.0) if trial.return_to_start else 0.0
        total += trial.repeats * (DEFAULT_PRETENSION_TIMEOUT_S + pull_s + suite.settle.timeout_s + return_s)
    return total


def check_free_space(folder: Path, specs: dict[str, StreamSpec], seconds: float | None) -> str | None:
    """Refuse (RecordingError, exit 3) when the folder's disk has less free space than the session's
    expected size plus the reserve; return a warning sentence when it has less than twice that size
    (an open-ended recording, ``seconds`` None: when less than 10 minutes fit); None when there is room."""
    folder = Path(folder)
    free = shutil.disk_usage(folder).free
    rate, reserve = bytes_per_second(specs), reserve_bytes(specs)
    expected = rate * (seconds or 0.0)
    if seconds is not None:
        what = f"{_size(expected)} for up to {seconds:g} s at {_size(rate)}/s, plus {_size(reserve)} of reserve"
    else:
        what = f"{_size(reserve)} the recorder keeps in reserve"
    if free < expected + reserve:
        raise RecordingError(f"{folder}: not enough free space to record: the session needs about "
                             f"{_size(expected + reserve)} ({what}), {_size(free)} is free; "
                             "free some space or record to another folder (--out)")
    if seconds is None:
        fits_s = (free - reserve) / rate if rate > 0 else float("inf")
        if fits_s < OPEN_ENDED_WARN_S:
            return (f"{folder}: {_size(free)} free: room for about {fits_s / 60:.1f} min of recording "
                    f"at {_size(rate)}/s")
        return None
    if free < 2 * expected + reserve:
        return (f"{folder}: {_size(free)} free, less than twice this session's expected {_size(expected + reserve)} "
                f"({what}): watch the disk")
    return None


def _size(n_bytes: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(n_bytes) >= scale:
            return f"{n_bytes / scale:.3g} {unit}"
    return f"{n_bytes:.0f} B"
