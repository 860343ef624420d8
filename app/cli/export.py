"""`uartlab export FILE --to csv|mat [-o DIR]`: a session file as CSV files or one MATLAB .mat file.

Without ``-o`` the output goes beside the session: ``<session>_csv/`` (one CSV per stream, events.csv,
trials.csv, clock.csv) or ``<session>.mat``. With ``-o DIR`` the CSV files go into DIR and the .mat file is
DIR/<session>.mat. The formats are app/record/export.py's.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def add_parser(sub) -> None:
    export = sub.add_parser("export", help="a session file as CSV files (one per stream) or a MATLAB .mat file")
    export.add_argument("file", type=Path, help="session .h5 file")
    export.add_argument("--to", choices=("csv", "mat"), required=True, help="csv: one file per stream; mat: one .mat")
    export.add_argument("-o", "--out", type=Path, default=None, metavar="DIR",
                        help="folder to write into (default: beside the session file)")
    export.add_argument("--overwrite", action="store_true",
                        help="replace files an earlier export left there (refused otherwise: they may be another "
                             "session's)")
    export.set_defaults(run=main)


def main(args: argparse.Namespace) -> int:
    from uartlab.app.record.export import csv_paths, export_csv, export_mat
    from uartlab.app.record.player import SessionFile

    if args.out is not None and args.out.exists() and not args.out.is_dir():
        raise NotADirectoryError(f"{args.out}: is a file; -o takes a folder")
    with SessionFile(args.file) as session:
        if args.to == "csv":
            folder = args.out if args.out is not None else args.file.with_name(f"{args.file.stem}_csv")
            _refuse_to_overwrite(csv_paths(session, folder), args.overwrite)
            written = export_csv(session, folder)
            print(f"{folder}: {len(written)} CSV files ({', '.join(p.name for p in written)})")
        else:
            path = (args.out or args.file.parent) / f"{args.file.stem}.mat"
            _refuse_to_overwrite([path], args.overwrite)
            export_mat(session, path)
            print(f"{path}: one struct per stream ({', '.join(session.streams)}), events, trials, clock, session")
    return 0


def _refuse_to_overwrite(paths: list[Path], overwrite: bool) -> None:
    there = [p for p in paths if p.exists()]
    if there and not overwrite:
        from uartlab.errors import InputFileError

        more = f" and {len(there) - 1} more" if len(there) > 1 else ""
        raise InputFileError(f"{there[0]}{more}: already there (an earlier export, perhaps of another session); "
                          "choose another folder (-o) or replace them with --overwrite")
