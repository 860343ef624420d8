"""`uartlab estop [REASON]`: the E-stop from any terminal - torque off on the rig core's servos, latched, the
reason and who pressed it recorded; or on the servos of a calibration procedure at the rig, which serves the
core's E-stop address while it has the devices (app/serve/estop_point.py). Exit 0 when it was acknowledged,
3 when nothing answered within 1 s: then nothing was stopped, and the line says what does stop the rig."""

from __future__ import annotations

import argparse


def add_parser(sub) -> None:
    p = sub.add_parser("estop", help="E-stop the running rig core (or a calibration procedure at the rig): torque "
                                     "off now, latched, the reason recorded")
    p.add_argument("reason", nargs="*", help="why (recorded with who sent it)")
    p.add_argument("--core", metavar="ADDR", help="the core's address (default: $UARTLAB_CORE, else the usual ipc)")
    p.add_argument("--keys", metavar="DIR", help="CurveZMQ keys: DIR/client.key_secret and DIR/server.key")
    p.set_defaults(run=main)


def main(args: argparse.Namespace) -> int:
    from pathlib import Path

    from uartlab.app.serve.client import CONNECT_TIMEOUT_S, CoreClient, NoCoreError
    from uartlab.app.serve.endpoints import endpoints_for
    from uartlab.app.serve.estop_server import where_recorded

    reason = " ".join(args.reason) or "E-stop from the console"
    keys = Path(args.keys) if args.keys else None
    try:
        with CoreClient(args.core, subscribe=False, keys_dir=keys, timeout_s=CONNECT_TIMEOUT_S, hello=False) as core:
            reply = core.estop(reason)
    except NoCoreError:   # exit 3: said as an E-stop that did not happen, with what does stop the rig
        raise NoCoreError(f"NOTHING STOPPED: no rig core took the E-stop at {endpoints_for(args.core).base} within "
                          f"{CONNECT_TIMEOUT_S:g} s. Press the rig's hardware E-stop") from None
    by = reply.get("holder") or "the core"   # a calibration procedure at the rig answers there too
    print(f"E-stop acknowledged by {by} at {core.ends.base}: torque off in {reply['acted_s'] * 1e3:.0f} ms "
          f"({reason}; {where_recorded(reply.get('recorded_in'))})")
    return 0
