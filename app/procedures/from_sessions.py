"""`uartlab calibrate model --session FILE.h5 ...`: the model's parameters fitted to recorded sessions.

The trials are read with `uartlab compare`'s reader (app/compare/measured.py), so the fit sees exactly what
the comparison re-simulates: settled trials only, in protocol seconds, forces in the model's world frame.
calibration/session_trials.py turns them into the fit's recordings; calibration/model_fit.py fits them.
Returns what app/procedures/on_twin.py's procedures return: (values, residuals, method, report lines), and
raises CalibrationError before anything could be written.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import Executor
from dataclasses import dataclass

from uartlab.app.compare.measured import CompareError, load_trials
from uartlab.calibration import model_fit
from uartlab.calibration.session_trials import recording_from_trial, select_trials
from uartlab.calibration.trial_jackknife import jackknife_sigma
from uartlab.errors import CalibrationError
from uartlab.sim import FingerParams


@dataclass
class SessionRecordings:
    paths: list[str]
    recordings: list[model_fit.TrialRecording]
    notes: list[str]        # trials skipped (not settled), and what the reader noted about a trial used


def read_session_recordings(paths: Sequence[str | os.PathLike], trial_names: Sequence[str] | None = None
                            ) -> SessionRecordings:
    """The settled trials of every file (``trial_names``: only those), as recordings. A file that cannot be
    read or a trial that cannot be fitted raises CalibrationError naming it."""
    trials, notes = [], []
    for path in paths:
        try:
            found, skipped = load_trials(path)
        except CompareError as exc:  # its message names the file and the trial
            raise CalibrationError("model", str(exc)) from None
        if not found:
            raise CalibrationError("model", "no settled trial to fit (" + "; ".join(
                f"{label}: {why}" for label, why in skipped) + ")", os.fspath(path))
        trials += found
        notes += [f"skipped {label}: {why}" for label, why in skipped]
    chosen = select_trials(trials, trial_names)
    notes += [f"{t.label}: {note}" for t in chosen for note in t.notes]  # e.g. an untared Nano17
    return SessionRecordings([os.fspath(p) for p in paths], [recording_from_trial(t) for t in chosen], notes)


def fit_sessions(sessions: SessionRecordings, names: tuple[str, ...], start: FingerParams,
                 executor: Executor | None = None, start_source: str = "UART defaults", jackknife: bool = False,
                 on_progress=None) -> tuple[dict, dict, str, list[str]]:
    """Fit ``names`` to the recordings from ``start``: (values, residuals, method, report lines). With
    ``jackknife``, also the between-trial 1-sigma (calibration/trial_jackknife.py: one refit per trial).
    ``on_progress(done, None)``: simulations done, the jackknife's refits counted on after the fit's."""
    recs = sessions.recordings
    fit = model_fit.fit_model(start, recs, names, executor=executor, on_progress=on_progress)
    if len(fit.undetermined) == len(names):  # a record would change nothing: say so instead of writing one
        sigmas = ", ".join(f"{n} {fit.std_factor[n] * 100:.0f} %" for n in names)
        raise CalibrationError("model", f"none of {', '.join(names)} is determined by these trials (1-sigma "
                                        f"{sigmas}; at the search limit: {', '.join(fit.at_bound) or 'none'})")
    trials = sorted({r.name for r in recs})
    files = ", ".join(sessions.paths)
    lines = [f"{len(recs)} trials ({', '.join(trials)}) from {files}; start: {start_source}", *sessions.notes,
             *model_fit.report_lines(fit)]
    values, residuals = model_fit.record_values(fit)
    if jackknife:
        more = (lambda done, _total=None: on_progress(fit.simulations + done, None)) if on_progress else None
        sigma, k = jackknife_sigma(fit, recs, executor, on_progress=more)
        if sigma:
            lines.append(f"between-trial 1-sigma (jackknife, {k} refits with one trial left out): "
                         + ", ".join(f"{n} {s * 100:.2f} %" for n, s in sigma.items()))
            residuals |= {"jackknife_std_log_factor": sigma, "jackknife_refits": k}
        else:
            lines.append(f"between-trial 1-sigma: not available ({k} refits with one trial left out were "
                         "possible; it needs two)")
    method = f"sessions {files}: least squares over {len(recs)} recorded trials ({', '.join(trials)}), " \
             f"start {start_source}"
    return values, residuals, method, lines
