"""Protocol panel: pick a suite (the paper's built-ins or a .toml file), see its trials with their status,
a progress bar, start/pause/resume/abort/acknowledge, the runner's phase and the interlock state with the
reason for any trip.

The panel only shows and asks; the window owns the Experiment (``app/run/experiment.py``, the control-loop
owner, imported when a run starts) and calls ``show_status`` with ``Experiment.status()`` a few times a
second. Every Experiment method is thread-safe and quick, so the buttons call them directly.
"""

from __future__ import annotations

import time

from PySide6.QtCore import Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)
from uartlab.app.gui.file_chooser import choose
from uartlab.protocols.runner import RUN_OVER, Phase
from uartlab.protocols.steps import JOG_MAX_M
from uartlab.protocols.suite import BUILTIN_SUITES, Suite
from uartlab.schema import Outcome, outcome_of
from uartlab.sim.names import TENDONS

COLUMNS = ("#", "trial", "status", "repeats", "kind", "pose", "surface [deg]", "pulls")   # status in sight
REPEATS_COLUMN, STATUS_COLUMN = COLUMNS.index("repeats"), COLUMNS.index("status")
OPEN_FILE = "Open suite file…"
RUNNING = "#1565c0"
OUTCOME_COLOURS = {Outcome.SETTLED: "#2e7d32", Outcome.SETTLE_TIMEOUT: "#e65100", Outcome.INTERRUPTED: "#555555",
                   Outcome.ABORTED: "#c62828", Outcome.TRIPPED: "#c62828", Outcome.ESTOPPED: "#c62828"}
WORST_FIRST = (Outcome.ESTOPPED, Outcome.TRIPPED, Outcome.ABORTED, Outcome.SETTLE_TIMEOUT, Outcome.SETTLED,
               Outcome.INTERRUPTED)


def describe_pulls(trial) -> str:
    return ", ".join(f"{p.tendon} {p.amplitude_mm:g} mm/{p.duration_s:g} s" for p in trial.pulls)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def describe_outcomes(done: dict[int, str], n_repeats: int, running_repeat: int | None,
                      over: bool = False) -> tuple[str, str]:
    """A trial's status cell and its colour: ``done`` its outcome per repeat (1-based), ``n_repeats`` this run's
    count (0: not in this run), ``running_repeat`` the repeat running now, ``over`` the run has ended."""
    if n_repeats == 0:
        return "not in this run", "#888888"
    counts: dict[Outcome, int] = {}
    for text in done.values():
        kind = outcome_of(text)
        if kind is not None and kind is not Outcome.INTERRUPTED:
            counts[kind] = counts.get(kind, 0) + 1
    parts = [f"{counts[k]} {k.value}" for k in WORST_FIRST if k in counts]
    if running_repeat is not None:
        return " · ".join([f"running {running_repeat} of {n_repeats}", *parts]), RUNNING
    left = n_repeats - sum(counts.values())
    if not parts:
        return ("not run", "#888888") if over else ("pending", "#000000")
    worst = next(k for k in WORST_FIRST if k in counts)
    rest = [f"{left} not run" if over else f"{left} pending"] if left > 0 else []
    return " · ".join(parts + rest), OUTCOME_COLOURS[worst]


class RunClock:
    """When the run started (the first status of a run this panel saw) and how long its trials take on
    average, for the time left; None until a trial has ended."""

    def __init__(self):
        self.run_id: object = None
        self.started_s = 0.0
        self.at_start = 0

    def left_s(self, run_id: object, finished: int, left: int) -> float | None:
        now = time.monotonic()
        if run_id != self.run_id:
            self.run_id, self.started_s, self.at_start = run_id, now, finished
        done_here = finished - self.at_start
        if done_here <= 0 or left <= 0:
            return None
        return (now - self.started_s) / done_here * left


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


