"""The results table's rows for the run the core says is going, from what reached the window before it knew."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("PySide6")

from uartlab.app.gui.panels.results import TrialResults  # noqa: E402
from uartlab.app.run.state import SteadyState  # noqa: E402
from uartlab.schema import MODEL, MODEL_FIELDS, MODEL_STREAM, PHASES, Phase  # noqa: E402
from uartlab.streams import Record  # noqa: E402


def said(trial: str, repeat: int) -> str:
    """A steady event's message, as the runner says it."""
    steady = SteadyState(trial, repeat, "settled", 0.4, np.array([0.0, 40.0, 60.0, 30.0]), np.full(6, 2.0),
                         np.zeros(3))
    return json.dumps(steady.to_dict())


def test_a_run_first_seen_mid_way_keeps_its_own_trials_and_not_an_earlier_runs():
    results = TrialResults()
    results.add_steady(said("free/FDP", 1), host_time_s=10.0)   # the run before, still in the core's history
    results.add_steady(said("free/ED", 1), host_time_s=25.0)    # this run's first trial, before the first status
    results.start_run({"free/ED": 2}, submitted_s=20.0)
    assert list(results.rows) == [("free/ED", 1)]
    row = results.rows[("free/ED", 1)]
    assert row.outcome == "settled" and row.steady[:4] == [0.0, 40.0, 60.0, 30.0]
    results.add_steady(said("free/ED", 2), host_time_s=30.0)
    results.start_run({"free/FDS": 1}, submitted_s=40.0)        # the next run: a table of its own
    assert results.rows == {}


def model_ticks(times_s, trial_index: int, residual_rad: float) -> Record:
    """Live-model ticks in the ACTUATE phase, every field the model stream declares, as one record (the way
    the core's history sends a stream: its last seconds concatenated)."""
    n = len(times_s)
    data = {f.name: np.zeros((n, *f.shape), dtype=f.dtype) for f in MODEL_FIELDS}
    data[MODEL.phase][:] = PHASES.index(Phase.ACTUATE)
    data[MODEL.trial_index][:] = trial_index
    data[MODEL.residual_joint_angles_rad][:] = residual_rad
    return Record(MODEL_STREAM, np.asarray(times_s, dtype=float), data)


def test_the_history_record_of_the_model_counts_only_this_runs_ticks():
    results = TrialResults()
    earlier, this = np.arange(10.0, 15.0, 0.01), np.arange(20.0, 25.0, 0.01)   # the run was submitted at 20 s
    history = Record.concatenate([model_ticks(earlier, 0, np.radians(9.0)), model_ticks(this, 0, np.radians(1.0))])
    results.add_model(history)
    results.start_run({"free/ED": 1}, submitted_s=20.0)
    row = results.rows[("free/ED", 1)]
    assert row.residuals[:4] == pytest.approx([1.0] * 4)   # RMS deg of this run's ticks, not the 9 deg before
