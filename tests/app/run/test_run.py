"""A suite run's whole life on the twin rig (app/run/run.py): assembled, run, E-stopped, torn down, and
nothing left open whatever happened."""

from __future__ import annotations

import logging
import re
import shutil
import threading
import time
from dataclasses import replace

import numpy as np
import pytest
from conftest import DEVICE_TIMING, short_suite_toml, wait_for
from uartlab.app.record.player import SessionFile
from uartlab.app.rig.config import default_rig_config
from uartlab.app.rig.rig import Rig
from uartlab.app.run.engine import PreflightError
from uartlab.app.run.run import Run
from uartlab.errors import RecordingError
from uartlab.protocols.suite import parse_suite
from uartlab.schema import EventKind

pytestmark = pytest.mark.realtime

# The threads a run and a rig it starts leave behind if a teardown step is missed.
RUN_THREADS = ("engine-control", "live-model", "recording-session", "rig-", "joints-ik")


def twin_config(speed: float = 1.0):
    config = default_rig_config()
    return replace(config, twin=replace(config.twin, speed=speed))


def short_suite(pull_s: float = 1.0):
    return parse_suite(short_suite_toml(pull_s), "short.toml")


def threads_started_since(before: set[threading.Thread]) -> list[str]:
    """Ours (RUN_THREADS) started after ``before`` and still alive, after a moment to finish their joins."""
    def alive():
        return [t.name for t in threading.enumerate() if t not in before and t.name.startswith(RUN_THREADS)]
    wait_for(lambda: not alive(), 5)
    return alive()


def torque_enabled(rig) -> list[bool]:
    return [rig.twin_plant.servo_state(i).torque_enabled for i in range(6)]


def test_a_run_that_completes_closes_its_session_cleanly_and_stops_the_rig_it_started(tmp_path):
    before = set(threading.enumerate())
    with Run(short_suite(), config=twin_config(2.0), folder=tmp_path, operator="ci") as run:
        run.start()
        assert run.wait(60), run.status()
        assert run.status().phase == "DONE", run.status().fault_reason
    assert run.close_error is None and run.session_summary is not None
    assert threads_started_since(before) == []       # loop, live model, recorder, the rig's streams
    assert {h.state for h in run.rig.health().values()} == {"stopped"}
    with SessionFile(run.path) as f:
        assert f.complete
        assert [(t["name"], t["outcome"]) for t in f.trials()] == [("ED", "settled")]
        assert f.length("model") > 0
    text = run.path.with_suffix(".log").read_text(encoding="utf-8")
    assert "run ended DONE: 1 of 1 trials run" in text
    logging.getLogger("uartlab.test").warning("after the run")   # the log file was closed with the run
    assert "after the run" not in run.path.with_suffix(".log").read_text(encoding="utf-8")


def _estop_mid_pull(folder):
    """A run E-stopped from another thread mid-pull: (its session file's path, its runner records)."""
    with Rig(twin_config()) as rig:
        sub = rig.hub.subscribe("test", maxsize=100_000)
        run = Run(short_suite(4.0), rig=rig, folder=folder, safe_action="hold", live_model=False)
        with run:
            run.start()
            assert wait_for(lambda: run.status().phase == "ACTUATE", 30), run.status()
            time.sleep(0.3)                                              # mid-pull
            pressed = threading.Thread(target=run.estop, args=("E-stop: the test's button",))
            pressed.start()
            pressed.join(5)
            # Latched from the E-stop's own thread, no tick waited for; the twin's bus takes the torque off.
            assert run.status().phase == "FAULT"
            assert wait_for(lambda: not any(torque_enabled(rig)), 2)
            time.sleep(0.1)                                              # ticks after it: nothing commanded
        assert not any(torque_enabled(rig))                              # E-stop: torque off, whatever the config
        records = [r for r in sub.drain() if getattr(r, "stream", None) == "runner"]
        sub.close()
    return run.path, records


def test_an_estop_from_another_thread_mid_trial_stops_at_once_and_is_in_the_closed_file(tmp_path):
    path, records = _estop_mid_pull(tmp_path / "first")
    with SessionFile(path) as f:
        trips = [e.message for e in f.events() if e.kind == EventKind.TRIP]
    if any(re.search(DEVICE_TIMING, trip) for trip in trips):   # a twin's deadline missed on a loaded machine
        path, records = _estop_mid_pull(tmp_path / "again")    # ended the trial before the E-stop
    with SessionFile(path) as f:
        assert f.complete
        (estop,) = [e for e in f.events() if e.kind == "estop"]
        assert estop.message == "E-stop: the test's button"
        assert f.trials()[-1]["outcome"] == "E-stopped: the test's button"
    times = np.concatenate([r.host_time_s for r in records])
    commands = np.concatenate([r.data["command_m"] for r in records])
    after = commands[times > estop.host_time_s]
    assert after.size and np.isnan(after).all()


@pytest.mark.parametrize("safe_action, torqued", [("hold", True), ("torque_off", False)])
def test_a_run_closed_mid_trial_ends_with_the_configured_safe_action_and_says_why(tmp_path, safe_action, torqued):
    with Rig(twin_config()) as rig:
        run = Run(short_suite(4.0), rig=rig, folder=tmp_path, safe_action=safe_action, live_model=False)
        with run:
            run.start()
            assert wait_for(lambda: run.status().phase == "ACTUATE", 30), run.status()
            time.sleep(0.3)
            run.close("GUI closed")
        assert run.status().phase == "ABORTED"
        assert rig.engine is None                        # the loop is stopped: the rig is free for the next
        assert torque_enabled(rig) == [torqued] * 6
    with SessionFile(run.path) as f:
        assert f.complete
        assert f.trials()[-1]["outcome"].startswith("aborted: ")
        assert any("GUI closed" in e.message for e in f.events())


