"""`uartlab verify`: clean, killed, corrupted, incomplete and foreign files; exit codes; what h5dump shows."""

from __future__ import annotations

import json
import shutil
import subprocess
import time

import h5py
import numpy as np
import pytest
from conftest import killed_after_a_flush
from uartlab.app.cli.main import main
from uartlab.app.record.verify import EXIT_CLEAN, EXIT_INCOMPLETE, EXIT_UNREADABLE, verify
from uartlab.app.record.writer import KNOWN_SCHEMAS, SessionRecorder
from uartlab.schema import daq_spec, declared_specs
from uartlab.streams import Event, EventKind, FieldSpec, Record, StreamSpec

DAQ = StreamSpec("daq", "twin", (FieldSpec("volts", "f8", (13,), "V", "analog inputs"),), 1000.0)


def _write(path, n_blocks: int = 5, close: bool = True) -> SessionRecorder:
    rec = SessionRecorder(path, {"operator": "t"}, flush_interval_s=0.05)
    rec.add_stream(DAQ)
    for i in range(n_blocks):
        rec.write(Record("daq", i + np.arange(10) / 10, {"volts": np.full((10, 13), i, dtype="f8")}))
    rec.event(Event(3.5, "fault", "daq", "overflow"))
    if close:
        rec.close()
    return rec




@pytest.fixture
def killed_file(tmp_path):
    return killed_after_a_flush(tmp_path / "killed.h5", lambda path: _write(path, close=False))


def run_main(path, as_json=False) -> int:
    """`uartlab verify FILE [--json]`, in-process."""
    return main(["verify", str(path), *(["--json"] if as_json else [])])


def test_clean_close(tmp_path, capsys):
    _write(tmp_path / "s.h5")
    report = verify(tmp_path / "s.h5")
    assert report.complete and report.exit_code == EXIT_CLEAN
    assert report.streams[0].samples == 50 and report.n_events == 1
    assert run_main(tmp_path / "s.h5") == EXIT_CLEAN
    assert "clean close" in capsys.readouterr().out


def test_killed_file_says_what_is_left(killed_file, capsys):
    report = verify(killed_file)
    assert report.readable and not report.complete and report.exit_code == EXIT_INCOMPLETE
    assert "not closed cleanly" in report.summary
    assert "daq 50 up to t=4.900 s" in report.summary and "overflow" in report.summary
    assert run_main(killed_file, as_json=True) == EXIT_INCOMPLETE
    assert json.loads(capsys.readouterr().out)["streams"][0]["samples"] == 50


def test_not_hdf5_and_truncated_are_unreadable(tmp_path):
    (tmp_path / "x.h5").write_text("not an hdf5 file")
    assert verify(tmp_path / "x.h5").exit_code == EXIT_UNREADABLE
    assert run_main(tmp_path / "missing.h5") == EXIT_UNREADABLE
    _write(tmp_path / "s.h5")
    data = (tmp_path / "s.h5").read_bytes()
    (tmp_path / "cut.h5").write_bytes(data[:200])  # the superblock and little else
    assert verify(tmp_path / "cut.h5").exit_code == EXIT_UNREADABLE


def test_foreign_hdf5_file_is_not_a_session(tmp_path):
    with h5py.File(tmp_path / "other.h5", "w") as f:
        f["x"] = np.arange(3)
    report = verify(tmp_path / "other.h5")
    assert report.exit_code == EXIT_UNREADABLE and "not a uartlab session file" in report.summary


def test_backwards_host_time_is_a_problem(tmp_path):
    path = tmp_path / "s.h5"
    rec = SessionRecorder(path, {}, flush_interval_s=0.05)
    rec.add_stream(DAQ)
    rec.write(Record("daq", np.array([2.0, 1.0]), {"volts": np.zeros((2, 13))}))
    rec.close()
    report = verify(path)
    assert report.exit_code == EXIT_INCOMPLETE and "backwards" in report.summary


@pytest.mark.skipif(shutil.which("h5dump") is None, reason="h5dump not installed (apt-get install hdf5-tools)")
def test_h5dump_shows_streams_with_units(tmp_path):
    _write(tmp_path / "s.h5")
    out = subprocess.run(["h5dump", "-H", "-A", str(tmp_path / "s.h5")], capture_output=True, text=True,
                         check=True).stdout
    assert 'DATASET "volts"' in out and 'DATASET "host_time_s"' in out
    assert 'ATTRIBUTE "units"' in out and '"V"' in out
    assert 'DATASET "events"' in out and 'ATTRIBUTE "complete"' in out


@pytest.mark.skipif(shutil.which("h5clear") is None, reason="h5clear not installed (apt-get install hdf5-tools)")
def test_h5clear_makes_a_killed_file_open_for_h5dump(killed_file):
    assert subprocess.run(["h5dump", "-H", killed_file], capture_output=True).returncode != 0
    subprocess.run(["h5clear", "-s", killed_file], check=True, capture_output=True)
    time.sleep(0.01)
    assert subprocess.run(["h5dump", "-H", killed_file], capture_output=True).returncode == 0
    assert verify(killed_file).exit_code == EXIT_INCOMPLETE  # still says it was not closed cleanly


# ------------------------------------------------------------------ completeness against the declarations
def _rig_session(path, close: bool = True, trial_stop_s: float | None = 1.5) -> SessionRecorder:
    """A session of the rig's declared streams (uartlab.schema), one trial, a fault event."""
    rec = SessionRecorder(path, {"operator": "t"}, flush_interval_s=0.05)
    for spec in declared_specs(rate_hz=100.0).values():
        rec.add_stream(spec)
    daq = daq_spec(100.0)
    for i in range(3):
        t = 1.0 + i + np.arange(100) / 100
        rec.write(Record(daq.name, t, {f.name: np.full((100, *f.shape), i, dtype=f.dtype) for f in daq.fields}))
    rec.event(Event(1.2, EventKind.FAULT, "daq", "overflow"))
    rec.begin_trial("free/FDP", "short", {"pose": "Flex"}, 0, host_time_s=1.1)
    if trial_stop_s is not None:
        rec.end_trial("settled", host_time_s=trial_stop_s)
    if close:
        rec.close()
    else:
        rec.flush()
    return rec


