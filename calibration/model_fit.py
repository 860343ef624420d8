"""Model parameters by least squares over simulations of recorded trials.

What is fitted (any subset of ``PARAMETERS``): the joint Coulomb coefficient mu_c, the joint damping,
the contact law a, b, Kx, Ky, mu_x, mu_y (paper eqs. 15 and 19-23), and the lateral bands' PIP wrap when the
parameters give one (calibration/wrap_params.py). Each recorded trial is
re-simulated from its measured start (joint angles, tendon tensions, the surface where it really was)
with its measured tendon excursions as inputs (so the servos' own lag is in the data, not in the
residual); the residual is the joint-angle error (per 1 deg) and the fingertip-force error (per 10 mN)
at the recording's samples. A coarse scan of each parameter picks the start (the cost has local minima
where the pad switches between sticking and sliding), then scipy's trust-region least squares drives it,
with the scan's and the finite-difference Jacobian's simulations farmed out to a
concurrent.futures.Executor (calibration/executors.py): every one is an independent simulation.

Parameters are fitted as log-scale factors on the starting values, so all are positive and of order one.
Identifiability is reported, not assumed: the standard error of each factor from the Jacobian at the
solution, corrected for the time series' correlated residuals, and the correlation of pairs the data
hardly tell apart (calibration/fit_uncertainty.py). The joint damping of the UART (0.01 N·mm·s/rad) is far
below friction at these speeds and usually comes back poorly determined; that is a property of the data,
not a fit failure.
"""

from __future__ import annotations

import contextlib
import dataclasses
from concurrent.futures import Executor
from dataclasses import dataclass

import numpy as np
from scipy.optimize import least_squares
from uartlab.calibration.executors import run_tasks
from uartlab.calibration.fit_uncertainty import Uncertainty, uncertainty
from uartlab.calibration.wrap_params import WRAP_PARAMETERS, get_wrap_param, with_wrap_params
from uartlab.errors import CalibrationError
from uartlab.sim import Finger, FingerParams
from uartlab.sim.errors import SimulationDiverged
from uartlab.sim.inputs import table_inputs
from uartlab.sim.params import ContactParams
from uartlab.sim.surface import PlaneSurface

PARAMETERS = ("coulomb", "damping", "a", "b", "Kx", "Ky", "mu_x", "mu_y", *WRAP_PARAMETERS)
CONTACT_PARAMETERS = ("a", "b", "Kx", "Ky", "mu_x", "mu_y")  # need a surface-contact trial
ANGLE_SCALE_RAD = np.radians(1.0)
FORCE_SCALE_N = 0.01
DIFF_STEP = 1e-3     # relative step of the finite differences (log factors)
MAX_ITERATIONS = 20  # Jacobians; each is one batch of len(names) + 1 simulations per trial
UNCERTAINTY_STEP = 0.03  # log factors (+-3 %): the slopes the 1-sigma is computed from (see fit_model)
SCAN_LOG_FACTORS = np.linspace(-0.7, 0.7, 29)  # the coarse scan (see _scan): x0.5 .. x2 in 5 % steps
SEARCH_LIMIT = 3.0   # log factors: each parameter within e^-3 .. e^3 (1/20 .. 20) of its start


@dataclass
class TrialRecording:
    """One recorded trial, as the model fit needs it (from a session file or the twin).

    The surface of a contact trial is either known (``surface``: the twin plant's own plane) or, as in a
    session file, known only by its angle and the force measured at rest before actuation
    (``surface_angle_deg``, ``start_tip_force_N``): then each simulation places it the paper's way, pressed
    in by the deflection that gives that force under the contact law being tried (app/compare/resim.py
    does the same for `uartlab compare`), so fitting a or b does not also move the surface."""

    name: str
    t_s: np.ndarray             # (n,) from actuation start
    excursion_m: np.ndarray     # (n, 6) measured servo excursions
    theta_rad: np.ndarray       # (n, 4)
    tip_force_N: np.ndarray     # (n, 3) force on the fingertip, world frame (zeros in free motion)
    start_theta_rad: np.ndarray
    start_tensions_N: np.ndarray
    surface: PlaneSurface | None
    surface_angle_deg: float | None = None      # a surface placed from the measured start force (sessions)
    start_tip_force_N: np.ndarray | None = None  # (3,) world frame, at rest before actuation

    @property
    def contact(self) -> bool:
        return self.surface is not None or self.surface_angle_deg is not None


