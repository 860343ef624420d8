"""The formulas of the paper's Tables 4-6, on plain arrays.

Our reading of the paper, where it leaves room:

- Tables 4 and 5, "steady-state mean absolute joint angle error [...] and the standard deviation (SD)":
  one simulation per tendon-loading trial (from the repeats' average initial state), compared with each of
  the n repeats' measured steady angles:  MAE_j = (1/n) sum_k |theta_exp,k,j - theta_sim,j|.
  The SD in parenthesis is "the SD of each experimental trial" (Table 5's text; Table 4's "SD of the error"
  is the same number when the error is signed, since theta_sim is one value): the sample SD (n - 1) of the
  measured steady angles over the repeats. NaN with a single repeat.
- Table 6, "F_exp - F_sim, Mean (SD)" per axis X, Y, Z: the mean over repeats of the signed difference and its
  sample SD (= the SD of the measured force). The force vector errors use "the average measured fingertip
  force" F_exp = mean_k F_exp,k:
    footnote b:  ||F||_err = | (||F_exp|| - ||F_sim||) / ||F_exp|| |          (reported in %)
    footnote c:  phi_err  = arccos( F_sim . F_exp / (||F_exp|| ||F_sim||) )   (deg)
- "The mean absolute error across all trials" and "the average force magnitude [direction] error across all
  trials": plain means of the per-trial values.
"""

from __future__ import annotations

import numpy as np


def sample_sd(values: np.ndarray, axis: int = 0) -> np.ndarray:
    """Sample SD (n - 1) along axis; NaN when there is only one value."""
    values = np.asarray(values, dtype=float)
    if values.shape[axis] < 2:
        return np.full(np.delete(values.shape, axis), np.nan)
    return np.std(values, axis=axis, ddof=1)


def joint_angle_errors(measured: np.ndarray, simulated: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Tables 4-5: (mean absolute error (4,), SD of the measured angles (4,)) from the repeats' measured steady
    angles (n, 4) and the simulated steady angles (4,). Units are the caller's (deg in the tables)."""
    measured = np.atleast_2d(np.asarray(measured, dtype=float))
    return np.mean(np.abs(measured - np.asarray(simulated, dtype=float)), axis=0), sample_sd(measured)


def magnitude_error(f_exp: np.ndarray, f_sim: np.ndarray) -> float:
    """Table 6 footnote b, as a fraction (x 100 for %). NaN when the measured force is zero."""
    m_exp, m_sim = float(np.linalg.norm(f_exp)), float(np.linalg.norm(f_sim))
    return abs((m_exp - m_sim) / m_exp) if m_exp > 0 else float("nan")


def direction_error_deg(f_exp: np.ndarray, f_sim: np.ndarray) -> float:
    """Table 6 footnote c in degrees. NaN when either force is zero (no direction)."""
    m_exp, m_sim = float(np.linalg.norm(f_exp)), float(np.linalg.norm(f_sim))
    if not (m_exp > 0 and m_sim > 0):
        return float("nan")
    cos = float(np.dot(f_sim, f_exp)) / (m_exp * m_sim)
    return float(np.degrees(np.arccos(np.clip(cos, -1.0, 1.0))))


def force_errors(measured: np.ndarray, simulated: np.ndarray) -> dict:
    """Table 6 for one trial from the repeats' measured steady forces (n, 3) and the simulated force (3,):
    ``mean_N`` (3,) and ``sd_N`` (3,) of F_exp,k - F_sim; ``magnitude_pct`` and ``direction_deg`` on the average
    measured force; ``average_exp_N`` (3,)."""
    measured = np.atleast_2d(np.asarray(measured, dtype=float))
    simulated = np.asarray(simulated, dtype=float)
    diff = measured - simulated
    average = measured.mean(axis=0)
    return {"mean_N": diff.mean(axis=0), "sd_N": sample_sd(diff), "average_exp_N": average,
            "magnitude_pct": 100.0 * magnitude_error(average, simulated),
            "direction_deg": direction_error_deg(average, simulated)}


def rms(a: np.ndarray, axis: int = 0) -> np.ndarray:
    return np.sqrt(np.nanmean(np.square(a), axis=axis))
