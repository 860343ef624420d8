"""Trials grouped by name across sessions and repeats, re-simulated with one or two parameter sets.

For every tendon-loading trial (a trial name) and parameter set:
- the paper's comparison (Tables 4-6): ONE simulation from the repeats' average initial state (angles,
  tensions, contact force) driven by the repeats' average recorded excursions, against every repeat's
  measured steady state (metrics.py says how);
- per repeat: a simulation from that repeat's own initial state and own recorded excursions, with its signed
  steady-state errors — what the live model of the same trial would have shown, and a check on outliers;
- transient curves on a common time grid from actuation start: the repeats' mean and SD, the simulation,
  and their RMS difference over the measured time span.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from uartlab.app.compare import metrics
from uartlab.app.compare.measured import CompareError, MeasuredTrial, PulledTendons
from uartlab.app.compare.resim import SimCurves, Start, resimulate
from uartlab.sim import Finger
from uartlab.sim.names import EM_TENDONS, FLEXORS, POSES

INPUT_DT_S = 0.005   # averaged excursion table: 200 Hz, the servos' rate
GRID_DT_S = 0.01     # transient curves
NO_SIMULATED_FORCE = "a trial with a measured contact force has no simulated force to compare it with"


@dataclass(frozen=True)
class ParamSet:
    label: str       # "A", "defaults", a file stem ...
    source: str      # where the parameters came from
    finger: Finger


@dataclass
class SetResult:
    """One parameter set on one trial group."""

    sim: SimCurves                        # the paper's: from the average start, average inputs
    joint_mae_deg: np.ndarray             # (4,) JOINTS order
    force: dict | None                    # metrics.force_errors, contact trials with a Nano17
    repeat_sims: list[SimCurves]
    repeat_theta_err_deg: np.ndarray      # (n, 4) signed, measured - simulated, each repeat's own simulation
    repeat_force_err_N: np.ndarray | None  # (n, 3)
    rmse_theta_deg: np.ndarray            # (4,) transient, over the measured span
    rmse_tension_N: np.ndarray            # (6,)
    rmse_force_N: np.ndarray | None       # (3,)

    def contact_force(self) -> dict:
        """``force`` of a trial group with a measured force: contact, so simulated against a surface."""
        if self.force is None:
            raise CompareError(NO_SIMULATED_FORCE)
        return self.force


def simulated_force_N(sim: SimCurves) -> np.ndarray:
    """The steady force (3,) of a simulation of a trial with a measured force: contact, so against a surface."""
    force = sim.steady_force_N
    if force is None:
        raise CompareError(NO_SIMULATED_FORCE)
    return force


@dataclass
class TrialGroup(PulledTendons):
    name: str
    kind: str
    pose: str
    surface_angle_deg: float | None
    pulled: tuple[str, ...]
    repeats: list[MeasuredTrial]
    start: Start                          # average over the repeats
    inputs: tuple[np.ndarray, np.ndarray]  # average recorded excursions (times, (n, 6))
    steady_theta_deg: np.ndarray          # (n, 4) measured, per repeat
    steady_force_N: np.ndarray | None     # (n, 3) measured, per repeat
    joint_sd_deg: np.ndarray              # (4,) SD of the measured steady angles
    grid_s: np.ndarray
    measured_mean: dict[str, np.ndarray]  # quantity -> (len(grid), k) mean over repeats
    measured_sd: dict[str, np.ndarray]
    results: dict[str, SetResult] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return len(self.repeats)

    @property
    def has_force(self) -> bool:
        return self.steady_force_N is not None


@dataclass
class Comparison:
    sessions: list[str]
    sets: list[ParamSet]
    groups: list[TrialGroup]
    skipped: list[tuple[str, str]]

    def summary(self, kind: str, label: str) -> dict:
        """Means across the trials of one kind: joint MAE (4,) and, for contact, |F| and direction errors."""
        groups = [g for g in self.groups if g.kind == kind]
        if not groups:
            return {}
        out = {"n_trials": len(groups),
               "joint_mae_deg": np.mean([g.results[label].joint_mae_deg for g in groups], axis=0)}
        forces = [f for g in groups if (f := g.results[label].force) is not None]
        if forces:
            out["magnitude_pct"] = float(np.nanmean([f["magnitude_pct"] for f in forces]))
            out["direction_deg"] = float(np.nanmean([f["direction_deg"] for f in forces]))
        return out


def group_trials(trials: list[MeasuredTrial]) -> list[list[MeasuredTrial]]:
    """Trials with the same name, in the paper's order (free motion, then Hook/Curl x FDP/FDS x ED..LUM)."""
    by_name: dict[str, list[MeasuredTrial]] = {}
    for t in trials:
        by_name.setdefault(t.name, []).append(t)
    for name, members in by_name.items():
        setups = {(m.kind, m.pose, m.surface_angle_deg, m.pulled) for m in members}
        if len(setups) > 1:
            where = ", ".join(sorted({m.label for m in members}))
            raise CompareError(f"trial {name!r} has different set-ups in {where} (kind, pose, surface angle or "
                               "tendons differ); rename one or compare the sessions separately")
    order = {n: i for i, n in enumerate(by_name)}

    def key(name: str):
        m = by_name[name][0]
        rank = (POSES.index(m.pose) if m.pose in POSES else 9,
                FLEXORS.index(m.flexor) if m.flexor in FLEXORS else 9,
                EM_TENDONS.index(m.em) if m.em in EM_TENDONS else 9)
        return (m.kind != "free", *(rank if m.kind == "contact" else ()), order[name])

    return [by_name[n] for n in sorted(by_name, key=key)]


