"""The finger's pose, measured (solid) and model (dashed), in two projections like the paper's Fig. 13.

The bones are the model's forward kinematics (``sim.Finger.joint_positions``: MCP, PIP, DIP, fingertip)
of the newest joint angles. The paper draws the flexion plane and the abduction plane; here they are
labelled in uartlab's world frame (X distal, Y radial, Z dorsal, palm down): the side view X-Z, where
flexion shows, and the front view Y-Z, where abduction shows. The start pose of the current source is
kept as a faint reference (the paper's "Flex" label).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QVBoxLayout, QWidget
from uartlab.app.gui.buffers import LiveData
from uartlab.app.gui.live_plots import POSE_CHANNELS

MEASURED, MODEL = ((c.stream, c.field) for c in POSE_CHANNELS)
PROJECTIONS = (("Side X-Z: flexion", 0, 2, "X distal [mm]", "Z dorsal [mm]"),
               ("Front Y-Z: abduction", 1, 2, "Y radial [mm]", "Z dorsal [mm]"))


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
        for k, (title, a, _, xl, yl) in enumerate(PROJECTIONS):
            item = self.widget.addPlot(row=k, col=0, title=title)
            item.setLabel("bottom", xl)
            item.setLabel("left", yl)
            item.setAspectLocked(True)
            item.setMouseEnabled(x=False, y=False)
            item.hideButtons()
            item.showGrid(x=True, y=True, alpha=0.25)
            item.setXRange(-reach if a != 0 else -0.4 * reach, reach, padding=0)
            item.setYRange(-reach, 0.4 * reach, padding=0)
            item.addLegend(offset=(5, 5), labelTextSize="8pt")
            self.curves.append({
                "start": item.plot(pen=pg.mkPen("#888888", width=1, style=Qt.PenStyle.DotLine), name="start"),
                "measured": item.plot(pen=pg.mkPen("#56B4E9", width=3), symbol="o", symbolSize=7,
                                      symbolBrush="#56B4E9", name="measured"),
                "model": item.plot(pen=pg.mkPen("#E69F00", width=2, style=Qt.PenStyle.DashLine), symbol="o",
                                   symbolSize=5, symbolBrush=None, symbolPen="#E69F00", name="model"),
            })
        self._axes = [(a, b) for _, a, b, *_ in PROJECTIONS]

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
