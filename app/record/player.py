"""Reading session files back: ``SessionFile`` (the reader) and ``ReplayRig`` (the file as live streams).

The symmetric pair of ``SessionRecorder`` (app/record/writer.py) (python-can's logger/player pattern). ``SessionFile``
opens a cleanly closed file normally and falls back to SWMR read access when HDF5 says the file is open
for write: so it also reads a file still being written (``refresh()`` shows new samples) and one whose
writer was killed (HDF5 refuses an ordinary open of those until ``h5clear -s`` resets the writer's flags).
``ReplayRig`` hands the recorded ``Record``s, with their recorded host times, to subscribers at 1x, Nx or
as fast as possible, paced by ``host_time_s``, and the file's events at their times as the live rig publishes
them, each marked ``replayed`` so that nothing acts on a recorded trip, E-stop or fault.
"""

from __future__ import annotations

import bisect
import json
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import h5py
import numpy as np
from uartlab.app.record.integrity import DAMAGED_BYTES, read
from uartlab.app.record.writer import KNOWN_SCHEMAS, SCHEMA
from uartlab.errors import InputFileError
from uartlab.hub import Hub
from uartlab.streams import HOST_TIME, Event, EventKind, FieldSpec, Record, StreamSpec

SCHEMA_PREFIX = SCHEMA.rsplit("/", 1)[0] + "/"   # "uartlab.session/": every version of the layout is read


class DamagedData(InputFileError):
    """Rows of a readable session file that cannot be read: a chunk's checksum or decompression fails."""

    def __init__(self, path: str, where: str, detail: str):
        self.where = where   # the dataset and rows: "/streams/daq/pot_V rows 0-4095"
        super().__init__(f"{path}: {where}: damaged ({DAMAGED_BYTES}: {detail}); `uartlab verify` lists the "
                         "damage, `uartlab verify --repair` copies what is whole")


