"""`uartlab sim sensitivity`: how much each model parameter moves each trial's steady state.

    uartlab sim sensitivity                                   # local, +-15 %, the six free-motion trials
    uartlab sim sensitivity --method sobol --samples 64       # global, variance-based (SALib)
    uartlab sim sensitivity --trials '*' --out sens --workers 2   # every paper trial, CSVs into sens/

The work is calibration/sensitivity.py's; this module only parses, runs it on the executor asked for and
prints and writes the tables.
"""

from __future__ import annotations

import argparse
import csv
import fnmatch
import json
import math
from pathlib import Path

from uartlab.app.cli.types import float_in, positive_int

METHODS = ("local", "sobol")


def add_parser(sim_sub) -> None:
    p = sim_sub.add_parser("sensitivity", help="how much each parameter moves each trial's steady state "
                           "(local one at a time; global variance-based with SALib)")
    p.add_argument("--method", choices=METHODS, default="local",
                   help="local: each factor at 1 +- fraction alone; sobol: all together, Sobol indices")
    p.add_argument("--fraction", type=float_in(0.001, 0.9, " (a factor's range is 1 +- fraction)"), default=0.15,
                   help="how far each parameter moves (default 0.15: +-15 %%)")
    p.add_argument("--samples", type=positive_int, default=32,
                   help="sobol: base samples N, a power of two (parameter sets: N x (parameters + 2))")
    p.add_argument("--parameters", nargs="+", metavar="NAME", help="which (default: all; see --list)")
    p.add_argument("--list", action="store_true", help="list the parameters and exit")
    p.add_argument("--trials", default="free/*", metavar="GLOB",
                   help="the paper's trials whose name matches (default 'free/*'; '*': all 22)")
    p.add_argument("--params", type=Path, help="parameter TOML file (default: the UART defaults)")
    p.add_argument("--workers", type=positive_int, default=None, help="local worker processes (default: one per "
                   "core, up to 4)")
    p.add_argument("--scheduler", default=None, help="dask scheduler address tcp://host:8786 (default: local "
                   "processes)")
    p.add_argument("--seed", type=int, default=0, help="sobol: the sample sequence's scrambling seed")
    p.add_argument("--out", type=Path, metavar="DIR", help="also write the full table as CSV into DIR")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(run=main)


def main(args: argparse.Namespace) -> int:
    from uartlab.app.cli.paths import writable_folder
    from uartlab.app.cli.progress import progress
    from uartlab.calibration import sensitivity as sens
    from uartlab.calibration.executors import executor_for
    from uartlab.sim import FingerParams
    from uartlab.sim.scenarios import paper_trials

    if args.list:
        print("\n".join(sens.PARAMETERS))
        return 0
    if args.method == "sobol":
        from uartlab.app.cli.extras import require

        require("analysis")
    names = list(dict.fromkeys(args.parameters or sens.PARAMETERS))
    trials = [t for t in paper_trials() if fnmatch.fnmatchcase(t.name, args.trials)]
    if not trials:
        raise ValueError(f"--trials {args.trials}: no paper trial matches (e.g. 'free/*', 'contact/Hook/*', '*')")
    if all(t.kind == "free" for t in trials):   # the contact law does nothing without a surface
        names = [n for n in names if n not in sens.CONTACT_ONLY] or names
    sens.check(names, args.fraction)
    params = FingerParams.from_toml(args.params) if args.params else FingerParams.uart()
    out = writable_folder(args.out, "--out") if args.out else None
    with executor_for(args.scheduler, args.workers) as ex, \
            progress(f"sensitivity ({args.method})", unit="parameter set") as tick:
        result: sens.LocalEffects | sens.SobolIndices
        if args.method == "local":
            result = sens.local_effects(params, trials, names, args.fraction, ex, on_progress=tick)
        else:
            result = sens.sobol_indices(params, trials, names, args.fraction, args.samples, args.seed, ex,
                                        on_progress=tick)
    summary = _local_summary(result) if args.method == "local" else _sobol_summary(result)
    if out is not None:
        path = out / f"sensitivity_{args.method}.csv"
        _write_csv(result, path)
        summary["csv"] = str(path)
    print(json.dumps(summary, indent=2) if args.json else _text(summary))
    return 0


def _largest(values) -> float:
    import numpy as np

    values = np.abs(np.asarray(values, dtype=float))
    return float(np.nanmax(values)) if np.isfinite(values).any() else math.nan


