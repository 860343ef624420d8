"""The recorder failing at the operator's seat: the run holds and says so, `uartlab record` stops at once, and
a disk without room for the session refuses to start.

How the failures are made: a full disk is real - a small tmpfs (mounted here; skipped where mounting is not
allowed) that another writer fills mid-run. A removed USB disk is injected at the recorder's write layer
(the next append fails with EIO), because unplugging cannot be done here and deleting the folder is not
the same failure (Linux keeps an unlinked file writable; the recorder notices by looking, see app/record/writer.py).
The folder deleted mid-recording is real (shutil.rmtree). The pre-flight's free space comes from the OS
boundary, ``shutil.disk_usage``, patched to report little room.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from conftest import mounted_tmpfs, short_suite_toml, wait_for
from uartlab.app.cli.main import main
from uartlab.app.record import free_space
from uartlab.app.record.player import SessionFile
from uartlab.app.record.session import RecordingSession
from uartlab.app.record.writer import RecordingError, SessionRecorder
from uartlab.app.rig.config import default_rig_config
from uartlab.app.rig.rig import Rig
from uartlab.app.run.experiment import PHASES, Experiment
from uartlab.hub import EVENTS
from uartlab.protocols.runner import Phase
from uartlab.protocols.suite import builtin_suite, parse_suite
from uartlab.streams import Event, FieldSpec, Record, StreamSpec

FAULT = PHASES.index(Phase.FAULT)
ONE_PULL = """
[suite]
name = "one_pull"
repeats = 1
[[trial]]
name = "FDP"
pose = "Flex"
pulls = [{{ tendon = "FDP", amplitude_mm = 15.0, duration_s = {duration} }}]
return = true
"""


def one_pull(duration_s: float = 3.0):
    return parse_suite(ONE_PULL.format(duration=duration_s), "one_pull.toml")


@contextlib.contextmanager
def twin_rig(speed: float = 1.0):
    config = default_rig_config()
    with Rig(replace(config, twin=replace(config.twin, speed=speed))) as rig:
        yield rig


def servo_goals(rig) -> np.ndarray:
    return np.array([s.goal_rad for s in rig.twin_plant.servo_states()])


def torque_on(rig) -> list[bool]:
    return [rig.twin_plant.servo_state(i).torque_enabled for i in range(6)]


@pytest.fixture
def small_disk(tmp_path):
    """A 64 MiB tmpfs: room for a short session and the recorder's reserve, until a filler takes the rest."""
    with mounted_tmpfs(tmp_path / "disk", 64) as mnt:
        yield mnt


def fill(folder: Path) -> None:
    """Another program takes every free byte of the disk (real ENOSPC for whoever writes next)."""
    block = b"\0" * (1 << 20)
    with open(folder / "filler.bin", "wb", buffering=0) as fh:
        with contextlib.suppress(OSError):
            while True:
                fh.write(block)
        with contextlib.suppress(OSError):
            while True:
                fh.write(b"\0" * 4096)


def kept_counts(sentence: str) -> dict[str, int]:
    """The per-stream sample counts the sentence says the file keeps: "(daq 12 300 samples, runner 1 230)"."""
    inside = re.search(r"the file keeps the first [\d.]+ s \((.*?)\)", sentence)
    assert inside, sentence
    counts = {}
    for part in inside.group(1).split(", "):
        name, number = re.fullmatch(r"(\w+) ([\d ]+?)(?: samples)?", part).groups()
        counts[name] = int(number.replace(" ", ""))
    return counts


def assert_file_keeps_what_the_sentence_says(path: Path, sentence: str) -> None:
    """Readable by uartlab (and h5py under it); every stream exactly as long as the sentence says: nothing
    was appended after the failure."""
    counts = kept_counts(sentence)
    assert counts.get("daq", 0) > 0, sentence
    with SessionFile(path) as f:
        assert not f.complete
        for stream in f.streams:
            assert f.length(stream) == counts.get(stream, 0), (stream, sentence)
        t = f.host_times("daq")
        assert np.all(np.diff(t) >= 0)


