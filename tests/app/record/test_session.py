"""Twin rig -> hub -> HDF5 session file -> replay: every sample arrives, with its timestamps."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest
from uartlab.app.record.player import ReplayRig, SessionFile
from uartlab.app.record.session import RecordingSession
from uartlab.app.rig.config import default_rig_config
from uartlab.app.rig.rig import Rig

pytestmark = pytest.mark.realtime


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """Two seconds of the default twin rig, recorded, with a second subscriber keeping what the hub sent."""
    path = tmp_path_factory.mktemp("session") / "s.h5"
    with Rig(default_rig_config()) as rig:
        session = RecordingSession(rig, path, operator="test", notes="round trip")
        witness = rig.hub.subscribe("witness", maxsize=1_000_000)  # after the recorder: a subset of its view
        session.begin_trial("hold", "test", {"seconds": 2.0})
        time.sleep(2.0)
        session.end_trial("done")
        rig.hub.event("operator", "test", "stop")
        time.sleep(0.3)  # let the last records reach both subscribers
        sent = [item for item in witness.drain() if hasattr(item, "stream")]
        summary = session.close()
    return path, sent, summary


@pytest.mark.slow
def test_every_sample_the_hub_published_is_in_the_file(recorded):
    path, sent, summary = recorded
    with SessionFile(path) as f:
        assert f.complete
        for stream in ("actuators", "daq", "mocap"):
            mine = [r for r in sent if r.stream == stream]
            assert mine, stream
            times = np.concatenate([r.host_time_s for r in mine])
            stored = f.host_times(stream)
            # The witness subscribed after the recorder, so everything it saw must be in the file, in order.
            assert np.all(np.isin(times, stored)), stream
            assert np.all(np.diff(stored) >= 0), stream
        assert "rig.toml" in f.config_text or "[actuators]" in f.config_text
        assert any("twin_nano17.cal" in name for name in f.calibration_texts)
        events = f.events()
        clocks = {e.source: json.loads(e.message) for e in events if e.kind == "clock" and e.message.startswith("{")}
        assert {"daq", "mocap"} <= set(clocks)
        drops = {e.source: json.loads(e.message) for e in events if e.kind == "drops"}
        assert not any(drops["recorder"].values()) and not any(drops["hub"].values())
        assert f.trials()[0]["outcome"] == "done"
    assert summary["recorder_drops"] == {} or not any(summary["recorder_drops"].values())
    assert not any(n for counts in summary["hub_drops"].get("recorder", {}).values() for n in [counts])
    assert set(summary["clock_sync"]) >= {"daq", "mocap"}


@pytest.mark.slow
def test_replay_gives_back_the_same_samples_and_timestamps(recorded):
    path, _, _ = recorded
    with SessionFile(path) as f:
        expected = {s: f.read(s) for s in ("actuators", "daq", "mocap")}
    replay = ReplayRig(path, speed="max")
    got: dict[str, list] = {s: [] for s in expected}
    for record in replay.records():
        got.setdefault(record.stream, []).append(record)
    for stream, want in expected.items():
        rec = got[stream]
        times = np.concatenate([r.host_time_s for r in rec])
        np.testing.assert_array_equal(times, want.host_time_s)
        for name, values in want.data.items():
            np.testing.assert_array_equal(np.concatenate([r.data[name] for r in rec]), values, err_msg=name)


@pytest.mark.slow
def test_replay_publishes_into_a_hub_like_the_live_rig(recorded):
    path, _, _ = recorded
    replay = ReplayRig(path, speed="max")
    sub = replay.hub.subscribe("consumer", maxsize=1_000_000)
    replay.start()
    assert replay.wait(60)
    records = [r for r in sub.drain() if getattr(r, "stream", None) == "daq"]
    with SessionFile(path) as f:
        np.testing.assert_array_equal(np.concatenate([r.host_time_s for r in records]), f.host_times("daq"))
    assert set(replay.hub.specs) == {"actuators", "daq", "mocap", "joints", "runner", "model"}


def test_session_path_keeps_a_suite_name_inside_the_folder(tmp_path):
    from datetime import datetime

    from uartlab.app.record.session import session_path

    when = datetime(2026, 12, 3, 14, 5, 9)
    path = session_path(tmp_path, "a/../../b", when)
    assert path.parent == tmp_path and path.name == "session_20261203_140509_a_.._.._b.h5"
    assert session_path(tmp_path, "../..", when).name == "session_20261203_140509.h5"
    assert session_path(tmp_path, "free_motion", when).name == "session_20261203_140509_free_motion.h5"


def _drops(path) -> dict[str, dict[str, int]]:
    with SessionFile(path) as f:
        return {e.source: json.loads(e.message) for e in f.events() if e.kind == "drops"}


@pytest.mark.slow
def test_each_session_of_a_rig_counts_only_its_own_drops(tmp_path, monkeypatch):
    """A rig that records session after session (a rig core): what the hub dropped for one session's recorder
    is in that session's file, not in every later one's."""
    from uartlab.app.record import session as session_module

    with Rig(default_rig_config()) as rig:
        monkeypatch.setattr(session_module, "QUEUE_RECORDS", 1)   # a recorder that cannot keep up
        first = RecordingSession(rig, tmp_path / "first.h5")
        monkeypatch.undo()
        time.sleep(1.0)
        first.close()
        second = RecordingSession(rig, tmp_path / "second.h5")
        time.sleep(1.0)
        summary = second.close()
    assert sum(_drops(tmp_path / "first.h5")["hub"].values()) > 0   # the queue of one did drop
    assert _drops(tmp_path / "second.h5")["hub"] == {} and summary["hub_drops"]["recorder"] == {}


@pytest.mark.slow
def test_a_session_closed_while_another_process_reads_it_live_is_complete(tmp_path):
    """A reader watching the live file (the window's replay, a notebook, `uartlab verify`) holds HDF5's shared
    lock: the recorder's last step, which marks the file complete, opened it for writing and was refused."""
    import subprocess
    import sys

    path = tmp_path / "watched.h5"
    with Rig(default_rig_config()) as rig:
        session = RecordingSession(rig, path)
        reader = subprocess.Popen(   # opens the live file as the app's reader does, and holds it until told
            [sys.executable, "-c", "import sys\nfrom uartlab.app.record.player import SessionFile\n"
             "with SessionFile(sys.argv[1]) as f:\n    print(f.complete, flush=True)\n    sys.stdin.readline()\n"
             "    print(f.complete, flush=True)", str(path)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            assert reader.stdout.readline().strip() == "False"   # open, live
            time.sleep(0.5)
            session.close()                                       # while the reader holds the file
        finally:
            out, _ = reader.communicate("\n", timeout=60)
    assert reader.returncode == 0
    with SessionFile(path) as f:
        assert f.complete and f.length("daq") > 0
