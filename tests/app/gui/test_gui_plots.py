"""The live plots as an operator reads them, in the real window on a rig core on the twin rig (fixtures and
helpers of tests/app/gui/test_gui_core.py): legends above the data, units on every axis, each tendon in its
one colour (app/palette.py), residuals as the live model records them (measured − model), and markers for
the tare, the trial's start and an E-stop on the time axis, live and again when the file is replayed."""

from __future__ import annotations

import re

import numpy as np
import pytest

pytestmark = [pytest.mark.realtime, pytest.mark.slow]

pytest.importorskip("pytestqt")
pytest.importorskip("zmq")

from PySide6.QtCore import Qt  # noqa: E402
from test_gui_core import MOVING, address, connect, make_window, rig_toml, shoot  # noqa: E402, F401
from uartlab.app.gui.event_markers import marker_of  # noqa: E402
from uartlab.app.gui.live_plots import LABELLED_PLOT, PLOTS, RESIDUAL  # noqa: E402
from uartlab.app.palette import MEASURED_COLOUR, MODEL_COLOUR, colour  # noqa: E402
from uartlab.app.paper_frame import PLANES  # noqa: E402
from uartlab.app.record.player import SessionFile  # noqa: E402
from uartlab.protocols.runner import RUN_OVER  # noqa: E402


def marker_labels(window, plot: str = "tension") -> list[str]:
    """The marker labels the operator sees on a plot, oldest first."""
    return [t.toPlainText() for t in window.plots.plots[plot].markers[0].labels if t.isVisible()]


def marker_lines_x(window, plot: str, kind: str) -> np.ndarray:
    """Where the operator sees the lines of one kind of marker (time axis, s)."""
    markers = window.plots.plots[plot].markers[0]
    line = markers.lines.get(kind)
    x = None if line is None or not line.isVisible() else line.getData()[0]
    return np.array([]) if x is None else x[np.isfinite(x)] + markers.group.pos().x()   # as the group places them


def check_what_the_plots_show(window) -> None:
    for spec in PLOTS:
        p = window.plots.plots[spec.key]
        # the legend is a row of its own above the plot: nothing of it on the data area
        legend, view = p.legend.sceneBoundingRect(), p.item.vb.sceneBoundingRect()
        assert legend.bottom() <= view.top() and legend.height() > 0, spec.key
        names = [label.text for _, label in p.legend.items]
        assert names[: len(spec.names)] == list(spec.legend or spec.names)
        # units on every axis: the time axis labelled under the residual row when that is shown
        residuals = p.residual is not None and p.residual.isVisible()
        axes = [p.item.getAxis("left"), (p.residual if residuals else p.item).getAxis("bottom")]
        axes += [p.residual.getAxis("left")] if residuals else []
        for axis in axes:
            assert re.search(r"\[(N|deg|mm|s)\]", axis.labelText), (spec.key, axis.orientation)
        # tendon k (joint, axis) in its one colour, measured and model alike
        for name, measured in zip(spec.names, p.measured, strict=True):
            assert measured.opts["pen"].color().name().upper() == colour(name), (spec.key, name)
        for name, model in zip(spec.names, p.model, strict=True):
            assert model.opts["pen"].color().name().upper() == colour(name)
            assert model.opts["pen"].style() == Qt.PenStyle.DashLine


# One pull long enough to be E-stopped in: on a loaded machine the window's checks before the E-stop outlast
# the built-in suite's short FDP trial (3 s at the twin's 3x), which then ended the run first.
LONG_PULL = """
[suite]
name = "long_pull"
repeats = 1
[[trial]]
name = "free/FDP"
pose = "Flex"
pulls = [{ tendon = "FDP", amplitude_mm = 10, duration_s = 30.0 }]
return = true
"""


