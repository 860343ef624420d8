"""The operator GUI, offscreen (pytest-qt): it opens, draws what a Hub feeds it, replays a session file,
remembers its settings, shows comparison results, and turns bad input into messages. The window on a rig
core (the twin rig: runs, recording, E-stop, moves) is tests/app/gui/test_gui_core.py. Screenshots of each
main view go to tests/screenshots/ (or $UARTLAB_SCREENSHOTS).
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pytest

pytestmark = [pytest.mark.realtime]

pytest.importorskip("pytestqt")

from conftest import shoot  # noqa: E402
from PySide6.QtCore import QSettings  # noqa: E402
from uartlab.app.gui import bench  # noqa: E402
from uartlab.app.gui.app import qt_app  # noqa: E402
from uartlab.app.gui.main_window import MainWindow  # noqa: E402
from uartlab.app.record.writer import SessionRecorder  # noqa: E402
from uartlab.hub import Hub  # noqa: E402
from uartlab.streams import Event  # noqa: E402


@pytest.fixture
def settings(tmp_path):
    return QSettings(str(tmp_path / "gui.ini"), QSettings.Format.IniFormat)


def curve_data(window, plot: str, kind: str = "measured", i: int = 0):
    x, y = getattr(window.plots.plots[plot], kind)[i].getData()
    return (None, None) if x is None or len(x) == 0 else (x, y)


def test_pyside_signals_do_not_leak_bool_references():
    """PySide6 6.12.0's Signal.emit dropped a reference to True/False per call: a GUI died after ~10^4
    emits on Python 3.11 (pyproject pins it out; this catches a regression)."""
    from PySide6.QtCore import QObject, Signal

    class A(QObject):
        s = Signal(object)

    a = A()
    a.s.connect(lambda _: None)
    before = sys.getrefcount(True), sys.getrefcount(False)
    for _ in range(2000):
        a.s.emit(a)
    assert (sys.getrefcount(True), sys.getrefcount(False)) == before


def test_main_window_opens_with_every_panel_and_the_estop(window):
    assert set(window.docks) == {"Rig", "Protocol", "Recording", "Results", "Replay", "Log"}
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QTabBar

    bars = window.findChildren(QTabBar, options=Qt.FindChildOption.FindDirectChildrenOnly)
    shown = sorted([bar.tabText(i) for i in range(bar.count())] for bar in bars if bar.isVisible())
    assert shown == [["Results", "Replay", "Log"], ["Rig", "Protocol", "Recording"]]   # no stray bar over a panel
    assert window.estop_button.isVisible() and window.estop_button.isEnabled()
    assert [window.tabs.tabText(i) for i in range(window.tabs.count())] == ["Live", "Compare", "Calibration"]
    assert window.rig_panel.connect_button.isEnabled()
    assert not window.protocol_panel.buttons["start"].isEnabled()  # no rig, no suite
    assert window.errors == []


def test_the_line_above_the_trials_counts_the_runs_start_would_make(window):
    """The selection and the repeats asked for here both change what Start runs; the line says so."""
    from uartlab.protocols.suite import resolve_suite

    window.ops.choose_suite("free_motion")
    panel = window.protocol_panel
    suite = resolve_suite("free_motion")
    n_file = sum(t.repeats for t in suite.trials)
    assert f"— 6 trials, repeats as the file says: {n_file} runs" in panel.description.text()
    panel.table.selectRow(1)
    assert (f"— 1 of 6 trials selected, repeats as the file says: {suite.trials[1].repeats} run"
            in panel.description.text())
    panel.repeats_spin.setValue(1)
    assert "— 1 of 6 trials selected, 1 repeat each (the file says otherwise): 1 run (" in panel.description.text()
    panel.table.clearSelection()
    assert "— 6 trials, 1 repeat each (the file says otherwise): 6 runs (" in panel.description.text()
    window.ops.choose_suite("surface_contact")   # another suite: nothing of the last one's selection
    assert "— 16 trials, 1 repeat each" in panel.description.text()


def test_live_plots_follow_a_hub_at_full_rate(qtbot, window):
    specs = bench.specs(19200.0, 240.0)
    hub = Hub()
    for s in specs:
        hub.register(s)
    window.attach(hub, "test feed")
    synth = bench.Synth(specs)
    rates = {s.name: s.nominal_rate_hz for s in specs}
    t0 = 1000.0
    last = {}
    for k in range(120):  # 12 s of every stream in 100 ms blocks, faster than real time
        for name, rate in rates.items():
            last[name] = synth.record(name, t0 + k * 0.1, int(rate * 0.1))
            hub.publish(last[name])
        window.drain()  # the frame timer does this too; here it keeps the queue short
    qtbot.waitUntil(lambda: curve_data(window, "tension")[0] is not None and window.data.now_s > t0 + 11.9)
    qtbot.wait(100)
    x, y = curve_data(window, "tension")
    assert x.min() >= -10.0 * 1.3 and x.max() == pytest.approx(0.0, abs=0.02)  # the 10 s window, newest at 0
    assert x.size <= window.data.get("daq", "tendon_force_N").capacity
    daq = last["daq"].data["tendon_force_N"]
    assert y.max() >= daq[:, 0].max() - 1e-12  # decimation keeps the peaks
    for plot in ("angles", "force", "excursion"):
        xm, ym = curve_data(window, plot, "model")
        assert xm is not None and xm.size > 100, plot  # model / commanded drawn dashed
    np.testing.assert_allclose(window.data.latest("model", "measured_fingertip_force_N"),
                               last["model"].data["measured_fingertip_force_N"][-1])
    window.on_status()
    window.plots.residuals_box.setChecked(True)
    window.on_frame()
    xr, yr = window.plots.plots["tension"].res[0].getData()
    assert xr is not None and np.isfinite(yr).sum() > 100
    # the pose view: the newest measured joint angles through the model's forward kinematics
    window.pose.refresh(window.data)
    px, py = window.pose.curves[0]["measured"].getData()
    want = window.pose.finger.joint_positions(last["joints"].data["angles_rad"][-1]) * 1e3
    np.testing.assert_allclose(px, want[:, 0])
    np.testing.assert_allclose(py, want[:, 2])
    assert "tension" in window.plots.readout_label.text()


@pytest.fixture(scope="module")
def session_file(tmp_path_factory):
    """4 s of rig-like streams with one settled trial and one interlock trip."""
    specs = [s for s in bench.specs(1000.0, 100.0) if s.name in ("daq", "actuators", "joints", "model")]
    synth = bench.Synth(specs)
    path = tmp_path_factory.mktemp("gui") / "session_test.h5"
    t0 = 500.0
    with SessionRecorder(path, {"operator": "test"}, flush_interval_s=0.1) as rec:
        for s in specs:
            rec.add_stream(s)
        rec.begin_trial("FDP", "free_motion", {"trial": "FDP"}, 0, host_time_s=t0 + 1.0)
        for k in range(40):
            for s in specs:
                rec.write(synth.record(s.name, t0 + k * 0.1, int(s.nominal_rate_hz * 0.1)))
        rec.end_trial("settled", host_time_s=t0 + 3.0)
        rec.event(Event(t0 + 3.5, "trip", "runner", "FDP tension 41.0 N above the 40 N limit"))
    return path, t0


def test_replay_of_a_session_file_drives_the_live_views(qtbot, window, session_file):
    path, t0 = session_file
    window.replay_panel.speed_combo.setCurrentText("5")
    window.ops.open_replay(str(path))
    qtbot.waitUntil(lambda: window.ops.replay is not None and window.replay_panel.play_button.isEnabled(), timeout=5000)
    assert window.source.startswith("replay")
    assert window.replay_panel.span_s == pytest.approx(4.0, abs=0.01)
    assert len([m for m in window.replay_panel._marks if type(m).__name__ == "LinearRegionItem"]) == 1
    window.ops.play()
    qtbot.waitUntil(lambda: not window.replay_panel.playing, timeout=15000)  # to the end at 5x (0.8 s)
    assert window.errors == []
    # the player is at the end; the window's last drain of it may come a frame later on a loaded machine
    qtbot.waitUntil(lambda: window.data.now_s == pytest.approx(t0 + 4.0, abs=0.01), timeout=2000)
    x, _ = curve_data(window, "tension")
    assert x is not None and x.size > 50
    assert any("trip" in line for line in window.log.toPlainText().splitlines())
    window.on_frame()   # the trip marked on the time axis where the file has it, 0.5 s before the end
    tension = window.plots.plots["tension"].markers[0]
    assert [t.toPlainText() for t in tension.labels if t.isVisible()] == ["trip"]
    x, _ = tension.lines["trip"].getData()
    assert x[0] + tension.group.pos().x() == pytest.approx(-0.5, abs=0.02)
    # seek back while paused: the views show the 10 s up to the cursor, read from the file
    window.ops.seek(t0 + 2.0)
    qtbot.waitUntil(lambda: abs(window.data.now_s - (t0 + 2.0)) < 0.01, timeout=5000)
    assert window.replay_panel.position.text().startswith("t = 2.0")
    window.ops.back_to_live()
    assert window.ops.replay is None and window.source == "none"


def test_settings_are_remembered(qtbot, settings, tmp_path):
    qt_app()
    first = MainWindow(settings)
    qtbot.addWidget(first)
    first.rig_panel.config_edit.setText(str(tmp_path / "lab_rig.toml"))
    first.recording_panel.folder_edit.setText(str(tmp_path / "data"))
    first.recording_panel.operator_edit.setText("Ada")
    first.ops.choose_suite("surface_contact")
    first.plots.residuals_box.setChecked(True)
    first.close()
    second = MainWindow(QSettings(settings.fileName(), QSettings.Format.IniFormat))
    qtbot.addWidget(second)
    assert second.rig_panel.config_edit.text() == str(tmp_path / "lab_rig.toml")
    assert second.recording_panel.folder_edit.text() == str(tmp_path / "data")
    assert second.recording_panel.operator == "Ada"
    assert second.protocol_panel.suite is not None and second.protocol_panel.suite.name == "surface_contact"
    assert second.protocol_panel.table.rowCount() == len(second.protocol_panel.suite.trials)
    assert second.plots.residuals_box.isChecked()
    second.close()


def test_compare_view_shows_tables_figures_and_the_report(qtbot, window, tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder = tmp_path / "session_x_compare"
    folder.mkdir()
    (folder / "steady_state.csv").write_text("trial,joint,measured_deg,model_deg,error_deg\n"
                                             "FDP,PIP,61.2,58.0,3.2\nFDP,DIP,40.1,41.0,-0.9\n")
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([0, 1, 2], [0, 1, 0.5], label="FDP")
    fig.savefig(folder / "angles.png")
    plt.close(fig)
    (folder / "report.html").write_text("<h1>Session x: model vs experiment</h1><img src='angles.png'>")
    window.tabs.setCurrentWidget(window.compare)
    window.compare.open_folder(folder)
    qtbot.waitUntil(lambda: window.compare.files.count() == 3)
    names = [window.compare.files.item(i).text() for i in range(window.compare.files.count())]
    assert names == ["report.html", "steady_state.csv", "angles.png"]
    assert "model vs experiment" in window.compare.browser.toPlainText()
    window.compare.files.setCurrentRow(1)
    t = window.compare.table
    assert (t.rowCount(), t.columnCount()) == (2, 5) and t.item(0, 4).text() == "3.2"
    window.compare.files.setCurrentRow(2)
    assert window.compare.stack.currentWidget() is window.compare.image_scroll
    assert not window.compare.image.pixmap().isNull()


def test_a_huge_folder_opened_as_results_is_listed_off_the_gui_thread_and_bounded(qtbot, window, tmp_path):
    """An operator who picks a folder of thousands of files (home, a share, /) by mistake: the window answers at
    once (the E-stop with it), and the list stops at its cap with a line saying why."""
    from uartlab.app.gui.panels.compare import MAX_LISTED

    folder = tmp_path / "not_results"
    for k in range(MAX_LISTED + 50):
        (folder / f"d{k % 10}").mkdir(parents=True, exist_ok=True)
        (folder / f"d{k % 10}" / f"t{k}.csv").write_text("a\n1\n")
    messages = []
    window.compare.message.connect(messages.append)
    window.tabs.setCurrentWidget(window.compare)
    t0 = time.monotonic()
    window.compare.open_folder(folder)
    assert window.compare.files.count() == 0, "listed on the GUI thread"
    assert time.monotonic() - t0 < 1.0
    qtbot.waitUntil(lambda: window.compare.files.count() == MAX_LISTED, timeout=30000)
    assert any(f"more than {MAX_LISTED}" in m for m in messages)
    assert window.errors == []


def test_the_estop_reaches_a_calibration_procedure_moving_the_twin_rig(qtbot, window, tmp_path):
    """A procedure at a rig runs in its own process, outside the rig core: the window's E-stop still turns its
    servos' torque off (the driver reads it back), and nothing is written."""
    from uartlab.app.cli.calibrate import RIG_UP

    panel = window.calibration
    window.tabs.setCurrentWidget(panel)
    panel.store_edit.setText(str(tmp_path / "cal"))
    panel.procedure.setCurrentIndex(panel.procedure.findData("sea"))
    panel.where.setCurrentIndex(panel.where.findData("twin"))    # the twin rig, through the real drivers
    panel.run_button.click()
    qtbot.waitUntil(lambda: RIG_UP in panel.output.toPlainText(), timeout=120000)
    qtbot.wait(1000)    # loading the first tendon
    assert panel.running()
    window.estop_button.click()
    qtbot.waitUntil(lambda: not panel.running(), timeout=60000)
    out = panel.output.toPlainText()
    assert "E-STOP: operator E-stop (SIGQUIT): torque off on all six servos" in out, out
    assert "sea calibration stopped: interrupted (operator E-stop (SIGQUIT)); torque off" in out, out
    assert "nothing written" in out and not list((tmp_path / "cal").glob("*"))
    assert "the running calibration procedure was sent its E-stop (torque off)" in window.log.toPlainText()
    shoot(window, "estop_calibration")


