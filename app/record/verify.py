"""Is a session file whole, and if not, what did a crash leave? ``verify(path)`` -> ``VerifyReport``.

The report's exit code is `uartlab verify`'s (app/cli/verify.py): 0 clean close, 1 not closed cleanly but
readable (the data up to the last flush is there), 2 unreadable or not a session file.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field

import numpy as np
from uartlab.app.record.player import SessionFile
from uartlab.app.record.writer import KNOWN_SCHEMAS
from uartlab.errors import InputFileError

EXIT_CLEAN, EXIT_INCOMPLETE, EXIT_UNREADABLE = 0, 1, 2


@dataclass
class StreamReport:
    name: str
    samples: int
    first_s: float | None
    last_s: float | None
    dataset_lengths: dict[str, int]
    problems: list[str] = field(default_factory=list)


@dataclass
class VerifyReport:
    path: str
    readable: bool
    complete: bool = False
    schema: str = ""
    streams: list[StreamReport] = field(default_factory=list)
    n_events: int = 0
    last_event: str = ""
    n_trials: int = 0
    problems: list[str] = field(default_factory=list)
    summary: str = ""

    @property
    def exit_code(self) -> int:
        if not self.readable:
            return EXIT_UNREADABLE
        return EXIT_CLEAN if self.complete and not self.problems else EXIT_INCOMPLETE


def verify(path: str | os.PathLike) -> VerifyReport:
    """Open the file, check its structure and data, and say plainly what state it is in."""
    path = os.fspath(path)
    try:
        sf = SessionFile(path)
    except InputFileError as exc:  # missing, a folder, not HDF5, another program's file: it names the path
        r = VerifyReport(path, readable=False)
        r.summary = " ".join(str(exc).split())
        return r
    with sf:
        r = VerifyReport(path, readable=True, complete=sf.complete, schema=str(sf.metadata.get("schema", "")))
        if r.schema not in KNOWN_SCHEMAS:
            r.readable = False
            r.summary = f"{path}: not a uartlab session file this version reads (schema {r.schema!r}, expected " \
                        f"one of {', '.join(KNOWN_SCHEMAS)})"
            return r
        try:
            _check_streams(sf, r)
            events = sf.events()
            r.n_events = len(events)
            if events:
                e = events[-1]
                r.last_event = f"{e.kind}/{e.source} at t={e.host_time_s:.3f} s: {e.message}"
            r.n_trials = len(sf.trials())
        except (OSError, KeyError, ValueError) as exc:
            r.problems.append(f"unreadable data: {exc}")
    r.summary = _summary(r)
    return r


def _check_streams(sf: SessionFile, r: VerifyReport) -> None:
    for name, spec in sf.streams.items():
        g = sf._file["streams"][name]
        lengths = {k: int(d.shape[0]) for k, d in g.items()}
        n = min(lengths.values())
        t = sf.host_times(name)
        s = StreamReport(name, n, float(t[0]) if n else None, float(t[-1]) if n else None, lengths)
        missing = {f.name for f in spec.fields} - set(lengths)
        if missing:
            s.problems.append(f"missing datasets {sorted(missing)}")
        if len(set(lengths.values())) > 1:
            # Only a crash in the middle of a flush does this: the rows beyond the shortest are partial.
            s.problems.append(f"dataset lengths differ {lengths}; {n} samples are whole")
        if n > 1 and np.any(np.diff(t) < 0):
            s.problems.append(f"host_time_s goes backwards at {int(np.argmax(np.diff(t) < 0)) + 1} place(s)")
        for k, d in g.items():
            if "units" not in d.attrs:
                s.problems.append(f"{k} has no units attribute")
        r.streams.append(s)
        r.problems.extend(f"stream {name}: {p}" for p in s.problems if not p.startswith("dataset lengths"))


def _summary(r: VerifyReport) -> str:
    per_stream = ", ".join(f"{s.name} {s.samples}" + (f" up to t={s.last_s:.3f} s" if s.samples else "")
                           for s in r.streams) or "no streams"
    if r.complete:
        head = "clean close"
    else:
        head = ("not closed cleanly (the recorder was killed, crashed or stopped on an error such as a full disk): "
                "samples up to the last flush are kept")
    lines = [f"{r.path}: {head}", f"  samples per stream: {per_stream}",
             f"  events: {r.n_events}" + (f", last event {r.last_event}" if r.last_event else ""),
             f"  trials: {r.n_trials}"]
    lines += [f"  problem: {p}" for p in r.problems]
    if not r.complete:
        hint = "h5clear -s FILE" if shutil.which("h5clear") else "h5clear -s FILE (package hdf5-tools)"
        lines.append(f"  uartlab and h5py (swmr=True) read it as it is; for MATLAB or h5dump first run {hint}")
    return "\n".join(lines)
