"""`uartlab bench sim`: the model's speed goals, measured side by side in one run.

(a) real-time factor of one free-motion trial (4 s sigmoid + settle), goal >= 300x;
(b) speed ratio against scipy solve_ivp(RK45, rtol=1e-6) on the same right-hand side, at matched
    accuracy (steady-state angles within 0.05 deg), goal >= 20x;
(c) wall time for all 22 distinct trials of the paper, goal <= 2 s;
(d) IK per frame: the live solver against scipy least_squares on the same mocap frames (bench/ik.py);
(e) a batch of perturbed models (each parameter within +-15 %, seeded) on all 22 trials, as a sensitivity
    analysis or a fit runs them: trials per second on one worker process beside two;
(f) the 22 trials with every moment arm a table (sim/moment_arm_forms.py: the MCP arms bicubic over both
    MCP angles) beside the polynomial defaults, interleaved: goal within 20 %; and with the lateral bands'
    PIP arms from the wrap model (sim/lateral_band_wrap.py) instead, the rest polynomial;
(g) the same free-motion pull in MuJoCo (`uartlab sim export-mjcf`: no extensor mechanism, 0.5 ms steps,
    the command set every 2 ms from Python), real-time factor beside (a), when MuJoCo is installed.
Timings are medians of ``--repeats`` runs after a warm-up (the first call compiles the kernels).
"""

from __future__ import annotations

