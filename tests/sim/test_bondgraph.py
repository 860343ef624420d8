"""The bond-graph right-hand side: closed forms, energy, slack, ROM, anatomy and the contact law."""

from __future__ import annotations

import numpy as np
import pytest
from uartlab.sim import Finger, PlaneSurface, Sigmoid, paper_trials, run_trial, table_inputs
from uartlab.sim.names import JOINTS, MOMENT_ARM_GROUPS, TENDONS
from uartlab.sim.statics import holding_tensions, tendon_torque_matrix

NO_INPUT: list = []


def _isolated_fds_pip(params, damping, joint_stiffness):
    """Only FDS acts, only on the PIP, with a constant 9 mm moment arm; no gravity, no friction."""
    arms = np.zeros_like(params.moment_arm_coeffs)
    arms[MOMENT_ARM_GROUPS.index("FDS"), JOINTS.index("PIP"), 0] = 9e-3
    return params.replace(moment_arm_coeffs=arms, gravity_m_per_s2=np.zeros(3), coulomb_coefficient_m=0.0,
                          joint_damping_Nms_per_rad=np.full(4, damping),
                          joint_stiffness_Nm_per_rad=np.full(4, joint_stiffness))


@pytest.mark.parametrize("damping", [0.0, 1e-4])
def test_single_joint_with_one_linear_tendon_matches_closed_form(params, damping):
    """PIP with a joint spring K (eq. 1) and the FDS spring k (eq. 5), started balanced with a speed v0:
    theta = theta0 + v0/wd exp(-zeta w0 t) sin(wd t), w0^2 = (k r^2 + K) / I (eqs. 1-5)."""
    K = 0.01
    finger = Finger(_isolated_fds_pip(params, damping, K))
    F0, r, v0 = 1.0, 9e-3, 0.2
    x0 = finger.initial_state([0, 0, 45, 30], [0, F0, 0, 0, 0, 0])
    x0.tau_K = [0, 0, F0 * r, 0]  # the joint spring balances the tendon at the start
    x0.theta_dot = [0, 0, v0, 0]
    res = finger.simulate(x0, NO_INPUT, stop_at_steady=False, t_max=0.5, dt=1e-4, record_dt=1e-3)
    inertia = finger.joint_inertias(x0.theta)[2]
    k = params.input_stiffness_N_per_m[1]
    w0 = np.sqrt((k * r * r + K) / inertia)
    zeta = damping / (2 * inertia * w0)
    wd = w0 * np.sqrt(1 - zeta**2)
    t = res.t
    expected = x0.theta[2] + v0 / wd * np.exp(-zeta * w0 * t) * np.sin(wd * t)
    assert np.ptp(res.x[:, 10]) > 1e-3  # it really oscillates
    np.testing.assert_allclose(res.x[:, 10], expected, atol=1e-9)
    np.testing.assert_allclose(res.tensions_N[:, 1], F0 - k * r * (res.x[:, 10] - x0.theta[2]), atol=1e-9)
    np.testing.assert_allclose(res.x[:, 2], F0 * r + K * (res.x[:, 10] - x0.theta[2]), atol=1e-12)
    np.testing.assert_allclose(res.x[:, [8, 9, 11]], np.tile(x0.theta[[0, 1, 3]], (len(t), 1)), atol=1e-12)


def _energy(finger, inertia, x):
    p = finger.params
    k = np.concatenate([p.input_stiffness_N_per_m, p.em_stiffness_N_per_m])
    return (np.sum(x[:, 12:29] ** 2 / (2 * k), axis=1) + 0.5 * np.sum(inertia * x[:, 4:8] ** 2, axis=1)
            + 0.5 * np.sum(p.em_mass_kg * x[:, 29:35] ** 2, axis=1))


def test_energy_is_conserved_without_damping_friction_and_gravity(params):
    """Power-conserving bond graph: with R elements, friction and gravity off, total stored energy
    (17 springs, 4 joint inertias, 6 EM masses) stays constant. Constant moment arms make the balanced
    start a stable equilibrium (with the default posture-dependent arms, the geometric stiffness of the
    holding tensions makes it unstable and the finger would wander into its stops)."""
    arms = params.moment_arm_coeffs.copy()
    arms[:, :, 1:] = 0.0
    finger = Finger(params.replace(gravity_m_per_s2=np.zeros(3), coulomb_coefficient_m=0.0,
                                   joint_damping_Nms_per_rad=np.zeros(4), moment_arm_coeffs=arms,
                                   moment_arm_cos_fe=np.zeros_like(params.moment_arm_cos_fe)))
    pose = [0, 30, 45, 30]
    x0 = finger.initial_state(pose, holding_tensions(finger, pose, 2.0))
    x0.theta_dot = [0.1, -0.16, 0.2, -0.2]
    res = finger.simulate(x0, NO_INPUT, stop_at_steady=False, t_max=10.0, dt=2e-5, record_dt=0.01)
    inertia = finger.joint_inertias(x0.theta)
    E = _energy(finger, inertia, res.x)
    # The test is only meaningful if nothing went slack and no joint reached a stop.
    assert res.x[:, 12:29].min() > 0
    assert np.all((res.x[:, 8:12] > params.rom_rad[:, 0]) & (res.x[:, 8:12] < params.rom_rad[:, 1]))
    assert np.ptp(res.x[:, 8:12], axis=0).min() > np.radians(0.15)  # it really moved
    assert np.max(np.abs(E - E[0])) / E[0] < 1e-6


