"""`uartlab verify --repair`: a clean copy of what a session file holds, for tools that do not read SWMR files.

A file whose writer was killed still carries HDF5's "open for write" flag: uartlab and h5py (``swmr=True``)
read it, MATLAB and h5dump refuse it. The repaired copy is written from scratch without SWMR and closed, so
every HDF5 reader opens it as it is. It holds every object of the original (the configuration, every
stream, the events, the trials table, whatever else the file has) with each stream cut to its whole samples
(a crash in the middle of a flush leaves fields longer than ``host_time_s``), an empty events or trials table
where the original lost one, and the ``/trials/NNNN_<name>`` groups a clean close would have written.
``complete`` stays what it was (0: the recording did not end cleanly); ``repaired_from`` and ``repair_notes``
say where the copy comes from and what it lost. The original is never written.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import h5py
import numpy as np
from uartlab.app.record.integrity import DAMAGED_BYTES, Damage, keep_spans
from uartlab.app.record.player import _open_hdf5, _text
from uartlab.app.record.verify import verify
from uartlab.app.record.writer import (
    EVENT_DTYPE,
    LIBVER,
    TRIAL_DTYPE,
    TRIAL_FIELDS,
    _now_iso,
    built_whole,
    write_trial_groups,
)
from uartlab.errors import InputFileError
from uartlab.streams import HOST_TIME


@dataclass
class RepairReport:
    source: str
    out: str
    lost: list[str] = field(default_factory=list)   # one line per stream or table that lost something

    @property
    def summary(self) -> str:
        said = "; ".join(self.lost) if self.lost else ("every sample, event and trial the file holds is in the copy "
                                                         "(what came after its last flush was never on disk)")
        return f"{self.out}: clean copy of {self.source}: {said}"


def default_out(path: str | os.PathLike) -> Path:
    """``<name>.repaired.h5`` beside the original."""
    p = Path(path)
    return p.with_name(f"{p.stem}.repaired{p.suffix or '.h5'}")


def repair(path: str | os.PathLike, out: str | os.PathLike | None = None) -> RepairReport:
    """Write the clean copy to ``out`` (default ``default_out(path)``). InputFileError naming the file when
    it is not a session this uartlab reads, ``out`` is the original, or ``out`` exists (nothing is overwritten)."""
    path = os.fspath(path)
    report = verify(path)
    if not report.readable:
        raise InputFileError(f"cannot repair: {report.summary}")
    target = Path(out) if out is not None else default_out(path)
    if target.exists():
        same = target.resolve() == Path(path).resolve()
        raise InputFileError(f"{target}: " + ("is the file to repair; the copy goes to another name (-o OUT)" if same
                                              else "exists; give the copy another name (-o OUT)"))
    result = RepairReport(path, str(target))
    # the copy appears whole or not at all: the files close, then it is renamed into place
    with built_whole(target) as partial, _open_hdf5(path) as src, h5py.File(partial, "w", libver=LIBVER) as dst:
        _copy(src, dst, report.damage, result)
        dst.attrs["repaired_from"] = os.path.abspath(path)
        dst.attrs["repaired_time"] = _now_iso()
        dst.attrs["repair_notes"] = "; ".join(result.lost) or "nothing lost"
    return result


def _copy(src: h5py.File, dst: h5py.File, damage: list[Damage], result: RepairReport) -> None:
    """Every object of ``src`` into ``dst`` without the ``damage`` verify found (its chunks read once)."""
    dst.attrs.update(dict(src.attrs))
    for name in src:
        if name not in ("streams", "trials"):
            _copy_readable(src, dst, name, damage, result)
    streams = dst.create_group("streams")
    original = src.get("streams")
    declared: list[str] = []
    if isinstance(original, h5py.Group):
        streams.attrs.update(dict(original.attrs))
        declared = [_text(n) for n in original.attrs.get("declared", [])]
        for name in original:
            g = original.get(name)
            if not isinstance(g, h5py.Group):
                continue
            rate_hz = float(g.attrs.get("nominal_rate_hz", np.nan))
            unreadable = [d for d in damage if d.where.startswith(f"{g.name}/")]
            if unreadable:
                _copy_stream_without(g, streams, unreadable, rate_hz, result)
            else:
                src.copy(g, streams, name=name)
                _cut_to_whole_samples(streams[name], name, rate_hz, result)
    result.lost += [f"{n}: the whole stream (not in the file)" for n in declared if n not in streams]
    if "events" not in dst:
        dst.create_dataset("events", shape=(0,), maxshape=(None,), dtype=EVENT_DTYPE, chunks=(1024,))
        result.lost.append("events: the whole table (not in the file; the copy has an empty one)")
    trials = dst.create_group("trials")
    table = src.get("trials/table")
    if any(d.where == "/trials/table" for d in damage):
        table = None
        result.lost.append(f"trials: the table ({DAMAGED_BYTES})")
    if isinstance(table, h5py.Dataset) and table.dtype.names and not set(TRIAL_FIELDS) - set(table.dtype.names):
        src.copy(table, trials, name="table")
        rows = [{k: (_text(row[k]) if table.dtype[k].kind in "SOU" else row[k].item()) for k in TRIAL_FIELDS}
                for row in trials["table"][:]]
        running = [r for r in rows if np.isnan(r["stop_host_time_s"])]
        result.lost += [f"trial {r['index']} {r['name']!r}: ended by the crash (no stop time; its rows run to the "
                        "end of the data)" for r in running]
        write_trial_groups(dst, rows, [n for n in streams if HOST_TIME in streams[n]])
    else:
        trials.create_dataset("table", shape=(0,), maxshape=(None,), dtype=TRIAL_DTYPE, chunks=(64,))
        result.lost.append("trials: the whole table (not in the file or not a table of trials; the copy has an "
                           "empty one)")


def _copy_readable(src: h5py.Group, dst: h5py.Group, name: str, damage: list[Damage], result: RepairReport) -> None:
    """``src[name]`` into ``dst`` without what ``damage`` names: a damaged table keeps its readable rows, a
    damaged text or object is left out; each loss is said."""
    where = f"{src.name.rstrip('/')}/{name}"
    here = [d for d in damage if d.where == where or d.where.startswith(f"{where}/")]
    if not here:
        src.copy(src[name], dst, name=name)
        return
    if any(d.where == where and d.rows is None for d in here):
        result.lost.append(f"{where}: {here[0].reason}")
        return
    obj = src[name]
    if isinstance(obj, h5py.Group):
        group = dst.create_group(name)
        group.attrs.update(dict(obj.attrs))
        for child in obj:
            _copy_readable(obj, group, child, here, result)
    elif obj.shape:
        spans = keep_spans(obj.shape[0], [d.rows for d in here if d.rows is not None])
        _write_spans(obj, dst, name, spans, [])
        result.lost.append(f"{where}: {obj.shape[0] - _span_rows(spans)} rows ({DAMAGED_BYTES})")
    else:
        result.lost.append(f"{where}: its value ({DAMAGED_BYTES})")


def _copy_stream_without(g: h5py.Group, streams: h5py.Group, damage: list[Damage], rate_hz: float,
                         result: RepairReport) -> None:
    """A stream's whole samples without what its damaged chunks held. A sample whose time, or a value with
    no NaN (a count, a flag), is lost is dropped from every field, so each sample stays whole; a lost
    floating-point value is NaN in a sample kept."""
    name = g.name.rsplit("/", 1)[-1]
    out = streams.create_group(name)
    out.attrs.update(dict(g.attrs))
    members = {k: g.get(k) for k in g}
    gone = sorted(k for k, d in members.items() if not isinstance(d, h5py.Dataset))
    if gone and "fields" in out.attrs:   # the copy declares the fields it has
        out.attrs["fields"] = [f for f in out.attrs["fields"] if _text(f) not in gone]
    datasets = {k: d for k, d in members.items() if isinstance(d, h5py.Dataset) and d.shape}
    n = min((d.shape[0] for d in datasets.values()), default=0)
    lost = {k: [d.rows for d in damage if d.rows is not None and d.where == f"{g.name}/{k}"] for k in datasets}
    as_nan = {k for k, d in datasets.items() if k != HOST_TIME and d.dtype.kind in "fc"}
    spans = keep_spans(n, [rows for k, ranges in lost.items() if k not in as_nan for rows in ranges])
    for k, d in datasets.items():
        _write_spans(d, out, k, spans, lost[k] if k in as_nan else [])
    kept = _span_rows(spans)
    said = [f"{n - kept} samples dropped ({kept} kept" + (f", ~{(n - kept) / rate_hz:.3f} s at {rate_hz:g} Hz lost)"
                                                         if np.isfinite(rate_hz) and rate_hz > 0 else ")")] \
        if kept < n else []
    said += [f"{k} NaN in {sum(min(hi, n) - lo for lo, hi in lost[k] if lo < n)} rows" for k in sorted(as_nan)
             if lost[k]]
    said += [f"{k} could not be opened and is not in the copy" for k in gone]
    result.lost.append(f"{name}: {', '.join(said)} ({DAMAGED_BYTES})")


# Rows copied at a time: memory stays at a block however long the stream.
COPY_BLOCK_ROWS = 65536


def _write_spans(d: h5py.Dataset, dst: h5py.Group, name: str, spans: list[tuple[int, int]],
                 as_nan: list[tuple[int, int]]) -> None:
    """A dataset of ``d``'s rows in ``spans``, the ``as_nan`` ones NaN, stored as ``d`` is (chunks, filters,
    attributes), growable."""
    out = dst.create_dataset(name, shape=(_span_rows(spans), *d.shape[1:]), maxshape=(None, *d.shape[1:]),
                             dtype=d.dtype, chunks=d.chunks or True, compression=d.compression,
                             compression_opts=d.compression_opts, shuffle=d.shuffle, fletcher32=d.fletcher32)
    out.attrs.update(dict(d.attrs))
    at = 0
    for start, stop in spans:
        for lo in range(start, stop, COPY_BLOCK_ROWS):
            hi = min(lo + COPY_BLOCK_ROWS, stop)
            block = np.full((hi - lo, *d.shape[1:]), np.nan, d.dtype) if as_nan else np.empty(0)
            for a, b in keep_spans(hi, as_nan, start=lo) if as_nan else [(lo, hi)]:
                if as_nan:
                    block[a - lo:b - lo] = d[a:b]
                else:
                    block = d[a:b]
            out[at:at + hi - lo] = block
            at += hi - lo


def _span_rows(spans: list[tuple[int, int]]) -> int:
    return sum(stop - start for start, stop in spans)


def _cut_to_whole_samples(g: h5py.Group, name: str, rate_hz: float, result: RepairReport) -> None:
    lengths = {k: d.shape[0] for k, d in g.items() if isinstance(d, h5py.Dataset) and d.shape}
    if not lengths:
        return
    n = min(lengths.values())
    dropped = max(lengths.values()) - n
    if not dropped:
        return
    for d in g.values():
        if isinstance(d, h5py.Dataset) and d.shape and d.shape[0] > n:
            d.resize((n, *d.shape[1:]))
    seconds = f", ~{dropped / rate_hz:.3f} s at {rate_hz:g} Hz" if np.isfinite(rate_hz) and rate_hz > 0 else ""
    result.lost.append(f"{name}: {dropped} partial rows dropped ({n} whole samples kept{seconds})")