class SessionFile:
    """A session file, read-only. Works on complete files, files being written and files left by a crash."""

    def __init__(self, path: str | os.PathLike):
        self.path = os.fspath(path)
        self._file = _open_hdf5(self.path)
        try:
            schema = self._file.attrs.get("schema", "")
            schema = schema.decode("utf-8", "replace") if isinstance(schema, bytes) else str(schema)
            if not schema.startswith(SCHEMA_PREFIX):  # another program's HDF5 file
                raise InputFileError(f"{self.path}: not a uartlab session file (schema attribute {schema!r}, "
                                     f"expected {SCHEMA_PREFIX}N)")
            if schema not in KNOWN_SCHEMAS:
                raise InputFileError(unknown_schema(self.path, schema))
            self.live = self._file.swmr_mode
            self.metadata = {k: (v.item() if isinstance(v, np.generic) else v) for k, v in self._file.attrs.items()}
            streams = self._file.get("streams", {})
            for name, g in streams.items():
                problems = stream_layout_problems(name, g)
                if problems:   # edited or damaged by another program: said here, not as an error deep in a read
                    raise InputFileError(f"{self.path}: {problems[0]}")
            self.streams: dict[str, StreamSpec] = {name: self._spec(name, g) for name, g in streams.items()}
        except InputFileError:
            self._file.close()
            raise
        except (OSError, KeyError, ValueError, TypeError, AttributeError) as exc:  # a damaged or truncated file
            self._file.close()
            raise InputFileError(f"{self.path}: damaged session file ({_one_line(exc)})") from None
        self._times: dict[str, np.ndarray] = {}
        self._lengths: dict[str, int] = {}

    @staticmethod
    def _spec(name: str, g: h5py.Group) -> StreamSpec:
        order = [str(n) for n in g.attrs.get("fields", [k for k in g if k != HOST_TIME])]
        fields = []
        for fname in order:
            d = g[fname]
            a = d.attrs
            shape = tuple(d.shape[1:])
            # uartlab.session/1 files have no frame, labels or codes: "" and (); their flags are HDF5 bools
            labels = tuple(tuple(_texts(a[f"labels_axis{k}"])) for k in range(1, len(shape) + 1)
                           if f"labels_axis{k}" in a) or \
                ((tuple(_texts(a["columns"])),) if len(shape) == 1 and "columns" in a else ())
            if len(shape) == 1 and labels == (tuple(str(i) for i in range(shape[0])),):
                labels = ()   # an unlabelled field's positions, not names it was declared with
            fields.append(FieldSpec(fname, str(a.get("dtype", d.dtype.str)), shape, str(a.get("units", "")),
                                    str(a.get("description", "")), str(a.get("frame", "")),
                                    labels if len(labels) == len(shape) else (),
                                    tuple(_texts(a.get("column_units", []))),
                                    tuple(_texts(a.get("enum_names", [])))))
        rate = float(g.attrs.get("nominal_rate_hz", np.nan))
        return StreamSpec(name, str(g.attrs.get("device", "")), tuple(fields),
                          None if np.isnan(rate) else rate, str(g.attrs.get("device_clock", "")) or None)

    # ------------------------------------------------------------ metadata
    @property
    def complete(self) -> bool:
        return bool(self._file.attrs.get("complete", 0))

    @property
    def config_text(self) -> str:
        return _text(self._read(self._file["config/rig_toml"], ())) if "config/rig_toml" in self._file else ""

    @property
    def calibration_texts(self) -> dict[str, str]:
        """name -> text; names may be paths ("calibrations/sea/2026-12-02_1.toml" from the store)."""
        g = self._file.get("config/calibration")
        out: dict[str, str] = {}
        if g is not None:
            g.visititems(lambda name, obj: out.__setitem__(name, _text(self._read(obj, ())))
                         if isinstance(obj, h5py.Dataset) else None)
        return out

    def protocol_texts(self) -> dict[str, str]:
        """The suite files this session ran (name -> exact text; each dataset's sha256 attribute is its hash)."""
        g = self._file.get("config/protocol", {})
        return {name: _text(self._read(d, ())) for name, d in g.items()}

    def clock(self) -> np.ndarray:
        """(n, 2): the /clock pairs of host time and UTC (POSIX s); (0, 2) for a file without one (schema /1)."""
        if "clock" not in self._file:
            return np.zeros((0, 2))
        rows = self._read(self._file["clock"])
        return np.column_stack([rows[HOST_TIME], rows["utc_time_s"]]) if rows.size else np.zeros((0, 2))

    def utc_time_s(self, host_time_s) -> np.ndarray:
        """UTC (POSIX seconds) of host times: host time plus the /clock offset (utc - host), interpolated between
        its rows and held beyond them (docs/session-file.md, "Wall-clock time"); NaN for a file without /clock."""
        t = np.asarray(host_time_s, dtype=float)
        clock = self.clock()
        if clock.shape[0] == 0:
            return np.full(t.shape, np.nan)
        return t + np.interp(t, clock[:, 0], clock[:, 1] - clock[:, 0])

    def refresh(self) -> None:
        """See what a SWMR writer has flushed since the file was opened (or last refreshed)."""
        if not self.live:
            return  # closed cleanly or never SWMR: nothing more will come
        for obj in self._datasets():
            obj.refresh()
        self._times.clear()
        self._lengths.clear()

    def _datasets(self) -> Iterator[h5py.Dataset]:
        for g in self._file.get("streams", {}).values():
            yield from g.values()
        for path in ("events", "trials/table", "clock"):
            if path in self._file:
                yield self._file[path]

    # ------------------------------------------------------------ data
    def length(self, stream: str) -> int:
        """Usable samples: the shortest of the stream's datasets (they differ only inside a crashed flush)."""
        if stream not in self._lengths:  # looking the datasets up costs ~0.2 ms each: once per refresh
            g = self._file["streams"][stream]
            self._lengths[stream] = min(d.shape[0] for d in g.values())
        return self._lengths[stream]

    def host_times(self, stream: str) -> np.ndarray:
        if stream not in self._times:
            self._times[stream] = self._read(self._file["streams"][stream][HOST_TIME], slice(self.length(stream)))
        return self._times[stream]

    def read(self, stream: str, start: int = 0, stop: int | None = None) -> Record:
        """Rows [start, stop) of a stream as one Record."""
        g = self._file["streams"][stream]
        stop = self.length(stream) if stop is None else min(stop, self.length(stream))
        start = min(start, stop)
        rows = slice(start, stop)
        return Record(stream, self._read(g[HOST_TIME], rows),
                      {f.name: _as_declared(self._read(g[f.name], rows), f) for f in self.streams[stream].fields})

    def rows_between(self, stream: str, t_start_s: float, t_stop_s: float) -> tuple[int, int]:
        """[start, stop) rows with t_start_s <= host_time_s < t_stop_s."""
        t = self.host_times(stream)
        return int(np.searchsorted(t, t_start_s, "left")), int(np.searchsorted(t, t_stop_s, "left"))

    def records(self, stream: str, trial: int | None = None, block_size: int = 65536) -> Iterator[Record]:
        """The stream (or one trial of it, by 1-based index) in blocks of at most block_size samples."""
        start, stop = 0, self.length(stream)
        if trial is not None:
            t = self.trial(trial)
            stop_s = t["stop_host_time_s"] if not np.isnan(t["stop_host_time_s"]) else np.inf
            start, stop = self.rows_between(stream, t["start_host_time_s"], np.nextafter(stop_s, np.inf))
        for i in range(start, stop, block_size):
            yield self.read(stream, i, min(i + block_size, stop))

    def trials(self) -> list[dict]:
        if "trials/table" not in self._file:
            return []
        rows = self._read(self._file["trials/table"])
        if rows.dtype.names is None or "parameters_json" not in rows.dtype.names:
            raise InputFileError(f"{self.path}: damaged session file: /trials/table is not a table of trials")
        out = []
        for row in rows:
            d = {name: (_text(row[name]) if rows.dtype[name].kind in "SOU" else row[name].item())
                 for name in rows.dtype.names}
            d["parameters"] = json.loads(d.pop("parameters_json") or "{}")
            out.append(d)
        return out

    def trial(self, index: int) -> dict:
        for t in self.trials():
            if t["index"] == index:
                return t
        raise KeyError(f"{self.path}: no trial {index}")

    def events(self) -> list[Event]:
        if "events" not in self._file:
            return []
        return [Event(float(r[HOST_TIME]), EventKind.read(_text(r["kind"])), _text(r["source"]), _text(r["message"]))
                for r in self._read(self._file["events"])]

    def time_span_s(self) -> tuple[float, float]:
        """First and last host time over all streams (NaN, NaN if nothing was recorded)."""
        firsts, lasts = [], []
        for name in self.streams:
            t = self.host_times(name)
            if t.size:
                firsts.append(t[0])
                lasts.append(t[-1])
        return (min(firsts), max(lasts)) if firsts else (np.nan, np.nan)

    def _read(self, d: h5py.Dataset, selection=slice(None)):
        """The dataset's selection; a chunk that fails its checksum or decompression is said in one line
        naming the file, the dataset and the rows, not as HDF5's "filter returned failure"."""
        try:
            return read(d, selection, live=self.live)
        except OSError as exc:
            rows = (f" rows {selection.start or 0}-{(selection.stop or d.shape[0]) - 1}"
                    if isinstance(selection, slice) and d.shape else "")
            raise DamagedData(self.path, f"{d.name}{rows}", _one_line(exc)) from None

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> SessionFile:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# What a stream's datasets hold: numbers or flags (uartlab.schema declares no other kind), one row per sample.
SAMPLE_KINDS = "biuf"


