"""`uartlab run` on a rig that cannot place the finger itself (real mocap, here the twin in its own process
reached over NatNet): the core says the trial needs the operator; a terminal asks and Enter goes on, no
terminal aborts the run in one line instead of waiting forever."""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import short_suite_toml
from test_core import start_core, stop_core
from test_core_killed import real_rig_toml, start_twin
from uartlab.app.record.player import SessionFile
from uartlab.app.serve.client import CoreClient

pytestmark = [pytest.mark.realtime, pytest.mark.slow]

CLI = [sys.executable, "-m", "uartlab.app.cli"]
PROMPT = "Place the finger in Flex pose with no surface, then press Enter"


def mocap_store(folder: Path) -> None:
    """A calibration store of the twin's plant (SEA fits, a Nano17 tare, the marker calibration), so the rig's
    joint angles come from real mocap."""
    from uartlab.app.procedures.on_twin import run_mocap, run_nano17, run_sea
    from uartlab.calibration.store import CalibrationRecord, CalibrationStore

    store = CalibrationStore(folder / "calibrations")
    for kind, (values, residuals, _, _) in (("sea", run_sea(seed=0, perturbation=0.0)), ("nano17", run_nano17(seed=0)),
                                            ("mocap", run_mocap(seed=0))):
        store.save(CalibrationRecord(kind, values, residuals))


@pytest.fixture(scope="module")
def real_core(tmp_path_factory):
    folder = tmp_path_factory.mktemp("operator")
    twin, where = start_twin(folder / "twin.log")
    try:
        mocap_store(folder)
        rig = real_rig_toml(folder, where)
        rig.write_text(rig.read_text(encoding="utf-8").replace('store = ""', 'store = "calibrations"'),
                       encoding="utf-8")
        base = f"ipc://{folder}/core"
        core = start_core(base, "--rig", str(rig), log=folder / "serve.log", speed=None)
        with CoreClient(base, subscribe=False) as client:   # the twin's devices, reached over their protocols
            deadline = time.monotonic() + 60
            while set(health := client.status()["health"].values()) != {"streaming"} and time.monotonic() < deadline:
                time.sleep(0.2)
            assert set(health) == {"streaming"}, client.status()["health"]
        suite = folder / "short.toml"
        suite.write_text(short_suite_toml(1.0), encoding="utf-8")
        yield base, suite
        stop_core(core)
    finally:
        twin.send_signal(signal.SIGINT)
        try:
            twin.wait(30)
        except subprocess.TimeoutExpired:
            twin.kill()


def test_without_a_terminal_the_run_is_aborted_in_one_line(real_core, tmp_path):
    base, suite = real_core
    proc = subprocess.run([*CLI, "run", str(suite), "--core", base, "--out", str(tmp_path), "--no-live-model"],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    said = [line for line in proc.stderr.splitlines() if "needs the operator" in line]
    assert said == ["uartlab run: trial ED needs the operator (place the finger in Flex pose with no surface) but "
                    "stdin is not a terminal: the run is aborted"], proc.stderr
    (path,) = tmp_path.glob("session_*.h5")
    with SessionFile(path) as f:
        assert f.complete and any("stdin is not a terminal" in e.message for e in f.events())


def test_at_a_terminal_the_operator_is_asked_and_enter_goes_on(real_core, tmp_path):
    base, suite = real_core
    main, child = pty.openpty()
    proc = subprocess.Popen([*CLI, "run", str(suite), "--core", base, "--out", str(tmp_path), "--no-live-model"],
                            stdin=child, stdout=child, stderr=child, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    os.close(child)
    text = ""
    try:
        text = read_until(main, PROMPT, timeout_s=120)
        with CoreClient(base, subscribe=False) as client:   # before placing the finger: the tare is allowed
            assert client.request("tare") == {"tared": True}
        os.write(main, b"\n")
        text += read_until(main, "session file:", timeout_s=120)
        assert proc.wait(60) == 0, text
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(main)
    assert ": DONE" in text and "1 of 1 trials run" in text
    (path,) = tmp_path.glob("session_*.h5")
    with SessionFile(path) as f:
        assert [t["outcome"] for t in f.trials()] == ["settled"]


def read_until(fd: int, marker: str, timeout_s: float) -> str:
    text, deadline = "", time.monotonic() + timeout_s
    while marker not in text and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                text += os.read(fd, 4096).decode(errors="replace")
            except OSError:
                break
    assert marker in text, text
    return text
