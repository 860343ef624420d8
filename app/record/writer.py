"""The session recorder: every stream of a session into one crash-safe HDF5 file.

Layout (docs/session-file.md has the full reference): one *flat* set of datasets per session,
``/streams/<stream>/<field>`` plus ``/streams/<stream>/host_time_s``, and trials as *time ranges* over it
(``/trials/table``, one row per trial) instead of one set of datasets per trial. Why: HDF5's SWMR mode,
which lets the GUI and replay read the file while it is written and keeps it consistent after a
``kill -9``, forbids creating groups, datasets and attributes once it is on. A flat layout needs
everything only once, before the first sample; trials become rows appended to a table, which SWMR
allows. The trade-off: every stream must be added before recording starts, and a trial is a slice of
the session datasets (found by host time) rather than its own datasets. On a clean close the file is
reopened without SWMR to write what SWMR could not: ``complete`` = True, the stop time and one
``/trials/NNNN_<name>`` group per trial with its attributes and per-stream sample ranges.

Crash-safe from the first byte: a file at the session's path is always one HDF5 opens. HDF5 marks a file
open for write from its first byte until SWMR starts, and a file killed in that state opens nowhere (nor with
``swmr=True``). So the file is built under a hidden name in the same folder (``.<name>.<pid>.partial``), its
metadata and every stream's datasets created there, SWMR switched on and flushed, and only then renamed into
place with ``os.replace`` (atomic within a folder; the open handle follows the file). ``start()`` does it: a
``RecordingSession`` calls it as soon as its streams are added, so the session file appears within
milliseconds of the recording and before any sample. A kill before the rename leaves only the hidden file,
which the next recorder in that folder removes (its process is gone, or it is older than any recorder
keeps one) and logs.

Every stream dataset is compressed (``StreamStorage``: deflate after shuffle, a checksum per chunk) and
floats are stored at the precision their source has (``uartlab.schema``: the ADC's volts and the forces
derived from them in float32, Motive's float32 markers as sent): a full-rate hour takes about a third of
what float64 without a filter does (``uartlab bench record``). Chunks go straight to the file (no chunk
cache), so a flush leaves nothing behind in memory that a failing disk would have to take at close.

Writes never touch HDF5 on the caller's thread: ``write()`` copies the record into a per-stream
pending list, and one writer thread appends everything pending to the datasets (one resize + one
write per field) and flushes the file. A kill loses at most ``flush_interval_s``: the thread flushes
twice per interval on fixed deadlines, so the samples' way to it (the hub's queue, the pending lists)
and the flush itself have the other half.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import hashlib
import json
import logging
import os
import shlex
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import h5py
import numpy as np
from uartlab import __version__
from uartlab.errors import RecordingError
from uartlab.processes import is_alive
from uartlab.schema import NAME_BYTES
from uartlab.streams import HOST_TIME, Event, EventKind, FieldSpec, Record, StreamSpec

logger = logging.getLogger(__name__)

# The layout's name and version, the one declaration of it (app/record/player.py reads every version).
SCHEMA = "uartlab.session/2"
# Every layout this version reads, oldest first: /1 has no /clock, no column names or codes, flags as HDF5 bools.
KNOWN_SCHEMAS = ("uartlab.session/1", SCHEMA)
PARTIAL_SUFFIX = ".partial"   # a session file still being built: hidden, renamed into place once SWMR is on
# A recorder holds its hidden file for milliseconds (metadata and datasets, then SWMR): one older than this
# whose process may still run (a PID reused) is a leftover too.
PARTIAL_MAX_AGE_S = 600.0
# File format of HDF5 1.10 exactly: SWMR needs at least 1.10, and capping it there keeps the file readable
# by HDF5 1.10 tools (Debian's h5dump) and MATLAB (R2021b+ ships 1.10); "latest" under HDF5 2.0 is not.
LIBVER = ("v110", "v110")
# Fixed-length UTF-8 strings in the events and trials tables: SWMR does not support variable-length
# data (it lives in the global heap, which SWMR cannot keep consistent for readers), so longer
# messages are truncated; 512 bytes holds any fault sentence we produce. A trial's outcome is its word and
# such a sentence (Outcome.because: "E-stopped: operator E-stop (key Esc) (E-stop from kim@rig-pc pid 5218)").
SENTENCE_BYTES = 512
EVENT_DTYPE = np.dtype([
    (HOST_TIME, "f8"),
    ("kind", h5py.string_dtype("utf-8", 32)),
    ("source", h5py.string_dtype("utf-8", 64)),
    ("message", h5py.string_dtype("utf-8", SENTENCE_BYTES)),
])
TRIAL_DTYPE = np.dtype([
    ("index", "i4"),
    ("name", h5py.string_dtype("utf-8", NAME_BYTES)),
    ("protocol", h5py.string_dtype("utf-8", NAME_BYTES)),
    ("parameters_json", h5py.string_dtype("utf-8", 2048)),
    ("repeat", "i4"),
    ("start_host_time_s", "f8"),
    ("stop_host_time_s", "f8"),      # NaN while the trial runs (or if the recording crashed in it)
    ("outcome", h5py.string_dtype("utf-8", 32 + SENTENCE_BYTES)),
])
TRIAL_FIELDS: tuple[str, ...] = TRIAL_DTYPE.names or ()   # its column names, in order
# The wall-clock anchor: pairs of (host monotonic clock, UTC as POSIX seconds) read together, one when the file
# is created and one at every flush, so a session lines up with EMG, video or another computer's recordings.
CLOCK_DTYPE = np.dtype([(HOST_TIME, "f8"), ("utc_time_s", "f8")])
CLOCK = "clock"
# Every dataset outside /streams a session file has, by path (verify checks a file against it).
SESSION_DATASETS = ("config/rig_toml", "events", "trials/table", CLOCK)
# 32 KiB chunks (before compression). Every flush rewrites each dataset's partial last chunk, and a compressed
# chunk that grows moves: under SWMR the space it leaves is not reused while the file is open, so that space is
# lost. Small chunks keep the loss small (bench record at the rig's load: ~18 % of the file with 32 KiB, ~45 %
# with 256 KiB), large enough that deflate still finds its redundancy and a 250 kS/s stream costs a few
# hundred chunk writes a second.
CHUNK_BYTES = 32 * 1024
# Beyond this much pending data (~2 min of the full rig load) the disk is not keeping up: drop and say so
# rather than let memory grow until the process dies and takes the unflushed data with it.
MAX_PENDING_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class StreamStorage:
    """How the stream datasets are stored: HDF5's filters on every chunk.

    The default is deflate (gzip) level 1 after byte shuffle, with a Fletcher-32 checksum per chunk. Deflate
    is the one filter every HDF5 build decodes without a plugin (MATLAB, h5dump, h5py, R, Julia), so the files
    stay readable wherever HDF5 is; level 1 is almost all of the ratio for a fraction of the CPU; the shuffle
    puts the bytes of equal significance together, which is what makes 16-bit ADC volts in float64 shrink.
    The checksum lets a reader tell a flipped bit on an old disk from data. SWMR takes filtered chunks.
    """

    compression: str | None = "gzip"
    level: int | None = 1
    shuffle: bool = True
    checksum: bool = True

    def options(self) -> dict:
        """The keyword arguments of h5py's create_dataset."""
        if self.compression is None:
            return {"fletcher32": self.checksum} if self.checksum else {}
        return {"compression": self.compression, "compression_opts": self.level, "shuffle": self.shuffle,
                "fletcher32": self.checksum}

    def describe(self) -> str:
        parts = ([f"{self.compression}-{self.level}"] if self.compression else ["uncompressed"]) + \
            (["shuffle"] if self.compression and self.shuffle else []) + (["fletcher32"] if self.checksum else [])
        return " + ".join(parts)


