"""A session file as CSV files or one MATLAB .mat file, for analysts who do not want HDF5.

CSV (``export_csv``): one ``<stream>.csv`` per stream, then ``events.csv``, ``trials.csv`` and ``clock.csv``.
Each stream's rows start with ``host_time_s`` and, where the file has a /clock, ``utc_time_s``. Two header
rows: the column names (a vector field's columns as ``tendon_force_N[FDP]``, ``markers_m[MC_dist.x]``, from
the stream declarations' labels) and their units ("1": dimensionless), which MATLAB's ``readtable`` reads
as ``VariableNamesLine`` 1 and ``VariableUnitsLine`` 2 and pandas as ``header=[0, 1]``. A coded field
(``phase``) has its word beside it (``phase_name``); flags are 0/1. Floats are written with the shortest text
that reads back to the same double (``repr``; a float32 the shortest that reads back to the same float32), so
the CSV holds exactly the HDF5's values.

MATLAB (``export_mat``): one struct per stream (``daq.host_time_s``, ``daq.tendon_force_N`` N x 6 ...), with
``daq.units`` and ``daq.columns`` structs naming each field's unit and columns, plus ``events``, ``trials``,
``clock`` and ``session`` (the root attributes and the embedded rig.toml). Level 5 .mat files hold at most 2 GB
per variable; a longer session is for the HDF5 file itself (MATLAB's h5read, docs/session-file.md).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from uartlab.app.record.player import SessionFile
from uartlab.app.record.writer import built_whole
from uartlab.streams import HOST_TIME, FieldSpec, StreamSpec

BLOCK_ROWS = 20_000      # rows read and written at a time: a long DAQ stream never sits in memory whole
STREAM_FILE = "{stream}.csv"
UTC_TIME = "utc_time_s"  # each sample's UTC (POSIX s) through /clock, for lining up with other recordings


def column_names(spec: StreamSpec, utc: bool = True) -> list[tuple[str, str]]:
    """(name, unit) of every CSV column of a stream: host time first, then its UTC (a file with a /clock)."""
    out = [(HOST_TIME, "s")] + ([(UTC_TIME, "s")] if utc else [])
    for f in spec.fields:
        if f.shape:
            out += [(f"{f.name}[{c}]", u) for c, u in zip(f.columns(), f.units_of_columns(), strict=True)]
        else:
            out.append((f.name, f.units))
        if _worded(f):
            out.append((f"{f.name}_name", ""))
    return out


def _worded(f: FieldSpec) -> bool:
    """A coded field whose words go beside its numbers (a flag's 0/1 says enough)."""
    return bool(f.codes) and f.dtype != "?"


def _text(value) -> str:
    """One value as its CSV text (``_texts`` of a one-element array: one rule for every value written)."""
    return str(_texts(np.asarray([value]))[0])


def _texts(values: np.ndarray) -> np.ndarray:
    """Every element's CSV text at once: floats as the shortest text that reads back to the same value (numpy's
    float-to-text, per element in C; a float32 the shortest for a float32), NaN/Inf/-Inf, flags 0/1."""
    if values.dtype == np.bool_:
        return np.where(values, "1", "0")
    out = values.astype(str)
    if values.dtype.kind == "f":
        out[np.isnan(values)] = "NaN"
        out[np.isposinf(values)] = "Inf"
        out[np.isneginf(values)] = "-Inf"
    return out


def _rows(session: SessionFile, stream: str, utc: bool) -> Iterator[list[str]]:
    spec = session.streams[stream]
    for record in session.records(stream, block_size=BLOCK_ROWS):
        n = len(record)
        columns: list[np.ndarray] = [_texts(record.host_time_s[:, None])]
        if utc:
            columns.append(_texts(session.utc_time_s(record.host_time_s)[:, None]))
        for f in spec.fields:
            values = np.asarray(record.data[f.name])
            columns.append(_texts(values.reshape(n, -1)))
            if _worded(f):
                words = np.array([*f.codes, ""])
                known = (values >= 0) & (values < len(f.codes))
                named = words[np.where(known, values, len(f.codes))]
                columns.append(np.where(known, named, values.astype(str))[:, None])
        yield from np.concatenate(columns, axis=1).tolist()


TABLE_FILES = ("events.csv", "trials.csv", "clock.csv")


def csv_paths(session: SessionFile, folder: Path) -> list[Path]:
    """The files ``export_csv`` writes into ``folder``: one per stream, then the tables."""
    return [folder / STREAM_FILE.format(stream=stream) for stream in session.streams] + \
        [folder / name for name in TABLE_FILES]


def export_csv(session: SessionFile, folder: Path) -> list[Path]:
    """Write the CSV files into ``folder`` (made if missing); returns their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    utc = session.clock().shape[0] > 0
    for stream, spec in session.streams.items():
        path = folder / STREAM_FILE.format(stream=stream)
        names = column_names(spec, utc)
        _write(path, [[n for n, _ in names], [u for _, u in names]], _rows(session, stream, utc))
        written.append(path)
    events = session.events()
    written.append(_write(folder / "events.csv", [[HOST_TIME, "kind", "source", "message"], ["s", "", "", ""]],
                          ([_text(e.host_time_s), str(e.kind), e.source, e.message] for e in events)))
    trials = session.trials()
    keys = [k for k in trials[0] if k != "parameters"] if trials else \
        ["index", "name", "protocol", "repeat", "start_host_time_s", "stop_host_time_s", "outcome"]
    units = ["s" if k.endswith("_s") else ("" if k in TEXT_TRIAL_COLUMNS else "1") for k in keys]
    written.append(_write(folder / "trials.csv", [keys + ["parameters_json"], units + [""]],
                          ([_text(t[k]) for k in keys] + [json.dumps(t["parameters"], sort_keys=True)]
                           for t in trials)))
    clock = session.clock()
    written.append(_write(folder / "clock.csv", [[HOST_TIME, "utc_time_s"], ["s", "s"]],
                          ([_text(h), _text(u)] for h, u in clock)))
    return written


TEXT_TRIAL_COLUMNS = ("name", "protocol", "outcome")


def _write(path: Path, header: list[list[str]], rows) -> Path:
    with built_whole(path) as partial, open(partial, "w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh)
        out.writerows(header)
        out.writerows(rows)
    return path


# ------------------------------------------------------------------ MATLAB
def _cell(texts) -> np.ndarray:
    """A MATLAB cell array of character vectors (savemat writes an object array as a cell)."""
    out = np.empty((len(texts), 1), dtype=object)
    for i, t in enumerate(texts):
        out[i, 0] = str(t)
    return out


def mat_struct(session: SessionFile, stream: str) -> dict:
    spec = session.streams[stream]
    record = session.read(stream)
    out: dict = {HOST_TIME: record.host_time_s[:, None]}
    for f in spec.fields:
        values = np.asarray(record.data[f.name])
        out[f.name] = values.astype(np.uint8) if f.dtype == "?" else (values if f.shape else values[:, None])
    out["units"] = {HOST_TIME: "s", **{f.name: f.units for f in spec.fields}}
    out["columns"] = {f.name: _cell(f.columns()) for f in spec.fields if f.shape}
    out["codes"] = {f.name: _cell(f.codes) for f in spec.fields if f.codes}   # name of value v: codes{v + 1}
    return out


def export_mat(session: SessionFile, path: Path) -> Path:
    """Write one .mat file (MATLAB level 5, compressed); returns its path."""
    from scipy.io import savemat

    events = session.events()
    trials = session.trials()
    clock = session.clock()
    data: dict = {name: mat_struct(session, name) for name in session.streams}
    data["events"] = {HOST_TIME: np.array([e.host_time_s for e in events], dtype="f8")[:, None],
                      "kind": _cell([str(e.kind) for e in events]),
                      "source": _cell([e.source for e in events]), "message": _cell([e.message for e in events])}
    data["trials"] = {k: (_cell([t[k] for t in trials]) if trials and isinstance(trials[0][k], str) else
                          np.array([t[k] for t in trials], dtype="f8")[:, None])
                      for k in ("index", "name", "protocol", "repeat", "start_host_time_s", "stop_host_time_s",
                                "outcome")}
    data["trials"]["parameters_json"] = _cell([json.dumps(t["parameters"], sort_keys=True) for t in trials])
    data["clock"] = {HOST_TIME: np.array([h for h, _ in clock], dtype="f8")[:, None],
                     "utc_time_s": np.array([u for _, u in clock], dtype="f8")[:, None]}
    data["session"] = {**{k: _mat_value(v) for k, v in session.metadata.items()}, "rig_toml": session.config_text}
    path.parent.mkdir(parents=True, exist_ok=True)
    with built_whole(path) as partial, open(partial, "wb") as fh:
        savemat(fh, data, do_compression=True, long_field_names=True, oned_as="column")
    return path


def _mat_value(value):
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, np.ndarray) and value.dtype.kind in "OSU":
        return _cell([v.decode("utf-8", "replace") if isinstance(v, bytes) else v for v in value])
    return value
