"""Shared fixtures. Qt tests (later issues) run offscreen; set it before anything imports Qt."""

from __future__ import annotations

import atexit
import gc
import os
import shutil
import tempfile
import time

import numpy as np
import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# What the window remembers (app/gui/settings.py) goes to a folder of this test session's own, never the
# operator's; subprocesses the tests start inherit it. Removed when the session ends.
os.environ["UARTLAB_CONFIG_DIR"] = tempfile.mkdtemp(prefix="uartlab-test-config-")
atexit.register(shutil.rmtree, os.environ["UARTLAB_CONFIG_DIR"], True)
try:  # Qt's own user settings too (a QFileDialog saves its state in QtProject.conf), in this process
    from PySide6.QtCore import QSettings
except ImportError:
    pass
else:
    for _format in (QSettings.Format.NativeFormat, QSettings.Format.IniFormat):
        QSettings.setPath(_format, QSettings.Scope.UserScope, os.environ["UARTLAB_CONFIG_DIR"])

from uartlab.sim import Finger, FingerParams  # noqa: E402


@pytest.fixture(autouse=True)
def _fresh_heap_for_realtime_tests(request):
    """Tests marked ``realtime`` run device threads against deadlines (the stale-stream interlock trips at
    0.25 s). A full cyclic-GC pass stops every thread, and over the ~350k objects this long test process
    accumulates it takes 200-400 ms (measured); a fresh `uartlab` process has a third of that heap. So
    these tests start with what earlier tests left alive frozen out of the collector's reach. No collection
    first: that pass is itself the stall, and a module's rig is already streaming when the fixture runs."""
    if request.node.get_closest_marker("realtime") is None:
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@pytest.fixture(scope="session")
def params() -> FingerParams:
    return FingerParams.uart()


@pytest.fixture(scope="session")
def finger(params) -> Finger:
    return Finger(params)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261202)


def random_pose(params: FingerParams, rng: np.random.Generator, margin_rad: float = 0.05) -> np.ndarray:
    lo, hi = params.rom_rad[:, 0] + margin_rad, params.rom_rad[:, 1] - margin_rad
    return rng.uniform(lo, hi)


def wait_for(condition, timeout_s: float = 2.0, poll_s: float = 0.005) -> bool:
    """Poll ``condition`` until true or ``timeout_s``: for what a twin's or rig's thread does on its own clock
    (a loaded machine may run it late)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(poll_s)
    return True


def short_suite_toml(pull_s: float = 1.0) -> str:
    """A one-trial suite for runs on the twin: ED pulled 10 mm over ``pull_s`` and back."""
    return f"""
[suite]
name = "short"
repeats = 1
[[trial]]
name = "ED"
pose = "Flex"
pulls = [{{ tendon = "ED", amplitude_mm = 10.0, duration_s = {pull_s!r} }}]
return = true
"""
