"""Results panel: one row per trial run — its outcome, the steady state the rig measured (joint angles,
tendon tensions, the Nano17's force) and the live model's RMS residuals (measured − model) — exportable as CSV.

What fills it comes from the core like everything else: the run's status (each trial's outcome, tripped and
aborted ones included), the runner's ``steady`` events (the steady state, app/run/state.py ``SteadyState``)
and the ``model`` stream (residuals per trial, app/run/residuals.py ``TrialResiduals``). A replay's events and
model stream fill it the same way. A new run starts an empty table.
"""

from __future__ import annotations

import csv
import json
import math
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)
from uartlab.app.gui.file_chooser import choose
from uartlab.app.gui.panels.protocol import OUTCOME_COLOURS
from uartlab.app.run.residuals import AXES, TrialResiduals
from uartlab.app.run.unmodelled import unmodelled_sentence, unmodelled_trials
from uartlab.names import JOINTS, TENDONS
from uartlab.schema import outcome_of
from uartlab.streams import Record

SENSOR_AXES = ("x", "y", "z")
FED_KEPT = 4_000    # the last ~40 s of model records (100 a second) and steady events: the core's 30 s history
# (header, unit): the steady state, then the residuals. The Nano17's force is in its own frame, as the steady
# state records it; the model's residual force is in the world frame, as the model stream records it.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("trial", ""), ("repeat", ""), ("outcome", ""), ("settle", "s"),
    *((j, "deg") for j in JOINTS),
    *((t, "N") for t in TENDONS),
    *((f"F{a} sensor", "N") for a in SENSOR_AXES),
    *((f"RMS {j}", "deg") for j in JOINTS),
    *((f"RMS {t}", "N") for t in TENDONS),
    *((f"RMS F{a} world", "N") for a in AXES),
)
FIRST_RMS = next(i for i, (name, _) in enumerate(COLUMNS) if name.startswith("RMS "))
NOT_MODELLED = "not modelled"
HEADERS = tuple(f"{name} [{unit}]" if unit else name for name, unit in COLUMNS)


@dataclass
class TrialRow:
    trial: str
    repeat: int
    outcome: str = ""
    settle_time_s: float | None = None
    steady: list[float] = field(default_factory=lambda: [math.nan] * (len(JOINTS) + len(TENDONS) + 3))
    residuals: list[float] = field(default_factory=lambda: [math.nan] * (len(JOINTS) + len(TENDONS) + 3))
    unmodelled: str = ""   # why the live model has no residuals for it (the `unmodelled` event, in words)

    def cells(self, short: bool = False) -> list[str]:
        """The row's texts; ``short``: the outcome's word only (the table; its reason is the cell's tooltip)
        and "not modelled" where the live model made no samples (the file's residual cells stay empty)."""
        settle = "" if self.settle_time_s is None else f"{self.settle_time_s:.2f}"
        kind = outcome_of(self.outcome)
        outcome = kind.value if short and kind is not None else self.outcome
        residuals = [*map(_number, self.residuals)]
        if short and self.unmodelled and not any(residuals):
            residuals = [NOT_MODELLED] * len(residuals)
        return [self.trial, str(self.repeat), outcome, settle, *map(_number, self.steady), *residuals]


def _number(v: float) -> str:
    v += 0.0   # no "-0"
    return "" if not math.isfinite(v) else f"{v:.3g}" if abs(v) < 0.01 else f"{v:.2f}"


