"""The live plots' curves (app/gui/live_curves.py) as the operator sees them: a stream's gap (NaN) is a gap on
screen, not a line across it; a curve hidden from its legend is not drawn; each row in its own pen."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import QVBoxLayout, QWidget
from uartlab.app.gui.live_curves import CurveSet

RED, BLUE = QColor("#ff0000"), QColor("#0000ff")


@pytest.fixture
def plot(qtbot):
    window = QWidget()   # the top-level widget (a PlotWidget closes its plot once only)
    widget = pg.PlotWidget(background="w")
    QVBoxLayout(window).addWidget(widget)
    window.resize(400, 300)
    widget.setXRange(0.0, 10.0, padding=0)
    widget.setYRange(0.0, 3.0, padding=0)
    widget.hideAxis("left")
    widget.hideAxis("bottom")
    qtbot.addWidget(window)
    window.show()
    yield widget   # the fixture holds the window until the test is over


def pens() -> list[QPen]:
    out = []
    for c in (RED, BLUE):
        p = QPen(c)
        p.setCosmetic(True)
        out.append(p)
    return out


def columns_with(image, colour: QColor, y_value: float, plot) -> set[int]:
    """Pixel columns where ``colour`` appears near the row of ``y_value``."""
    vb = plot.getPlotItem().vb
    y_px = int(round(plot.mapFromScene(vb.mapViewToScene(pg.Point(0.0, y_value))).y()))
    cols = set()
    for x in range(image.width()):
        for y in range(max(0, y_px - 2), min(image.height(), y_px + 3)):
            if image.pixelColor(x, y) == colour:
                cols.add(x)
    return cols


def x_px(plot, x: float) -> int:
    vb = plot.getPlotItem().vb
    return int(round(plot.mapFromScene(vb.mapViewToScene(pg.Point(x, 0.0))).x()))


def test_a_gap_in_the_data_is_a_gap_on_screen_and_each_row_has_its_pen(plot, qtbot):
    curves = CurveSet(pens())
    plot.addItem(curves)
    x = np.linspace(0.0, 10.0, 201)
    ys = np.vstack([np.full_like(x, 1.0), np.full_like(x, 2.0)])
    ys[0, 80:120] = np.nan     # 4 s to 6 s: the first stream sent nothing
    ys[1, 150] = np.nan        # one missing sample
    curves.set_data(x, ys, (0.0, 10.0, 1.0, 2.0))
    qtbot.wait(50)
    image = plot.grab().toImage()

    red = columns_with(image, RED, 1.0, plot)
    assert red and not (red & set(range(x_px(plot, 4.2), x_px(plot, 5.8))))   # nothing drawn across the gap
    assert any(c < x_px(plot, 3.8) for c in red) and any(c > x_px(plot, 6.2) for c in red)
    blue = columns_with(image, BLUE, 2.0, plot)
    assert set(range(x_px(plot, 0.5), x_px(plot, 9.5))) - blue <= set(range(x_px(plot, 7.4), x_px(plot, 7.6) + 1))
    assert not columns_with(image, BLUE, 1.0, plot) and not columns_with(image, RED, 2.0, plot)


def test_a_row_hidden_from_the_legend_is_not_drawn_and_the_legend_says_so(plot, qtbot):
    curves = CurveSet(pens())
    plot.addItem(curves)
    legend = plot.getPlotItem().addLegend()
    for row, name in zip(curves.rows, ("FDP", "FDS"), strict=True):
        legend.addItem(row, name)
    x = np.linspace(0.0, 10.0, 101)
    curves.set_data(x, np.vstack([np.full_like(x, 1.0), np.full_like(x, 2.0)]), (0.0, 10.0, 1.0, 2.0))
    curves.rows[0].setVisible(False)   # what the legend's sample does when clicked
    qtbot.wait(50)
    image = plot.grab().toImage()
    assert not columns_with(image, RED, 1.0, plot) and columns_with(image, BLUE, 2.0, plot)
    assert not curves.rows[0].isVisible() and curves.rows[1].isVisible()
    x_data, y_data = curves.rows[1].getData()
    assert np.array_equal(x_data, x) and np.all(y_data == 2.0)


def test_rows_beyond_the_data_and_empty_data_draw_nothing(plot, qtbot):
    curves = CurveSet(pens())
    plot.addItem(curves)
    x = np.linspace(0.0, 10.0, 11)
    curves.set_data(x, np.full((1, 11), 1.0), (0.0, 10.0, 1.0, 1.0))   # a ring with fewer rows than pens
    qtbot.wait(50)
    assert columns_with(plot.grab().toImage(), RED, 1.0, plot)
    assert curves.rows[1].getData()[1].size == 0
    curves.clear()
    qtbot.wait(50)
    assert not columns_with(plot.grab().toImage(), RED, 1.0, plot)
    assert curves.boundingRect().isNull()