class ProtocolPanel(QWidget):
    suite_chosen = Signal(str)        # a built-in name or a file path
    start_requested = Signal()
    pause_requested = Signal()
    resume_requested = Signal()
    abort_requested = Signal()
    reset_requested = Signal()
    release_requested = Signal()
    return_requested = Signal()
    jog_requested = Signal(str, float)   # tendon, step (m; + reels in)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.suite: Suite | None = None
        self.suite_combo = QComboBox()
        self.suite_combo.addItems([*BUILTIN_SUITES, OPEN_FILE])
        self.suite_combo.setCurrentIndex(-1)
        self.suite_combo.activated.connect(self._combo)
        self.description = QLabel("no suite chosen")
        self.description.setWordWrap(True)
        # The core records every run: there is no run without its file.
        self.record_note = QLabel("Each run is recorded: into the open recording, else into a new file in the "
                                  "Recording tab's folder.")
        self.record_note.setWordWrap(True)
        self.repeats_spin = QSpinBox()
        self.repeats_spin.setRange(0, 99)
        self.repeats_spin.setSpecialValueText("as the suite says")
        self.repeats_spin.setToolTip("Repeats of each trial for this run (the suite file is not changed)")
        self.repeats_spin.valueChanged.connect(lambda _: self._describe())
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.itemSelectionChanged.connect(self._describe)   # the runs Start makes: the selection's
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setFormat("%p %")
        self._eta = RunClock()
        self.buttons: dict[str, QPushButton] = {}
        row = QHBoxLayout()
        for key, text, signal in (("start", "▶ Start", self.start_requested),
                                  ("pause", "❚❚ Pause", self.pause_requested),
                                  ("resume", "▶ Resume", self.resume_requested),
                                  ("abort", "✖ Abort", self.abort_requested),
                                  ("reset", "Acknowledge / reset", self.reset_requested)):
            b = QPushButton(text)
            b.clicked.connect(signal.emit)
            row.addWidget(b)
            self.buttons[key] = b
        self.buttons["reset"].setToolTip("Acknowledge a fault, abort or finished run so a new one can start")
        after = QHBoxLayout()
        for key, text, signal, tip in (
                ("release", "Release tendons", self.release_requested,
                 "Pay every taut tendon out, slowly, until it carries nothing (after a trip or an E-stop)"),
                ("return", "Return to start", self.return_requested,
                 "Bring the tendons back to where the last run started, under the interlocks")):
            b = QPushButton(text)
            b.setToolTip(tip)
            b.clicked.connect(signal.emit)
            after.addWidget(b)
            self.buttons[key] = b
        self.jog_tendon = QComboBox()
        self.jog_tendon.addItems(TENDONS)
        self.jog_step_mm = QDoubleSpinBox()
        self.jog_step_mm.setRange(0.1, JOG_MAX_M * 1e3)
        self.jog_step_mm.setValue(1.0)
        self.jog_step_mm.setSuffix(" mm")
        after.addWidget(QLabel("jog"))
        after.addWidget(self.jog_tendon)
        after.addWidget(self.jog_step_mm)
        for key, sign, text in (("jog_out", -1.0, "− pay out"), ("jog_in", 1.0, "+ reel in")):
            b = QPushButton(text)
            b.setToolTip("Move this one tendon by the step, on the engine, under the interlocks")
            b.clicked.connect(lambda _=False, sign=sign: self.jog_requested.emit(
                self.jog_tendon.currentText(), sign * self.jog_step_mm.value() * 1e-3))
            after.addWidget(b)
            self.buttons[key] = b
        self.phase_label = QLabel("–")
        self.trial_label = QLabel("–")
        self.interlock_label = QLabel("–")
        self.interlock_label.setWordWrap(True)
        form = QFormLayout()
        form.addRow("suite", self.suite_combo)
        form.addRow("", self.description)
        form.addRow("repeats", self.repeats_spin)
        form.addRow("", QLabel("Select rows to run only those trials; no selection runs them all."))
        state = QFormLayout()
        state.addRow("phase", self.phase_label)
        state.addRow("trial", self.trial_label)
        state.addRow("interlocks", self.interlock_label)
        lay = QVBoxLayout(self)
        lay.addLayout(form)
        lay.addWidget(self.table, 1)
        lay.addWidget(self.progress)
        lay.addLayout(row)
        lay.addLayout(after)
        lay.addWidget(self.record_note)
        lay.addLayout(state)
        self.set_interlocks(None)
        self.set_buttons(None, can_start=False)

    def _combo(self, index: int) -> None:
        text = self.suite_combo.itemText(index)
        if text == OPEN_FILE:
            choose(self, "Protocol suite", "", self.suite_chosen.emit, name_filter="suite (*.toml)")
            return
        self.suite_chosen.emit(text)

    def selected_trials(self) -> list[str]:
        rows = sorted({i.row() for i in self.table.selectedIndexes()})
        names = [self.table.item(r, 1) for r in rows]
        return [name.text() for name in names if name is not None]

    def repeats(self) -> int:
        return self.repeats_spin.value()

    def show_suite(self, suite: Suite, label: str) -> None:
        """Fill the trial table for a loaded suite; ``label`` is what the combo shows (name or path)."""
        self.suite = suite
        if self.suite_combo.findText(label) < 0:
            self.suite_combo.insertItem(self.suite_combo.count() - 1, label)
        self.suite_combo.setCurrentIndex(self.suite_combo.findText(label))
        self.table.clearSelection()   # rows of another suite
        self.table.setRowCount(len(suite.trials))
        for r, t in enumerate(suite.trials):
            surface = "–" if t.surface_angle_deg is None else f"{t.surface_angle_deg:g}"
            for c, v in enumerate((str(r + 1), t.name, "pending", str(t.repeats), t.kind, t.pose, surface,
                                   describe_pulls(t))):
                self.table.setItem(r, c, QTableWidgetItem(v))
        self.progress.setValue(0)
        self._describe()

    def _describe(self) -> None:
        """The suite in a line, with the runs a start would make (the repeats asked for here, if any)."""
        suite = self.suite
        if suite is None:
            return
        override = self.repeats_spin.value()
        selected = set(self.selected_trials())
        chosen = [t for t in suite.trials if t.name in selected] or suite.trials
        n = sum(override or t.repeats for t in chosen)
        trials = (f"{len(chosen)} of {len(suite.trials)} trials selected" if len(chosen) < len(suite.trials)
                  else _count(len(suite.trials), "trial"))
        repeats = f"{_count(override, 'repeat')} each (the file says otherwise)" if override and any(
            t.repeats != override for t in chosen) else "repeats as the file says"
        self.description.setText(f"{suite.name}: {suite.description} — {trials}, {repeats}: "
                                 f"{_count(n, 'run')} (sha256 {suite.sha256[:12]})")

    def show_status(self, status) -> None:
        """Update from the run's status (app/run/experiment.py ExperimentStatus, as the core reports it):
        phase, the trial and its repeat of this run's repeats, each trial's outcomes, progress over the trials
        this run plans (a selection and a repeats override counted, a run cut short never shown full)."""
        over = status.phase in RUN_OVER
        repeats: dict[str, int] = dict(status.repeats or {})
        finished = [r for r in status.results if outcome_of(r.outcome) is not Outcome.INTERRUPTED]
        self.phase_label.setText(str(status.phase))   # a fault's reason: the interlocks line below
        if status.trial_name and not over:
            self.trial_label.setText(f"{status.trial_name}: repeat {status.repeat} of "
                                     f"{repeats.get(status.trial_name, '?')} (trial {status.trial_index + 1} of "
                                     f"{status.n_trials} in this run)")
        else:
            self.trial_label.setText(f"{len(finished)} of {status.n_trials} trials run" if over else "–")
        self.progress.setValue(int(round(1000 * max(0.0, min(1.0, float(status.progress))))))
        left = status.n_trials - len(finished)
        eta = self._eta.left_s(getattr(status, "id", None), len(finished), left) if not over else None
        self.progress.setFormat(f"{len(finished)} of {status.n_trials} trials"
                                + (f" · about {_duration(eta)} left" if eta is not None else ""))
        if self.suite is None:
            return
        outcomes: dict[str, dict[int, str]] = {}
        for res in status.results:   # in order: a repeat run again after a pause keeps its newest outcome
            outcomes.setdefault(res.trial, {})[res.repeat] = res.outcome
        for r, t in enumerate(self.suite.trials):
            n = repeats.get(t.name) if repeats else t.repeats
            done = outcomes.get(t.name, {})
            running = status.trial_name == t.name and not over and status.phase is not Phase.SAFE
            repeats_item, item = self.table.item(r, REPEATS_COLUMN), self.table.item(r, STATUS_COLUMN)
            if item is None or repeats_item is None:   # show_suite fills every cell of the suite's rows
                continue
            repeats_item.setText(str(n) if n else "–")
            text, colour = describe_outcomes(done, n or 0, status.repeat if running else None, over)
            item.setText(text)
            item.setToolTip("\n".join(f"repeat {k}: {o}" for k, o in sorted(done.items())))
            item.setForeground(QColor(colour))

    def show_idle(self) -> None:
        """No run on the core (none yet, or the last one acknowledged): the table keeps the last run's outcomes."""
        self.phase_label.setText("no run")
        self.trial_label.setText("–")
        if self.progress.value() and not self.progress.format().startswith("last run: "):
            self.progress.setFormat(f"last run: {self.progress.format()}")

    def set_interlocks(self, reason: str | None, estop: bool = False) -> None:
        if estop:
            text, style = f"E-STOP latched: {reason}", "color: white; background: #c62828; font-weight: bold"
        elif reason:
            text, style = f"TRIPPED: {reason}", "color: white; background: #e65100; font-weight: bold"
        else:
            text, style = "OK", "color: #2e7d32; font-weight: bold"
        self.interlock_label.setText(text)
        self.interlock_label.setStyleSheet(style)

    def set_buttons(self, phase: Phase | None, can_start: bool, can_move: bool = False,
                    has_start: bool = False) -> None:
        """Enable what makes sense in this phase (None: no experiment). ``can_move``: a rig, no E-stop latched,
        nothing else moving; ``has_start``: a run has started before (where "return to start" goes)."""
        running = phase not in (None, *RUN_OVER, Phase.SAFE, Phase.PAUSED)
        finished = phase in RUN_OVER
        self.buttons["start"].setEnabled(can_start and phase is None)
        self.buttons["pause"].setEnabled(running)
        self.buttons["resume"].setEnabled(phase == Phase.PAUSED)
        self.buttons["abort"].setEnabled(phase is not None and not finished)
        self.buttons["reset"].setEnabled(finished)
        self.buttons["release"].setEnabled(can_move and not running)
        self.buttons["return"].setEnabled(can_move and has_start and not running)
        for key in ("jog_out", "jog_in"):
            self.buttons[key].setEnabled(can_move and not running)
        self.suite_combo.setEnabled(phase is None)
