"""The trials a run measured that its live model made no samples for: found when the run closes, recorded as
an ``unmodelled`` event (JSON) and said in words wherever events are shown.

    missing = unmodelled(runner.plan, live_model.summaries, experiment.steady)   # [(trial, repeat)]
    hub.event(EventKind.UNMODELLED, MODEL_SOURCE, unmodelled_message(missing, len(steady), counts))
    unmodelled_sentence(message)     # the log's line
    unmodelled_trials(message)       # the (trial, repeat) pairs, for the results table

A trial counts once the rig measured its steady state (RECORD): that is what the results compare with the
model. A live model that falls behind merges ticks and still models every trial; one that misses whole trials
was starved of CPU for seconds, stopped or died (its own events say which). Without this event the results
table's residual cells stay empty and nothing says why.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any


def unmodelled(plan: Sequence[tuple[Any, int]], summaries: Iterable[tuple[str, Any]],
               steady: Iterable[Any]) -> list[tuple[str, int]]:
    """(trial, repeat) of every trial measured (``steady``: app/run/state.py SteadyState) with no scored model
    sample among ``summaries`` ((name, residuals.ResidualSummary)); ``plan``: the runner's (trial, repeat) by
    trial index."""
    modelled = set()
    for _, s in summaries:
        if s.samples > 0 and 0 <= s.trial_index < len(plan):
            trial, repeat = plan[s.trial_index]
            modelled.add((getattr(trial, "name", trial), int(repeat)))
    missing = []
    for s in steady:
        key = (s.trial, int(s.repeat))
        if key not in modelled and key not in missing:
            missing.append(key)
    return missing


def unmodelled_message(missing: Sequence[tuple[str, int]], measured: int, counts: dict | None) -> str:
    """The event's JSON: the trials, how many were measured, and the model's own counts when it gave them."""
    counts = counts or {}
    return json.dumps({"trials": [[t, r] for t, r in missing], "measured": measured,
                       "runner_ticks": counts.get("runner_ticks"), "max_lag_s": counts.get("max_lag_s")},
                      separators=(",", ":"))


def unmodelled_trials(message: str) -> list[tuple[str, int]]:
    return [(str(t), int(r)) for t, r in json.loads(message)["trials"]]


def unmodelled_sentence(message: str) -> str:
    d = json.loads(message)
    names = ", ".join(f"{t} repeat {r}" for t, r in d["trials"])
    said = f"no model samples for {len(d['trials'])} of {d['measured']} trials measured ({names})"
    if d.get("runner_ticks") is not None:
        lag_s = d.get("max_lag_s")
        lag = f", at most {lag_s:.1f} s behind" if lag_s is not None and lag_s >= 0.1 else ""   # 0: never behind
        said += f": the live model received {d['runner_ticks']} runner ticks{lag}"
    return said + "; their residuals are empty"
