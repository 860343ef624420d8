"""Rig panel: which rig.toml (the twin by default, or the lab's), connect/disconnect on a worker thread,
and each device's health from ``rig.health()`` (state, sample rate, samples, errors, last error, age).
"""

from __future__ import annotations

import math
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)
from uartlab.app.gui.file_chooser import choose

COLUMNS = ("device", "backend", "state", "rate [Hz]", "samples", "errors", "last sample [s]", "last error")
STATE_COLOURS = {"streaming": "#2e7d32", "starting": "#f9a825", "silent": "#e65100", "failed": "#c62828",
                 "stopped": "#757575"}
UNCONFIRMED_COLOUR = "#757575"   # a state the core can no longer confirm (silent or gone)


class RigPanel(QWidget):
    connect_requested = Signal(str)      # rig.toml path, "" = the shipped twin rig
    disconnect_requested = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.config_edit = QLineEdit()
        self.config_edit.setPlaceholderText("the shipped twin rig (app/data/twin_rig.toml)")
        self.config_edit.setToolTip("rig.toml: which devices are real and which are twins")
        self.browse_button = browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        twin = QPushButton("Twin")
        twin.setToolTip("Use the shipped twin rig: every device simulated on this computer")
        twin.clicked.connect(lambda: self.config_edit.setText(""))
        self.connect_button = QPushButton("Connect")
        self.connect_button.clicked.connect(lambda: self.connect_requested.emit(self.config_edit.text().strip()))
        self.disconnect_button = QPushButton("Disconnect")
        self.disconnect_button.clicked.connect(self.disconnect_requested.emit)
        self.tare_button = QPushButton("Tare Nano17")
        self.tare_button.setToolTip("Bias the fingertip sensor with the next DAQ block (it must be unloaded)")
        self.status = QLabel("not connected")
        self.status.setWordWrap(True)   # a long sentence takes lines, not the dock's (and the window's) width
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)

        box = QGroupBox("Rig configuration")
        grid = QGridLayout(box)
        grid.addWidget(QLabel("rig.toml"), 0, 0)
        grid.addWidget(self.config_edit, 0, 1)
        grid.addWidget(browse, 0, 2)
        grid.addWidget(twin, 0, 3)
        buttons = QHBoxLayout()
        for b in (self.connect_button, self.disconnect_button, self.tare_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        lay = QVBoxLayout(self)
        lay.addWidget(box)
        lay.addLayout(buttons)
        lay.addWidget(self.status)
        lay.addWidget(self.table, 1)
        self.set_state("disconnected")

    def _browse(self) -> None:
        start = self.config_edit.text() or str(Path.cwd())
        choose(self, "Rig configuration", start, self.config_edit.setText, name_filter="rig config (*.toml)")

    def set_state(self, state: str, text: str | None = None) -> None:
        """'disconnected' | 'connecting' | 'connected' | 'disconnecting'."""
        self.connect_button.setEnabled(state == "disconnected")
        self.disconnect_button.setEnabled(state == "connected")
        self.tare_button.setEnabled(state == "connected")
        self.config_edit.setEnabled(state == "disconnected")
        self.status.setText(text or state)
        if state == "disconnected":
            self.table.setRowCount(0)

    def show_health(self, health: dict, backends: dict[str, str], unconfirmed: str = "") -> None:
        """Each device's row. ``unconfirmed``: why these states are only the core's last word (it is silent
        or gone): each state then reads "was ..." in grey, with the reason in its tooltip, never a green
        "streaming" for devices nobody is reading."""
        self.table.setRowCount(len(health))
        for row, (name, h) in enumerate(health.items()):
            age = "–" if not math.isfinite(h.last_sample_age_s) else f"{h.last_sample_age_s:.2f}"
            state = f"was {h.state}" if unconfirmed else h.state
            values = (f"{name}: {h.device}", backends.get(name, "?"), state, f"{h.rate_hz:.0f}", str(h.samples),
                      str(h.errors), age, h.last_error)
            for col, v in enumerate(values):
                item = self.table.item(row, col)
                if item is None:
                    item = QTableWidgetItem()
                    self.table.setItem(row, col, item)
                item.setText(v)
                if col == 2:
                    colour = UNCONFIRMED_COLOUR if unconfirmed else STATE_COLOURS.get(h.state, "#000000")
                    item.setForeground(pg_colour(colour))
                    item.setToolTip(unconfirmed)


def pg_colour(hex_colour: str):
    from PySide6.QtGui import QColor

    return QColor(hex_colour)