def test_a_procedures_prompt_for_the_operator_is_answered_from_the_window(qtbot, window, tmp_path):
    """At a real rig the SEA procedure asks for each hung weight on its stdin (app/procedures/at_rig.py); the
    tab offers the Enter key for it. Here a program that prompts the same way (the twin rig needs no weights)."""
    from uartlab.app.procedures.at_rig import PRESS_ENTER

    asker = tmp_path / "asker.py"
    asker.write_text("import sys\n"
                     "for grams in (100, 200):\n"
                     f"    input(f'SEA FDP: hang {{grams}} g on the tendon, wait until it is still, {PRESS_ENTER}')\n"
                     "    print(f'read at {grams} g')\n")
    panel = window.calibration
    window.tabs.setCurrentWidget(panel)
    assert not panel.enter_button.isEnabled()
    panel.launch([str(asker)], "sea")
    for grams in (100, 200):
        qtbot.waitUntil(panel.enter_button.isEnabled, timeout=30000)
        assert panel.output.toPlainText().rstrip().endswith(f"hang {grams} g on the tendon, wait until it is "
                                                            "still, press Enter")
        panel.enter_button.click()
        assert not panel.enter_button.isEnabled()
        qtbot.waitUntil(lambda g=grams: f"read at {g} g" in panel.output.toPlainText(), timeout=30000)
    qtbot.waitUntil(lambda: not panel.running(), timeout=30000)
    assert window.errors == []


