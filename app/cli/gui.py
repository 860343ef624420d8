"""`uartlab gui [--core ADDR] [--rig rig.toml|twin] [--replay FILE]`: the operator window (app/gui/app.py)."""

from __future__ import annotations

import argparse


def add_parser(sub) -> None:
    gui = sub.add_parser("gui", help="the operator window: rig, live plots, protocols, recording, replay, compare")
    gui.add_argument("--core", help="the rig core's address (ipc://PATH or tcp://HOST:PORT; default: "
                                    "$UARTLAB_CORE, else the user's own ipc socket)")
    gui.add_argument("--rig", help="attach at start: to the core at --core, or start one on this rig.toml "
                                   "('twin': the shipped twin rig)")
    gui.add_argument("--replay", help="session .h5 file to open for replay")
    gui.set_defaults(run=main)


def main(args: argparse.Namespace) -> int:
    from uartlab.app.cli.extras import require

    require("gui")
    from uartlab.app.gui.app import main as window

    return window(args)