def stream_layout_problems(name: str, g) -> list[str]:
    """Each way the group at /streams/<name> is not a stream this reader can read, one line naming the dataset:
    a host_time_s of one float per sample and every listed field a dataset of one row per sample."""
    where = f"/streams/{name}"
    if not isinstance(g, h5py.Group):
        return [f"{where}: not a stream (a group of datasets)"]
    fields = [_text(n) for n in g.attrs.get("fields", [k for k in g if k != HOST_TIME])]
    problems = []
    for key in (HOST_TIME, *fields):
        d = g.get(key)
        if d is None:
            why = "every sample has a time" if key == HOST_TIME else "a field of the stream"
            problems.append(f"{where}/{key}: missing ({why})")
        elif not isinstance(d, h5py.Dataset):
            problems.append(f"{where}/{key}: a group, not a field's dataset")
        elif d.ndim == 0 or d.dtype.kind not in SAMPLE_KINDS:
            problems.append(f"{where}/{key}: {_described(d)}, not one row of numbers per sample")
        elif key == HOST_TIME and (d.ndim != 1 or d.dtype.kind != "f"):
            problems.append(f"{where}/{key}: {_described(d)}, not one time in seconds per sample")
    return problems


def _described(d: h5py.Dataset) -> str:
    kind = "text" if d.dtype.kind in "SUO" else f"{d.dtype}"
    return f"a single {kind} value" if d.ndim == 0 else f"{kind} of shape {d.shape}"


