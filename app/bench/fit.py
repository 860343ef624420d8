"""`uartlab bench fit`: `uartlab calibrate model`'s fit on the twin, on one worker process beside two.

The recordings are the command's own (app/procedures/on_twin.py ``model_recordings``: four trials of a twin
plant whose fitted parameters are off the defaults, free motion under FDP and ED, contact from Hook and Curl);
the fits start at the defaults: the Coulomb coefficient alone (each of the optimizer's steps asks for one or two
parameter vectors), then the Coulomb coefficient and the contact law's a and Kx together. Both worker counts
fit the same recordings to the same result on local worker processes (calibration/executors.py); rounds
alternate them so a burst of load falls on both. Goal: two workers ≥ 1.7x one.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from typing import Any

GOAL_SPEEDUP = 1.7
FITS = (("coulomb",), ("coulomb", "a", "Kx"))


def time_fit(base, recs, names: tuple[str, ...], workers: int) -> tuple[float, int]:
    from uartlab.calibration.executors import executor_for
    from uartlab.calibration.model_fit import fit_model

    with executor_for(None, workers=workers) as executor:
        list(executor.map(abs, range(workers)))   # the workers started and warm before the clock starts
        started = time.perf_counter()
        fit = fit_model(base, recs, names, executor=executor)
        return time.perf_counter() - started, fit.simulations


def measure(repeats: int) -> dict:
    from uartlab.app.procedures.on_twin import model_recordings

    rows: list[dict[str, Any]] = []
    for names in FITS:
        base, _, recs = model_recordings(names)
        walls: dict[int, list[float]] = {1: [], 2: []}
        simulations = 0
        for _ in range(repeats):
            for workers in walls:
                wall_s, simulations = time_fit(base, recs, names, workers)
                walls[workers].append(wall_s)
        medians = {w: statistics.median(v) for w, v in walls.items()}
        rows.append({"fitted": list(names), "simulations": simulations, "one_worker_s": medians[1],
                     "two_workers_s": medians[2], "speedup": medians[1] / medians[2]})
    return {"goal_speedup": GOAL_SPEEDUP, "cpus": os.cpu_count(), "repeats": repeats, "python": sys.version.split()[0],
            "trials": 4, "load_average_1min": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
            "fits": rows, "ok": all(r["speedup"] >= GOAL_SPEEDUP for r in rows)}


def report(m: dict) -> str:
    lines = [f"model fits to {m['trials']} twin trials, median of {m['repeats']} runs, {m['cpus']} CPUs, load average "
             f"{m['load_average_1min']:.1f}:"]
    for r in m["fits"]:
        lines.append(f"  {', '.join(r['fitted']):16s} {r['simulations']:4d} trial simulations: 1 worker "
                     f"{r['one_worker_s']:5.1f} s, 2 workers {r['two_workers_s']:5.1f} s, {r['speedup']:.2f}x")
    lines.append(f"  goal: two workers >= {m['goal_speedup']:g}x one: {'ok' if m['ok'] else 'MISSED'}")
    return "\n".join(lines)


def main(args) -> int:
    m = measure(args.repeats)
    print(json.dumps(m, indent=2) if args.json else report(m))
    return 0
