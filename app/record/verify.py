"""Is a session file whole, and if not, what did a crash leave? ``verify(path)`` -> ``VerifyReport``.

Completeness is checked against what the file declares: its schema (one of the writer's ``KNOWN_SCHEMAS``),
the streams the recorder listed before its first sample (``/streams`` attribute ``declared``), each stream's
fields (its ``fields`` attribute), and the datasets every session has (the writer's ``SESSION_DATASETS``:
the events and trials tables, the rig's TOML, the wall-clock anchor). Each problem is
one line naming the dataset. The report's exit code is `uartlab verify`'s (app/cli/verify.py): 0 a clean close
with no problem, 1 readable but not closed cleanly or with problems (the data up to the last flush is there),
2 unreadable, not a session file, or a schema this version does not know. ``repair`` (app/record/repair.py)
writes a clean copy of what is readable.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import h5py
import numpy as np
from uartlab.app.record.integrity import Damage, readable_rows, scan
from uartlab.app.record.player import SCHEMA_PREFIX, _open_hdf5, _text, stream_layout_problems, unknown_schema
from uartlab.app.record.writer import CLOCK, KNOWN_SCHEMAS, SESSION_DATASETS, TRIAL_FIELDS, trial_group_name
from uartlab.errors import InputFileError
from uartlab.streams import HOST_TIME

EXIT_CLEAN, EXIT_INCOMPLETE, EXIT_UNREADABLE = 0, 1, 2
EVENT_FIELDS = (HOST_TIME, "kind", "source", "message")


@dataclass
class StreamReport:
    name: str
    samples: int                    # whole samples: the shortest of the stream's datasets
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
    repaired_from: str = ""                 # a copy `verify --repair` wrote: the file it was made from
    repair_notes: str = ""                  # ...and what it lost
    flush_interval_s: float | None = None   # the recorder's, from the file's attribute
    damage: list[Damage] = field(default_factory=list)   # what could not be read (each also a problem line)

    @property
    def exit_code(self) -> int:
        if not self.readable:
            return EXIT_UNREADABLE
        return EXIT_CLEAN if self.complete and not self.problems else EXIT_INCOMPLETE


def verify(path: str | os.PathLike) -> VerifyReport:
    """Open the file, check it against its declarations, and say plainly what state it is in."""
    path = os.fspath(path)
    try:
        f = _open_hdf5(path)
    except InputFileError as exc:  # missing, a folder, not HDF5: it names the path
        r = VerifyReport(path, readable=False)
        r.summary = " ".join(str(exc).split())
        return r
    with f:
        r = VerifyReport(path, readable=True, schema=_text(f.attrs.get("schema", "")))
        if r.schema not in KNOWN_SCHEMAS:
            r.readable = False
            r.summary = (unknown_schema(path, r.schema) if r.schema.startswith(SCHEMA_PREFIX) else
                         f"{path}: not a uartlab session file (schema attribute {r.schema!r}, expected "
                         f"{SCHEMA_PREFIX}N)")
            return r
        r.complete = bool(f.attrs.get("complete", 0))
        r.repaired_from = _text(f.attrs.get("repaired_from", ""))
        r.repair_notes = _text(f.attrs.get("repair_notes", ""))
        interval = f.attrs.get("flush_interval_s")
        r.flush_interval_s = float(interval) if interval is not None else None
        damage = r.damage = scan(f)
        try:
            _check_streams(f, r)
            span = _span_s(r)
            _check_events(f, r)
            _check_trials(f, r, span)
            # The first layout has no wall-clock anchor; the tables are checked above.
            r.problems += [f"/{where}: missing (every session has one)" for where in SESSION_DATASETS
                           if where not in f and where not in ("events", "trials/table")
                           and not (where == CLOCK and r.schema == KNOWN_SCHEMAS[0])]
        except (OSError, KeyError, ValueError, TypeError) as exc:   # a damaged object inside a readable file
            if not damage:   # else the scan's lines below say what and where
                r.problems.append(f"unreadable data: {' '.join(str(exc).split())}")
        r.problems += [str(d) for d in damage]
    r.summary = _summary(r)
    return r


def _check_streams(f: h5py.File, r: VerifyReport) -> None:
    if "streams" not in f:
        r.problems.append("/streams: missing (every session has its streams there)")
        return
    streams = f["streams"]
    declared = [_text(n) for n in streams.attrs.get("declared", [])]
    if "declared" not in streams.attrs and r.schema != KNOWN_SCHEMAS[0]:   # the first layout has no such list
        r.problems.append("/streams: no 'declared' attribute: which streams the session had cannot be checked")
    r.problems += [f"/streams/{name}: missing (the session declared it)" for name in declared if name not in streams]
    for name, g in streams.items():
        if not isinstance(g, h5py.Group):
            r.problems.append(f"/streams/{name}: not a stream (a group of datasets)")
            continue
        if declared and name not in declared:
            r.problems.append(f"/streams/{name}: not one of the declared streams ({', '.join(declared)})")
        r.streams.append(_check_stream(name, g))
        r.problems += r.streams[-1].problems


def _check_stream(name: str, g: h5py.Group) -> StreamReport:
    where = f"/streams/{name}"
    problems = [] if "fields" in g.attrs else [f"{where}: no 'fields' attribute: its fields cannot be checked"]
    problems += stream_layout_problems(name, g)
    lengths = {k: int(d.shape[0]) for k, d in g.items() if isinstance(d, h5py.Dataset) and d.shape}
    n = min(lengths.values(), default=0)
    host = g.get(HOST_TIME)
    t = readable_rows(host, n) if HOST_TIME in lengths and host.ndim == 1 and host.dtype.kind == "f" else np.empty(0)
    if len(set(lengths.values())) > 1:
        # A crash in the middle of a flush: the rows beyond the shortest dataset are partial samples.
        longest = max(lengths, key=lengths.__getitem__)
        problems.append(f"{where}: dataset lengths differ ({', '.join(f'{k} {v}' for k, v in lengths.items())}): "
                        f"{n} samples are whole, {lengths[longest] - n} partial rows beyond them")
    if t.size > 1 and np.any(np.diff(t) < 0):
        problems.append(f"{where}/{HOST_TIME}: goes backwards at {int(np.count_nonzero(np.diff(t) < 0))} place(s)")
    problems += [f"{where}/{k}: no units attribute" for k, d in g.items()
                 if isinstance(d, h5py.Dataset) and "units" not in d.attrs]
    return StreamReport(name, n, float(t[0]) if t.size else None, float(t[-1]) if t.size else None, lengths, problems)


def _span_s(r: VerifyReport) -> tuple[float, float]:
    firsts = [s.first_s for s in r.streams if s.first_s is not None]
    lasts = [s.last_s for s in r.streams if s.last_s is not None]
    return (min(firsts), max(lasts)) if firsts else (np.nan, np.nan)


def _table(f: h5py.File, where: str, names: tuple[str, ...], r: VerifyReport) -> np.ndarray | None:
    if where not in f:
        r.problems.append(f"/{where}: missing (every session has one, empty if nothing happened)")
        return None
    d = f[where]
    have = d.dtype.names if isinstance(d, h5py.Dataset) else None
    if have is None or set(names) - set(have):
        r.problems.append(f"/{where}: not the session's table (columns {', '.join(names)})")
        return None
    return readable_rows(d)


def _check_events(f: h5py.File, r: VerifyReport) -> None:
    rows = _table(f, "events", EVENT_FIELDS, r)
    if rows is None:
        return
    r.n_events = len(rows)
    if r.n_events:
        e = rows[-1]
        r.last_event = (f"{_text(e['kind'])}/{_text(e['source'])} at t={float(e[HOST_TIME]):.3f} s: "
                        f"{_text(e['message'])}")
    bad = int(np.count_nonzero(~np.isfinite(rows[HOST_TIME])))
    if bad:
        r.problems.append(f"/events: {bad} event(s) without a finite {HOST_TIME}")


def _check_trials(f: h5py.File, r: VerifyReport, span: tuple[float, float]) -> None:
    rows = _table(f, "trials/table", TRIAL_FIELDS, r)
    if rows is None:
        return
    r.n_trials = len(rows)
    event_times = readable_rows(f["events"])[HOST_TIME] if "events" in f and r.n_events else np.empty(0)
    # The session's span: its samples and events. A trial row is flushed with the samples of its flush, so a
    # crashed file's last trial may start up to one flush interval after its last sample.
    slack_s = r.flush_interval_s if r.flush_interval_s is not None and np.isfinite(r.flush_interval_s) else 1.0
    lo = np.nanmin([span[0], *event_times]) - slack_s if np.isfinite(span[0]) or len(event_times) else -np.inf
    hi = np.nanmax([span[1], *event_times]) + slack_s if np.isfinite(span[1]) or len(event_times) else np.inf
    for i, row in enumerate(rows):
        where = f"/trials/table row {i} (trial {int(row['index'])} {_text(row['name'])!r})"
        start, stop = float(row["start_host_time_s"]), float(row["stop_host_time_s"])
        if int(row["index"]) != i + 1:
            r.problems.append(f"{where}: index {int(row['index'])}, expected {i + 1}")
        if not np.isfinite(start) or not lo <= start <= hi:
            r.problems.append(f"{where}: start {start:.3f} s is outside the session ({lo + slack_s:.3f} to "
                              f"{hi - slack_s:.3f} s)")
        if np.isnan(stop):
            if r.complete or i != len(rows) - 1:   # only a crash leaves one running, and only the last
                r.problems.append(f"{where}: never stopped (stop_host_time_s is NaN)")
        elif stop < start:
            r.problems.append(f"{where}: stops at {stop:.3f} s, before its start {start:.3f} s")
        elif not stop <= hi:
            r.problems.append(f"{where}: stop {stop:.3f} s is after the session's end ({hi - slack_s:.3f} s)")
    if r.complete:
        _check_trial_groups(f, rows, r)


def _check_trial_groups(f: h5py.File, rows: np.ndarray, r: VerifyReport) -> None:
    """A clean close writes one /trials/NNNN_<name> group per table row."""
    expected = {trial_group_name(int(row["index"]), _text(row["name"])): int(row["index"]) for row in rows}
    names = set(f["trials"])            # a group that cannot be opened is still named here (scan: damaged)
    groups = {k for k in names if isinstance(f["trials"].get(k), h5py.Group)}
    r.problems += [f"/trials/{k}: missing (the clean close writes one group per row of /trials/table)"
                   for k in sorted(set(expected) - names)]
    r.problems += [f"/trials/{k}: no row of /trials/table has this trial" for k in sorted(groups - set(expected))]
    for k in sorted(set(expected) & groups):
        if int(f["trials"][k].attrs.get("index", -1)) != expected[k]:
            r.problems.append(f"/trials/{k}: attribute index {f['trials'][k].attrs.get('index')}, "
                              f"the table says {expected[k]}")


def _summary(r: VerifyReport) -> str:
    per_stream = ", ".join(f"{s.name} {s.samples}" + (f" up to t={s.last_s:.3f} s" if s.last_s is not None else "")
                           for s in r.streams) or "no streams"
    if r.complete:
        head = "clean close" + (f", {len(r.problems)} problem(s)" if r.problems else "")
    elif r.repaired_from:
        head = (f"repaired copy of {r.repaired_from} (every HDF5 reader opens it as it is); that recording was not "
                "closed cleanly: samples up to its last flush are here")
    else:
        head = ("not closed cleanly (the recorder was killed, crashed or stopped on an error such as a full disk): "
                "samples up to the last flush are kept")
    lines = [f"{r.path}: {head}", f"  samples per stream: {per_stream}",
             f"  events: {r.n_events}" + (f", last event {r.last_event}" if r.last_event else ""),
             f"  trials: {r.n_trials}"]
    if r.complete and r.repaired_from:
        lines.append(f"  repaired copy of {r.repaired_from}: {r.repair_notes}")
    lines += [f"  problem: {p}" for p in r.problems]
    if not r.complete and not r.repaired_from:
        lines.append("  uartlab and h5py (swmr=True) read it as it is; for MATLAB or h5dump: "
                     "uartlab verify --repair FILE writes a clean copy")
    return "\n".join(lines)
