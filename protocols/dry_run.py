"""Dry run: every trial of a suite simulated on the model before the rig moves.

For each trial we start where the paper's simulations start (sim.scenarios.trial_start: the pose held
by small pretensions, the surface at the fingertip), drive the model with the trial's own trajectory
(the same data the runner will send the servos), and report what the rig should see: steady joint
angles, peak tendon tensions, peak fingertip force, and every limit the trial would exceed. The limits are
the effective ones (the rig's ceilings tightened by the suite, protocols/limits.py), and the excursion a
pull commands includes the worst pretension offset the runner may add under it.

    uartlab run free_motion --dry-run [--json]
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass, field

import numpy as np
from uartlab.protocols.limits import DEFAULT_CEILINGS, Ceilings, Limits, effective, excursion_overruns
from uartlab.protocols.suite import Suite, SuiteTrial, resolve_suite
from uartlab.sim.errors import SimulationDiverged
from uartlab.sim.finger import Finger, SimResult
from uartlab.sim.names import JOINTS, TENDONS
from uartlab.sim.params import DEFAULTS_SOURCE, FingerParams
from uartlab.sim.scenarios import trial_start


@dataclass
class DryRunResult:
    """What the model predicts for one trial (forces in N, angles in deg)."""

    trial: str
    pose: str
    settled: bool
    settle_time_s: float
    joint_angles_deg: dict[str, float]
    peak_tendon_force_N: dict[str, float]
    peak_fingertip_force_N: float
    returned: bool | None = None      # None: the trial does not return to the start
    issues: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.issues

    def to_dict(self) -> dict:
        return {**asdict(self), "ok": self.ok}


def dry_run(suite: Suite, finger: Finger | None = None, ceilings: Ceilings = DEFAULT_CEILINGS) -> list[DryRunResult]:
    """Simulate every trial of ``suite`` (once: the model is deterministic, repeats add nothing) and check it
    against the effective limits under the rig's ``ceilings``."""
    finger = finger if finger is not None else Finger()
    limits = effective(ceilings, suite.limits)
    overruns: dict[int, list[str]] = {}
    for o in excursion_overruns(suite.trials, limits):
        overruns.setdefault(o.trial_index, []).append(o.reason)
    results = []
    for i, trial in enumerate(suite.trials):
        try:
            results.append(dry_run_trial(suite, trial, finger, limits, overruns.get(i, [])))
        except SimulationDiverged as exc:   # a result with 1e67 N peaks would be worse than none
            raise SimulationDiverged(f"{suite.source}: trial {trial.name}: {exc}", exc.t_s, exc.dt_s,
                                     exc.method) from None
    return results


def dry_run_trial(suite: Suite, trial: SuiteTrial, finger: Finger, limits: Limits | None = None,
                  excursion_issues: list[str] | None = None) -> DryRunResult:
    x0, surface = trial_start(finger, trial.sim_trial())
    timeout_s = suite.settle.timeout_s
    pull = finger.simulate(x0, trial.trajectory().to_inputs(), surface, settle_timeout_s=timeout_s)
    settled = _settled(pull, suite.settle.speed_deg_s)
    steady = pull.steady_state()
    peaks_from, returned = pull, None
    if trial.return_to_start and settled:
        # The runner starts the return once the finger settled; simulate that whole sequence so peaks
        # include the return (an extensor can load up while a flexor pays out).
        back = finger.simulate(x0, trial.trajectory(return_at_s=float(pull.t[-1])).to_inputs(), surface,
                               settle_timeout_s=timeout_s)
        returned = _settled(back, suite.settle.speed_deg_s)
        peaks_from = back
    tensions = peaks_from.tensions_N.max(axis=0)
    tip_N = float(np.linalg.norm(peaks_from.fingertip_force_N(), axis=1).max())
    result = DryRunResult(
        trial=trial.name, pose=trial.pose, settled=settled, settle_time_s=float(pull.t[-1]),
        joint_angles_deg={j: round(steady["joint_angles_deg"][j], 3) for j in JOINTS},
        peak_tendon_force_N={t: round(float(v), 4) for t, v in zip(TENDONS, tensions, strict=True)},
        peak_fingertip_force_N=round(tip_N, 4), returned=returned)
    result.issues = list(excursion_issues or []) + _issues(suite, result, limits or suite.limits)
    return result


