"""`uartlab bench compare`: how long `uartlab compare` takes on one full session, one process beside every core.

The session is the paper's 22 trials x 5 repeats written from a perturbed model (app/compare/synthetic.py:
a "true" finger 10 % off the defaults, with sensor noise and repeat-to-repeat spread), so the comparison has
real work to do and the same work every time. ``uartlab compare`` runs as the user runs it, a fresh process
of the installed command, first drawing its figures in one process (``--workers 1``), then on every core (the
default); rounds alternate the two so a burst of load falls on both. Goal: ≤ 10 s on every core.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from uartlab.app.bench.startup import uartlab_command

GOAL_S = 10.0
REPEATS_PER_TRIAL = 5
PERTURBATION = 0.1


def write_session(path: Path) -> None:
    from uartlab.app.compare.synthetic import write_model_session
    from uartlab.sim import FingerParams
    from uartlab.sim.scenarios import paper_trials

    write_model_session(path, paper_trials(), FingerParams.uart().perturbed(PERTURBATION, seed=5),
                        repeats=REPEATS_PER_TRIAL, seed=1, pretension_spread=0.2, deflection_spread=0.2,
                        angle_noise_deg=0.3, force_noise_N=0.01)


def time_compare(session: Path, out: Path, workers: int | None) -> float:
    argv = [*uartlab_command(), "compare", str(session), "--out", str(out), "-q"]
    argv += ["--workers", str(workers)] if workers else []
    started = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=600)
    wall_s = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(f"uartlab compare exited with {proc.returncode}: {proc.stderr.decode()[-300:]}")
    shutil.rmtree(out)
    return wall_s


def measure(repeats: int) -> dict:
    cpus = os.cpu_count() or 1
    with tempfile.TemporaryDirectory(prefix="uartlab-bench-compare-") as folder:
        session = Path(folder) / "session.h5"
        write_session(session)
        time_compare(session, Path(folder) / "warm", None)   # the kernels' cache and the OS's file cache warm
        walls: dict[str, list[float]] = {"one process": [], "every core": []}
        for _ in range(repeats):
            walls["one process"].append(time_compare(session, Path(folder) / "one", 1))
            walls["every core"].append(time_compare(session, Path(folder) / "all", None))
    medians = {label: statistics.median(w) for label, w in walls.items()}
    return {"goal_s": GOAL_S, "cpus": cpus, "repeats": repeats, "python": sys.version.split()[0],
            "trials": 22, "repeats_per_trial": REPEATS_PER_TRIAL,
            "load_average_1min": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
            "median_s": medians, "max_s": {label: max(w) for label, w in walls.items()},
            "speedup": medians["one process"] / medians["every core"], "ok": medians["every core"] <= GOAL_S}


def report(m: dict) -> str:
    lines = [f"uartlab compare on one session (the paper's {m['trials']} trials x {m['repeats_per_trial']} repeats, "
             f"figures and all), median of {m['repeats']} runs, {m['cpus']} CPUs, load average "
             f"{m['load_average_1min']:.1f}:"]
    for label, median in m["median_s"].items():
        lines.append(f"  {label:12s} {median:5.1f} s (max {m['max_s'][label]:.1f} s)")
    lines.append(f"  every core is {m['speedup']:.2f}x one process; goal <= {m['goal_s']:g} s on every core: "
                 f"{'ok' if m['ok'] else 'MISSED'}")
    return "\n".join(lines)


def main(args) -> int:
    m = measure(args.repeats)
    print(json.dumps(m, indent=2) if args.json else report(m))
    return 0
