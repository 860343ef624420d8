"""`uartlab verify --repair`: a crashed session's clean copy opens in h5dump as it is, cut to whole samples,
saying what was lost; the original is never written."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import h5py
import numpy as np
import pytest
from conftest import killed_after_a_flush
from uartlab.app.cli.main import main
from uartlab.app.record.player import SessionFile
from uartlab.app.record.repair import default_out, repair
from uartlab.app.record.verify import EXIT_INCOMPLETE, EXIT_UNREADABLE, verify
from uartlab.app.record.writer import SessionRecorder
from uartlab.schema import DAQ, daq_spec, declared_specs
from uartlab.streams import Event, EventKind, Record

RATE_HZ = 100.0
needs_h5dump = pytest.mark.skipif(shutil.which("h5dump") is None,
                                  reason="h5dump not installed (apt-get install hdf5-tools)")


def _record(path: str) -> SessionRecorder:
    """The rig's declared streams, 300 daq samples, an event, a trial still running."""
    rec = SessionRecorder(path, {"operator": "t"}, flush_interval_s=0.05)
    for spec in declared_specs(rate_hz=RATE_HZ).values():
        rec.add_stream(spec)
    daq = daq_spec(RATE_HZ)
    for i in range(3):
        t = 1.0 + i + np.arange(100) / RATE_HZ
        rec.write(Record(daq.name, t, {f.name: np.full((100, *f.shape), i, dtype=f.dtype) for f in daq.fields}))
    rec.event(Event(1.2, EventKind.TRIP, "runner", "tendon FDP 41.2 N over the 40 N limit"))
    rec.begin_trial("free/FDP", "short", {"pose": "Flex"}, 0, host_time_s=1.1)
    return rec


@pytest.fixture
def crashed(tmp_path) -> str:
    return killed_after_a_flush(tmp_path / "crashed.h5", _record)


def _h5dump(path) -> subprocess.CompletedProcess:
    return subprocess.run(["h5dump", "-H", str(path)], capture_output=True, text=True, timeout=60)


@needs_h5dump
def test_a_crashed_file_repaired_opens_in_h5dump_and_keeps_everything(crashed, capsys):
    assert _h5dump(crashed).returncode != 0                      # "open for write": refused as it is
    before = Path(crashed).read_bytes()
    assert main(["verify", "--repair", crashed]) == 0
    out = default_out(crashed)
    assert str(out).endswith("crashed.repaired.h5")
    line = capsys.readouterr().out.strip()
    assert line == (f"{out}: clean copy of {crashed}: trial 1 'free/FDP': ended by the crash (no stop time; "
                    "its rows run to the end of the data)")
    assert _h5dump(out).returncode == 0
    assert Path(crashed).read_bytes() == before                  # the original untouched
    with h5py.File(out, "r") as f:                               # no swmr=True needed
        assert f.attrs["complete"] == 0 and f.attrs["repaired_from"] == os.path.abspath(crashed)
        assert f["trials/0001_free_FDP"].attrs["daq_rows"].tolist() == [10, 300]
    with SessionFile(out) as sf, SessionFile(crashed) as orig:
        np.testing.assert_array_equal(sf.read(DAQ.stream).data[DAQ.pot_V], orig.read(DAQ.stream).data[DAQ.pot_V])
        assert [e.kind for e in sf.events()] == [EventKind.TRIP]
    report = verify(out)
    assert report.exit_code == EXIT_INCOMPLETE and report.problems == [], report.problems   # not a clean close
    assert report.summary.splitlines()[0] == (f"{out}: repaired copy of {os.path.abspath(crashed)} (every HDF5 "
                                              "reader opens it as it is); that recording was not closed cleanly: "
                                              "samples up to its last flush are here")
    assert "--repair" not in report.summary


def test_a_file_with_nothing_to_drop_says_so(tmp_path, capsys):
    path = tmp_path / "s.h5"
    rec = _record(str(path))
    rec.end_trial("settled", host_time_s=1.5)
    rec.close()
    assert main(["verify", "--repair", str(path)]) == 0
    assert capsys.readouterr().out.strip() == (f"{default_out(path)}: clean copy of {path}: every sample, event and "
                                               "trial the file holds is in the copy (what came after its last flush "
                                               "was never on disk)")


@needs_h5dump
def test_partial_rows_of_a_flush_cut_short_are_dropped_and_said(tmp_path, capsys):
    path = tmp_path / "s.h5"
    _record(str(path)).close()
    with h5py.File(path, "r+") as f:   # as a kill between a flush's fields and its host_time_s leaves it
        f["streams/daq/pot_V"].resize((340, 6))
        f["streams/daq/gauge_V"].resize((320, 6))
        f.attrs["complete"] = np.int8(0)
    out = tmp_path / "fixed.h5"
    assert main(["verify", "--repair", str(path), "-o", str(out)]) == 0
    said = capsys.readouterr().out
    assert "daq: 40 partial rows dropped (300 whole samples kept, ~0.400 s at 100 Hz)" in said
    assert _h5dump(out).returncode == 0
    with h5py.File(out, "r") as f:
        assert {d.shape[0] for d in f["streams/daq"].values()} == {300}
        assert "daq: 40 partial rows dropped" in f.attrs["repair_notes"]


def test_a_missing_stream_and_events_are_said_and_the_copy_has_an_empty_table(tmp_path):
    path = tmp_path / "s.h5"
    _record(str(path)).close()
    with h5py.File(path, "r+") as f:
        del f["streams/mocap"], f["events"]
    report = repair(path)
    assert "mocap: the whole stream (not in the file)" in report.lost
    assert "events: the whole table (not in the file; the copy has an empty one)" in report.lost
    with SessionFile(report.out) as sf:
        assert sf.events() == [] and sf.length(DAQ.stream) == 300


def test_never_overwrites(tmp_path, capsys):
    path = tmp_path / "s.h5"
    _record(str(path)).close()
    (tmp_path / "taken.h5").write_bytes(b"mine")
    assert main(["verify", "--repair", str(path), "-o", str(tmp_path / "taken.h5")]) == 2
    assert main(["verify", "--repair", str(path), "-o", str(path)]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines == [f"uartlab verify: {tmp_path / 'taken.h5'}: exists; give the copy another name (-o OUT)",
                     f"uartlab verify: {path}: is the file to repair; the copy goes to another name (-o OUT)"]
    assert (tmp_path / "taken.h5").read_bytes() == b"mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.h5", "taken.h5"]   # no copy, no hidden leftovers


@pytest.mark.parametrize("kind", ["random", "truncated", "empty"])
def test_what_is_not_a_session_cannot_be_repaired(tmp_path, kind, capsys):
    path = tmp_path / "s.h5"
    _record(str(path)).close()
    data = path.read_bytes()
    path.write_bytes({"random": np.random.default_rng(1).bytes(4096), "truncated": data[: len(data) // 3],
                      "empty": b""}[kind])
    assert main(["verify", "--repair", str(path)]) == EXIT_UNREADABLE
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"uartlab verify: cannot repair: {path}: ") and "Traceback" not in line
    assert not default_out(path).exists()
