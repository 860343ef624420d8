"""Replay in the real window, of a session recorded on the twin rig (tests/conftest.py `twin_session_file`):
the first view and the cursor agree, a seek keeps the plots' window of history, the chosen speed is kept or
the lag is shown, and the file's events come through as the live rig's do."""

from __future__ import annotations

import time

import numpy as np
import pytest

pytestmark = [pytest.mark.realtime, pytest.mark.slow]

pytest.importorskip("pytestqt")

from uartlab.app.gui.operations import _log_line_for  # noqa: E402
from uartlab.app.record.player import SessionFile  # noqa: E402
from uartlab.schema import DAQ, JOINTS_IK, EventKind  # noqa: E402


def open_session(qtbot, window, path) -> float:
    """Open the file in the Replay dock as an operator does; returns its first host time."""
    window.ops.open_replay(str(path))
    qtbot.waitUntil(lambda: window.ops.replay is not None and window.replay_panel.play_button.isEnabled(),
                    timeout=10000)
    return window.replay_panel.t0


def span_kept(window, stream: str, field: str) -> tuple[float, float]:
    """First and last host time in the window's ring buffer of a channel."""
    t, _ = window.data.get(stream, field).view()
    return float(t[0]), float(t[-1])


def test_the_first_view_is_the_files_first_window_and_the_cursor_stands_at_its_end(qtbot, window,
                                                                                 twin_session_file):
    t0 = open_session(qtbot, window, twin_session_file)
    window_s = window.data.window_s
    with SessionFile(twin_session_file) as f:
        span_s = f.time_span_s()[1] - t0
        daq_first = f.host_times(DAQ.stream)[0]   # the streams start within a few tenths of a second of t0
    assert span_s > window_s  # the twin session is longer than one window: its end is not its first view
    qtbot.waitUntil(lambda: abs(window.data.last_t.get(DAQ.stream, 0.0) - (t0 + window_s)) < 0.05, timeout=5000)
    first, last = span_kept(window, DAQ.stream, DAQ.tendon_force_N)
    assert first == pytest.approx(daq_first, abs=0.05) and last == pytest.approx(t0 + window_s, abs=0.05)
    window.on_status()
    panel = window.replay_panel
    assert panel.position.text() == f"t = {window_s:.1f} / {span_s:.1f} s (plots: 0.0–{window_s:.1f} s)"
    assert panel.time_cursor.value() == pytest.approx(window_s, abs=0.05)
    assert panel.pace.text() == "paused" and panel.play_button.text() == "▶ Play"
    window.on_frame()
    x, _ = window.plots.plots["tension"].measured[0].getData()
    assert x.min() == pytest.approx(daq_first - t0 - window_s, abs=0.1) and x.max() == pytest.approx(0.0, abs=0.05)
    # the events of the first view are in the log, as the live rig's are, at their times in the file
    with SessionFile(twin_session_file) as f:
        said = [(e.host_time_s - t0, _log_line_for(e)) for e in f.events() if e.host_time_s < t0 + window_s - 0.05]
    said = [(t, line) for t, line in said if line is not None]
    assert any(line.startswith(f"{EventKind.PHASE} [runner] ACTUATE") for _, line in said), said
    expected = [f"(replay, t = {t:.2f} s) {line}" for t, line in said]

    def missing() -> list[str]:
        log = window.log.toPlainText().splitlines()
        return [e for e in expected if not any(e in logged for logged in log)]

    # The replay hands over a window's events after its records: on a busy machine they may still be on
    # their way when the data has arrived.
    try:
        qtbot.waitUntil(lambda: not missing(), timeout=5000)
    except qtbot.TimeoutError:
        pytest.fail(f"not in the log: {missing()}")
    assert window.errors == []


def test_a_seek_keeps_the_window_of_history_before_the_cursor(qtbot, window, twin_session_file):
    t0 = open_session(qtbot, window, twin_session_file)
    window_s = window.data.window_s
    qtbot.waitUntil(lambda: window.data.now_s > t0 + window_s - 0.05, timeout=5000)
    # paused, back to 5 s: the plots hold 0-5 s, read from the file
    window.replay_panel._seek_rel(5.0)
    channels = ((DAQ.stream, DAQ.tendon_force_N), (JOINTS_IK.stream, JOINTS_IK.angles_rad))
    qtbot.waitUntil(lambda: all(window.data.last_t.get(s, 0.0) > t0 + 4.9 for s, _ in channels), timeout=5000)
    with SessionFile(twin_session_file) as f:
        firsts = {stream: f.host_times(stream)[0] for stream, _ in channels}
    for stream, field in channels:
        first, last = span_kept(window, stream, field)
        assert first == pytest.approx(firsts[stream], abs=0.05), stream
        assert last == pytest.approx(t0 + 5.0, abs=0.05), stream
    # playing, forward to 12 s: the plots hold the 10 s before it at once, then go on from there
    window.replay_panel.play_button.click()
    qtbot.waitUntil(lambda: window.replay_panel.playing, timeout=2000)
    window.replay_panel._seek_rel(12.0)
    qtbot.waitUntil(lambda: window.data.last_t.get(DAQ.stream, 0.0) >= t0 + 12.0 - 0.05, timeout=5000)
    first, last = span_kept(window, DAQ.stream, DAQ.tendon_force_N)
    assert first == pytest.approx(t0 + 12.0 - window_s, abs=0.05) and last >= t0 + 12.0 - 0.05
    t, _ = window.data.get(DAQ.stream, DAQ.tendon_force_N).view()
    assert np.all(np.diff(t) >= 0)  # nothing of the old place mixed in
    window.on_frame()
    x, _ = window.plots.plots["tension"].measured[0].getData()
    assert x.min() <= -window_s + 0.2            # the full window drawn, not a plot starting empty
    assert window.errors == []