def unknown_schema(path: str, schema: str) -> str:
    """The one sentence for a session file of a layout this version does not read."""
    return f"{path}: schema {schema!r} is not one this uartlab reads ({', '.join(sorted(KNOWN_SCHEMAS))})"


# HDF5's words for a file shorter than its superblock says it is.
TRUNCATED = re.compile(r"truncated file: eof = (?P<eof>\d+).*stored_eof = (?P<stored>\d+)")


def _open_hdf5(path: str) -> h5py.File:
    """The file opened for reading; InputFileError naming it when it is missing, a folder, or not HDF5."""
    if os.path.isdir(path):
        raise InputFileError(f"{path}: is a folder, not a session file")
    if not os.path.exists(path):
        blocked = next((p for p in Path(path).parents if p.exists() and not p.is_dir()), None)
        raise InputFileError(f"{path}: no such file" + (f" ({blocked} is a file, not a folder)" if blocked else ""))
    try:
        return h5py.File(path, "r")
    except OSError as exc:
        # "already open for write": a writer is at work or was killed. Only SWMR read opens those. Not
        # first: SWMR read retries every failed checksum, so on a truncated file it can take minutes.
        if "open for write" in str(exc):
            try:
                return h5py.File(path, "r", swmr=True)
            except OSError as swmr_exc:
                exc = swmr_exc
        cut = TRUNCATED.search(str(exc))
        if cut:
            raise InputFileError(f"{path}: truncated: {int(cut['eof']):,} of its {int(cut['stored']):,} bytes are "
                                 "there (an interrupted copy or download?); HDF5 cannot open it") from None
        raise InputFileError(f"{path}: not a session file (HDF5 cannot open it: {_one_line(exc)})") from None


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _texts(values) -> list[str]:
    return [_text(v) for v in np.atleast_1d(values)]


def _as_declared(values: np.ndarray, field: FieldSpec) -> np.ndarray:
    """A field's values in its declared dtype: flags are stored as uint8 0/1 (uartlab.session/2 on)."""
    return values.astype(bool) if field.dtype == "?" and values.dtype != bool else values


def _text(value) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


