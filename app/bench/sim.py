"""`uartlab bench sim`: the model's speed goals, measured side by side in one run.

(a) real-time factor of one free-motion trial (4 s sigmoid + settle), goal >= 300x;
(b) speed ratio against scipy solve_ivp(RK45, rtol=1e-6) on the same right-hand side, at matched
    accuracy (steady-state angles within 0.05 deg), goal >= 20x;
(c) wall time for all 22 distinct trials of the paper, goal <= 2 s;
(d) IK per frame: the live solver against scipy least_squares on the same mocap frames (bench/ik.py).
Timings are medians of ``--repeats`` runs after a warm-up (the first call compiles the kernels).
"""

from __future__ import annotations

import json
import time

import numpy as np
from scipy.integrate import solve_ivp
from uartlab.app.bench.ik import measure_ik
from uartlab.sim import Finger
from uartlab.sim import scenarios as sc
from uartlab.sim.bondgraph import rhs
from uartlab.sim.inputs import input_rates_into, sigmoid_inputs
from uartlab.sim.integrators import default_atol
from uartlab.sim.state import N_AUX

GOAL_RTF, GOAL_RATIO, GOAL_ALL_S, GOAL_MATCH_DEG = 300.0, 20.0, 2.0, 0.05


def measure(repeats: int = 5) -> dict:
    if repeats < 1:
        raise ValueError(f"--repeats must be at least 1, got {repeats}")
    finger = Finger()
    trial = sc.free_motion_trial("FDP")
    x0, surface = sc.trial_start(finger, trial)
    finger.simulate(x0, trial.pulls)  # warm-up: compile

    walls: list[float] = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = finger.simulate(x0, trial.pulls)
        walls.append(time.perf_counter() - t0)
    rk4_wall = float(np.median(walls))
    sim_time = float(result.t[-1])

    # scipy on the same compiled right-hand side, to the same end time.
    inertia = finger.joint_inertias(x0.theta)
    inp = sigmoid_inputs(list(trial.pulls))
    S = finger._surface(None)
    aux = np.zeros(N_AUX)
    u = np.zeros(6)

    def f(t, x):
        input_rates_into(inp, t, u)
        return rhs(finger.P, S, inertia, x, aux, u)

    f(0.0, x0.array)  # compile
    t0 = time.perf_counter()
    sol = solve_ivp(f, (0.0, sim_time), x0.array, method="RK45", rtol=1e-6, atol=default_atol())
    scipy_wall = time.perf_counter() - t0
    mismatch = float(np.max(np.abs(np.degrees(sol.y[8:12, -1]) - result.final.theta_deg)))

    all_walls = []
    for _ in range(max(1, repeats // 2)):
        t0 = time.perf_counter()
        for tr in sc.paper_trials():
            sc.run_trial(finger, tr)
        all_walls.append(time.perf_counter() - t0)
    return {
        "free_motion_trial": trial.name,
        "simulated_s": sim_time,
        "rk4_wall_s": rk4_wall,
        "real_time_factor": sim_time / rk4_wall,
        "scipy_rk45_wall_s": scipy_wall,
        "scipy_rk45_rhs_evals": int(sol.nfev),
        "speed_ratio_vs_scipy": scipy_wall / rk4_wall,
        "steady_angle_mismatch_deg": mismatch,
        "all_22_trials_wall_s": float(np.median(all_walls)),
        **measure_ik(),
    }


def render(m: dict) -> str:
    def verdict(ok: bool) -> str:
        return "meets goal" if ok else "MISSES goal"

    return "\n".join([
        f"uartlab bench sim — {m['free_motion_trial']}, {m['simulated_s']:.2f} s simulated",
        f"(a) real-time factor          {m['real_time_factor']:8.0f}x   (RK4 {m['rk4_wall_s'] * 1e3:.1f} ms)"
        f"   goal >= {GOAL_RTF:.0f}x: {verdict(m['real_time_factor'] >= GOAL_RTF)}",
        f"(b) speed vs scipy RK45       {m['speed_ratio_vs_scipy']:8.1f}x   (RK45 {m['scipy_rk45_wall_s']:.3f} s,"
        f" {m['scipy_rk45_rhs_evals']} RHS calls; steady angles differ by {m['steady_angle_mismatch_deg']:.4f} deg)"
        f"   goal >= {GOAL_RATIO:.0f}x within {GOAL_MATCH_DEG} deg: "
        f"{verdict(m['speed_ratio_vs_scipy'] >= GOAL_RATIO and m['steady_angle_mismatch_deg'] <= GOAL_MATCH_DEG)}",
        f"(c) all 22 paper trials       {m['all_22_trials_wall_s']:8.3f} s"
        f"   goal <= {GOAL_ALL_S:.0f} s: {verdict(m['all_22_trials_wall_s'] <= GOAL_ALL_S)}",
        f"(d) IK per frame              {m['ik_new_us_per_frame']:8.0f} us   (scipy least_squares"
        f" {m['ik_scipy_us_per_frame']:.0f} us, median of {m['ik_frames']} frames;"
        f" angles differ by {m['ik_max_angle_difference_rad']:.1e} rad)",
    ])


def main(args) -> int:
    m = measure(args.repeats)
    print(json.dumps(m, indent=2) if args.json else render(m))
    return 0
