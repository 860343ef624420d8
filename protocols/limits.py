"""The rig's limits: ceilings in rig.toml, tightened (never raised) by suites and procedures.

One declaration of the limits and their defaults, used by the suite validator, the dry run, the interlocks
and app/rig/config.py (which reads rig.toml's ``[limits]`` into ``Ceilings``). What a run obeys is
``effective(ceilings, suite_limits)``: per key the smaller of the two.

The excursion a tendon is commanded to is the pretension offset plus the pull (protocols/runner.py
``offset_m``), so ``excursion_overruns`` checks ``|amplitude| + worst offset`` against the limit, not the
amplitude alone.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from uartlab.sim.names import TENDONS

# Defaults of the rig's ceilings, est.: the paper pulls at most 15 mm, so 20 mm leaves room for the
# pretension offset (runner: up to 5 mm) without letting a typo (150) through; 40 N keeps the SEA springs
# well inside their travel; 15 N is below the Nano17's 17 N rated Fz.
DEFAULT_MAX_EXCURSION_MM = 20.0
DEFAULT_MAX_TENDON_FORCE_N = 40.0
DEFAULT_MAX_FINGERTIP_FORCE_N = 15.0
# Pretension never pulls a tendon further than this, est.: slack is a few mm; more means a broken tendon.
# The runner clamps its offset to +-this whenever pretension moves a tendon (protocols/runner.py).
DEFAULT_PRETENSION_MAX_M = 5e-3

DEFAULT_SOURCE = "the default ceiling; rig.toml [limits] sets the rig's own"


@dataclass(frozen=True)
class Limits:
    max_excursion_mm: dict[str, float] = field(default_factory=lambda: dict.fromkeys(TENDONS,
                                                                                       DEFAULT_MAX_EXCURSION_MM))
    max_tendon_force_N: float = DEFAULT_MAX_TENDON_FORCE_N
    max_fingertip_force_N: float = DEFAULT_MAX_FINGERTIP_FORCE_N


@dataclass(frozen=True)
class Ceilings:
    """A rig's hard limits (rig.toml ``[limits]``); ``source`` says where they came from in messages."""

    limits: Limits = field(default_factory=Limits)
    source: str = DEFAULT_SOURCE


DEFAULT_CEILINGS = Ceilings()


def effective(ceilings: Ceilings | Limits, suite_limits: Limits) -> Limits:
    """What a run obeys: per key (and per tendon) the smaller of the rig's ceiling and the suite's limit."""
    cap = ceilings.limits if isinstance(ceilings, Ceilings) else ceilings
    return Limits({t: min(cap.max_excursion_mm[t], suite_limits.max_excursion_mm[t]) for t in TENDONS},
                  min(cap.max_tendon_force_N, suite_limits.max_tendon_force_N),
                  min(cap.max_fingertip_force_N, suite_limits.max_fingertip_force_N))


@dataclass(frozen=True)
class Overrun:
    trial_index: int
    pull_index: int
    reason: str


def excursion_overruns(trials: Iterable, limits: Limits,
                       pretension_max_mm: float = DEFAULT_PRETENSION_MAX_M * 1e3) -> list[Overrun]:
    """Every pull whose commanded excursion (offset + |amplitude|) may exceed its tendon's limit.

    The worst case the runner can command, walked over the run's plan (each trial's repeats in a row):
    a trial starts where the previous one left the tendons; pretension may then move them, and when it
    does it clamps the offset to +-``pretension_max_mm``. So the offset is at most ``pretension_max_mm``
    after a returning trial, and at most where the previous trial ended after one that does not return.
    Pulls whose amplitude alone exceeds the limit are the validator's own message, not repeated here.
    """
    carried = dict.fromkeys(TENDONS, 0.0)      # worst |excursion| the previous trial left each tendon at
    out: list[Overrun] = []
    for i, trial in enumerate(trials):
        flagged: set[int] = set()
        for repeat in range(1, trial.repeats + 1):
            offset = {t: max(pretension_max_mm, carried[t]) for t in TENDONS}
            for j, pull in enumerate(trial.pulls):
                amp, limit = abs(pull.amplitude_mm), limits.max_excursion_mm[pull.tendon]
                if j in flagged or not math.isfinite(amp) or amp > limit or amp + offset[pull.tendon] <= limit:
                    continue
                flagged.add(j)
                if carried[pull.tendon] > pretension_max_mm:
                    why = (f"up to {offset[pull.tendon]:g} mm where the previous trial left {pull.tendon} "
                           "(it does not return)")
                else:
                    why = f"up to {pretension_max_mm:g} mm pretension"
                label = f"trial {trial.name!r}" + (f" (repeat {repeat})" if repeat > 1 else "")
                out.append(Overrun(i, j, f"{label}: pull {amp:g} mm + {why} exceeds the {limit:g} mm excursion "
                                         f"limit for {pull.tendon}"))
            if trial.return_to_start:
                carried = offset
            else:
                carried = dict(offset)
                for pull in trial.pulls:
                    carried[pull.tendon] = offset[pull.tendon] + abs(pull.amplitude_mm)
    return out
