"""The live model in its own process beside a real rig core (`uartlab rig serve` on the twin rig, in its own
process): its `model` stream recorded in the session file, its residuals as the in-process model's, and a
model process killed mid-trial changing nothing for the run but the file saying so."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import DEVICE_TIMING, wait_for
from test_core import patient_twin_rig
from uartlab.app.record.params import recorded_model_params
from uartlab.app.record.player import SessionFile
from uartlab.app.run.live_model import ACTIVE_PHASES, LiveModel
from uartlab.app.run.residuals import PHASES
from uartlab.app.run.unmodelled import unmodelled_sentence, unmodelled_trials
from uartlab.app.serve.client import CoreClient, NoCoreError
from uartlab.app.serve.publisher import SNDHWM
from uartlab.app.serve.runs import run_busy
from uartlab.hub import Hub
from uartlab.protocols.runner import Phase
from uartlab.protocols.suite import parse_suite
from uartlab.schema import MODEL, MODEL_SOURCE, MODEL_STREAM, RUNNER, RUNNER_STREAM, EventKind, runner_spec
from uartlab.sim import Finger
from uartlab.streams import Record

pytestmark = pytest.mark.slow

SPEED = 2.0
START_TIMEOUT_S = 180.0   # a first compile of the model's kernels takes about a minute; a loaded machine more
RUN_TIMEOUT_S = 120.0


def free_suite(pull_s: float, tendons=("FDP", "ED")) -> str:
    trials = "".join(f"""
[[trial]]
name = "free/{t}"
pose = "Flex"
pulls = [{{ tendon = "{t}", amplitude_mm = 10, duration_s = {pull_s!r} }}]
return = true
""" for t in tendons)
    return f"""
[suite]
name = "model_process"
repeats = 1
[suite.settle]
window_s = 0.5
hold_s = 0.1
timeout_s = 6.0
{trials}"""


class Core:
    """`uartlab rig serve` on the twin rig at 2x, on an ipc address of its own (paths under 107 bytes). The
    twin's devices live in the core's process and have real timeouts: on a loaded machine a servo that answered
    too late stops the rig's bus stream for good, so a run that faulted that way gets a fresh core."""

    def __init__(self, folder: Path):
        self.base = f"ipc://{folder}/core"
        self.rig = patient_twin_rig(folder)   # the longest device timeouts rig.toml allows (test_core.py)
        self.log = folder / "core.log"   # a file, not a pipe: a pipe nobody reads would stop the core's logging
        self.proc: subprocess.Popen | None = None
        self.restart()

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def restart(self) -> None:
        self.stop()
        for _attempt in range(3):
            with open(self.log, "w") as stderr:
                self.proc = subprocess.Popen(
                    [sys.executable, "-m", "uartlab.app.cli", "rig", "serve", "--core", self.base, "--rig",
                     str(self.rig), "--speed", str(SPEED)], stdout=subprocess.PIPE, stderr=stderr, text=True)
            line = self.proc.stdout.readline() if self.proc.stdout else ""
            if "serving at" in line or not re.search(DEVICE_TIMING, self.log.read_text()):
                break
            self.proc.wait(timeout=60)
        assert "serving at" in line, (line, self.log.read_text())

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture(scope="module")
def core():
    folder = Path(tempfile.mkdtemp(prefix="uartlab-mp-"))
    core = None
    try:
        core = Core(folder)
        yield core
    finally:
        if core is not None:
            core.stop()
        shutil.rmtree(folder, ignore_errors=True)


