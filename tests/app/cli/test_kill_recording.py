"""kill -9 at seeded moments of `uartlab record` and `uartlab run` on the twin rig, as real processes: every
session file left opens (uartlab's SessionFile, h5py with swmr=True) and lost at most the flush interval.

The moments are counted from when a file (the hidden one being built, or the session file) first appears
in the output folder, so several fall in the session's first second (while the file is built, before SWMR is
on, and its first flushes), the rest later on; the killed process is the one writing the file (`record` itself, or the
rig core `run` started for itself), then every other process of the command. Loss is the kill time minus the
newest `host_time_s` on disk of each device stream (the DAQ's: `read_host_time_s`, when its block was read),
both on the host's monotonic clock; a stream counts from its first row on disk (a device's first samples
may come after the file when the rig has just started), and a device stream still empty two flush intervals
after the file appeared counts from the appearance. `runner` counts once it has rows on disk (a run's loop
starts ticking after its pre-flight). `model` rows are not counted: they carry their control tick's time but
are computed after it, in another process.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import h5py
import numpy as np
import pytest
from conftest import short_suite_toml
from uartlab.app.record.player import SessionFile
from uartlab.app.record.writer import PARTIAL_SUFFIX
from uartlab.schema import DAQ, RUNNER_STREAM, WATCHED_STREAMS

CLI = [sys.executable, "-m", "uartlab.app.cli"]
FLUSH_INTERVAL_S = 1.0    # the shipped twin rig's recording.flush_interval_s (app/data/twin_rig.toml)
# Each moment costs a start of the command and its twin rig (8-26 s here). The campaign is 25 per command,
# 8 of them in the session's first second (UARTLAB_KILL_MOMENTS=25); the suite runs 4 of the same seeded kind.
MOMENTS = int(os.environ.get("UARTLAB_KILL_MOMENTS", "4"))   # per command
IN_FIRST_SECOND = max(2, round(MOMENTS * 8 / 25))            # of them within the session's first second
LATER_S = (1.0, 4.0)      # the others, uniformly in this span after the file appeared
SEED = 18
# A device stream with no row on disk counts from the file's appearance after this long: `record` makes its
# file right after its rig starts, when a device's first samples (the joints' first IK solution) may still
# be coming; later, an empty stream is a recorder that wrote nothing.
STARTING_S = 2 * FLUSH_INTERVAL_S


def moments_s(seed: int) -> list[float]:
    rng = np.random.default_rng(seed)
    return sorted([*rng.uniform(0.0, 1.0, IN_FIRST_SECOND), *rng.uniform(*LATER_S, MOMENTS - IN_FIRST_SECOND)])


def _children(pid: int) -> list[int]:
    """Every descendant of ``pid`` (from /proc), deepest last."""
    out = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                kids = [int(k) for k in f.read().split()]
        except OSError:
            continue
        for kid in kids:
            out += [kid, *_children(kid)]
    return out


def _kill(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _appeared(folder: Path) -> bool:
    return any(p.name.endswith(".h5") or p.name.endswith(PARTIAL_SUFFIX) for p in folder.iterdir())


def _writer_pid(proc: subprocess.Popen, core: bool) -> int | None:
    """The process that writes the session file: `record` itself, or the rig core `run` started."""
    if not core:
        return proc.pid
    for pid in _children(proc.pid):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"serve" in f.read().split(b"\0"):
                    return pid
        except OSError:
            continue
    return None


class RigDidNotStart(Exception):
    pass


class EndedBeforeTheMoment(RigDidNotStart):
    """The command was over before its kill (a run that tripped on a loaded machine closes its file): no kill."""


def kill_at(cmd: list[str], folder: Path, after_s: float, core: bool, timeout_s: float = 120.0) -> tuple[float, float]:
    """Run ``cmd``; ``after_s`` after a file appears in ``folder``, kill -9 the writer, then the rest.
    Returns (appeared, killed) on the monotonic clock."""
    folder.mkdir()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + timeout_s
        while not _appeared(folder):
            if proc.poll() is not None:   # the twin rig did not come up on a loaded machine: before any file
                raise RigDidNotStart(proc.stderr.read().decode()[-2000:])
            assert time.monotonic() < deadline, f"no file in {folder} after {timeout_s} s"
            time.sleep(0.001)
        appeared_s = time.monotonic()
        writer = _writer_pid(proc, core)
        assert writer is not None, "no rig core under `uartlab run`"
        rest = [proc.pid, *_children(proc.pid)]
        while time.monotonic() < appeared_s + after_s:
            time.sleep(0.001)
        killed_s = time.monotonic()
        try:
            os.kill(writer, signal.SIGKILL)
        except ProcessLookupError:
            raise EndedBeforeTheMoment(proc.stderr.read().decode()[-2000:]) from None
        _kill(rest + _children(proc.pid))
        return appeared_s, killed_s
    finally:
        _kill([proc.pid, *_children(proc.pid)])
        proc.wait(30)
        proc.stderr.close()


def check_left(folder: Path, appeared_s: float, killed_s: float, streams: tuple[str, ...],
               once_begun: tuple[str, ...] = ()) -> dict[str, float]:
    """Every session file opens both ways; returns the loss of each of ``streams`` (and of each of
    ``once_begun`` that has rows on disk: those begin after the file, when a run's loop starts ticking)."""
    sessions = sorted(folder.glob("*.h5"))
    assert len(sessions) <= 1, sessions
    if not sessions:   # killed while the file was being built: no session file, no sample was recorded
        assert [p.name for p in folder.iterdir() if p.name.endswith(PARTIAL_SUFFIX)], list(folder.iterdir())
        return {}
    (path,) = sessions
    with h5py.File(path, "r", swmr=True) as f:
        assert f.attrs["schema"].startswith("uartlab.session/")
    loss_s = {}
    with SessionFile(path) as sf:
        for name in (*streams, *once_begun):
            # A DAQ sample's host time is its place on the sample clock; the recorder had it once its block was
            # read (a busy machine reads blocks late, and a kill then takes unread samples with the device).
            t = sf.read(name).data[DAQ.read_host_time_s] if name == DAQ.stream else sf.host_times(name)
            if t.size or (name in streams and killed_s - appeared_s > STARTING_S):
                loss_s[name] = round(killed_s - (float(np.max(t)) if t.size else appeared_s), 3)
    return loss_s


def kill_many(tmp_path: Path, cmd, core: bool, streams: tuple[str, ...], seed: int,
              once_begun: tuple[str, ...] = ()) -> None:
    losses = []
    for i, after_s in enumerate(moments_s(seed)):
        for attempt in range(3):   # a rig that did not start (or a run over early) is no kill: again
            folder = tmp_path / f"k{i:02d}_{attempt}"
            try:
                appeared_s, killed_s = kill_at(cmd(folder), folder, after_s, core)
                break
            except RigDidNotStart as exc:
                said = str(exc)
        else:
            raise AssertionError(f"the rig did not start three times: {said}")
        losses.append((round(after_s, 3), check_left(folder, appeared_s, killed_s, streams, once_begun)))
    over = [(moment, lost) for moment, lost in losses if max(lost.values(), default=0.0) > FLUSH_INTERVAL_S]
    assert not over, f"loss over {FLUSH_INTERVAL_S} s at (kill moment s, loss per stream s): {over}"


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_uartlab_record_killed_at_seeded_moments_leaves_files_that_open_and_lose_at_most_the_flush_interval(tmp_path):
    kill_many(tmp_path, lambda folder: [*CLI, "record", "--seconds", "60", "--out", str(folder)], core=False,
              streams=WATCHED_STREAMS, seed=SEED)


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_uartlab_run_killed_at_seeded_moments_leaves_files_that_open_and_lose_at_most_the_flush_interval(tmp_path):
    suite = tmp_path / "short.toml"
    suite.write_text(short_suite_toml(pull_s=4.0), encoding="utf-8")

    def cmd(folder: Path) -> list[str]:
        return [*CLI, "run", str(suite), "--out", str(folder), "--core", f"ipc://{folder}/core", "--no-live-model"]

    kill_many(tmp_path, cmd, core=True, streams=WATCHED_STREAMS, seed=SEED + 1, once_begun=(RUNNER_STREAM,))