class ReplayRig:
    """A recorded session presented as live streams: subscribers get Records and Events paced by their host times.

    ``speed`` is a factor of real time (1.0, 10.0 ...) or "max" (no pacing). ``items()`` is the pull API (the
    file's Records and its Events in host-time order), ``records()`` the Records alone; ``start()`` runs
    ``items()`` on a thread and publishes into ``self.hub`` - a Hub with the recorded stream specs, the same
    interface the live Rig offers (``rig.hub.subscribe(...)``), so consumers cannot tell live from recorded
    data; ``subscribe(callback)`` is a shortcut for a callback on that thread. ``seek(t, history_s)`` jumps to
    a recorded host time, first handing over the ``history_s`` before it unpaced (a view that keeps a window of
    history is full again at once); ``pause()``/``resume()`` hold the thread where it is; ``loop`` starts over
    at the end (``hold_at_end``: pauses there instead of ending). Records keep their recorded ``host_time_s``.
    A damaged chunk (its checksum fails) raises ``DamagedData``; with ``skip_damaged`` the stream's rows read
    with it are left out instead, and ``damaged`` lists what was skipped (the window plays the rest).

    Reads are ``CHUNK_S`` of recorded time per stream at once, sliced in memory for each delivery: a read of a
    few rows costs about as much as one of a thousand (h5py's per-call overhead, ~0.2 ms per field), and a
    10 ms window of every field of every stream read from the file each time kept 1x playback at 0.1-0.2x.
    ``due_s`` says where the schedule is (a consumer compares it with what it shows); a replay that falls
    behind keeps every sample rather than skipping ahead.
    """

    CHUNK_S = 1.0       # recorded seconds read from the file per stream at a time

    def __init__(self, source: str | os.PathLike | SessionFile, speed: float | str = 1.0, loop: bool = False,
                 window_s: float = 0.01, streams: list[str] | None = None, hold_at_end: bool = False,
                 skip_damaged: bool = False):
        self.file = source if isinstance(source, SessionFile) else SessionFile(source)
        self.speed = speed
        self.loop = loop
        # 10 ms of recorded time per delivery: the DAQ's 5 ms blocks arrive in about the same rhythm live
        self.window_s = float(window_s)
        self.specs = {n: s for n, s in self.file.streams.items() if streams is None or n in streams}
        self.hub = Hub()
        for spec in self.specs.values():
            self.hub.register(spec)
        self._subscribers: list[Callable[[Record], None]] = []
        self._seek_to: tuple[float, float] | None = None
        self._publishing = threading.Lock()  # a seek waits for the item being published, then none follows
        self._stop = threading.Event()
        self._wake = threading.Event()       # a seek, a resume or a stop: the thread stops waiting
        self._paused = False
        self._thread: threading.Thread | None = None
        self.hold_at_end = hold_at_end
        self.skip_damaged = skip_damaged
        self.damaged: list[DamagedData] = []   # skipped (skip_damaged), one per damaged place met
        self._chunks: dict[str, tuple[Record, tuple[float, float]]] = {}  # stream -> (rows, [from, to) s)
        # Marked replayed: a consumer shows a recorded trip or E-stop at its time but acts on none of them.
        self._events = sorted((replace(e, replayed=True) for e in self.file.events()), key=lambda e: e.host_time_s)
        self._event_times = [e.host_time_s for e in self._events]
        self.position_s = self.file.time_span_s()[0]
        self.replayed: dict[str, int] = dict.fromkeys(self.specs, 0)
        self._clock: tuple[float, float] | None = None     # (wall, recorded) the pacing started from

    def subscribe(self, callback: Callable[[Record], None]) -> None:
        """``callback(record)`` on the replay's thread for every Record (the hub has the events too)."""
        self._subscribers.append(callback)

    def seek(self, host_time_s: float, history_s: float = 0.0) -> None:
        """Continue from this recorded host time (at the next window), after the ``history_s`` before it.
        Once this returns, nothing from before the seek is published (a consumer may clear its views)."""
        with self._publishing:
            self._seek_to = (float(host_time_s), max(0.0, float(history_s)))
        self._wake.set()

    def pause(self) -> None:
        self._paused = True

    def resume(self) -> None:
        self._paused = False
        self._wake.set()

    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def due_s(self) -> float | None:
        """The recorded host time the schedule says is due now (None: paused, at "max" or not playing)."""
        clock = self._clock
        speed = self.speed
        if clock is None or self._paused or speed == "max" or not self.running:
            return None
        return clock[1] + (time.monotonic() - clock[0]) * float(speed)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _restart_clock(self, t: float) -> None:
        self._clock = (time.monotonic(), t)

    def _rows(self, name: str, t_start: float, t_stop: float, fetch_s: float) -> Record | None:
        """The stream's samples in [t_start, t_stop), from the chunk in memory (read ``fetch_s`` ahead if not)."""
        chunk, (lo, hi) = self._chunks.get(name, (None, (np.inf, -np.inf)))
        if chunk is None or not (lo <= t_start and t_stop <= hi):
            hi = max(t_stop, t_start + fetch_s)
            i0, i1 = self.file.rows_between(name, t_start, hi)
            try:
                chunk = self.file.read(name, i0, i1)
            except DamagedData as exc:
                if not self.skip_damaged:
                    raise
                if all(exc.where != seen.where for seen in self.damaged):
                    self.damaged.append(exc)
                chunk = self.file.read(name, i0, i0)   # nothing from these rows, not read again
            self._chunks[name] = (chunk, (t_start, hi))
        t = chunk.host_time_s
        i0, i1 = int(np.searchsorted(t, t_start, "left")), int(np.searchsorted(t, t_stop, "left"))
        if i1 <= i0:
            return None
        return Record(name, t[i0:i1], {f.name: chunk.data[f.name][i0:i1] for f in self.specs[name].fields})

    def _window(self, t_start: float, t_stop: float, fetch_s: float) -> Iterator[Record | Event]:
        for name in self.specs:
            rec = self._rows(name, t_start, t_stop, fetch_s)
            if rec is not None:
                self.replayed[name] += len(rec)
                yield rec
        times = self._event_times
        yield from self._events[bisect.bisect_left(times, t_start):bisect.bisect_left(times, t_stop)]

    def items(self) -> Iterator[Record | Event]:
        """The recorded records and events in host-time order, paced by ``speed``."""
        t_first, t_last = self.file.time_span_s()
        if np.isnan(t_first):
            return
        # The file's last events may come after its last sample (an E-stop, the recorder's close): played too.
        t_last = max(t_last, self._event_times[-1]) if self._event_times else t_last
        t = t_first
        self._restart_clock(t)
        paced_at = self.speed
        while not self._stop.is_set():
            speed = self.speed   # read once a turn: the window's thread may set it at any moment
            if speed != paced_at:  # a new speed from here on, not a jump to where it would have been
                paced_at = speed
                self._restart_clock(t)
            fast = speed == "max"
            window_s = 1.0 if fast else self.window_s  # as fast as possible: fewer, bigger reads
            if self._seek_to is not None:
                (target, history_s), self._seek_to = self._seek_to, None
                t = min(max(target, t_first), t_last)
                self.position_s = t  # before the history: whoever sees it delivered sees the new place
                if history_s > 0:  # one record per stream, unpaced: what a view of the last seconds shows
                    self._chunks.clear()
                    yield from self._window(t - history_s, t, 0.0)
                self._chunks.clear()
                self._restart_clock(t)
            if self._paused:
                self._wake.wait(0.1)
                self._wake.clear()
                self._restart_clock(t)
                continue
            if t > t_last:
                if self.hold_at_end and not self.loop:  # a window's replay: paused at the end, seekable
                    self.position_s, self._paused = t_last, True
                    continue
                if not self.loop:
                    return
                t = t_first
                self._restart_clock(t)
            t_end = t + window_s
            if not fast:  # a window is delivered when its recorded end time has come, as live data would be
                clock = self._clock or (time.monotonic(), t)
                delay = clock[0] + (t_end - clock[1]) / float(speed) - time.monotonic()
                if delay > 0:
                    self._wake.wait(delay)
                    self._wake.clear()
                    if self._seek_to is not None or self._paused or self._stop.is_set():
                        continue
            yield from self._window(t, t_end, max(self.CHUNK_S, window_s))
            t = t_end
            self.position_s = t

    def records(self) -> Iterator[Record]:
        """The recorded records alone, paced as ``items()``."""
        return (item for item in self.items() if isinstance(item, Record))

    def _run(self) -> None:
        for item in self.items():
            with self._publishing:
                if self._seek_to is not None:  # from before a seek the generator has not reached yet
                    continue
                self.hub.publish(item)
                if isinstance(item, Record):
                    for cb in self._subscribers:
                        cb(item)

    def start(self, paused: bool = False) -> None:
        """Play on a thread of its own (``paused``: the thread waits for ``resume()``, seeks still deliver)."""
        self._stop.clear()
        self._paused = paused
        self._thread = threading.Thread(target=self._run, name="replay-rig", daemon=True)
        self._thread.start()

    def wait(self, timeout_s: float | None = None) -> bool:
        """Wait for the replay to end; True if it did."""
        if self._thread is not None:
            self._thread.join(timeout_s)
            return not self._thread.is_alive()
        return True

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        self.wait()

    def close(self) -> None:
        self.stop()
        self.file.close()
