"""Recording panel: folder, operator and notes, start/stop, and what is being written (file, duration,
size, samples per stream, and every dropped-sample counter the hub and the recorder keep).
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)
from uartlab.app.gui.file_chooser import choose


def human_size(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000.0
    return f"{n:.1f} GB"


class RecordingPanel(QWidget):
    start_requested = Signal()
    stop_requested = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.folder_edit = QLineEdit("recordings")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        folder_row = QHBoxLayout()
        folder_row.addWidget(self.folder_edit, 1)
        folder_row.addWidget(browse)
        self.operator_edit = QLineEdit()
        self.operator_edit.setPlaceholderText("who runs the session")
        self.notes_edit = QPlainTextEdit()
        self.notes_edit.setPlaceholderText("session notes: setup, anything unusual (stored in the file)")
        self.notes_edit.setMaximumHeight(70)
        self.start_button = QPushButton("● Start recording")
        self.start_button.clicked.connect(self.start_requested.emit)
        self.stop_button = QPushButton("■ Stop recording")
        self.stop_button.clicked.connect(self.stop_requested.emit)
        self.file_label = QLabel("–")
        self.file_label.setWordWrap(True)
        self.duration_label = QLabel("–")
        self.size_label = QLabel("–")
        self.samples_label = QLabel("–")
        self.samples_label.setWordWrap(True)
        self.drops_label = QLabel("–")
        self.drops_label.setWordWrap(True)

        form = QFormLayout()
        form.addRow("folder", folder_row)
        form.addRow("operator", self.operator_edit)
        form.addRow("notes", self.notes_edit)
        buttons = QHBoxLayout()
        buttons.addWidget(self.start_button)
        buttons.addWidget(self.stop_button)
        status = QFormLayout()
        status.addRow("file", self.file_label)
        status.addRow("duration", self.duration_label)
        status.addRow("size", self.size_label)
        status.addRow("samples", self.samples_label)
        status.addRow("dropped", self.drops_label)
        lay = QVBoxLayout(self)
        lay.addLayout(form)
        lay.addLayout(buttons)
        lay.addLayout(status)
        lay.addStretch(1)
        self.set_state("unavailable")

    def _browse(self) -> None:
        choose(self, "Recording folder", self.folder_edit.text() or str(Path.cwd()), self.folder_edit.setText,
               mode="folder")

    @property
    def folder(self) -> Path:
        return Path(self.folder_edit.text().strip() or "recordings")

    @property
    def operator(self) -> str:
        return self.operator_edit.text().strip()

    @property
    def notes(self) -> str:
        return self.notes_edit.toPlainText().strip()

    def set_state(self, state: str) -> None:
        """'unavailable' (no rig) | 'idle' | 'starting' | 'recording' | 'stopping'."""
        self.start_button.setEnabled(state == "idle")
        self.stop_button.setEnabled(state == "recording")
        for w in (self.folder_edit, self.operator_edit):
            w.setEnabled(state in ("idle", "unavailable"))

    def show_status(self, path: str | None, duration_s: float, samples: dict[str, int],
                    drops: dict[str, dict[str, int]]) -> None:
        if path is None:
            return
        self.file_label.setText(str(path))
        self.duration_label.setText(f"{duration_s:.1f} s")
        try:
            self.size_label.setText(human_size(os.path.getsize(path)))
        except OSError:
            self.size_label.setText("–")
        self.samples_label.setText(", ".join(f"{k} {v}" for k, v in samples.items()) or "–")
        lost = {f"{who}/{stream}": n for who, streams in drops.items() for stream, n in streams.items() if n}
        self.drops_label.setText("none" if not lost else ", ".join(f"{k}: {v}" for k, v in lost.items()))
        self.drops_label.setStyleSheet("" if not lost else "color: #c62828; font-weight: bold")
