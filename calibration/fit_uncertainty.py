"""How well a least-squares fit over recorded time series determines its parameters, stated honestly.

Linearised at the solution, Cov = s² (JᵀJ)⁻¹ with s² = 2·cost / (m − n), the residual variance per degree of
freedom (residuals are weighted per 1 deg and per 10 mN, so s² ≈ 1 means errors of that size). That formula
counts the m residuals as independent errors. Ours are time series — joint angles from mocap IK through a
6 Hz zero-lag filter, forces through a smooth servo and tendon — so neighbouring residuals share their error
and the m samples hold fewer independent ones. We correct by the integrated autocorrelation time
tau = 1 + 2 sum_k rho_k of the residuals (pooled over every series: one trial's one joint or force axis;
summed up to the first lag whose autocorrelation is no longer positive, Geyer's initial positive sequence):
for regressors as smooth as our Jacobian columns the variance of the estimate grows by about tau. On
twin-rig sessions (tests/app/procedures/test_from_sessions.py) the residuals at the true parameters have lag-1
autocorrelations of 0.1-0.55, and at the fits tau came to 1.1-5 (sigma x1.06-2.3). The Jacobian is the
caller's: model_fit passes one by central differences over ±3 % (it says why).

What this sigma does not contain: errors that are the same over a whole trial and are not noise — the start
state measured in the 0.1 s before actuation (the contact surface is placed from that force), a sensor's
calibration or tare, what the model leaves out; nor the raggedness of the cost in contact (stick and slip
make the simulated force jump as a parameter moves by a few percent). Measured in docs/calibration.md:
coulomb comes back up to 7 sigma off, a from one contact trial up to 15. Read sigma as "the noise along the
trials allows this much"; the spread between trials (calibration/trial_jackknife.py, `--jackknife`) measures
the rest.

Parameters are log-scale factors, so a sigma of 0.05 is about ±5 %. Two reports beside the sigmas: a
parameter whose sigma is infinite (the data do not move it at all) or above ``UNDETERMINED_LOG_SIGMA`` is
not determined by these trials, and pairs whose estimates correlate beyond ``CORRELATED`` are told apart
only along their combination (each sigma is then mostly that trade-off).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

UNDETERMINED_LOG_SIGMA = 0.5   # ±65 % at 1-sigma: the data say little more than the start value
CORRELATED = 0.9               # |correlation| beyond which a pair is reported as poorly separated
MAX_LAG = 50                   # samples (2 s at 25 Hz): the longest correlation we look for


@dataclass(frozen=True)
class Uncertainty:
    sigma: np.ndarray          # (n,) 1-sigma of each log factor, inf where the data do not move it
    correlation: np.ndarray    # (n, n), nan where a sigma is infinite
    s2: float                  # residual variance per degree of freedom (weighted units)
    rho: float                 # pooled lag-1 autocorrelation of the residuals
    inflation: float           # the integrated autocorrelation time tau, applied to the covariance

    def undetermined(self, names) -> list[str]:
        return [n for n, s in zip(names, self.sigma, strict=True) if not s <= UNDETERMINED_LOG_SIGMA]

    def correlated_pairs(self, names) -> list[tuple[str, str, float]]:
        n = len(names)
        return [(names[i], names[j], float(self.correlation[i, j])) for i in range(n) for j in range(i + 1, n)
                if abs(self.correlation[i, j]) > CORRELATED]


def autocorrelation(residual: np.ndarray, blocks: list[tuple[int, int]], max_lag: int = MAX_LAG) -> np.ndarray:
    """Pooled autocorrelation rho_0..rho_max_lag of the residual's time series. ``blocks`` lays out the
    residual in order: (samples, channels) per block, stored sample-major (one trial's joint angles are
    (n, 4).ravel()); each column of each block is one series, demeaned."""
    num = np.zeros(max_lag + 1)
    k = 0
    for samples, channels in blocks:
        x = residual[k:k + samples * channels].reshape(samples, channels)
        k += samples * channels
        x = x - x.mean(axis=0)
        for lag in range(min(max_lag + 1, samples)):
            num[lag] += float(np.sum(x[lag:] * x[:samples - lag]))
    return num / num[0] if num[0] > 0 else np.eye(1, max_lag + 1)[0]


def integrated_autocorrelation_time(rho: np.ndarray) -> float:
    """tau = 1 + 2 sum of rho_k up to the first non-positive one (>= 1: never below independent errors)."""
    positive = np.flatnonzero(rho[1:] <= 0.0)
    stop = 1 + (positive[0] if positive.size else rho.size - 1)
    return float(max(1.0, 1.0 + 2.0 * np.sum(rho[1:stop])))


def uncertainty(jac: np.ndarray, residual: np.ndarray, blocks: list[tuple[int, int]]) -> Uncertainty:
    """Sigma and correlation of the parameters from the Jacobian and residual at the solution (module doc);
    ``blocks`` as for autocorrelation."""
    m, n = jac.shape
    s2 = float(residual @ residual) / max(1, m - n)
    acf = autocorrelation(residual, blocks)
    inflation = integrated_autocorrelation_time(acf)
    # A column the data do not move (mu_y without sideways slip) has ~zero norm: its sigma is infinite,
    # reported as such rather than letting the pseudo-inverse spoil the others.
    seen = np.linalg.norm(jac, axis=0) > 1e-9 * max(1.0, float(np.linalg.norm(jac)))
    cov = np.full((n, n), np.nan)
    if seen.any():
        js = jac[:, seen]
        cov[np.ix_(seen, seen)] = np.linalg.pinv(js.T @ js) * s2 * inflation
    sigma = np.where(seen, np.sqrt(np.clip(np.diag(cov), 0.0, None)), np.inf)
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = cov / np.outer(sigma, sigma)
    return Uncertainty(sigma, corr, s2, float(acf[1]), inflation)
