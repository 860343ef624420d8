"""uartlab.calibration — turning raw signals into units and identifying the model's parameters.

One small module per procedure, each with a pure fitting function (arrays in, a fit with residuals out)
and a thin collector that gathers the data on the twin plant or the rig; the procedures end to end live
in twin_runs.py (a twin plant in-process) and rig_runs.py (a started rig, through its drivers, over
at_rig.py's RigProbe):

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
    twin_runs.py     each procedure end to end on a twin plant in-process
    at_rig.py        RigProbe: reads and servo commands on a started rig, servos holding on any failure
    rig_runs.py      each procedure end to end at a rig (the twin rig or hardware) through its drivers

Nothing here imports Qt or app/ (DESIGN: calibration -> drivers, sim): rig_runs and at_rig take a started
app.rig.Rig as an argument and use it by its attributes.
"""

from uartlab.calibration.errors import CalibrationError

__all__ = ["CalibrationError"]
