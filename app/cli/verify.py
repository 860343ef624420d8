"""`uartlab verify FILE [--json]`: is a session file whole, and if not, what did a crash leave?
`uartlab verify --repair FILE [-o OUT]`: a clean copy that every HDF5 reader opens, and what it lost.

Exit status: 0 clean close with no problem, 1 not closed cleanly or with problems but readable (the data up to
the last flush is there), 2 unreadable, not a session file or a schema this uartlab does not read. With
--repair: 0 once the copy is written (it says what was lost), 2 when there is nothing to copy or OUT exists.
The checks are app/record/verify.py's, the copy app/record/repair.py's.
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
    verify.add_argument("--repair", action="store_true",
                        help="write a clean copy (streams cut to whole samples) that MATLAB and h5dump open")
    verify.add_argument("-o", "--out", metavar="OUT", help="the repaired copy (default: FILE's name.repaired.h5 "
                        "beside it; never the original, never an existing file)")
    verify.set_defaults(run=main)


def main(args: argparse.Namespace) -> int:
    from uartlab.app.record.verify import verify

    if getattr(args, "repair", False):
        from uartlab.app.record.repair import repair

        print(repair(args.file, getattr(args, "out", None)).summary)   # InputFileError: one line, exit 2
        return 0
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