def test_calibration_tab_runs_a_procedure_and_lists_the_current_set(qtbot, window, tmp_path):
    from uartlab.calibration.store import CalibrationStore

    panel = window.calibration
    window.tabs.setCurrentWidget(panel)
    panel.store_edit.setText(str(tmp_path / "cal"))
    panel.procedure.setCurrentIndex(panel.procedure.findData("sea"))
    panel.run_button.click()                      # the real `uartlab calibrate sea`, as its own process
    assert not panel.run_button.isEnabled()       # the window stays live while it runs
    assert panel.output.toPlainText().startswith("$ uartlab calibrate sea --store ")   # the command, as typed
    qtbot.waitUntil(lambda: not panel.running() and panel.run_button.isEnabled(), timeout=120000)
    assert window.errors == [], panel.output.toPlainText()
    assert "FDP" in panel.output.toPlainText()
    assert CalibrationStore(tmp_path / "cal").current("sea") is not None
    rows = [panel.current.item(r, 0).text() for r in range(panel.current.rowCount())]
    assert rows == ["sea"] and panel.current.item(0, 3).text() == "ok"
    shoot(window, "calibration")
    # At the rig of the Rig tab while it is connected here: refused with the reason, nothing started.
    panel.rig_source = lambda: ("", True)
    panel.where.setCurrentIndex(panel.where.findData("rig"))
    panel.run_button.click()
    assert not panel.running() and "disconnect the rig first" in window.errors[-1]
    # The moment arms are written in the form chosen beside the place, which only they show.
    assert panel.form.isHidden()
    panel.where.setCurrentIndex(panel.where.findData(""))
    panel.procedure.setCurrentIndex(panel.procedure.findData("moment-arms"))
    panel.form.setCurrentIndex(panel.form.findData("table"))
    assert not panel.form.isHidden()
    panel.dry_run_button.click()
    assert panel.output.toPlainText().startswith("$ uartlab calibrate moment-arms --store ")
    assert "--form table --dry-run" in panel.output.toPlainText().splitlines()[0]
    qtbot.waitUntil(lambda: not panel.running(), timeout=120000)
    assert "FDP    DIP" in panel.output.toPlainText() and "over DIP" in panel.output.toPlainText()
    # The model fit takes sessions instead of a place to run.
    assert panel.sessions_edit.isHidden() and panel.where.isEnabled()
    panel.procedure.setCurrentIndex(panel.procedure.findData("model"))
    assert not panel.sessions_edit.isHidden() and not panel.where.isEnabled()