COMPRESSED = StreamStorage()
UNCOMPRESSED = StreamStorage(compression=None, level=None, shuffle=False, checksum=False)


def trial_group_name(index: int, name: str) -> str:
    """``0001_free_FDP``: "/" would nest groups (trial "free/FDP" as trials/0001_free/FDP), so it becomes "_"."""
    return f"{index:04d}_{name.replace('/', '_')}"


def write_trial_groups(f: h5py.File, trials: list[dict], streams: list[str]) -> None:
    """One ``/trials/NNNN_<name>`` group per trial (rows of TRIAL_DTYPE as dicts), with each stream's rows:
    what a clean close adds (and a repaired copy), as SWMR cannot create groups."""
    times = {name: f["streams"][name][HOST_TIME][:] for name in streams}
    for t in trials:
        g = f["trials"].create_group(trial_group_name(t["index"], t["name"]))
        g.attrs.update({k: v for k, v in t.items() if k != "parameters_json"})
        g.attrs["parameters_json"] = t["parameters_json"]
        for key, value in json.loads(t["parameters_json"] or "{}").items():
            if isinstance(value, str | int | float | bool):
                g.attrs[f"param_{key}"] = value
        stop = t["stop_host_time_s"] if not np.isnan(t["stop_host_time_s"]) else np.inf
        for name, t_s in times.items():
            # [start, stop) rows of /streams/<name>: what h5read needs to read just this trial
            g.attrs[f"{name}_rows"] = np.array([np.searchsorted(t_s, t["start_host_time_s"], "left"),
                                                np.searchsorted(t_s, stop, "right")], dtype="i8")