def assert_held_after_the_trip(rig, runner: Record) -> None:
    """Hold, not torque off: torque stays on, the goals stay where the trip left them, and from the tick that
    latched FAULT on the runner commanded the one held excursion."""
    assert all(torque_on(rig))
    at_trip = servo_goals(rig)
    time.sleep(0.3)
    assert all(torque_on(rig))
    np.testing.assert_array_equal(servo_goals(rig), at_trip)
    first = int(np.argmax(runner.data["phase"] == FAULT))
    assert runner.data["phase"][first] == FAULT and first > 0
    after = runner.data["command_m"][first:]
    assert np.allclose(after, runner.data["command_m"][first - 1], atol=1e-12) and not np.isnan(after).any()


def runner_and_events(sub) -> tuple[Record, list[Event]]:
    items = sub.drain()
    runner = Record.concatenate([r for r in items if isinstance(r, Record) and r.stream == "runner"])
    return runner, [e for e in items if isinstance(e, Event)]


# ------------------------------------------------------------------ mid-run, on the twin rig
@pytest.mark.realtime
def test_a_full_disk_mid_run_holds_says_which_file_and_keeps_a_readable_file(small_disk):
    suite = one_pull()
    path = small_disk / "s.h5"
    with twin_rig(speed=2.0) as rig:
        session = RecordingSession(rig, path, protocol=suite, flush_interval_s=0.1,
                                   expected_s=free_space.suite_seconds(suite))
        assert session.warnings == []
        sub = rig.hub.subscribe("test", {"runner", EVENTS}, maxsize=100_000)
        with Experiment(rig, suite, session) as exp:
            exp.start()
            assert wait_for(lambda: exp.status().phase == "ACTUATE", 10)
            time.sleep(0.3)
            fill(small_disk)
            assert exp.wait(5), exp.status()
            status = exp.status()
            assert status.phase == "FAULT", status
            time.sleep(0.3)  # the last goal sent before the trip reaches the servos (a busy machine: late)
            size_at_trip = os.path.getsize(path)
            runner, events = runner_and_events(sub)
            assert_held_after_the_trip(rig, runner)
            assert os.path.getsize(path) == size_at_trip             # the recording stopped at once
            assert not session._thread.is_alive() and session._sub.closed  # left the hub
        with pytest.raises(RecordingError) as err:
            session.close()
    sentence = str(err.value)
    assert sentence.startswith(f"recording stopped: {path}: the disk is full; the file keeps the first ")
    assert status.fault_reason == f"{sentence}; the run stopped with the servos holding"
    said = [e for e in events if e.kind == "fault" and e.source == "recorder"]
    assert [e.message for e in said] == [sentence]                    # the GUI's notification, once
    assert any(e.kind == "trip" and e.message.startswith(status.fault_reason) for e in events)
    assert_file_keeps_what_the_sentence_says(path, sentence)


@pytest.fixture
def unplug(monkeypatch):
    """Inject a removed USB disk at the recorder's write layer: once set, the next append fails with EIO.
    Counts the appends tried after it, to show that none follows the failed one."""
    unplugged = threading.Event()
    tried_after: list[float] = []
    real = SessionRecorder._append

    def append(self, name, records):
        if unplugged.is_set():
            tried_after.append(time.monotonic())
            raise OSError(errno.EIO, "Input/output error", self.path)
        return real(self, name, records)

    monkeypatch.setattr(SessionRecorder, "_append", append)
    unplugged.tried_after = tried_after
    return unplugged


