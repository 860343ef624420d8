"""The paper's experiments as ready functions."""

from __future__ import annotations

import numpy as np
import pytest
from uartlab.sim import contact, contact_trial, free_motion, paper_trials
from uartlab.sim.scenarios import SURFACE_ANGLE_DEG, trial_start


def test_the_paper_has_22_distinct_trials():
    trials = paper_trials()
    assert len(trials) == 22 and len({t.name for t in trials}) == 22
    free = [t for t in trials if t.kind == "free"]
    assert len(free) == 6 and all(t.pose == "Flex" and t.pulls[0].amplitude_m == 0.015 for t in free)
    touch = [t for t in trials if t.kind == "contact"]
    assert {(t.pulls[0].tendon, t.pose) for t in touch} == set(SURFACE_ANGLE_DEG)
    assert all(t.pulls[0].amplitude_m == 0.015 and t.pulls[1].amplitude_m == 0.0075 for t in touch)
    assert all(p.duration_s == 4.0 for t in trials for p in t.pulls)


def test_surface_angles_are_the_papers():
    assert contact_trial("Hook", "FDP", "ED").surface_angle_deg == 45.0
    assert contact_trial("Curl", "FDP", "DI").surface_angle_deg == 67.5
    assert contact_trial("hook", "fds", "pi").surface_angle_deg == 22.5
    assert contact_trial("Curl", "FDS", "LUM").surface_angle_deg == 45.0


def test_start_state_is_static_and_balanced(finger):
    """The start pose is held: pretensions within the stiction threshold; EM balanced; at rest."""
    for trial in (paper_trials()[0], contact_trial("Hook", "FDP", "ED")):
        x0, surface = trial_start(finger, trial)
        assert np.all(x0.F_input >= 0.3) and np.all(x0.theta_dot == 0)
        res = finger.simulate(x0, [], surface, stop_at_steady=False, t_max=0.5)
        np.testing.assert_allclose(res.final.theta_deg, x0.theta_deg, atol=0.05)


def test_contact_trial_presses_on_the_surface(finger):
    res = contact(finger, "Curl", "FDP", "ED")
    force = res.fingertip_force_N()
    assert np.linalg.norm(force[0]) == pytest.approx(0.258 * 0.5 ** 1.72, rel=1e-6)  # the imposed deflection
    # The flexor pressed harder. The press on the volar pad also flexes the IP joints: here the pad slides at
    # the slip limit once (t = 2.6 s), so the press falls from its peak before it settles.
    press = np.linalg.norm(force, axis=1)
    assert press.max() > 3 * press[0] and press[-1] > 2 * press[0]
    assert force[-1] @ res.surface.normal > 0  # the surface pushes back, never pulls


def test_free_motion_flexor_flexes(finger):
    res = free_motion(finger, "FDP")
    assert res.settled
    change = res.final.theta_deg - res.states.theta_deg[0]
    assert change[1] > 5 and change[2] > 5 and change[3] > 1


def test_bad_trials_are_refused():
    with pytest.raises(ValueError, match="flexor must be one of"):
        contact_trial("Hook", "ED", "DI")
    with pytest.raises(ValueError, match="EM tendon must be one of"):
        contact_trial("Hook", "FDP", "FDS")
    with pytest.raises(ValueError, match="unknown pose"):
        contact_trial("Fist", "FDP", "ED")
    with pytest.raises(ValueError, match="Hook or Curl"):
        contact_trial("Flex", "FDP", "ED")
