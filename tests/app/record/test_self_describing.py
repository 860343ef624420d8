"""A real twin session file describes itself to h5py, MATLAB and pandas users: every vector field names its
columns, one unit per dataset (or one per column, the wrench), flags and phases as numbers with their meaning,
the event kinds, a wall-clock anchor, the rig's TOML and the command line; and uartlab.session/1 files, written
here in the old layout through h5py, still read."""

from __future__ import annotations

import datetime as dt
import time

import h5py
import numpy as np
from uartlab import schema
from uartlab.app.record.export import export_csv
from uartlab.app.record.player import SessionFile
from uartlab.app.record.verify import verify
from uartlab.app.record.writer import SCHEMA, SessionRecorder
from uartlab.app.rig.config import parse_rig_config
from uartlab.names import JOINTS, TENDONS
from uartlab.streams import Event, EventKind, Record


def texts(values) -> list[str]:
    return [v.decode() if isinstance(v, bytes) else str(v) for v in values]


def test_every_vector_field_names_its_columns_as_declared(twin_session_file):
    specs = schema.declared_specs()
    with h5py.File(twin_session_file, "r") as f:
        assert f.attrs["schema"] == SCHEMA == "uartlab.session/2"
        for stream, group in f["streams"].items():
            for name in texts(group.attrs["fields"]):
                d, declared = group[name], specs[stream].field(name)
                assert d.attrs["units"] != "", f"{stream}/{name} has no unit"
                if d.ndim > 1:
                    assert texts(d.attrs["columns"]) == list(declared.columns()) if stream != "mocap" else \
                        len(d.attrs["columns"]) == int(np.prod(d.shape[1:]))
        assert texts(f["streams/daq/tendon_force_N"].attrs["columns"]) == list(TENDONS)
        assert texts(f["streams/joints/angles_rad"].attrs["columns"]) == list(JOINTS)
        assert texts(f["streams/model/fingertip_force_N"].attrs["columns"]) == ["x", "y", "z"]
        markers = f["streams/mocap/markers_m"]
        assert "labels_axis1" not in f["streams/daq/tendon_force_N"].attrs   # one axis: its columns say it
        assert texts(markers.attrs["labels_axis2"]) == ["x", "y", "z"]
        assert len(markers.attrs["labels_axis1"]) == markers.shape[1]
        wrench = f["streams/daq/wrench"]
        assert texts(wrench.attrs["columns"]) == ["Fx", "Fy", "Fz", "Tx", "Ty", "Tz"]
        assert texts(wrench.attrs["column_units"]) == ["N", "N", "N", "N*m", "N*m", "N*m"]
        assert f["streams/runner/joint_speed_rad_s"].attrs["units"] == "rad/s"


def test_flags_and_phases_are_numbers_with_their_meaning(twin_session_file):
    with h5py.File(twin_session_file, "r") as f:
        moving = f["streams/actuators/moving"]
        assert moving.dtype == np.uint8 and set(np.unique(moving[:])) <= {0, 1}
        assert texts(moving.attrs["enum_names"]) == ["false", "true"]
        assert list(moving.attrs["enum_values"]) == [0, 1]
        for stream in ("runner", "model"):
            phase = f[f"streams/{stream}/phase"]
            assert texts(phase.attrs["enum_names"]) == [p.value for p in schema.PHASES]
            assert list(phase.attrs["enum_values"]) == list(range(len(schema.PHASES)))
        words = texts(f["streams/runner/phase"].attrs["enum_names"])
        assert "RECORD" in {words[i] for i in f["streams/runner/phase"][:]}
        assert texts(f["events"].attrs["kind_names"]) == [k.value for k in EventKind]
    with SessionFile(twin_session_file) as s:    # uartlab reads the flag back as the bool it was
        assert s.read("actuators", 0, 5).data["moving"].dtype == bool


def test_the_clock_ties_host_time_to_utc(twin_session_file):
    with h5py.File(twin_session_file, "r") as f, SessionFile(twin_session_file) as s:
        clock = f["clock"][:]
        start = dt.datetime.fromisoformat(f.attrs["start_time"]).timestamp()
        first_daq = f["streams/daq/host_time_s"][0]
        span = f["streams/daq/host_time_s"][-1] - first_daq
        first_daq_utc = s.utc_time_s(first_daq)
    assert clock.size >= span / 1.5      # at the start and at every flush (1 s on the twin rig)
    assert np.all(np.diff(clock["host_time_s"]) > 0) and np.all(np.diff(clock["utc_time_s"]) > 0)
    # each pair is read together, so the offset holds from row to row; where NTP sets or slews the system clock
    # while recording (once in a CI run: 95 ms) the rows record the jump, and a row or two differ by that much
    steps_s = np.abs(np.diff(clock["utc_time_s"] - clock["host_time_s"]))
    assert np.median(steps_s) < 1e-3
    assert abs(first_daq_utc - start) < 2.0   # the first sample within the rig's start-up of the file's start