def _settled(res: SimResult, speed_deg_s: float) -> bool:
    # The model stops on the paper's fixed 0.1 deg/s rule; a suite may ask for a stricter one.
    return bool(res.settled and np.degrees(np.abs(res.final.theta_dot)).max() <= speed_deg_s)


def _issues(suite: Suite, r: DryRunResult, limits: Limits) -> list[str]:
    out = []
    for tendon, peak_N in r.peak_tendon_force_N.items():
        if peak_N > limits.max_tendon_force_N:
            out.append(f"would exceed max_tendon_force_N on {tendon}: {peak_N:.1f} N > {limits.max_tendon_force_N:g} N")
    if r.peak_fingertip_force_N > limits.max_fingertip_force_N:
        out.append(f"would exceed max_fingertip_force_N: {r.peak_fingertip_force_N:.1f} N > "
                   f"{limits.max_fingertip_force_N:g} N")
    if not r.settled:
        out.append(f"would not settle (joint speeds < {suite.settle.speed_deg_s:g} deg/s) within "
                   f"timeout_s = {suite.settle.timeout_s:g} s")
    if r.returned is False:
        out.append(f"would not settle after the return within timeout_s = {suite.settle.timeout_s:g} s")
    return out


# ------------------------------------------------------------------ CLI
def format_table(suite: Suite, results: list[DryRunResult], params_source: str = DEFAULTS_SOURCE) -> str:
    joints = " ".join(f"{j:>7}" for j in JOINTS)
    lines = [f"dry run of suite {suite.name!r} ({suite.source}, sha256 {suite.sha256[:12]}), model only "
             f"({params_source})",
             f"{'trial':<28} {'settle s':>8} {joints}  {'peak tendon N':>15} {'tip N':>6}  result"]
    for r in results:
        angles = " ".join(f"{r.joint_angles_deg[j]:7.1f}" for j in JOINTS)
        tendon = max(r.peak_tendon_force_N, key=lambda t: r.peak_tendon_force_N[t])
        peak = f"{r.peak_tendon_force_N[tendon]:.2f} ({tendon})"
        verdict = "ok" if r.ok else "; ".join(r.issues)
        lines.append(f"{r.trial:<28} {r.settle_time_s:8.2f} {angles}  {peak:>15} {r.peak_fingertip_force_N:6.2f}  "
                     f"{verdict}")
    bad = sum(not r.ok for r in results)
    lines.append(f"{len(results)} trials, {bad} flagged" + ("" if bad else ": the suite is safe to run"))
    return "\n".join(lines)


def main(args: argparse.Namespace) -> int:
    """``uartlab run SUITE --dry-run [--json]``: 0 when every trial is ok, 1 when any is flagged. The suite is
    validated against ``args.ceilings`` (the rig's, from app/cli/run.py; default: the default ceilings)."""
    ceilings = getattr(args, "ceilings", None) or DEFAULT_CEILINGS
    # from app/cli/run.py: already validated against the ceilings, --trial applied
    suite = args.suite if isinstance(args.suite, Suite) else resolve_suite(args.suite, ceilings)
    params = getattr(args, "params", None)   # a parameter file (refused here if bad), or the defaults
    finger = Finger(FingerParams.from_toml(params)) if params else Finger()
    params_source = str(params) if params else DEFAULTS_SOURCE
    results = dry_run(suite, finger, ceilings=ceilings)
    if getattr(args, "json", False):
        print(json.dumps({"suite": suite.name, "source": suite.source, "sha256": suite.sha256,
                          "params": params_source, "trials": [r.to_dict() for r in results]}, indent=2))
    else:
        print(format_table(suite, results, params_source))
    return 0 if all(r.ok for r in results) else 1
