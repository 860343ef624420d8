"""The runner and interlocks driven by a tiny fake plant: no threads, no devices, fast."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from uartlab.protocols.interlocks import Observation
from uartlab.protocols.runner import DEFAULT_PRETENSION_N, DEFAULT_PRETENSION_TOL_N, Action, Phase, Runner
from uartlab.protocols.suite import parse_suite

DT = 0.01
SUITE = """
[suite]
name = "t"
repeats = 1
[suite.settle]
speed_deg_s = 0.1
hold_s = 0.05
timeout_s = {timeout}
[[trial]]
name = "a"
pose = "Flex"
pulls = [{{ tendon = "FDP", amplitude_mm = 5.0, duration_s = 0.3 }}]
return = true
[[trial]]
name = "b"
pose = "Hook"
pulls = [{{ tendon = "ED", amplitude_mm = 3.0, duration_s = 0.2 }}]
"""


class Plant:
    """Force = k * excursion; the joints move while the command changes, then stop (unless `drift`)."""

    def __init__(self, k_N_per_m: float = 2000.0, drift: bool = False):
        self.k, self.drift = k_N_per_m, drift
        self.x = np.zeros(6)
        self.speed = 0.0
        self.faults: dict = {}

    def obs(self) -> Observation:
        o = Observation(self.k * self.x, self.x.copy(), np.zeros(6, dtype=int), np.full(4, self.speed),
                        {"actuators": 0.01, "daq": 0.01, "mocap": 0.01}, False)
        return replace(o, **self.faults)

    def apply(self, cmd) -> None:
        if cmd.action in (Action.MOVE, Action.HOLD):
            moved = not np.allclose(cmd.excursion_m, self.x, atol=1e-9)
            self.x = cmd.excursion_m.copy()
            self.speed = 5.0 if moved or self.drift else 0.0


def run(runner: Runner, plant: Plant, t0: float, n: int, until: Phase | None = None) -> tuple[float, list]:
    cmds, t = [], t0
    for _ in range(n):
        t += DT
        cmd = runner.tick(t, plant.obs())
        plant.apply(cmd)
        cmds.append(cmd)
        if until is not None and runner.phase is until:
            break
    return t, cmds


def phases(runner: Runner) -> list[str]:
    return [e.message.split(":")[0] for e in runner.events]


def make(timeout: float = 5.0, **kw) -> Runner:
    kw.setdefault("on_setup", lambda trial, changed: True)  # the finger places itself, as the twin does
    return Runner(parse_suite(SUITE.format(timeout=timeout)), **kw)


def test_two_trials_run_through_in_order():
    r, plant = make(), Plant()
    assert r.tick(0.0, plant.obs()).action is Action.IDLE
    r.arm(0.0)
    run(r, plant, 0.0, 2000, until=Phase.DONE)
    trial = ["PRETENSION", "ACTUATE", "SETTLE", "RECORD", "RETURN"]
    assert phases(r) == ["ARMED", *trial, *trial, "DONE"]
    assert all(e.kind == "phase" and e.source == "runner" for e in r.events)
    assert [(x.trial, x.outcome) for x in r.results] == [("a", "settled"), ("b", "settled")]
    # Trial a returned to its pretension: every slack tendon was reeled in to the target, within tolerance
    # (all but ED, which trial b pulled and did not return).
    target, tol = DEFAULT_PRETENSION_N, DEFAULT_PRETENSION_TOL_N
    force = np.delete(plant.k * plant.x, 2)
    assert np.all(force >= target - tol - 1e-9) and np.all(force <= target + tol)


def test_pretension_leaves_a_tendon_that_already_holds_the_pose_alone():
    r, plant = make(), Plant()
    plant.x[2] = 3.0 / plant.k      # ED at 3 N: what holds a flexed finger against gravity
    r.arm(0.0)
    run(r, plant, 0.0, 500, until=Phase.ACTUATE)
    assert plant.k * plant.x[2] == pytest.approx(3.0)


def test_pause_holds_and_resume_restarts_the_trial():
    r, plant = make(), Plant()
    r.arm(0.0)
    t, _ = run(r, plant, 0.0, 500, until=Phase.ACTUATE)
    t, _ = run(r, plant, t, 5)
    r.pause(t)
    held = plant.x.copy()
    t, cmds = run(r, plant, t, 50)
    assert all(c.action is Action.HOLD and np.array_equal(c.excursion_m, held) for c in cmds)
    r.resume(t)
    assert r.phase is Phase.PRETENSION
    run(r, plant, t, 3000, until=Phase.DONE)
    assert [(x.trial, x.outcome) for x in r.results] == [("a", "interrupted by pause"), ("a", "settled"),
                                                         ("b", "settled")]


@pytest.mark.parametrize("safe", ["hold", "torque_off"])
def test_abort_from_actuate_gives_the_safe_action(safe):
    r, plant = make(safe_action=safe), Plant()
    r.arm(0.0)
    t, _ = run(r, plant, 0.0, 500, until=Phase.ACTUATE)
    t, _ = run(r, plant, t, 5)
    held = plant.x.copy()
    r.abort(t)
    _, cmds = run(r, plant, t, 100)
    assert r.phase is Phase.ABORTED
    expected = Action.HOLD if safe == "hold" else Action.TORQUE_OFF
    assert all(c.action is expected for c in cmds)
    if safe == "hold":
        assert all(np.array_equal(c.excursion_m, held) for c in cmds)


FAULTS = {
    "force": ({"tendon_force_N": np.array([0, 0, 99.0, 0, 0, 0])}, "ED"),
    "hardware_error": ({"hardware_error": np.array([0, 0, 0, 0x04, 0, 0])}, "DI"),
    "stale_stream": ({"stream_age_s": {"actuators": 0.01, "daq": 2.0, "mocap": 0.01}}, "daq"),
    "saturation": ({"saturated_gauges": ("SG3",), "fingertip_force_N": 55.9}, "SG3"),
    "excursion": ({"excursion_m": np.array([0, 0, 0, 0, 0, 0.03])}, "LUM"),
    "fingertip_force": ({"fingertip_force_N": 20.0}, "fingertip"),
    "device": ({"device_faults": ("MX-64 bus stream stopped: CommError: no reply",)}, "MX-64 bus"),
}


@pytest.mark.parametrize("check", list(FAULTS))
def test_interlock_trips_in_one_tick_and_latches(check):
    fault, subject = FAULTS[check]
    r, plant = make(safe_action="torque_off"), Plant()
    r.arm(0.0)
    t, _ = run(r, plant, 0.0, 500, until=Phase.ACTUATE)
    t, _ = run(r, plant, t, 5)
    plant.faults = fault
    t, cmds = run(r, plant, t, 1)
    assert r.phase is Phase.FAULT and cmds[0].action is Action.TORQUE_OFF
    trip = r.interlocks.tripped
    assert trip is not None and trip.check == check and subject in trip.reason
    assert subject in r.events[-1].message
    assert r.interlocks.check(plant.obs()) is trip
    plant.faults = {}               # the fault clears itself: the trip must stay latched
    _, cmds = run(r, plant, t, 200)
    assert r.phase is Phase.FAULT and all(c.action is Action.TORQUE_OFF for c in cmds)
    r.reset(t)
    assert r.phase is Phase.SAFE and r.interlocks.tripped is None


def test_settle_timeout_is_the_outcome():
    r, plant = make(timeout=0.5), Plant()
    r.arm(0.0)
    t, _ = run(r, plant, 0.0, 500, until=Phase.ACTUATE)
    plant.drift = True              # the finger never comes to rest after this pull
    t, _ = run(r, plant, t, 3000, until=Phase.RETURN)
    plant.drift = False
    run(r, plant, t, 3000, until=Phase.DONE)
    assert [x.outcome for x in r.results] == ["settle timeout", "settled"]
    assert "settle timeout" in next(e.message for e in r.events if e.message.startswith("RECORD"))


def test_pretension_waits_for_the_finger_to_be_still():
    r, plant = make(), Plant(drift=True)
    r.arm(0.0)
    t, _ = run(r, plant, 0.0, 300)
    assert r.phase is Phase.PRETENSION      # tensions reached long ago, but the joints still move
    plant.drift = False
    run(r, plant, t, 300, until=Phase.ACTUATE)
    assert r.phase is Phase.ACTUATE


def test_a_new_setup_pauses_for_the_operator_and_resume_runs_that_trial():
    r, plant = make(on_setup=None), Plant()  # a real rig: a person places the finger
    r.arm(0.0)
    t, _ = run(r, plant, 0.0, 3000, until=Phase.PAUSED)
    assert [x.trial for x in r.results] == ["a"]   # trial a (Flex) ran: arming confirmed its set-up
    assert "set up the finger for trial 'b'" in r.events[-1].message and "pose Hook" in r.events[-1].message
    _, cmds = run(r, plant, t, 50)
    assert r.phase is Phase.PAUSED and all(c.action is Action.HOLD for c in cmds)
    r.resume(t)
    assert r.phase is Phase.PRETENSION
    run(r, plant, t, 3000, until=Phase.DONE)
    assert [(x.trial, x.outcome) for x in r.results] == [("a", "settled"), ("b", "settled")]


def test_estop_latches_torque_off_even_when_the_safe_action_is_hold():
    r, plant = make(safe_action="hold"), Plant()
    r.arm(0.0)
    t, _ = run(r, plant, 0.0, 500, until=Phase.ACTUATE)
    r.estop(t, "E-stop pressed")
    _, cmds = run(r, plant, t, 20)
    assert r.phase is Phase.FAULT and r.fault_reason == "E-stop pressed"
    assert all(c.action is Action.TORQUE_OFF for c in cmds)


def test_pretension_that_never_reaches_target_faults():
    r, plant = make(), Plant(k_N_per_m=0.0)  # a broken tendon: no force however far it is pulled
    r.arm(0.0)
    run(r, plant, 0.0, 1000, until=Phase.FAULT)
    assert r.phase is Phase.FAULT and "pretension timeout" in (r.fault_reason or "")
