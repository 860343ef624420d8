"""Integrators: RK4 against the adaptive reference, incremental stepping, the steady-state rule."""

from __future__ import annotations

import numpy as np
import pytest
from uartlab.sim import Sigmoid, free_motion_trial, sigmoid_inputs
from uartlab.sim.errors import SimulationDiverged
from uartlab.sim.inputs import excursions_at, sigmoid_value
from uartlab.sim.integrators import STEADY_SPEED_RAD_S
from uartlab.sim.scenarios import contact_trial, trial_start


@pytest.mark.parametrize("trial", [free_motion_trial("FDP"), contact_trial("Curl", "FDP", "ED")],
                         ids=lambda t: t.name)
def test_rk4_agrees_with_the_adaptive_reference(finger, trial):
    x0, surface = trial_start(finger, trial)
    rk4 = finger.simulate(x0, trial.pulls, surface)
    ref = finger.simulate(x0, trial.pulls, surface, method="dopri5", rtol=1e-7)
    assert rk4.settled and ref.settled
    np.testing.assert_allclose(rk4.final.theta_deg, ref.final.theta_deg, atol=0.05)
    np.testing.assert_allclose(rk4.fingertip_force_N()[-1], ref.fingertip_force_N()[-1], atol=5e-3)


def test_steady_state_rule(finger):
    trial = free_motion_trial("ED")
    x0, _ = trial_start(finger, trial)
    res = finger.simulate(x0, trial.pulls)
    assert res.settled and res.t[-1] >= trial.pulls[0].end_s
    assert np.abs(res.final.theta_dot).max() < STEADY_SPEED_RAD_S
    # It ran on until the rule held: just before the end some joint may still have been moving, and
    # without the rule the same run would go on to the timeout.
    free = finger.simulate(x0, trial.pulls, stop_at_steady=False, t_max=res.t[-1] + 1.0)
    assert free.t[-1] == pytest.approx(res.t[-1] + 1.0)


def test_incremental_stepping_matches_the_batch_run(finger):
    """The live model steps with the latest excursion velocities; fed the same velocities it must land
    where the batch run lands."""
    trial = free_motion_trial("FDP")
    x0, _ = trial_start(finger, trial)
    batch = finger.simulate(x0, trial.pulls, stop_at_steady=False, t_max=5.0, record_dt=0.005)
    stepper = finger.stepper(x0)
    tick = 0.005  # a 200 Hz control loop
    times = np.arange(0.0, 5.0 + 1e-9, tick)
    excursion = excursions_at(sigmoid_inputs(list(trial.pulls)), times)
    for k in range(len(times) - 1):
        stepper.step(tick, (excursion[k + 1] - excursion[k]) / tick)
    # Piecewise-constant velocities per tick instead of the analytic sigmoid: close, not identical.
    np.testing.assert_allclose(np.degrees(stepper.x[8:12]), batch.final.theta_deg, atol=0.1)
    assert stepper.t == pytest.approx(5.0)


def test_dopri5_stepper_and_bad_arguments(finger):
    x0, _ = trial_start(finger, free_motion_trial("FDS"))
    stepper = finger.stepper(x0, method="dopri5")
    stepper.step(0.01, np.zeros(6))
    assert np.all(np.isfinite(stepper.x))
    with pytest.raises(ValueError, match="six tendon velocities"):
        stepper.step(0.01, np.zeros(5))
    with pytest.raises(ValueError, match="unknown integrator"):
        finger.stepper(x0, method="euler")
    with pytest.raises(ValueError, match="unknown integrator"):
        finger.simulate(x0, [], method="euler")


def test_a_step_too_large_is_reported_not_returned(finger):
    trial = free_motion_trial("FDP")
    x0, _ = trial_start(finger, trial)
    with pytest.raises(SimulationDiverged, match="smaller dt"):
        finger.simulate(x0, trial.pulls, dt=0.05)


def test_sigmoid_starts_and_ends_exactly():
    amp = 0.015
    assert sigmoid_value(0.0, amp, 0.0, 4.0, 10.0) == 0.0
    assert sigmoid_value(4.0, amp, 0.0, 4.0, 10.0) == pytest.approx(amp)
    assert sigmoid_value(2.0, amp, 0.0, 4.0, 10.0) == pytest.approx(amp / 2)
    ex = excursions_at(sigmoid_inputs([Sigmoid("FDP", amp)]), np.linspace(0, 4, 401))[:, 0]
    assert np.all(np.diff(ex) >= 0)
    with pytest.raises(ValueError, match="unknown tendon"):
        Sigmoid("EIP", amp)
    with pytest.raises(ValueError, match="more than one sigmoid"):
        sigmoid_inputs([Sigmoid("FDP", amp), Sigmoid("FDP", amp)])
