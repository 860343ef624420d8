"""`uartlab estop [REASON]`: the E-stop from any terminal - torque off on the rig core's servos, latched, the
reason and who pressed it recorded. Exit 0 when the core acknowledged it, 3 when no core answered within 1 s."""

from __future__ import annotations

import argparse


def add_parser(sub) -> None:
    p = sub.add_parser("estop", help="E-stop the running rig core: torque off now, latched, the reason recorded")
    p.add_argument("reason", nargs="*", help="why (recorded with who sent it)")
    p.add_argument("--core", metavar="ADDR", help="the core's address (default: $UARTLAB_CORE, else the usual ipc)")
    p.add_argument("--keys", metavar="DIR", help="CurveZMQ keys: DIR/client.key_secret and DIR/server.key")
    p.set_defaults(run=main)


def main(args: argparse.Namespace) -> int:
    from pathlib import Path

    from uartlab.app.serve.client import CONNECT_TIMEOUT_S, CoreClient
    from uartlab.app.serve.estop_server import where_recorded

    reason = " ".join(args.reason) or "E-stop from the console"
    keys = Path(args.keys) if args.keys else None
    with CoreClient(args.core, subscribe=False, keys_dir=keys, timeout_s=CONNECT_TIMEOUT_S, hello=False) as core:
        reply = core.estop(reason)   # NoCoreError (exit 3) when no core acknowledges within the timeout
    print(f"E-stop acknowledged by the core at {core.ends.base}: torque off in {reply['acted_s'] * 1e3:.0f} ms "
          f"({reason}; {where_recorded(reply.get('recorded_in'))})")
    return 0
