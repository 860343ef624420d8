"""Recorded session trials as the model fit's TrialRecordings.

The trials come from `uartlab compare`'s session reader (app/compare/measured.py ``load_trials``, called by
app/procedures/from_sessions.py: calibration/ may not import app/, docs/architecture.md). That reader already
knows the file layout: each trial relative to its actuation start, in protocol seconds (a twin at 3x speed
included), the measured excursions, SEA tensions, joint angles from the `joints` stream and the Nano17 wrench
turned into the force on the fingertip in the world frame, the pose and surface angle from the trial's
parameters. Here they are resampled the way ``model_fit.record_trial_on_plant`` records the twin — one row
every ``SAMPLE_S`` from actuation start to the steady state — and checked, so a trial that cannot be fitted is
one CalibrationError naming its file and trial.

What this module needs of a measured trial (``MeasuredTrial``): ``label``, ``name``, ``kind``,
``surface_angle_deg``, ``duration_s``, ``has(q)``, ``initial(q)`` (mean over the rest before actuation) and
``signals[q].on_grid(t)`` for q in excursion_m, tendon_force_N, joint_angles_rad, fingertip_force_N.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from uartlab.calibration.model_fit import TrialRecording
from uartlab.errors import CalibrationError

SAMPLE_S = 0.04        # as the twin path (app/procedures/on_twin.py run_model): 25 rows per protocol second
MIN_SAMPLES = 10       # model_fit.fit_model's minimum


def recording_from_trial(trial) -> TrialRecording:
    """One measured trial, resampled every SAMPLE_S from actuation start (t = 0) to its steady state."""
    where = trial.label
    if not trial.has("joint_angles_rad"):
        raise CalibrationError("model", "no joint angles (joints stream) in the trial", where)
    contact = trial.kind == "contact"
    if contact and not trial.has("fingertip_force_N"):
        raise CalibrationError("model", "a surface-contact trial without the Nano17 wrench (daq.wrench)", where)
    t_s = np.arange(0.0, trial.duration_s + 1e-9, SAMPLE_S)
    if t_s.size < MIN_SAMPLES:
        raise CalibrationError("model", f"too short to fit ({trial.duration_s:.2f} s from actuation to steady "
                                        f"state: {t_s.size} samples at {SAMPLE_S * 1e3:.0f} ms, need "
                                        f"{MIN_SAMPLES})", where)
    excursion_m = trial.signals["excursion_m"].on_grid(t_s)
    excursion_m[0] = trial.initial("excursion_m")  # the model's inputs start from the rest before actuation
    theta_rad = trial.signals["joint_angles_rad"].on_grid(t_s)
    tip_force_N = trial.signals["fingertip_force_N"].on_grid(t_s) if contact else np.zeros((t_s.size, 3))
    start_theta_rad = trial.initial("joint_angles_rad")
    start_tensions_N = trial.initial("tendon_force_N")
    start_tip_force_N = trial.initial("fingertip_force_N") if contact else None
    for what, values in (("joint angles", theta_rad), ("excursions", excursion_m), ("fingertip forces", tip_force_N),
                         ("start joint angles", start_theta_rad), ("start tensions", start_tensions_N)):
        if not np.all(np.isfinite(values)):
            raise CalibrationError("model", f"{what} are not finite (a stream lost during the trial?)", where)
    return TrialRecording(trial.name, t_s, excursion_m, theta_rad, tip_force_N, start_theta_rad, start_tensions_N,
                          surface=None, surface_angle_deg=trial.surface_angle_deg if contact else None,
                          start_tip_force_N=start_tip_force_N)


def select_trials(trials: list, names: Iterable[str] | None) -> list:
    """The trials with one of ``names`` (every repeat, across files), all of them for None; a name that no
    trial has is an error listing the names there are."""
    if not names:
        return list(trials)
    names = list(names)
    there = sorted({t.name for t in trials})
    missing = [n for n in names if n not in there]
    if missing:
        import difflib

        close = difflib.get_close_matches(missing[0], there, n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
        raise CalibrationError("model", f"--trial: no trial named {', '.join(map(repr, missing))} in the sessions"
                                        f"{hint} (there are: {', '.join(there) or 'none'})")
    return [t for t in trials if t.name in names]
