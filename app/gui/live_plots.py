"""Live plots: tendon tensions, joint angles, fingertip force and servo excursions over a scrolling window,
measured solid and model dashed, with residuals on demand: the live model's own residual fields
(measured − model, drawn as the session file records them). Every channel names a field its producer
declares (the rig's, the runner's and the live model's stream specs); tests/app/gui/test_gui_channels.py
holds them to it.

Everything drawn comes from ``LiveData`` rings; ``refresh()`` (called by the window's frame timer) only
hands views of them to the curves (app/gui/live_curves.py: one item per ring). The x axis is "seconds
before the newest sample" so live data and a replay look the same, and the axis never has to be
re-ranged. Each plot's legend is a row of its own above it, never on the curves; markers for the tare,
trial starts and trips scroll with the data
(app/gui/event_markers.py). Colours: app/palette.py, the same in the report's figures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QGraphicsItem, QHBoxLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget
from uartlab.app.gui.buffers import Channel, LiveData
from uartlab.app.gui.event_markers import Markers, PlotMarkers
from uartlab.app.gui.live_curves import CurveRow, CurveSet
from uartlab.app.palette import GRID_COLOUR, NEUTRAL, colour
from uartlab.schema import ACTUATORS, DAQ, JOINTS_IK, MODEL, RUNNER
from uartlab.sim.names import JOINTS, TENDONS
from uartlab.streams import Event

GRID_PEN = pg.mkPen(GRID_COLOUR, width=1)
GRID_HALF_HEIGHT = 1e6    # the grid lines' reach in y: beyond any plotted value (N, deg, mm)
TIME_LABEL = "time [s] (0 = newest sample)"
LEGEND_COLUMNS = 4
RESIDUAL = "measured − model"   # the sign of the live model's residual fields (core/schema.py MODEL)


@dataclass(frozen=True)
class PlotSpec:
    key: str
    title: str
    label: str                     # y-axis label with its unit
    names: tuple[str, ...]         # one per curve
    scale: float                   # SI value -> displayed unit
    unit: str                      # for the read-outs in the legend
    measured: Channel
    model: Channel | None = None   # drawn dashed in the same colours
    model_name: str = "model"      # the dashed lines' name in the legend
    legend: tuple[str, ...] = ()   # the curves' names in the legend, when more than ``names``
    residual: Channel | None = None  # measured − model as the live model records it


# The markers' names are written on one plot; the others draw the same lines at the same times. Text items
# re-lay-out with their plot's view: labels on all four cost a fifth of the frame rate (bench gui 43 vs 52 fps).
LABELLED_PLOT = "tension"

PLOTS = (
    PlotSpec("tension", "Tendon tension", "tension [N]", TENDONS, 1.0, "N",
             Channel(DAQ.stream, DAQ.tendon_force_N), Channel(MODEL.stream, MODEL.tendon_force_N),
             residual=Channel(MODEL.stream, MODEL.residual_tendon_force_N)),
    PlotSpec("angles", "Joint angles (+ flexion, + abduction)", "angle [deg]", JOINTS, 180.0 / math.pi, "deg",
             Channel(JOINTS_IK.stream, JOINTS_IK.angles_rad), Channel(MODEL.stream, MODEL.joint_angles_rad),
             residual=Channel(MODEL.stream, MODEL.residual_joint_angles_rad)),
    # Measured and model alike: the force on the fingertip in the world frame (X distal, Y radial, Z dorsal),
    # the Nano17's reading turned by sim.surface.fingertip_force_from_sensor for the trial's surface.
    PlotSpec("force", "Force on the fingertip (world frame)", "force [N]", ("X", "Y", "Z"), 1.0, "N",
             Channel(MODEL.stream, MODEL.measured_fingertip_force_N), Channel(MODEL.stream, MODEL.fingertip_force_N),
             residual=Channel(MODEL.stream, MODEL.residual_fingertip_force_N),
             legend=("X distal", "Y radial", "Z dorsal")),
    # The model has no servo state; the runner's commanded excursion is what the measured one should follow.
    PlotSpec("excursion", "Servo excursion", "excursion [mm]", TENDONS, 1e3, "mm",
             Channel(ACTUATORS.stream, ACTUATORS.excursion_m), Channel(RUNNER.stream, RUNNER.command_m),
             model_name="commanded"),
)
POSE_CHANNELS = (Channel(JOINTS_IK.stream, JOINTS_IK.angles_rad), Channel(MODEL.stream, MODEL.joint_angles_rad))


def channels() -> list[Channel]:
    """Every channel the live views draw (what LiveData keeps)."""
    out: list[Channel] = []
    for p in PLOTS:
        out += [c for c in (p.measured, p.model, p.residual) if c is not None]
    return list(dict.fromkeys(out + list(POSE_CHANNELS)))


def _time_grid(window_s: float) -> pg.PlotCurveItem:
    """Vertical lines at every whole second of the time axis, as one NaN-separated curve."""
    ks = -np.arange(1, int(window_s), dtype=float)
    x = np.repeat(ks, 3)
    y = np.tile([-GRID_HALF_HEIGHT, GRID_HALF_HEIGHT, np.nan], ks.size)
    x[2::3] = np.nan
    return pg.PlotCurveItem(x, y, pen=GRID_PEN, connect="finite")


def pen(name: str, dashed: bool = False, width: float = 1.0) -> pg.QtGui.QPen:
    """Width 1 on purpose: Qt's raster engine draws 1-pixel lines several times faster than wider ones."""
    p = pg.mkPen(colour(name) if name else NEUTRAL, width=width)
    if dashed:
        p.setStyle(Qt.PenStyle.DashLine)
    return p