def model_processes(core_pid: int) -> list[int]:
    """The live model processes the core started (its children running app/serve/model_process.py)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if int(ppid) == core_pid and "uartlab.app.serve.model_process" in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def run_on_core(core: Core, suite_text: str, folder: Path, while_running=None) -> dict:
    """The suite run on the core, until it is over (``while_running(status)`` on each poll of its status). A run
    that faulted on device timing, which the model process cannot cause (it only reads the runner stream and
    sends its own), is repeated on a fresh core, twice at most, as tests/app/run/test_live_model.py repeats."""
    for attempt in range(3):
        if attempt:
            core.restart()
        try:
            status = _run_once(core.base, suite_text, folder / f"attempt{attempt}", while_running)
        except NoCoreError as exc:   # the core's log says where it stalled (its command thread's stack dump)
            raise AssertionError(f"{exc}\n{core.log.read_text()[-8000:]}") from None
        reason = str(status.get("fault_reason") or status.get("error") or "")
        if status.get("phase") == "DONE" or not re.search(DEVICE_TIMING, reason):
            break
    return status


def _run_once(base: str, suite_text: str, folder: Path, while_running) -> dict:
    with CoreClient(base, subscribe=False, timeout_s=10.0) as client:
        deadline = time.monotonic() + RUN_TIMEOUT_S
        while run_busy(client.status()):   # an earlier test's run
            assert time.monotonic() < deadline, "the core's last run never ended"
            time.sleep(0.1)
        client.request("run", suite="model_process.toml", suite_text=suite_text, folder=str(folder),
                       live_model=True, operator="test")
        deadline = time.monotonic() + RUN_TIMEOUT_S
        while (status := client.status()["run"]).get("state") != "over":
            assert time.monotonic() < deadline, status
            if while_running is not None:
                while_running(status)
            time.sleep(0.05)
    return status


def test_the_model_runs_in_its_own_process_and_is_recorded_with_the_in_process_models_residuals(core, tmp_path):
    status = run_on_core(core, free_suite(2.0), tmp_path)
    assert status["phase"] == "DONE", (status, core.log.read_text()[-3000:])
    path = status["session_file"]
    with SessionFile(path) as f:
        assert f.complete
        model, runner = f.read(MODEL_STREAM), f.read(RUNNER_STREAM)
        events = f.events()
    said = [e.message for e in events if e.source == MODEL_SOURCE]
    assert sum("model started from the measured state" in m for m in said) == 2, said
    report = json.loads(next(e.message for e in events if e.kind == "drops" and e.source == MODEL_SOURCE))
    assert report["trials"] == 2 and report["records_not_sent"] == 0, report
    assert report["runner_ticks"] >= 0.95 * len(runner), (report, len(runner))   # what the loop made
    assert report["model_samples"] == len(model)       # every sample the process made is in the file
    assert np.all(np.isin(model.host_time_s, runner.host_time_s))   # one sample per tick, at the tick's time

    # The same runner ticks through the same model in this process, with the run's parameters, one by one.
    params, _ = recorded_model_params([path])
    hub = Hub()
    hub.register(runner_spec())
    out = hub.subscribe("witness", {MODEL_STREAM}, maxsize=100_000)
    suite = parse_suite(free_suite(2.0), "model_process.toml")
    here = LiveModel(hub, Finger(params), suite, time_scale=SPEED, behind_s=np.inf)
    here.process([runner])
    mine = Record.concatenate([item for item in out.drain() if isinstance(item, Record)])
    theirs = model.data
    _, a, b = np.intersect1d(model.host_time_s, mine.host_time_s, return_indices=True)
    assert len(a) == len(model)   # every sample the process made is at a tick this model made one too
    scored_phases = [PHASES.index(p) for p in (Phase.ACTUATE, Phase.SETTLE, Phase.RECORD)]
    followed_phases = sorted(ACTIVE_PHASES)   # actuation to the return
    exact_samples = 0
    for index in (0, 1):
        # Every tick of the trial, one by one or merged when behind (the loop itself ticks slower on a machine
        # this loaded: what is asked is that the model has every tick the loop made, not 100 per second).
        # Counted over all the phases the model follows: ticks merged across a phase's end land in the next.
        ticks = int((np.isin(runner.data[RUNNER.phase], followed_phases)
                     & (runner.data[RUNNER.trial_index] == index)).sum())
        followed = np.isin(theirs[MODEL.phase], followed_phases) & (theirs[MODEL.trial_index] == index)
        assert ticks > 10 and theirs[MODEL.ticks_merged][followed].sum() >= 0.9 * ticks, (index, ticks)
        trial = np.isin(theirs[MODEL.phase], scored_phases) & (theirs[MODEL.trial_index] == index)
        # Tick for tick the in-process model's predictions, exactly, until the process had to catch up by
        # merging ticks (one step over several ticks' mean excursion rate: it lands on the measured excursion,
        # the path between differs); after that, close.
        rows = np.flatnonzero(theirs[MODEL.trial_index][a] == index)
        merged = np.flatnonzero(theirs[MODEL.ticks_merged][a[rows]] > 1)
        exact = rows[: merged[0]] if len(merged) else rows   # the first sample, the start, is never merged
        exact_samples += len(exact)
        for name in ("joint_angles_rad", "tendon_force_N", "residual_joint_angles_rad"):
            np.testing.assert_allclose(theirs[name][a[exact]], mine.data[name][b[exact]], atol=1e-9, err_msg=name)
        gap_deg = np.degrees(np.abs(theirs["joint_angles_rad"][a[rows]] - mine.data["joint_angles_rad"][b[rows]]))
        assert gap_deg.max() < 5.0, (index, gap_deg.max(), len(merged))
        # Not garbage: the twin's finger is the model's (tests/app/run/test_live_model.py bounds the RMS over the
        # four joints by 1.5 deg when the loop keeps time; ticks 0.5 s apart on a loaded machine double it).
        scored = theirs["residual_joint_angles_rad"][trial]
        assert np.degrees(np.sqrt(np.nanmean(scored ** 2))) < 5.0, index
    assert exact_samples >= 10, exact_samples
    # The run's report, made in the core, has the model's table from what reached it.
    text = status["report"]["text"]
    assert re.search(r"^free/FDP\s+0\s", text, re.M) and re.search(r"^free/ED\s+1\s", text, re.M), text
    assert [r["trial"] for r in status["report"]["json"]["live_model_rms_residuals"]] == ["free/FDP", "free/ED"]


def test_a_model_process_killed_mid_trial_leaves_the_run_completing_and_the_file_saying_so(core, tmp_path):
    killed: dict[tuple[int, int], int] = {}   # (core, run id) -> the model process killed in that run
    actuate = str(Phase.ACTUATE)

    def kill_the_model_in_actuation(status: dict) -> None:
        if (core.pid, status["id"]) in killed or status.get("phase") != actuate:
            return
        pids = model_processes(core.pid)
        assert len(pids) == 1, pids   # the run's own; the next one starts when the run's model has closed
        os.kill(pids[0], signal.SIGKILL)
        killed[core.pid, status["id"]] = pids[0]

    status = run_on_core(core, free_suite(3.0, ("FDP", "ED")), tmp_path, kill_the_model_in_actuation)
    assert (core.pid, status["id"]) in killed, ("the run never reached ACTUATE with its model process", status)
    assert status["phase"] == "DONE", status
    with SessionFile(status["session_file"]) as f:
        assert f.complete
        # The trials ran to their end (settled, or not within the suite's timeout on a machine this loaded).
        assert all(t["outcome"] in ("settled", "settle timeout") for t in f.trials()), f.trials()
        events = f.events()
        model = f.read(MODEL_STREAM)
    # The trial after the kill has no model at all (nor, on a loaded machine, the one it was killed in, when none
    # of its samples had reached the core): the file, the report and the core's log say which.
    (unmodelled,) = [e.message for e in events if e.kind == EventKind.UNMODELLED]
    missing = unmodelled_trials(unmodelled)
    assert ("free/ED", 1) in missing and set(missing) <= {("free/FDP", 1), ("free/ED", 1)}, unmodelled
    sentence = unmodelled_sentence(unmodelled)
    assert sentence.startswith(f"no model samples for {len(missing)} of 2 trials measured (")
    assert f"live model: {sentence}" in status["report"]["text"]
    assert status["report"]["json"]["live_model_unmodelled"] == [{"trial": t, "repeat": r} for t, r in missing]
    assert sentence in core.log.read_text()
    said = [e.message for e in events if e.source == MODEL_SOURCE and e.kind == "model"]
    assert any("the live model process was killed by SIGKILL during the run; the run goes on without the model"
               in m for m in said), said
    counts = json.loads(next(e.message for e in events if e.kind == "drops" and e.source == MODEL_SOURCE))
    assert counts["exit"] == "was killed by SIGKILL" and counts["from"] in (
        "its last report before it stopped", "no report"), counts
    # Nothing modelled after it died: no prediction reaches the trial's steady state.
    assert not np.isin(model.data["phase"], [PHASES.index(Phase.RECORD)]).any()
    # A fresh process waits for the core's next run.
    assert wait_for(lambda: len(model_processes(core.pid)) == 1, timeout_s=30.0)


def test_a_model_process_held_up_through_a_trial_models_every_tick_the_core_sent_it(core, tmp_path):
    """A model process that gets no CPU for seconds (here stopped from the first actuation until the run is
    over, as a loaded machine can hold up a process at a lower priority) still has every runner tick the core
    sent it on its socket: stopped, it takes them in first, so every trial run is modelled (catching up by
    merging ticks) and nothing is said missing."""
    held: dict[tuple[int, int], int] = {}
    actuate = str(Phase.ACTUATE)

    def hold_the_model_until_the_run_ends(status: dict) -> None:
        key = (core.pid, status["id"])
        if key not in held and status.get("phase") == actuate:
            (pid,) = model_processes(core.pid)
            os.kill(pid, signal.SIGSTOP)
            held[key] = pid
        elif key in held and status.get("state") == "closing":   # the run's close ends the model's stdin
            with contextlib.suppress(ProcessLookupError):          # it has finished and exited since
                os.kill(held[key], signal.SIGCONT)

    try:
        status = run_on_core(core, free_suite(2.0), tmp_path, hold_the_model_until_the_run_ends)
    finally:
        for pid in held.values():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
    assert (core.pid, status["id"]) in held, ("the run never reached ACTUATE with its model process", status)
    assert status["phase"] == "DONE", status
    with SessionFile(status["session_file"]) as f:
        runner, model, events = f.read(RUNNER_STREAM), f.read(MODEL_STREAM), f.events()
    assert not [e.message for e in events if e.kind == EventKind.UNMODELLED]
    counts = json.loads(next(e.message for e in events if e.kind == "drops" and e.source == MODEL_SOURCE))
    # All the loop made, up to what the core queues for a subscriber that does not read (the publisher's bound:
    # a run that outlasts it on a loaded machine loses the rest there, by design).
    assert counts["runner_ticks"] >= 0.95 * min(len(runner), SNDHWM) and counts["trials"] == 2, (counts, len(runner))
    assert set(np.unique(model.data[MODEL.trial_index])) == {0, 1}
    assert [r["trial"] for r in status["report"]["json"]["live_model_rms_residuals"]] == ["free/FDP", "free/ED"]


def test_the_core_stopping_ends_the_model_process_waiting_for_a_run(core):
    assert wait_for(lambda: len(model_processes(core.pid)) == 1, timeout_s=30.0)
    waiting = model_processes(core.pid)[0]
    core.stop()
    assert wait_for(lambda: gone(waiting), timeout_s=15.0)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice values are Linux's")
def test_the_model_runs_below_the_core_and_level_with_ordinary_load():
    """A raised core (nice -10 where allowed) starts its model at nice 0: below the core and the window, level
    with ordinary load, which must not starve it. A core that could not be raised gets its model 5 below it."""
    from uartlab.app.run.realtime import NICE_RAISE
    from uartlab.app.serve.model_process import BELOW_CORE_NICE, model_nice

    assert model_nice(NICE_RAISE) == 0 and model_nice(0) == BELOW_CORE_NICE
    raised = subprocess.run(["nice", "-n", str(NICE_RAISE), "true"], capture_output=True).returncode == 0
    core_nice = os.getpriority(os.PRIO_PROCESS, 0) + (NICE_RAISE if raised else 0)
    prefix = ["nice", "-n", str(NICE_RAISE)] if raised else []
    model = subprocess.Popen([*prefix, sys.executable, "-m", "uartlab.app.serve.model_process",
                              "--core", "ipc:///nonexistent/uartlab-core"],
                             stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while os.getpriority(os.PRIO_PROCESS, model.pid) != model_nice(core_nice):   # set first thing in main()
            assert model.poll() is None, model.stderr.read()
            assert time.monotonic() < deadline, f"the model at nice {os.getpriority(os.PRIO_PROCESS, model.pid)}"
            time.sleep(0.05)
    finally:
        model.stdin.close()   # no job: it ends at once
        assert model.wait(timeout=30) == 0, model.stderr.read()
