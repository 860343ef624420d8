"""`uartlab run` / `uartlab demo` as a client of the rig core: submit the suite, show its progress, prompt
the operator when the next trial needs a person, print the summary the core sends.

The core is the one at ``--core`` (default: $UARTLAB_CORE, else the usual ipc address), or, when none
answers there, `uartlab rig serve` started as a child for this run and stopped after (app/serve/spawn.py).
Ctrl-C aborts the run (its safe action: the servos hold or torque off, the file closed); a second Ctrl-C
is the E-stop (torque off, latched; exit 130). When the core says the next trial needs the operator (a pose
or surface change the rig cannot make itself), the terminal asks for it and Enter confirms; without a
terminal on stdin the run is aborted, said in one line, instead of waiting forever.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from uartlab.errors import EXIT_ESTOP, EXIT_RUN_FAILED, DeviceError, OutputError
from uartlab.processes import how_it_ended, is_alive

POLL_S = 0.1
CHILD_CHECK_S = 0.5        # a status request's turn before looking at the core this command started
CHILD_EXIT_WAIT_S = 0.2    # a killed core's socket closes a moment before its exit can be read
ABORT_WHY = "operator abort: Ctrl-C at the console"
# Asked to end (kill, `timeout`, a closed terminal, the session's logout): the run is aborted as by a Ctrl-C,
# and a core started for it stops after, rather than this process dying with both left running.
ENDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
ESTOP_WHY = "E-stop: Ctrl-C at the console"


def run_on_core(args: argparse.Namespace, request: dict[str, Any]) -> int:
    from uartlab.app.serve.endpoints import endpoints_for, is_local
    from uartlab.app.serve.spawn import core_for

    base = endpoints_for(getattr(args, "core", None)).base
    if not is_local(base):
        with _client(args, base) as core:   # a remote core is never started from here
            return _submit_and_watch(core, args, request)
    with core_for(base, args.rig, args.speed) as child:
        if child is None and args.speed is not None and not _quiet(args):
            print(f"warning: --speed {args.speed:g} not applied: the core at {base} runs the rig it was started "
                  "with", file=sys.stderr, flush=True)
        with _client(args, base) as core:
            return _submit_and_watch(core, args, request, child)


def _client(args: argparse.Namespace, base: str):
    from uartlab.app.serve.client import CoreClient

    keys = getattr(args, "keys", None)
    return CoreClient(base, subscribe=False, keys_dir=Path(keys) if keys else None)


def _quiet(args: argparse.Namespace) -> bool:
    return bool(args.json or getattr(args, "quiet", 0) > 0)


class _Interrupts:
    """Ctrl-Cs counted exactly: the first asks for an abort, the second for the E-stop; the loop acts on them.
    SIGTERM or SIGHUP asks for the abort too (``ended_by``), never the E-stop.

    Python runs a handler once for signals that arrive while the main thread waits in C (two presses 30 ms
    apart while a request to the core is out), but its wakeup fd gets one byte per signal: they are counted
    there, and waiting on it wakes the loop at once.
    """

    def __enter__(self) -> _Interrupts:
        self.count = 0
        self.ended_by: str | None = None   # the name of an ending signal that came
        self._read_fd, self._write_fd = os.pipe()
        os.set_blocking(self._read_fd, False)
        os.set_blocking(self._write_fd, False)
        self._previous_handlers = {signum: signal.signal(signum, lambda signum, frame: None)
                                   for signum in (signal.SIGINT, *ENDING_SIGNALS)}
        self._previous_fd = signal.set_wakeup_fd(self._write_fd, warn_on_full_buffer=False)
        return self

    def __exit__(self, *exc) -> None:
        signal.set_wakeup_fd(self._previous_fd)
        for signum, handler in self._previous_handlers.items():
            signal.signal(signum, handler)
        os.close(self._read_fd)
        os.close(self._write_fd)

    def wait(self, timeout_s: float) -> None:
        select.select([self._read_fd], [], [], timeout_s)
        self.take()

    def take(self) -> int:
        with contextlib.suppress(BlockingIOError):   # nothing new
            came = os.read(self._read_fd, 256)
            self.count += came.count(signal.SIGINT)
            ending = next((signal.Signals(s).name for s in ENDING_SIGNALS if s in came), None)
            self.ended_by = self.ended_by or ending
        return self.count


def _submit_and_watch(core, args: argparse.Namespace, request: dict[str, Any],
                      child: subprocess.Popen | None = None) -> int:
    with _Interrupts() as interrupts:
        core.request("run", **request)
        status, acted = _watch(core, interrupts, _quiet(args), child)
        run = status["run"]
        if "error" in run:
            from uartlab.app.serve.client import error_from

            raise error_from(run["error"]["kind"], run["error"]["text"])
        report = run.get("report")
        if report is not None:
            print(json.dumps(report["json"], indent=2) if args.json else report["text"])
        # Ctrl-C stays the abort, then the E-stop, until this command ends: one while the report printed too.
        acted = _act_on(interrupts, acted, core)
    if "close_error" in run:
        raise OutputError(run["close_error"])
    if acted >= 2:
        return EXIT_ESTOP
    return EXIT_RUN_FAILED if run.get("phase") in ("FAULT", "ABORTED") else 0


def _watch(core, interrupts: _Interrupts, quiet: bool, child: subprocess.Popen | None) -> tuple[dict, int]:
    """Progress until the run is over: its last status, and how many Ctrl-Cs were acted on."""
    tty = sys.stdout.isatty() and not quiet
    started, shown, said, acted = time.monotonic(), "", 0, 0
    prompt = _Prompt(core)
    file: str | None = None
    while True:
        # Ctrl-C first, as soon as it woke us: an E-stop never waits behind a status round trip (which, while
        # the core closes an aborted run's file, takes as long as the closing).
        acted = _act_on(interrupts, acted, core)
        status = _status(core, child, file)
        file = (status.get("session") or {}).get("path", file)
        run = status["run"]
        for warning in run.get("warnings", [])[said:]:
            print(f"warning: {warning}", file=sys.stderr, flush=True)
        said = len(run.get("warnings", []))
        if run["state"] == "over":
            break
        if run.get("operator_needed") and acted == 0:
            prompt.ask(run["operator_needed"])
        if not quiet and "phase" in run:
            line = _progress_line(run, time.monotonic() - started)
            if tty:
                print("\r" + line.ljust(100)[:100], end="", flush=True)
            elif run.get("message", "") != shown:   # a log: one line per runner event
                shown = run.get("message", "")
                print(f"[{time.monotonic() - started:7.1f} s] {shown}", flush=True)
        interrupts.wait(POLL_S)
    # A second Ctrl-C that comes as the aborted run ends is still the E-stop the operator asked for.
    acted = _act_on(interrupts, acted, core)
    if tty:
        print()
    return status, acted


def _status(core, child: subprocess.Popen | None, file: str | None) -> dict:
    """The core's status, asked in short turns with the core's process looked at between them (the one this
    command started, or one on this machine whose pid its hello gave): its death is said at once, not after a
    request's whole timeout. A core elsewhere is asked once, with the whole timeout."""
    from uartlab.app.serve.client import REQUEST_TIMEOUT_S, NoCoreError
    from uartlab.app.serve.endpoints import is_local

    pid = core.hello.get("pid")
    if child is None and not (isinstance(pid, int) and is_local(core.ends.base)):
        return core.status()
    deadline = time.monotonic() + REQUEST_TIMEOUT_S
    while True:
        _check_alive(child, None, file)
        try:
            return core.request("status", timeout_s=CHILD_CHECK_S)
        except NoCoreError:   # a pid not seen is trusted only from a core that does not answer either:
            _check_alive(child, pid, file, wait_s=CHILD_EXIT_WAIT_S)   # another PID namespace would hide it
            if time.monotonic() >= deadline:
                raise