def test_energy_is_dissipated_with_damping(params):
    finger = Finger(params.replace(gravity_m_per_s2=np.zeros(3), coulomb_coefficient_m=0.0))
    x0 = finger.initial_state([0, 30, 45, 30], 3.0)
    x0.theta_dot = [0.05, -0.08, 0.1, -0.1]
    res = finger.simulate(x0, NO_INPUT, stop_at_steady=False, t_max=2.0, dt=1e-4, record_dt=0.01)
    E = _energy(finger, finger.joint_inertias(x0.theta), res.x)
    assert np.all(np.diff(E) <= 1e-12) and E[-1] < E[0]


@pytest.fixture(scope="module")
def paper_results(finger):
    return [(trial, run_trial(finger, trial)) for trial in paper_trials()]


def test_no_tension_below_zero_and_no_angle_past_rom_in_any_scenario(paper_results, params):
    lo, hi = params.rom_rad[:, 0], params.rom_rad[:, 1]
    for trial, res in paper_results:
        assert res.x[:, 12:29].min() >= 0.0, trial.name
        assert np.all(res.x[:, 8:12] >= lo) and np.all(res.x[:, 8:12] <= hi), trial.name
        assert res.settled, trial.name


def test_pulling_past_the_range_stops_at_the_rom_and_releasing_lets_tendons_go_slack(finger, params):
    x0 = finger.initial_state([0, 30, 45, 30], 0.5)
    # FDP reeled in 60 mm (far beyond the flexion range), then ED paid out 30 mm.
    times = [0.0, 3.0, 4.0, 6.0]
    ex = np.zeros((4, 6))
    ex[1:, TENDONS.index("FDP")] = 0.06
    ex[3, TENDONS.index("ED")] = -0.06
    res = finger.simulate(x0, table_inputs(times, ex), t_max=8.0)
    assert np.all(res.x[:, 8:12] <= params.rom_rad[:, 1]) and np.all(res.x[:, 8:12] >= params.rom_rad[:, 0])
    assert np.isclose(res.x[:, 8:12], params.rom_rad[:, 1]).any(axis=0)[1:].all()  # MCP, PIP, DIP at stops
    assert res.x[:, 12:29].min() >= 0.0
    ed = res.tensions_N[:, TENDONS.index("ED")]
    # Taut while flexed; once paid out it goes slack (exactly zero, never pushing). The undamped EM
    # junction mass (the paper's EM has no R element) may still tug it briefly after that.
    assert ed[res.t < 4.0].max() > 1.0 and ed[res.t > 5.0].min() == 0.0


def test_anatomical_torque_directions(finger):
    """Joint torques per newton of each tendon alone (EM routing included) have the anatomical signs."""
    B = tendon_torque_matrix(finger, np.radians([0, 30, 45, 30]))
    col = {t: B[:, i] for i, t in enumerate(TENDONS)}
    ab, fe, pip, dip = range(4)
    assert col["FDP"][fe] > 0 and col["FDP"][pip] > 0 and col["FDP"][dip] > 0
    assert col["FDS"][fe] > 0 and col["FDS"][pip] > 0 and col["FDS"][dip] == 0
    assert col["ED"][fe] < 0 and col["ED"][pip] < 0 and col["ED"][dip] < 0
    assert col["LUM"][fe] > 0 and col["LUM"][pip] < 0 and col["LUM"][dip] < 0
    assert col["DI"][ab] > 0 and col["PI"][ab] < 0


@pytest.mark.parametrize("tendon, moves", [
    ("FDP", {"MCP_FE": +1, "PIP": +1, "DIP": +1}),
    ("FDS", {"MCP_FE": +1, "PIP": +1}),
    ("ED", {"MCP_FE": -1, "PIP": -1, "DIP": -1}),
    ("LUM", {"MCP_FE": +1, "PIP": -1, "DIP": -1}),
    ("DI", {"MCP_AB": +1}),
    ("PI", {"MCP_AB": -1}),
])
def test_pulling_one_tendon_moves_the_joints_it_should(params, tendon, moves):
    """From a balanced start without friction or gravity, the first motion follows the tendon's anatomy;
    FDS does not act on the DIP directly (it moves far less than the PIP)."""
    finger = Finger(params.replace(gravity_m_per_s2=np.zeros(3), coulomb_coefficient_m=0.0))
    x0 = finger.initial_state([0, 30, 45, 30], holding_tensions(finger, [0, 30, 45, 30], 1.0))
    res = finger.simulate(x0, [Sigmoid(tendon, 0.003, duration_s=0.2)], stop_at_steady=False, t_max=0.12,
                          dt=1e-4, record_dt=1e-3)
    change = res.x[-1, 8:12] - x0.theta
    for joint, sign in moves.items():
        assert np.sign(change[JOINTS.index(joint)]) == sign, (joint, np.degrees(change))
    if tendon == "FDS":
        assert abs(change[3]) < 0.2 * abs(change[2])


