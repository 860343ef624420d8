"""`uartlab verify FILE [--json]`: is a session file whole, and if not, what did a crash leave?

Exit status: 0 clean close, 1 not closed cleanly but readable (the data up to the last flush is there),
2 unreadable or not a session file. The checks are app/record/verify.py's.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict


def add_parser(sub) -> None:
    verify = sub.add_parser("verify", help="check a session file and report what a crash left")
    verify.add_argument("file", help="session .h5 file")
    verify.add_argument("--json", action="store_true", help="print the report as JSON")
    verify.set_defaults(run=main)


def main(args: argparse.Namespace) -> int:
    from uartlab.app.record.verify import verify

    report = verify(args.file)
    if getattr(args, "json", False):
        d = asdict(report)
        d["exit_code"] = report.exit_code
        print(json.dumps(d, indent=2, default=str))
    elif not report.readable:  # one line, on stderr, like every other command's bad input
        print(f"uartlab verify: {report.summary}", file=sys.stderr)
    else:
        print(report.summary)
    return report.exit_code
