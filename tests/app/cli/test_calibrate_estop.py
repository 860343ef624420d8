"""`uartlab estop` from another terminal stops a calibration procedure moving the twin rig in a terminal of its
own: the procedure serves the rig core's E-stop address while it has the devices (app/serve/estop_point.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from uartlab.app.cli.calibrate import RIG_UP

pytestmark = pytest.mark.slow

CLI = [sys.executable, "-m", "uartlab.app.cli"]
UP_TIMEOUT_S = 120.0   # the twin rig's processes and the model's kernels on a loaded machine


class Lines:
    """A process's stderr, read on a thread, waited on line by line."""

    def __init__(self, stream):
        self.lines: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream) -> None:
        for line in stream:
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, text: str, timeout_s: float) -> str:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            found = next((line for line in self.lines if text in line), None)
            if found is not None:
                return found
            time.sleep(0.05)
        raise AssertionError(f"no line with {text!r} within {timeout_s:g} s:\n" + "\n".join(self.lines[-30:]))

    @property
    def text(self) -> str:
        self._thread.join(10)
        return "\n".join(self.lines)


def test_uartlab_estop_from_another_terminal_stops_a_procedure_at_the_rig_and_no_core_starts_meanwhile(tmp_path):
    base = f"ipc://{tmp_path}/core"
    env = {**os.environ, "UARTLAB_CORE": base, "PYTHONUNBUFFERED": "1"}
    store = tmp_path / "cal"
    procedure = subprocess.Popen([*CLI, "calibrate", "sea", "--rig", "twin", "--store", str(store)], env=env,
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                 text=True, start_new_session=True)
    said = Lines(procedure.stderr)
    try:
        said.wait_for(f"`uartlab estop` from any terminal reaches this procedure ({base})", UP_TIMEOUT_S)
        said.wait_for(RIG_UP, UP_TIMEOUT_S)
        time.sleep(1.0)   # loading the first tendon
        assert procedure.poll() is None, said.text
        # No core can start on the address while the procedure has the devices, and a client is told why.
        core = subprocess.run([*CLI, "rig", "serve", "--core", base], env=env, capture_output=True, text=True,
                              timeout=120)
        assert core.returncode != 0 and f"calibration procedure 'sea' at the rig (pid {procedure.pid}) already " \
            f"serves {base}, with the rig's devices: let it end" in core.stderr, core.stderr
        estop = subprocess.run([*CLI, "estop", "tendon", "caught"], env=env, capture_output=True, text=True,
                               timeout=60)
        assert estop.returncode == 0, estop.stderr
        assert estop.stdout.startswith(f"E-stop acknowledged by calibration procedure 'sea' at the rig (pid "
                                       f"{procedure.pid}) at {base}: torque off in "), estop.stdout
        assert procedure.wait(60) != 0
    finally:
        if procedure.poll() is None:
            procedure.kill()
            procedure.wait(30)
    out = said.text
    assert "E-STOP: tendon caught (E-stop from " in out and ": torque off on all six servos" in out, out
    assert "sea calibration stopped: interrupted (tendon caught (E-stop from " in out, out
    assert "; torque off" in out and "nothing written" in out, out
    assert not list(store.glob("*"))
    # Its address is free again: nothing answers there, and its socket and lock are not held.
    after = subprocess.run([*CLI, "estop"], env=env, capture_output=True, text=True, timeout=60)
    assert after.returncode == 3 and "NOTHING STOPPED" in after.stderr, after.stderr
    assert not Path(f"{tmp_path}/core.estop").exists()
