"""The rig core from the user's seat: `uartlab rig serve` in its own process on the twin rig, clients that
attach, leave, die, lag or press the E-stop from another process. One core serves the whole module."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import zmq
from conftest import short_suite_toml
from uartlab.app.record.player import SessionFile
from uartlab.app.serve.client import CoreClient, NoCoreError
from uartlab.app.serve.endpoints import endpoints_for
from uartlab.hub import Hub
from uartlab.schema import PHASES, Outcome, Phase

pytestmark = [pytest.mark.realtime, pytest.mark.slow]

CLI = [sys.executable, "-m", "uartlab.app.cli"]
SPEED = "2"
START_TIMEOUT_S = 120.0   # the twin rig on a loaded 2-core machine


def start_core(base: str, *extra: str, log: Path, keys_dir: Path | None = None,
               speed: str | None = SPEED) -> subprocess.Popen:
    speed_option = ["--speed", speed] if speed is not None else []
    proc = subprocess.Popen([*CLI, "rig", "serve", "--core", base, *speed_option, *extra],
                            stdout=subprocess.DEVNULL, stderr=open(log, "w"), start_new_session=True)  # noqa: SIM115
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        assert proc.poll() is None, log.read_text()
        try:
            with CoreClient(base, subscribe=False, keys_dir=keys_dir):
                return proc
        except NoCoreError:
            time.sleep(0.3)
    proc.kill()
    raise AssertionError(f"no core at {base} after {START_TIMEOUT_S} s: {log.read_text()}")


def stop_core(proc: subprocess.Popen) -> int:
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()


def patient_twin_rig(folder: Path) -> Path:
    """The twin rig with the most patient bus watchdog and stale-stream limits rig.toml allows: these tests
    are about the core and its clients, and a machine busy with other work delays an in-process twin by
    hundreds of ms at times (which would end a run before the event under test)."""
    from importlib import resources

    text = (resources.files("uartlab.app") / "data" / "twin_rig.toml").read_text(encoding="utf-8")
    text = text.replace("watchdog_ms = 500.0", "watchdog_ms = 2540.0")
    for stream in ("actuators", "daq", "mocap", "joints"):
        text = text.replace(f"{stream}_max_age_s = 1.0", f"{stream}_max_age_s = 3.0")
    path = folder / "rig.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def core(tmp_path_factory):
    folder = tmp_path_factory.mktemp("core")
    base = f"ipc://{folder}/core"
    proc = start_core(base, "--rig", str(patient_twin_rig(folder)), log=folder / "serve.log")
    yield base, folder
    assert stop_core(proc) == 0, (folder / "serve.log").read_text()


def submit(client: CoreClient, folder: Path, pull_s: float = 1.0, **options) -> None:
    client.request("run", suite="short.toml", suite_text=short_suite_toml(pull_s), folder=str(folder),
                   live_model=False, **options)


def wait_phase(client: CoreClient, phases: set[str], timeout_s: float = 90.0) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        run = client.status()["run"]
        if run.get("phase") in phases or run["state"] == "over":
            return run
        time.sleep(0.05)
    raise AssertionError(f"the run never reached {phases}: {client.status()}")


def wait_over(client: CoreClient, timeout_s: float = 120.0) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        run = client.status()["run"]
        if run["state"] == "over":
            return run
        time.sleep(0.1)
    raise AssertionError(f"the run did not end: {client.status()}")


def verify(path: str) -> None:
    proc = subprocess.run([*CLI, "verify", path], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_estop_from_another_process_turns_torque_off_within_a_tick_and_records_who(core, tmp_path):
    reason = "the FDP tendon jumped off its pulley at the MCP and is rubbing on the frame"
    base, _ = core
    with CoreClient(base, subscribe=False) as client:
        client.request("reset")
        submit(client, tmp_path, pull_s=20.0)             # 10 s at 2x: time for `uartlab estop` to start
        wait_phase(client, {"ACTUATE"})
        time.sleep(0.5)                                   # mid-pull: the servos are moving the tendon
        proc = subprocess.run([*CLI, "estop", "--core", base, *reason.split()], capture_output=True, text=True,
                              timeout=30)
        assert proc.returncode == 0 and "E-stop acknowledged by the core" in proc.stdout, proc.stderr
        run = wait_over(client)
        assert f"recorded in {run['session_file']})" in proc.stdout   # where the operator finds it
        assert run["phase"] == "FAULT" and reason in run["fault_reason"]
        client.request("reset")
    with SessionFile(run["session_file"]) as f:
        assert f.complete
        estop = next(e for e in f.events() if e.kind == "estop")
        assert estop.message.startswith(f"{reason} (E-stop from ") and " pid " in estop.message
        # the trial's outcome keeps the whole reason, however long an operator's words
        assert [t["outcome"] for t in f.trials()] == [Outcome.ESTOPPED.because(estop.message)]
        assert any(e.kind == "operator" and "submitted by" in e.message and " pid " in e.message
                   for e in f.events())                                  # who submitted the run
        runner = f.read("runner")
        after = runner.host_time_s > estop.host_time_s
        first = int(np.argmax(after))
        # Torque went off on the E-stop's own thread (the acknowledgement came once each servo had read back
        # Torque Enable = 0); the very next tick is FAULT and commands nothing, and so is every tick after it.
        assert PHASES[int(runner.data["phase"][first])] is Phase.FAULT
        assert np.isnan(runner.data["command_m"][after]).all()
        before = runner.host_time_s < estop.host_time_s
        assert PHASES[int(runner.data["phase"][before][-1])] in (Phase.ACTUATE, Phase.FAULT)
    verify(run["session_file"])


def test_estop_with_no_run_says_which_file_holds_it_or_that_none_does(core, tmp_path):
    """The E-stop of an idle rig: into the operator's open recording, and said so; with nothing recording, the
    acknowledgement says no file holds it and the core's log does."""
    base, folder = core

    def estop(reason: str) -> str:
        proc = subprocess.run([*CLI, "estop", "--core", base, reason], capture_output=True, text=True, timeout=30)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    with CoreClient(base, subscribe=False) as client:
        client.request("reset")
        path = client.request("record_start", folder=str(tmp_path))["path"]
        said = estop("checking the recorded stop")
        client.request("record_stop")
        assert said.endswith(f"(checking the recorded stop; recorded in {path})\n"), said
        with SessionFile(path) as f:
            assert any(e.kind == "estop" and e.message.startswith("checking the recorded stop") for e in f.events())
        client.request("reset")
        said = estop("checking the unrecorded stop")
        assert said.endswith("(checking the unrecorded stop; no session file open to record it)\n"), said
        assert client.status()["estop"].startswith("checking the unrecorded stop")   # latched all the same
        client.request("reset")
    assert "E-stop with no session file open to record it: checking the unrecorded stop" in \
        (folder / "serve.log").read_text()


