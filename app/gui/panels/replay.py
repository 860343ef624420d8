"""Replay panel: open a session file, a timeline with its trials and trips, play/pause/seek/speed.

The file is played by ``ReplayRig`` (app/record/player.py) into its own Hub; the window attaches every live view to
that hub exactly as it does to the rig's, so whatever works live works on a replay. The cursor stands at the
newest time the plots show; a replay that cannot keep the chosen speed says how far behind it is.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget
from uartlab.app.gui.file_chooser import choose
from uartlab.streams import EventKind

SPEEDS = ("0.25", "0.5", "1", "2", "5", "10", "max")
OUTCOME_BRUSH = {"settled": (46, 125, 50, 60)}
OTHER_BRUSH = (198, 40, 40, 60)
ALERT_KINDS = (EventKind.TRIP, EventKind.ESTOP, EventKind.FAULT)
PACE_WIDTH = 330       # px: the longest pace text fits, so the row does not jump when it appears
BEHIND_SHOWN_S = 0.5   # lag under this is a frame or two of drawing: not worth an operator's attention


class ReplayPanel(QWidget):
    open_requested = Signal(str)
    play_requested = Signal()
    pause_requested = Signal()
    seek_requested = Signal(float)      # recorded host time, s
    speed_changed = Signal(object)      # float or "max"
    live_requested = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.t0 = 0.0
        self.span_s = 0.0
        self.open_button = QPushButton("Open session…")
        self.open_button.clicked.connect(self._browse)
        self.play_button = QPushButton("▶ Play")
        self.play_button.clicked.connect(self._toggle)
        self.playing = False
        self.speed_combo = QComboBox()
        self.speed_combo.addItems(SPEEDS)
        self.speed_combo.setCurrentText("1")
        self.speed_combo.currentTextChanged.connect(
            lambda s: self.speed_changed.emit("max" if s == "max" else float(s)))
        self.loop_box = QCheckBox("loop")
        self.live_button = QPushButton("Back to live rig")
        self.live_button.clicked.connect(self.live_requested.emit)
        self.info = QLabel("no session file open")
        self.info.setWordWrap(True)
        self.position = QLabel("–")
        self.pace = QLabel("")   # the speed kept, or how far behind it the view is
        self.pace.setMinimumWidth(PACE_WIDTH)
        self.last_folder = ""

        self.timeline = pg.PlotWidget()
        self.timeline.setMaximumHeight(80)
        self.timeline.setMouseEnabled(x=False, y=False)
        self.timeline.hideAxis("left")
        self.timeline.setLabel("bottom", "session time [s]")
        self.timeline.setYRange(0, 1.3, padding=0)
        self.timeline.getAxis("bottom").enableAutoSIPrefix(False)
        self.timeline.hideButtons()
        self.time_cursor = pg.InfiniteLine(0, movable=True, pen=pg.mkPen("#ffffff", width=2))
        self.time_cursor.sigPositionChangeFinished.connect(lambda line: self._seek_rel(line.value()))
        self.timeline.addItem(self.time_cursor)
        self.timeline.scene().sigMouseClicked.connect(self._clicked)
        self._marks: list[pg.GraphicsObject] = []

        row = QHBoxLayout()
        for w in (self.open_button, self.play_button, QLabel("speed ×"), self.speed_combo, self.loop_box):
            row.addWidget(w)
        row.addStretch(1)
        row.addWidget(self.live_button)
        where = QHBoxLayout()   # its own row: the window keeps a laptop screen's width
        where.addWidget(self.pace)
        where.addStretch(1)
        where.addWidget(self.position)
        lay = QVBoxLayout(self)
        lay.addLayout(row)
        lay.addLayout(where)
        lay.addWidget(self.timeline)
        lay.addWidget(self.info)
        self.set_enabled(False)
        self.time_cursor.setVisible(False)

    # ------------------------------------------------------------ user actions
    def _browse(self) -> None:
        choose(self, "Session file", self.last_folder, self.open_requested.emit, name_filter="session (*.h5 *.hdf5)")

    def _toggle(self) -> None:
        (self.pause_requested if self.playing else self.play_requested).emit()

    def _clicked(self, ev) -> None:
        if self.span_s <= 0:
            return
        vb = self.timeline.getPlotItem().vb
        pos = vb.mapSceneToView(ev.scenePos())
        self._seek_rel(pos.x())

    def _seek_rel(self, x: float) -> None:
        x = min(max(float(x), 0.0), self.span_s)
        self.time_cursor.setValue(x)
        self.seek_requested.emit(self.t0 + x)

    # ------------------------------------------------------------ shown state
    def set_enabled(self, on: bool) -> None:
        for w in (self.play_button, self.speed_combo, self.loop_box, self.timeline):
            w.setEnabled(on)

    def set_playing(self, playing: bool) -> None:
        self.playing = playing
        self.play_button.setText("❚❚ Pause" if playing else "▶ Play")

    @property
    def speed(self) -> float | str:
        s = self.speed_combo.currentText()
        return "max" if s == "max" else float(s)

    def show_file(self, path: str, t_first: float, t_last: float, trials: list[dict], events: list,
                  complete: bool, streams: dict[str, int]) -> None:
        """Draw the timeline: one shaded span per trial (green settled, red otherwise), a red tick per trip."""
        self.last_folder = str(Path(path).parent)
        self.t0, self.span_s = t_first, max(0.0, t_last - t_first)
        for item in self._marks:
            self.timeline.removeItem(item)
        self._marks.clear()
        self.timeline.setXRange(0, max(self.span_s, 1e-3), padding=0.01)
        for t in trials:
            start = t["start_host_time_s"] - t_first
            stop = t["stop_host_time_s"] - t_first if not math.isnan(t["stop_host_time_s"]) else self.span_s
            brush = OUTCOME_BRUSH.get(t.get("outcome", ""), OTHER_BRUSH)
            region = pg.LinearRegionItem((start, stop), movable=False, brush=pg.mkBrush(*brush))
            label = pg.TextItem(t.get("name", ""), color="#dddddd", anchor=(0, 0))
            label.setPos(start, 1.0)
            for item in (region, label):
                self.timeline.addItem(item)
                self._marks.append(item)
        for e in events:
            if e.kind in ALERT_KINDS:
                line = pg.InfiniteLine(e.host_time_s - t_first, pen=pg.mkPen("#ff1744", width=1,
                                                                            style=Qt.PenStyle.DashLine))
                line.setToolTip(f"{e.kind} ({e.source}): {e.message}")
                self.timeline.addItem(line)
                self._marks.append(line)
        self.time_cursor.setValue(0.0)
        self.time_cursor.setVisible(True)
        counts = ", ".join(f"{k} {v}" for k, v in streams.items())
        closed = 'closed cleanly' if complete else 'NOT closed cleanly (crash or still being written)'
        if not math.isfinite(t_first):   # the session ended before its first sample
            self.info.setText(f"{path}\nno sample recorded: nothing to replay ({len(streams)} streams, {closed})")
            self.position.setText("–")
            self.set_enabled(False)
            return
        self.info.setText(f"{path}\n{self.span_s:.1f} s, {len(trials)} trials, {closed}; samples: {counts}")
        self.set_enabled(True)

    def show_position(self, host_time_s: float, window_s: float) -> None:
        """The cursor at the newest time the plots show (their right edge); the label says which span they show."""
        if not np.isfinite(host_time_s) or self.span_s <= 0:
            return
        x = min(max(host_time_s - self.t0, 0.0), self.span_s)
        if not self.time_cursor.moving:
            self.time_cursor.setValue(x)
        self.position.setText(f"t = {x:.1f} / {self.span_s:.1f} s (plots: {max(0.0, x - window_s):.1f}–{x:.1f} s)")

    def show_pace(self, playing: bool, behind_s: float, achieved: float | None) -> None:
        """Playing: "at 1x", or in orange how far the view is behind the chosen speed and the speed it reaches."""
        if not playing:
            self.pace.setText("paused")
            self.pace.setStyleSheet("")
            return
        speed = self.speed_combo.currentText()
        if speed == "max" or behind_s < BEHIND_SHOWN_S:
            self.pace.setText(f"playing at {speed}x" if speed != "max" else "playing as fast as possible")
            self.pace.setStyleSheet("")
            return
        reached = f", the plots advance at {achieved:.2g}x" if achieved is not None else ""
        self.pace.setText(f"behind by {behind_s:.1f} s at {speed}x{reached}")
        self.pace.setStyleSheet("color: white; background: #e65100; font-weight: bold; padding: 0 4px")
