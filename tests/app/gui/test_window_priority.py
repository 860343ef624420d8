"""`uartlab gui` runs its window ahead of ordinary load where the OS allows (app/run/realtime.py), and behind
the rig's own threads; where it is not allowed the window runs as it was started."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from conftest import nice_allowed, thread_nices
from uartlab.app.run.realtime import NICE_RAISE, WINDOW_NICE

pytest.importorskip("PySide6")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice values are Linux's")
def test_the_window_runs_ahead_of_ordinary_load_and_behind_the_rig(tmp_path):
    started_at = os.getpriority(os.PRIO_PROCESS, 0)
    # never lowered; not raised where the OS refuses
    expected = started_at if started_at <= WINDOW_NICE or not nice_allowed(WINDOW_NICE) else WINDOW_NICE
    assert WINDOW_NICE > NICE_RAISE        # behind the rig core's threads
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "UARTLAB_CONFIG_DIR": str(tmp_path / "config")}
    window = subprocess.Popen([sys.executable, "-m", "uartlab.app.cli", "gui"], env=env, cwd=tmp_path,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while True:   # until the window is up (Qt's own threads started) with every thread at the expected nice
            assert window.poll() is None, window.stderr.read()
            nices = thread_nices(window.pid)
            if len(nices) >= 3 and nices == [expected] * len(nices):
                break
            assert time.monotonic() < deadline, f"the window's threads at nice {nices}, expected {expected}"
            time.sleep(0.1)
        time.sleep(1.0)                    # threads the window starts later inherit it
        assert thread_nices(window.pid) == [expected] * len(thread_nices(window.pid))
    finally:
        window.kill()
        window.wait(10)
