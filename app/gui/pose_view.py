"""The finger's pose, measured (solid) and model (dashed), in the two planes of the paper's Fig. 13.

The bones are the model's forward kinematics (``sim.Finger.joint_positions``: MCP, PIP, DIP, fingertip)
of the newest joint angles, drawn in the paper's X-Y plane (side view, where flexion shows) and Z-Y plane
(front view, where abduction shows), named as the paper names them (app/paper_frame.py: the same planes
and labels as the compare report's Fig. 13). The start pose of the current source is kept as a faint
reference (the paper's "Flex" label).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGraphicsItem, QVBoxLayout, QWidget
from uartlab.app.gui.buffers import LiveData
from uartlab.app.gui.live_plots import POSE_CHANNELS
from uartlab.app.palette import MEASURED_COLOUR, MODEL_COLOUR, NEUTRAL
from uartlab.app.paper_frame import PLANES

MEASURED, MODEL = ((c.stream, c.field) for c in POSE_CHANNELS)


class PoseView(QWidget):
    def __init__(self, finger=None, parent: QWidget | None = None):
        super().__init__(parent)
        if finger is None:
            from uartlab.sim import Finger  # the model's kinematics; imported here so the GUI starts fast
            finger = Finger()
        self.finger = finger
        self.widget = pg.GraphicsLayoutWidget()
        self.setMinimumWidth(280)
        layout = QVBoxLayout(self)
        layout.addWidget(self.widget)
        layout.setContentsMargins(0, 0, 0, 0)
        self.curves: list[dict[str, pg.PlotDataItem]] = []
        self.start_pose: np.ndarray | None = None
        rest = self.finger.joint_positions(np.zeros(4)) * 1e3
        reach = float(np.linalg.norm(rest[-1] - rest[0])) * 1.1
        for k, plane in enumerate(PLANES):
            item = self.widget.addPlot(row=2 * k + 1, col=0, title=plane.title)
            item.setLabel("bottom", plane.horizontal.label)
            item.setLabel("left", plane.vertical.label)
            item.setAspectLocked(True)
            item.setMouseEnabled(x=False, y=False)
            item.hideButtons()
            item.showGrid(x=True, y=True, alpha=0.25)
            for axis in ("left", "bottom"):   # axes and grid drawn once into a pixmap, blitted at each redraw
                item.getAxis(axis).setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
            lo = -0.4 * reach if plane.horizontal.index == 0 else -reach   # the finger points distal (+X)
            item.setXRange(lo, reach, padding=0)
            item.setYRange(-reach, 0.4 * reach, padding=0)
            legend = pg.LegendItem(colCount=3, labelTextSize="8pt", pen=None, brush=None)  # above, not on the bones
            self.widget.addItem(legend, row=2 * k, col=0)
            self.curves.append({
                "start": item.plot(pen=pg.mkPen(NEUTRAL, width=1, style=Qt.PenStyle.DotLine)),
                "measured": item.plot(pen=pg.mkPen(MEASURED_COLOUR, width=3), symbol="o", symbolSize=7,
                                      symbolBrush=MEASURED_COLOUR),
                "model": item.plot(pen=pg.mkPen(MODEL_COLOUR, width=2, style=Qt.PenStyle.DashLine), symbol="o",
                                   symbolSize=5, symbolBrush=None, symbolPen=MODEL_COLOUR),
            })
            for name in ("start", "measured", "model"):
                legend.addItem(self.curves[-1][name], name)
        self._axes = [(p.horizontal.index, p.vertical.index) for p in PLANES]

    def bones_mm(self, angles_rad: np.ndarray) -> np.ndarray:
        """(4, 3) MCP, PIP, DIP, fingertip in mm for joint angles (MCP_AB MCP_FE PIP DIP, rad)."""
        return self.finger.joint_positions(np.asarray(angles_rad, dtype=float)) * 1e3

    def _draw(self, key: str, angles: np.ndarray | None) -> None:
        if angles is None or angles.shape != (4,) or not np.all(np.isfinite(angles)):
            for c in self.curves:
                c[key].setData([], [])
            return
        pts = self.bones_mm(angles)
        for c, (a, b) in zip(self.curves, self._axes, strict=True):
            c[key].setData(pts[:, a], pts[:, b])

    def refresh(self, data: LiveData) -> None:
        measured = data.latest(*MEASURED)
        if self.start_pose is None and measured is not None and np.all(np.isfinite(measured)):
            self.start_pose = measured.copy()
            self._draw("start", self.start_pose)
        self._draw("measured", measured)
        self._draw("model", data.latest(*MODEL))

    def clear(self) -> None:
        self.start_pose = None
        for key in ("start", "measured", "model"):
            self._draw(key, None)
