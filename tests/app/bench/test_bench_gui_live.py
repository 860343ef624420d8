"""`uartlab bench gui --live` (app/gui/bench_live.py): the real window attached to a rig core on the twin rig,
measured during a real trial. No frame-rate goal is asserted here (the machine is shared); the bench's exit
status says whether it met its own, and the report must describe what happened."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from uartlab.schema import ACTUATORS, DAQ, JOINTS_IK, MODEL_STREAM, RUNNER_STREAM, WATCHED_STREAMS, Phase

pytestmark = pytest.mark.slow   # a rig core, its twin rig and the live model


def test_the_bench_draws_the_window_during_a_real_trial_and_reports_what_reached_it(tmp_path, request):
    temporary = Path(tempfile.mkdtemp(prefix="ubg-"))   # short: the bench's core sockets are made in it
    request.addfinalizer(lambda: shutil.rmtree(temporary, ignore_errors=True))
    done = subprocess.run([sys.executable, "-m", "uartlab.app.cli", "bench", "gui", "--live", "--seconds", "1.5",
                           "--json"], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                          env=dict(os.environ, TMPDIR=str(temporary)))
    assert done.returncode in (0, 1), done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert done.returncode == (0 if report["fps_ok"] else 1)
    assert report["trial"] == "free/FDP" and report["fault_reason"] is None
    assert report["seconds"] >= 1.5 and report["frames_drawn"] >= 1 and report["fps"] > 0
    # measured while the trial ran: its phases, as the runner names them, none after it
    trial = {Phase.ARMED, Phase.PRETENSION, Phase.ACTUATE, Phase.SETTLE, Phase.RECORD}
    assert report["phases"] and {Phase(p) for p in report["phases"]} <= trial, report["phases"]
    # the window drew what a real run sends it: the rig's streams, the runner and the live model beside them
    received = set(report["messages_per_s"])
    assert {RUNNER_STREAM, MODEL_STREAM, ACTUATORS.stream, DAQ.stream, JOINTS_IK.stream} <= received, received
    assert received <= {*WATCHED_STREAMS, RUNNER_STREAM, MODEL_STREAM, "events"}, received
    assert report["points_per_frame"] > 0
    assert list(tmp_path.iterdir()) == []
    assert list(temporary.iterdir()) == []   # its core, recordings and settings were its own, removed