def test_a_flush_that_fails_half_way_leaves_the_file_as_last_flushed(tmp_path, unplug):
    """The disk goes between two streams' appends of one flush: the first stream's new rows are in HDF5's
    memory only, and must not reach the file at close, which keeps exactly what the sentence says."""
    from test_writer import ACT, DAQ, META

    rec = SessionRecorder(tmp_path / "s.h5", META, flush_interval_s=60)
    rec.add_stream(ACT)
    rec.add_stream(DAQ)

    def block(t0: float) -> list[Record]:
        return [Record("actuators", t0 + np.arange(10) / 200, {"excursion_m": np.ones((10, 6)),
                                                               "moving": np.zeros((10, 6), bool)}),
                Record("daq", t0 + np.arange(96) / 19200, {"volts": np.ones((96, 13)), "sample_index": np.arange(96)})]

    for r in block(0.0):
        rec.write(r)
    rec.event(Event(0.0, "phase", "test", "first"))
    rec.flush()
    for r in block(1.0):
        rec.write(r)
    rec.event(Event(1.0, "phase", "test", "second"))
    calls = []
    original = SessionRecorder._append   # the unplug fixture's: every append fails once it is set

    def actuators_then_unplug(self, name, records):
        calls.append(name)
        out = original(self, name, records)
        unplug.set()           # after the first stream of this flush: the next append meets the dead disk
        return out

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(SessionRecorder, "_append", actuators_then_unplug)
        with pytest.raises(RecordingError) as err:
            rec.flush()
    assert calls == ["actuators", "daq"]
    with pytest.raises(RecordingError):
        rec.close()
    sentence = str(err.value)
    assert sentence.endswith("the file keeps the first 0.0 s (actuators 10 samples, daq 96)"), sentence
    with SessionFile(tmp_path / "s.h5") as f:
        assert (f.length("actuators"), f.length("daq")) == (10, 96)
        assert [e.message for e in f.events()] == ["first"]


@pytest.mark.realtime
def test_a_removed_disk_mid_run_holds_and_no_write_is_tried_after_it(tmp_path, unplug):
    suite = one_pull()
    path = tmp_path / "s.h5"
    with twin_rig(speed=2.0) as rig:
        session = RecordingSession(rig, path, protocol=suite, flush_interval_s=0.1)
        sub = rig.hub.subscribe("test", {"runner", EVENTS}, maxsize=100_000)
        with Experiment(rig, suite, session) as exp:
            exp.start()
            assert wait_for(lambda: exp.status().phase == "ACTUATE", 10)
            actuate_s = time.monotonic()
            time.sleep(0.3)
            # the trial's row on the disk first: flushed every 0.1 s, on a loaded machine later
            assert wait_for(lambda: session.recorder.flushed_span_s.get("runner", (0.0, -1.0))[1] >= actuate_s, 10)
            unplug.set()
            assert exp.wait(5), exp.status()
            status = exp.status()
            time.sleep(0.3)
            runner, events = runner_and_events(sub)
            assert status.phase == "FAULT", status
            assert_held_after_the_trip(rig, runner)
        with pytest.raises(RecordingError) as err:
            session.close()
    assert len(unplug.tried_after) == 1                              # the failed append, then nothing
    sentence = str(err.value)
    assert sentence.startswith(f"recording stopped: {path}: the disk does not answer (input/output error: "
                               "removed or failing); the file keeps the first ")
    assert status.fault_reason == f"{sentence}; the run stopped with the servos holding"
    assert [e.message for e in events if e.kind == "fault" and e.source == "recorder"] == [sentence]
    assert_file_keeps_what_the_sentence_says(path, sentence)
    with SessionFile(path) as f:  # the trial began before the failure: its row is in the table, unfinished
        (trial,) = f.trials()
        assert trial["name"] == "FDP" and np.isnan(trial["stop_host_time_s"])


@pytest.mark.realtime
def test_with_torque_off_as_the_safe_action_a_recorder_failure_turns_torque_off(tmp_path, unplug):
    with twin_rig(speed=2.0) as rig:
        session = RecordingSession(rig, tmp_path / "s.h5", flush_interval_s=0.1)
        with Experiment(rig, one_pull(), session, safe_action="torque_off") as exp:
            exp.start()
            assert wait_for(lambda: exp.status().phase == "ACTUATE", 10)
            unplug.set()
            assert exp.wait(5) and exp.status().phase == "FAULT"
            assert exp.status().fault_reason.endswith("; the run stopped with torque off")
            assert wait_for(lambda: not any(torque_on(rig)), 1.0)
        with pytest.raises(RecordingError):
            session.close()


# ------------------------------------------------------------------ `uartlab run`
RUN_SUITE = short_suite_toml(6.0)


@contextlib.contextmanager
def core_in_this_process(folder: Path, speed: float | None = None) -> Iterator[str]:
    """A rig core on the twin rig hosted in the test process, so that the failures patched in here (a disk
    that goes, one without room) happen where the run is; `uartlab run --core` attaches to it as a client."""
    from uartlab.app.cli.run import rig_config
    from uartlab.app.serve.core import RigCore

    core = RigCore(rig_config(None, speed), f"ipc://{folder}/core").start()
    try:
        yield core.ends.base
    finally:
        core.close("the test is over")


