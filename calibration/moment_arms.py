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

The same fit gives a table (``form="table"``, sim/moment_arm_forms.py): r_T,j is then a sum of hat functions
on a grid of nodes every ``step`` over the range swept (over both MCP angles for an MCP arm when both moved),
so each node's value is a coefficient and the integrated features stay linear. A small second-difference
penalty ties neighbouring nodes together, so a node the sweep barely reached follows its neighbours instead of
the noise. The nodes' values are written as a CSV grid beside the model's parameters.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from uartlab.errors import CalibrationError
from uartlab.sim.moment_arm_forms import MCP_AXES, ArmTable, table_file
from uartlab.sim.names import (
    ARM_FORMS,
    EM_TENDONS,
    GROUP_JOINTS,
    JOINTS,
    MCP_FE,
    MOMENT_ARM_GROUPS,
    TENDONS,
    tendon_index,
)
from uartlab.sim.params import N_COEFFS, FingerParams

MIN_SAMPLES = 50
# Range of a joint in the sweep below which its moment arm is fitted with fewer coefficients (est.: a
# polynomial's higher terms are not determined over a short range with 0.5 deg IK noise).
DEGREE_RANGE_RAD = (np.radians(8.0), np.radians(30.0))  # < 8 deg: constant; < 30 deg: linear; else quadratic
MIN_RANGE_RAD = np.radians(2.0)  # a crossed joint must move at least this much for any estimate
MAX_RMS_M = 0.5e-3               # est.: path-length residual beyond this means slack or a bad angle stream
TABLE_STEP_RAD = np.radians(10.0)  # a table's node spacing (the ACT grids' 10 deg)
# est.: the second-difference penalty's weight against the path's (normalised) features. On the twin's sweep
# (arms perturbed by up to 15 %), 0.02 let the intrinsics' 2-D grids swing 1-2 mm off; 1.0 and 5.0 both kept
# every curve within 0.55 mm RMS of the truth.
TABLE_SMOOTHING = 1.0


@dataclass
class MomentArmFit:
    tendon: str
    coeffs_m: dict[str, np.ndarray]     # joint -> (3,) polynomial coefficients (m, m/rad, m/rad^2)
    cos_fe: dict[str, bool]
    ranges_rad: dict[str, tuple[float, float]]
    rms_m: float                        # path-length residual
    n_samples: int
    nuisance: dict[str, np.ndarray] = field(default_factory=dict)
    tables: dict[str, ArmTable] = field(default_factory=dict)   # joint -> the table (form "table")

    def moment_arm(self, joint: str, theta: np.ndarray) -> np.ndarray:
        """r (m) at joint angles theta (..., 4)."""
        th = np.atleast_2d(theta)
        if joint in self.tables:
            patches = self.tables[joint].patches()
            return np.array([patches(t)[0] for t in th])
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


