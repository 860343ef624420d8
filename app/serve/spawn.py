"""A rig core started as a child process for a client (`uartlab run` when no core is running; the window).

    with core_for(base, rig=Path("rig.toml"), speed=2.0) as started:   # None: one answered already
        ...                                                            # attach with CoreClient(base)

The child is `uartlab rig serve` in its own session (a Ctrl-C at the terminal reaches the client, which
decides what it means, not the core). Its output - what it logs, a stall report - is appended to
``rig-core.log`` in the operator's uartlab folder (app/user_config.py): the child has no terminal of its own,
and after a run that went wrong this log is where the core's side of the story is. A child that fails to
start is one line: its own last line, with its exit status's kind of error.

`uartlab run` stops its child with SIGTERM at the end (its run aborted, its file closed, the rig stopped),
killing it only if it does not stop. It is started ``--for-pid`` the client, so a client killed outright
(kill -9) leaves no core behind at the address: within 0.2 s of the client's end the core aborts a run going
with its safe action, closes the file and stops.
"""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from uartlab.app.serve.client import CONNECT_TIMEOUT_S, PROBE_TIMEOUT_S, core_answers
from uartlab.app.serve.endpoints import holder, is_core
from uartlab.app.user_config import config_dir
from uartlab.errors import EXIT_BAD_INPUT, ConfigError, DeviceError
from uartlab.processes import end_process

START_TIMEOUT_S = 90.0    # est.: the twin rig starts in 3-10 s; a loaded 2-core machine takes several times that
STOP_TIMEOUT_S = 30.0     # a run's abort, the file's close and the rig's stop
LOG_NAME = "rig-core.log"
LOG_KEEP_BYTES = 5_000_000   # past this at a start, the log moves to rig-core.log.1 (one older log kept)
LOG_HEADER = "--- "          # how each start's line in the log begins (its time and command follow)

log = logging.getLogger(__name__)


def core_present(base: str, timeout_s: float = PROBE_TIMEOUT_S) -> bool:
    """A core holds ``base`` or answers there: a busy core may answer late, and its lock tells. DeviceError
    when a calibration procedure at the rig holds it (it has the devices: no core may start, none answers)."""
    held_by = holder(base)
    if held_by is not None and not is_core(held_by):
        raise DeviceError("rig", f"{held_by} has the rig's devices at {base}: let it end, then connect")
    return held_by is not None or core_answers(base, timeout_s)


def core_log_path(folder: Path | None = None) -> Path:
    """Where a core started for a client writes: ``folder`` (the window's settings folder), else the
    operator's uartlab folder."""
    return (folder if folder is not None else config_dir()) / LOG_NAME


def start_core(base: str, rig: str | Path | None = None, speed: float | None = None, for_pid: int | None = None,
               log_path: Path | None = None) -> subprocess.Popen:
    """``uartlab rig serve`` at ``base`` on ``rig`` (None or "": the twin rig), its output appended to
    ``log_path`` (default ``core_log_path()``). ``process.log_path``/``log_from``: where its output starts."""
    cmd = [sys.executable, "-m", "uartlab.app.cli", "rig", "serve", "--core", base]
    cmd += ["--rig", str(rig)] if rig else []
    cmd += ["--speed", repr(speed)] if speed is not None else []
    cmd += ["--for-pid", str(for_pid)] if for_pid is not None else []
    log_path = log_path if log_path is not None else core_log_path()
    try:
        out = _open_log(log_path)
    except OSError as exc:   # an unwritable uartlab folder costs the log's place, not the run
        fallback = Path(tempfile.gettempdir()) / f"uartlab-{os.getuid()}-{LOG_NAME}"
        log.warning("cannot write the rig core's log %s (%s): it goes to %s", log_path, exc.strerror or exc, fallback)
        log_path, out = fallback, _open_log(fallback)
    with out:   # the child has its own copy of the descriptor
        start = out.tell()
        out.write(f"{LOG_HEADER}{time.strftime('%Y-%m-%d %H:%M:%S')} {' '.join(cmd[1:])}\n".encode())
        out.flush()
        process = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    process.log_path, process.log_from = log_path, start  # type: ignore[attr-defined]
    return process


def _open_log(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        if path.stat().st_size > LOG_KEEP_BYTES:
            path.replace(path.with_name(path.name + ".1"))
    return open(path, "ab")  # noqa: SIM115 - closed by the caller once the child has it


def wait_until_answers(process: subprocess.Popen, base: str, timeout_s: float = START_TIMEOUT_S) -> None:
    """Until the core we started answers. If it exits first: its last words (bad input is one line), as a
    ConfigError for bad input, else a DeviceError; a DeviceError too if it does not answer in time."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            said = last_words(process) or f"exit status {process.returncode}"
            kind = ConfigError if process.returncode == EXIT_BAD_INPUT else DeviceError
            raise kind(f"the rig core did not start: {said}")
        if core_answers(base):
            return
        time.sleep(0.1)
    raise DeviceError(f"the rig core did not answer at {base} within {timeout_s:g} s of starting")


def last_words(process: subprocess.Popen) -> str:
    """The last line a core we started wrote (its one-line error), without its command's prefix."""
    path = getattr(process, "log_path", None)
    if path is None:
        return ""
    try:
        with open(path, "rb") as f:
            f.seek(getattr(process, "log_from", 0))
            lines = [line.strip() for line in f.read().decode("utf-8", "replace").splitlines() if line.strip()]
    except OSError:
        return ""
    lines = [line for line in lines if not line.startswith(LOG_HEADER)]
    return lines[-1].removeprefix("uartlab rig serve: ") if lines else ""


@contextlib.contextmanager
def core_for(base: str, rig: Path | None = None, speed: float | None = None) -> Iterator[subprocess.Popen | None]:
    """A core at ``base`` for the block: the one already there, else a child started now and stopped after."""
    if core_present(base, CONNECT_TIMEOUT_S):
        yield None
        return
    child = start_core(base, rig, speed, for_pid=os.getpid())
    try:
        wait_until_answers(child, base)
        yield child
    finally:
        stop(child)


def stop(child: subprocess.Popen) -> None:
    end_process(child, STOP_TIMEOUT_S)
