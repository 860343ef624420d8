"""`uartlab record`: bring the rig up from rig.toml (the twin by default) and record every stream."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import time
from pathlib import Path

from uartlab.app.cli.types import positive_float


def add_parser(sub) -> None:
    p = sub.add_parser("record", help="record every stream of the rig (the twin unless --rig says otherwise)")
    p.add_argument("--rig", type=Path, help="rig.toml, or twin (the default: the shipped twin rig)")
    p.add_argument("--out", type=Path, help="folder for the session file (default: the config's recording folder)")
    p.add_argument("--seconds", type=positive_float, help="stop after this long (default: until Ctrl-C)")
    p.add_argument("--operator", default="", help="who runs the session")
    p.add_argument("--notes", default="", help="free text stored with the session")
    p.set_defaults(run=main)


def main(args: argparse.Namespace) -> int:
    from uartlab.app.cli.extras import require

    require("rig")  # before the rig's modules load: they need the [rig] drivers, twin or hardware
    from uartlab.app.cli.paths import writable_folder
    from uartlab.app.record.logs import log_file
    from uartlab.app.record.session import RecordingSession, session_path
    from uartlab.app.rig.calibrations import RigCalibrations
    from uartlab.app.rig.config import default_rig_config, load_rig_config
    from uartlab.app.rig.rig import Rig

    config = load_rig_config(args.rig) if args.rig else default_rig_config()
    folder = writable_folder(args.out, "--out") if args.out else writable_folder(
        config.recording.folder, f"{config.source}: recording.folder")
    RigCalibrations(config).check_files()
    path = session_path(folder)
    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    with log_file(path.with_suffix(".log")), Rig(config) as rig:  # the session's log beside its file
        # The free-space pre-flight refuses (exit 3) before the file is created.
        session = RecordingSession(rig, path, operator=args.operator, notes=args.notes, expected_s=args.seconds)
        for warning in session.warnings:
            print(f"warning: {warning}", file=sys.stderr, flush=True)
        print(f"recording {path} (Ctrl-C to stop)", flush=True)
        started = time.monotonic()
        try:
            # A failed recorder (disk full, folder gone) ends it at once: close() raises its one sentence (exit 3).
            while not stop.wait(0.1) and session.error is None:
                if args.seconds is not None and time.monotonic() - started >= args.seconds:
                    break
        finally:
            summary = session.close()
    counts = {name: length for name, length in session.recorder.flushed.items()}
    print(f"session file {path}: " + ", ".join(f"{name} {n} samples" for name, n in counts.items()))
    lost = sum(summary["recorder_drops"].values()) + sum(summary["hub_drops"].get("recorder", {}).values())
    print("nothing was dropped." if not lost else f"{lost} samples were dropped (recorded in the file's events).")
    return 0
