"""uartlab.calibration — turning raw signals into units and identifying the model's parameters.

One small module per procedure, each with a pure fitting function (arrays in, a fit with residuals out)
and a thin collector that gathers the data on the twin plant (the SEA's also at a rig, given its
actuators and readers). The procedures end to end live in the application, app/procedures/ (on_twin.py:
a twin plant in-process; at_rig.py: a started rig, through its drivers, over probe.py's RigProbe;
from_sessions.py: recorded sessions):

    sea.py           pot volts -> tendon force per SEA, from known loads (loading and unloading)
    nano17.py        the ATI .cal file, tool transform and tare
    servo_zero.py    each tendon's slack-to-taut excursion and the pretension offset
    mocap.py         the finger's base frame in Motive and the marker offsets on each bone
    moment_arms.py   r_T,j(theta) by the ACT method: tendon excursion against joint angles
    model_fit.py     friction, damping and contact-law parameters by least squares over simulations
    fit_uncertainty.py  the fit's 1-sigma and correlations, for residuals that are time series
    trial_jackknife.py  the between-trial 1-sigma: the fit repeated with each trial left out
    session_trials.py   recorded session trials (read by app's compare reader) as the fit's recordings
    executors.py     local processes or a dask cluster for the fit's simulations
    store.py         versioned, dated TOML files with provenance; the current set; staleness
    applied.py       the model's parameters with the store's moment arms and model values applied
    record_checks.py what each kind's values must be, checked whenever a store file is read

Every failure raises uartlab.errors.CalibrationError (re-exported here), and nothing is written.
Nothing here imports Qt, protocols/ or app/ (docs/architecture.md: calibration -> drivers, sim, the
package root); what moves the rig for a procedure is app/procedures/.
"""

from uartlab.errors import CalibrationError

__all__ = ["CalibrationError"]
