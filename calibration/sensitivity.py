"""How much each model parameter moves each trial's steady state: which ones an identification must pin down.

Every parameter is a factor on its value in the set given (the defaults, or a lab's file); each trial runs the
paper's way (``sim.scenarios.run_trial``: the start pose held by its pretensions, the pulls, to steady state)
and its outputs are the steady joint angles (deg) and, in contact, the fingertip force's magnitude (N).

- **Local, one at a time**: each factor at 1 - f and 1 + f with the others at 1: the change of every output
  (``LocalEffects``). Cheap (2 simulations per parameter and trial) and exact about the neighbourhood; blind to
  interactions and to non-linearity farther out.
- **Global, variance-based** (Sobol, with SALib's Saltelli sampling and estimator): all factors drawn in
  [1 - f, 1 + f] together, N (D + 2) parameter sets for D parameters; per output, the first-order index S1
  (the share of the output's variance a parameter explains alone) and the total index ST (with all its
  interactions). A parameter with ST near 0 on every output can be left at its value; one with a large ST the
  data must determine.

The simulations run on any concurrent.futures.Executor (calibration/executors.py: local processes or a dask
cluster); each task is one parameter set on every trial.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass

import numpy as np
from uartlab.calibration.executors import run_tasks
from uartlab.errors import CalibrationError
from uartlab.sim import Finger, FingerParams
from uartlab.sim.errors import SimulationDiverged
from uartlab.sim.names import JOINTS, MOMENT_ARM_GROUPS
from uartlab.sim.scenarios import Trial, run_trial

OUTPUTS = (*(f"{j} [deg]" for j in JOINTS), "|F| [N]")


def _scale(field: str) -> Callable[[FingerParams, float], FingerParams]:
    return lambda p, f: dataclasses.replace(p, **{field: getattr(p, field) * f})


def _scale_contact(field: str) -> Callable[[FingerParams, float], FingerParams]:
    def scale(p: FingerParams, f: float) -> FingerParams:
        return dataclasses.replace(p, contact=dataclasses.replace(p.contact, **{field: getattr(p.contact, field) * f}))
    return scale


def _scale_arms(group: int) -> Callable[[FingerParams, float], FingerParams]:
    def scale(p: FingerParams, f: float) -> FingerParams:
        coeffs = p.moment_arm_coeffs.copy()
        coeffs[group] *= f
        forms = {k: form.scaled(f) if k[0] == MOMENT_ARM_GROUPS[group] else form
                 for k, form in p.moment_arm_forms.items()}
        return dataclasses.replace(p, moment_arm_coeffs=coeffs, moment_arm_forms=forms)
    return scale


# name -> how a factor applies to it. Moment arms scale a group's whole curve (every joint it crosses, in
# whichever form the parameters give it: polynomial, surface or table).
PARAMETERS: dict[str, Callable[[FingerParams, float], FingerParams]] = {
    "input_stiffness": _scale("input_stiffness_N_per_m"),
    "em_stiffness": _scale("em_stiffness_N_per_m"),
    "em_mass": _scale("em_mass_kg"),
    "joint_damping": _scale("joint_damping_Nms_per_rad"),
    "coulomb": _scale("coulomb_coefficient_m"),
    "bone_mass": _scale("bone_mass_kg"),
    "contact_a": _scale_contact("a_N"),
    "contact_b": _scale_contact("b"),
    "contact_Kx": _scale_contact("Kx_N_per_m"),
    "contact_Ky": _scale_contact("Ky_N_per_m"),
    "contact_mu_x": _scale_contact("mu_x"),
    "contact_mu_y": _scale_contact("mu_y"),
    **{f"arms_{g}": _scale_arms(i) for i, g in enumerate(MOMENT_ARM_GROUPS)},
}
CONTACT_ONLY = tuple(n for n in PARAMETERS if n.startswith("contact_"))


def with_factors(params: FingerParams, factors: dict[str, float]) -> FingerParams:
    for name, factor in factors.items():
        params = PARAMETERS[name](params, float(factor))
    return params


def steady_outputs(params: FingerParams, trials: list[Trial]) -> np.ndarray:
    """(trials, OUTPUTS): steady joint angles (deg) and contact force magnitude (N, NaN in free motion);
    NaN throughout for a trial whose simulation diverged or did not settle."""
    finger = Finger(params)
    out = np.full((len(trials), len(OUTPUTS)), np.nan)
    for k, trial in enumerate(trials):
        try:
            result = run_trial(finger, trial)
        except SimulationDiverged:
            continue
        if not result.settled:
            continue
        out[k, :4] = np.degrees(result.x[-1, 8:12])
        if trial.kind == "contact":
            out[k, 4] = float(np.linalg.norm(result.fingertip_force_N()[-1]))
    return out


def _task(task) -> np.ndarray:
    """One parameter set on every trial (module level: process and dask workers run it)."""
    params, names, row, trials = task
    return steady_outputs(with_factors(params, dict(zip(names, row, strict=True))), trials)


def _evaluate(params, names, rows, trials, executor: Executor | None, on_progress) -> np.ndarray:
    """(rows, trials, OUTPUTS) for every row of factors, in order."""
    tasks = [(params, tuple(names), tuple(float(v) for v in row), trials) for row in rows]
    finished = [0]

    def done() -> None:
        finished[0] += 1
        if on_progress is not None:
            on_progress(finished[0], len(tasks))

    return np.stack(run_tasks(_task, tasks, executor, done))


@dataclass
class LocalEffects:
    names: tuple[str, ...]
    trials: tuple[str, ...]
    fraction: float
    base: np.ndarray    # (trials, OUTPUTS) at the set given
    minus: np.ndarray   # (names, trials, OUTPUTS): change with the factor at 1 - fraction
    plus: np.ndarray    # (names, trials, OUTPUTS): change with the factor at 1 + fraction

    def largest(self, name: str) -> tuple[float, str, str]:
        """(largest |change| in degrees of any joint angle, the trial, the joint) for one parameter."""
        i = self.names.index(name)
        angles = np.fmax(np.abs(self.minus[i, :, :4]), np.abs(self.plus[i, :, :4]))
        if not np.isfinite(angles).any():
            return float("nan"), "", ""
        k, j = np.unravel_index(np.nanargmax(angles), angles.shape)
        return float(angles[k, j]), self.trials[k], JOINTS[j]


@dataclass
class SobolIndices:
    names: tuple[str, ...]
    trials: tuple[str, ...]
    fraction: float
    samples: int        # N: parameter sets = N (D + 2)
    S1: np.ndarray      # (names, trials, OUTPUTS); NaN where the output did not vary or a run failed
    S1_conf: np.ndarray
    ST: np.ndarray
    ST_conf: np.ndarray
    failed_runs: int


def check(names: list[str], fraction: float) -> None:
    unknown = [n for n in names if n not in PARAMETERS]
    if unknown or not names:
        raise CalibrationError("sensitivity", f"unknown parameter(s) {unknown or '(none given)'}; choose from "
                                              f"{', '.join(PARAMETERS)}")
    if not 0.0 < fraction < 1.0:
        raise CalibrationError("sensitivity", f"the fraction must be between 0 and 1, got {fraction:g}")


def local_effects(params: FingerParams, trials: list[Trial], names: list[str], fraction: float = 0.15,
                  executor: Executor | None = None, on_progress=None) -> LocalEffects:
    check(names, fraction)
    rows = [np.ones(len(names))]
    for i in range(len(names)):
        for factor in (1.0 - fraction, 1.0 + fraction):
            row = np.ones(len(names))
            row[i] = factor
            rows.append(row)
    out = _evaluate(params, names, rows, trials, executor, on_progress)
    base = out[0]
    return LocalEffects(tuple(names), tuple(t.name for t in trials), fraction, base,
                        out[1::2] - base, out[2::2] - base)


def sobol_indices(params: FingerParams, trials: list[Trial], names: list[str], fraction: float = 0.15,
                  samples: int = 32, seed: int = 0, executor: Executor | None = None,
                  on_progress=None) -> SobolIndices:
    from SALib.analyze import sobol as analyze
    from SALib.sample import sobol as sample

    check(names, fraction)
    if samples < 2 or samples & (samples - 1):
        raise CalibrationError("sensitivity", f"--samples must be a power of two >= 2 (Sobol sequences), "
                                              f"got {samples}")
    problem = {"num_vars": len(names), "names": list(names), "bounds": [[1.0 - fraction, 1.0 + fraction]] * len(names)}
    rows = sample.sample(problem, samples, calc_second_order=False, seed=seed)
    out = _evaluate(params, names, rows, trials, executor, on_progress)   # (rows, trials, OUTPUTS)
    shape = (len(names), len(trials), len(OUTPUTS))
    S1, S1c, ST, STc = (np.full(shape, np.nan) for _ in range(4))
    failed = np.isnan(out[:, :, :4]).any(axis=2)   # a run that diverged or never settled
    for k in range(len(trials)):
        for o in range(len(OUTPUTS)):
            y = out[:, k, o]
            if np.isnan(y).any() or np.ptp(y) == 0.0:
                continue
            r = analyze.analyze(problem, y, calc_second_order=False, seed=seed)
            S1[:, k, o], S1c[:, k, o], ST[:, k, o], STc[:, k, o] = r["S1"], r["S1_conf"], r["ST"], r["ST_conf"]
    return SobolIndices(tuple(names), tuple(t.name for t in trials), fraction, samples, S1, S1c, ST, STc,
                        int(failed.any(axis=1).sum()))
