"""Tendon excursion inputs (the flow sources): sigmoid trajectories and sampled tables.

The paper drives each tendon with "a sigmoid trajectory over a four-second time span". We use the
logistic curve rescaled to start exactly at 0 and end exactly at the amplitude:
    s(u) = (sigma(k (u - 1/2)) - sigma(-k/2)) / (sigma(k/2) - sigma(-k/2)),   u = (t - t0) / T in [0, 1]
with steepness k (default 10: the end velocities are 7 % of the peak, close to rest).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from uartlab.sim.jit import inline_kernel, kernel
from uartlab.sim.names import TENDONS, tendon_index

DEFAULT_STEEPNESS = 10.0
KIND_SIGMOID, KIND_TABLE = 0.0, 1.0
# Compiled inputs are one flat array (see compiled.py for why):
#   [kind, n, sigmoids (6 x 4: amplitude m, start s, duration s, steepness), times (n), excursions (n x 6)]
IN_KIND, IN_N, IN_SIG, IN_TABLE = 0, 1, 2, 26


@inline_kernel
def _logistic(z):
    return 1.0 / (1.0 + np.exp(-z))


def unit_sigmoid(u, k):
    """s(u) of the docstring above for u inside (0, 1), on a number or a NumPy array. Plain Python so the
    rig's trajectories call it without compiling; the model's kernels compile this same function."""
    lo, hi = 1.0 / (1.0 + np.exp(0.5 * k)), 1.0 / (1.0 + np.exp(-0.5 * k))
    return (1.0 / (1.0 + np.exp(-(k * (u - 0.5)))) - lo) / (hi - lo)


_unit_sigmoid = inline_kernel(unit_sigmoid)


@inline_kernel
def sigmoid_value(t, amp, t0, dur, k):
    u = (t - t0) / dur
    if u <= 0.0:
        return 0.0
    if u >= 1.0:
        return amp
    return amp * _unit_sigmoid(u, k)


@inline_kernel
def sigmoid_rate(t, amp, t0, dur, k):
    u = (t - t0) / dur
    if u <= 0.0 or u >= 1.0:
        return 0.0
    lo, hi = _logistic(-0.5 * k), _logistic(0.5 * k)
    s = _logistic(k * (u - 0.5))
    return amp * k * s * (1.0 - s) / ((hi - lo) * dur)


@inline_kernel
def _segment(inp, t):
    """Index k of the table segment [t_k, t_k+1) holding t; -1 before the table, n-1 after it."""
    n = int(inp[IN_N])
    times = inp[IN_TABLE:IN_TABLE + n]
    if t <= times[0]:
        return -1
    if t >= times[n - 1]:
        return n - 1
    return np.searchsorted(times, t, side="right") - 1


@inline_kernel
def input_rates_into(inp: np.ndarray, t: float, u: np.ndarray) -> None:
    """Excursion velocities (m/s) of the six tendons at time t."""
    if inp[IN_KIND] == KIND_SIGMOID:
        for i in range(6):
            b = IN_SIG + 4 * i
            u[i] = sigmoid_rate(t, inp[b], inp[b + 1], inp[b + 2], inp[b + 3]) if inp[b] != 0.0 else 0.0
        return
    n = int(inp[IN_N])
    k = _segment(inp, t)
    ex = IN_TABLE + n
    for i in range(6):
        if k < 0 or k >= n - 1:
            u[i] = 0.0
        else:
            dt = inp[IN_TABLE + k + 1] - inp[IN_TABLE + k]
            u[i] = (inp[ex + 6 * (k + 1) + i] - inp[ex + 6 * k + i]) / dt


@kernel
def input_excursions_into(inp: np.ndarray, t: float, e: np.ndarray) -> None:
    """Excursions (m) of the six tendons at time t, relative to their start."""
    if inp[IN_KIND] == KIND_SIGMOID:
        for i in range(6):
            b = IN_SIG + 4 * i
            e[i] = sigmoid_value(t, inp[b], inp[b + 1], inp[b + 2], inp[b + 3])
        return
    n = int(inp[IN_N])
    k = _segment(inp, t)
    ex = IN_TABLE + n
    for i in range(6):
        if k < 0:
            e[i] = inp[ex + i]
        elif k >= n - 1:
            e[i] = inp[ex + 6 * (n - 1) + i]
        else:
            t0, t1 = inp[IN_TABLE + k], inp[IN_TABLE + k + 1]
            f = (t - t0) / (t1 - t0)
            e[i] = inp[ex + 6 * k + i] + f * (inp[ex + 6 * (k + 1) + i] - inp[ex + 6 * k + i])


def sigmoid_shape(u, steepness: float = DEFAULT_STEEPNESS) -> np.ndarray:
    """s(u) at fractions ``u`` of a pull (any shape): exactly 0 at u <= 0 and 1 at u >= 1, monotonic in
    between. The rig's trajectories sample this same curve, so the rig and the model pull alike."""
    u = np.clip(np.asarray(u, dtype=float), 0.0, 1.0)
    inside = unit_sigmoid(u, steepness)
    # Pin the ends: the rig must arrive exactly at the commanded excursion, not 1e-16 short of it.
    return np.where(u <= 0.0, 0.0, np.where(u >= 1.0, 1.0, inside))