def test_a_client_killed_mid_trial_leaves_the_trial_to_complete_and_the_file_to_close(core, tmp_path):
    base, _ = core
    suite = tmp_path / "short.toml"
    suite.write_text(short_suite_toml(2.0), encoding="utf-8")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([*CLI, "run", str(suite), "--core", base, "--out", str(tmp_path), "--no-live-model"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if "ACTUATE" in line:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    assert any("ACTUATE" in line for line in lines), "".join(lines)
    with CoreClient(base, subscribe=False) as client:
        run = wait_over(client)
        client.request("reset")
    assert run["phase"] == "DONE", run
    assert [t["outcome"] for t in run["report"]["json"]["trials"]] == ["settled"]
    with SessionFile(run["session_file"]) as f:
        assert f.complete and [t["outcome"] for t in f.trials()] == ["settled"]
    verify(run["session_file"])


def test_a_client_attached_mid_run_gets_the_present_and_the_last_seconds(core, tmp_path):
    base, _ = core
    with CoreClient(base, subscribe=False) as client:
        submit(client, tmp_path, pull_s=4.0)
        wait_phase(client, {"ACTUATE"})
        time.sleep(1.0)
        attached_s = time.monotonic()
        hub = Hub()
        with CoreClient(base, attach_history=True, hub=hub) as late:
            assert late.hello["status"]["run"]["phase"] in ("ACTUATE", "SETTLE", "RETURN")   # the present
            assert "[actuators]" in late.hello["config_text"]
            sub = hub.subscribe("late", None, maxsize=100_000)
            time.sleep(1.0)
            items = sub.drain()
        wait_over(client)
        client.request("reset")
    # the hub was subscribed after the history was published: the history reached the hub's recent events
    trial_events = [e for e in hub.recent_events() if e.kind == "trial"]
    assert any(e.message.startswith("start 'ED'") for e in trial_events), trial_events
    runner = [r for r in items if getattr(r, "stream", None) == "runner"]
    assert runner, "no live runner records after attaching"
    assert all(r.host_time_s[0] > attached_s - 0.5 for r in runner)


def test_the_history_of_a_late_client_reaches_its_hub_before_the_live_data(core, tmp_path):
    base, _ = core
    with CoreClient(base, subscribe=False) as client:
        submit(client, tmp_path, pull_s=4.0)
        wait_phase(client, {"ACTUATE"})
        time.sleep(1.5)
        hub = Hub()
        real_register = hub.register
        subs = {}

        def register(spec):   # subscribe as soon as the streams are known: before any history is published
            real_register(spec)
            subs.setdefault("all", hub.subscribe("late", None, maxsize=100_000))
        hub.register = register   # type: ignore[method-assign]
        attached_s = time.monotonic()
        with CoreClient(base, attach_history=True, hub=hub):
            time.sleep(0.5)
            items = subs["all"].drain()
        wait_over(client)
        client.request("reset")
    runner_t = np.concatenate([r.host_time_s for r in items if getattr(r, "stream", None) == "runner"])
    assert runner_t.min() < attached_s - 1.0 and runner_t.max() > attached_s   # the past, then the present
    assert np.all(np.diff(runner_t) > 0), "history and live data overlap or go back in time"
    assert any(getattr(e, "kind", None) == "trial" for e in items)               # the recent events too


def test_a_slow_client_does_not_slow_the_loop_and_loses_its_oldest_data(core, tmp_path):
    base, _ = core
    context = zmq.Context()
    stuck = context.socket(zmq.SUB)          # a viewer that never reads at all
    stuck.setsockopt(zmq.RCVHWM, 10)
    stuck.setsockopt(zmq.SUBSCRIBE, b"")
    stuck.connect(endpoints_for(base).data)
    try:
        with CoreClient(base, subscribe=True) as slow:
            lagging = slow.hub.subscribe("never-drained", {"runner", "daq"}, maxsize=50)
            with CoreClient(base, subscribe=False) as client:
                submit(client, tmp_path, pull_s=2.0)
                run = wait_over(client)
                client.request("reset")
            dropped = lagging.dropped
            kept = lagging.drain()
    finally:
        stuck.close(linger=0)
        context.term()
    assert run["phase"] == "DONE", run
    assert dropped.get("daq", 0) > 0 and dropped.get("runner", 0) > 0
    newest = max(float(r.host_time_s[-1]) for r in kept if r.stream == "runner")
    with SessionFile(run["session_file"]) as f:
        runner = f.read("runner")
    assert newest > float(runner.host_time_s[-1]) - 1.0     # what it kept is the newest, not the oldest
    # A publisher held by a stuck viewer would stall every hub publisher, the loop's own `runner` record
    # included: the loop would stop until the viewer went away. It kept ticking at its period (a busy machine
    # adds jitter of its own; the loop's timing under load is `uartlab bench loop`'s to measure).
    interval_s = np.diff(runner.host_time_s)
    assert np.median(interval_s) == pytest.approx(0.01, abs=0.003)
    assert interval_s.max() < 1.0, f"the loop stalled {interval_s.max():.3f} s"


def test_a_bad_request_is_one_line_and_the_core_goes_on(core):
    base, _ = core
    with CoreClient(base, subscribe=False) as client:
        with pytest.raises(ValueError, match="unknown request 'fly'"):
            client.request("fly")
        with pytest.raises(ValueError, match="no trial named 'XYZ'"):
            client.request("run", suite="free_motion", trials=["XYZ"])
        assert client.status()["run"]["state"] in ("idle", "over")


def test_a_second_core_on_the_same_address_leaves_at_once_and_the_first_keeps_serving(core, tmp_path):
    """Whether a core serves an ipc address is its lock, not how fast a busy core answers a hello: the second
    core says so in one line and exits without touching the first one's socket files."""
    from uartlab.app.serve.endpoints import endpoints_for, holder, ipc_paths

    base, _ = core
    assert holder(base) is not None and holder(f"ipc://{tmp_path}/nobody") is None
    proc = subprocess.run([*CLI, "rig", "serve", "--core", base], capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and "another core (pid " in proc.stderr and f"already serves {base}" in proc.stderr
    assert proc.stderr.strip().count("\n") == 0, proc.stderr
    assert all(path.exists() for path in ipc_paths(endpoints_for(base)))
    with CoreClient(base, subscribe=False) as client:
        assert client.status()["uptime_s"] > 0


def test_rig_status_says_what_the_core_is_doing_from_any_terminal(core, tmp_path):
    base, _ = core
    status = [*CLI, "rig", "status", "--core", base]
    with CoreClient(base, subscribe=False) as client:
        client.request("reset")
        submit(client, tmp_path, pull_s=20.0)
        wait_phase(client, {"ACTUATE"})
        during = subprocess.run(status, capture_output=True, text=True, timeout=30)
        client.request("abort", why="the status was read")
        run = wait_over(client)
        after = subprocess.run(status, capture_output=True, text=True, timeout=30)
        client.request("reset")
    assert during.returncode == 0 and during.stderr == "", during.stderr
    lines = during.stdout.splitlines()
    assert lines[0].startswith(f"rig core at {base} (pid ") and "rig.toml (twin, 2x)" in lines[0]
    assert lines[1] == "devices: actuators streaming · daq streaming · mocap streaming"
    assert "'short': ACTUATE, ED repeat 1 of 1 (trial 1 of 1 in this run)" in lines[2]
    assert lines[3].startswith(f"recording: {run['session_file']} (")
    assert lines[4] == "E-stop: not latched"
    assert after.returncode == 0 and "'short': ABORTED: the status was read\n" in after.stdout
    with SessionFile(run["session_file"]) as f:   # a look at the core is not a client attaching to the run
        assert not [e.message for e in f.events() if "client attached" in e.message]
    assert f"recording: none (the last run's file: {run['session_file']})" in after.stdout
    nobody = subprocess.run([*CLI, "rig", "status", "--core", f"ipc://{tmp_path}/none"], capture_output=True,
                            text=True, timeout=30)
    assert nobody.returncode == 3 and nobody.stderr.count("\n") == 1 and "no core serves" in nobody.stderr


def test_a_tare_while_the_servos_pull_is_refused_and_the_run_goes_on(core, tmp_path):
    """A bias taken mid-trial would hide the load on the fingertip from its force limit for the rest of the run:
    the core refuses it, as the window's greyed button does; between runs the tare is done."""
    from uartlab.errors import DeviceError

    base, _ = core
    with CoreClient(base, subscribe=False) as client:
        client.request("reset")
        submit(client, tmp_path, pull_s=2.0)
        wait_phase(client, {"ACTUATE"})
        with pytest.raises(DeviceError, match="the Nano17 is tared unloaded, not while the servos are busy"):
            client.request("tare")
        run = wait_over(client)
        assert run["phase"] == "DONE" and [r["outcome"] for r in run["results"]] == ["settled"]
        client.request("reset")
        assert client.request("tare") == {"tared": True}


def test_estop_without_a_core_says_nothing_stopped_and_what_does_in_one_line_and_exits_3(tmp_path):
    proc = subprocess.run([*CLI, "estop", "--core", f"ipc://{tmp_path}/none", "why"], capture_output=True, text=True,
                          timeout=30)
    assert proc.returncode == 3 and proc.stderr.count("\n") == 1
    assert proc.stderr.startswith(f"uartlab estop: NOTHING STOPPED: no rig core took the E-stop at ipc://{tmp_path}/none")
    assert "hardware E-stop" in proc.stderr


def test_ctrl_c_at_the_cores_terminal_stops_it_in_order(tmp_path):
    """Ctrl-C where `uartlab rig serve` runs reaches its whole process group, as a terminal sends it. The
    core stops its rig in order; its twin process stands in for devices, which no Ctrl-C reaches: the core
    stops it last, so no stream fails on the way down."""
    log = tmp_path / "serve.log"
    proc = start_core(f"ipc://{tmp_path}/core", log=log)   # the leader of its process group, as in a terminal
    os.killpg(proc.pid, signal.SIGINT)
    assert proc.wait(60) == 0
    said = log.read_text()
    assert said.rstrip().endswith("uartlab rig core stopped."), said
    assert "failed" not in said, said
