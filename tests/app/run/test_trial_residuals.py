"""Per-trial RMS residuals from a `model` stream alone (what a client or the session file has) are the live
model's own summaries."""

from __future__ import annotations

import numpy as np
from uartlab.app.run.experiment import runner_spec
from uartlab.app.run.feed import simulated_trial
from uartlab.app.run.live_model import MODEL_STREAM, LiveModel
from uartlab.app.run.residuals import TrialResiduals
from uartlab.hub import Hub
from uartlab.sim import Finger
from uartlab.sim.scenarios import contact_trial, free_motion_trial
from uartlab.streams import Record


def test_the_summaries_from_the_model_stream_are_the_live_models_own_trial_by_trial():
    truth = Finger(Finger().params.perturbed(0.2, seed=5))   # residuals that are not zero
    trials = [free_motion_trial("FDP"), contact_trial("Hook", "FDP", "ED"), free_motion_trial("ED")]
    ticks, t0 = [], 0.0
    for index, trial in enumerate(trials):
        run = simulated_trial(truth, trial, trial_index=index, t0_s=t0, post_ticks=1)
        ticks += run.records[:-1] if index + 1 < len(trials) else run.records
        t0 = float(run.records[-1].host_time_s[-1]) + 0.5
    hub = Hub(validate=True)
    hub.register(runner_spec())
    out = hub.subscribe("witness", {MODEL_STREAM}, maxsize=100_000)
    live = LiveModel(hub, Finger(), trials, behind_s=np.inf)
    live.process(ticks)
    model = [item for item in out.drain() if isinstance(item, Record)]

    names = ["free FDP", "contact Hook", "free ED"]
    from_stream = TrialResiduals(names)
    for record in model:
        from_stream.add_record(record)
    got, expected = from_stream.summaries(), live.summaries
    assert [s.trial_index for _, s in got] == [s.trial_index for _, s in expected] == [0, 1, 2]
    assert [n for n, _ in got] == names
    for (_, mine), (_, theirs) in zip(got, expected, strict=True):
        assert mine.samples == theirs.samples > 10
        for a, b in ((mine.joint_angles_deg, theirs.joint_angles_deg), (mine.tendon_force_N, theirs.tendon_force_N),
                     (mine.fingertip_force_N, theirs.fingertip_force_N)):
            np.testing.assert_allclose(list(a.values()), list(b.values()), rtol=1e-12)
        assert max(mine.joint_angles_deg.values()) > 0.1   # a perturbed finger: something to compare


def test_a_trial_index_beyond_the_plan_is_named_with_a_question_mark():
    from uartlab.app.run.residuals import PHASES
    from uartlab.protocols.runner import Phase

    record = Record.single(MODEL_STREAM, 1.0, phase=PHASES.index(Phase.ACTUATE), trial_index=4,
                           residual_joint_angles_rad=np.full(4, 0.01), residual_tendon_force_N=np.zeros(6),
                           residual_fingertip_force_N=np.zeros(3))
    per_trial = TrialResiduals(["only one"])
    per_trial.add_record(record)
    [(name, summary)] = per_trial.summaries()
    assert name == "?" and summary.trial_index == 4 and summary.samples == 1
