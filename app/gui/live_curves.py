"""A ring's rows drawn as curves by one graphics item: the live plots' measured, model and residual lines.

The live view draws about forty curves sixty times a second. pyqtgraph's PlotCurveItem spends ~50 µs of
Python per curve and frame on bookkeeping (setData's checks and signals, a QPainterPath built per curve,
its paint's options), as much again as Qt's raster engine takes to draw the line. Here a ring's rows share
one item: new data is an assignment, and the paint draws each row as polylines (one per run of finite
values, NaN is a gap as with ``connect="finite"``) from one reused QPolygonF.

Each row is also a ``CurveRow``: what pyqtgraph's legend reads of a curve (its pen, shown or not, clicked
to hide it) and what a test reads (``getData``).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pyqtgraph.functions as fn
from PySide6.QtCore import QRectF
from PySide6.QtGui import QPen

BOUNDS_PAD = 0.01   # the item's box beyond its data, as a share of the data's extent (for the pen's width)


class CurveSet(pg.GraphicsObject):
    """Rows of y over one x, each in its own pen."""

    def __init__(self, pens: list[QPen]):
        super().__init__()
        self.rows = [CurveRow(self, i, pen) for i, pen in enumerate(pens)]
        self.x = np.empty(0)
        self.ys = np.empty((len(pens), 0))
        self._rect = QRectF()
        self._polygon = fn.create_qpolygonf(0)
        self._points = fn.ndarray_from_qpolygonf(self._polygon)   # shares the polygon's memory

    def set_data(self, x: np.ndarray, ys: np.ndarray, bounds: tuple[float, float, float, float] | None) -> None:
        """``ys``: one row per curve (extra rows are not drawn); ``bounds``: (x min, x max, y min, y max)
        holding every finite point, None when there is none."""
        rect = QRectF()
        if bounds is not None:
            x0, x1, y0, y1 = bounds
            pad_x, pad_y = BOUNDS_PAD * (x1 - x0), BOUNDS_PAD * (y1 - y0)
            rect = QRectF(x0 - pad_x, y0 - pad_y, x1 - x0 + 2 * pad_x, y1 - y0 + 2 * pad_y)
        if rect != self._rect:
            self.prepareGeometryChange()
            self._rect = rect
        self.x, self.ys = x, ys
        self.update()

    def clear(self) -> None:
        self.set_data(np.empty(0), np.empty((len(self.rows), 0)), None)

    def boundingRect(self) -> QRectF:
        return self._rect

    def paint(self, painter, *_args) -> None:
        x = self.x
        if x.size < 2:
            return
        if self._points.shape[0] < x.size:   # a longer ring: room for it (the polygon only ever grows)
            self._polygon = fn.create_qpolygonf(x.size)
            self._points = fn.ndarray_from_qpolygonf(self._polygon)
        for row, y in zip(self.rows, self.ys, strict=False):
            if not row.visible:
                continue
            painter.setPen(row.pen)
            for start, stop in _finite_runs(y):
                n = stop - start
                self._polygon.resize(n)   # within its capacity: the memory ``_points`` views stays put
                self._points[:n, 0] = x[start:stop]
                self._points[:n, 1] = y[start:stop]
                painter.drawPolyline(self._polygon)

    def dataBounds(self, ax: int, frac: float = 1.0, orthoRange=None):
        """For pyqtgraph's auto-range (the live plots set their ranges themselves)."""
        r = self._rect
        if r.isNull():
            return None, None
        return (r.left(), r.right()) if ax == 0 else (r.top(), r.bottom())


class CurveRow:
    """One row of a CurveSet, as a curve: pen, data, shown or hidden."""

    def __init__(self, owner: CurveSet, index: int, pen: QPen):
        self.owner, self.index, self.pen = owner, index, pen
        self.opts = {"pen": pen}   # what the legend's sample draws
        self.visible = True

    def getData(self) -> tuple[np.ndarray, np.ndarray]:  # noqa: N802 - pyqtgraph's name for a curve's data
        ys = self.owner.ys
        return self.owner.x, (ys[self.index] if self.index < ys.shape[0] else np.empty(0))

    def isVisible(self) -> bool:  # noqa: N802 - pyqtgraph's name, which the legend calls
        return self.visible and self.owner.isVisible()

    def setVisible(self, visible: bool) -> None:  # noqa: N802 - the legend hides a curve when clicked
        self.visible = visible
        self.owner.update()


def _finite_runs(y: np.ndarray) -> list[tuple[int, int]]:
    """(start, stop) of each run of at least two finite values."""
    finite = np.isfinite(y)
    if finite.all():
        return [(0, y.size)]
    edges = np.flatnonzero(np.diff(np.concatenate(([False], finite, [False])).astype(np.int8)))
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2], strict=True) if b - a >= 2]
