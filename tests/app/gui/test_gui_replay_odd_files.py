"""The window replaying files an operator may meet: one with a damaged chunk plays every part it can read and
says once, in a warning that stays, which dataset's rows it skipped and how to get a whole copy; one that
ended before its first sample says there is nothing to play."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from conftest import damage_chunk  # noqa: E402
from uartlab.app.compare.synthetic import write_model_session  # noqa: E402
from uartlab.app.record.player import SessionFile  # noqa: E402
from uartlab.schema import ACTUATORS, DAQ, JOINTS_IK  # noqa: E402
from uartlab.sim.scenarios import free_motion_trial  # noqa: E402


def test_a_file_without_samples_says_there_is_nothing_to_play(qtbot, window, tmp_path):
    from uartlab.app.record.writer import SessionRecorder
    from uartlab.schema import declared_specs

    path = tmp_path / "empty.h5"
    with SessionRecorder(path, {"operator": "t"}) as rec:   # a recording stopped before its first sample
        for spec in declared_specs(rate_hz=100.0).values():
            rec.add_stream(spec)
    window.ops.open_replay(str(path))
    panel = window.replay_panel
    qtbot.waitUntil(lambda: "nothing to replay" in panel.info.text(), timeout=10000)
    assert panel.info.text().endswith("no sample recorded: nothing to replay (6 streams, closed cleanly)")
    assert not panel.play_button.isEnabled()
    window.on_status()
    assert panel.pace.text() == "" and window.errors == []


def test_a_damaged_file_replays_what_it_can_and_says_what_it_skipped(qtbot, window, tmp_path):
    path = tmp_path / "session.h5"
    write_model_session(path, [free_motion_trial("FDP"), free_motion_trial("ED")], repeats=2, seed=1)
    _, stop = damage_chunk(str(path), f"streams/{ACTUATORS.stream}/{ACTUATORS.excursion_m}", 0)
    with SessionFile(path) as f:
        streams = (ACTUATORS.stream, DAQ.stream, JOINTS_IK.stream)
        t_last = {name: float(f.host_times(name)[-1]) for name in streams}
        assert stop < f.length(ACTUATORS.stream)            # the rest of the stream is whole
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
