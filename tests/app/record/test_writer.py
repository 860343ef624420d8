"""The session recorder: round trip, attributes, SWMR readers, kill -9 at random moments, disk full, lost folder."""

from __future__ import annotations

import logging
import multiprocessing
import os
import random
import shutil
import signal
import subprocess
import sys
import time

import h5py
import numpy as np
import pytest
from conftest import mounted_tmpfs
from uartlab import __version__
from uartlab.app.record.logs import event_level
from uartlab.app.record.player import SessionFile
from uartlab.app.record.verify import verify
from uartlab.app.record.writer import PARTIAL_SUFFIX, SCHEMA, RecordingError, SessionRecorder
from uartlab.streams import Event, EventKind, FieldSpec, Record, StreamSpec

DAQ = StreamSpec("daq", "USB-6210 twin", (FieldSpec("volts", "f8", (13,), "V", "analog inputs ai0..ai12"),
                                          FieldSpec("sample_index", "i8", (), "", "DAQ sample clock")),
                 nominal_rate_hz=19200.0, device_clock="sample_index")
ACT = StreamSpec("actuators", "MX-64 bus twin", (FieldSpec("excursion_m", "f8", (6,), "m", "tendon excursion"),
                                                 FieldSpec("moving", "?", (6,), "", "moving flags")),
                 nominal_rate_hz=200.0)
MOCAP = StreamSpec("mocap", "Motive twin", (FieldSpec("markers_m", "f4", (12, 3), "m", "labelled markers"),
                                           FieldSpec("frame_number", "i8", (), "", "NatNet frame")),
                   nominal_rate_hz=240.0, device_clock="frame_number")
META = {"operator": "ada", "notes": "test session", "config_text": "[rig]\nname = \"twin\"\n",
        "calibration_texts": {"nano17": "FT1234 matrix"}}


def make_records(rng: np.random.Generator, n_blocks: int = 20) -> list[Record]:
    out = []
    for i in range(n_blocks):
        t = 100.0 + i * 0.005
        out.append(Record("daq", t + np.arange(96) / 19200.0,
                          {"volts": rng.normal(size=(96, 13)), "sample_index": np.arange(96) + 96 * i}))
        out.append(Record("actuators", np.array([t]), {"excursion_m": rng.normal(size=(1, 6)),
                                                       "moving": rng.random((1, 6)) > 0.5}))
        out.append(Record("mocap", np.array([t, t + 1 / 240]),
                          {"markers_m": rng.normal(size=(2, 12, 3)).astype("f4"), "frame_number": [2 * i, 2 * i + 1]}))
    return out


def record_session(path, records, events=(), flush_interval_s=0.1) -> SessionRecorder:
    rec = SessionRecorder(path, META, flush_interval_s=flush_interval_s)
    for spec in (DAQ, ACT, MOCAP):
        rec.add_stream(spec)
    rec.begin_trial("flex", "flex.toml", {"speed_mm_s": 2.0, "pose": "Flex"}, repeat=1, host_time_s=100.0)
    for r in records:
        rec.write(r)
    for e in events:
        rec.event(e)
    rec.end_trial("ok", host_time_s=101.0)
    rec.close()
    return rec


def test_event_kinds_are_written_as_text_and_an_unknown_kind_still_reads(tmp_path):
    """The members are written as their words; a kind a newer uartlab wrote reads back as its text."""
    events = [Event(100.0, EventKind.TRIP, "interlocks", "FDP over 40 N"), Event(100.5, "levitate", "future", "?")]
    record_session(tmp_path / "s.h5", make_records(np.random.default_rng(2)), events)
    with h5py.File(tmp_path / "s.h5", "r") as f:
        assert [bytes(k).rstrip(b"\0") for k in f["events"]["kind"]] == [b"trip", b"levitate"]
    with SessionFile(tmp_path / "s.h5") as sf:
        trip, unknown = sf.events()
    assert trip.kind is EventKind.TRIP
    assert unknown.kind == "levitate" and not isinstance(unknown.kind, EventKind)
    assert event_level(unknown.kind) == logging.INFO and unknown.kind not in (EventKind.FAULT, EventKind.TRIP)


