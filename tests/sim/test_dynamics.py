"""Rigid-body dynamics: RNEA gravity against the potential energy, the mass matrix, the fast kernels."""

from __future__ import annotations

import numpy as np
from conftest import random_pose
from uartlab.sim.bondgraph import work_arrays
from uartlab.sim.dynamics import gravity_torques_into
from uartlab.sim.kinematics import frames_into


def test_rnea_gravity_is_minus_the_gradient_of_potential_energy(finger, params, rng):
    h = 1e-6
    for _ in range(10):
        q = random_pose(params, rng)
        grad = np.array([(finger.potential_energy(q + h * e) - finger.potential_energy(q - h * e)) / (2 * h)
                         for e in np.eye(4)])
        np.testing.assert_allclose(finger.gravity_torques(q), -grad, atol=1e-9)


def test_gravity_is_not_trivially_zero(finger):
    """Palm down with the finger straight, gravity flexes the MCP by about m g x (26 g at ~50 mm)."""
    tau = finger.gravity_torques(np.zeros(4))
    assert 5e-3 < tau[1] < 2e-2
    assert abs(tau[0]) < 1e-9  # AB axis sees no torque when the finger lies in the vertical plane


def test_compiled_gravity_kernel_equals_rnea(finger, params, rng):
    R, o, _, _ = work_arrays()
    tau = np.empty(4)
    for _ in range(10):
        q = random_pose(params, rng)
        frames_into(finger.P, q, R, o)
        gravity_torques_into(finger.P, R, o, tau)
        np.testing.assert_allclose(tau, finger.gravity_torques(q), atol=1e-12)


def test_mass_matrix_is_symmetric_positive_definite_and_matches_kinetic_energy(finger, params, rng):
    for _ in range(5):
        q = random_pose(params, rng)
        M = finger.mass_matrix(q)
        np.testing.assert_allclose(M, M.T, atol=1e-12)
        assert np.all(np.linalg.eigvalsh(M) > 0)
        np.testing.assert_allclose(finger.joint_inertias(q), np.diag(M), rtol=1e-12)


def test_inverse_dynamics_is_linear_in_acceleration(finger, params, rng):
    q = random_pose(params, rng)
    qd = rng.normal(size=4)
    qdd = rng.normal(size=4)
    tau = finger.inverse_dynamics(q, qd, qdd)
    tau0 = finger.inverse_dynamics(q, qd, np.zeros(4))
    np.testing.assert_allclose(tau - tau0, finger.mass_matrix(q) @ qdd, atol=1e-12)
