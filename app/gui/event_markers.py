"""Markers on the live plots' time axis: the Nano17's tare, each trial's start, each trip, E-stop and fault.

A tare shifts the force curves; a marker labelled "tare" at that instant says why. Markers come from the
hub's Events (live: MainWindow.drain; replay: the file's events as the cursor passes them), are kept by
host time, and scroll with the data until they leave the window. Drawn per plot as one NaN-separated
curve per kind (one path, as the time grid) and a text label each, all in one group: their data is set
only when the markers in view change; each frame only moves the group along the time axis.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from uartlab.app.palette import TARE_COLOUR, TRIAL_COLOUR, TRIP_COLOUR
from uartlab.schema import NANO17_TARED, EventKind
from uartlab.streams import Event

MAX_MARKERS = 200          # kept (a window holds a few; a replay seek re-delivers, duplicates are dropped)
MAX_LABELS = 12            # labels drawn per plot: the newest markers in view
LABEL_ROWS = 3             # labels of nearby markers step down so they do not sit on each other
HALF_HEIGHT = 1e6          # the lines' reach in y: beyond any plotted value (N, deg, mm)
TRIAL_START = re.compile(r"start '(?P<name>[^']+)'")


@dataclass(frozen=True)
class Marker:
    t_s: float        # host time
    kind: str         # "tare", "trial", "trip": the line's colour and style
    label: str


STYLES = {"tare": (TARE_COLOUR, Qt.PenStyle.DotLine), "trial": (TRIAL_COLOUR, Qt.PenStyle.DashLine),
          "trip": (TRIP_COLOUR, Qt.PenStyle.SolidLine)}
TRIP_LABELS = {EventKind.TRIP: "trip", EventKind.ESTOP: "E-stop", EventKind.FAULT: "fault"}


def marker_of(e: Event) -> Marker | None:
    """The marker an Event puts on the time axis, or None for the events that do not get one."""
    if e.kind == EventKind.OPERATOR and e.message.startswith(NANO17_TARED):
        return Marker(e.host_time_s, "tare", "tare")
    if e.kind == EventKind.TRIAL and (m := TRIAL_START.match(e.message)):
        return Marker(e.host_time_s, "trial", m["name"])
    if e.kind in TRIP_LABELS:
        return Marker(e.host_time_s, "trip", TRIP_LABELS[EventKind(e.kind)])
    return None


class Markers:
    """The markers in time order, shared by every plot."""

    def __init__(self) -> None:
        self.items: deque[Marker] = deque(maxlen=MAX_MARKERS)

    def add(self, e: Event) -> Marker | None:
        m = marker_of(e)
        if m is None or m in self.items:
            return None
        self.items.append(m)
        if len(self.items) > 1 and self.items[-2].t_s > m.t_s:  # events may arrive a little out of order
            self.items = deque(sorted(self.items, key=lambda k: k.t_s), maxlen=MAX_MARKERS)
        return m

    def clear(self) -> None:
        self.items.clear()

    def within(self, lo_s: float, hi_s: float) -> list[Marker]:
        return [m for m in self.items if lo_s <= m.t_s <= hi_s]


class PlotMarkers:
    """One plot's marker lines (and, with ``labels``, their texts at the top of the view). Items are made
    when a marker first needs them (every item in a plot costs at each repaint, shown or not) and hold
    times relative to ``origin_s``; the group they are in is placed at ``origin_s - now`` each frame."""

    def __init__(self, plot: pg.PlotItem, labels: bool):
        self.plot = plot
        self.group = pg.ItemGroup()
        plot.addItem(self.group, ignoreBounds=True)
        self.lines: dict[str, pg.PlotCurveItem] = {}     # per kind, once one was drawn
        self.labels: list[pg.TextItem] = []
        self.max_labels = MAX_LABELS if labels else 0
        self.origin_s = 0.0
        self._shown: list[Marker] = []
        self._texts: list[tuple[str, str, bool, float]] = []   # each label's (text, kind, left of line, y)

    def _line(self, kind: str) -> pg.PlotCurveItem:
        if kind not in self.lines:
            colour, style = STYLES[kind]
            curve = pg.PlotCurveItem(pen=pg.mkPen(colour, width=1, style=style), connect="finite")
            curve.setParentItem(self.group)
            self.lines[kind] = curve
        return self.lines[kind]

    def _label(self, k: int) -> pg.TextItem:
        while len(self.labels) <= k:
            text = pg.TextItem("", anchor=(0, 0))
            text.setParentItem(self.group)
            self.labels.append(text)
            self._texts.append(("", "", False, np.nan))
        return self.labels[k]

    def _set_lines(self, markers: list[Marker]) -> None:
        """The lines of the markers in view, in times relative to ``origin_s`` (only when they change)."""
        for kind in STYLES:
            xs = np.array([m.t_s - self.origin_s for m in markers if m.kind == kind])
            if xs.size == 0:
                if kind in self.lines:
                    self.lines[kind].setVisible(False)
                continue
            x = np.repeat(xs, 3)
            x[2::3] = np.nan
            curve = self._line(kind)
            curve.setData(x, np.tile([-HALF_HEIGHT, HALF_HEIGHT, np.nan], xs.size))
            curve.setVisible(True)

    def draw(self, markers: list[Marker], now_s: float, window_s: float) -> None:
        if markers != self._shown:
            if markers:
                self.origin_s = markers[0].t_s
            self._set_lines(markers)
            self._shown = list(markers)
        self.group.setPos(self.origin_s - now_s, 0.0)
        shown = markers[-self.max_labels:] if self.max_labels else []
        for text in self.labels[len(shown):]:
            if text.isVisible():
                text.setVisible(False)
        if not shown:
            return
        (_, _), (y_lo, y_hi) = self.plot.viewRange()
        # A row apart: a tenth of the view, and never less than a label's height (a short plot, under
        # its residual row, is ~80 px tall).
        label_px = self._label(0).textItem.boundingRect().height()
        step = max(0.09 * (y_hi - y_lo), label_px * self.plot.getViewBox().viewPixelSize()[1])
        for k, m in enumerate(shown):
            text = self._label(k)
            right = m.t_s - now_s > -0.15 * window_s   # near time 0 the label goes left of its line
            y = y_hi - (k % LABEL_ROWS) * step
            if self._texts[k][:3] != (m.label, m.kind, right):   # setText re-lays-out: only on a change
                text.setText(m.label, color=STYLES[m.kind][0])
                text.setAnchor((1, 0) if right else (0, 0))
            if self._texts[k] != (m.label, m.kind, right, y) or text.pos().x() != m.t_s - self.origin_s:
                text.setPos(m.t_s - self.origin_s, y)
                self._texts[k] = (m.label, m.kind, right, y)
            if not text.isVisible():
                text.setVisible(True)

    def clear(self) -> None:
        self.draw([], 0.0, 1.0)