def test_round_trip_samples_attrs_and_events(tmp_path):
    rng = np.random.default_rng(1)
    records = make_records(rng)
    events = [Event(100.0, "phase", "runner", "approach"), Event(100.02, "fault", "daq", "überlauf ✓")]
    record_session(tmp_path / "s.h5", records, events)
    with SessionFile(tmp_path / "s.h5") as sf:
        assert sf.complete
        assert sf.metadata["schema"] == SCHEMA and sf.metadata["operator"] == "ada"
        assert sf.metadata["software_version"] == __version__
        assert sf.config_text == META["config_text"] and sf.calibration_texts == {"nano17": "FT1234 matrix"}
        assert sf.streams == {"daq": DAQ, "actuators": ACT, "mocap": MOCAP}
        for spec in (DAQ, ACT, MOCAP):
            want = Record.concatenate([r for r in records if r.stream == spec.name])
            got = sf.read(spec.name)
            np.testing.assert_array_equal(got.host_time_s, want.host_time_s)
            for f in spec.fields:
                np.testing.assert_array_equal(got.data[f.name], np.asarray(want.data[f.name], dtype=f.dtype))
        assert sf.events() == events
        (trial,) = sf.trials()
        assert (trial["name"], trial["outcome"], trial["repeat"]) == ("flex", "ok", 1)
        assert trial["parameters"] == {"speed_mm_s": 2.0, "pose": "Flex"}
    with h5py.File(tmp_path / "s.h5", "r") as f:  # a plain h5py user, no uartlab
        assert f.attrs["complete"] == 1 and f.attrs["stop_time"]
        assert f["streams/daq/volts"].attrs["units"] == "V"
        assert f["streams/daq/host_time_s"].attrs["units"] == "s"
        assert f["streams/mocap/markers_m"].shape == (40, 12, 3)
        assert f["streams/daq"].attrs["nominal_rate_hz"] == 19200.0
        g = f["trials/0001_flex"]
        assert g.attrs["outcome"] == "ok" and g.attrs["param_pose"] == "Flex"
        assert list(g.attrs["daq_rows"]) == [0, 20 * 96]


def test_bad_record_and_late_stream_are_refused(tmp_path):
    rec = SessionRecorder(tmp_path / "s.h5", META)
    rec.add_stream(DAQ)
    with pytest.raises(ValueError, match="volts"):
        rec.write(Record("daq", np.zeros(2), {"volts": np.zeros((2, 12)), "sample_index": np.zeros(2)}))
    rec.write(Record("daq", np.zeros(1), {"volts": np.zeros((1, 13)), "sample_index": np.zeros(1)}))
    with pytest.raises(RecordingError, match="before the first write"):
        rec.add_stream(ACT)
    rec.close()


SWMR_READER = """
import sys, time, h5py
f = h5py.File(sys.argv[1], "r", swmr=True)
d = f["streams/daq/host_time_s"]
for _ in range(12):
    d.refresh()
    print(d.shape[0], flush=True)
    time.sleep(0.1)
"""


def test_swmr_reader_sees_data_grow_while_writing(tmp_path):
    path = tmp_path / "live.h5"
    rec = SessionRecorder(path, META, flush_interval_s=0.05)
    rec.add_stream(DAQ)
    rec.start()
    rec.flush()
    reader = subprocess.Popen([sys.executable, "-c", SWMR_READER, str(path)], stdout=subprocess.PIPE, text=True)
    i = 0
    while reader.poll() is None:
        rec.write(Record("daq", i + np.arange(96.0), {"volts": np.ones((96, 13)), "sample_index": np.arange(96)}))
        i += 96
        time.sleep(0.005)
    rec.close()
    seen = [int(x) for x in reader.stdout.read().split()]
    assert reader.returncode == 0
    assert len(set(seen)) >= 3 and seen == sorted(seen), seen  # growing, never shrinking, while written


def _killable_writer(path: str, status: str, flush_interval_s: float) -> None:
    """A child recording 'DAQ' at ~4 kHz in 10 ms blocks; reports what is flushed to `status`."""
    def report(flushed):
        with open(status + ".tmp", "w") as fh:
            fh.write(str(flushed["daq"]))
        os.replace(status + ".tmp", status)

    rec = SessionRecorder(path, META, flush_interval_s=flush_interval_s, on_flush=report)
    rec.add_stream(DAQ)
    rec.start()
    rec.event(Event(time.monotonic(), "phase", "test", "started"))
    rec.flush()
    k = 0
    while True:
        rec.write(Record("daq", np.full(40, time.monotonic()), {"volts": np.full((40, 13), k, dtype="f8"),
                                                              "sample_index": k + np.arange(40)}))
        k += 40
        time.sleep(0.01)


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="fork + SIGKILL")
def test_kill_minus_9_at_random_moments_loses_at_most_one_flush_interval(tmp_path):
    flush_interval_s, slack_s = 0.1, 0.3  # slack: scheduling of two processes on a busy CI machine
    rng = random.Random(5)
    ctx = multiprocessing.get_context("fork")  # h5py already imported: a child starts in ms, not 0.5 s
    for i in range(20):
        path, status = str(tmp_path / f"k{i}.h5"), str(tmp_path / f"k{i}.status")
        child = ctx.Process(target=_killable_writer, args=(path, status, flush_interval_s), daemon=True)
        child.start()
        deadline = time.monotonic() + 10
        while not os.path.exists(status) and time.monotonic() < deadline:
            time.sleep(0.002)
        assert os.path.exists(status), "child never started recording"
        time.sleep(rng.uniform(0.0, 0.6))
        t_kill = time.monotonic()
        os.kill(child.pid, signal.SIGKILL)
        child.join()
        with open(status) as fh:
            reported = int(fh.read())
        report = verify(path)
        assert report.readable and not report.complete and report.exit_code == 1, report.summary
        assert "not closed cleanly" in report.summary
        (daq,) = report.streams
        assert daq.samples >= reported and daq.samples % 40 == 0
        with SessionFile(path) as sf:
            t = sf.host_times("daq")
            must_have_s = t_kill - flush_interval_s - slack_s  # everything written before this was flushed
            if must_have_s > sf.events()[0].host_time_s:
                assert t.size and t[-1] >= must_have_s, (i, t_kill - (t[-1] if t.size else np.nan))
            volts = sf.read("daq").data["volts"]
            np.testing.assert_array_equal(volts[:, 0], np.repeat(np.arange(0, daq.samples, 40), 40))