def _by_size(rows: list[dict], key: str) -> list[dict]:
    """Largest first; parameters without a number (nothing varied) last."""
    return sorted(rows, key=lambda row: -row[key] if not math.isnan(row[key]) else math.inf)


def _local_summary(r) -> dict:
    rows = []
    for i, name in enumerate(r.names):
        deg, trial, joint = r.largest(name)
        rows.append({"parameter": name, "largest_angle_change_deg": deg, "trial": trial, "joint": joint,
                     "largest_force_change_N": _largest([r.minus[i, :, 4], r.plus[i, :, 4]])})
    return {"method": "local", "fraction": r.fraction, "trials": list(r.trials),
            "parameters": _by_size(rows, "largest_angle_change_deg")}


def _sobol_summary(r) -> dict:
    import numpy as np
    from uartlab.calibration.sensitivity import OUTPUTS

    rows = []
    for i, name in enumerate(r.names):
        st = r.ST[i]
        trial = output = ""
        if np.isfinite(st).any():
            k, o = np.unravel_index(np.nanargmax(st), st.shape)
            trial, output = r.trials[k], OUTPUTS[o]
        rows.append({"parameter": name, "largest_ST": _largest(st), "trial": trial, "output": output,
                     "mean_S1": float(np.nanmean(r.S1[i])) if np.isfinite(r.S1[i]).any() else math.nan})
    return {"method": "sobol", "fraction": r.fraction, "samples": r.samples, "trials": list(r.trials),
            "failed_runs": r.failed_runs, "parameters": _by_size(rows, "largest_ST")}


def _text(s: dict) -> str:
    trials = ", ".join(s["trials"]) if len(s["trials"]) <= 6 else f"{len(s['trials'])} trials"
    width = max(len("parameter"), *(len(p["parameter"]) for p in s["parameters"])) + 2
    if s["method"] == "local":
        force = any(not math.isnan(p["largest_force_change_N"]) for p in s["parameters"])
        lines = [f"each parameter alone at 1 +- {s['fraction']:g} ({trials}): the largest steady-state change",
                 f"{'parameter':<{width}}{'angle [deg]':>12}  {'where':<36}" + (f"{'|F| [N]':>9}" if force else "")]
        lines += [f"{p['parameter']:<{width}}{_num(p['largest_angle_change_deg'], 2):>12}  "
                  f"{(p['trial'] + ' ' + p['joint']).strip():<36}"
                  + (f"{_num(p['largest_force_change_N'], 3):>9}" if force else "") for p in s["parameters"]]
    else:
        lines = [f"Sobol indices, every parameter in 1 +- {s['fraction']:g} at once, N = {s['samples']} ({trials}):",
                 f"{'parameter':<{width}}{'largest ST':>11}  {'where':<44}{'mean S1':>8}"]
        lines += [f"{p['parameter']:<{width}}{_num(p['largest_ST'], 3):>11}  "
                  f"{(p['trial'] + ' ' + p['output']).strip():<44}{_num(p['mean_S1'], 3):>8}" for p in s["parameters"]]
        if s["failed_runs"]:
            lines.append(f"{s['failed_runs']} parameter sets did not settle or diverged on some trial: those "
                         "trials' indices are left out")
    if "csv" in s:
        lines.append(f"full table: {s['csv']}")
    return "\n".join(lines)


def _num(value: float, digits: int) -> str:
    return "–" if math.isnan(value) else f"{value:.{digits}f}"


def _write_csv(r, path: Path) -> None:
    from uartlab.calibration.sensitivity import OUTPUTS, LocalEffects

    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        if isinstance(r, LocalEffects):
            w.writerow(["parameter", "trial", "output", "at set", f"change at -{r.fraction:g}",
                        f"change at +{r.fraction:g}"])
            for i, name in enumerate(r.names):
                for k, trial in enumerate(r.trials):
                    for o, output in enumerate(OUTPUTS):
                        w.writerow([name, trial, output, _g(r.base[k, o]), _g(r.minus[i, k, o]), _g(r.plus[i, k, o])])
        else:
            w.writerow(["parameter", "trial", "output", "S1", "S1 conf", "ST", "ST conf"])
            for i, name in enumerate(r.names):
                for k, trial in enumerate(r.trials):
                    for o, output in enumerate(OUTPUTS):
                        w.writerow([name, trial, output, _g(r.S1[i, k, o]), _g(r.S1_conf[i, k, o]),
                                    _g(r.ST[i, k, o]), _g(r.ST_conf[i, k, o])])


def _g(value: float) -> str:
    return "" if value != value else f"{float(value):.6g}"
