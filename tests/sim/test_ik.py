"""Marker-based inverse kinematics (sim/ik.py): recovery, noise, occlusion, bounds, warm starts, errors,
and agreement with scipy's least_squares (TRF) on the same objective."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import random_pose
from uartlab.sim.ik import (
    Marker,
    default_markers,
    marker_positions,
    solve_ik,
    solve_ik_scipy,
    solve_ik_trajectory,
    weighted_error,
)
from uartlab.sim.kinematics import jacobian_at
from uartlab.sim.names import DIP, MCP_AB, PIP

NOISE_M = 0.5e-3


@pytest.fixture(scope="module")
def markers(finger):
    return default_markers(finger)


def _index(markers, name: str) -> int:
    return [m.name for m in markers].index(name)


# ---------------------------------------------------------------- the marker set
def test_default_markers_sit_dorsally_and_span_each_bone(finger, markers):
    links = [m.link for m in markers]
    assert links == [0] * 3 + [2] * 3 + [3] * 3 + [4] * 3
    # Straight finger: world +Z is dorsal, and the bones lie on the X axis.
    at_rest = marker_positions(finger, np.zeros(4), markers)
    np.testing.assert_allclose(at_rest[:, 2], 0.008, atol=1e-12)
    assert np.all(at_rest[:3, 0] < 0)  # base markers on the metacarpal, proximal to the MCP
    # Flexed (in the sagittal plane, AB = 0): the markers turn with their bones and stay dorsal. A bone
    # along u = (ux, 0, uz) has the dorsal normal (-uz, 0, ux), which is world +Z when the finger is straight.
    q = np.radians([0, 60, 80, 50])
    _, o = finger.frames(q)
    x = marker_positions(finger, q, markers)
    for i, m in enumerate(markers[3:], start=3):
        u = (o[m.link] - o[m.link - 1]) / np.linalg.norm(o[m.link] - o[m.link - 1])
        assert (x[i] - o[m.link]) @ [-u[2], 0.0, u[0]] == pytest.approx(0.008, abs=1e-12), m.name
    # Each bone's triplet is not collinear, so the bone's whole orientation is observable.
    x = marker_positions(finger, np.radians([10, 60, 80, 50]), markers)
    for link in (0, 2, 3, 4):
        p = x[[i for i, m in enumerate(markers) if m.link == link]]
        assert np.linalg.norm(np.cross(p[1] - p[0], p[2] - p[0])) > 1e-5


def test_marker_positions_follow_the_frames(finger):
    q = np.radians([-5, 40, 30, 20])
    tip = Marker("tip", 4, (0.0, 0.0, 0.0))
    np.testing.assert_allclose(marker_positions(finger, q, [tip])[0], finger.fingertip(q), atol=1e-15)
    with pytest.raises(ValueError, match="four joint angles"):
        marker_positions(finger, np.zeros(3), [tip])


def test_marker_validation():
    with pytest.raises(ValueError, match="link must be 0..4"):
        Marker("m", 5, (0.0, 0.0, 0.0))
    with pytest.raises(ValueError, match="weight"):
        Marker("m", 2, (0.0, 0.0, 0.0), weight=-1.0)
    with pytest.raises(ValueError, match="3 finite numbers"):
        Marker("m", 2, (0.0, 0.0))


# ---------------------------------------------------------------- single frames
def test_exact_markers_give_back_the_pose(finger, params, markers, rng):
    for _ in range(8):
        q = random_pose(params, rng)
        result = solve_ik(finger, marker_positions(finger, q, markers), markers)
        assert result.success, result.message
        np.testing.assert_allclose(result.q, q, atol=1e-6)
        assert np.all(result.residuals_m < 1e-9)
        assert result.rms_m < 1e-9
        assert result.iterations > 0 and result.wall_s > 0


def test_noise_gives_small_joint_errors_and_residuals_of_the_noise_order(finger, params, markers, rng):
    n_trials, n = 30, len(markers)
    errors, residuals, predicted_var = [], [], []
    for _ in range(n_trials):
        q = random_pose(params, rng)
        measured = marker_positions(finger, q, markers) + rng.normal(0.0, NOISE_M, (n, 3))
        result = solve_ik(finger, measured, markers)
        assert result.success, result.message
        errors.append(result.q - q)
        residuals.append(result.residuals_m)
        assert result.rms_m == pytest.approx(np.sqrt(np.mean(result.residuals_m**2)))
        # Linearised (Cramer-Rao) joint variance for this pose and noise.
        J = np.vstack([jacobian_at(finger.P, q, m.link, m.local_m)[:3] for m in markers if m.link > 0])
        predicted_var.append(NOISE_M**2 * np.diag(np.linalg.inv(J.T @ J)))
    errors, residuals = np.array(errors), np.array(residuals)
    assert np.all(np.degrees(np.abs(errors).mean(axis=0)) < 2.0)
    # The fit reaches the statistical optimum: per-joint RMS error close to the linearised prediction.
    ratio = np.sqrt((errors**2).mean(axis=0) / np.mean(predicted_var, axis=0))
    assert np.all((ratio > 0.6) & (ratio < 1.5)), ratio
    # Residuals are of the noise's order: 4 of the 3n coordinates are absorbed by the fit, so
    # E[sum_i e_i^2] = sigma^2 (3n - 4) per frame.
    pooled = np.sqrt(np.mean(residuals**2))
    assert pooled == pytest.approx(NOISE_M * np.sqrt((3 * n - 4) / n), rel=0.1)
    assert np.all(residuals < 6 * NOISE_M)


def test_an_occluded_marker_is_ignored(finger, params, markers, rng):
    q = random_pose(params, rng)
    measured = marker_positions(finger, q, markers)
    k = _index(markers, "MP_rad")
    measured[k] = [np.nan, 1.0, -3.0]  # any NaN coordinate marks it missing, whatever the others hold
    result = solve_ik(finger, measured, markers)
    np.testing.assert_allclose(result.q, q, atol=1e-6)
    assert np.isnan(result.residuals_m[k])
    assert np.all(np.delete(result.residuals_m, k) < 1e-9)
    assert np.isfinite(result.rms_m)


def test_unobserved_joints_are_named(finger, params, markers, rng):
    q = random_pose(params, rng)
    measured = marker_positions(finger, q, markers)
    measured[[m.link == 4 for m in markers]] = np.nan  # the whole distal phalanx is hidden
    result = solve_ik(finger, measured, markers)
    np.testing.assert_allclose(result.q[:DIP], q[:DIP], atol=1e-6)
    assert "DIP" in result.message and "PIP" not in result.message


def test_too_few_markers_and_bad_shapes_raise(finger, params, markers, rng):
    measured = marker_positions(finger, random_pose(params, rng), markers)
    sparse = measured.copy()
    sparse[4:] = np.nan  # base markers (which do not move) plus one phalanx marker left
    with pytest.raises(ValueError, match="at least 2 usable markers on the moving bones.*got 1"):
        solve_ik(finger, sparse, markers)
    zero_weight = np.ones(len(markers))
    zero_weight[3:] = 0.0
    with pytest.raises(ValueError, match="at least 2 usable markers"):
        solve_ik(finger, measured, markers, weights=zero_weight)
    with pytest.raises(ValueError, match=r"shape \(12, 3\) for 12 markers, got \(11, 3\)"):
        solve_ik(finger, measured[:11], markers)
    with pytest.raises(ValueError, match=r"weights must have shape \(12,\).*got \(3,\)"):
        solve_ik(finger, measured, markers, weights=np.ones(3))
    with pytest.raises(ValueError, match="q0 needs four joint angles"):
        solve_ik(finger, measured, markers, q0=np.zeros(2))


def test_a_pose_outside_the_rom_is_clamped_to_its_bounds(finger, params, markers):
    lo, hi = params.rom_rad[:, 0], params.rom_rad[:, 1]
    q = np.array([hi[MCP_AB] + np.radians(10), np.radians(40), lo[PIP] - np.radians(15), np.radians(30)])
    result = solve_ik(finger, marker_positions(finger, q, markers), markers, q0=q)  # q0 outside is clipped
    assert np.all(result.q >= lo) and np.all(result.q <= hi)
    assert result.q[MCP_AB] == pytest.approx(hi[MCP_AB], abs=1e-6)
    assert result.q[PIP] == pytest.approx(lo[PIP], abs=1e-6)
    assert result.rms_m > 1e-4  # the measured pose cannot be reached, so the fit is not exact


def test_weights_decide_which_markers_count(finger, params, markers, rng):
    q = random_pose(params, rng)
    measured = marker_positions(finger, q, markers)
    k = _index(markers, "DP_dist")
    measured[k, 2] += 0.005  # one marker slipped 5 mm
    weights = np.ones(len(markers))
    assert np.max(np.abs(solve_ik(finger, measured, markers, weights=weights).q - q)) > 1e-3
    weights[k] = 0.0
    result = solve_ik(finger, measured, markers, weights=weights)
    np.testing.assert_allclose(result.q, q, atol=1e-6)
    assert result.residuals_m[k] == pytest.approx(0.005, rel=1e-3)  # still reported, just not fitted


# ---------------------------------------------------------------- trajectories
def test_trajectory_warm_start_matches_independent_solves(finger, params, markers, rng):
    a, b = random_pose(params, rng, margin_rad=0.2), random_pose(params, rng, margin_rad=0.2)
    s = np.linspace(0.0, 1.0, 12)[:, None]
    Q = a + (b - a) * (3 * s**2 - 2 * s**3)
    measured = np.array([marker_positions(finger, q, markers) for q in Q])
    measured += rng.normal(0.0, NOISE_M, measured.shape)
    measured[5, _index(markers, "PP_prox")] = np.nan
    q_fit, residuals = solve_ik_trajectory(finger, measured, markers)
    assert q_fit.shape == (12, 4) and residuals.shape == (12, len(markers))
    for t in range(len(Q)):
        alone = solve_ik(finger, measured[t], markers)
        np.testing.assert_allclose(q_fit[t], alone.q, atol=1e-6)
        np.testing.assert_allclose(residuals[t], alone.residuals_m, atol=1e-9, equal_nan=True)
    assert np.isnan(residuals[5, _index(markers, "PP_prox")])
    # Warm starting pays: starting at the previous frame's answer takes fewer steps than mid-ROM.
    warm = sum(solve_ik(finger, measured[t], markers, q0=q_fit[t - 1]).iterations for t in range(1, len(Q)))
    cold = sum(solve_ik(finger, measured[t], markers).iterations for t in range(1, len(Q)))
    assert warm < cold


def test_trajectory_holds_a_joint_while_it_is_unobserved(finger, markers):
    """Warm starting means a joint no marker sees keeps its last fitted value (a cold start would jump
    to mid-ROM)."""
    Q = np.radians([[0, 20 + 5 * t, 30, 20 + 4 * t] for t in range(6)])
    measured = np.array([marker_positions(finger, q, markers) for q in Q])
    measured[3:, [m.link == 4 for m in markers]] = np.nan  # the distal phalanx leaves view at frame 3
    q_fit, residuals = solve_ik_trajectory(finger, measured, markers)
    np.testing.assert_allclose(q_fit[:, :DIP], Q[:, :DIP], atol=1e-6)
    np.testing.assert_allclose(q_fit[:3], Q[:3], atol=1e-6)
    np.testing.assert_allclose(q_fit[3:, DIP], Q[2, DIP], atol=1e-9)
    assert np.all(np.isnan(residuals[3:, -3:]))


def test_trajectory_errors_name_the_frame(finger, markers):
    measured = np.array([marker_positions(finger, np.radians([0, 20 * t, 30, 20]), markers) for t in range(4)])
    measured[2, 3:] = np.nan  # frame 2 lost every phalanx marker
    with pytest.raises(ValueError, match="frame 2: IK needs at least 2 usable markers"):
        solve_ik_trajectory(finger, measured, markers)
    with pytest.raises(ValueError, match=r"shape \(T, 12, 3\).*got \(4, 12\)"):
        solve_ik_trajectory(finger, measured[:, :, 0], markers)


# ---------------------------------------------------------------- the seed's error measure
def test_weighted_error_matches_a_hand_computation():
    residuals = np.array([[1.0, 2.0, np.nan, np.nan],
                          [3.0, 4.0, 6.0, np.nan],
                          [5.0, np.nan, 9.0, np.nan]])
    weights = np.array([1.0, 2.0, 0.5, 10.0])  # the last marker is never seen, so it drops out
    # e = [3, 3, 7.5]; error = (1*3 + 2*3 + 0.5*7.5) / (1 + 2 + 0.5)
    assert weighted_error(residuals, weights) == pytest.approx(12.75 / 3.5, rel=1e-12)
    as_markers = [Marker(f"m{i}", 2, (0.0, 0.0, 0.0), weight=w) for i, w in enumerate(weights)]
    assert weighted_error(residuals, as_markers) == pytest.approx(12.75 / 3.5, rel=1e-12)
    assert weighted_error(np.array([1.0, 3.0]), [1.0, 3.0]) == pytest.approx(2.5)
    with pytest.raises(ValueError, match=r"weights must have shape \(4,\)"):
        weighted_error(residuals, [1.0, 2.0])
    with pytest.raises(ValueError, match="at least one measured marker"):
        weighted_error(np.full((2, 2), np.nan), [1.0, 1.0])


def test_the_fit_minimises_the_weighted_sum_of_squares(finger, params, markers, rng):
    """The solution is a minimum of sum_i w_i ||x_exp_i - x_i(q)||^2 itself (not, e.g., of sum w_i^2 ...)."""
    q = random_pose(params, rng, margin_rad=0.2)
    measured = marker_positions(finger, q, markers) + rng.normal(0.0, 2e-3, (len(markers), 3))
    weights = np.geomspace(0.1, 10.0, len(markers))
    rng.shuffle(weights)
    fit = solve_ik(finger, measured, markers, weights=weights).q

    def cost(qq):
        return float(np.sum(weights * np.sum((measured - marker_positions(finger, qq, markers)) ** 2, axis=1)))

    for j in range(4):
        step = np.zeros(4)
        step[j] = 1e-4
        assert cost(fit + step) > cost(fit) and cost(fit - step) > cost(fit), j


# ---------------------------------------------------------------- agreement with scipy
def test_the_solver_finds_scipys_optimum_inside_and_at_the_rom(finger, params, markers, rng):
    """Random poses, some beyond the ROM (the fit then sits on a bound), with noise, occlusions, warm and
    cold starts: inside the ROM both land on the same q; on a bound they agree to far below the noise
    and the fast solver's cost is never worse (scipy's TRF stops a little short there)."""
    lo, hi = params.rom_rad[:, 0], params.rom_rad[:, 1]
    interior = on_bound = 0
    for k in range(120):
        q = rng.uniform(lo - 0.2, hi + 0.2) if k % 2 else rng.uniform(lo, hi)
        measured = marker_positions(finger, q, markers) + rng.normal(0.0, NOISE_M, (len(markers), 3))
        if k % 3 == 0:
            measured[rng.integers(3, len(markers))] = np.nan
        q0 = None if k % 4 == 0 else np.clip(q + rng.normal(0.0, 0.05, 4), lo, hi)
        fast = solve_ik(finger, measured, markers, q0=q0)
        reference = solve_ik_scipy(finger, measured, markers, q0=q0)
        assert fast.success and np.all(fast.q >= lo) and np.all(fast.q <= hi)
        fast_cost, reference_cost = (np.nansum(r.residuals_m ** 2) for r in (fast, reference))
        assert fast_cost <= reference_cost * (1 + 1e-9)
        if np.any((reference.q <= lo + 1e-9) | (reference.q >= hi - 1e-9)):
            on_bound += 1
            np.testing.assert_allclose(fast.q, reference.q, atol=1e-4)
        else:
            interior += 1
            np.testing.assert_allclose(fast.q, reference.q, atol=1e-6)
        np.testing.assert_allclose(fast.residuals_m, reference.residuals_m, atol=1e-8, equal_nan=True)
    assert interior > 30 and on_bound > 30  # both cases were exercised
