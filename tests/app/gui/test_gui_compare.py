"""The Compare tab of the real window on a session recorded on the twin rig (tests/conftest.py
`twin_session_file`): the operator opens it in Replay, clicks "Run compare", sees it progress, and reads the
paper's Tables 4-6, each trial's measured and model curves and the figures in the tab."""

from __future__ import annotations

import shutil

import pytest

pytestmark = [pytest.mark.realtime, pytest.mark.slow]

pytest.importorskip("pytestqt")

from conftest import TWIN_SESSION_CONTACT, TWIN_SESSION_FREE  # noqa: E402
from uartlab.app.compare.tables import PAPER_TABLES, digits_for, slug, transient_column  # noqa: E402
from uartlab.app.gui.panels.compare import results_folder  # noqa: E402
from uartlab.app.gui.panels.compare_views import read_csv  # noqa: E402


def test_run_compare_shows_progress_then_the_tables_curves_and_figures(qtbot, window, twin_session_file, tmp_path):
    session = tmp_path / "twin.h5"   # its results folder goes beside it: this test's own
    shutil.copy(twin_session_file, session)
    window.ops.open_replay(str(session))
    qtbot.waitUntil(lambda: window.ops.replay is not None, timeout=10000)
    panel = window.compare
    window.tabs.setCurrentWidget(panel)
    assert panel.run_button.isEnabled()
    panel.run_button.click()
    assert panel.running() and not panel.run_button.isEnabled() and panel.progress.isVisible()
    seen: list[tuple[str, int, int]] = []

    def watch() -> bool:
        seen.append((panel.step.text(), panel.progress.value(), panel.progress.maximum()))
        return not panel.running()

    qtbot.waitUntil(watch, timeout=240000)
    assert window.errors == [], panel.output
    # never silent: the step and the time running were shown, and the bar counted the two trials
    assert seen[0][0].startswith("starting the comparison (0:0")
    assert any(text.startswith("re-simulating: ") and " of 2 (" in text and maximum == 2 for text, _, maximum in seen)
    assert any(text.startswith("drawing figures: ") for text, _, _ in seen)
    assert panel.step.text().startswith("done in ") and not panel.progress.isVisible()
    out = results_folder(session)
    assert panel.folder == out and panel.views.currentWidget() is panel.tables

    # Tables 4-6: every row of the CSV, numbers to the report's decimals, headers as wide as their lines
    header, rows = read_csv(out / "table4_free_motion.csv")
    table = panel.tables.tables["table4_free_motion"]
    assert table.isVisible() and panel.tables.titles["table4_free_motion"].text() == \
        f"<b>{PAPER_TABLES['table4_free_motion']}</b>"
    assert table.rowCount() == len(rows) == 2 and table.item(0, 0).text() == TWIN_SESSION_FREE
    dip = header.index("DIP MAE defaults [deg]")
    assert table.horizontalHeaderItem(dip).text() == "DIP MAE defaults\n[deg]"
    assert table.item(0, dip).text() == f"{float(rows[0][dip]):.{digits_for(header[dip])}f}"
    force = panel.tables.tables["table6_contact_force"]
    assert force.isVisible() and force.item(0, 0).text() == TWIN_SESSION_CONTACT
    for t in (table, panel.tables.tables["table5_surface_contact"], force):
        metrics = t.horizontalHeader().fontMetrics()
        for c in range(t.columnCount()):
            widest = max(metrics.horizontalAdvance(line) for line in t.horizontalHeaderItem(c).text().split("\n"))
            assert t.columnWidth(c) >= widest, t.horizontalHeaderItem(c).text()
        assert t.height() >= t.horizontalHeader().height() + t.verticalHeader().length()  # every row in view
    window.grab().save(str(tmp_path / "compare_tables.png"))

    # a trial's curves: measured solid and the model dashed, named beside the plot, the CSV's values
    panel.views.setCurrentWidget(panel.curves)
    names = [panel.curves.trials.item(i).text() for i in range(panel.curves.trials.count())]
    assert sorted(names) == sorted([TWIN_SESSION_FREE, TWIN_SESSION_CONTACT])
    panel.curves.trials.setCurrentRow(names.index(TWIN_SESSION_FREE))
    assert panel.curves.shown["deg"][:2] == ["MCP_AB measured", "MCP_AB model (defaults)"]
    assert "FDP measured" in panel.curves.shown["N"] and "FDP model (defaults)" in panel.curves.shown["N"]
    header, rows = read_csv(out / "transients" / f"{slug(TWIN_SESSION_FREE)}.csv")
    pip = header.index("PIP measured mean [deg]")
    assert transient_column(header[pip]) == ("PIP", "measured mean", "", "deg")
    curve = panel.curves.plots["deg"].listDataItems()[panel.curves.shown["deg"].index("PIP measured")]
    x, y = curve.getData()
    assert len(x) == len(rows) and y[-1] == pytest.approx(float(rows[-1][pip]))
    window.grab().save(str(tmp_path / "compare_curves.png"))

    # the figures: Fig. 13 as wide as the view (its own pixels when asked), the page scrolls
    panel.views.setCurrentWidget(panel.figures)
    figures = [panel.figures.names.item(i).text() for i in range(panel.figures.names.count())]
    assert figures[0].startswith("fig13_poses_")
    panel.figures.names.setCurrentRow(0)
    qtbot.wait(50)
    native = panel.figures.pixmap.width()
    shown = panel.figures.image.pixmap().width()
    assert shown == min(panel.figures.scroll_area.viewport().width() - 2, int(native * 1.5)) and shown > 600
    panel.figures.full_size.setChecked(True)
    assert panel.figures.image.pixmap().width() == native
    window.grab().save(str(tmp_path / "compare_figures.png"))