def _check_alive(child: subprocess.Popen | None, pid: int | None, file: str | None, wait_s: float = 0.0) -> None:
    """The rig core has ended mid-run: how (the one this command started) or that it has (another one on this
    machine), and what it leaves (DeviceError)."""
    if child is not None:
        try:
            ended = f"the rig core this run started (pid {child.pid}) {how_it_ended(child.wait(wait_s))}"
        except subprocess.TimeoutExpired:
            return
    elif pid is not None and not is_alive(pid):
        ended = f"the rig core (pid {pid}) has exited"
    else:
        return
    left = f"; {file} keeps what was flushed (`uartlab verify` it)" if file else ""
    raise DeviceError(f"{ended} mid-run: the servos' Bus Watchdog stops them, torque on, holding{left}")


def _act_on(interrupts: _Interrupts, acted: int, core) -> int:
    """Acts on the Ctrl-Cs not yet acted on: the first is an abort, any later one the E-stop; an ending signal
    is an abort (once: ``acted`` counts it as a Ctrl-C)."""
    if interrupts.take() == acted and interrupts.ended_by and acted == 0:
        why = f"operator abort: uartlab run got {interrupts.ended_by}"
        core.request("abort", why=why)
        print(f"\n{why}: the run stops with its safe action", flush=True)
        interrupts.count = max(interrupts.count, 1)
        return interrupts.count
    if interrupts.count > acted:
        if acted == 0 and interrupts.count == 1:
            core.request("abort", why=ABORT_WHY)
            print(f"\n{ABORT_WHY}: the run stops with its safe action (Ctrl-C again: E-stop)", flush=True)
        else:
            reply = core.estop(ESTOP_WHY)
            print(f"\n{ESTOP_WHY}: torque off{_where_recorded(reply)}", flush=True)
    return interrupts.count