@pytest.mark.realtime
def test_uartlab_run_ends_in_fault_exit_1_with_the_sentence(tmp_path, capsys, unplug, monkeypatch):
    suite = tmp_path / "short.toml"
    suite.write_text(RUN_SUITE, encoding="utf-8")
    out = tmp_path / "out"
    begin = Experiment._begin_trial

    def begin_then_unplug(self, now):
        begin(self, now)

        def later():  # the disk goes during the pull, once something is on it; the next flush finds out
            wait_for(lambda: self.session.recorder.flushed["daq"] > 0, 5)
            unplug.set()
        threading.Thread(target=later, daemon=True).start()

    monkeypatch.setattr(Experiment, "_begin_trial", begin_then_unplug)
    with core_in_this_process(tmp_path, speed=2.0) as core:
        assert main(["run", str(suite), "--core", core, "--out", str(out), "--no-live-model"]) == 1
    captured = capsys.readouterr()
    (path,) = out.glob("session_*_short.h5")
    sentence = (f"recording stopped: {path}: the disk does not answer (input/output error: removed or failing); "
                "the file keeps the first ")
    summary = next((line for line in captured.out.splitlines() if " trials run" in line), captured.out)
    assert f"; stopped: {sentence}" in summary and summary.endswith("; the run stopped with the servos holding"), \
        captured.out + captured.err
    assert "Traceback" not in captured.out + captured.err
    assert_file_keeps_what_the_sentence_says(path, summary.split("; stopped: ", 1)[1])


# ------------------------------------------------------------------ `uartlab record`
def flushed_daq_samples(path: Path) -> int:
    """How many DAQ samples a reader of the file being written sees."""
    from uartlab.errors import InputFileError

    try:
        with SessionFile(path) as f:
            return f.length("daq") if "daq" in f.streams else 0
    except InputFileError:   # not yet a file a reader can open
        return 0


