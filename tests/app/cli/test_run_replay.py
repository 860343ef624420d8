"""`uartlab run SUITE --replay FILE`: a run recorded on the twin, replayed under its own limits and tighter
ones, through the real CLI; nothing moves, nothing is written."""

from __future__ import annotations

import json
import shutil

import h5py
import numpy as np
import pytest
from test_run_cli import twin_rig_with_a_store
from uartlab.app.cli.main import main
from uartlab.app.record.player import SessionFile
from uartlab.app.record.writer import SessionRecorder
from uartlab.app.run.replay_dry_run import recorded_trials
from uartlab.schema import actuators_spec

pytestmark = pytest.mark.realtime

# The small pull first: a replayed trial spans the runner's rows of its plan index, from the pretension on,
# so its first ticks can still see the tension the previous trial left (a big pull first would lend its peak
# to the small one's window).
TWO_TRIALS = """
[suite]
name = "two"
repeats = 1
[[trial]]
name = "FDS"
pose = "Flex"
pulls = [{ tendon = "FDS", amplitude_mm = 2.0, duration_s = 1.0 }]
return = true

[[trial]]
name = "ED"
pose = "Flex"
pulls = [{ tendon = "ED", amplitude_mm = 10.0, duration_s = 1.0 }]
return = true
"""


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """(suite file, session file): the two-trial suite run once on the twin at 2x, recorded."""
    tmp = tmp_path_factory.mktemp("replay")
    suite = tmp / "two.toml"
    suite.write_text(TWO_TRIALS, encoding="utf-8")
    rig = twin_rig_with_a_store(tmp)
    assert main(["run", str(suite), "--rig", str(rig), "--out", str(tmp / "out"), "--speed", "2",
                 "--no-live-model", "-q"]) == 0
    (path,) = (tmp / "out").glob("session_*_two.h5")
    return suite, path


def peak_tendon_force_N(path) -> dict[str, float]:
    """Per recorded trial: the largest tendon force the recorded run's control loop saw."""
    with SessionFile(path) as f:
        runner = f.read("runner")
        out = {}
        for t in recorded_trials(f):
            inside = (runner.host_time_s >= t.start_s) & (runner.host_time_s <= t.stop_s)
            out[t.name] = float(np.nanmax(runner.data["tendon_force_N"][inside]))
    return out


def test_the_recorded_limits_trip_nothing_and_tighter_ones_name_the_trials_that_would_have(recorded, capsys):
    suite, path = recorded
    before = sorted(p.name for p in path.parent.iterdir())
    assert main(["run", str(suite), "--replay", str(path)]) == 0
    out = capsys.readouterr().out
    assert "0 of 2 trials would have tripped" in out, out
    assert [line.split()[:3] for line in out.splitlines() if line.split()[:1] in (["ED"], ["FDS"])] == \
        [["FDS", "1", "completed"], ["ED", "1", "completed"]]

    # A limit between the two trials' peaks: the ED pull went over it, the small FDS pull did not.
    peaks = peak_tendon_force_N(path)
    limit = (peaks["ED"] + peaks["FDS"]) / 2
    assert peaks["ED"] > 1.15 * limit and peaks["FDS"] < 0.85 * limit, peaks   # a margin for tick timing
    assert main(["run", str(suite), "--replay", str(path), "--max-tendon-force", f"{limit:.2f}", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["limits"]["max_tendon_force_N"] == pytest.approx(limit, abs=0.01)
    fds, ed = report["trials"]
    assert (ed["trial"], ed["outcome"], ed["check"], ed["subject"]) == ("ED", "tripped", "force", "ED")
    assert ed["limit"] == pytest.approx(limit, abs=0.01) and limit < ed["value"] <= peaks["ED"] * 1.05
    assert 0 <= ed["at_s"] <= 3.0 and "over the limit" in ed["reason"]
    assert (fds["trial"], fds["outcome"], fds["check"]) == ("FDS", "completed", "")
    assert sorted(p.name for p in path.parent.iterdir()) == before          # nothing written


def test_a_bad_replay_is_one_line_and_exit_2(recorded, tmp_path, capsys):
    suite, path = recorded
    not_hdf5 = tmp_path / "notes.h5"
    not_hdf5.write_text("not a session", encoding="utf-8")
    assert main(["run", str(suite), "--replay", str(not_hdf5)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and str(not_hdf5) in err and "not a session file" in err
    assert main(["run", str(suite), "--replay", str(tmp_path / "missing.h5")]) == 2
    assert "missing.h5: no such file" in capsys.readouterr().err
    no_run = tmp_path / "record.h5"   # a session of `uartlab record`: streams, no run of a suite
    rec = SessionRecorder(no_run, {"config_text": "", "calibration_texts": {}})
    rec.add_stream(actuators_spec(100.0))
    rec.close()
    assert main(["run", str(suite), "--replay", str(no_run), "--rig", str(path.parent.parent / "rig.toml")]) == 2
    assert "record.h5: no `runner` stream: not a recorded run of a suite" in capsys.readouterr().err
    no_cal = tmp_path / "no_cal.h5"   # the Nano17's rails come from the .cal file the session embeds
    shutil.copy(path, no_cal)
    with h5py.File(no_cal, "r+") as f:
        del f["config/calibration/twin_nano17.cal"]
    assert main(["run", str(suite), "--replay", str(no_cal)]) == 2
    assert "no_cal.h5:/config/calibration: no twin_nano17.cal embedded" in capsys.readouterr().err
    assert main(["run", str(suite), "--replay", str(path), "--speed", "2"]) == 2
    assert "--speed: not with --replay" in capsys.readouterr().err
    assert main(["run", str(suite), "--max-tendon-force", "3", "--dry-run"]) == 2
    assert "--max-tendon-force: only with --replay" in capsys.readouterr().err
