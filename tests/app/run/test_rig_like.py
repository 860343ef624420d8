"""RigLike: the live Rig, the replayed session and the tests' scripted rig each have every member, of the
declared kind; the engine runs on a scripted rig with null actuators and trips on what it is shown."""

from __future__ import annotations

import inspect
import threading
import time

import numpy as np
import pytest
from conftest import ScriptedRig, short_suite_toml, wait_for
from uartlab.app.record.player import SessionFile
from uartlab.app.record.writer import SessionRecorder
from uartlab.app.rig.config import default_rig_config
from uartlab.app.rig.rig import Rig
from uartlab.app.run.experiment import Experiment
from uartlab.app.run.replayed_rig import NullActuators, ReplayedRig
from uartlab.app.run.rig_like import RigActuators, RigLike
from uartlab.app.run.run import estop_rig
from uartlab.drivers.mx64_bus import Mx64Bus
from uartlab.protocols.runner import Phase
from uartlab.protocols.suite import parse_suite
from uartlab.schema import actuators_spec
from uartlab.streams import Record


def members(protocol) -> tuple[dict[str, inspect.Signature], set[str]]:
    """(methods with their signatures, data members: annotated attributes and properties) of a Protocol."""
    methods, data = {}, set(getattr(protocol, "__annotations__", {}))
    for name, value in vars(protocol).items():
        if name.startswith("_"):
            continue
        if isinstance(value, property):
            data.add(name)
        elif inspect.isfunction(value):
            methods[name] = inspect.signature(value)
    return methods, data


def assert_conforms(obj, protocol) -> None:
    methods, data = members(protocol)
    for name in data:
        assert hasattr(obj, name), f"{type(obj).__name__} has no {name}"
        assert not inspect.ismethod(getattr(obj, name)), f"{type(obj).__name__}.{name} is a method, not data"
    for name, sig in methods.items():
        member = getattr(obj, name, None)
        assert callable(member), f"{type(obj).__name__} has no method {name}"
        want = [p for p in sig.parameters if p != "self"]
        have = list(inspect.signature(member).parameters)
        assert have == want, f"{type(obj).__name__}.{name}{have}: the protocol says {want}"


def test_the_protocol_declares_what_its_users_use():
    methods, data = members(RigLike)
    assert {"hub", "config", "engine", "actuators", "time_scale", "has_nano17", "stream_age_limits_s"} <= \
        set(methods) | data
    assert {"nano17_saturated", "tare_nano17", "place_finger", "health", "motion"} <= set(methods)


def test_the_live_rig_is_rig_like():
    assert_conforms(Rig(default_rig_config()), RigLike)          # not started: nothing opens
    for name, sig in members(RigActuators)[0].items():            # the driver behind the rig's lock
        assert list(inspect.signature(getattr(Mx64Bus, name)).parameters) == list(sig.parameters), name


def test_the_scripted_and_the_replayed_rig_are_rig_like(tmp_path):
    assert_conforms(ScriptedRig(), RigLike)
    assert_conforms(NullActuators(), RigActuators)
    path = tmp_path / "s.h5"
    rec = SessionRecorder(path, {"config_text": "", "calibration_texts": {}})
    rec.add_stream(actuators_spec(100.0))
    rec.write(Record.single("actuators", 1.0, excursion_m=np.zeros(6), velocity_m_per_s=np.zeros(6),
                            current_A=np.zeros(6), moving=np.zeros(6, bool), hardware_error=np.zeros(6, np.int64),
                            device_tick_ms=np.zeros(6, np.int64)))
    rec.close()
    with SessionFile(path) as f:
        rig = ReplayedRig(f, 0.0, 2.0, default_rig_config())
        assert_conforms(rig, RigLike)
        rig.start()
        assert rig.finished.wait(5.0)
        assert rig.actuators.read().excursion_m.tolist() == [0.0] * 6   # the replayed sample, nothing moved
        rig.stop()


@pytest.mark.realtime
def test_the_engine_on_a_scripted_rig_trips_on_a_scripted_force_and_moves_nothing():
    """The suite's engine on null actuators: the runner commands its trajectory into them, the interlocks
    see the scripted forces - 1 N until the script pulls FDP to 50 N, over the suite's 20 N."""
    rig = ScriptedRig()
    suite = parse_suite(short_suite_toml().replace("repeats = 1", "repeats = 1\n[suite.limits]\n"
                                                                  "max_tendon_force_N = 20.0"))
    force = np.ones(6)
    stop = threading.Event()

    def stream():
        while not stop.is_set():
            rig.publish(tendon_force_N=force)
            time.sleep(0.005)

    feeder = threading.Thread(target=stream, daemon=True)
    feeder.start()
    exp = Experiment(rig, suite)
    try:
        exp.start()
        assert wait_for(lambda: rig.actuators.commands > 10, 3.0)       # the runner is commanding
        assert exp.runner.phase not in (Phase.FAULT, Phase.ABORTED)
        force[0] = 50.0
        assert exp.wait(3.0) and exp.runner.phase is Phase.FAULT
        trip = exp.runner.interlocks.tripped
        assert (trip.check, trip.subject, trip.value) == ("force", "FDP", 50.0)
        assert rig.placed == [("Flex", None)] and rig.actuators.enabled
    finally:
        stop.set()
        exp.close()
        feeder.join()


@pytest.mark.realtime
def test_an_estop_while_a_trial_is_being_set_up_turns_torque_off_without_waiting_for_it():
    """A tick holds the engine through a trial's set-up (the twin placing its finger, over its control channel:
    seconds on a busy machine); the E-stop does not wait for it: torque is off while the placement goes on."""
    rig = ScriptedRig()
    placing, placed = threading.Event(), threading.Event()

    def slow_placement(pose: str, surface_angle_deg: float | None) -> bool:
        placing.set()
        placed.wait(10.0)
        return True

    rig.place_finger = slow_placement
    stop = threading.Event()

    def stream():
        while not stop.is_set():
            rig.publish()
            time.sleep(0.005)

    feeder = threading.Thread(target=stream, daemon=True)
    feeder.start()
    exp = Experiment(rig, parse_suite(short_suite_toml()))
    try:
        exp.start()
        assert placing.wait(10.0) and rig.actuators.enabled
        off_s: list[float] = []
        estop = threading.Thread(target=lambda: off_s.append(estop_rig(rig, "operator E-stop")), daemon=True)
        estop.start()
        assert wait_for(lambda: not rig.actuators.enabled, 2.0)   # while the placement still holds the tick
        assert not placed.is_set()
        commands = rig.actuators.commands
        released_s = time.monotonic()
        placed.set()
        estop.join(10.0)
        assert off_s and off_s[0] < released_s      # what `uartlab estop` reports: torque off, not the latch after
        assert exp.wait(5.0) and exp.runner.phase is Phase.FAULT
        assert rig.actuators.commands == commands and not rig.actuators.enabled   # the held tick sent nothing
    finally:
        placed.set()
        stop.set()
        exp.close()
        feeder.join()
