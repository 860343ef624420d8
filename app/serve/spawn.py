"""A rig core started as a child process for one client's work (`uartlab run` when no core is running).

    with core_for(base, rig=Path("rig.toml"), speed=2.0) as started:   # None: one answered already
        ...                                                            # attach with CoreClient(base)

The child is `uartlab rig serve` in its own session (a Ctrl-C at the terminal reaches the client, which
decides what it means, not the core); it is stopped with SIGTERM at the end (its run aborted, its file
closed, the rig stopped) and killed only if it does not stop. It is started ``--for-pid`` this process, so a
client killed outright (kill -9) leaves no core behind at the address: within 0.2 s of the client's end the
core aborts a run going with its safe action, closes the file and stops. A child that fails to start is one line:
its own last line on stderr, with its exit status's kind of error.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from uartlab.app.serve.client import CoreClient, NoCoreError
from uartlab.errors import EXIT_BAD_INPUT, ConfigError, DeviceError
from uartlab.processes import end_process

START_TIMEOUT_S = 90.0    # est.: the twin rig starts in 3-10 s; a loaded 2-core machine takes several times that
STOP_TIMEOUT_S = 30.0     # a run's abort, the file's close and the rig's stop


def running(base: str | None) -> bool:
    try:
        with CoreClient(base, subscribe=False):
            return True
    except NoCoreError:
        return False


@contextlib.contextmanager
def core_for(base: str, rig: Path | None = None, speed: float | None = None) -> Iterator[subprocess.Popen | None]:
    """A core at ``base`` for the block: the one already there, else a child started now and stopped after."""
    if running(base):
        yield None
        return
    cmd = [sys.executable, "-m", "uartlab.app.cli", "rig", "serve", "--core", base, "--for-pid", str(os.getpid())]
    cmd += ["--rig", str(rig)] if rig is not None else []
    cmd += ["--speed", repr(speed)] if speed is not None else []
    with tempfile.TemporaryFile("w+", encoding="utf-8") as err:
        child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL,
                                 start_new_session=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        try:
            _wait_ready(child, base, err)
            yield child
        finally:
            stop(child)


def _wait_ready(child: subprocess.Popen, base: str, err) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if child.poll() is not None:
            err.seek(0)
            lines = [line.strip() for line in err.read().splitlines() if line.strip()]
            said = lines[-1] if lines else f"exit status {child.returncode}"
            said = said.removeprefix("uartlab rig serve: ")
            kind = ConfigError if child.returncode == EXIT_BAD_INPUT else DeviceError
            raise kind(f"the rig core did not start: {said}")
        if running(base):
            return
        time.sleep(0.2)
    raise DeviceError(f"the rig core did not answer at {base} within {START_TIMEOUT_S:g} s of starting")


def stop(child: subprocess.Popen) -> None:
    end_process(child, STOP_TIMEOUT_S)
