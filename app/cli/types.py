"""Argparse ``type=`` validators: a nonsense number or an unknown name is refused while the command line is
parsed, before any work, as one line naming the option and the value (exit status 2).

    p.add_argument("--seconds", type=positive_float)
    p.add_argument("--tendons", type=one_of(TENDONS, "tendon", str.upper), nargs="+", action="extend")

Every float validator refuses NaN and infinities (``float("nan")`` parses), so a value that gets through
is a finite number. `suggest` is the one "did you mean ...?" for names anywhere on the command line.
"""

from __future__ import annotations

import argparse
import difflib
import math
from collections.abc import Callable, Iterable

MAX_ANGLE_DEG = 180.0


def suggest(name: str, choices: Iterable[str]) -> str:
    """'; did you mean X?' for the closest of ``choices`` (case-insensitive), or ''."""
    choices = list(choices)
    lowered = {c.lower(): c for c in choices}
    close = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.6)
    return f"; did you mean {lowered[close[0]]}?" if close else ""


def _number(text: str, kind: Callable[[str], float | int], what: str) -> float | int:
    try:
        value = kind(text)
    except (TypeError, ValueError):
        raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
    if isinstance(value, float) and not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def finite_float(text: str) -> float:
    """Any finite number."""
    return float(_number(text, float, "a number"))


def positive_float(text: str) -> float:
    """A finite number > 0 (seconds, speeds, rates, durations, amplitudes)."""
    value = finite_float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
    return value


def twin_speed(text: str) -> float:
    """A twin rig's speed (protocol seconds per wall second): > 0 and no faster than it keeps up with."""
    from uartlab.app.rig.config import twin_speed_problem

    value = finite_float(text)
    if (problem := twin_speed_problem(value)) is not None:
        raise argparse.ArgumentTypeError(problem)
    return value


def float_in(lo: float, hi: float, why: str = "") -> Callable[[str], float]:
    """A finite number within [lo, hi]; ``why`` says what is wrong outside (in the message)."""

    def check(text: str) -> float:
        value = finite_float(text)
        if not lo <= value <= hi:
            bound = f">= {lo:g}" if hi == math.inf else f"within [{lo:g}, {hi:g}]"
            raise argparse.ArgumentTypeError(f"must be {bound}{why}, got {text}")
        return value

    return check


def non_negative_float(text: str) -> float:
    """A finite number >= 0 (a perturbation, a pretension)."""
    value = finite_float(text)
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text}")
    return value


def fraction(text: str) -> float:
    """A relative spread in [0, 1) (a perturbation: 1 or more would make stiffnesses and masses <= 0)."""
    value = finite_float(text)
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"must be a fraction in [0, 1), got {text}")
    return value


def positive_int(text: str) -> int:
    """A whole number >= 1 (repeats, workers)."""
    value = int(_number(text, int, "a whole number"))
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text}")
    return value


def non_negative_int(text: str) -> int:
    """A whole number >= 0 (a seed)."""
    value = int(_number(text, int, "a whole number"))
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text}")
    return value


def angle_deg(text: str) -> float:
    """An angle in degrees within ±180."""
    value = finite_float(text)
    if not -MAX_ANGLE_DEG <= value <= MAX_ANGLE_DEG:
        raise argparse.ArgumentTypeError(f"must be an angle within ±{MAX_ANGLE_DEG:g} deg, got {text}")
    return value


def speed_or_max(text: str) -> float | str:
    """'max' or a positive factor of real time (replay)."""
    if text.strip().lower() == "max":
        return "max"
    try:
        return positive_float(text)
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"{exc} (a positive factor of real time, or 'max')") from None


def one_of(choices: Iterable[str] | Callable[[], Iterable[str]], what: str,
           normalize: Callable[[str], str] = str) -> Callable[[str], str]:
    """A name from ``choices`` (after ``normalize``); otherwise the valid names and the closest one.
    ``choices`` may be a function returning them, called only when the option is given (so building the
    parser imports nothing heavy)."""

    def check(text: str) -> str:
        names = tuple(choices() if callable(choices) else choices)
        value = normalize(text)
        if value in names:
            return value
        raise argparse.ArgumentTypeError(f"unknown {what} {text!r}{suggest(text, names)} "
                                         f"(choose from {', '.join(names)})")

    check.__name__ = what   # argparse names the type in some messages
    return check
