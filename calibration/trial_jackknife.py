"""Between-trial uncertainty of a model fit: the delete-one jackknife over the recorded trials.

The 1-sigma of calibration/fit_uncertainty.py is what the noise along the trials allows; it misses errors
that hold over a whole trial (the start state measured just before actuation, a sensor's offset, what the
model leaves out), and those dominate: fitted values come back several of its sigmas off. Trials are the
independent units of such errors, so their spread is the honest measure: refit with each trial left out in
turn and take sigma_jk² = (k − 1)/k · Σ (θ₍ᵢ₎ − θ̄)² over the k refits, in log factors (Quenouille-Tukey;
Efron & Tibshirani, An Introduction to the Bootstrap, ch. 11). A trial whose removal leaves nothing to fit
a parameter from (the only contact trial, when a contact parameter is fitted) is kept in every refit, so
the jackknife runs over the others. It costs k more fits, each started from the full fit; it is opt-in.

Measured on written sessions (free FDP and four contact trials, sensor noise; fit of coulomb and a from the
defaults): with this module on seed 0, coulomb 0.34 % between trials against an error of 0.35 % (noise sigma
0.14 %), a 4.4 % against 1.2 % (noise sigma 0.7 %); leaving out the contact trials only, on seeds 0-2,
coulomb 0.35-0.8 % against errors of 0.3-0.8 %, a 7-10 % against 0.3-3.7 %. a is what the trials disagree on.
"""

from __future__ import annotations

from concurrent.futures import Executor

import numpy as np
from uartlab.calibration.model_fit import CONTACT_PARAMETERS, ModelFit, TrialRecording, fit_model
from uartlab.errors import CalibrationError


def leave_out_candidates(recordings: list[TrialRecording], names: tuple[str, ...]) -> list[int]:
    """The trials that can be left out, each leaving a set the fit still accepts."""
    contact = [i for i, r in enumerate(recordings) if r.contact]
    needs_contact = any(n in CONTACT_PARAMETERS for n in names)
    return [i for i in range(len(recordings))
            if len(recordings) > 1 and not (needs_contact and contact == [i])]


def jackknife_sigma(fit: ModelFit, recordings: list[TrialRecording], executor: Executor | None = None,
                    on_progress=None) -> tuple[dict[str, float], int]:
    """({parameter: between-trial 1-sigma of its log factor}, trials left out in turn); ({}, k) when fewer
    than two refits were possible. ``on_progress(done, None)``: simulations done, counted over all refits."""
    candidates = leave_out_candidates(recordings, fit.names)
    logs = []
    seen = [0, 0]  # simulations before this refit, and so far

    def counted(done: int, _total=None) -> None:
        seen[1] = seen[0] + done
        on_progress(seen[1], None)

    for i in candidates:
        rest = recordings[:i] + recordings[i + 1:]
        try:
            refit = fit_model(fit.params, rest, fit.names, executor=executor,
                              on_progress=counted if on_progress is not None else None)
        except CalibrationError:  # this subset does not fit: it cannot count, the others still do
            continue
        finally:
            seen[0] = seen[1]
        logs.append([np.log(refit.values[n] / fit.values[n]) for n in fit.names])
    k = len(logs)
    if k < 2:
        return {}, k
    x = np.array(logs)
    sigma = np.sqrt((k - 1) / k * np.sum((x - x.mean(axis=0)) ** 2, axis=0))
    return dict(zip(fit.names, sigma.tolist(), strict=True)), k