def _hats(x: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """(n, len(nodes)) piecewise-linear hat functions at x (held to the nodes' range): they sum to 1."""
    x = np.clip(x, nodes[0], nodes[-1])
    i = np.clip(np.searchsorted(nodes, x, side="right") - 1, 0, len(nodes) - 2)
    w = (x - nodes[i]) / (nodes[i + 1] - nodes[i])
    out = np.zeros((x.size, len(nodes)))
    out[np.arange(x.size), i] = 1.0 - w
    out[np.arange(x.size), i + 1] = w
    return out


def _table_features(theta: np.ndarray, j: int, axes: tuple[int, ...], nodes: tuple[np.ndarray, ...]) -> np.ndarray:
    """(n, nodes) cumulative integrals of each node's hat (tensor product over ``axes``) d theta_j along the path."""
    phi = _hats(theta[:, axes[0]], nodes[0])
    if len(axes) > 1:
        phi = (phi[:, :, None] * _hats(theta[:, axes[1]], nodes[1])[:, None, :]).reshape(len(theta), -1)
    d = np.diff(theta[:, j])
    return np.vstack([np.zeros(phi.shape[1]), np.cumsum(0.5 * (phi[1:] + phi[:-1]) * d[:, None], axis=0)])


def _second_differences(shape: tuple[int, ...]) -> np.ndarray:
    """Rows of second differences of a grid of node values (raveled), along each of its axes; an axis of two
    nodes (a range too short to say anything of the slope) gets their first difference: held level."""
    rows = []
    index = np.arange(int(np.prod(shape))).reshape(shape)
    for axis in range(len(shape)):
        lines = np.moveaxis(index, axis, -1).reshape(-1, shape[axis])
        for line in lines:
            if len(line) == 2:
                row = np.zeros(index.size)
                row[line] = (1.0, -1.0)
                rows.append(row)
            for k in range(len(line) - 2):
                row = np.zeros(index.size)
                row[line[k:k + 3]] = (1.0, -2.0, 1.0)
                rows.append(row)
    return np.array(rows).reshape(-1, index.size)


def _table_grid(theta: np.ndarray, joint: str, step_rad: float) -> tuple[tuple[int, ...], tuple[np.ndarray, ...]]:
    """The axes and nodes of a table fitted to the sweep: both MCP angles for an MCP arm when both moved
    more than a constant's range, else the joint's own; nodes every ``step_rad`` over the range swept."""
    axes = MCP_AXES if joint in MCP_AXES else (joint,)
    idx = tuple(JOINTS.index(a) for a in axes)
    if len(idx) > 1 and min(np.ptp(theta[:, i]) for i in idx) < DEGREE_RANGE_RAD[0]:
        idx = (JOINTS.index(joint),)

    def nodes(i: int) -> np.ndarray:
        lo, hi = float(theta[:, i].min()), float(theta[:, i].max())
        if hi - lo < DEGREE_RANGE_RAD[0]:
            return np.array([lo, hi])
        return np.linspace(lo, hi, max(2, int(np.ceil((hi - lo) / step_rad)) + 1))

    return idx, tuple(nodes(i) for i in idx)


@dataclass(frozen=True)
class _Polynomial:
    """A curve of the fit: the polynomial form's coefficients (``degree`` + 1 of them)."""
    joint: str
    degree: int
    cos_fe: bool

    @property
    def width(self) -> int:
        return self.degree + 1


@dataclass(frozen=True)
class _Grid:
    """A curve of the fit: a table's node values over ``axes`` (joint indices)."""
    joint: str
    axes: tuple[int, ...]
    nodes: tuple[np.ndarray, ...]

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(len(n) for n in self.nodes)

    @property
    def width(self) -> int:
        return int(np.prod(self.shape))


def _degree(span: float) -> int:
    return 0 if span < DEGREE_RANGE_RAD[0] else 1 if span < DEGREE_RANGE_RAD[1] else N_COEFFS - 1


def fit_moment_arms(tendon: str, theta_rad: np.ndarray, path_m: np.ndarray, cos_fe: dict[str, bool] | None = None,
                    taut: np.ndarray | None = None, max_rms_m: float = MAX_RMS_M, form: str = "polynomial",
                    step_rad: float = TABLE_STEP_RAD) -> MomentArmFit:
    """Fit one tendon's moment arms from joint angles (n, 4) and its path length (n,) along a slow sweep.
    ``taut`` (n,) marks the samples where the tendon carried force: the features are integrated along the
    whole path, but only taut samples measure the path length (a slack tendon's excursion is not its path).
    ``form``: the model's polynomial, or a table with nodes every ``step_rad``."""
    where = f"tendon {tendon}"
    if form not in ARM_FORMS:
        raise CalibrationError("moment-arms", f"unknown form {form!r}; expected one of {', '.join(ARM_FORMS)}",
                               where)
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
    cols, ranges = [intercepts], {}
    layout: list[_Polynomial | _Grid] = []
    for joint in crossed + nuisance:
        j = JOINTS.index(joint)
        span = float(np.ptp(theta[keep, j]))
        ranges[joint] = (float(theta[keep, j].min()), float(theta[keep, j].max()))
        if span < MIN_RANGE_RAD:
            if joint in nuisance:
                continue
            raise CalibrationError("moment-arms", f"{joint} moved only {np.degrees(span):.1f} deg in the sweep; "
                                                  f"need at least {np.degrees(MIN_RANGE_RAD):.0f} deg", where)
        entry: _Polynomial | _Grid
        if form == "table" and joint not in nuisance:
            entry = _Grid(joint, *_table_grid(theta[keep], joint, step_rad))
            cols.append(_table_features(theta, j, entry.axes, entry.nodes))
        else:
            entry = _Polynomial(joint, _degree(span), bool(cos_fe.get(joint, False)))
            cols.append(_features(theta, j, entry.degree, entry.cos_fe))
        layout.append(entry)
    A, l = np.hstack(cols)[keep], l[keep]
    scale = np.linalg.norm(A, axis=0)
    scale[scale == 0] = 1.0   # a node no taut sample reached: the penalty alone sets it
    penalty, k = [], runs.size
    for entry in layout:
        if isinstance(entry, _Grid):   # a table: its nodes' second differences
            D = _second_differences(entry.shape)
            block = np.zeros((D.shape[0], A.shape[1]))
            block[:, k:k + entry.width] = D * TABLE_SMOOTHING * scale[k:k + entry.width].mean()
            penalty.append(block)
        k += entry.width
    A_fit = np.vstack([A, *penalty]) if penalty else A
    l_fit = np.concatenate([l, np.zeros(A_fit.shape[0] - A.shape[0])])
    sol, *_ = np.linalg.lstsq(A_fit / scale, l_fit, rcond=None)
    sol = sol / scale
    if not np.all(np.isfinite(sol)):
        raise CalibrationError("moment-arms", "the least-squares fit did not converge (non-finite coefficients)", where)
    rms = float(np.sqrt(np.mean((A @ sol - l) ** 2)))   # the data's residual, without the penalty
    if rms > max_rms_m:
        raise CalibrationError("moment-arms", f"path-length residual {rms * 1e3:.2f} mm exceeds "
                                              f"{max_rms_m * 1e3:.2f} mm: was the tendon slack, or the angles wrong?",
                               where)
    coeffs: dict[str, np.ndarray] = {}
    flags: dict[str, bool] = {}
    extra: dict[str, np.ndarray] = {}
    tables: dict[str, ArmTable] = {}
    k = runs.size
    for entry in layout:
        values, k = sol[k:k + entry.width], k + entry.width
        joint = entry.joint
        if isinstance(entry, _Grid):
            tables[joint] = ArmTable(tuple(JOINTS[a] for a in entry.axes), entry.nodes, values.reshape(entry.shape),
                                     file=table_file(tendon, joint),
                                     comment=f"# {tendon} about {joint}: ACT sweep, {l.size} taut samples, "
                                             f"path residual {rms * 1e3:.3f} mm RMS")
            continue
        c = np.zeros(N_COEFFS)
        c[:entry.width] = values
        if joint in crossed:
            coeffs[joint], flags[joint] = c, entry.cos_fe
        else:
            extra[joint] = c
    return MomentArmFit(tendon, coeffs, flags, ranges, rms, int(l.size), extra, tables)


def with_moment_arms(params: FingerParams, fits: list[MomentArmFit]) -> FingerParams:
    """``params`` with the fitted tendon/joint moment arms written in (the others unchanged)."""
    coeffs = params.moment_arm_coeffs.copy()
    cos_fe = params.moment_arm_cos_fe.copy()
    forms = dict(params.moment_arm_forms)
    for f in fits:
        g = MOMENT_ARM_GROUPS.index(f.tendon)
        for joint, c in f.coeffs_m.items():
            coeffs[g, JOINTS.index(joint)] = c
            cos_fe[g, JOINTS.index(joint)] = f.cos_fe[joint]
            forms.pop((f.tendon, joint), None)
        for joint, table in f.tables.items():
            forms[f.tendon, joint] = table
    return params.replace(moment_arm_coeffs=coeffs, moment_arm_cos_fe=cos_fe, moment_arm_forms=forms)


def curve_error_m(fit: MomentArmFit, params: FingerParams, theta_rad: np.ndarray) -> dict[str, float]:
    """RMS difference (m) between the fitted and ``params``' moment arms over the poses ``theta_rad`` visited."""
    out = {}
    for joint in [*fit.coeffs_m, *fit.tables]:
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
    """Values in the model's own TOML form ([moment_arms.<tendon>] <JOINT>_mm = [c0, c1, c2]); a table is kept
    inline (<JOINT>_table = {<axis>_deg = [...], r_mm = [...]}) and written as CSV beside the parameters that
    use it (calibration/applied.py)."""
    def table(t: ArmTable) -> dict:
        return {**{f"{a}_deg": np.degrees(n).tolist() for a, n in zip(t.axes, t.nodes_rad, strict=True)},
                "r_mm": (t.values_m * 1e3).tolist()}

    values = {"moment_arms": {f.tendon: {**{f"{j}_mm": c * 1e3 for j, c in f.coeffs_m.items()},
                                         **{f"{j}_times_cos_MCP_FE": True for j, v in f.cos_fe.items() if v},
                                         **{f"{j}_table": table(t) for j, t in f.tables.items()}}
                              for f in fits}}
    residuals = {f.tendon: {"path_rms_mm": f.rms_m * 1e3, "n_samples": f.n_samples,
                            "range_deg": {j: list(np.degrees(r)) for j, r in f.ranges_rad.items()}} for f in fits}
    return values, residuals


def stored_table(tendon: str, joint: str, value: dict) -> ArmTable:
    """The ArmTable of a stored ``<joint>_table`` value (``record_values``)."""
    axes = tuple(k.removesuffix("_deg") for k in value if k.endswith("_deg"))
    return ArmTable(axes, tuple(np.radians(np.asarray(value[f"{a}_deg"], float)) for a in axes),
                    np.asarray(value["r_mm"], float) * 1e-3, file=table_file(tendon, joint),
                    comment=f"# {tendon} about {joint}: ACT sweep (uartlab calibrate moment-arms --form table)")


def fit_tendons(order: tuple[str, ...], theta_rad: np.ndarray, paths_m: np.ndarray, force_N: np.ndarray,
                nominal: FingerParams, form: str = "polynomial",
                truth: FingerParams | None = None) -> tuple[list[MomentArmFit], list[str]]:
    """Each tendon of ``order`` fitted from its column of ``paths_m`` (n, 6), taut where it carried force; the
    polynomial form keeps ``nominal``'s cos(MCP_FE) flags. Returns the fits and a table of lines for the
    operator (with each curve's RMS error against ``truth``, a twin's own parameters, when given)."""
    head = "coefficients [mm, mm/rad, mm/rad^2]" if form == "polynomial" else "table [nodes; r range, mm]"
    lines = [f"{'tendon':6} {'joint':6} {head:<48}" + (f" {'rms err vs twin [mm]':>21}" if truth is not None else "")]
    fits = []
    for i, t in enumerate(TENDONS):
        if t not in order:
            continue
        g = MOMENT_ARM_GROUPS.index(t)
        flags = {j: bool(nominal.moment_arm_cos_fe[g, JOINTS.index(j)]) for j in GROUP_JOINTS[t]}
        f = fit_moment_arms(t, theta_rad, paths_m[:, i], flags, taut=force_N[:, i] > 0.1, form=form)
        fits.append(f)
        err = curve_error_m(f, truth, theta_rad) if truth is not None else {}
        for j in GROUP_JOINTS[t]:
            if j in f.tables:
                tab = f.tables[j]
                shown = (f"{' x '.join(str(len(n)) for n in tab.nodes_rad)} over {' x '.join(tab.axes)}; "
                         f"{tab.values_m.min() * 1e3:.2f} to {tab.values_m.max() * 1e3:.2f}")
            else:
                shown = str(np.round(f.coeffs_m[j] * 1e3, 3).tolist())
            lines.append(f"{t:6} {j:6} {shown:<48}" + (f" {err[j] * 1e3:21.3f}" if j in err else ""))
    return fits, lines
