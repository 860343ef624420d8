"""A suite run's summary: the table `uartlab run` prints and the same as JSON (``--json``).

Built where the run ran (the rig core, app/serve/core.py) from the Run's Experiment and live model, and
sent to the client that submitted it, which prints one or the other.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING

from uartlab.sim.names import JOINTS

if TYPE_CHECKING:
    from uartlab.app.run.experiment import ExperimentStatus, SteadyState
    from uartlab.app.run.run import Run
    from uartlab.protocols.suite import Suite


def report_json(run: Run) -> dict:
    """The summary as JSON: the session file, the suite, how the run ended, each trial, the live model's RMS."""
    exp, status = run.experiment, run.status()
    if exp is None or status is None:
        raise RuntimeError(f"{run.title}: no experiment to report on")
    steady = {(s.trial, s.repeat): s for s in exp.steady}
    out = {"session_file": session_file(run), "suite": run.suite.name,
           "sha256": run.suite.sha256, "phase": str(status.phase), "fault_reason": status.fault_reason,
           "trials": [_result_dict(r, steady.get((r.trial, r.repeat))) for r in status.results]}
    if run.live_model is not None:
        out["live_model_rms_residuals"] = [{"trial": name, **asdict(s)} for name, s in run.live_model.summaries]
    if run.unmodelled is not None:
        from uartlab.app.run.unmodelled import unmodelled_trials

        out["live_model_unmodelled"] = [{"trial": t, "repeat": r} for t, r in unmodelled_trials(run.unmodelled)]
    return out


def report_text(run: Run) -> str:
    """The summary table, the live model's residual table when it ran, and the session file."""
    exp, status = run.experiment, run.status()
    if exp is None or status is None:
        raise RuntimeError(f"{run.title}: no experiment to report on")
    lines = [summary_table(run.suite, status, {(s.trial, s.repeat): s for s in exp.steady})]
    live = run.live_model
    if live is not None and live.summaries:
        from uartlab.app.run.residuals import residual_table

        lines.append(residual_table(live.summaries))
    if run.unmodelled is not None:
        from uartlab.app.run.unmodelled import unmodelled_sentence

        lines.append(f"live model: {unmodelled_sentence(run.unmodelled)}")
    lines.append(f"session file: {session_file(run)}")
    return "\n".join(lines)


def session_file(run: Run) -> str:
    """The file the run recorded into: its own, or the open recording it was given ("" for none)."""
    return str(run.path) if run.path is not None else str(getattr(run.session, "path", "") or "")


def _result_dict(result, steady: SteadyState | None) -> dict:
    out = {"trial": result.trial, "repeat": result.repeat, "outcome": result.outcome,
           "settle_time_s": result.settle_time_s}
    if steady is not None:
        out.update(steady.to_dict())
    return out


OUTCOME_WIDTH = 22   # a trip's whole reason is on the table's last line (and in --json), not in its column


def _cell(text: str, width: int) -> str:
    return f"{text:<{width}}" if len(text) <= width else text[:width - 1] + "…"


def summary_table(suite: Suite, status: ExperimentStatus, steady: dict) -> str:
    from uartlab.protocols.runner import Phase

    joints = " ".join(f"{j:>7}" for j in JOINTS)
    lines = [f"suite {suite.name!r} ({suite.source}, sha256 {suite.sha256[:12]}): {status.phase}",
             f"{'trial':<24} {'rep':>3} {_cell('outcome', OUTCOME_WIDTH)} {'settle s':>8} {joints}  "
             f"{'max tendon N':>12} {'tip N':>6}"]
    for r in status.results:
        s = steady.get((r.trial, r.repeat))
        settle = f"{r.settle_time_s:8.2f}" if r.settle_time_s is not None else f"{'-':>8}"
        if s is None:
            rest = " ".join(f"{'-':>7}" for _ in JOINTS) + f"  {'-':>12} {'-':>6}"
        else:
            angles = " ".join(f"{a:7.1f}" for a in s.joint_angles_deg)
            rest = f"{angles}  {s.tendon_force_N.max():12.2f} {float((s.fingertip_force_N ** 2).sum()) ** 0.5:6.2f}"
        lines.append(f"{r.trial:<24} {r.repeat:>3} {_cell(r.outcome, OUTCOME_WIDTH)} {settle} {rest}")
    faulted = status.phase in (Phase.FAULT, Phase.ABORTED)
    lines.append(f"{len(status.results)} of {status.n_trials} trials run"
                 + (f"; stopped: {status.fault_reason or status.phase}" if faulted else ""))
    return "\n".join(lines)
