"""`uartlab rig serve`: the rig core, headless - the devices, the control loop, the interlocks and the recorder
in this process; clients (`uartlab run`, `uartlab estop`, the window, the live model) attach and leave.

    uartlab rig serve                              # the twin rig, on ipc in the user's runtime folder
    uartlab rig serve --rig rig.toml --core tcp://127.0.0.1:5650
    uartlab rig serve --core tcp://0.0.0.0:5650 --keys keys/     # other machines: CurveZMQ keys required
    uartlab rig status                             # what a running core is doing (exit 3: none answers)

Ctrl-C or SIGTERM: a run going is aborted to its safe action, its file closed, the rig stopped (torque off).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from pathlib import Path

from uartlab.app.cli.types import positive_int, twin_speed
from uartlab.processes import is_alive

CORE_HELP = "where the core listens: ipc://PATH or tcp://HOST:PORT (default: $UARTLAB_CORE, else ipc in the " \
            "user's runtime folder)"


def add_parser(sub) -> None:
    rig = sub.add_parser("rig", help="the rig core: devices, control loop, interlocks and recorder in one process")
    rig_sub = rig.add_subparsers(dest="rig_command", metavar="ACTION", required=True)
    serve = rig_sub.add_parser("serve", help="run the rig core headless until Ctrl-C; clients attach to it")
    serve.add_argument("--rig", type=Path, help="rig.toml, or twin (the default: the shipped twin rig)")
    serve.add_argument("--core", metavar="ADDR", help=CORE_HELP)
    serve.add_argument("--keys", type=Path, metavar="DIR",
                       help="CurveZMQ keys: DIR/server.key_secret, DIR/operators/*.key, DIR/viewers/*.key "
                            "(required to listen beyond this machine)")
    serve.add_argument("--speed", type=twin_speed, help="twin only: model seconds per wall second")
    serve.add_argument("--for-pid", type=positive_int, metavar="PID",
                       help="the client this core was started for (`uartlab run` starts one so): when that process "
                            "has ended, the core stops, a run going aborted with its safe action")
    serve.set_defaults(run=serve_main, service=True)
    status = rig_sub.add_parser("status", help="what the running rig core is doing: devices, run, recording, E-stop")
    status.add_argument("--core", metavar="ADDR", help=CORE_HELP)
    status.add_argument("--keys", type=Path, metavar="DIR",
                        help="CurveZMQ keys: DIR/client.key_secret and DIR/server.key")
    status.add_argument("--json", action="store_true", help="the core's status as one JSON object")
    status.set_defaults(run=status_main)


def status_main(args: argparse.Namespace) -> int:
    """Exit 0 with the core's state, 3 when no core answers (as `uartlab estop`)."""
    import json

    from uartlab.app.serve.client import CONNECT_TIMEOUT_S, CoreClient

    with CoreClient(args.core, subscribe=False, keys_dir=args.keys, timeout_s=CONNECT_TIMEOUT_S,
                    hello=False) as core:   # a look, not an attach: the session's events stay the run's
        hello = core.request("describe", timeout_s=CONNECT_TIMEOUT_S)
    if args.json:
        print(json.dumps({k: hello.get(k) for k in ("pid", "base", "config_source", "time_scale", "status")},
                         default=str))
    else:
        print("\n".join(describe_core(hello)))
    return 0


def describe_core(hello: dict) -> list[str]:
    """The core's hello as an operator reads it: one line each for the core, its devices, the run, the recording
    and the E-stop."""
    status = hello["status"]
    scale = hello.get("time_scale") or 1.0
    rig = f"rig {hello.get('config_source')}" + (" (twin" + (f", {scale:g}x)" if scale != 1.0 else ")")
                                                   if hello.get("twin_control") else "")
    lines = [f"rig core at {hello['base']} (pid {hello['pid']}, up {_duration(status.get('uptime_s', 0.0))}), {rig}",
             "devices: " + (" · ".join(f"{name} {state}" for name, state in status.get("health", {}).items())
                            or "none")]
    run = status.get("run") or {}
    if run.get("suite") is None:
        lines.append("run: none")
    else:
        name = run.get("trial_name")
        where = (f", {name} repeat {run.get('repeat')} of {(run.get('repeats') or {}).get(name, '?')} (trial "
                 f"{run['trial_index'] + 1} of {run['n_trials']} in this run)" if name and not run.get("over") else "")
        results = run.get("results") or []
        why = run.get("fault_reason") or (results[-1]["outcome"].removeprefix("aborted: ")   # its trial's outcome
                                          if run.get("phase") == "ABORTED" and results else None)
        fault = f": {why}" if why else ""
        lines.append(f"run {run['id']} {run['suite']!r}: {run.get('phase', run.get('state'))}{where}{fault}")
    session = status.get("session")
    lines.append(f"recording: {session['path']} ({session['elapsed_s']:.1f} s)" if session else
                 f"recording: none (the last run's file: {run['session_file']})" if run.get("session_file") else
                 "recording: none")
    lines.append(f"E-stop: latched ({status['estop']})" if status.get("estop") else "E-stop: not latched")
    return lines


def _duration(seconds: float) -> str:
    minutes, s = divmod(int(seconds), 60)
    hours, m = divmod(minutes, 60)
    return f"{hours} h {m} min" if hours else f"{m} min {s} s" if m else f"{s} s"


def serve_main(args: argparse.Namespace) -> int:
    from uartlab.app.cli.extras import require
    from uartlab.app.serve.endpoints import endpoints_for, refuse_unguarded

    # A bad or unguarded address is refused before the rig loads.
    refuse_unguarded(endpoints_for(args.core).base, args.keys is not None)
    require("rig")
    from uartlab.app.cli.run import rig_config

    config = rig_config(args.rig, args.speed)
    if config.uses_twin:   # its process loads while this one imports the core
        from uartlab.app.rig.twin_process import start_twin_ahead

        start_twin_ahead()
    from uartlab.app.rig.calibrations import RigCalibrations
    from uartlab.app.run import realtime
    from uartlab.app.serve.core import RigCore

    RigCalibrations(config).check_files()
    realtime.report_stalls()   # its stderr is its log: a loop held up says where
    core = RigCore(config, args.core, args.keys)
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    core.start()
    realtime.keep_out_of_collections()   # its modules, rig and devices: no full collection walks them again
    client_gone, client_is_parent = False, args.for_pid == os.getppid()
    try:
        print(f"uartlab rig core serving at {core.ends.base} (pid {os.getpid()})", flush=True)
        while not stop.wait(0.2) and not core.wait(0):
            # The client that started it is its parent: once that exits this process is handed to another
            # (a killed parent not yet reaped would still pass for alive).
            if args.for_pid is not None and (os.getppid() != args.for_pid if client_is_parent
                                             else not is_alive(args.for_pid)):
                client_gone = True
                break
    finally:
        why = (f"the client this core was started for (pid {args.for_pid}) has ended" if client_gone else
               "the core was stopped (Ctrl-C or SIGTERM)" if stop.is_set() else "shutdown requested by a client")
        core.close(why)
        print("uartlab rig core stopped.", file=sys.stderr, flush=True)
    return 0