def test_replay_keeps_the_chosen_speed_or_says_how_far_behind(qtbot, window, twin_session_file):
    open_session(qtbot, window, twin_session_file)
    panel = window.replay_panel
    panel.speed_combo.setCurrentText("1")
    panel._seek_rel(0.0)
    qtbot.waitUntil(lambda: window.replay_panel.position.text().startswith("t = 0.0"), timeout=5000)
    panel.play_button.click()
    qtbot.wait(500)
    wall0, shown0 = time.monotonic(), window.data.now_s
    qtbot.wait(3000)
    window.on_status()
    advanced_s, wall_s = window.data.now_s - shown0, time.monotonic() - wall0
    # what the operator sees: the plots advance at 1x, or the panel says by how much they do not
    assert advanced_s >= 0.85 * wall_s or panel.pace.text().startswith("behind by"), (advanced_s, wall_s,
                                                                                        panel.pace.text())
    if advanced_s >= 0.85 * wall_s:
        assert panel.pace.text() == "playing at 1x"
    # the window's own thread held up for 1.5 s (a busy machine): the plots fall behind, and it says so
    time.sleep(1.5)
    window.on_status()
    assert panel.pace.text().startswith("behind by ")
    assert float(panel.pace.text().split()[2]) >= 1.0
    assert "#e65100" in panel.pace.styleSheet()
    # the player never dropped the time: drawn again, the plots catch up with the schedule
    qtbot.waitUntil(lambda: (window.on_status(), panel.pace.text() == "playing at 1x")[1], timeout=5000)
    assert window.errors == []


def _session_with_alerts(path) -> list[tuple[float, EventKind, str, str]]:
    """3 s of the rig's declared streams (daq samples) and a trip, an E-stop and a fault in them."""
    from uartlab.app.record.writer import SessionRecorder
    from uartlab.schema import daq_spec, declared_specs
    from uartlab.streams import Event, Record

    events = [(101.0, EventKind.PHASE, "runner", "ACTUATE"),
              (101.5, EventKind.TRIP, "runner", "tendon FDP 41.2 N over the 40 N limit"),
              (102.0, EventKind.ESTOP, "operator", "tendon caught"),
              (102.2, EventKind.FAULT, "daq", "the DAQ stopped answering")]
    with SessionRecorder(path, {"operator": "t"}, flush_interval_s=0.1) as rec:
        for spec in declared_specs(rate_hz=100.0).values():
            rec.add_stream(spec)
        daq = daq_spec(100.0)
        t = 100.0 + np.arange(300) / 100.0
        rec.write(Record(daq.name, t, {f.name: np.zeros((300, *f.shape), f.dtype) for f in daq.fields}))
        for e in events:
            rec.event(Event(*e))
    return events


def test_the_files_trips_estops_and_faults_are_shown_at_their_time_and_latch_nothing(qtbot, window, tmp_path):
    events = _session_with_alerts(tmp_path / "alerts.h5")
    t0 = open_session(qtbot, window, tmp_path / "alerts.h5")
    window.replay_panel.speed_combo.setCurrentText("5")
    window.replay_panel.play_button.click()
    log = window.log.toPlainText
    qtbot.waitUntil(lambda: "the DAQ stopped answering" in log(), timeout=10000)
    for t_s, kind, source, message in events:   # each at its time in the file, as the live rig's are logged
        assert f"(replay, t = {t_s - t0:.2f} s) {kind} [{source}] {message}" in log(), log()
    assert not window.ops.estop_latched and window.errors == []   # a recorded E-stop and fault are history
    window.on_status()
    assert not window.interlock_label.text().startswith(("E-STOP", "INTERLOCK TRIP")), window.interlock_label.text()
    window.grab().save(str(tmp_path / "replayed_alerts.png"))   # what the operator saw, kept with the test
