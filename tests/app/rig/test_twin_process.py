"""The twin rig in its own process (app/rig/twin_process.py, `uartlab twin up --json`): it serves the rig's
real drivers, answers its control channel, outlives a dead parent just long enough for the servos' Bus
Watchdog to trip, and a start that fails says why in one line."""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
import zmq
from conftest import nice_allowed, thread_nices, wait_for
from uartlab.app.rig import twin_process
from uartlab.app.rig.config import default_rig_config
from uartlab.app.rig.rig import Rig
from uartlab.app.rig.twin_control import TwinControl
from uartlab.app.rig.twin_process import LOG_PREFIX, ORPHAN_GRACE_S, POST_MORTEM_KEEP_DAYS, TwinProcess
from uartlab.errors import DeviceError

pytestmark = pytest.mark.slow   # each test brings up a twin process


@pytest.fixture(scope="module")
def rig():
    with Rig(default_rig_config()) as rig:
        yield rig


def test_the_twin_runs_in_its_own_process_and_serves_the_real_drivers(rig):
    twin = rig._twin
    assert isinstance(twin, TwinProcess) and twin.pid != os.getpid()
    assert Path(f"/proc/{twin.pid}/cmdline").read_bytes().split(b"\0")[3:5] == [b"twin", b"spare"]
    assert wait_for(lambda: all(h.state == "streaming" and h.samples > 10 for h in rig.health().values()), 10.0)
    assert rig.twin_plant.state()[12:18].shape == (6,) and rig.twin_plant.params.input_stiffness_N_per_m.shape == (6,)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice values are Linux's")
def test_the_twins_threads_run_at_the_cores_priority_as_devices_it_waits_on(rig):
    """The core's deadlines wait on the twins' answers: a twin thread at nice 0 holding the GIL loses the CPU
    to the core's threads at -10 while the bus twin's real-time thread waits for it."""
    from uartlab.app.run import realtime

    if not nice_allowed(realtime.NICE_RAISE):
        pytest.skip(f"nice {realtime.NICE_RAISE} needs root, CAP_SYS_NICE or a nice limit")
    assert wait_for(lambda: all(h.state == "streaming" for h in rig.health().values()), 10.0)
    # the normal threads (the bus and plant threads run SCHED_FIFO: drivers/twins/realtime.py)
    nices = thread_nices(rig._twin.pid, os.SCHED_OTHER)
    assert len(nices) > 3 and set(nices) == {realtime.NICE_RAISE}, nices


def test_the_control_channel_places_the_finger_and_injects_faults(rig):
    before = rig.twin_plant.state()[8:12]
    assert rig.place_finger("Curl", None)
    after = rig.twin_plant.state()[8:12]
    assert np.abs(after - before).max() > 0.2          # the finger jumped to the other pose
    assert rig.place_finger("Flex", None)

    rig._twin.motive.pause()
    assert wait_for(lambda: rig.health()["mocap"].last_sample_age_s > 0.3, 3.0)
    rig._twin.motive.resume()
    assert wait_for(lambda: rig.health()["mocap"].last_sample_age_s < 0.1, 3.0)


def test_unknown_operations_and_bad_arguments_are_one_line(rig):
    control = TwinControl(rig._twin.endpoints["control"])
    with pytest.raises(DeviceError, match=r"unknown operation 'jump' \(known: .*place.*\)"):
        control.call("jump")
    with pytest.raises(DeviceError, match="twin control: place: bad arguments") as bad:
        control.call("place", pose="Flex")
    assert "\n" not in str(bad.value)
    raw = zmq.Context.instance().socket(zmq.REQ)   # a client that does not speak the protocol: the line too
    raw.connect(rig._twin.endpoints["control"])
    raw.send(b"hello")
    assert raw.poll(5000)
    assert pickle.loads(raw.recv()) == (False, 'twin control: a request is JSON {"op": NAME, "args": {...}}')
    raw.close(linger=0)
    assert control.call("ping") == "pong"
    control.close()


def test_a_twin_that_cannot_start_is_one_clear_line():
    twin = TwinProcess(["--protocol", "1.0", "--servo-ids", "1,2,3,4,5,300"])   # 300: not a Protocol 1.0 ID
    with pytest.raises(DeviceError) as failed:
        twin.start()
    message = str(failed.value)
    assert "\n" not in message and "exited with status 2" in message and "servo IDs must be distinct" in message
    assert twin.process is not None and twin.process.returncode == 2   # reaped
    assert twin.log_path is not None and not twin.log_path.exists()      # nothing left behind


SPARE_KEEPER = textwrap.dedent("""
    import sys, time
    from uartlab.app.rig import twin_process

    twin_process.keep_spares(True)
    twin_process._Spare.prepare_next()          # as after a twin has started: the next one's spare, ahead
    print(twin_process._Spare.kept.log_path, twin_process._Spare.kept.process.pid, flush=True)
    time.sleep(600)
""")