def _edit(path, change) -> None:
    with h5py.File(path, "r+") as f:
        change(f)


def _problems(path) -> list[str]:
    return verify(path).problems


def test_a_clean_rig_session_has_no_problem(tmp_path):
    _rig_session(tmp_path / "s.h5")
    report = verify(tmp_path / "s.h5")
    assert report.exit_code == EXIT_CLEAN and report.problems == [], report.summary
    assert {s.name for s in report.streams} == set(declared_specs())


@pytest.mark.parametrize(("change", "line"), [
    (lambda f: f["streams"].__delitem__("daq"), "/streams/daq: missing (the session declared it)"),
    (lambda f: f.__delitem__("events"), "/events: missing"),
    (lambda f: f["trials"].__delitem__("table"), "/trials/table: missing"),
    (lambda f: f["streams/daq/pot_V"].resize((250, 6)), "/streams/daq: dataset lengths differ"),
    (lambda f: f["streams/daq"].__delitem__("gauge_V"), "/streams/daq/gauge_V: missing (a field of the stream)"),
    (lambda f: f["streams/daq"].__delitem__("host_time_s"), "/streams/daq/host_time_s: missing (every sample"),
    (lambda f: (f["streams/daq"].__delitem__("pot_V"), f["streams/daq"].create_dataset("pot_V", data="edited")),
     "/streams/daq/pot_V: a single text value, not one row of numbers per sample"),
    (lambda f: (f["streams/daq"].__delitem__("host_time_s"),
                f["streams/daq"].create_dataset("host_time_s", data=np.zeros((250, 2)))),
     "/streams/daq/host_time_s: float64 of shape (250, 2), not one time in seconds per sample"),
    (lambda f: f["trials"].__delitem__("0001_free_FDP"), "/trials/0001_free_FDP: missing (the clean close writes"),
    (lambda f: f["streams"].attrs.__delitem__("declared"), "/streams: no 'declared' attribute"),
])
def test_an_incomplete_file_fails_with_one_line_naming_the_dataset(tmp_path, change, line, capsys):
    _rig_session(tmp_path / "s.h5")
    _edit(tmp_path / "s.h5", change)
    report = verify(tmp_path / "s.h5")
    assert report.exit_code == EXIT_INCOMPLETE, report.summary
    assert any(p.startswith(line) for p in report.problems), report.problems
    assert run_main(tmp_path / "s.h5") == EXIT_INCOMPLETE
    assert f"  problem: {line}" in capsys.readouterr().out


def _trial_times(f, start_s: float, stop_s: float) -> None:
    rows = f["trials/table"][:]
    rows["start_host_time_s"], rows["stop_host_time_s"] = start_s, stop_s
    f["trials/table"][:] = rows


@pytest.mark.parametrize(("start_s", "stop_s", "line"), [
    (1.5, 1.2, "stops at 1.200 s, before its start 1.500 s"),
    (50.0, 51.0, "start 50.000 s is outside the session (1.000 to 3.990 s)"),
    (1.1, 70.0, "stop 70.000 s is after the session's end (3.990 s)"),
    (1.1, np.nan, "never stopped"),
])
def test_trials_inconsistent_with_the_session_are_problems(tmp_path, start_s, stop_s, line):
    _rig_session(tmp_path / "s.h5")
    _edit(tmp_path / "s.h5", lambda f: _trial_times(f, start_s, stop_s))
    assert any(p.startswith("/trials/table row 0 (trial 1 'free/FDP'): ") and line in p
               for p in _problems(tmp_path / "s.h5")), _problems(tmp_path / "s.h5")


def test_a_trial_running_at_a_crash_is_no_problem(tmp_path):
    _rig_session(tmp_path / "s.h5", trial_stop_s=None)   # closed with the trial running: a problem
    assert any("never stopped" in p for p in _problems(tmp_path / "s.h5"))
    _edit(tmp_path / "s.h5", lambda f: f.attrs.__setitem__("complete", np.int8(0)))   # as a crash leaves it
    report = verify(tmp_path / "s.h5")
    assert report.exit_code == EXIT_INCOMPLETE and report.problems == [], report.problems


@pytest.mark.parametrize("schema", ["uartlab.session/9", "uartlab.session/0"])
def test_a_schema_this_version_does_not_know_is_refused(tmp_path, schema, capsys):
    _rig_session(tmp_path / "s.h5")
    _edit(tmp_path / "s.h5", lambda f: f.attrs.__setitem__("schema", schema))
    report = verify(tmp_path / "s.h5")
    assert report.exit_code == EXIT_UNREADABLE
    assert run_main(tmp_path / "s.h5") == EXIT_UNREADABLE
    (line,) = capsys.readouterr().err.splitlines()
    assert line == (f"uartlab verify: {tmp_path / 's.h5'}: schema {schema!r} is not one this uartlab reads "
                    f"({', '.join(sorted(KNOWN_SCHEMAS))})")


def test_every_known_schema_is_read(tmp_path):
    for i, schema in enumerate(sorted(KNOWN_SCHEMAS)):
        _rig_session(tmp_path / f"s{i}.h5")
        _edit(tmp_path / f"s{i}.h5", lambda f, schema=schema: f.attrs.__setitem__("schema", schema))
        assert verify(tmp_path / f"s{i}.h5").exit_code == EXIT_CLEAN
