"""Calibration tab: run a `uartlab calibrate` procedure, read what it found, see the store's current set.

A procedure drives the rig (or the twin) for seconds to minutes and a model fit runs many simulations,
so each runs as its own process (QProcess), exactly as the command line runs it, and its report streams
into the view; the window never waits. Where it runs: the twin plant in-process, the twin rig through
the real drivers (``--rig twin``), or the rig of the Rig tab (``--rig rig.toml``) - which the procedure
opens itself, so that rig must be disconnected here first. The model fit takes recorded sessions
(``--session``), else trials it records on the twin. What a procedure writes goes into the store folder chosen here
(the one rig.toml's ``[calibration] store`` names); the table lists the store's current set with each
calibration's age, stale ones flagged - the same staleness a run warns about before it starts.

A procedure at a rig moves servos outside the rig core, so the window's E-stop reaches it as a signal: the
procedure's own E-stop (app/cli/calibrate.py: torque off on all six, read back, said in its output), or, before
its rig is up and nothing has moved, the stop. Closing the window stops it the same way (the servos hold)
instead of killing it.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
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
from uartlab.app.gui.file_chooser import choose
from uartlab.app.rig.config import TWIN_RIG
from uartlab.sim.names import ARM_FORMS

COMBO_CHARS = 24   # a choice's box shows this many characters; the open list shows each choice whole

# (command-line name, what the operator sees)
PROCEDURES = (
    ("sea", "SEA: pot volts -> tendon force (loading and unloading)"),
    ("nano17", "Nano17: .cal file, tool transform, tare"),
    ("servo-zero", "Servo zero: slack-to-taut point per tendon"),
    ("mocap", "Mocap: base frame and marker offsets"),
    ("moment-arms", "Moment arms: ACT sweeps -> r(theta) per tendon and joint"),
    ("model", "Model parameters: Coulomb, damping, contact law (many simulations)"),
)
# The forms a moment-arm calibration writes (sim/names.py ARM_FORMS), as the operator reads them.
ARM_FORM_TEXT = {"polynomial": "as polynomials in each joint's angle (the model's defaults' form)",
                 "table": "as tables: CSV grids every 10 deg, MCP arms over both MCP angles"}
# (what the operator sees, where): "" the twin plant in-process, "twin" the twin rig, "rig" the Rig tab's
WHERE = (
    ("the twin plant, in-process (fastest)", ""),
    ("the twin rig, through the drivers", "twin"),
    ("the rig of the Rig tab (disconnected)", "rig"),
)


class CalibrationPanel(QWidget):
    message = Signal(str)      # for the window's log
    error = Signal(str, str)   # (what, why)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.process: QProcess | None = None
        self.at_rig = False   # the running procedure drives a rig (--rig): it moves servos
        # (the Rig tab's rig.toml, "" = the shipped twin; whether that rig is connected): set by the window
        self.rig_source: Callable[[], tuple[str, bool]] = lambda: ("", False)
        self.procedure = QComboBox()
        for name, text in PROCEDURES:
            self.procedure.addItem(text, name)
        self.where = QComboBox()
        for text, where in WHERE:
            self.where.addItem(text, where)
        self.form = QComboBox()
        for form in ARM_FORMS:
            self.form.addItem(ARM_FORM_TEXT[form], form)
        for combo in (self.procedure, self.where, self.form):   # long entries show in the open list
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(COMBO_CHARS)
        self.sessions_edit = QLineEdit()
        self.sessions_edit.setPlaceholderText("recorded session .h5 files, separated by ';' (empty: trials "
                                              "recorded on the twin)")
        self.sessions_button = QPushButton("Sessions...")
        self.sessions_button.clicked.connect(self._choose_sessions)
        self.procedure.currentIndexChanged.connect(self._procedure_changed)
        self.store_edit = QLineEdit("calibrations")
        self.store_edit.setToolTip("the calibration store folder (rig.toml's [calibration] store)")
        self.run_button = QPushButton("Run")
        self.dry_run_button = QPushButton("Dry run (write nothing)")
        self.run_button.clicked.connect(lambda: self.run(dry_run=False))
        self.dry_run_button.clicked.connect(lambda: self.run(dry_run=True))
        # A procedure at a real rig asks the operator (a weight hung, then Enter) on its stdin: this is the key.
        self.enter_button = QPushButton("Enter: done, go on")
        self.enter_button.setToolTip("answer the procedure's prompt, as Enter at its terminal")
        self.enter_button.setEnabled(False)
        self.enter_button.clicked.connect(self.press_enter)
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
        where_row = QHBoxLayout()
        where_row.addWidget(QLabel("on"))
        where_row.addWidget(self.where)
        where_row.addWidget(self.form)
        where_row.addWidget(self.sessions_edit, 4)
        where_row.addWidget(self.sessions_button)
        where_row.addStretch(1)
        where_row.addWidget(self.enter_button)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addLayout(where_row)
        layout.addWidget(self.output, 2)
        layout.addWidget(QLabel("current set in the store"))
        layout.addWidget(self.current, 1)
        self._procedure_changed()
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
        if name == "model":
            sessions = self.sessions()
            if sessions:
                args += ["--session", *sessions]
        elif self.where.currentData() == "twin":
            args += ["--rig", TWIN_RIG]
        elif self.where.currentData() == "rig":
            config, connected = self.rig_source()
            if connected:
                self.error.emit(f"calibrate {name}", "disconnect the rig first (Rig tab): the procedure opens "
                                                     "the devices itself")
                return
            args += ["--rig", config or TWIN_RIG]
        if name == "moment-arms":
            args += ["--form", self.form.currentData()]
        if dry_run:
            args.append("--dry-run")
        self.output.setPlainText(f"$ uartlab {' '.join(args[2:])}\n")   # from `calibrate` on
        self.launch(args, name)

    def launch(self, args: list[str], name: str) -> None:
        """``python args...`` as the procedure ``name``, its output streamed into the view."""
        self.at_rig = "--rig" in args
        process = self.process = QProcess(self)
        process.setProcessChannelMode(QProcess.ProcessChannelMode.MergedChannels)
        process.readyReadStandardOutput.connect(lambda: self._read(process))
        process.finished.connect(lambda code, _status: self._done(process, name, code))
        self.run_button.setEnabled(False)
        self.dry_run_button.setEnabled(False)
        self.message.emit(f"calibration: running {name}")
        process.start(sys.executable, args)

    def estop(self) -> str | None:
        """The window's E-stop, for a procedure moving a rig: what was sent to it (None: nothing moving here)."""
        from uartlab.app.cli.calibrate import ESTOP_SIGNAL, RIG_UP

        if not (self.running() and self.at_rig):
            return None
        up = RIG_UP in self.output.toPlainText()
        sent = ESTOP_SIGNAL if up else signal.SIGTERM
        os.kill(int(self.process.processId()), sent)   # type: ignore[union-attr]  # running() above
        return "its E-stop (torque off)" if up else "stop (its rig is not up yet: nothing has moved)"

    def stop_for_close(self, timeout_ms: int = 15000) -> None:
        """The window is closing: a running procedure stops as at Ctrl-C (servos hold, nothing written), and
        is killed only if it does not end in ``timeout_ms`` (Qt would kill it outright with its QProcess)."""
        process = self.process
        if not self.running() or process is None:
            return
        process.terminate()   # SIGTERM
        if not process.waitForFinished(timeout_ms):
            process.kill()
            process.waitForFinished(2000)

    def sessions(self) -> list[str]:
        return [p.strip() for p in self.sessions_edit.text().split(";") if p.strip()]

    def _procedure_changed(self) -> None:
        model = self.procedure.currentData() == "model"   # fitted to recordings, not run at a rig
        self.where.setEnabled(not model)
        self.sessions_edit.setVisible(model)
        self.sessions_button.setVisible(model)
        self.form.setVisible(self.procedure.currentData() == "moment-arms")

    def _choose_sessions(self) -> None:
        choose(self, "Sessions to fit the model to", str(Path.cwd()),
               lambda paths: self.sessions_edit.setText("; ".join(paths)), mode="files",
               name_filter="uartlab sessions (*.h5)")

    def _read(self, process: QProcess) -> None:
        from uartlab.app.procedures.at_rig import PRESS_ENTER

        text = bytes(process.readAllStandardOutput().data()).decode("utf-8", "replace")
        self.output.moveCursor(self.output.textCursor().MoveOperation.End)
        self.output.insertPlainText(text)
        last_line = self.output.document().lastBlock().text()
        if text and last_line.endswith(PRESS_ENTER):   # the prompt, unanswered (it may come in pieces)
            self.enter_button.setEnabled(True)
            self.message.emit(f"calibration: {last_line.strip()}")

    def press_enter(self) -> None:
        if self.running() and self.process is not None:
            self.process.write(b"\n")
            self.output.insertPlainText("\n")
        self.enter_button.setEnabled(False)

    def _done(self, process: QProcess, name: str, code: int) -> None:
        self._read(process)
        self.enter_button.setEnabled(False)
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