def _average_inputs(repeats: list[MeasuredTrial]) -> tuple[np.ndarray, np.ndarray]:
    tables = [r.inputs() for r in repeats]
    end = max(t[-1] for t, _ in tables)
    grid = np.arange(0.0, end + INPUT_DT_S, INPUT_DT_S)
    stacked = [np.column_stack([np.interp(grid, t, e[:, i]) for i in range(6)]) for t, e in tables]
    return grid, np.mean(stacked, axis=0)


def _start(repeat: MeasuredTrial) -> Start:
    force = repeat.initial("fingertip_force_N") if repeat.has("fingertip_force_N") else None
    return Start(repeat.initial("joint_angles_rad"), repeat.initial("tendon_force_N"), repeat.surface_angle_deg,
                 force)


def _average_start(starts: list[Start]) -> Start:
    forces = [s.tip_force_N for s in starts if s.tip_force_N is not None]
    force = np.mean(forces, axis=0) if len(forces) == len(starts) else None
    return Start(np.mean([s.theta_rad for s in starts], axis=0), np.mean([s.tensions_N for s in starts], axis=0),
                 starts[0].surface_angle_deg, force)


def _measured_curves(repeats, grid):
    mean, sd = {}, {}
    for q, scale in (("joint_angles_rad", np.degrees), ("tendon_force_N", None), ("fingertip_force_N", None)):
        if not all(r.has(q) for r in repeats):
            continue
        # after its own end each repeat holds its steady value: the runner stopped recording it there
        curves = np.array([r.signals[q].on_grid(np.minimum(grid, r.duration_s)) for r in repeats])
        curves = scale(curves) if scale else curves
        mean[q], sd[q] = curves.mean(axis=0), metrics.sample_sd(curves)
    return mean, sd


def make_group(repeats: list[MeasuredTrial], t_end_s: float | None = None) -> TrialGroup:
    first = repeats[0]
    has_force = first.kind == "contact" and all(r.has("fingertip_force_N") for r in repeats)
    steady_theta = np.degrees([r.steady("joint_angles_rad") for r in repeats])
    steady_force = np.array([r.steady("fingertip_force_N") for r in repeats]) if has_force else None
    duration = max(r.duration_s for r in repeats)
    grid = np.arange(0.0, max(duration, t_end_s or 0.0) + GRID_DT_S / 2, GRID_DT_S)
    mean, sd = _measured_curves(repeats, grid)
    return TrialGroup(first.name, first.kind, first.pose, first.surface_angle_deg, first.pulled, repeats,
                      _average_start([_start(r) for r in repeats]), _average_inputs(repeats), steady_theta,
                      steady_force, metrics.sample_sd(steady_theta), grid, mean, sd)


def evaluate(group: TrialGroup, pset: ParamSet) -> SetResult:
    what = f"trial {group.name!r} with parameters {pset.label}"
    sim = resimulate(pset.finger, group.start, *group.inputs, what=what)
    mae, _ = metrics.joint_angle_errors(group.steady_theta_deg, np.degrees(sim.steady_theta_rad))
    force = None
    if group.steady_force_N is not None and sim.steady_force_N is not None:
        force = metrics.force_errors(group.steady_force_N, sim.steady_force_N)
    repeat_sims = [resimulate(pset.finger, _start(r), *r.inputs(), what=f"{r.label} with parameters {pset.label}")
                   for r in group.repeats]
    theta_err = group.steady_theta_deg - np.degrees([s.steady_theta_rad for s in repeat_sims])
    force_err = None
    if group.steady_force_N is not None:
        force_err = group.steady_force_N - np.array([s.steady_force_N for s in repeat_sims])
    span = group.grid_s <= max(r.duration_s for r in group.repeats)
    g = group.grid_s[span]
    rmse_theta = metrics.rms(group.measured_mean["joint_angles_rad"][span] - np.degrees(sim.on_grid(g, sim.theta_rad)))
    rmse_tension = metrics.rms(group.measured_mean["tendon_force_N"][span] - sim.on_grid(g, sim.tensions_N))
    rmse_force = None
    if group.has_force and sim.tip_force_N is not None:
        rmse_force = metrics.rms(group.measured_mean["fingertip_force_N"][span] - sim.on_grid(g, sim.tip_force_N))
    return SetResult(sim, mae, force, repeat_sims, theta_err, force_err, rmse_theta, rmse_tension, rmse_force)


def compare(trials: list[MeasuredTrial], sets: list[ParamSet], sessions: list[str],
            skipped: list[tuple[str, str]] | None = None, on_progress=None) -> Comparison:
    """``on_progress(done, total)``: called after each trial group is re-simulated with each parameter set."""
    groups = []
    grouped = group_trials(trials)
    total, done = len(grouped) * len(sets), 0
    for repeats in grouped:
        group = make_group(repeats)
        results = {}
        for p in sets:
            results[p.label] = evaluate(group, p)
            done += 1
            if on_progress is not None:
                on_progress(done, total)
        # extend the common grid so the plots show each simulation until it settled
        t_end = max(r.sim.t_s[-1] for r in results.values())
        if t_end > group.grid_s[-1] + GRID_DT_S:
            group = make_group(repeats, t_end)
        group.results = results
        groups.append(group)
    return Comparison(list(sessions), list(sets), groups, list(skipped or []))
