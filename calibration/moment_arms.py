"""Moment arms by the ACT method: slow sweeps, tendon excursion against joint angles, smooth r_T,j(theta).

The ACT's (and the paper's) principle of virtual work: a tendon's path length changes by
    d l_T = sum_j r_T,j(theta) d theta_j
so the moment arm is the excursion per joint rotation. At the rig the joints are moved slowly through
their range (here by the tendons themselves, each SEA holding a slowly varying tension so that every
tendon stays taut), the joint angles come from the mocap IK and each tendon's path length from its servo
and its SEA: l_T = excursion - F_T / k_T (the spring's stretch is not path).

Fit (pure, ``fit_moment_arms``): with the model's form r_T,j = (c0 + c1 theta_j + c2 theta_j^2)
[x cos theta_MCP_FE for the flagged pairs] (sim/params.py, data/uart.toml), l_T(t) - l_T(0) is linear in
the coefficients: l_T(t) = b + sum_jp c_jp G_jp(t) with G_jp(t) = integral of theta_j^p [cos theta_FE]
d theta_j along the measured path (trapezoids). Integrating the features instead of differentiating the
excursion keeps the noise where it is small. The polynomial degree per joint follows the range the sweep
covered (a joint that barely moved gets a constant). Tendons that insert into the extensor mechanism also
pull the EM junctions, which move with PIP and DIP: their PIP/DIP terms are fitted as nuisance terms and
not written (the model's EM moment arms belong to the EM segments).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from uartlab.errors import CalibrationError
from uartlab.sim.names import EM_TENDONS, GROUP_JOINTS, JOINTS, MCP_FE, MOMENT_ARM_GROUPS, TENDONS, tendon_index
from uartlab.sim.params import N_COEFFS, FingerParams

MIN_SAMPLES = 50
# Range of a joint in the sweep below which its moment arm is fitted with fewer coefficients (est.: a
# polynomial's higher terms are not determined over a short range with 0.5 deg IK noise).
DEGREE_RANGE_RAD = (np.radians(8.0), np.radians(30.0))  # < 8 deg: constant; < 30 deg: linear; else quadratic
MIN_RANGE_RAD = np.radians(2.0)  # a crossed joint must move at least this much for any estimate
MAX_RMS_M = 0.5e-3               # est.: path-length residual beyond this means slack or a bad angle stream


@dataclass
class MomentArmFit:
    tendon: str
    coeffs_m: dict[str, np.ndarray]     # joint -> (3,) polynomial coefficients (m, m/rad, m/rad^2)
    cos_fe: dict[str, bool]
    ranges_rad: dict[str, tuple[float, float]]
    rms_m: float                        # path-length residual
    n_samples: int
    nuisance: dict[str, np.ndarray] = field(default_factory=dict)

    def moment_arm(self, joint: str, theta: np.ndarray) -> np.ndarray:
        """r (m) at joint angles theta (..., 4)."""
        th = np.atleast_2d(theta)
        j = JOINTS.index(joint)
        r = np.polyval(self.coeffs_m[joint][::-1], th[:, j])
        return r * np.cos(th[:, MCP_FE]) if self.cos_fe[joint] else r


def _features(theta: np.ndarray, j: int, degree: int, cos_fe: bool) -> np.ndarray:
    """(n, degree + 1) cumulative integrals of theta_j^p [cos theta_FE] d theta_j along the path."""
    th = theta[:, j]
    d = np.diff(th)
    cols = []
    for p in range(degree + 1):
        f = th ** p * (np.cos(theta[:, MCP_FE]) if cos_fe else 1.0)
        cols.append(np.concatenate([[0.0], np.cumsum(0.5 * (f[1:] + f[:-1]) * d)]))
    return np.stack(cols, axis=1)


def _degree(span: float) -> int:
    return 0 if span < DEGREE_RANGE_RAD[0] else 1 if span < DEGREE_RANGE_RAD[1] else N_COEFFS - 1


def fit_moment_arms(tendon: str, theta_rad: np.ndarray, path_m: np.ndarray, cos_fe: dict[str, bool] | None = None,
                    taut: np.ndarray | None = None, max_rms_m: float = MAX_RMS_M) -> MomentArmFit:
    """Fit one tendon's moment arms from joint angles (n, 4) and its path length (n,) along a slow sweep.
    ``taut`` (n,) marks the samples where the tendon carried force: the features are integrated along the
    whole path, but only taut samples measure the path length (a slack tendon's excursion is not its path)."""
    where = f"tendon {tendon}"
    tendon = TENDONS[tendon_index(tendon)]
    theta, l = np.asarray(theta_rad, float), np.asarray(path_m, float).ravel()
    if theta.ndim != 2 or theta.shape[1] != 4 or theta.shape[0] != l.size:
        raise CalibrationError("moment-arms", f"need angles (n, 4) and path lengths (n,), got {theta.shape} and "
                                              f"{l.shape}", where)
    if not np.all(np.isfinite(theta)):
        raise CalibrationError("moment-arms", "joint angles missing (NaN) in the sweep: interpolate IK gaps first",
                               where)
    keep = np.isfinite(l) & (np.ones(l.size, bool) if taut is None else np.asarray(taut, bool).ravel())
    l = np.where(keep, l, 0.0)
    if np.count_nonzero(keep) < MIN_SAMPLES:
        raise CalibrationError("moment-arms", f"too few taut samples ({np.count_nonzero(keep)}; need at least "
                                              f"{MIN_SAMPLES})", where)
    cos_fe = cos_fe or {}
    crossed = GROUP_JOINTS[tendon]
    nuisance = ("PIP", "DIP") if tendon in EM_TENDONS else ()
    # One intercept per run of taut samples: while a tendon is slack its spring keeps no memory of the
    # path, so every re-tautening starts a new constant (SEG: the slack rule, eq. 13).
    run = np.cumsum(np.concatenate([[1], np.diff(keep.astype(int)) == 1]))
    runs = np.unique(run[keep])
    intercepts = (run[:, None] == runs[None, :]).astype(float)
    cols, layout, ranges = [intercepts], [], {}
    for joint in crossed + nuisance:
        j = JOINTS.index(joint)
        span = float(np.ptp(theta[keep, j]))
        ranges[joint] = (float(theta[keep, j].min()), float(theta[keep, j].max()))
        if span < MIN_RANGE_RAD:
            if joint in nuisance:
                continue
            raise CalibrationError("moment-arms", f"{joint} moved only {np.degrees(span):.1f} deg in the sweep; "
                                                  f"need at least {np.degrees(MIN_RANGE_RAD):.0f} deg", where)
        deg = _degree(span)
        flag = bool(cos_fe.get(joint, False))
        cols.append(_features(theta, j, deg, flag))
        layout.append((joint, deg, flag))
    A, l = np.hstack(cols)[keep], l[keep]
    scale = np.linalg.norm(A, axis=0)
    sol, *_ = np.linalg.lstsq(A / scale, l, rcond=None)
    sol = sol / scale
    if not np.all(np.isfinite(sol)):
        raise CalibrationError("moment-arms", "the least-squares fit did not converge (non-finite coefficients)", where)
    rms = float(np.sqrt(np.mean((A @ sol - l) ** 2)))
    if rms > max_rms_m:
        raise CalibrationError("moment-arms", f"path-length residual {rms * 1e3:.2f} mm exceeds "
                                              f"{max_rms_m * 1e3:.2f} mm: was the tendon slack, or the angles wrong?",
                               where)
    coeffs, flags, extra, k = {}, {}, {}, runs.size
    for joint, deg, flag in layout:
        c = np.zeros(N_COEFFS)
        c[:deg + 1] = sol[k:k + deg + 1]
        k += deg + 1
        if joint in crossed:
            coeffs[joint], flags[joint] = c, flag
        else:
            extra[joint] = c
    return MomentArmFit(tendon, coeffs, flags, ranges, rms, int(l.size), extra)


def with_moment_arms(params: FingerParams, fits: list[MomentArmFit]) -> FingerParams:
    """``params`` with the fitted tendon/joint moment arms written in (the others unchanged)."""
    coeffs = params.moment_arm_coeffs.copy()
    cos_fe = params.moment_arm_cos_fe.copy()
    for f in fits:
        g = MOMENT_ARM_GROUPS.index(f.tendon)
        for joint, c in f.coeffs_m.items():
            coeffs[g, JOINTS.index(joint)] = c
            cos_fe[g, JOINTS.index(joint)] = f.cos_fe[joint]
    return params.replace(moment_arm_coeffs=coeffs, moment_arm_cos_fe=cos_fe)


def curve_error_m(fit: MomentArmFit, params: FingerParams, theta_rad: np.ndarray) -> dict[str, float]:
    """RMS difference (m) between the fitted and ``params``' moment arms over the poses ``theta_rad`` visited."""
    out = {}
    for joint in fit.coeffs_m:
        truth = np.array([params.moment_arm(fit.tendon, joint, th) for th in theta_rad])
        out[joint] = float(np.sqrt(np.mean((fit.moment_arm(joint, theta_rad) - truth) ** 2)))
    return out


# ---------------------------------------------------------------- data collection on the twin plant
@dataclass
class SweepData:
    t_s: np.ndarray
    theta_rad: np.ndarray     # (n, 4) joint angles (from the markers by IK, or the plant's own)
    excursion_m: np.ndarray   # (n, 6) servo excursion
    force_N: np.ndarray       # (n, 6) SEA force

    def path_m(self, stiffness_N_per_m: np.ndarray) -> np.ndarray:
        """(n, 6) tendon path length (up to a constant): excursion less the SEA spring's stretch."""
        return self.excursion_m - self.force_N / np.asarray(stiffness_N_per_m)


def collect_sweep_on_plant(plant, calibrations, amplitude_m: float = 0.015, ramp_s: float = 4.0,
                           sample_s: float = 0.02, estimator=None, order: tuple[str, ...] = TENDONS,
                           on_progress=None) -> SweepData:
    """Slow sweeps on the twin: each tendon in turn reeled in by ``amplitude_m`` over ``ramp_s`` (a raised
    cosine) and let back out, the other servos holding, from wherever the last sweep left the finger.
    Angles come from ``estimator`` (a drivers.joint_angles.JointAngleEstimator on the markers) or, if None,
    from the plant. Forces come from the pots through ``calibrations``. ``on_progress(done, total)``: after
    each sweep."""
    radii = np.array([s.spool_radius_m for s in plant.config.seas])
    for s in range(6):
        plant.set_torque(s, True)
    goal = np.array([plant.servo_state(s).angle_rad for s in range(6)])
    T, Q, E, F = [], [], [], []
    t = 0.0
    n = int(round(ramp_s / sample_s))
    for done, name in enumerate(order, 1):
        i = tendon_index(name)
        base = goal[i]
        for k in range(2 * n):
            phase = k / n if k < n else 2 - k / n
            plant.set_goal_angle(i, base + amplitude_m / radii[i] * 0.5 * (1 - np.cos(np.pi * phase)))
            plant.advance(sample_s)
            t += sample_s
            block = plant.analog_block(4)
            T.append(t)
            E.append([plant.servo_state(s).angle_rad * radii[s] for s in range(6)])
            F.append([np.mean(c.force_N(block[:, s], block[:, 6])) for s, c in enumerate(calibrations)])
            Q.append(plant.state()[8:12] if estimator is None else estimator.estimate(plant.mocap_markers()).angles_rad)
        plant.set_goal_angle(i, base)
        if on_progress is not None:
            on_progress(done, len(order))
    return SweepData(np.array(T), np.array(Q), np.array(E), np.array(F))


def record_values(fits: list[MomentArmFit]) -> tuple[dict, dict]:
    """Values in the model's own TOML form ([moment_arms.<tendon>] <JOINT>_mm = [c0, c1, c2])."""
    values = {"moment_arms": {f.tendon: {**{f"{j}_mm": c * 1e3 for j, c in f.coeffs_m.items()},
                                         **{f"{j}_times_cos_MCP_FE": True for j, v in f.cos_fe.items() if v}}
                              for f in fits}}
    residuals = {f.tendon: {"path_rms_mm": f.rms_m * 1e3, "n_samples": f.n_samples,
                            "range_deg": {j: list(np.degrees(r)) for j, r in f.ranges_rad.items()}} for f in fits}
    return values, residuals
