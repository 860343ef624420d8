"""`uartlab compare` on a session recorded through the whole stack: the twin rig (MX-64 bus, USB-6210 over
gRPC, Motive over NatNet, IK), the protocol runner and the recorder (tests/conftest.py `twin_session_file`).
The twin's "true" finger is a known perturbation of the defaults, so its own parameters must explain the
recording and the defaults must not."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import TWIN_SESSION_CONTACT, TWIN_SESSION_PERTURBATION
from uartlab.app.compare.analysis import ParamSet, compare
from uartlab.app.compare.measured import load_trials
from uartlab.sim import Finger, FingerParams

pytestmark = pytest.mark.realtime

SEED = 0  # the shared twin session's (tests/conftest.py)


@pytest.mark.slow
def test_twin_rig_session_is_explained_by_the_twins_true_parameters(twin_session_file):
    # the contact trial of the session recorded once per test run (its free trial is for the model fit)
    path = twin_session_file
    trials = [t for t in load_trials(path)[0] if t.name == TWIN_SESSION_CONTACT]
    true = FingerParams.uart().perturbed(TWIN_SESSION_PERTURBATION, SEED)
    (group,) = compare(trials, [ParamSet("A", "", Finger()), ParamSet("true", "", Finger(true))], [str(path)],
                       []).groups
    assert group.name == "contact/Curl/FDP+ED@67.5deg" and group.n == 1 and group.has_force
    assert not group.repeats[0].notes  # tared
    a, b = group.results["A"], group.results["true"]
    assert a.sim.settled and b.sim.settled
    # through servo profiles, SEA pots, IK from noisy markers, the Nano17's calibration: the true parameters
    # explain the recording closely, the defaults do not; the force frame holds end to end
    assert np.all(b.joint_mae_deg < 1.5), b.joint_mae_deg
    assert a.joint_mae_deg.max() > 3 * b.joint_mae_deg.max()
    assert b.force["magnitude_pct"] < 3.0 and b.force["direction_deg"] < 2.0, b.force
    assert np.all(np.abs(b.force["mean_N"]) < 0.02)
    assert a.force["magnitude_pct"] > 5.0
