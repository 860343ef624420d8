"""Which events the live plots mark on their time axis, from Events published as their producers publish
them (app/rig/rig.py's tare, the experiment's trial start, a trip, an E-stop, a fault). The window draws them
in tests/app/gui/test_gui_plots.py, from a real run on the twin rig."""

from __future__ import annotations

import pytest

pg = pytest.importorskip("pyqtgraph")

from uartlab.app.gui.event_markers import Markers, marker_of  # noqa: E402
from uartlab.hub import Hub  # noqa: E402
from uartlab.schema import NANO17_TARED, EventKind  # noqa: E402
from uartlab.streams import Event  # noqa: E402


def published(kind, source: str, message: str, t_s: float) -> Event:
    return Hub().event(kind, source, message, t_s)


def test_tare_trial_start_trip_estop_and_fault_are_marked_and_nothing_else():
    cases = [
        (EventKind.OPERATOR, "daq", f"{NANO17_TARED}: bias [0.01 0 0 0 0 0] V", ("tare", "tare")),
        (EventKind.TRIAL, "runner", "start 'contact/Curl/FDP+ED@67.5deg' repeat 2/5",
         ("trial", "contact/Curl/FDP+ED@67.5deg")),
        (EventKind.TRIP, "runner", "FDP tension 41.0 N above the 40 N limit", ("trip", "trip")),
        (EventKind.ESTOP, "core", "operator E-stop (key Esc)", ("trip", "E-stop")),
        (EventKind.FAULT, "daq", "the DAQ stopped answering", ("trip", "fault")),
        (EventKind.TRIAL, "runner", "stop: settled", None),
        (EventKind.OPERATOR, "experiment", "Nano17 not tared by the run: the finger is on the surface", None),
        (EventKind.PHASE, "runner", "ACTUATE", None),
        (EventKind.CLOCK, "daq", "offset 1.2 ms", None),
    ]
    for kind, source, message, want in cases:
        m = marker_of(published(kind, source, message, 10.0))
        assert (None if m is None else (m.kind, m.label)) == want, message


def test_markers_are_kept_in_time_order_once_each():
    """A replay seek delivers the window's events again; a late event slots in where it happened."""
    markers = Markers()
    tare = published(EventKind.OPERATOR, "daq", f"{NANO17_TARED}: bias [0 0 0 0 0 0] V", 5.0)
    start = published(EventKind.TRIAL, "runner", "start 'free/FDP' repeat 1/1", 7.0)
    trip = published(EventKind.TRIP, "runner", "stream daq is stale", 6.0)
    for e in (tare, start, trip, tare, start):
        markers.add(e)
    assert [(m.t_s, m.label) for m in markers.items] == [(5.0, "tare"), (6.0, "trip"), (7.0, "free/FDP")]
    assert [m.label for m in markers.within(5.5, 7.0)] == ["trip", "free/FDP"]
    markers.clear()
    assert not markers.items


def test_labels_of_markers_close_in_time_do_not_cover_each_other_on_a_short_plot(qtbot):
    """A tare and the trial start it precedes land a few pixels apart in time; on a plot made short by the
    residual row under it their names must still be readable (a row apart, at least a label's height)."""
    from PySide6.QtWidgets import QVBoxLayout, QWidget
    from uartlab.app.gui.event_markers import PlotMarkers

    window = QWidget()
    plot = pg.PlotWidget()
    QVBoxLayout(window).addWidget(plot)
    window.resize(400, 110)   # a short plot, as under its residual row
    plot.setXRange(-10.0, 0.0, padding=0)
    plot.setYRange(0.0, 5.0, padding=0)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    markers = Markers()
    markers.add(published(EventKind.OPERATOR, "daq", f"{NANO17_TARED}: bias [0 0 0 0 0 0] V", 100.0))
    markers.add(published(EventKind.TRIAL, "runner", "start 'contact/Hook/FDP+ED@45deg' repeat 1/1", 100.2))
    drawn = PlotMarkers(plot.getPlotItem(), labels=True)
    drawn.draw(markers.within(95.0, 105.0), now_s=105.0, window_s=10.0)
    qtbot.wait(20)
    boxes = [t.sceneBoundingRect() for t in drawn.labels if t.isVisible()]
    assert len(boxes) == 2 and not boxes[0].intersects(boxes[1])