def _where_recorded(reply: dict) -> str:
    """What the E-stop's acknowledgement says of its record, for the operator's console: nothing more when the
    session file holds it, else that it does not (a second Ctrl-C after the aborted run had closed its file)."""
    if reply.get("recorded_in"):
        return ""
    return " (after the run's file had closed: the E-stop is not in it)"


class _Prompt:
    """Asks the operator once per trial that needs them, on a thread (Ctrl-C stays live meanwhile)."""

    def __init__(self, core):
        self.core, self.asked = core, None

    def ask(self, needed: dict) -> None:
        key = (needed["trial"], needed["repeat"])
        if key == self.asked:
            return
        self.asked = key
        where = ("with no surface" if needed["surface_angle_deg"] is None
                 else f"with the surface at {needed['surface_angle_deg']:g} deg")
        text = f"Place the finger in {needed['pose']} pose {where}, then press Enter"
        if not sys.stdin or not sys.stdin.isatty():
            why = (f"trial {needed['trial']} needs the operator ({text[:1].lower() + text[1:].split(', then')[0]}) "
                   "but stdin is not a terminal: the run is aborted")
            print(f"uartlab run: {why}", file=sys.stderr, flush=True)
            self.core.request("abort", why=why)
            return
        threading.Thread(target=self._wait_enter, args=(text,), name="operator-prompt", daemon=True).start()

    def _wait_enter(self, text: str) -> None:
        try:
            input(f"\n{text} ")
        except EOFError:
            return
        self.core.request("confirm")


def _progress_line(run: dict, elapsed_s: float) -> str:
    width, progress = 24, float(run.get("progress", 0.0))
    filled = int(round(progress * width))
    bar = "#" * filled + "-" * (width - filled)
    trial = f"{run['trial_name']} {run['repeat']}" if run.get("trial_name") else ""
    return f"[{bar}] {progress * 100:5.1f} %  {elapsed_s:6.1f} s  {run.get('phase', ''):<10} {trial}"