def get_param(params: FingerParams, name: str) -> float:
    if name in WRAP_PARAMETERS:
        return get_wrap_param(params, name)
    c = params.contact
    return {"coulomb": params.coulomb_coefficient_m, "damping": float(params.joint_damping_Nms_per_rad[1]),
            "a": c.a_N, "b": c.b, "Kx": c.Kx_N_per_m, "Ky": c.Ky_N_per_m, "mu_x": c.mu_x, "mu_y": c.mu_y}[name]


def set_params(params: FingerParams, values: dict[str, float]) -> FingerParams:
    c = params.contact
    contact = ContactParams(a_N=values.get("a", c.a_N), b=values.get("b", c.b),
                            Kx_N_per_m=values.get("Kx", c.Kx_N_per_m), Ky_N_per_m=values.get("Ky", c.Ky_N_per_m),
                            mu_x=values.get("mu_x", c.mu_x), mu_y=values.get("mu_y", c.mu_y),
                            pad_radius_m=c.pad_radius_m)
    damping = params.joint_damping_Nms_per_rad
    if "damping" in values:  # one damping for all four joints, as the paper's Table 3
        damping = np.full(4, values["damping"])
    # dataclasses.replace, not params.replace: these are a start value times a positive factor, and the
    # TOML round trip that validates a user's change costs as much as a short trial's simulation.
    return with_wrap_params(dataclasses.replace(
        params, coulomb_coefficient_m=values.get("coulomb", params.coulomb_coefficient_m),
        joint_damping_Nms_per_rad=damping, contact=contact), values)


def simulate_recording(params: FingerParams, rec: TrialRecording) -> tuple[np.ndarray, np.ndarray]:
    """(theta (n, 4), tip force (n, 3)) of the model with ``params`` replaying ``rec``'s inputs."""
    finger = Finger(params)
    rom = params.rom_rad  # measured angles can sit a hair outside the model's ROM (mocap noise)
    theta0 = np.clip(rec.start_theta_rad, rom[:, 0], rom[:, 1])
    x0 = finger.initial_state(np.degrees(theta0), np.clip(rec.start_tensions_N, 0.0, None))
    inp = table_inputs(rec.t_s - rec.t_s[0], rec.excursion_m - rec.excursion_m[0])
    dt_rec = float(np.median(np.diff(rec.t_s)))
    surface = rec.surface if rec.surface is not None else placed_surface(finger, rec, theta0)
    res = finger.simulate(x0, inp, surface, t_max=float(rec.t_s[-1] - rec.t_s[0]) + 1e-9,
                          stop_at_steady=False, record_dt=dt_rec)
    t = res.t
    theta = np.stack([np.interp(rec.t_s - rec.t_s[0], t, res.x[:, 8 + j]) for j in range(4)], axis=1)
    force = res.fingertip_force_N()
    tip = np.stack([np.interp(rec.t_s - rec.t_s[0], t, force[:, k]) for k in range(3)], axis=1)
    return theta, tip


def placed_surface(finger: Finger, rec: TrialRecording, theta_rad: np.ndarray) -> PlaneSurface | None:
    """The surface at the recorded angle, touching the pad and pressed in so that this finger's contact law
    (F_N = a |dZ|^b, dZ in mm) gives the normal force measured at rest; None for free motion."""
    if rec.surface_angle_deg is None:
        return None
    normal = PlaneSurface(rec.surface_angle_deg, (0.0, 0.0, 0.0)).normal
    f_n = float(rec.start_tip_force_N @ normal) if rec.start_tip_force_N is not None else 0.0
    c = finger.params.contact
    deflection_m = 1e-3 * (f_n / c.a_N) ** (1.0 / c.b) if f_n > 0.0 else 0.0
    return PlaneSurface.touching(finger.interaction_point(theta_rad), c.pad_radius_m, rec.surface_angle_deg,
                                 deflection_m)


def _residual_task(task) -> np.ndarray:
    """One simulation's residual vector (module level, so process and dask workers can run it)."""
    params, names, values, recs = task
    try:
        p: FingerParams | None = set_params(params, dict(zip(names, values, strict=True)))
    except CalibrationError:   # values the model cannot take (a band off its head): as far off as a divergence
        p = None
    out = []
    for rec in recs:
        theta, tip = np.full_like(rec.theta_rad, 10.0), np.full_like(rec.tip_force_N, 10.0)   # far off
        if p is not None:
            with contextlib.suppress(SimulationDiverged):
                theta, tip = simulate_recording(p, rec)
        out.append(((theta - rec.theta_rad) / ANGLE_SCALE_RAD).ravel())
        if rec.contact:
            out.append(((tip - rec.tip_force_N) / FORCE_SCALE_N).ravel())
    return np.concatenate(out)