def test_bad_input_becomes_a_message_not_a_crash(qtbot, window, tmp_path):
    bad = tmp_path / "rig.toml"
    bad.write_text("[daq]\nrate_hz = -5\n")
    window.ops.connect_rig(str(bad))
    qtbot.waitUntil(lambda: bool(window.errors), timeout=10000)
    assert "rig.toml" in window.errors[-1] and window.rig_panel.connect_button.isEnabled()
    suite = tmp_path / "suite.toml"
    suite.write_text("name = 'x'\n[[trial]]\nname = 'a'\npose = 'Nowhere'\n")
    window.ops.choose_suite(str(suite))
    assert "suite.toml" in window.errors[-1]
    window.ops.open_replay(str(tmp_path / "missing.h5"))
    qtbot.waitUntil(lambda: "missing.h5" in window.errors[-1], timeout=5000)
    t0 = time.monotonic()
    window.on_frame()  # still drawing
    assert time.monotonic() - t0 < 1.0


def test_an_estop_reported_after_its_reset_does_not_latch_again(window):
    """The E-stop's own hub event can reach the window after the operator reset it (a busy machine): it is
    acknowledged already. Another E-stop after the reset (from another window or `uartlab run`) latches."""
    window.ops.estop("operator E-stop (button)")
    pressed_at = time.monotonic()
    window.estop_reset.click()
    window.ops.on_event(Event(pressed_at, "estop", "operator", "operator E-stop (button)"))
    assert not window.ops.estop_latched
    window.ops.on_event(Event(time.monotonic(), "estop", "operator", "E-stop from another client"))
    assert window.ops.estop_latched and "another client" in window.interlock_label.text()
    window.estop_reset.click()
