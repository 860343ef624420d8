"""Calibration tab: run a `uartlab calibrate` procedure, read what it found, see the store's current set.

A procedure drives the rig (or the twin) for seconds to minutes and a model fit runs many simulations,
so each runs as its own process (QProcess), exactly as the command line runs it, and its report streams
into the view; the window never waits. What a procedure writes goes into the store folder chosen here
(the one rig.toml's ``[calibration] store`` names); the table lists the store's current set with each
calibration's age, stale ones flagged - the same staleness a run warns about before it starts.
"""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import QProcess, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

# (command-line name, what the operator sees)
PROCEDURES = (
    ("sea", "SEA: pot volts -> tendon force (loading and unloading)"),
    ("nano17", "Nano17: .cal file, tool transform, tare"),
    ("servo-zero", "Servo zero: slack-to-taut point per tendon"),
    ("mocap", "Mocap: base frame and marker offsets"),
    ("moment-arms", "Moment arms: ACT sweeps -> r(theta) per tendon and joint"),
    ("model", "Model parameters: Coulomb, damping, contact law (many simulations)"),
)


class CalibrationPanel(QWidget):
    message = Signal(str)      # for the window's log
    error = Signal(str, str)   # (what, why)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.process: QProcess | None = None
        self.procedure = QComboBox()
        for name, text in PROCEDURES:
            self.procedure.addItem(text, name)
        self.store_edit = QLineEdit("calibrations")
        self.store_edit.setToolTip("the calibration store folder (rig.toml's [calibration] store)")
        self.run_button = QPushButton("Run")
        self.dry_run_button = QPushButton("Dry run (write nothing)")
        self.run_button.clicked.connect(lambda: self.run(dry_run=False))
        self.dry_run_button.clicked.connect(lambda: self.run(dry_run=True))
        self.output = QPlainTextEdit()
        self.output.setReadOnly(True)
        self.output.setPlaceholderText("the procedure's report appears here")
        self.current = QTableWidget(0, 4)
        self.current.setHorizontalHeaderLabels(["calibration", "file", "created (UTC)", "status"])
        self.current.horizontalHeader().setStretchLastSection(True)
        row = QHBoxLayout()
        row.addWidget(QLabel("procedure"))
        row.addWidget(self.procedure, 1)
        row.addWidget(QLabel("store"))
        row.addWidget(self.store_edit)
        row.addWidget(self.dry_run_button)
        row.addWidget(self.run_button)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.output, 2)
        layout.addWidget(QLabel("current set in the store"))
        layout.addWidget(self.current, 1)
        self.refresh()

    @property
    def store(self) -> Path:
        return Path(self.store_edit.text().strip() or "calibrations")

    def running(self) -> bool:
        return self.process is not None and self.process.state() != QProcess.ProcessState.NotRunning

    def run(self, dry_run: bool) -> None:
        if self.running():
            return
        name = self.procedure.currentData()
        args = ["-m", "uartlab.app.cli", "calibrate", name, "--store", str(self.store)]
        if dry_run:
            args.append("--dry-run")
        self.output.setPlainText(f"$ uartlab {' '.join(args[3:])}\n")
        self.process = QProcess(self)
        self.process.setProcessChannelMode(QProcess.ProcessChannelMode.MergedChannels)
        self.process.readyReadStandardOutput.connect(self._read)
        self.process.finished.connect(lambda code, _status: self._done(name, code))
        self.run_button.setEnabled(False)
        self.dry_run_button.setEnabled(False)
        self.message.emit(f"calibration: running {name}")
        self.process.start(sys.executable, args)

    def _read(self) -> None:
        text = bytes(self.process.readAllStandardOutput()).decode("utf-8", "replace")
        self.output.moveCursor(self.output.textCursor().MoveOperation.End)
        self.output.insertPlainText(text)

    def _done(self, name: str, code: int) -> None:
        self._read()
        self.run_button.setEnabled(True)
        self.dry_run_button.setEnabled(True)
        if code != 0:
            last = self.output.toPlainText().strip().splitlines()[-1:] or [f"exited with {code}"]
            self.error.emit(f"calibrate {name}", last[0])
        else:
            self.message.emit(f"calibration: {name} done")
        self.refresh()

    def refresh(self) -> None:
        """The store's current set: one row per kind, with its age against the kind's limit."""
        from uartlab.calibration.store import KINDS, CalibrationStore

        self.current.setRowCount(0)
        if not self.store.is_dir():
            return
        try:
            store = CalibrationStore(self.store)
            current = store.current_set()
            stale = {w.split(":", 1)[0]: w for w in store.stale_warnings(tuple(current))}
        except ValueError as exc:  # a damaged store: say so, keep the window working
            self.error.emit("calibration store", str(exc))
            return
        for kind in KINDS:
            if kind not in current:
                continue
            rec = current[kind]
            r = self.current.rowCount()
            self.current.insertRow(r)
            cells = (kind, rec.path.name if rec.path else "", rec.provenance.created_utc.isoformat(),
                     "stale: " + stale[kind].split(":", 1)[1].strip() if kind in stale else "ok")
            for c, text in enumerate(cells):
                self.current.setItem(r, c, QTableWidgetItem(text))