@dataclass
class ModelFit:
    names: tuple[str, ...]
    start: dict[str, float]
    values: dict[str, float]
    std_factor: dict[str, float]    # 1-sigma of each log factor (0.05 = about +-5 %), see fit_uncertainty
    rms_angle_deg: float
    rms_force_N: float
    cost_start: float
    cost: float
    simulations: int
    params: FingerParams
    rms_angle_deg_start: float = float("nan")
    rms_force_N_start: float = float("nan")
    uncertainty: Uncertainty | None = None
    at_bound: tuple[str, ...] = ()  # stopped at the search's limit (a factor e^3 from the start)

    @property
    def undetermined(self) -> list[str]:
        """Parameters these trials do not determine: at the search's limit or with a sigma too large."""
        loose = self.uncertainty.undetermined(self.names) if self.uncertainty is not None else []
        return [n for n in self.names if n in loose or n in self.at_bound]

    @property
    def correlated_pairs(self) -> list[tuple[str, str, float]]:
        return self.uncertainty.correlated_pairs(self.names) if self.uncertainty is not None else []


def fit_model(params: FingerParams, recordings: list[TrialRecording], names: tuple[str, ...],
              executor: Executor | None = None, max_iterations: int = MAX_ITERATIONS, on_progress=None) -> ModelFit:
    """Least-squares fit of ``names`` (a subset of PARAMETERS) to ``recordings``, starting at ``params``.
    ``on_progress(done, None)``: after each simulation completes (in the order they finish; the total is not
    known ahead, it depends on the optimizer's steps)."""
    unknown = [n for n in names if n not in PARAMETERS]
    if unknown or not names:
        raise CalibrationError("model", f"unknown parameter(s) {unknown or '(none given)'}; choose from "
                                        f"{', '.join(PARAMETERS)}")
    if not recordings:
        raise CalibrationError("model", "no recorded trials to fit")
    if any(n in CONTACT_PARAMETERS for n in names) and not any(r.contact for r in recordings):
        raise CalibrationError("model", "contact parameters need at least one surface-contact trial")
    for r in recordings:
        if r.t_s.size < 10 or np.any(np.diff(r.t_s) <= 0):
            raise CalibrationError("model", "a trial needs >= 10 samples at increasing times", f"trial {r.name}")
    start = {n: get_param(params, n) for n in names}
    x0 = np.zeros(len(names))
    recs = list(recordings)
    count = [0]

    def values_of(z: np.ndarray) -> list[float]:
        return [start[n] * float(np.exp(v)) for n, v in zip(names, z, strict=True)]

    def batch(zs: list[np.ndarray]) -> list[np.ndarray]:
        # One task per trial and parameter vector: a fit's step asks for one to three vectors at a time, so
        # vectors alone would leave all but one or two workers idle; trials keep every worker busy.
        tasks = [(params, names, values_of(z), [rec]) for z in zs for rec in recs]
        out = _run_batch(tasks, executor, count, on_progress)
        return [np.concatenate(out[k * len(recs):(k + 1) * len(recs)]) for k in range(len(zs))]

    cache: dict[bytes, np.ndarray] = {}

    def fun(z: np.ndarray) -> np.ndarray:
        key = z.tobytes()
        if key not in cache:
            cache[key] = batch([z])[0]
        return cache[key]

    def jac(z: np.ndarray) -> np.ndarray:
        steps = [z + DIFF_STEP * e for e in np.eye(len(z))]
        f0 = fun(z)
        cols = batch(steps)
        return np.stack([(c - f0) / DIFF_STEP for c in cols], axis=1)

    r0 = fun(x0)
    z0 = _scan(x0, batch, cache)
    sol = least_squares(fun, z0, jac=jac, method="trf", x_scale=1.0, max_nfev=max_iterations * 2,
                        xtol=1e-6, ftol=1e-8, gtol=1e-8, bounds=(-SEARCH_LIMIT, SEARCH_LIMIT))
    if not np.all(np.isfinite(sol.fun)):
        raise CalibrationError("model", "the least-squares fit did not converge (a simulation diverged at the end)")
    if sol.status <= 0:  # the evaluation budget ran out before any of the tolerances was met
        raise CalibrationError("model", f"the least-squares fit did not converge in {sol.nfev} evaluations "
                                        f"(cost {0.5 * float(r0 @ r0):.4g} -> {sol.cost:.4g}): fit fewer "
                                        "parameters or start nearer (--params)")
    # The uncertainty from a central-difference Jacobian over +-UNCERTAINTY_STEP, not the fit's own: stiction
    # and contact stick-slip make the simulated response jump at small scales, and the 0.1 % steps that
    # steer the fit well measured slopes up to 5x too steep there (sigma 5x too small) on a twin-rig session.
    zs = [sol.x + sign * UNCERTAINTY_STEP * e for e in np.eye(len(names)) for sign in (1.0, -1.0)]
    ends = batch(zs)
    jac_wide = np.stack([(ends[2 * i] - ends[2 * i + 1]) / (2 * UNCERTAINTY_STEP) for i in range(len(names))], axis=1)
    unc = uncertainty(jac_wide, sol.fun, _residual_blocks(recs))
    fitted = dict(zip(names, values_of(sol.x), strict=True))
    at_bound = tuple(n for n, z in zip(names, sol.x, strict=True) if abs(z) > 0.99 * SEARCH_LIMIT)
    ang, frc = _split_rms(sol.fun, recs)
    ang0, frc0 = _split_rms(r0, recs)
    return ModelFit(tuple(names), start, fitted, dict(zip(names, unc.sigma.tolist(), strict=True)), ang, frc,
                    0.5 * float(r0 @ r0), float(sol.cost), count[0], set_params(params, fitted), ang0, frc0, unc,
                    at_bound)


