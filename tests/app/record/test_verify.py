"""`uartlab verify`: clean, killed, corrupted and foreign files; exit codes; what h5dump shows."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import signal
import subprocess
import time

import h5py
import numpy as np
import pytest
from uartlab.app.cli.main import main
from uartlab.app.record.verify import EXIT_CLEAN, EXIT_INCOMPLETE, EXIT_UNREADABLE, verify
from uartlab.app.record.writer import SessionRecorder
from uartlab.streams import Event, FieldSpec, Record, StreamSpec

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


def _killed_child(path: str) -> None:
    rec = _write(path, close=False)
    rec.flush()
    os.kill(os.getpid(), signal.SIGKILL)


@pytest.fixture
def killed_file(tmp_path):
    path = str(tmp_path / "killed.h5")
    p = multiprocessing.get_context("fork").Process(target=_killed_child, args=(path,))
    p.start()
    p.join()
    assert p.exitcode == -signal.SIGKILL
    return path


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