def building_name(path: str | os.PathLike) -> str:
    """The hidden name beside ``path`` that a file is built under, renamed to ``path`` once whole."""
    folder, name = os.path.split(os.path.abspath(path))
    return os.path.join(folder, f".{name}.{os.getpid()}{PARTIAL_SUFFIX}")


@contextlib.contextmanager
def built_whole(path: str | os.PathLike) -> Iterator[str]:
    """Write the block's file under ``building_name(path)``: renamed to ``path`` when the block ends, removed
    when it fails, so a failure half-way (a damaged chunk, a full disk) leaves no half file under the name
    nor touches one that was there."""
    folder, name = os.path.split(os.path.abspath(path))
    remove_stale_partials(folder, name)   # what a killed build of this same file left behind
    partial = building_name(path)
    try:
        yield partial
        os.replace(partial, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(partial)


def remove_stale_partials(folder: str, name: str | None = None) -> list[str]:
    """Remove the hidden files that processes killed while building them left in ``folder`` (``name``: only
    those of that file, which a command is about to build); returns their paths, each said in the log. None
    of them ever was whole: a recorder's held no samples yet, an export's or a repair's is a part of one."""
    removed: list[str] = []
    prefix = f".{name}." if name is not None else "."
    try:
        names = [n for n in os.listdir(folder) if n.startswith(prefix) and n.endswith(PARTIAL_SUFFIX)]
    except OSError:
        return removed   # the command's own create says what is wrong with the folder
    for hidden in names:
        path = os.path.join(folder, hidden)
        try:
            pid = int(hidden[: -len(PARTIAL_SUFFIX)].rsplit(".", 1)[1])
            age_s = time.time() - os.stat(path).st_mtime
        except (ValueError, IndexError, OSError):
            continue   # not one of ours, or already gone
        if is_alive(pid) and age_s < PARTIAL_MAX_AGE_S:
            continue   # another process is building it right now
        with contextlib.suppress(OSError):
            os.unlink(path)
            removed.append(path)
            logger.warning("removed %s: %s", path,
                           "a session file a recorder was killed while creating (it held no samples)" if name is None
                           else f"a part of {name} that a killed command was building (never whole)")
    return removed


def _now_iso() -> str:
    return _dt.datetime.now(_dt.UTC).astimezone().isoformat(timespec="milliseconds")


def clock_pair() -> tuple[float, float]:
    """(host monotonic s, UTC POSIX s) read as close together as this machine allows: the UTC read between
    two monotonic reads, paired with their midpoint; the tightest of three tries."""
    best = (np.inf, 0.0, 0.0)
    for _ in range(3):
        t0 = time.monotonic()
        utc = time.time()
        t1 = time.monotonic()
        best = min(best, (t1 - t0, 0.5 * (t0 + t1), utc))
    return best[1], best[2]


def field_attrs(fs: FieldSpec) -> dict:
    """A field's dataset attributes: units, meaning, and the names of its columns and codes (uartlab.schema)."""
    attrs: dict = {"units": fs.units, "description": fs.description, "dtype": fs.dtype,
                   "sample_shape": list(fs.shape) or [0]}
    if fs.frame:  # only where a field has one (uartlab.schema); files before it have none
        attrs["frame"] = fs.frame
    if fs.shape:
        attrs["columns"] = list(fs.columns())
    if fs.column_units:   # units differ along the last axis (the wrench): one per element
        attrs["column_units"] = list(fs.column_units)
    if len(fs.labels) > 1:   # a sample with more than one axis (markers x xyz): each axis's names; axis 0 is time
        for axis, labels in enumerate(fs.labels, start=1):
            attrs[f"labels_axis{axis}"] = list(labels)
    if fs.codes:
        attrs["enum_names"] = list(fs.codes)
        attrs["enum_values"] = np.arange(len(fs.codes), dtype="i8")
    return attrs


def _chunk_rows(row_bytes: int) -> int:
    return max(16, CHUNK_BYTES // max(1, row_bytes))


def _utf8(text: str, n_bytes: int) -> bytes:
    """UTF-8 bytes for a fixed-length string field, cut at a character boundary if too long."""
    raw = str(text).encode("utf-8")
    return raw[:n_bytes].decode("utf-8", "ignore").encode("utf-8") if len(raw) > n_bytes else raw


class SessionRecorder:
    """Record one session. Add every stream, then write records and events; ``close()`` marks it complete.

    ``metadata`` keys: operator, notes, config_text (the rig TOML), calibration_texts (name -> text),
    protocol_texts (suite file name -> text, stored with its sha256), command_line (the command that asked for
    the session, when another process's: a rig core's client; default this process's); anything else scalar
    becomes a root attribute.
    """

    def __init__(self, path: str | os.PathLike, metadata: dict | None = None, flush_interval_s: float = 0.5,
                 on_flush: Callable[[dict[str, int]], None] | None = None, storage: StreamStorage = COMPRESSED):
        self.path = os.fspath(path)
        self.storage = storage
        self.flush_interval_s = float(flush_interval_s)
        self.on_flush = on_flush  # called on the writer thread after every flush with samples on disk
        self.specs: dict[str, StreamSpec] = {}
        self.flushed: dict[str, int] = {}
        self.flushed_span_s: dict[str, tuple[float, float]] = {}  # host time of each stream's first, last flushed
        self.dropped: dict[str, int] = {}
        self.writer_cpu_s = 0.0
        self._pending: dict[str, list[Record]] = {}
        self._pending_events: list[tuple] = []
        self._pending_bytes = 0
        self._lock = threading.Lock()        # guards the pending lists (held for microseconds)
        self._flush_lock = threading.Lock()  # one drain at a time: writer thread, flush(), close()
        self._start_lock = threading.Lock()
        self._trials_dirty = False
        self._events_flushed = 0
        self._ds: dict[str, dict[str, h5py.Dataset]] = {}
        self._wake = threading.Event()
        self._first_written = threading.Event()   # the first samples are flushed at once, not at the next tick
        self._stop = threading.Event()
        self._error: RecordingError | None = None
        self._thread: threading.Thread | None = None
        self._trials: list[dict] = []
        self._closed = False
        self._inode: int | None = None     # the file's, once it is at its path
        self.removed_partials = remove_stale_partials(os.path.dirname(os.path.abspath(self.path)))
        self._building = building_name(self.path)
        try:
            self._file = h5py.File(self._building, "w", libver=LIBVER, rdcc_nbytes=0)
            self._write_metadata(metadata or {})
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(self._building)
            raise RecordingError(self._explain(exc, "cannot create the session file")) from exc

    # ------------------------------------------------------------ set-up (before SWMR)
    def _write_metadata(self, metadata: dict) -> None:
        f = self._file
        f.attrs.update({"schema": SCHEMA, "software_version": __version__, "host": socket.gethostname(),
                        "operator": str(metadata.get("operator", "")), "notes": str(metadata.get("notes", "")),
                        "start_time": _now_iso(), "stop_time": "", "complete": np.int8(0),
                        "flush_interval_s": self.flush_interval_s, "recorder_command_line": shlex.join(sys.argv),
                        "command_line": str(metadata.get("command_line") or shlex.join(sys.argv)),
                        "python_version": sys.version.split()[0], "h5py_version": h5py.version.version,
                        "hdf5_version": h5py.version.hdf5_version})
        for key, value in metadata.items():
            if key not in ("operator", "notes", "config_text", "calibration_texts", "protocol_texts",
                           "command_line") and \
                    isinstance(value, str | int | float | bool):
                f.attrs[key] = value
        cfg = f.create_group("config")
        cfg.create_dataset("rig_toml", data=str(metadata.get("config_text", "")), dtype=h5py.string_dtype())
        cal = cfg.create_group("calibration")
        for name, text in dict(metadata.get("calibration_texts", {})).items():
            cal.create_dataset(name, data=str(text), dtype=h5py.string_dtype())
        protocols = cfg.create_group("protocol")
        for name, text in dict(metadata.get("protocol_texts", {})).items():
            d = protocols.create_dataset(name, data=str(text), dtype=h5py.string_dtype())
            d.attrs["sha256"] = hashlib.sha256(str(text).encode("utf-8")).hexdigest()
        f.create_group("streams")
        events = f.create_dataset("events", shape=(0,), maxshape=(None,), dtype=EVENT_DTYPE, chunks=(1024,))
        events.attrs.update({"units": "s (host_time_s)", "kind_names": [k.value for k in EventKind]})
        clock = f.create_dataset(CLOCK, shape=(1,), maxshape=(None,), dtype=CLOCK_DTYPE, chunks=(256,))
        clock[0:1] = np.array([clock_pair()], dtype=CLOCK_DTYPE)
        clock.attrs.update({"units": "s", "description": "host_time_s (the streams' host monotonic clock) and "
                            "utc_time_s (UTC, POSIX seconds) read together, at the start and at every flush; "
                            "a sample's UTC is its host_time_s + (utc_time_s - host_time_s), that offset "
                            "interpolated between rows and held beyond them"})
        f.create_group("trials").create_dataset("table", shape=(0,), maxshape=(None,), dtype=TRIAL_DTYPE,
                                                chunks=(64,))

    def add_stream(self, spec: StreamSpec) -> None:
        """Create a stream's datasets. Only before recording starts: SWMR cannot create datasets later."""
        if self._thread is not None:
            raise RecordingError(f"{self.path}: stream {spec.name!r} added after recording started; "
                                 "add every stream before the first write, event or trial")
        if spec.name in self.specs:
            raise ValueError(f"stream {spec.name!r} added twice")
        g = self._file["streams"].create_group(spec.name)
        g.attrs.update({"device": spec.device, "nominal_rate_hz": float(spec.nominal_rate_hz or np.nan),
                        "device_clock": spec.device_clock or "", "fields": [f.name for f in spec.fields]})
        t = g.create_dataset(HOST_TIME, shape=(0,), maxshape=(None,), dtype="f8", chunks=(_chunk_rows(8),),
                             **self.storage.options())
        t.attrs.update({"units": "s", "description": "host monotonic clock (time.monotonic) of each sample; "
                        "/clock pairs it with UTC", "dtype": "f8"})
        for fs in spec.fields:
            dt = np.dtype(fs.stored_dtype)
            rows = _chunk_rows(dt.itemsize * int(np.prod(fs.shape, dtype=int)))
            d = g.create_dataset(fs.name, shape=(0, *fs.shape), maxshape=(None, *fs.shape), dtype=dt,
                                 chunks=(rows, *fs.shape), **self.storage.options())
            d.attrs.update(field_attrs(fs))
        # Handles stay open for the whole recording: reopening costs ~20 us per field per flush, and an
        # error flushing a dataset's chunk cache would otherwise surface in a destructor, where h5py swallows it.
        self._ds[spec.name] = {k: g[k] for k in (HOST_TIME, *(f.name for f in spec.fields))}
        self.specs[spec.name] = spec
        self.flushed[spec.name] = 0
        self.dropped[spec.name] = 0
        self._pending[spec.name] = []

    def start(self) -> None:
        """Switch to SWMR, put the file at its path and start the writer thread (the first write, event or
        trial does it implicitly; a RecordingSession calls it once its streams are added)."""
        with self._start_lock:  # writes, events and trials may arrive first from different threads
            if self._thread is not None:
                return
            try:
                # What verify checks the streams against: written while attributes still may be.
                self._file["streams"].attrs["declared"] = list(self.specs)
                self._file.swmr_mode = True   # flushes: from here on the hidden file opens (swmr=True)
                self._file.flush()
                os.replace(self._building, self.path)
                self._inode = os.stat(self.path).st_ino
            except OSError as exc:
                raise RecordingError(self._explain(exc, "cannot start the session file")) from exc
            self._thread = threading.Thread(target=self._run, name="session-recorder", daemon=True)
            self._thread.start()

    # ------------------------------------------------------------ recording (any thread)
    def write(self, record: Record) -> None:
        """Queue one record; copies its arrays so the producer may reuse them. Never blocks on disk."""
        self._check()
        spec = self.specs.get(record.stream)
        if spec is None:
            raise ValueError(f"{self.path}: no stream {record.stream!r}; add_stream it before recording")
        record.validate(spec)
        if self._thread is None:
            self.start()
        copy = Record(record.stream, np.array(record.host_time_s, dtype="f8"),
                      {f.name: np.array(record.data[f.name], dtype=f.stored_dtype) for f in spec.fields})
        n_bytes = copy.host_time_s.nbytes + sum(a.nbytes for a in copy.data.values())
        with self._lock:
            if self._pending_bytes + n_bytes > MAX_PENDING_BYTES:
                self.dropped[record.stream] += len(copy)
                return
            self._pending[record.stream].append(copy)
            self._pending_bytes += n_bytes
        if not self._first_written.is_set():
            self._first_written.set()
            self._wake.set()

    def event(self, event: Event) -> None:
        self._check()
        if self._thread is None:
            self.start()
        row = (event.host_time_s, _utf8(event.kind, 32), _utf8(event.source, 64),
               _utf8(event.message, 512))
        with self._lock:
            self._pending_events.append(row)

    def begin_trial(self, name: str, protocol: str, parameters: dict, repeat: int,
                    host_time_s: float | None = None) -> int:
        """Start a trial (a row of /trials/table, written at once); returns its 1-based index."""
        self._check()
        if self._trials and np.isnan(self._trials[-1]["stop_host_time_s"]):
            raise RecordingError(f"{self.path}: trial {self._trials[-1]['name']!r} is still running")
        if self._thread is None:
            self.start()
        index = len(self._trials) + 1
        trial = {"index": index, "name": name, "protocol": protocol,
                 "parameters_json": json.dumps(parameters, sort_keys=True, default=str), "repeat": int(repeat),
                 "start_host_time_s": time.monotonic() if host_time_s is None else host_time_s,
                 "stop_host_time_s": np.nan, "outcome": ""}
        with self._lock:
            self._trials.append(trial)
            self._trials_dirty = True
        self._wake.set()
        return index

    def end_trial(self, outcome: str, host_time_s: float | None = None) -> None:
        self._check()
        if not self._trials or not np.isnan(self._trials[-1]["stop_host_time_s"]):
            raise RecordingError(f"{self.path}: end_trial without a running trial")
        with self._lock:
            self._trials[-1]["stop_host_time_s"] = time.monotonic() if host_time_s is None else host_time_s
            self._trials[-1]["outcome"] = outcome
            self._trials_dirty = True
        self._wake.set()

    @property
    def pending_bytes(self) -> int:
        return self._pending_bytes

    def flush(self) -> None:
        """Append everything pending and flush to disk now (normally the writer thread does this)."""
        self._check()
        with self._flush_lock:
            self._drain()
        self._check()

    # ------------------------------------------------------------ the writer thread
    def _run(self) -> None:
        # Twice per interval, on absolute deadlines (a slow flush does not push the next one back): a sample
        # waits at most half the interval for its flush, which leaves the other half for its way here and
        # for the flush itself, so a kill loses at most flush_interval_s.
        period_s = self.flush_interval_s / 2
        next_s = time.monotonic() + period_s
        first = True   # the first samples go to disk as they come: the file's first moments are not left to a tick
        while not self._stop.is_set():
            self._wake.wait(max(0.0, next_s - time.monotonic()))
            self._wake.clear()
            now = time.monotonic()
            if first and self._first_written.is_set() and now < next_s:
                first = False   # off the schedule, which goes on as it was
            elif now < next_s and not self._stop.is_set():
                continue  # woken early by a trial change: handled at the next tick, well within the interval
            else:
                first = first and not self._first_written.is_set()
                next_s = max(next_s + period_s, now)   # behind by more than a period: flush again at once
            with self._flush_lock:
                self._drain()
            if self._error is not None:
                return

    def _drain(self) -> None:
        """Append all pending data to the datasets and flush. Errors stop the recording, they do not raise here."""
        if self._error is not None:
            return
        t0 = time.thread_time()
        with self._lock:
            pending, self._pending = self._pending, {name: [] for name in self._pending}
            events, self._pending_events = self._pending_events, []
            trials = [dict(t) for t in self._trials] if self._trials_dirty else None
            self._trials_dirty = False
            n_bytes, self._pending_bytes = self._pending_bytes, 0
        spans = {}
        try:
            self._check_free_space(n_bytes)
            for name, records in pending.items():
                if records:
                    spans[name] = self._append(name, records)
            if events:
                ds = self._file["events"]
                n = ds.shape[0]
                ds.resize((n + len(events),))
                ds[n:] = np.array(events, dtype=EVENT_DTYPE)
            clock = self._file[CLOCK]
            clock.resize((clock.shape[0] + 1,))
            clock[-1:] = np.array([clock_pair()], dtype=CLOCK_DTYPE)
            if trials is not None:
                ds = self._file["trials/table"]
                if ds.shape[0] != len(trials):
                    ds.resize((len(trials),))
                ds[:] = np.array([tuple(_utf8(t[k], TRIAL_DTYPE[k].itemsize) if isinstance(t[k], str) else t[k]
                                       for k in TRIAL_FIELDS) for t in trials], dtype=TRIAL_DTYPE)
            self._file.flush()
            self._check_still_there()
        except (OSError, RuntimeError, ValueError) as exc:
            # Nothing more is written from here on (write, event, flush and close all refuse): the file is
            # closed now, and the sentence says how much it keeps, as read back from it.
            self._roll_back()
            self._close_and_count()
            self._error = RecordingError(self._stopped(exc))
            return
        finally:
            self.writer_cpu_s += time.thread_time() - t0
        self.flushed = {name: self._ds[name][HOST_TIME].shape[0] for name in self.specs}
        self._events_flushed = self._file["events"].shape[0]
        for name, (first, last) in spans.items():
            self.flushed_span_s[name] = (self.flushed_span_s.get(name, (first, last))[0], last)
        if self.on_flush is not None:
            self.on_flush(dict(self.flushed))

    def _roll_back(self) -> None:
        """Shrink every dataset back to its length at the last good flush: the appends of the flush that
        failed are in HDF5's memory, and closing the file would write them if the disk still takes it,
        leaving a file longer than the sentence says (and maybe a stream whose fields outgrew its host time)."""
        lengths = [(d, self.flushed.get(name, 0)) for name, group in self._ds.items() for d in group.values()]
        with contextlib.suppress(Exception):
            lengths.append((self._file["events"], self._events_flushed))
        for d, n in lengths:
            if d.shape[0] != n:
                with contextlib.suppress(Exception):  # a dead disk refuses this too; then nothing is written
                    d.resize((n, *d.shape[1:]))

    def _close_and_count(self) -> None:
        """Close the file after a failed flush and count what a reader finds in it. Shrinking a compressed
        dataset back rewrites its last chunk, which a full disk can refuse, and the metadata written at close
        may be the failed flush's or the last good one's: only the file itself can say what it keeps."""
        self._ds.clear()
        with contextlib.suppress(Exception):
            self._file.close()
        flushed, spans = dict.fromkeys(self.specs, 0), {}
        try:
            with h5py.File(self.path, "r", swmr=True) as f:
                for name in self.specs:
                    group = f["streams"][name]
                    n = min(d.shape[0] for d in group.values())
                    flushed[name] = n
                    if n:
                        spans[name] = (float(group[HOST_TIME][0]), float(group[HOST_TIME][n - 1]))
        except Exception:   # gone or unreadable: the sentence says what the last good flush had
            return
        self.flushed, self.flushed_span_s = flushed, spans

    def _append(self, name: str, records: list[Record]) -> tuple[float, float]:
        g = self._ds[name]
        t = np.concatenate([r.host_time_s for r in records]) if len(records) > 1 else records[0].host_time_s
        n0, n = g[HOST_TIME].shape[0], t.shape[0]
        # Fields first, host time last: a reader (or a crash) that sees host_time_s of length N can rely on
        # every field holding at least N rows; verify reports the shortest length as the usable one.
        for fs in self.specs[name].fields:
            ds = g[fs.name]
            block = np.concatenate([r.data[fs.name] for r in records]) if len(records) > 1 else \
                records[0].data[fs.name]
            ds.resize((n0 + n, *fs.shape))
            ds[n0:] = block
        g[HOST_TIME].resize((n0 + n,))
        g[HOST_TIME][n0:] = t
        return float(t[0]), float(t[-1])

    def _check_free_space(self, n_bytes: int) -> None:
        # Stop *before* HDF5 meets ENOSPC: a write that fails half-way can leave metadata that the
        # next flush makes inconsistent; refusing the whole flush keeps the file exactly as last flushed.
        # The margin: a new chunk takes its full size at once, plus the chunk index and object headers.
        st = os.statvfs(os.path.dirname(os.path.abspath(self.path)))
        n_datasets = sum(len(d) for d in self._ds.values())
        if st.f_bavail * st.f_frsize < n_bytes + CHUNK_BYTES * n_datasets + 64 * 1024:
            raise OSError(errno.ENOSPC, "No space left on device", self.path)

    def _check_still_there(self) -> None:
        # On Linux, writes to a file whose folder was deleted succeed and vanish at close: look, twice a second.
        try:
            if os.stat(self.path).st_ino == self._inode:
                return
        except FileNotFoundError:
            pass
        raise FileNotFoundError(errno.ENOENT, "the session file is no longer at its path", self.path)

    # ------------------------------------------------------------ errors and close
    @property
    def error(self) -> RecordingError | None:
        """Why the recording stopped (one sentence naming the file and what it keeps), None while it records."""
        return self._error

    def kept(self) -> str:
        """What the last good flush put in the file: "the first 12.3 s (daq 12 300 samples, runner 1 230)"."""
        spans = self.flushed_span_s.values()
        if not spans:
            return "no samples"
        seconds = max(last for _, last in spans) - min(first for first, _ in spans)
        counts = ", ".join(f"{name} {n:,}".replace(",", " ") + (" samples" if i == 0 else "")
                           for i, (name, n) in enumerate((k, v) for k, v in self.flushed.items() if v))
        return f"the first {seconds:.1f} s ({counts})"

    def _stopped(self, exc: BaseException) -> str:
        """The one sentence for a recording that stopped: which file, why, and what of it is left."""
        why = self._why(exc)
        try:
            there = os.stat(self.path).st_ino == self._inode
        except OSError:
            there = False
        left = f"the file keeps {self.kept()}" if there else \
            f"nothing is left at that path (it had {self.kept()} when last flushed)"
        return f"recording stopped: {self.path}: {why}; {left}"

    def _check(self) -> None:
        if self._closed:
            raise RecordingError(f"{self.path}: the recording is closed")
        if self._error is not None:
            raise self._error

    def _explain(self, exc: BaseException, what: str) -> str:
        return f"{self.path}: {what}: {self._why(exc)}; everything flushed before this is kept and readable"

    def _why(self, exc: BaseException) -> str:
        folder = os.path.dirname(os.path.abspath(self.path))
        code = getattr(exc, "errno", None)
        text = str(exc)
        if code == errno.ENOSPC or "No space" in text:
            why = "the disk is full"
        elif code == errno.EFBIG or "too large" in text:
            why = "the file size limit was reached"
        elif not os.path.isdir(folder):
            why = f"the output folder {folder} has vanished"
        elif not os.path.exists(self.path):
            why = "the file was deleted while recording"
        elif code in (errno.EACCES, errno.EPERM) or "Permission denied" in text:
            why = "permission to write it was lost"
        elif code == errno.EROFS or "Read-only file system" in text:
            why = "the disk became read-only"
        elif code == errno.EIO or "Input/output error" in text:
            why = "the disk does not answer (input/output error: removed or failing)"
        else:
            why = (getattr(exc, "strerror", None) or text).rstrip(".")
        return why

    def close(self) -> None:
        """Flush everything, then mark the file complete (a clean close). Raises RecordingError if it had failed."""
        if self._closed:
            return
        self._closed = True
        if self._thread is None and self._error is None:
            try:  # nothing was recorded: the file still goes to its path, empty and complete
                self.start()
            except RecordingError as exc:
                self._error = exc
        if self._thread is not None:
            self._stop.set()
            self._wake.set()
            self._thread.join()
        with self._flush_lock:
            self._drain()
        error = self._error
        self._ds.clear()  # drop our dataset handles before the file: none may outlive it into the GC
        with contextlib.suppress(OSError, RuntimeError):  # a failing disk may refuse it; the error says why
            self._file.close()
        if self._inode is None:  # never started: no session file, and no hidden one left behind
            with contextlib.suppress(OSError):
                os.unlink(self._building)
        if error is not None:
            raise error
        try:
            self._finish()
        except OSError as exc:
            raise RecordingError(self._explain(exc, "could not mark the file complete")) from exc

    def _finish(self) -> None:
        """Reopen without SWMR to write what SWMR forbids: trial groups, stop time and the complete flag.
        Without HDF5's file lock: a reader watching the live file (the window's replay, a notebook, `uartlab
        verify`) holds a shared lock that refused this open, and the file was left unfinished; the recorder
        is the file's one writer."""
        with h5py.File(self.path, "r+", libver=LIBVER, locking=False) as f:
            write_trial_groups(f, self._trials, list(self.specs))
            f.attrs["stop_time"] = _now_iso()
            # last, and 1 rather than True (an enum to MATLAB): a crash before this line leaves complete == 0
            f.attrs["complete"] = np.int8(1)

    def __enter__(self) -> SessionRecorder:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