def _run_batch(tasks: list, executor: Executor | None, count: list[int], on_progress) -> list[np.ndarray]:
    """One batch of simulations, in order; ``count[0]`` counts the completed ones across batches."""
    def done() -> None:
        count[0] += 1
        if on_progress is not None:
            on_progress(count[0], None)

    return run_tasks(_residual_task, tasks, executor, done, cost=_simulated_s)


def _simulated_s(task) -> float:
    """A residual task's expected cost: the seconds its trials simulate."""
    return sum(float(rec.t_s[-1] - rec.t_s[0]) for rec in task[3])


def _scan(z: np.ndarray, batch, cache: dict[bytes, np.ndarray]) -> np.ndarray:
    """A coarse start for the local fit: each parameter in turn set to the best of SCAN_LOG_FACTORS around
    its current value (the others held). Why: in contact, whether the pad sticks or slides switches with
    the friction and contact values, so the cost has shelves and local minima — on a twin-rig session the
    Coulomb coefficient's cost had one 8 % above the truth at twice the minimum's cost, where the local
    fit from 30 % off stopped. The simulations of each sweep are one batch (parallel on the executor)."""
    z = z.copy()
    best = float(cache[z.tobytes()] @ cache[z.tobytes()])
    for i in range(z.size):
        tries = [np.where(np.arange(z.size) == i, np.clip(z[i] + f, -SEARCH_LIMIT, SEARCH_LIMIT), z)
                 for f in SCAN_LOG_FACTORS]
        for t, r in zip(tries, batch(tries), strict=True):
            cache[t.tobytes()] = r
            if float(r @ r) < best:
                best, z = float(r @ r), t
    return z


def _residual_blocks(recs: list[TrialRecording]) -> list[tuple[int, int]]:
    """(samples, channels) of each block of the residual vector, in _residual_task's order."""
    blocks = []
    for r in recs:
        blocks.append(r.theta_rad.shape)
        if r.contact:
            blocks.append(r.tip_force_N.shape)
    return blocks


def _split_rms(res: np.ndarray, recs: list[TrialRecording]) -> tuple[float, float]:
    k, ang, frc = 0, [], []
    for r in recs:
        n = r.theta_rad.size
        ang.append(res[k:k + n])
        k += n
        if r.contact:
            frc.append(res[k:k + r.tip_force_N.size])
            k += r.tip_force_N.size
    a = np.concatenate(ang) * np.degrees(ANGLE_SCALE_RAD)
    f = np.concatenate(frc) * FORCE_SCALE_N if frc else np.zeros(1)
    return float(np.sqrt(np.mean(a * a))), float(np.sqrt(np.mean(f * f)))