def test_the_rig_config_is_its_toml_and_the_command_line_is_kept(twin_session_file):
    with h5py.File(twin_session_file, "r") as f:
        text = f["config/rig_toml"][()].decode()
        assert "[actuators]" in text and not text.startswith("RigConfig(")
        assert parse_rig_config(text, "embedded.toml").twin.perturbation == 0.15
        assert f.attrs["command_line"]
        assert {"software_version", "python_version", "h5py_version", "hdf5_version"} <= set(f.attrs)
        assert "[sea.FDP]" in f["config/calibration/sea.toml"][()].decode()


def write_v1(path) -> None:
    """A session in the uartlab.session/1 layout, as that version wrote it: flags as HDF5 bools, no columns,
    units "" and "N, N·m", no /clock."""
    with h5py.File(path, "w", libver=("v110", "v110")) as f:
        f.attrs.update({"schema": "uartlab.session/1", "software_version": "0.1.0", "complete": np.int8(1),
                        "start_time": "2025-03-01T10:00:00.000+01:00", "stop_time": "2025-03-01T10:00:01.000+01:00"})
        f.create_group("config").create_dataset("rig_toml", data="[twin]\nspeed = 1.0\n", dtype=h5py.string_dtype())
        g = f.create_group("streams").create_group("actuators")
        g.attrs.update({"device": "MX-64 bus", "nominal_rate_hz": 200.0, "device_clock": "", "fields":
                        ["excursion_m", "moving"]})
        g["host_time_s"] = np.array([1.0, 1.005, 1.010])
        g["host_time_s"].attrs.update({"units": "s", "description": "host monotonic clock", "dtype": "f8"})
        g["excursion_m"] = np.full((3, 6), 0.001)
        g["excursion_m"].attrs.update({"units": "m", "description": "tendon excursion", "dtype": "f8"})
        g["moving"] = np.array([[True] * 6, [False] * 6, [True] * 6])
        g["moving"].attrs.update({"units": "", "description": "Moving flag", "dtype": "?"})
        d = f.create_group("streams/daq")
        d.attrs.update({"device": "USB-6210", "nominal_rate_hz": 1000.0, "device_clock": "", "fields": ["wrench"]})
        d["host_time_s"] = np.array([1.0])
        d["host_time_s"].attrs.update({"units": "s", "description": "host monotonic clock", "dtype": "f8"})
        d["wrench"] = np.zeros((1, 6))
        d["wrench"].attrs.update({"units": "N, N·m", "description": "Nano17", "dtype": "f8"})
        ev = np.dtype([("host_time_s", "f8"), ("kind", h5py.string_dtype("utf-8", 32)),
                       ("source", h5py.string_dtype("utf-8", 64)), ("message", h5py.string_dtype("utf-8", 512))])
        f["events"] = np.array([(1.0, b"phase", b"runner", b"SAFE -> ARMED")], dtype=ev)
        tr = np.dtype([("index", "i4"), ("name", h5py.string_dtype("utf-8", 64)),
                       ("protocol", h5py.string_dtype("utf-8", 128)),
                       ("parameters_json", h5py.string_dtype("utf-8", 2048)), ("repeat", "i4"),
                       ("start_host_time_s", "f8"), ("stop_host_time_s", "f8"),
                       ("outcome", h5py.string_dtype("utf-8", 64))])
        f.create_group("trials")["table"] = np.array([(1, b"free/FDP", b"free_motion", b"{}", 1, 1.0, 1.01,
                                                       b"settled")], dtype=tr)
        f["trials"].create_group("0001_free_FDP").attrs.update({"index": 1, "name": "free/FDP"})   # a clean close's


def test_a_schema_1_file_still_reads_and_exports(tmp_path):
    path = tmp_path / "old.h5"
    write_v1(path)
    with SessionFile(path) as s:
        assert s.complete and s.metadata["schema"] == "uartlab.session/1"
        rec = s.read("actuators")
        assert rec.data["moving"].dtype == bool and rec.data["moving"][:, 0].tolist() == [True, False, True]
        assert s.streams["daq"].field("wrench").units == "N, N·m"
        assert [str(e.kind) for e in s.events()] == ["phase"] and s.trials()[0]["outcome"] == "settled"
        assert np.isnan(s.utc_time_s(1.0)) and s.clock().shape == (0, 2)
        written = export_csv(s, tmp_path / "csv")
    header, _, first = (tmp_path / "csv" / "actuators.csv").read_text().splitlines()[:3]
    assert first.endswith("1,1,1,1,1,1") and "utc_time_s" not in header   # no /clock: no UTC to give
    assert len(written) == 5
    report = verify(path)
    assert report.readable and report.exit_code == 0, report.summary


def test_a_recorder_adds_a_clock_row_at_every_flush(tmp_path):
    spec = schema.actuators_spec(200.0)
    with SessionRecorder(tmp_path / "s.h5", flush_interval_s=0.05) as rec:
        rec.add_stream(spec)
        for i in range(3):
            rec.write(Record.single("actuators", time.monotonic(), **{
                f.name: np.zeros(f.shape, dtype=f.dtype) for f in spec.fields}))
            rec.event(Event(time.monotonic(), EventKind.OPERATOR, "test", f"flush {i}"))
            rec.flush()
    with h5py.File(tmp_path / "s.h5", "r") as f:
        assert f["clock"].shape[0] >= 4   # the start, three flushes, the close