def record(out: Path, seconds: float, then=None) -> tuple[int, str, str, float]:
    """`uartlab record --seconds` in its own process (its SIGINT handler and exit as an operator sees them);
    ``then(path)`` runs once the session file exists. Returns (exit status, stdout, stderr, seconds taken)."""
    cmd = [sys.executable, "-m", "uartlab.app.cli", "record", "--seconds", str(seconds), "--out", str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    started = time.monotonic()
    if then is not None:
        assert wait_for(lambda: list(out.glob("session_*.h5")) or proc.poll() is not None, 60, 0.05)
        (path,) = out.glob("session_*.h5")
        assert wait_for(lambda: flushed_daq_samples(path) > 0, 60, 0.1), "nothing flushed"   # slow on a busy machine
        time.sleep(1.5)   # and a second and a half more
        then(path)
        started = time.monotonic()
    stdout, stderr = proc.communicate(timeout=120)
    return proc.returncode, stdout, stderr, time.monotonic() - started


@pytest.mark.realtime
@pytest.mark.slow
def test_uartlab_record_stops_at_once_on_a_full_disk_exit_3_one_line(small_disk):
    code, out, err, after_s = record(small_disk, 60, then=lambda path: fill(small_disk))
    (path,) = small_disk.glob("session_*.h5")
    assert code == 3, err
    (line,) = err.splitlines()
    assert line.startswith(f"uartlab record: recording stopped: {path}: the disk is full; the file keeps the first ")
    assert after_s < 10, after_s                                   # not blind until --seconds
    assert_file_keeps_what_the_sentence_says(path, line)


@pytest.mark.realtime
@pytest.mark.slow
def test_uartlab_record_whose_folder_is_deleted_stops_at_once_exit_3_one_line(tmp_path):
    folder = tmp_path / "usb"
    folder.mkdir()
    code, out, err, after_s = record(folder, 60, then=lambda path: shutil.rmtree(folder))
    assert code == 3, err
    (line,) = err.splitlines()
    assert re.fullmatch(rf"uartlab record: recording stopped: {folder}/session_\S+\.h5: the output folder {folder} "
                        r"has vanished; nothing is left at that path \(it had the first [\d.]+ s \(.*daq [\d ]+.*\) "
                        r"when last flushed\)", line), line
    assert after_s < 10, after_s


# ------------------------------------------------------------------ pre-flight free space
class _Usage:
    def __init__(self, free: int):
        self.total, self.used, self.free = 10 * free + 1, 9 * free, free


def test_the_estimate_is_rates_times_bytes_per_sample_times_the_suites_longest_run():
    specs = {"daq": StreamSpec("daq", "x", (FieldSpec("volts", "f8", (13,)),), 1000.0)}
    assert free_space.bytes_per_second(specs) == (8 + 13 * 8) * 1000.0
    suite = builtin_suite("free_motion")  # 6 trials x 5 repeats; 4 s pulls and returns; 20 s settle timeout
    per_trial = 5.0 + 4.0 + suite.settle.timeout_s + 4.0
    assert free_space.suite_seconds(suite) == pytest.approx(30 * per_trial)


def test_free_space_refuses_below_the_estimate_and_warns_below_twice(tmp_path, monkeypatch):
    specs = {"daq": StreamSpec("daq", "x", (), 1000.0)}  # 8 bytes of host time a sample: 8 kB/s
    reserve = free_space.reserve_bytes(specs)
    usage = {}
    monkeypatch.setattr(shutil, "disk_usage", lambda folder: usage["now"])
    usage["now"] = _Usage(reserve + 8000 * 100 - 1)
    with pytest.raises(RecordingError, match=rf"^{tmp_path}: not enough free space to record: the session needs "
                                             r"about [\d.]+ MB \(800 kB for up to 100 s at 8 kB/s, plus [\d.]+ MB "
                                             r"of reserve\), [\d.]+ MB is free; free some space or record to "
                                             r"another folder \(--out\)$"):
        free_space.check_free_space(tmp_path, specs, 100)
    usage["now"] = _Usage(reserve + 8000 * 150)
    assert "less than twice this session's expected" in free_space.check_free_space(tmp_path, specs, 100)
    usage["now"] = _Usage(reserve + 8000 * 200)
    assert free_space.check_free_space(tmp_path, specs, 100) is None
    usage["now"] = _Usage(reserve + 8000 * 60)  # open-ended: a minute fits
    assert "room for about 1.0 min of recording" in free_space.check_free_space(tmp_path, specs, None)


@pytest.mark.realtime
def test_uartlab_run_refuses_a_disk_without_room_exit_3_nothing_moves(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(shutil, "disk_usage", lambda folder: _Usage(50_000_000))
    started = []
    monkeypatch.setattr(Experiment, "start", lambda self, *a: started.append(self))  # torque on, then moves
    with core_in_this_process(tmp_path) as core:
        assert main(["run", "free_motion", "--core", core, "--out", str(tmp_path), "--no-live-model"]) == 3
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"uartlab run: {tmp_path}: not enough free space to record: the session needs about ")
    assert "50 MB is free" in line
    assert started == [] and not list(tmp_path.glob("*.h5"))


@pytest.mark.realtime
def test_uartlab_record_refuses_a_disk_without_room_exit_3(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(shutil, "disk_usage", lambda folder: _Usage(1_000_000))
    monkeypatch.setattr("signal.signal", lambda *args: None)  # record's Ctrl-C handler: not in the test process
    assert main(["record", "--seconds", "5", "--out", str(tmp_path)]) == 3
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"uartlab record: {tmp_path}: not enough free space to record: ")
    assert not list(tmp_path.glob("*.h5"))


def test_a_log_file_on_a_full_disk_stops_quietly(small_disk, capfd):
    """The session's log beside its file shares the disk: once full, it must neither print logging's
    tracebacks nor raise at close, which would replace the recorder's one line with a bare OSError."""
    import logging

    from uartlab.app.record.logs import log_file

    with log_file(small_disk / "s.log"):
        logging.getLogger("uartlab.test").warning("before the disk filled")
        fill(small_disk)
        with contextlib.suppress(OSError), open(small_disk / "filler.bin", "ab", buffering=0) as fh:
            while True:
                fh.write(b"\0")   # the last bytes too: the log's next line has no room at all
        for i in range(2000):
            logging.getLogger("uartlab.test").info("line %d %s", i, "x" * 200)
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Logging error" not in err, err[:2000]
    assert "before the disk filled" in (small_disk / "s.log").read_text()
