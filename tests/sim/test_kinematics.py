"""Forward kinematics and the geometric Jacobian against geometry and finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import random_pose


def test_straight_finger_lies_along_the_metacarpal(finger, params):
    """At zero angles the bones are colinear (paper: the -30 deg MCP-FE offset does this) and point along
    world X (our world frame: X distal along the metacarpal)."""
    tip = finger.fingertip(np.zeros(4))
    np.testing.assert_allclose(tip, [params.a_m.sum(), 0.0, 0.0], atol=1e-12)
    _, o = finger.frames(np.zeros(4))
    for joint in o[1:]:
        np.testing.assert_allclose(joint[1:], 0.0, atol=1e-12)


def test_flexion_moves_the_tip_palmar_and_abduction_radial(finger):
    tip0 = finger.fingertip(np.zeros(4))
    assert finger.fingertip(np.radians([0, 30, 0, 0]))[2] < tip0[2] - 0.03  # palm down: flexion goes down
    assert finger.fingertip(np.radians([0, 0, 0, 60]))[2] < tip0[2]
    assert finger.fingertip(np.radians([10, 0, 0, 0]))[1] > 0.01  # +AB = radial = +Y


def test_pitched_ab_axis(finger):
    """The MCP-AB axis is pitched 60 deg from the metacarpal (paper, Mechanisms)."""
    R, _ = finger.frames(np.zeros(4))
    ab_axis = R[0][:, 2]
    assert np.degrees(np.arccos(abs(ab_axis @ np.array([1.0, 0.0, 0.0])))) == pytest.approx(60.0)


def _rotation_log(R):
    angle = np.arccos(np.clip((np.trace(R) - 1) / 2, -1, 1))
    if angle < 1e-12:
        return np.zeros(3)
    return angle / (2 * np.sin(angle)) * np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])


@pytest.mark.parametrize("point", ["fingertip", "interaction"])
def test_jacobian_matches_finite_differences(finger, params, rng, point):
    h = 1e-6
    locate = finger.fingertip if point == "fingertip" else finger.interaction_point
    for _ in range(10):
        q = random_pose(params, rng)
        J = finger.jacobian(q, point)
        R0 = finger.frames(q)[0][4]
        for j in range(4):
            dq = np.zeros(4)
            dq[j] = h
            v = (locate(q + dq) - locate(q - dq)) / (2 * h)
            np.testing.assert_allclose(J[:3, j], v, atol=1e-8)
            Rp, Rm = finger.frames(q + dq)[0][4], finger.frames(q - dq)[0][4]
            w = (_rotation_log(Rp @ R0.T) - _rotation_log(Rm @ R0.T)) / (2 * h)
            np.testing.assert_allclose(J[3:, j], w, atol=1e-7)


def test_bad_jacobian_point_is_refused(finger):
    with pytest.raises(ValueError, match="fingertip"):
        finger.jacobian(np.zeros(4), "knuckle")