# ---------------------------------------------------------------- recordings from the twin plant
def record_trial_on_plant(plant_factory, trial, settle_s: float = 1.0, sample_s: float = 0.02) -> TrialRecording:
    """Run one sim.scenarios.Trial on a fresh twin plant (``plant_factory(pose, surface_angle_deg)``) and
    record what the rig would: servo excursions, joint angles, tendon tensions and the fingertip force."""
    from uartlab.sim.inputs import excursions_at, sigmoid_inputs
    from uartlab.sim.names import TENDONS

    plant = plant_factory(trial.pose, trial.surface_angle_deg if trial.kind == "contact" else None)
    radii = np.array([s.spool_radius_m for s in plant.config.seas])
    for s in range(len(TENDONS)):
        plant.set_torque(s, True)
    inp = sigmoid_inputs(list(trial.pulls))
    end = max(p.end_s for p in trial.pulls) + settle_s
    x0 = plant.state()
    T, E, Q, W = [], [], [], []
    t = 0.0
    for _ in range(int(round(end / sample_s)) + 1):
        goal = excursions_at(inp, t)[0] / radii
        for s in range(6):
            plant.set_goal_angle(s, goal[s])
        T.append(t)
        E.append([plant.servo_state(s).angle_rad * radii[s] for s in range(6)])
        Q.append(plant.state()[8:12])
        wrench = plant.sensor_wrench()
        W.append(-plant.surface.frame @ wrench[:3] if plant.surface is not None else np.zeros(3))
        plant.advance(sample_s)
        t += sample_s
    return TrialRecording(trial.name, np.array(T), np.array(E), np.array(Q), np.array(W), x0[8:12].copy(),
                          x0[12:18].copy(), plant.surface)


def record_values(fit: ModelFit) -> tuple[dict, dict]:
    """The store's ``model`` record. Only determined parameters go under ``fitted`` (what
    calibration/applied.py applies); one the trials could not determine keeps its start value in use and
    is listed under ``not_determined`` with the value the fit wandered to."""
    loose = fit.undetermined
    determined = {n: v for n, v in fit.values.items() if n not in loose}
    in_use = set_params(fit.params, {n: fit.start[n] for n in loose})
    values = {"fitted": determined, "start": fit.start, "not_determined": {n: fit.values[n] for n in loose},
              "params_toml": in_use.to_toml()}
    residuals = {"rms_angle_deg": fit.rms_angle_deg, "rms_force_N": fit.rms_force_N,
                 "rms_angle_deg_start": fit.rms_angle_deg_start, "rms_force_N_start": fit.rms_force_N_start,
                 "cost_start": fit.cost_start, "cost": fit.cost, "std_log_factor": fit.std_factor,
                 "simulations": fit.simulations}
    if fit.uncertainty is not None:
        u = fit.uncertainty
        residuals |= {"residual_variance": u.s2, "residual_lag1_autocorrelation": u.rho,
                      "sigma_inflation": float(np.sqrt(u.inflation)),
                      "correlation": {f"{a}~{b}": r for a, b, r in fit.correlated_pairs}}
    return values, residuals


def report_lines(fit: ModelFit, truth: FingerParams | None = None) -> list[str]:
    """The fit as the CLI prints it: start, fitted, 1-sigma per parameter (and the truth on the twin), RMS
    before and after, and what the data do not determine."""
    head = f"{'parameter':10} {'start':>12} {'fitted':>12}" + (f" {'twin truth':>12}" if truth else "")
    lines = [head + f" {'1-sigma':>8}"]
    for n in fit.names:
        true = f" {get_param(truth, n):12.5g}" if truth else ""
        lines.append(f"{n:10} {fit.start[n]:12.5g} {fit.values[n]:12.5g}{true} {fit.std_factor[n] * 100:7.2f}%")
    lines.append(f"rms angle {fit.rms_angle_deg_start:.3f} -> {fit.rms_angle_deg:.3f} deg, rms force "
                 f"{fit.rms_force_N_start * 1e3:.2f} -> {fit.rms_force_N * 1e3:.2f} mN, {fit.simulations} simulations")
    if fit.uncertainty is not None:
        u = fit.uncertainty
        lines.append(f"1-sigma: noise along the trials (residual variance {u.s2:.3g} per 1 deg / 10 mN, widened "
                     f"x{np.sqrt(u.inflation):.2f} for its autocorrelation, lag-1 {u.rho:.2f}); not in it: errors "
                     "of the measured start state, sensor calibration or the model itself")
    for a, b, r in fit.correlated_pairs:
        lines.append(f"{a} and {b} are correlated {r:+.3f}: these trials determine mainly their combination")
    for n in fit.undetermined:
        why = "stopped at the search limit" if n in fit.at_bound else f"1-sigma {fit.std_factor[n] * 100:.0f} %"
        lines.append(f"{n} is not determined by these trials ({why}): not written, its start value stays in use")
    return lines
