"""`uartlab compare SESSION.h5 [SESSION2.h5 ...] [--params P.toml] [--params-b Q.toml] [--out DIR]`

Re-simulates every settled trial of the sessions the paper's way and writes the paper's tables (CSV), the
figures and an HTML report into DIR; prints the tables. Trials with the same name are the repeats of one
tendon-loading trial, across all the sessions given. The work is app/compare/sessions.py's; this module
imports nothing heavy until the command runs (`uartlab --help` stays fast).
"""

from __future__ import annotations

import argparse
import json
import os

from uartlab.app.cli.types import positive_int


def add_parser(sub) -> None:
    compare = sub.add_parser("compare", help="re-simulate recorded trials and compare with the model "
                             "(the paper's Tables 4-6, Figs. 13-16)")
    compare.add_argument("sessions", nargs="+", metavar="SESSION.h5", help="session files; trials with the same "
                         "name are repeats of one trial, across all files")
    compare.add_argument("--params", metavar="P.toml", help="model parameters (default: the shipped defaults)")
    compare.add_argument("--params-b", metavar="Q.toml", help="a second parameter set, compared side by side")
    compare.add_argument("--out", metavar="DIR", help="report folder (default: compare_<first session name>)")
    compare.add_argument("--trials", metavar="GLOB", help="only trials whose name matches, e.g. 'contact/Curl/*'")
    compare.add_argument("--no-figures", action="store_true", help="tables and CSV only (faster)")
    compare.add_argument("--workers", type=positive_int, default=None, metavar="N",
                         help="processes drawing the figures (default: one per core)")
    compare.add_argument("--json", action="store_true", help="print the summary as JSON instead of text tables")
    compare.add_argument("--progress", action="store_true", help="progress as lines on stderr for another program "
                         "to read ('progress: STEP: DONE/TOTAL'), not a bar")
    compare.set_defaults(run=main)


def run(sessions: list[str], params: str | None = None, params_b: str | None = None, out: str | None = None,
        trials_glob: str | None = None, figures: bool = True, workers: int | None = None):
    """Compare, with progress on stderr; the report folder is checked writable before the re-simulations.
    A session without trials is skipped with a one-line note on stderr; the others are compared."""
    from uartlab.app.cli.paths import writable_folder
    from uartlab.app.cli.progress import progress, step, write
    from uartlab.app.compare.analysis import compare
    from uartlab.app.compare.figures import figure_count
    from uartlab.app.compare.report import write_report
    from uartlab.app.compare.sessions import load_param_sets, load_session_trials

    step("compare: reading the sessions")
    notes: list[str] = []   # said once the batch is known to go on (all skipped: the error's one line says it)
    trials, skipped = load_session_trials(sessions, trials_glob, on_skip=notes.append)
    for note in notes:
        write(f"compare: {note}")
    step("compare: loading the model (the first run compiles it: about a minute)")
    sets = load_param_sets(params, params_b, sessions)
    out = out or f"compare_{os.path.splitext(os.path.basename(sessions[0]))[0]}"
    writable_folder(out, "--out")
    with progress("compare: re-simulating", total=len({t.name for t in trials}) * len(sets), unit="trial") as tick:
        comparison = compare(trials, sets, [os.path.abspath(s) for s in sessions], skipped, on_progress=tick)
    with progress("compare: drawing figures", total=figure_count(comparison) if figures else 0,
                  unit="figure") as drew:
        written = write_report(comparison, out, figures=figures, on_figure=drew, workers=workers)
    step("compare: done", 1, 1)
    return comparison, written


def main(args: argparse.Namespace) -> int:
    from uartlab.app.cli.progress import lines
    from uartlab.app.compare.report import text_summary
    from uartlab.app.compare.sessions import summary_json

    with lines(bool(getattr(args, "progress", False))):
        comparison, written = run(args.sessions, args.params, args.params_b, args.out, args.trials,
                                  not args.no_figures, args.workers)
    if args.json:
        print(json.dumps(summary_json(comparison, written), indent=2))
    else:
        print(text_summary(comparison))
        print(f"\nreport: {written['html']}  (CSV: {', '.join(written['tables'])})")
    return 0