class _Plot:
    """One PlotItem: measured curves, model curves, and a residual PlotItem below it (hidden until asked).

    Speed (the frame budget is 16 ms for everything): a ring's curves are one item (live_curves), and the
    y range is set here with hysteresis instead of pyqtgraph's per-frame auto-range: a range that changes
    every frame re-lays-out and redraws the axes' text each frame, which costs more than the curves.
    """

    def __init__(self, spec: PlotSpec, item: pg.PlotItem, residual: pg.PlotItem | None, legend: pg.LegendItem,
                 window_s: float):
        self.spec, self.item, self.residual, self.legend = spec, item, residual, legend
        item.setTitle(spec.title)
        self.curve_sets = {"measured": self._curves(item, [pen(n) for n in spec.names])}
        if spec.model:
            self.curve_sets["model"] = self._curves(item, [pen(n, dashed=True) for n in spec.names])
        if residual is not None:
            self.curve_sets["residual"] = self._curves(residual, [pen(n) for n in spec.names])
        for curve, name in zip(self.measured, spec.legend or spec.names, strict=True):
            legend.addItem(curve, name)
        if spec.model:   # what dashed means here, in a neutral colour
            legend.addItem(pg.PlotDataItem(pen=pen("", dashed=True)), spec.model_name)
        self.ranges: dict[int, tuple[float, float]] = {}
        waiting = ("shown during a trial (with the live model)" if spec.measured.stream == MODEL.stream
                   else "no data from this source yet")
        self.waiting = pg.TextItem(waiting,
                                   color="#888888", anchor=(0.5, 0.5))
        item.addItem(self.waiting, ignoreBounds=True)
        self.waiting.setPos(-window_s / 2, 0.5)
        if residual is not None:   # the sign, as the file records it, over the residual row
            residual.setTitle(f"residual: {RESIDUAL}", size="8pt")
        for plot, label in ((item, spec.label), (residual, f"residual [{spec.unit}]")):
            if plot is None:
                continue
            plot.setLabel("left", label)
            plot.setLabel("bottom", TIME_LABEL)
            # A grid drawn by the axes would make them repaint (text and all) with every frame: one
            # faint line per second instead, on the fixed time axis, all of them one path (one InfiniteLine
            # per second cost more Python per frame than the curves).
            plot.addItem(_time_grid(window_s), ignoreBounds=True)
            plot.setXRange(-window_s, 0.0, padding=0)
            plot.setYRange(0.0, 1.0, padding=0)
            plot.disableAutoRange()
            plot.setMouseEnabled(x=False, y=False)
            plot.hideButtons()
            for axis in ("left", "bottom"):
                plot.getAxis(axis).enableAutoSIPrefix(False)
                # Drawn once into a pixmap and blitted each frame until its range or size changes.
                plot.getAxis(axis).setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.markers = [PlotMarkers(item, labels=spec.key == LABELLED_PLOT)]
        if residual is not None:
            self.markers.append(PlotMarkers(residual, labels=False))
        if residual is not None:
            residual.setXLink(item)

    @staticmethod
    def _curves(plot: pg.PlotItem, pens: list) -> CurveSet:
        curves = CurveSet(pens)
        plot.addItem(curves, ignoreBounds=True)   # the plot's ranges are set here, not found from the data
        return curves

    def _rows(self, kind: str) -> list[CurveRow]:
        curves = self.curve_sets.get(kind)
        return curves.rows if curves is not None else []

    @property
    def measured(self) -> list[CurveRow]:
        return self._rows("measured")

    @property
    def model(self) -> list[CurveRow]:
        return self._rows("model")

    @property
    def res(self) -> list[CurveRow]:
        return self._rows("residual")

    def _fit(self, plot: pg.PlotItem, lo: float, hi: float) -> None:
        """Widen at once when data leaves the range; shrink only when it uses less than a third of it."""
        if not (np.isfinite(lo) and np.isfinite(hi)):
            return
        if hi - lo < 1e-9:
            lo, hi = lo - 0.5, hi + 0.5
        cur = self.ranges.get(id(plot))
        if cur is not None and cur[0] <= lo and hi <= cur[1] and (hi - lo) > (cur[1] - cur[0]) / 3:
            return
        pad = 0.1 * (hi - lo)
        self.ranges[id(plot)] = (lo - pad, hi + pad)
        plot.setYRange(lo - pad, hi + pad, padding=0)

    def refresh(self, data: LiveData, now_s: float, residuals: bool) -> int:
        """Hand the newest ring views to the curves; returns how many points were set."""
        s = self.spec
        points = 0
        lo, hi = np.inf, -np.inf
        meas = data.get(s.measured.stream, s.measured.field)
        self.waiting.setVisible(meas is None)
        if meas is not None and meas.n:
            n, (m_lo, m_hi) = _draw(self.curve_sets["measured"], meas, now_s, s.scale)
            points += n
            lo, hi = min(lo, m_lo), max(hi, m_hi)
        model = data.get(s.model.stream, s.model.field) if s.model else None
        if model is not None and model.n:
            n, (m_lo, m_hi) = _draw(self.curve_sets["model"], model, now_s, s.scale)
            points += n
            lo, hi = min(lo, m_lo), max(hi, m_hi)
        res_curves = self.curve_sets.get("residual")
        res = data.get(s.residual.stream, s.residual.field) if residuals and s.residual else None
        if res_curves is not None and res is not None and res.n:
            n, r_range = _draw(res_curves, res, now_s, s.scale)
            points += n
            self._fit(self.residual, *r_range)
        self._fit(self.item, lo, hi)
        return points

    def draw_markers(self, markers: Markers, now_s: float, window_s: float) -> None:
        shown = markers.within(now_s - window_s, now_s)
        for m in self.markers:
            if m.plot.isVisible():
                m.draw(shown, now_s, window_s)

    def clear(self) -> None:
        for curves in self.curve_sets.values():
            curves.clear()
        for m in self.markers:
            m.clear()
        self.ranges.clear()

    def readout(self, data: LiveData) -> str:
        """'tension: FDP 3.21 FDS 0.30 ... N' from the newest raw sample."""
        latest = data.latest(self.spec.measured.stream, self.spec.measured.field)
        if latest is None:
            return f"<b>{self.spec.key}</b>: –"
        vals = " ".join(f"{n} {v * self.spec.scale:.2f}" if np.isfinite(v) else f"{n} –"
                        for n, v in zip(self.spec.names, latest, strict=False))
        return f"<b>{self.spec.key}</b>: {vals} {self.spec.unit}"


