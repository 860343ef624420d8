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


def test_trials_the_live_model_missed_say_not_modelled_and_why_and_the_csv_keeps_them_empty(qtbot, tmp_path):
    """The run's close names the trials measured with no model sample (app/run/unmodelled.py, from the
    runner's plan, the model's per-trial residuals and the steady states); the table says "not modelled" in
    their residual cells, the reason in each cell's tooltip, and the log says it in words."""
    from uartlab.app.gui.operations import _log_line_for
    from uartlab.app.gui.panels.results import FIRST_RMS, NOT_MODELLED, ResultsPanel
    from uartlab.app.run.residuals import TrialResiduals
    from uartlab.app.run.unmodelled import unmodelled, unmodelled_message
    from uartlab.schema import MODEL_SOURCE, EventKind
    from uartlab.streams import Event

    panel = ResultsPanel()
    qtbot.addWidget(panel)
    results = panel.results
    results.set_plan({"free/FDP": 2})
    steady = []
    for repeat in (1, 2):
        results.add_steady(said("free/FDP", repeat), host_time_s=float(repeat))
        steady.append(SteadyState("free/FDP", repeat, "settled", 0.4, np.zeros(4), np.zeros(6), np.zeros(3)))
    ticks = model_ticks(np.arange(0.0, 1.0, 0.01), 0, np.radians(1.0))   # the model had the first trial only
    results.add_model(ticks)
    per_trial = TrialResiduals()
    per_trial.add_record(ticks)
    message = unmodelled_message(unmodelled([("free/FDP", 1), ("free/FDP", 2)], per_trial.summaries(), steady),
                                 len(steady), {"runner_ticks": 100, "max_lag_s": 12.34})
    event = Event(3.0, EventKind.UNMODELLED, MODEL_SOURCE, message)
    results.add_unmodelled(event.message)
    panel.refresh()
    first, second = ([panel.table.item(r, c) for c in range(FIRST_RMS, panel.table.columnCount())] for r in (0, 1))
    assert float(first[0].text()) == pytest.approx(1.0) and first[0].toolTip() == ""
    assert {i.text() for i in second} == {NOT_MODELLED}
    why = second[0].toolTip()
    assert why == ("no model samples for 1 of 2 trials measured (free/FDP repeat 2): the live model received 100 "
                   "runner ticks, at most 12.3 s behind; their residuals are empty")
    assert _log_line_for(event) == f"unmodelled [{MODEL_SOURCE}] {why}"
    out = tmp_path / "results.csv"
    panel.export_csv(str(out))
    rows = out.read_text(encoding="utf-8").splitlines()
    assert NOT_MODELLED not in rows[2] and rows[2].endswith("," * (panel.table.columnCount() - FIRST_RMS))