@pytest.fixture
def tiny_disk(tmp_path):
    with mounted_tmpfs(tmp_path / "tiny", 4) as mnt:
        yield mnt


def test_disk_full_stops_with_clear_error_and_keeps_data(tiny_disk):
    path = tiny_disk / "full.h5"
    rec = SessionRecorder(path, META, flush_interval_s=0.05)
    rec.add_stream(DAQ)
    noise = np.random.default_rng(0).normal(size=(960, 13))   # what no filter can shrink
    block = Record("daq", np.zeros(960), {"volts": noise, "sample_index": np.arange(960)})
    with pytest.raises(RecordingError, match="disk is full") as err:
        for _ in range(2000):  # 100 KiB per write, 4 MiB of disk
            rec.write(block)
            time.sleep(0.01)
    assert str(path) in str(err.value)
    with pytest.raises(RecordingError):
        rec.close()
    report = verify(path)
    assert report.readable and report.exit_code == 1, report.summary
    assert report.streams[0].samples > 0


def test_vanished_folder_stops_with_clear_error(tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    rec = SessionRecorder(folder / "s.h5", META, flush_interval_s=0.05)
    rec.add_stream(DAQ)
    rec.write(Record("daq", np.zeros(1), {"volts": np.zeros((1, 13)), "sample_index": np.zeros(1)}))
    shutil.rmtree(folder)
    time.sleep(0.2)
    with pytest.raises(RecordingError, match="vanished"):
        rec.write(Record("daq", np.zeros(1), {"volts": np.zeros((1, 13)), "sample_index": np.zeros(1)}))
    with pytest.raises(RecordingError, match="vanished"):
        rec.close()


# ------------------------------------------------------------------ the file exists only as one HDF5 opens
def test_the_file_appears_at_its_path_only_once_swmr_is_on(tmp_path):
    path = tmp_path / "s.h5"
    rec = SessionRecorder(path, META, flush_interval_s=0.1)
    rec.add_stream(DAQ)
    (building,) = tmp_path.iterdir()                   # the metadata and datasets, under a hidden name
    assert building.name.startswith(".s.h5.") and building.name.endswith(PARTIAL_SUFFIX)
    assert not path.exists()
    rec.start()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.h5"]
    with h5py.File(path, "r", swmr=True) as f:         # before any sample: opens, every stream declared
        assert list(f["streams"].attrs["declared"]) == ["daq"] and f["streams/daq/volts"].shape == (0, 13)
    rec.close()
    assert verify(path).exit_code == 0


def test_a_session_without_a_sample_is_still_a_complete_file(tmp_path):
    rec = SessionRecorder(tmp_path / "s.h5", META)
    rec.add_stream(DAQ)
    rec.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.h5"] and verify(tmp_path / "s.h5").exit_code == 0


def _killed_while_building(path: str) -> None:
    SessionRecorder(path, META).add_stream(DAQ)
    os.kill(os.getpid(), signal.SIGKILL)


def test_a_recorder_killed_while_building_leaves_no_session_and_the_next_one_removes_its_leftover(tmp_path, caplog):
    p = multiprocessing.get_context("fork").Process(target=_killed_while_building, args=(str(tmp_path / "a.h5"),))
    p.start()
    p.join()
    (left,) = tmp_path.iterdir()
    assert left.name == f".a.h5.{p.pid}{PARTIAL_SUFFIX}"   # no a.h5: nothing that does not open
    with caplog.at_level(logging.WARNING, logger="uartlab.app.record.writer"):
        rec = SessionRecorder(tmp_path / "b.h5", META)
    assert rec.removed_partials == [str(left)] and not left.exists()
    assert f"removed {left}: a session file a recorder was killed while creating (it held no samples)" in caplog.text
    rec.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.h5"]


def test_another_recorders_file_being_built_is_left_alone(tmp_path):
    first = SessionRecorder(tmp_path / "a.h5", META)   # this process is alive: its hidden file is in use
    second = SessionRecorder(tmp_path / "b.h5", META)
    assert second.removed_partials == []
    first.close()
    second.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.h5", "b.h5"]


def test_flushes_come_twice_per_interval_on_fixed_deadlines(tmp_path):
    """So that a kill loses at most flush_interval_s: a sample waits at most half of it for its flush."""
    flushed_at: list[float] = []
    rec = SessionRecorder(tmp_path / "s.h5", META, flush_interval_s=0.2, on_flush=lambda _: flushed_at.append(
        time.monotonic()))
    rec.add_stream(DAQ)
    rec.start()
    time.sleep(1.05)
    rec.close()
    gaps = np.diff(flushed_at[:-1])   # the last is close()'s own
    assert len(gaps) >= 7 and np.median(gaps) == pytest.approx(0.1, abs=0.02), gaps
