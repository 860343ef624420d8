"""`uartlab bench cli`: how long the command line takes to answer, beside the bare interpreter.

Each command's ``--help`` (every subcommand, found by walking the parser), ``uartlab --help`` and
``uartlab --version`` run as a user runs them: a fresh process of the installed ``uartlab`` script
(``python -m uartlab.app.cli.main`` when there is none beside this interpreter). ``python -c pass`` runs in
the same rounds: the floor no command can go under, and the yardstick for a loaded machine (the ratio).
Rounds interleave the commands, so a burst of load falls on all of them rather than on one. Goal: every
median ≤ 0.5 s. What keeps it there: the parser's modules import nothing heavy (app/cli/main.py, the command
table; tests/app/cli/test_cli_startup.py checks the imports, this measures the time).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

GOAL_S = 0.5
BARE = "python -c pass"


def commands(parser: argparse.ArgumentParser) -> list[list[str]]:
    """The argument lists to time: --version, --help, and --help of every subcommand at every level."""
    out = [["--version"], ["--help"]]

    def walk(p: argparse.ArgumentParser, prefix: list[str]) -> None:
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    out.append([*prefix, name, "--help"])
                    walk(sub, [*prefix, name])

    walk(parser, [])
    return out


def uartlab_command() -> list[str]:
    """The installed console script beside this interpreter, else the module (same code path)."""
    script = Path(sys.executable).with_name("uartlab.exe" if os.name == "nt" else "uartlab")
    return [str(script)] if script.exists() else [sys.executable, "-m", "uartlab.app.cli"]


def time_once(argv: list[str]) -> float:
    started = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=60)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited with {proc.returncode}: {proc.stderr.decode()[-300:]}")
    return wall


def measure(repeats: int) -> dict:
    from uartlab.app.cli.main import build_parser

    if repeats < 1:
        raise ValueError(f"--repeats must be at least 1, got {repeats}")
    base = uartlab_command()
    runs: dict[str, list[str]] = {BARE: [sys.executable, "-c", "pass"]}
    for args in commands(build_parser()):
        runs["uartlab " + " ".join(args)] = base + args
    walls: dict[str, list[float]] = {label: [] for label in runs}
    for _ in range(repeats):
        for label, argv in runs.items():
            walls[label].append(time_once(argv))
    medians_s = {label: statistics.median(w) for label, w in walls.items()}
    bare = medians_s[BARE]
    rows = [{"command": label, "median_s": medians_s[label], "max_s": max(w), "ratio_to_bare": medians_s[label] / bare}
            for label, w in walls.items()]
    slowest = max((label for label in walls if label != BARE), key=medians_s.__getitem__)
    return {"goal_s": GOAL_S, "repeats": repeats, "runner": " ".join(base), "python": sys.version.split()[0],
            "cpus": os.cpu_count(), "load_average_1min": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
            "bare_median_s": bare, "rows": rows, "slowest": slowest,
            "slowest_median_s": medians_s[slowest], "ok": medians_s[slowest] <= GOAL_S}


def main(args: argparse.Namespace) -> int:
    result = measure(args.repeats)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0 if result["ok"] else 1
    load = result["load_average_1min"]
    print(f"start-up of each command, {result['repeats']} runs each, wall time (runner: {result['runner']}; "
          f"{result['cpus']} CPUs" + (f", load {load:.1f}" if load is not None else "") + ")")
    print(f"  {'command':<40} {'median s':>9} {'max s':>7} {'x bare':>7}   goal <= {GOAL_S:g} s")
    for row in result["rows"]:
        verdict = "" if row["command"] == BARE else ("ok" if row["median_s"] <= GOAL_S else "SLOW")
        print(f"  {row['command']:<40} {row['median_s']:9.3f} {row['max_s']:7.3f} {row['ratio_to_bare']:7.1f}   "
              f"{verdict}")
    print(f"slowest: {result['slowest']} {result['slowest_median_s']:.3f} s median: "
          + ("every command within the goal." if result["ok"] else f"OVER the {GOAL_S:g} s goal."))
    return 0 if result["ok"] else 1