def _draw(curves: CurveSet, ring, now_s: float, scale: float) -> tuple[int, tuple[float, float]]:
    """One ring's newest view onto its curves (one per row), seconds before ``now_s``, scaled to the plot's
    unit; returns the points handed over and the range of their finite values (inf, -inf: none)."""
    t, y = ring.view()
    x = t - now_s
    ys = y * scale
    lo, hi = _finite_range(ys, np.inf, -np.inf)
    bounds = (float(x[0]), float(x[-1]), lo, hi) if x.size and math.isfinite(lo) else None
    curves.set_data(x, ys, bounds)
    return x.size * min(len(curves.rows), ys.shape[0]), (lo, hi)


def _finite_range(y: np.ndarray, lo: float, hi: float) -> tuple[float, float]:
    # ``initial``: all NaN (a stream with no value yet) gives +-inf, without numpy's all-NaN warning
    y_lo, y_hi = np.nanmin(y, initial=np.inf), np.nanmax(y, initial=-np.inf)
    if not (math.isfinite(y_lo) and math.isfinite(y_hi)):
        finite = y[np.isfinite(y)]   # +-inf among the values: the finite ones only
        if finite.size == 0:
            return lo, hi
        y_lo, y_hi = finite.min(), finite.max()
    return min(lo, float(y_lo)), max(hi, float(y_hi))