def test_balanced_em_start_leaves_the_junction_masses_at_rest(finger):
    x0 = finger.initial_state([0, 30, 45, 30], [1.0, 0.5, 2.0, 0.7, 0.4, 0.9])
    dx = finger.rhs(x0, np.zeros(6))
    np.testing.assert_allclose(dx[29:35], 0.0, atol=1e-12)


# ---------------------------------------------------------------- contact, eqs. 19-24
def _pressed(finger, depth_m, angle_deg=30.0):
    q = np.radians([0, 0, 70, 50])
    surface = PlaneSurface.touching(finger.interaction_point(q), finger.params.contact.pad_radius_m,
                                    angle_deg, depth_m)
    return q, surface


@pytest.mark.parametrize("depth_mm", [0.0, 0.2, 1.0, 3.0])
def test_normal_force_law(finger, depth_mm):
    q, surface = _pressed(finger, depth_mm * 1e-3)
    x = finger.initial_state(np.degrees(q), 0.0).array
    force = finger.contact_forces(x, np.zeros(4), surface)[0]
    c = finger.params.contact
    np.testing.assert_allclose(force, c.a_N * depth_mm ** c.b * surface.normal, atol=1e-12)


def test_no_force_off_the_surface(finger):
    q, surface = _pressed(finger, -1e-3)  # 1 mm clear of the surface
    x = finger.initial_state(np.degrees(q), 0.0).array
    np.testing.assert_array_equal(finger.contact_forces(x, np.zeros(4), surface)[0], 0.0)


def test_contact_torques_are_jacobian_transpose_of_the_wrench(params):
    finger = Finger(params.replace(gravity_m_per_s2=np.zeros(3), coulomb_coefficient_m=0.0))
    q, surface = _pressed(finger, 1e-3)
    x = finger.initial_state(np.degrees(q), 0.0)
    inertia = finger.joint_inertias(q)
    acc = finger.rhs(x, np.zeros(6), surface, inertia=inertia)[4:8]
    force = finger.contact_forces(x.array, np.zeros(4), surface)[0]
    J = finger.jacobian(q, "interaction")
    # eq. 24: the force acts at the stick point, r = cp - ip = -(pad radius - depth) n, parallel to F here.
    np.testing.assert_allclose(acc * inertia, J[:3].T @ force, atol=1e-12)


def test_stick_then_slip(params):
    """Drag the pressed pad along the surface: the shear force grows elastically (K_x dX) up to
    mu_x F_N, then the stick point moves and the force stays at the slip limit."""
    finger = Finger(params)
    q, surface = _pressed(finger, 1e-3, angle_deg=0.0)
    c = params.contact
    fn = c.a_N * 1.0 ** c.b
    x = finger.initial_state(np.degrees(q), 0.0).array
    ip0 = finger.interaction_point(q)
    aux = np.array([1.0, *(ip0 - (c.pad_radius_m - 1e-3) * surface.normal)])
    sx = surface.frame[:, 0]
    # Elastic: 0.5 mm of shear gives K_x * 0.5 mm, opposing the displacement.
    from uartlab.sim.bondgraph import project_into, work_arrays

    def shear_at(shift_m, aux):
        # Move the surface instead of the finger: the same relative displacement.
        moved = PlaneSurface(surface.angle_deg, tuple(np.asarray(surface.point_m) - shift_m * sx))
        a = aux.copy()
        a[1:] -= shift_m * sx
        f = finger.contact_forces(x, a, moved)[0]
        R, o, _, sc = work_arrays()
        project_into(finger.P, moved.compiled(), x.copy(), a, R, o, sc)
        return float(f @ sx), a[1:] + shift_m * sx  # back in the original surface coordinates

    f_small, cp_small = shear_at(0.5e-3, aux)  # the pad sits 0.5 mm along +s_x of its stick point
    assert f_small == pytest.approx(-c.Kx_N_per_m * 0.5e-3, rel=1e-9)
    np.testing.assert_allclose(cp_small, aux[1:], atol=1e-15)  # still stuck
    f_big, cp_big = shear_at(5e-3, aux)  # 5 mm: past the slip limit
    assert f_big == pytest.approx(-c.mu_x * fn, rel=1e-9)
    slid = (cp_big - aux[1:]) @ sx
    assert slid == pytest.approx(5e-3 - c.mu_x * fn / c.Kx_N_per_m, rel=1e-9)  # dragged to the limit
