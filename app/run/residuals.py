"""Running RMS of the live model's residuals (measured - model) for the current trial, for the GUI.

    rms = ResidualRMS()
    for record in model_subscription:          # the `model` stream (uartlab.app.run.live_model)
        rms.add_record(record)
    summary = rms.summary()                    # ResidualSummary: per joint (deg), per tendon (N), per axis (N)
    summary.joint_angles_deg["PIP"], summary.rows()

    per_trial = TrialResiduals([t.name for t in plan_of(suite)])   # every trial run of a `model` stream
    per_trial.add_record(record); per_trial.summaries()            # [(trial name, ResidualSummary)], in order

``TrialResiduals`` gives from the stream alone (as a client receives it, or as the session file holds it) the
per-trial summaries the live model makes as it runs (``LiveModel.summaries``), for `uartlab run`'s report.

Only the trial's scored phases count (ACTUATE, SETTLE, RECORD: the session file's trial range, actuation start
to steady state); the model keeps predicting through RETURN, but the paper compares up to steady state. A new
trial (another trial index, or ACTUATE entered again after a pause discarded the trial) starts from zero.
Channels that were not measured (NaN, e.g. a marker occluded) are left out of their own RMS only.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from uartlab.protocols.runner import PHASES, Phase
from uartlab.schema import MODEL
from uartlab.sim.names import JOINTS, TENDONS
from uartlab.streams import Record

SCORED_PHASES = frozenset(PHASES.index(p) for p in (Phase.ACTUATE, Phase.SETTLE, Phase.RECORD))
ACTUATE = PHASES.index(Phase.ACTUATE)
AXES = ("X", "Y", "Z")


@dataclass(frozen=True)
class ResidualSummary:
    """RMS residual of one trial so far: ``samples`` scored ticks; NaN where a channel had none."""

    trial_index: int
    samples: int
    joint_angles_deg: dict[str, float]
    tendon_force_N: dict[str, float]
    fingertip_force_N: dict[str, float]

    def rows(self) -> list[tuple[str, float, str]]:
        """(channel, RMS, unit) rows for a table: joints, then tendons, then force axes."""
        return ([(j, v, "deg") for j, v in self.joint_angles_deg.items()]
                + [(t, v, "N") for t, v in self.tendon_force_N.items()]
                + [(f"F{a}", v, "N") for a, v in self.fingertip_force_N.items()])


class ResidualRMS:
    """Accumulates squared residuals per channel; thread-safe (the model thread adds, the GUI reads)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._last_phase: int | None = None
        self._reset(-1)

    def _reset(self, trial_index: int) -> None:
        self.trial_index = int(trial_index)
        self._sq = np.zeros(13)
        self._n = np.zeros(13, dtype=np.int64)
        self._samples = 0

    def reset(self, trial_index: int) -> None:
        with self._lock:
            self._reset(trial_index)

    def starts_trial(self, trial_index: int, phase: int) -> bool:
        """Whether a tick of this trial and phase starts a new trial's RMS (``add`` would reset)."""
        return phase in SCORED_PHASES and (
            trial_index != self.trial_index or (phase == ACTUATE and self._last_phase != ACTUATE))

    def add(self, trial_index: int, phase: int, joint_angles_rad, tendon_force_N, fingertip_force_N) -> None:
        """One tick's residuals (rad, N, N); starts a new trial when the trial changes."""
        r = np.concatenate([np.asarray(joint_angles_rad, dtype=float), np.asarray(tendon_force_N, dtype=float),
                            np.asarray(fingertip_force_N, dtype=float)])
        with self._lock:
            if self.starts_trial(trial_index, phase):
                self._reset(trial_index)
            self._last_phase = int(phase)
            if phase not in SCORED_PHASES or trial_index != self.trial_index:
                return
            ok = np.isfinite(r)
            self._sq[ok] += r[ok] ** 2
            self._n += ok
            self._samples += 1

    def add_record(self, record: Record) -> None:
        """Every sample of a `model` stream record."""
        d = record.data
        for k in range(len(record)):
            self.add(int(d[MODEL.trial_index][k]), int(d[MODEL.phase][k]), d[MODEL.residual_joint_angles_rad][k],
                     d[MODEL.residual_tendon_force_N][k], d[MODEL.residual_fingertip_force_N][k])

    def summary(self) -> ResidualSummary:
        with self._lock:
            n = np.where(self._n > 0, self._n, 1)
            rms = np.where(self._n > 0, np.sqrt(self._sq / n), np.nan)
            index, samples = self.trial_index, self._samples
        return ResidualSummary(
            index, samples,
            {j: float(np.degrees(rms[i])) for i, j in enumerate(JOINTS)},
            {t: float(rms[4 + i]) for i, t in enumerate(TENDONS)},
            {a: float(rms[10 + i]) for i, a in enumerate(AXES)})