@dataclass(frozen=True)
class Sigmoid:
    """One tendon pulled ``amplitude_m`` (+ = shortening, as a servo reeling in) over ``duration_s``."""

    tendon: str
    amplitude_m: float
    duration_s: float = 4.0
    start_s: float = 0.0
    steepness: float = DEFAULT_STEEPNESS

    def __post_init__(self):
        tendon_index(self.tendon)
        if self.duration_s <= 0:
            raise ValueError(f"sigmoid for {self.tendon}: duration must be > 0 s, got {self.duration_s}")
        if self.steepness <= 0:
            raise ValueError(f"sigmoid for {self.tendon}: steepness must be > 0, got {self.steepness}")

    @property
    def end_s(self) -> float:
        return self.start_s + self.duration_s


def sigmoid_inputs(sigmoids: list[Sigmoid] | tuple[Sigmoid, ...]) -> np.ndarray:
    """Compiled input array for one sigmoid per pulled tendon (the others held)."""
    inp = np.zeros(IN_TABLE)
    inp[IN_KIND] = KIND_SIGMOID
    table = inp[IN_SIG:IN_TABLE].reshape(6, 4)
    table[:, 2] = 1.0
    table[:, 3] = DEFAULT_STEEPNESS
    for s in sigmoids:
        i = tendon_index(s.tendon)
        if table[i, 0] != 0.0:
            raise ValueError(f"tendon {s.tendon} has more than one sigmoid; use a table input")
        table[i] = s.amplitude_m, s.start_s, s.duration_s, s.steepness
    return inp


def table_inputs(times_s, excursions_m) -> np.ndarray:
    """Excursions (n, 6) in m at increasing times (n,) s; linear in between, held after the end."""
    t = np.ascontiguousarray(times_s, dtype=float)
    e = np.ascontiguousarray(excursions_m, dtype=float)
    if t.ndim != 1 or t.size < 2 or e.shape != (t.size, len(TENDONS)):
        raise ValueError(f"table input needs times (n >= 2,) and excursions (n, 6); got {t.shape}, {e.shape}")
    if np.any(np.diff(t) <= 0):
        raise ValueError("table input times must increase strictly")
    return np.concatenate([[KIND_TABLE, t.size], np.zeros(IN_TABLE - 2), t, e.ravel()])


def inputs_end_s(inp: np.ndarray) -> float:
    """Time after which no input moves any more."""
    if inp[IN_KIND] == KIND_SIGMOID:
        sig = inp[IN_SIG:IN_TABLE].reshape(6, 4)
        active = sig[:, 0] != 0.0
        return float(np.max(sig[active, 1] + sig[active, 2])) if active.any() else 0.0
    return float(inp[IN_TABLE + int(inp[IN_N]) - 1])


def excursions_at(inp: np.ndarray, times_s) -> np.ndarray:
    """Input excursions (n, 6) m at the given times."""
    times = np.atleast_1d(np.asarray(times_s, dtype=float))
    out = np.empty((times.size, 6))
    for k, t in enumerate(times):
        input_excursions_into(inp, float(t), out[k])
    return out