class LivePlots(QWidget):
    """The four live plots (2 x 2), each with its legend row above it and an optional residual row under it."""

    def __init__(self, window_s: float, parent: QWidget | None = None):
        super().__init__(parent)
        self.window_s = window_s
        bar = QHBoxLayout()
        self.residuals_box = QCheckBox(f"Residuals ({RESIDUAL}, as recorded)")
        self.residuals_box.toggled.connect(self._show_residuals)
        self.freeze_box = QCheckBox("Freeze display")
        self.freeze_box.setToolTip("Stop redrawing to look at the curves; data keeps arriving underneath.")
        self.readout_label = QLabel("")
        self.readout_label.setTextFormat(Qt.TextFormat.RichText)
        self.readout_label.setStyleSheet("font-family: monospace; font-size: 8pt")
        self.readout_label.setWordWrap(True)   # a narrow window wraps the numbers instead of growing past the screen
        bar.addWidget(self.residuals_box)
        bar.addWidget(self.freeze_box)
        bar.addStretch(1)
        self.layout_widget = pg.GraphicsLayoutWidget()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(bar)
        lay.addWidget(self.readout_label)
        lay.addWidget(self.layout_widget, 1)
        self.plots: dict[str, _Plot] = {}
        self.markers = Markers()
        g = self.layout_widget
        for k, spec in enumerate(PLOTS):
            row, col = 3 * (k // 2), k % 2
            # At most four entries a row: a wider legend would widen its column past the window.
            legend = pg.LegendItem(colCount=LEGEND_COLUMNS, labelTextSize="8pt", verSpacing=-8, horSpacing=4,
                                   pen=None, brush=None)
            legend.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)   # its entries side by side
            g.addItem(legend, row=row, col=col)
            g.ci.layout.setAlignment(legend, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignBottom)
            item = g.addPlot(row=row + 1, col=col)
            residual = g.addPlot(row=row + 2, col=col) if spec.residual is not None else None
            self.plots[spec.key] = _Plot(spec, item, residual, legend, window_s)
        self._show_residuals(False)

    def _show_residuals(self, on: bool) -> None:
        for p in self.plots.values():
            # The residual row shares the time axis: the label goes under it, and it takes a third of the height.
            p.item.setLabel("bottom", "" if on and p.residual is not None else TIME_LABEL)
            if p.residual is not None:
                p.residual.setVisible(on)
                p.residual.setLabel("bottom", TIME_LABEL if on else "")
                p.residual.setMinimumHeight(110 if on else 0)
                p.residual.setMaximumHeight(130 if on else 0)
                if not on:
                    p.curve_sets["residual"].clear()

    def add_event(self, e: Event) -> None:
        """An Event from the hub (live) or the file (replay): a marker if it is a tare, trial start or trip."""
        self.markers.add(e)

    def refresh(self, data: LiveData, now_s: float | None = None) -> int:
        """Draw the rings with time 0 at ``now_s`` (live: the host clock; replay: the newest sample)."""
        now_s = data.now_s if now_s is None else now_s
        if self.freeze_box.isChecked() or not math.isfinite(now_s) or not math.isfinite(data.now_s):
            return 0
        res = self.residuals_box.isChecked()
        points = sum(p.refresh(data, now_s, res) for p in self.plots.values())
        for p in self.plots.values():
            p.draw_markers(self.markers, now_s, self.window_s)
        return points

    def readouts(self, data: LiveData) -> None:
        """The newest values as numbers (a QLabel: cheaper than re-laying-out the plots' legends)."""
        parts = [p.readout(data) for p in self.plots.values()]
        self.readout_label.setText("<br>".join(" &nbsp;│&nbsp; ".join(parts[i:i + 2]) for i in range(0, len(parts), 2)))

    def clear(self) -> None:
        self.markers.clear()
        for p in self.plots.values():
            p.clear()