def test_a_spare_whose_process_dies_before_using_it_leaves_no_log_behind():
    keeper = subprocess.Popen([sys.executable, "-c", SPARE_KEEPER], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        line = keeper.stdout.readline().decode().split()
        assert line, keeper.stderr.read().decode()
        log, spare_pid = Path(line[0]), int(line[1])
        assert log.exists()
    finally:
        keeper.kill()
        keeper.wait()
    assert wait_for(lambda: _gone(spare_pid), 30.0)       # its input ended: nothing started
    assert not log.exists()


PARENT = textwrap.dedent("""
    import json, sys
    from uartlab.app.rig.config import default_rig_config
    from uartlab.app.rig.rig import Rig
    from uartlab.protocols.steps import Hold

    rig = Rig(default_rig_config()).start()
    with rig.motion("hold", max_travel_m=0.005) as run:      # torque on, the engine commanding every tick
        twin = rig._twin
        print(json.dumps({"pid": twin.pid, "control": twin.endpoints["control"], "log": str(twin.log_path)}),
              flush=True)
        run.step(Hold(600.0))
""")


def _gone(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "\nState:\tZ" in status    # exited, not yet reaped by whoever inherited it


@pytest.mark.timeout(240)
def test_a_twin_outlives_its_killed_parent_for_the_grace_period_while_the_watchdog_stops_the_servos():
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    twin: dict = {}
    try:
        line = parent.stdout.readline()
        assert line, parent.stderr.read().decode()
        twin = json.loads(line)
        control = TwinControl(twin["control"])
        assert wait_for(lambda: all(s.torque_enabled for s in control.call("servos")), 10.0)
        assert not any(s.bus_watchdog_tripped for s in control.call("servos"))
        parent.send_signal(signal.SIGKILL)                     # the rig's process dies: nobody talks to the bus
        killed = time.monotonic()
        parent.wait()
        # Bus Watchdog 500 ms (twin_rig.toml): the servos stop and hold, torque on, as the MX-64 does.
        assert wait_for(lambda: all(s.bus_watchdog_tripped for s in control.call("servos")), 3.0)
        assert all(s.torque_enabled for s in control.call("servos"))
        assert time.monotonic() - killed < ORPHAN_GRACE_S and not _gone(twin["pid"])   # still up in the grace
        assert wait_for(lambda: _gone(twin["pid"]), ORPHAN_GRACE_S + 10.0)
        control.close()
        log = Path(twin["log"]).read_text()
        assert f"parent process {parent.pid} is gone" in log
        assert log.count("watchdog tripped, torque on, holding") == 6 and "twin rig stopped." in log
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        if twin:
            Path(twin["log"]).unlink(missing_ok=True)   # a parent that dies leaves its twin's log for a post-mortem


def _log_of(pid: int, content: str, age_s: float) -> Path:
    path = Path(tempfile.gettempdir()) / f"{LOG_PREFIX}{pid}-test{age_s:g}{len(content)}.log"
    path.write_text(content)
    os.utime(path, (time.time() - age_s, time.time() - age_s))
    return path


def test_empty_logs_and_week_old_post_mortems_are_removed_by_the_next_twin_start():
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    left_empty = _log_of(gone.pid, "", age_s=120.0)
    telling = _log_of(gone.pid, "twin: parent process is gone\n", age_s=120.0)   # a post-mortem: kept a while
    week_old = _log_of(gone.pid, "twin: parent process is gone\n", age_s=POST_MORTEM_KEEP_DAYS * 86400 + 60)
    just_started = _log_of(gone.pid, "", age_s=0.0)          # its twin may not have written yet
    of_a_live_process = _log_of(os.getpid(), "", age_s=120.0)
    try:
        spare = twin_process._Spare()   # what every twin start does first
        spare.process.kill()
        spare.process.wait()
        spare.log.close()
        spare.log_path.unlink()
        assert not left_empty.exists() and not week_old.exists()
        assert telling.exists() and just_started.exists() and of_a_live_process.exists()
    finally:
        for path in (left_empty, telling, week_old, just_started, of_a_live_process):
            path.unlink(missing_ok=True)


def test_a_twin_killed_under_a_running_rig_is_named_in_each_devices_failure():
    with Rig(default_rig_config()) as rig:
        assert wait_for(lambda: all(h.state == "streaming" for h in rig.health().values()), 10.0), rig.health()
        pid = rig._twin.pid
        os.kill(pid, signal.SIGKILL)
        states = {"actuators": "failed", "daq": "failed", "mocap": "silent"}   # NatNet: Motive may come back
        assert wait_for(lambda: {n: h.state for n, h in rig.health().items()} == states, 10.0), rig.health()
        for name in ("actuators", "daq"):
            assert f"(the twin process (pid {pid}) was killed by SIGKILL)" in rig.health()[name].last_error