def plan_of(trials) -> list:
    """Runner trial index -> trial: a Suite gives the runner's plan (every repeat of every trial, in order,
    as ``protocols.runner.Runner.plan``); a sequence of trials or of (trial, repeat) pairs is used as given."""
    if trials is None:
        return []
    if hasattr(trials, "trials") and hasattr(trials, "settle"):  # a protocols.suite.Suite
        return [t for t in trials.trials for _ in range(t.repeats)]
    return [t[0] if isinstance(t, tuple) else t for t in trials]


class TrialResiduals:
    """The RMS residuals of every trial run in a `model` stream, in the order they ran; ``trial_names``: the
    runner's plan (trial index -> name; "?" beyond it). Not thread-safe: one consumer feeds it."""

    def __init__(self, trial_names: Sequence[str] = ()):
        self.trial_names = list(trial_names)
        self._rms = ResidualRMS()
        self._done: list[ResidualSummary] = []
        self._open = False                    # the current trial has scored ticks

    def add_record(self, record: Record) -> None:
        d = record.data
        for k in range(len(record)):
            index, phase = int(d[MODEL.trial_index][k]), int(d[MODEL.phase][k])
            if self._rms.starts_trial(index, phase):
                self._close_trial()
                self._open = True
            self._rms.add(index, phase, d[MODEL.residual_joint_angles_rad][k], d[MODEL.residual_tendon_force_N][k],
                          d[MODEL.residual_fingertip_force_N][k])

    def _close_trial(self) -> None:
        if self._open:
            self._done.append(self._rms.summary())
            self._open = False

    def summaries(self) -> list[tuple[str, ResidualSummary]]:
        """(trial name, its RMS residuals) per trial run so far, the current one included."""
        done = self._done + ([self._rms.summary()] if self._open else [])
        return [(self._name(s.trial_index), s) for s in done]

    def _name(self, index: int) -> str:
        return self.trial_names[index] if 0 <= index < len(self.trial_names) else "?"


def residual_table(summaries: list[tuple[str, ResidualSummary]]) -> str:
    """Per trial run: RMS residual (measured - model) of each joint (deg), the largest tendon's (N) and the
    fingertip force magnitude's (N), for a run's summary."""
    head = f"{'live model, RMS meas.-model':<28} {'run':>3} " + " ".join(f"{j:>7}" for j in JOINTS)
    lines = [head + f"  {'tendon N':>12} {'tip N':>6}"]
    for name, s in summaries:
        angles = " ".join(f"{v:7.2f}" for v in s.joint_angles_deg.values())
        worst = max(s.tendon_force_N, key=lambda t: np.nan_to_num(s.tendon_force_N[t], nan=-1.0))
        tip = float(np.sqrt(np.nansum(np.square(list(s.fingertip_force_N.values())))))
        lines.append(f"{name:<28} {s.trial_index:>3} {angles}  {worst:>4} {s.tendon_force_N[worst]:7.3f} {tip:6.3f}")
    return "\n".join(lines)
