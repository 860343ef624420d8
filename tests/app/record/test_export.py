"""`uartlab export`: a real twin session as CSV files and as a MATLAB .mat file, the values equal to the HDF5's.

The column names are built from the stream declarations the producers use (uartlab.schema), not spelled here."""

from __future__ import annotations

import csv
import json
import signal
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest
from scipy.io import loadmat
from uartlab import schema
from uartlab.app.cli import main as cli
from uartlab.app.record.export import STREAM_FILE
from uartlab.app.record.player import SessionFile
from uartlab.names import JOINTS, TENDONS


def read_csv(path: Path) -> tuple[list[str], list[str], list[list[str]]]:
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    return rows[0], rows[1], rows[2:]


@pytest.fixture(scope="module")
def csv_folder(twin_session_file, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("export") / "csv"
    assert cli.main(["export", str(twin_session_file), "--to", "csv", "-o", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def mat(twin_session_file, tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("export_mat")
    assert cli.main(["export", str(twin_session_file), "--to", "mat", "-o", str(out)]) == 0
    return loadmat(out / f"{twin_session_file.stem}.mat", squeeze_me=False, simplify_cells=True)


def test_every_stream_has_a_csv_whose_values_are_the_files(csv_folder, twin_session_file):
    with SessionFile(twin_session_file) as f:
        assert sorted(p.stem for p in csv_folder.glob("*.csv")) == sorted(
            [*f.streams, "events", "trials", "clock"])
        for stream, spec in f.streams.items():
            names, units, rows = read_csv(csv_folder / f"{stream}.csv")
            record = f.read(stream)
            assert len(rows) == len(record) > 0 or stream == schema.MODEL_STREAM
            assert names[0] == schema.HOST_TIME and units[0] == "s"
            if not len(record):
                continue   # the model stream: no live model on this run, a header only
            table = np.array(rows, dtype=object).reshape(len(rows), len(names))
            col = {n: i for i, n in enumerate(names)}
            np.testing.assert_array_equal(table[:, 0].astype(float), record.host_time_s)
            assert names[1] == "utc_time_s" and units[1] == "s"
            np.testing.assert_array_equal(table[:, 1].astype(float), f.utc_time_s(record.host_time_s))
            for field in spec.fields:
                values = np.asarray(record.data[field.name]).reshape(len(record), -1)
                for j, column in enumerate(field.columns() or ("",)):
                    name = f"{field.name}[{column}]" if column else field.name
                    assert units[col[name]] == (field.units_of_columns()[j] if field.shape else field.units)
                    # read as a double, then as the stored type: a float32 column is written to float32's precision
                    got = table[:, col[name]].astype(float).astype(values.dtype)
                    np.testing.assert_array_equal(got, values[:, j], err_msg=f"{stream} {name}")


def test_vector_columns_are_named_by_tendon_joint_and_axis(csv_folder):
    daq_names, daq_units, _ = read_csv(csv_folder / "daq.csv")
    assert [n for n in daq_names if n.startswith("tendon_force_N[")] == [f"tendon_force_N[{t}]" for t in TENDONS]
    wrench = {n: u for n, u in zip(daq_names, daq_units, strict=True) if n.startswith("wrench[")}
    assert wrench == {"wrench[Fx]": "N", "wrench[Fy]": "N", "wrench[Fz]": "N",
                      "wrench[Tx]": "N*m", "wrench[Ty]": "N*m", "wrench[Tz]": "N*m"}
    joints, units, _ = read_csv(csv_folder / "joints.csv")
    assert [n for n in joints if n.startswith("angles_rad[")] == [f"angles_rad[{j}]" for j in JOINTS]
    assert "1" in units and "" not in units[:len(joints)]   # dimensionless is "1", never empty
    mocap, _, _ = read_csv(csv_folder / "mocap.csv")
    assert [n for n in mocap if n.startswith("markers_m[")][:3] == [
        f"markers_m[{m}.{a}]" for m in mocap_markers(csv_folder) for a in "xyz"][:3]


def mocap_markers(csv_folder: Path) -> list[str]:
    names, _, _ = read_csv(csv_folder / "mocap.csv")
    return list(dict.fromkeys(n[len("markers_m["):-1].rsplit(".", 1)[0] for n in names if n.startswith("markers_m[")))


def test_phase_has_its_word_beside_its_number(csv_folder):
    names, _, rows = read_csv(csv_folder / "runner.csv")
    i, j = names.index("phase"), names.index("phase_name")
    seen = {(r[i], r[j]) for r in rows}
    assert seen and all(word == schema.PHASES[int(code)].value for code, word in seen)
    assert ("5", "RECORD") in seen


def test_events_and_trials_csv_match_the_file(csv_folder, twin_session_file):
    with SessionFile(twin_session_file) as f:
        events, trials = f.events(), f.trials()
    names, _, rows = read_csv(csv_folder / "events.csv")
    assert names == ["host_time_s", "kind", "source", "message"]
    assert [(float(r[0]), r[1], r[2], r[3]) for r in rows] == [(e.host_time_s, str(e.kind), e.source, e.message)
                                                              for e in events]
    names, _, rows = read_csv(csv_folder / "trials.csv")
    assert [r[names.index("name")] for r in rows] == [t["name"] for t in trials]
    assert [float(r[names.index("stop_host_time_s")]) for r in rows] == [t["stop_host_time_s"] for t in trials]
    assert [json.loads(r[names.index("parameters_json")]) for r in rows] == [t["parameters"] for t in trials]


def test_mat_has_a_struct_per_stream_equal_to_the_file(mat, twin_session_file):
    with h5py.File(twin_session_file, "r") as h5, SessionFile(twin_session_file) as f:
        for stream, spec in f.streams.items():
            s = mat[stream]
            np.testing.assert_array_equal(np.ravel(s["host_time_s"]), h5[f"streams/{stream}/host_time_s"][:])
            for field in spec.fields:
                stored = h5[f"streams/{stream}/{field.name}"][:]
                np.testing.assert_array_equal(np.reshape(s[field.name], stored.shape), stored,
                                              err_msg=f"{stream}.{field.name}")
                assert s["units"][field.name] == field.units
        assert list(mat["daq"]["columns"]["tendon_force_N"]) == list(TENDONS)
        assert list(mat["runner"]["codes"]["phase"]) == [p.value for p in schema.PHASES]
        assert mat["actuators"]["moving"].dtype == np.uint8
        assert list(np.atleast_1d(mat["events"]["kind"])) == [str(e.kind) for e in f.events()]
        assert mat["session"]["schema"] == h5.attrs["schema"]
        assert mat["session"]["rig_toml"] == f.config_text
        np.testing.assert_array_equal(np.reshape(mat["clock"]["utc_time_s"], -1), h5["clock"]["utc_time_s"])


def test_a_file_that_is_not_a_session_is_one_line_and_exit_2(tmp_path, capsys):
    other = tmp_path / "other.h5"
    with h5py.File(other, "w") as f:
        f["x"] = np.arange(3)
    assert cli.main(["export", str(other), "--to", "mat"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not a uartlab session file" in err[0] and str(other) in err[0]


@pytest.fixture
def model_session(tmp_path) -> Path:
    from uartlab.app.compare.synthetic import write_model_session
    from uartlab.sim.scenarios import free_motion_trial

    path = tmp_path / "session.h5"
    write_model_session(path, [free_motion_trial("FDP")], repeats=1, seed=1)
    return path


@pytest.mark.parametrize("to", ["csv", "mat"])
def test_an_export_never_replaces_files_already_there_unless_asked(model_session, tmp_path, capsys, to):
    out = tmp_path / "out"
    assert cli.main(["export", str(model_session), "--to", to, "-o", str(out)]) == 0
    before = {p: p.read_bytes() for p in out.iterdir()}
    for p in before:                 # as another session's export would be
        p.write_bytes(b"another session's")
    capsys.readouterr()
    assert cli.main(["export", str(model_session), "--to", to, "-o", str(out)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    first = sorted(before)[0] if to == "mat" else out / "actuators.csv"
    assert line.startswith(f"uartlab export: {first}") and "already there" in line and "--overwrite" in line
    assert all(p.read_bytes() == b"another session's" for p in before)
    assert cli.main(["export", str(model_session), "--to", to, "-o", str(out), "--overwrite"]) == 0
    assert sorted(out.iterdir()) == sorted(before)
    assert all(p.read_bytes() != b"another session's" for p in before)   # (a .mat's header has its time)


def test_an_export_stopped_by_a_damaged_chunk_leaves_only_whole_files(model_session, tmp_path):
    from conftest import damage_chunk

    damage_chunk(str(model_session), f"/streams/{schema.DAQ.stream}/{schema.DAQ.pot_V}", 0)
    out = tmp_path / "out"
    assert cli.main(["export", str(model_session), "--to", "csv", "-o", str(out)]) == 2
    written = out / STREAM_FILE.format(stream=schema.ACTUATORS.stream)   # before the daq stream, whole
    assert list(out.iterdir()) == [written]
    names, _, rows = read_csv(written)
    with SessionFile(model_session) as f:
        assert len(rows) == f.length(schema.ACTUATORS.stream)


def test_what_a_killed_export_left_half_built_goes_with_the_next_export_of_that_file(model_session, tmp_path):
    """kill -9 mid-write leaves the hidden part of the file (never the file's name); the next export of that
    file removes it and says so, and leaves another file's part alone."""
    out = tmp_path / "out"
    out.mkdir()
    target = out / f"{model_session.stem}.mat"
    killed = subprocess.run(   # the real builder, killed inside its block as `kill -9` would
        [sys.executable, "-c", "import os, signal, sys\nfrom uartlab.app.record.writer import built_whole\n"
         "with built_whole(sys.argv[1]) as part:\n    open(part, 'w').write('half')\n"
         "    os.kill(os.getpid(), signal.SIGKILL)", str(target)], capture_output=True, timeout=60)
    assert killed.returncode == -signal.SIGKILL
    (left,) = out.iterdir()
    assert left.name.startswith(f".{target.name}.")
    other = out / left.name.replace(target.name, "another.mat")   # another file's part, of the same dead pid
    other.write_text("half")
    proc = subprocess.run([sys.executable, "-m", "uartlab.app.cli", "export", str(model_session), "--to", "mat",
                           "-o", str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert sorted(out.iterdir()) == sorted([target, other])
    assert f"removed {left}: a part of {target.name} that a killed command was building (never whole)" in proc.stderr
