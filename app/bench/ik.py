"""Per-frame inverse kinematics cost: the live solver (sim/ik.py solve_ik) against scipy's least_squares
(solve_ik_scipy, TRF) on the same mocap frames, each warm-started from its own previous answer as the
joint stream does. Reported as the median microseconds per frame, with the largest angle difference."""

from __future__ import annotations

import time

import numpy as np
from uartlab.sim import Finger
from uartlab.sim.ik import default_markers, marker_positions, solve_ik, solve_ik_scipy

MARKER_NOISE_M = 0.5e-3
FRAME_RATE_HZ = 100.0


def mocap_frames(finger: Finger, n_frames: int, seed: int = 0) -> np.ndarray:
    """(n_frames, 12, 3) noisy markers of a smooth flex-extend motion sampled at the mocap rate."""
    rng = np.random.default_rng(seed)
    markers = default_markers(finger)
    t_s = np.arange(n_frames) / FRAME_RATE_HZ
    phase = 0.5 - 0.5 * np.cos(2 * np.pi * 0.5 * t_s)[:, None]  # one flex-extend cycle every 2 s
    Q = np.radians([-5.0, 5.0, 5.0, 5.0]) + phase * np.radians([10.0, 70.0, 80.0, 50.0])
    X = np.array([marker_positions(finger, q, markers) for q in Q])
    return X + rng.normal(0.0, MARKER_NOISE_M, X.shape)


def measure_ik(n_frames: int = 200) -> dict:
    if n_frames < 2:
        raise ValueError(f"IK bench needs at least 2 frames, got {n_frames}")
    finger = Finger()
    markers = default_markers(finger)
    frames = mocap_frames(finger, n_frames)
    solve_ik(finger, frames[0], markers)  # warm-up: kinematics kernels compiled or loaded
    results = {}
    for name, solve in (("new", solve_ik), ("scipy", solve_ik_scipy)):
        q, walls, fits = None, [], []
        for X in frames:
            t0 = time.perf_counter()
            q = solve(finger, X, markers, q0=q).q
            walls.append(time.perf_counter() - t0)
            fits.append(q)
        results[name] = (float(np.median(walls)) * 1e6, np.array(fits))
    return {
        "ik_frames": n_frames,
        "ik_new_us_per_frame": results["new"][0],
        "ik_scipy_us_per_frame": results["scipy"][0],
        "ik_max_angle_difference_rad": float(np.max(np.abs(results["new"][1] - results["scipy"][1]))),
    }
