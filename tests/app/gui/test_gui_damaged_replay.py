"""The window replaying a session file with a damaged chunk: it plays every part it can read, and says once,
in a warning that stays, which dataset's rows it skipped and how to get a whole copy."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from conftest import damage_chunk  # noqa: E402
from PySide6.QtCore import QSettings  # noqa: E402
from uartlab.app.compare.synthetic import write_model_session  # noqa: E402
from uartlab.app.gui.app import qt_app  # noqa: E402
from uartlab.app.gui.main_window import MainWindow  # noqa: E402
from uartlab.app.record.player import SessionFile  # noqa: E402
from uartlab.schema import ACTUATORS, DAQ, JOINTS_IK  # noqa: E402
from uartlab.sim.scenarios import free_motion_trial  # noqa: E402


def test_a_damaged_file_replays_what_it_can_and_says_what_it_skipped(qtbot, tmp_path):
    path = tmp_path / "session.h5"
    write_model_session(path, [free_motion_trial("FDP"), free_motion_trial("ED")], repeats=2, seed=1)
    _, stop = damage_chunk(str(path), f"streams/{ACTUATORS.stream}/{ACTUATORS.excursion_m}", 0)
    with SessionFile(path) as f:
        streams = (ACTUATORS.stream, DAQ.stream, JOINTS_IK.stream)
        t_last = {name: float(f.host_times(name)[-1]) for name in streams}
        assert stop < f.length(ACTUATORS.stream)            # the rest of the stream is whole
    qt_app()
    window = MainWindow(QSettings(str(tmp_path / "gui.ini"), QSettings.Format.IniFormat),
                        core_address=f"ipc://{tmp_path / 'core'}")
    qtbot.addWidget(window)
    window.show()
    try:
        window.ops.open_replay(str(path))
        qtbot.waitUntil(lambda: window.replay_panel.play_button.isEnabled(), timeout=10000)
        window.replay_panel.speed_combo.setCurrentText("max")
        window.replay_panel.play_button.click()
        # the replay goes on past the damage to the end of the file, where it holds
        qtbot.waitUntil(lambda: all(window.data.last_t.get(name, 0.0) >= t_last[name] for name in streams),
                        timeout=20000)
        window.on_status()
        warnings = [n for n in window.notifications.notices if n.level == "warning"]
        assert len(warnings) == 1, warnings
        assert warnings[0].what == "replay of session.h5"
        assert warnings[0].text.startswith(f"/streams/{ACTUATORS.stream}/{ACTUATORS.excursion_m} rows 0-")
        assert "damaged (a chunk fails its checksum or decompression); the replay skips" in warnings[0].text
        assert warnings[0].next_step.startswith(f"uartlab verify --repair {path}")
        assert window.errors == []
    finally:
        window.close()