import importlib.util
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
GOAL_TABLE_SLOWDOWN = 1.2
# The lateral bands' wrap in (f), mm: the defaults' -4.5 mm extensor arm at PIP 0, shrinking to -1.1 mm at
# 100 deg (illustrative geometry, not a measured UART value; a band that turns flexor by 70 deg leaves the
# Curl and Hook starts without holding tensions).
WRAP_HEAD_RADIUS_MM, WRAP_HEAD_CENTRE_MM, WRAP_BAND_HOLD_MM = 3.0, (-2.0, 1.5), (15.0, 4.5)


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
        **measure_batch(),
        **measure_forms(max(1, repeats // 2)),
        **measure_mujoco(repeats),
    }


def measure_mujoco(repeats: int) -> dict:
    """(g): the exported finger's FDP pull in MuJoCo, from Flex held by its least tensions, to the same end."""
    if importlib.util.find_spec("mujoco") is None:
        return {}
    from uartlab.sim import FingerParams
    from uartlab.sim.inputs import sigmoid_inputs
    from uartlab.sim.mjcf import finger_spec, held_start, holding_tensions, run_pull

    params = FingerParams.uart()
    finger = Finger(params)
    trial = sc.free_motion_trial("FDP")
    x0, _ = sc.trial_start(finger, trial)
    end_s = float(finger.simulate(x0, trial.pulls).t[-1])
    model = finger_spec(params, x0.theta).compile()
    try:
        tensions = holding_tensions(model, x0.theta, float(np.min(x0.F_input)))
    except ValueError as exc:   # the exported finger has no extensor mechanism: some arm sets cannot hold Flex
        return {"mujoco_not_run": str(exc)}
    walls = []
    for _ in range(repeats):
        data, rest = held_start(model, params, x0.theta, tensions)
        t0 = time.perf_counter()
        run_pull(model, data, rest, sigmoid_inputs(list(trial.pulls)), end_s)
        walls.append(time.perf_counter() - t0)
    wall = float(np.median(walls))
    return {"mujoco_wall_s": wall, "mujoco_real_time_factor": end_s / wall, "mujoco_timestep_s": model.opt.timestep}


def measure_forms(repeats: int) -> dict:
    """(f): all 22 trials with polynomial, with tabulated and with wrapped lateral-band moment arms,
    alternating, medians."""
    from uartlab.sim import FingerParams
    from uartlab.sim.lateral_band_wrap import ArmWrap
    from uartlab.sim.moment_arm_forms import tabulate
    from uartlab.sim.names import PIP, RADIAL_BAND, ULNAR_BAND

    params = FingerParams.uart()
    lo, hi = params.rom_rad[PIP]
    wrap = ArmWrap(WRAP_HEAD_RADIUS_MM * 1e-3, (WRAP_HEAD_CENTRE_MM[0] * 1e-3, WRAP_HEAD_CENTRE_MM[1] * 1e-3),
                   (WRAP_BAND_HOLD_MM[0] * 1e-3, WRAP_BAND_HOLD_MM[1] * 1e-3), (float(lo), float(hi)))
    wrapped = params.replace(moment_arm_forms={(RADIAL_BAND, "PIP"): wrap, (ULNAR_BAND, "PIP"): wrap})
    fingers = {"polynomial": Finger(params), "tables": Finger(params.replace(moment_arm_forms=tabulate(params))),
               "wrap": Finger(wrapped)}
    trials = sc.paper_trials()
    walls: dict[str, list[float]] = {name: [] for name in fingers}
    sc.run_trial(fingers["tables"], trials[0])   # warm-up: the table path compiled
    for _ in range(repeats):
        for name, finger in fingers.items():
            t0 = time.perf_counter()
            for tr in trials:
                sc.run_trial(finger, tr)
            walls[name].append(time.perf_counter() - t0)
    return {f"forms_{name}_22_trials_wall_s": float(np.median(w)) for name, w in walls.items()}


BATCH_SETS = 16
BATCH_PERTURBATION = 0.15


def _perturbed_task(seed: int) -> int:
    """All 22 paper trials of one seeded perturbed model (module level: a worker process runs it)."""
    from uartlab.calibration.sensitivity import steady_outputs
    from uartlab.sim import FingerParams

    steady_outputs(FingerParams.uart().perturbed(BATCH_PERTURBATION, seed), sc.paper_trials())
    return len(sc.paper_trials())


def measure_batch(sets: int = BATCH_SETS) -> dict:
    """(e): trials per second for ``sets`` perturbed models x 22 trials on 1 and on 2 worker processes."""
    from uartlab.calibration.executors import executor_for

    rates = {}
    for workers in (1, 2):
        with executor_for(None, workers=workers) as executor:
            list(executor.map(_perturbed_task, range(1000, 1000 + workers)))   # warm: kernels loaded
            t0 = time.perf_counter()
            trials = sum(executor.map(_perturbed_task, range(sets)))
            rates[workers] = trials / (time.perf_counter() - t0)
    return {"batch_sets": sets, "batch_trials_per_s_1_worker": rates[1], "batch_trials_per_s_2_workers": rates[2]}


def render(m: dict) -> str:
    def verdict(ok: bool) -> str:
        return "meets goal" if ok else "MISSES goal"

    slowdown = m["forms_tables_22_trials_wall_s"] / m["forms_polynomial_22_trials_wall_s"]
    wrap_ratio = m["forms_wrap_22_trials_wall_s"] / m["forms_polynomial_22_trials_wall_s"]
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
        f"(e) perturbed batch           {m['batch_trials_per_s_2_workers']:8.0f} trials/s on 2 workers"
        f"   ({m['batch_trials_per_s_1_worker']:.0f} on 1: "
        f"{m['batch_trials_per_s_2_workers'] / m['batch_trials_per_s_1_worker']:.2f}x; {m['batch_sets']} models"
        f" within +-{BATCH_PERTURBATION:.0%} x 22 trials)",
        f"(f) tabulated moment arms     {m['forms_tables_22_trials_wall_s']:8.3f} s   (polynomial"
        f" {m['forms_polynomial_22_trials_wall_s']:.3f} s: {slowdown:.2f}x)   goal <= {GOAL_TABLE_SLOWDOWN}x: "
        f"{verdict(slowdown <= GOAL_TABLE_SLOWDOWN)}",
        f"    lateral-band PIP wrap     {m['forms_wrap_22_trials_wall_s']:8.3f} s   ({wrap_ratio:.2f}x the polynomial;"
        f" the trials settle elsewhere, so the time is the model's, not the arm's cost alone)",
        (f"(g) MuJoCo, the same pull       {m['mujoco_real_time_factor']:8.0f}x   ({m['mujoco_wall_s'] * 1e3:.1f} ms,"
         f" {m['mujoco_timestep_s'] * 1e3:g} ms steps, the exported finger without the extensor mechanism;"
         f" uartlab {m['real_time_factor']:.0f}x)" if "mujoco_wall_s" in m
         else f"(g) MuJoCo: not run: {m['mujoco_not_run']}" if "mujoco_not_run" in m
         else "(g) MuJoCo: not installed (pip install 'uartlab[mujoco]')"),
    ])


def main(args) -> int:
    m = measure(args.repeats)
    print(json.dumps(m, indent=2) if args.json else render(m))
    return 0