class TrialResults:
    """The rows, keyed by (trial, repeat) in the order trials ran; ``plan`` is the run's trial index ->
    (trial, repeat), which the model stream's trial index needs.

    What it was fed last is kept (``FED_KEPT`` items): a window attached mid-run gets the core's history - the
    trials it missed - before its first status says which run that is, and ``start_run`` sorts this run's
    part of it from an earlier run's."""

    def __init__(self):
        self.rows: dict[tuple[str, int], TrialRow] = {}
        self.plan: list[tuple[str, int]] = []
        self.residuals = TrialResiduals()
        self.version = 0     # bumped on every change (the panel redraws when it moved)
        self._fed: deque[tuple[float, str | Record]] = deque(maxlen=FED_KEPT)   # (newest host time s, what)

    def start_run(self, repeats: dict[str, int], submitted_s: float) -> None:
        """A run this table has not shown: its rows from what was fed since it was submitted (host s)."""
        fed = [(t, item) for t, item in self._fed if t >= submitted_s]
        self.clear()
        self.set_plan(repeats)
        for t, item in fed:
            if isinstance(item, Record):
                self.add_model(item.since(submitted_s))   # the core's history: one record, maybe older too
            else:
                self.add_steady(item, t)

    def set_plan(self, repeats: dict[str, int]) -> None:
        """This run's trials and their repeats, in the order it runs them."""
        plan = [(name, r) for name, n in repeats.items() for r in range(1, n + 1)]
        if plan != self.plan:
            self.plan = plan
            self.residuals.trial_names = [name for name, _ in plan]

    def row(self, trial: str, repeat: int) -> TrialRow:
        key = (trial, int(repeat))
        if key not in self.rows:
            self.rows[key] = TrialRow(trial, int(repeat))
        return self.rows[key]

    def add_outcomes(self, results) -> None:
        """The run's TrialResults (app/run/experiment.py status): an outcome for every trial that ended."""
        for r in results:
            row = self.row(r.trial, r.repeat)
            if (row.outcome, row.settle_time_s) != (r.outcome, r.settle_time_s):
                row.outcome, row.settle_time_s = str(r.outcome), r.settle_time_s
                self.version += 1

    def add_steady(self, message: str, host_time_s: float) -> None:
        """A runner ``steady`` event's JSON (``SteadyState.to_dict``), and when it was said."""
        self._fed.append((host_time_s, message))
        d = json.loads(message)
        row = self.row(d["trial"], d["repeat"])
        row.outcome = row.outcome or d["outcome"]
        row.settle_time_s = d.get("settle_time_s")
        row.steady = ([float(d["joint_angles_deg"][j]) for j in JOINTS]
                      + [float(d["tendon_force_N"][t]) for t in TENDONS]
                      + [float(v) for v in d["fingertip_force_N"]])
        self.version += 1

    def add_model(self, record: Record) -> None:
        """A ``model`` stream record: the RMS residuals of the trial it belongs to."""
        if len(record):
            self._fed.append((float(record.host_time_s[-1]), record))
        self.residuals.add_record(record)
        for _, s in self.residuals.summaries():
            if not 0 <= s.trial_index < len(self.plan) or s.samples == 0:
                continue
            row = self.row(*self.plan[s.trial_index])
            values = ([s.joint_angles_deg[j] for j in JOINTS] + [s.tendon_force_N[t] for t in TENDONS]
                      + [s.fingertip_force_N[a] for a in AXES])
            if values != row.residuals:
                row.residuals = values
                self.version += 1

    def add_unmodelled(self, message: str) -> None:
        """An ``unmodelled`` event's JSON (app/run/unmodelled.py): the trials measured with no model samples."""
        why = unmodelled_sentence(message)
        for trial, repeat in unmodelled_trials(message):
            row = self.row(trial, repeat)
            if row.unmodelled != why:
                row.unmodelled = why
                self.version += 1

    def clear(self) -> None:
        self.rows.clear()
        self._fed.clear()
        self.plan = []
        self.residuals = TrialResiduals()
        self.version += 1

    def write_csv(self, path: str | Path) -> None:
        with open(path, "w", newline="", encoding="utf-8") as f:
            out = csv.writer(f)
            out.writerow(HEADERS)
            for row in self.rows.values():
                out.writerow(row.cells())


class ResultsPanel(QWidget):
    message = Signal(str)      # for the window's log
    error = Signal(str, str)   # (what, why)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.results = TrialResults()
        self.run_id: object = None
        self._shown_version = -1
        self.table = QTableWidget(0, len(HEADERS))
        self.table.setHorizontalHeaderLabels(HEADERS)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.summary = QLabel("no trial has ended yet")
        self.export_button = QPushButton("Export CSV…")
        self.export_button.setToolTip("Write this table (every column, with units) to a CSV file")
        self.export_button.clicked.connect(self._choose_csv)
        row = QHBoxLayout()
        row.addWidget(self.summary, 1)
        row.addWidget(self.export_button)
        lay = QVBoxLayout(self)
        lay.addLayout(row)
        lay.addWidget(self.table, 1)

    def show_run(self, run) -> None:
        """The core's run status (None: no run): outcomes and the plan; a run not shown before starts the
        table afresh from what of it was fed already."""
        if run is None:
            return
        repeats = dict(run.repeats or {})
        if run.id != self.run_id:
            self.run_id = run.id
            self.results.start_run(repeats, run.submitted_s)
        self.results.set_plan(repeats)
        self.results.add_outcomes(run.results)
        self.refresh()

    def refresh(self) -> None:
        """Redraw the table if anything changed since it was drawn."""
        r = self.results
        if r.version == self._shown_version:
            return
        self._shown_version = r.version
        self.table.setRowCount(len(r.rows))
        for i, row in enumerate(r.rows.values()):
            kind = outcome_of(row.outcome)
            colour = OUTCOME_COLOURS.get(kind) if kind is not None else None
            for c, text in enumerate(row.cells(short=True)):
                item = self.table.item(i, c)
                if item is None:
                    item = QTableWidgetItem()
                    self.table.setItem(i, c, item)
                item.setText(text)
                if c >= 3:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if c == 2:
                    item.setToolTip(row.outcome)
                    item.setForeground(QColor(colour or "#000000"))
                elif c >= FIRST_RMS:
                    item.setToolTip(row.unmodelled if text == NOT_MODELLED else "")
        settled = sum(1 for row in r.rows.values() if outcome_of(row.outcome) == "settled")
        self.summary.setText(f"{len(r.rows)} trials, {settled} settled" if r.rows else "no trial has ended yet")
        self.export_button.setEnabled(bool(r.rows))

    def _choose_csv(self) -> None:
        choose(self, "Export results", "results.csv", self.export_csv, mode="save", name_filter="CSV (*.csv)")

    def export_csv(self, path: str) -> None:
        try:
            self.results.write_csv(path)
        except OSError as exc:
            self.error.emit("export results", f"{path}: {exc.strerror or exc}")
            return
        self.message.emit(f"results ({len(self.results.rows)} trials) written to {path}")
