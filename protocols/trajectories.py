"""Tendon excursion trajectories as data: what each servo does during a trial.

A trajectory is one piecewise profile per tendon, built from segments that each move the excursion
from where the previous one ended:

    Sigmoid(to_m, duration_s)  the paper's smooth pull (sim.inputs' logistic, exact at both ends)
    Ramp(to_m, duration_s)     constant speed (for checks and calibration moves)
    Hold(duration_s)           stay where it is
    Return(duration_s)         back to zero excursion with a sigmoid

Tendons without a profile are held passive at their pretension (excursion 0), as the paper's other
tendons "had a passive elastic connection to their SEA". The same data drives the rig (the runner
samples ``excursions``) and the model (``to_inputs`` gives sim table inputs), so both see one profile.
Excursions are in m, + = shortening (the servo reeling in), relative to the trial's start.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
from uartlab.sim.inputs import DEFAULT_STEEPNESS, sigmoid_shape, table_inputs
from uartlab.sim.names import TENDONS, tendon_index

# Model inputs are linear between table samples; 10 ms keeps the sampled sigmoid within 0.05 % of the
# amplitude of the exact curve (k = 10, T = 4 s) at 400 samples per pull, cheap for the integrator.
DEFAULT_SAMPLE_DT_S = 0.01


@dataclass(frozen=True)
class Sigmoid:
    """Move to ``to_m`` along the paper's sigmoid over ``duration_s``."""

    to_m: float
    duration_s: float = 4.0  # paper: "over a four-second time span"
    steepness: float = DEFAULT_STEEPNESS

    def shape(self, u: np.ndarray) -> np.ndarray:
        return sigmoid_shape(u, self.steepness)

    def target_m(self, from_m: float) -> float:
        return self.to_m


@dataclass(frozen=True)
class Ramp:
    """Move to ``to_m`` at constant speed over ``duration_s``."""

    to_m: float
    duration_s: float

    def shape(self, u: np.ndarray) -> np.ndarray:
        return np.clip(u, 0.0, 1.0)

    def target_m(self, from_m: float) -> float:
        return self.to_m


@dataclass(frozen=True)
class Hold:
    """Stay at the current excursion for ``duration_s``."""

    duration_s: float

    def shape(self, u: np.ndarray) -> np.ndarray:
        return np.zeros_like(u)

    def target_m(self, from_m: float) -> float:
        return from_m


@dataclass(frozen=True)
class Return:
    """Back to zero excursion (the start pose's pretension) along a sigmoid over ``duration_s``."""

    duration_s: float = 4.0
    steepness: float = DEFAULT_STEEPNESS

    def shape(self, u: np.ndarray) -> np.ndarray:
        return sigmoid_shape(u, self.steepness)

    def target_m(self, from_m: float) -> float:
        return 0.0


Segment = Sigmoid | Ramp | Hold | Return


@dataclass(frozen=True)
class TendonProfile:
    """One tendon's segments, played back to back from ``start_s``; zero before, held after the end."""

    tendon: str
    segments: tuple[Segment, ...]
    start_s: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "tendon", TENDONS[tendon_index(self.tendon)])
        object.__setattr__(self, "segments", tuple(self.segments))
        for seg in self.segments:
            if not seg.duration_s > 0:
                raise ValueError(f"{self.tendon}: segment durations must be > 0 s, got {seg!r}")
        if self.start_s < 0:
            raise ValueError(f"{self.tendon}: start_s must be >= 0 s, got {self.start_s}")

    @property
    def end_s(self) -> float:
        return self.start_s + sum(seg.duration_s for seg in self.segments)

    def breakpoints_s(self) -> list[float]:
        """Segment boundaries: the model's table must sample these exactly so ends are exact."""
        out, t = [self.start_s], self.start_s
        for seg in self.segments:
            t += seg.duration_s
            out.append(t)
        return out

    def excursions(self, times_s: np.ndarray) -> np.ndarray:
        t = np.asarray(times_s, dtype=float)
        out = np.zeros_like(t)
        t0, value = self.start_s, 0.0
        for seg in self.segments:
            target = seg.target_m(value)
            inside = (t >= t0) & (t <= t0 + seg.duration_s)
            out[inside] = value + (target - value) * seg.shape((t[inside] - t0) / seg.duration_s)
            t0, value = t0 + seg.duration_s, target
        out[t > t0] = value
        return out


@dataclass(frozen=True)
class Trajectory:
    """Excursion profiles for any subset of the six tendons; the others stay at 0."""

    profiles: tuple[TendonProfile, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        object.__setattr__(self, "profiles", tuple(self.profiles))
        names = [p.tendon for p in self.profiles]
        if len(set(names)) != len(names):
            raise ValueError(f"a tendon has more than one profile: {', '.join(names)}")

    @classmethod
    def pulls(cls, pulls: Iterable[tuple[str, float, float, float]], return_at_s: float | None = None,
              return_duration_s: float | None = None) -> Trajectory:
        """Sigmoid pulls (tendon, amplitude_m, duration_s, start_s), optionally all returning to 0.

        ``return_at_s`` is when the return starts (the runner picks it once the finger settled);
        each tendon returns over its own pull duration unless ``return_duration_s`` is given.
        """
        profiles = []
        for tendon, amplitude_m, duration_s, start_s in pulls:
            segs: list[Segment] = [Sigmoid(amplitude_m, duration_s)]
            if return_at_s is not None:
                end_s = start_s + duration_s
                if return_at_s < end_s:
                    raise ValueError(f"{tendon}: the return at {return_at_s} s starts before the pull ends "
                                     f"at {end_s} s")
                if return_at_s > end_s:
                    segs.append(Hold(return_at_s - end_s))
                segs.append(Return(return_duration_s or duration_s))
            profiles.append(TendonProfile(tendon, tuple(segs), start_s))
        return cls(tuple(profiles))

    @property
    def end_s(self) -> float:
        return max((p.end_s for p in self.profiles), default=0.0)

    @property
    def tendons(self) -> tuple[str, ...]:
        return tuple(p.tendon for p in self.profiles)

    def excursions(self, times_s: Sequence[float] | np.ndarray) -> np.ndarray:
        """(n, 6) excursions in m, tendon order FDP FDS ED DI PI LUM."""
        t = np.atleast_1d(np.asarray(times_s, dtype=float))
        out = np.zeros((t.size, len(TENDONS)))
        for p in self.profiles:
            out[:, tendon_index(p.tendon)] = p.excursions(t)
        return out

    def sample_times_s(self, sample_dt_s: float = DEFAULT_SAMPLE_DT_S) -> np.ndarray:
        """A uniform grid over the trajectory plus every segment boundary (so ends are hit exactly)."""
        end = max(self.end_s, sample_dt_s)
        grid = np.arange(0.0, end + 0.5 * sample_dt_s, sample_dt_s)
        marks = [b for p in self.profiles for b in p.breakpoints_s()]
        t = np.unique(np.concatenate([grid, marks, [0.0, end]]))
        # Drop grid points that nearly coincide with a boundary: the table needs strictly rising times.
        keep = np.concatenate([[True], np.diff(t) > 1e-9])
        return t[keep]

    def to_inputs(self, sample_dt_s: float = DEFAULT_SAMPLE_DT_S) -> np.ndarray:
        """sim table inputs (sim.inputs.table_inputs) that make the model run this same profile."""
        t = self.sample_times_s(sample_dt_s)
        return table_inputs(t, self.excursions(t))
