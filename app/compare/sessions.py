"""What `uartlab compare` compares: the settled trials of the session files (optionally only those whose
name matches a glob), the parameter sets to re-simulate them with, and the summary as JSON.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable, Sequence

import numpy as np
from uartlab.app.compare.analysis import ParamSet
from uartlab.app.compare.measured import CompareError, NoTrials, load_trials
from uartlab.app.record.params import recorded_params
from uartlab.sim import Finger, FingerParams


def load_param_sets(params: str | None, params_b: str | None, sessions: Sequence[str] = ()) -> list[ParamSet]:
    """The parameter sets to re-simulate with: ``--params`` (and ``--params-b``) as given; without
    ``--params``, the parameters the sessions' live model ran with - the shipped defaults with the moment
    arms and model values calibrated when they were recorded (embedded in each file), or the plain defaults."""
    sets = []
    for path in (params, params_b):
        if path is None:
            continue
        if not os.path.exists(path):
            raise CompareError(f"{path}: no such parameter file")
        sets.append((os.path.splitext(os.path.basename(path))[0], os.path.abspath(path), FingerParams.from_toml(path)))
    if params is None:
        try:
            sets.insert(0, recorded_params(sessions))
        except ValueError as exc:
            raise CompareError(str(exc)) from None
    if len(sets) == 2 and sets[0][0] == sets[1][0]:
        sets = [("A", *sets[0][1:]), ("B", *sets[1][1:])]
    return [ParamSet(label, source, Finger(p)) for label, source, p in sets]


def load_session_trials(sessions: list[str], trials_glob: str | None = None,
                        on_skip: Callable[[str], None] | None = None):
    """The settled trials of all the sessions (those matching ``trials_glob``), and the skipped ones with why.
    A session without trials is skipped (``on_skip`` gets its one-line note) and the others compared; a file
    that is not a readable session stops it all (CompareError naming it)."""
    trials, skipped = [], []
    for path in sessions:  # first: a file that is not a session is said as such
        try:
            t, s = load_trials(path)
        except NoTrials as exc:
            skipped.append((os.path.basename(path), exc.reason))
            if on_skip is not None:
                on_skip(f"skipping {path}: {exc.reason}")
            continue
        trials += t
        skipped += s
    if trials_glob:
        there = sorted({t.name for t in trials})
        trials = [t for t in trials if fnmatch.fnmatchcase(t.name, trials_glob)]
        if not trials:
            raise CompareError(f"no settled trial matches --trials {trials_glob!r} "
                               f"(the sessions have: {', '.join(there) or 'none'})")
    if not trials:
        raise CompareError("no trial to compare: " + "; ".join(f"{lab}: {why}" for lab, why in skipped))
    return trials, skipped


def summary_json(c, written) -> dict:
    def clean(v):
        if isinstance(v, np.ndarray):
            return [clean(x) for x in v.tolist()]
        if isinstance(v, float) and not np.isfinite(v):
            return None
        return v

    trials = []
    for g in c.groups:
        entry = {"trial": g.name, "kind": g.kind, "repeats": g.n, "sd_deg": clean(g.joint_sd_deg), "sets": {}}
        for p in c.sets:
            r = g.results[p.label]
            d = {"joint_mae_deg": clean(r.joint_mae_deg), "settled": r.sim.settled}
            if r.force is not None:
                d |= {"force_error_mean_N": clean(r.force["mean_N"]), "force_error_sd_N": clean(r.force["sd_N"]),
                      "magnitude_error_pct": clean(float(r.force["magnitude_pct"])),
                      "direction_error_deg": clean(float(r.force["direction_deg"]))}
            entry["sets"][p.label] = d
        trials.append(entry)
    return {"joint_order": ["MCP_AB", "MCP_FE", "PIP", "DIP"], "trials": trials,
            "summary": {p.label: {k: {n: clean(v) for n, v in c.summary(k, p.label).items()}
                                  for k in ("free", "contact")} for p in c.sets},
            "skipped": [{"trial": lab, "reason": why} for lab, why in c.skipped], "report": written["html"]}