def test_an_unwritable_folder_refuses_before_the_rig_starts(tmp_path):
    blocker = tmp_path / "a file"
    blocker.write_text("", encoding="utf-8")
    before = set(threading.enumerate())
    run = Run(short_suite(), config=twin_config(), folder=blocker / "recordings")
    with pytest.raises(OSError):
        run.start()
    assert run.rig is None and threads_started_since(before) == []


def test_no_room_on_the_disk_stops_the_rig_the_run_started_and_leaves_no_file(tmp_path, monkeypatch):
    class Usage:
        total, used, free = 10**10, 10**10 - 10**6, 10**6

    monkeypatch.setattr(shutil, "disk_usage", lambda folder: Usage)
    before = set(threading.enumerate())
    run = Run(short_suite(), config=twin_config(), folder=tmp_path)
    with pytest.raises(RecordingError, match="not enough free space"):
        run.start()
    assert threads_started_since(before) == []       # the live model and the rig's streams stopped
    assert run.experiment is None and not list(tmp_path.glob("*.h5"))


def test_a_preflight_failure_closes_the_session_and_stops_the_rig(tmp_path):
    before = set(threading.enumerate())
    run = Run(short_suite(), config=twin_config(), folder=tmp_path)
    run.assemble()
    run.rig._twin.daq.stop()                         # the DAQ stops streaming: the pre-flight refuses
    assert wait_for(lambda: run.rig.health()["daq"].state == "failed", 5)
    with pytest.raises(PreflightError, match="USB-6210"):
        run.start()
    assert threads_started_since(before) == []
    assert not any(torque_enabled(run.rig))
    with SessionFile(run.path) as f:
        assert f.complete and f.trials() == []


def test_an_estop_while_the_run_assembles_refuses_the_start(tmp_path):
    with Rig(twin_config()) as rig:
        run = Run(short_suite(), rig=rig, folder=tmp_path, live_model=False).assemble()
        run.estop("E-stop: pressed while starting")
        with pytest.raises(PreflightError, match="E-stop before the run started"):
            run.start()
        assert wait_for(lambda: not any(torque_enabled(rig)), 2) and rig.engine is None
    with SessionFile(run.path) as f:
        assert f.complete and f.trials() == []
        assert [e.message for e in f.events() if e.kind == "estop"] == ["E-stop: pressed while starting"]


def test_an_abort_while_the_run_assembles_ends_it_aborted_before_anything_moves(tmp_path):
    """The operator's Abort reaches a run the core is still assembling: the run ends ABORTED, the servos are
    never enabled, and the file says why."""
    with Rig(twin_config()) as rig:
        run = Run(short_suite(), rig=rig, folder=tmp_path, live_model=False)
        run.abort("operator abort: pressed while starting")
        run.start()
        assert run.wait(0) and run.status().phase.name == "ABORTED"
        assert not any(torque_enabled(rig)) and rig.engine is None
        run.close()
    with SessionFile(run.path) as f:
        assert f.complete and f.trials() == []
        assert any("pressed while starting" in e.message for e in f.events())


def test_an_abort_during_the_preflight_ends_the_run_unarmed(tmp_path):
    with Rig(twin_config()) as rig:
        run = Run(short_suite(), rig=rig, folder=tmp_path, live_model=False).assemble()
        rig._twin.motive.pause()                                 # the pre-flight waits for fresh mocap frames
        time.sleep(1.2)
        starter = threading.Thread(target=run.start)
        starter.start()
        assert wait_for(lambda: rig.engine is run.experiment, 5)  # claimed: in the pre-flight
        run.abort("operator abort: pressed during the pre-flight")
        rig._twin.motive.resume()                                # the pre-flight now passes
        starter.join(10)
        assert run.wait(5) and run.status().phase.name == "ABORTED"
        assert not any(torque_enabled(rig)) and rig.engine is None
        run.close()


def test_an_estop_during_the_preflight_keeps_the_servos_unarmed(tmp_path):
    with Rig(twin_config()) as rig:
        run = Run(short_suite(), rig=rig, folder=tmp_path, live_model=False).assemble()
        rig._twin.motive.pause()                                 # the pre-flight waits for fresh mocap frames
        time.sleep(1.2)
        outcome: list[BaseException | None] = []

        def start():
            try:
                run.start()
                outcome.append(None)
            except BaseException as exc:  # noqa: BLE001 - the test reads it below
                outcome.append(exc)

        starter = threading.Thread(target=start)
        starter.start()
        assert wait_for(lambda: rig.engine is run.experiment, 5)  # claimed: in the pre-flight
        run.estop("E-stop: pressed during the pre-flight")
        rig._twin.motive.resume()                                # the pre-flight would now pass
        starter.join(10)
        assert len(outcome) == 1 and isinstance(outcome[0], PreflightError), outcome
        assert "E-stop before the servos were armed" in str(outcome[0])
        assert not any(torque_enabled(rig)) and rig.engine is None
    with SessionFile(run.path) as f:
        assert f.complete and f.trials() == []