def test_markers_legends_units_and_colours_live_and_in_replay(qtbot, make_window, tmp_path):  # noqa: F811
    suite = tmp_path / "long_pull.toml"
    suite.write_text(LONG_PULL, encoding="utf-8")
    window = make_window()
    connect(qtbot, window)
    check_what_the_plots_show(window)
    pose = window.pose.widget.ci
    titles = [pose.getItem(2 * k + 1, 0).titleLabel.text for k in range(len(PLANES))]
    assert titles == [p.title for p in PLANES]   # the compare report's Fig. 13 planes and names
    assert pose.getItem(1, 0).getAxis("left").labelText == "Y dorsal (world Z) [mm]"
    assert window.pose.curves[0]["measured"].opts["pen"].color().name().upper() == MEASURED_COLOUR
    assert window.pose.curves[0]["model"].opts["pen"].color().name().upper() == MODEL_COLOUR

    window.ops.choose_suite(str(suite))
    window.plots.residuals_box.setChecked(True)
    window.protocol_panel.buttons["start"].click()
    qtbot.waitUntil(lambda: window.ops.recording is not None, timeout=30000)
    path = window.ops.recording["path"]
    # the run tares the Nano17, then starts the trial: both marked where they happened, on every time plot
    seen: set[str] = set()

    def marked() -> bool:
        labels = marker_labels(window)
        seen.update(labels)
        for spec in PLOTS:   # every time plot shows the same markers at the same times
            assert marker_labels(window, spec.key) == (labels if spec.key == LABELLED_PLOT else []), spec.key
            for kind, label in (("tare", "tare"), ("trial", "free/FDP")):
                x = marker_lines_x(window, spec.key, kind)
                assert x.size == (2 if label in labels else 0), (spec.key, kind)
                assert np.all((-window.plots.window_s <= x) & (x <= 0.0)), (spec.key, kind)
        return {"tare", "free/FDP"} <= seen

    try:
        qtbot.waitUntil(marked, timeout=60000)
    except qtbot.TimeoutError:
        raise AssertionError(f"markers seen {seen}; the run: {window.ops.phase} "
                             f"{window.ops.run_status.fault_reason if window.ops.run_status else ''}") from None
    # the residual rows draw the live model's own residual fields: measured − model, as the file has them
    qtbot.waitUntil(lambda: window.data.get("model", "residual_tendon_force_N") is not None, timeout=30000)
    qtbot.waitUntil(lambda: window.ops.phase in MOVING, timeout=30000)
    qtbot.wait(1500)
    tension = window.plots.plots["tension"]
    assert tension.residual.isVisible() and tension.residual.titleLabel.text == f"residual: {RESIDUAL}"
    window.drain()
    window.plots.refresh(window.data, window.display_now())   # no event loop in between: no newer data
    _, residual_N = window.data.get("model", "residual_tendon_force_N").view()
    for i, curve in enumerate(tension.res):
        _, y = curve.getData()
        assert y.size > 10 and np.array_equal(y, residual_N[i], equal_nan=True)
    shoot(window, "live_markers")

    assert window.ops.phase in MOVING
    qtbot.mouseClick(window.estop_button, Qt.MouseButton.LeftButton)   # mid-pull
    qtbot.waitUntil(lambda: "E-stop" in marker_labels(window), timeout=10000)
    assert marker_lines_x(window, "angles", "trip").size >= 1
    qtbot.waitUntil(lambda: window.ops.phase in RUN_OVER and window.ops.recording is None, timeout=30000)
    window.estop_reset.click()

    # the same markers when the file is replayed
    window.replay_panel.speed_combo.setCurrentText("5")
    window.ops.open_replay(path)
    qtbot.waitUntil(lambda: window.ops.replay is not None and window.replay_panel.play_button.isEnabled(),
                    timeout=10000)
    # a new source: the live run's markers are gone, and those of the file's first view are drawn (a run
    # E-stopped early may fit in that view whole, so they can be the same ones)
    with SessionFile(path) as f:
        t0 = f.time_span_s()[0]
        first_view = [m.label for e in f.events() if (m := marker_of(e)) is not None
                      and e.host_time_s <= t0 + window.plots.window_s]
    qtbot.waitUntil(lambda: marker_labels(window) == first_view, timeout=5000)
    window.ops.play()
    qtbot.waitUntil(lambda: not window.replay_panel.playing, timeout=60000)
    try:   # the end's records and events may still be on their way to the window on a busy machine
        qtbot.waitUntil(lambda: {"free/FDP", "E-stop"} <= set(marker_labels(window)), timeout=10000)
    except qtbot.TimeoutError:
        pytest.fail(f"markers at the replay's end: {marker_labels(window)}; GUI queue drops {window.sub.dropped}")
    check_what_the_plots_show(window)
    assert window.errors == []
