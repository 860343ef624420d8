"""Integrators: fixed-step RK4 (the paper's) and adaptive Dormand-Prince 5(4) as the reference.

Both step incrementally (``Stepper.step``, for running the model live beside the rig) and have a
compiled batch loop (``run``) that also applies the paper's steady-state rule: the run ends once every
joint speed has stayed below 0.1 deg/s for ``hold_s`` after the inputs stopped. Each accepted step is
followed by the model's projection (ROM, slack, contact stick point); see bondgraph.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from uartlab.sim.bondgraph import project_into, rhs_into, work_arrays
from uartlab.sim.inputs import input_rates_into, table_inputs
from uartlab.sim.jit import inline_kernel, kernel
from uartlab.sim.state import I_THETA_DOT, N_AUX, N_STATES
from uartlab.sim.step_size import DEFAULT_DT_S

STEADY_SPEED_RAD_S = np.radians(0.1)  # the paper's steady-state rule: all joint speeds < 0.1 deg/s
STEADY_HOLD_S = 0.1  # how long the rule must hold, so a speed passing through zero does not count
RUNNING, SETTLED, DIVERGED = 0, 1, 2  # how a batch run ended
# Divergence: a state outside these bounds (or non-finite: NaN fails every comparison) ends a batch run as
# DIVERGED. They are far beyond anything the finger does (tendon forces of tens of N, joint speeds of a few
# rad/s) yet far below what an unstable step reaches within a few steps (1e67 N at --dt 1), so a run that
# blew up is never reported as a steady state. Per state kind, in the layout of state.py.
STATE_BOUNDS = np.concatenate([
    np.full(4, 1e3),    # spring torques, N·m
    np.full(4, 1e3),    # joint speeds, rad/s
    np.full(4, 1e2),    # angles, rad (ROM projection keeps them inside; 1e2 catches non-finite)
    np.full(17, 1e4),   # tendon and EM segment forces, N
    np.full(6, 1e2),    # EM junction mass velocities, m/s
])


@inline_kernel
def _scratch():
    """Work arrays of one integration: frames, moment arms, scratch, RK stages (8 x 35), trial state."""
    R, o, arms, sc = work_arrays()
    return R, o, arms, sc, np.zeros((8, N_STATES)), np.zeros(N_STATES)


@inline_kernel
def _rk4_core(P, S, inertia, x, aux, h, u1, u2, u3, R, o, arms, sc, K, xt):
    # The four stages share one right-hand-side call site, so the RHS is compiled in once.
    for stage in range(4):
        if stage == 0:
            for i in range(N_STATES):
                xt[i] = x[i]
        else:
            c = h if stage == 3 else 0.5 * h
            for i in range(N_STATES):
                xt[i] = x[i] + c * K[stage - 1, i]
        u = u1 if stage == 0 else (u3 if stage == 3 else u2)
        rhs_into(P, S, inertia, xt, aux, u, K[stage], R, o, arms, sc)
    for i in range(N_STATES):
        x[i] += h / 6.0 * (K[0, i] + 2.0 * K[1, i] + 2.0 * K[2, i] + K[3, i])
    project_into(P, S, x, aux, R, o, sc)


@kernel
def rk4_steps_rates(P, S, inertia, x, aux, h, n, u):
    """n RK4 steps of size h holding the input velocities u (6,) constant (live use)."""
    R, o, arms, sc, K, xt = _scratch()
    for _ in range(n):
        _rk4_core(P, S, inertia, x, aux, h, u, u, u, R, o, arms, sc, K, xt)


@inline_kernel
def _diverged(x):
    for i in range(N_STATES):  # noqa: SIM110 - numba compiles a loop, not any() over a generator
        if not abs(x[i]) < STATE_BOUNDS[i]:   # NaN fails the comparison too
            return True
    return False


@inline_kernel
def _max_speed(x):
    s = 0.0
    for j in range(4):
        s = max(s, abs(x[I_THETA_DOT + j]))
    return s


@kernel
def rk4_run(P, S, inertia, x, aux, inp, t0, dt, settle_from, t_max, steady_speed, hold, rec_every,
            T, X, A):
    """Integrate from t0 until steady (after ``settle_from``) or ``t_max``; record every rec_every steps.

    Returns (records written, final time, status: RUNNING, SETTLED or DIVERGED). x, aux hold the final state.
    """
    R, o, arms, sc, K, xt = _scratch()
    u1, u2, u3 = np.empty(6), np.empty(6), np.empty(6)
    T[0] = t0
    X[0] = x
    A[0] = aux
    n_rec = 1
    t = t0
    quiet = 0.0
    step = 0
    settled = False
    cap = T.shape[0]
    while t < t_max - 1e-12:
        h = min(dt, t_max - t)
        input_rates_into(inp, t, u1)
        input_rates_into(inp, t + 0.5 * h, u2)
        input_rates_into(inp, t + h, u3)
        _rk4_core(P, S, inertia, x, aux, h, u1, u2, u3, R, o, arms, sc, K, xt)
        t += h
        step += 1
        if _diverged(x):
            return n_rec, t, DIVERGED
        if t >= settle_from and _max_speed(x) < steady_speed:
            quiet += h
        else:
            quiet = 0.0
        settled = quiet >= hold
        if (step % rec_every == 0 or settled or t >= t_max - 1e-12) and n_rec < cap:
            T[n_rec] = t
            X[n_rec] = x
            A[n_rec] = aux
            n_rec += 1
        if settled:
            break
    return n_rec, t, SETTLED if settled else RUNNING


# Dormand-Prince 5(4) tableau.
_C = np.array([0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0])
_A = np.array([
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    [1 / 5, 0.0, 0.0, 0.0, 0.0, 0.0],
    [3 / 40, 9 / 40, 0.0, 0.0, 0.0, 0.0],
    [44 / 45, -56 / 15, 32 / 9, 0.0, 0.0, 0.0],
    [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729, 0.0, 0.0],
    [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656, 0.0],
    [35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84],
])
_B = np.array([35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0.0])
_E = np.array([71 / 57600, 0.0, -71 / 16695, 71 / 1920, -17253 / 339200, 22 / 525, -1 / 40])


@inline_kernel
def dopri5_step(P, S, inertia, x, aux, t, h, inp, rtol, atol, R, o, arms, sc, K, xt, u, x_new):
    """Try one step of size h. On success (error <= 1) x and aux are advanced. Returns (ok, error)."""
    for s in range(7):
        for i in range(N_STATES):
            acc = x[i]
            for r in range(s):
                acc += h * _A[s, r] * K[r, i]
            xt[i] = acc
        input_rates_into(inp, t + _C[s] * h, u)
        rhs_into(P, S, inertia, xt, aux, u, K[s], R, o, arms, sc)
    # Stage 6 ran at the 5th-order solution (FSAL form); its slope only enters the error estimate.
    for i in range(N_STATES):
        acc = x[i]
        for r in range(6):
            acc += h * _B[r] * K[r, i]
        x_new[i] = acc
    err = 0.0
    for i in range(N_STATES):
        e = 0.0
        for r in range(7):
            e += h * _E[r] * K[r, i]
        scale = atol[i] + rtol * max(abs(x[i]), abs(x_new[i]))
        err += (e / scale) ** 2
    err = np.sqrt(err / N_STATES)
    if err <= 1.0:
        for i in range(N_STATES):
            x[i] = x_new[i]
        project_into(P, S, x, aux, R, o, sc)
        return True, err
    return False, err


@kernel
def dopri5_run(P, S, inertia, x, aux, inp, t0, h0, h_max, rtol, atol, settle_from, t_max,
               steady_speed, hold, rec_dt, T, X, A):
    """Adaptive integration with the same stopping rule as rk4_run. Returns (records, t, settled, steps)."""
    R, o, arms, sc, K, xt = _scratch()
    u, x_new = np.empty(6), np.empty(N_STATES)
    T[0] = t0
    X[0] = x
    A[0] = aux
    n_rec = 1
    t = t0
    h = h0
    quiet = 0.0
    settled = False
    next_rec = t0 + rec_dt
    cap = T.shape[0]
    accepted = 0
    while t < t_max - 1e-12:
        h = min(h, h_max, t_max - t)
        ok, err = dopri5_step(P, S, inertia, x, aux, t, h, inp, rtol, atol, R, o, arms, sc, K, xt, u, x_new)
        factor = 0.9 * err ** -0.2 if err > 0.0 else 5.0
        if ok:
            t += h
            accepted += 1
            if _diverged(x):
                return n_rec, t, DIVERGED, accepted
            if t >= settle_from and _max_speed(x) < steady_speed:
                quiet += h
            else:
                quiet = 0.0
            settled = quiet >= hold
            if (t >= next_rec or settled or t >= t_max - 1e-12) and n_rec < cap:
                T[n_rec] = t
                X[n_rec] = x
                A[n_rec] = aux
                n_rec += 1
                next_rec = t + rec_dt
            if settled:
                break
            h *= min(5.0, max(0.2, factor))
        else:
            h *= max(0.2, factor)
            if h < 1e-12:
                break
    return n_rec, t, SETTLED if settled else RUNNING, accepted


def default_atol() -> np.ndarray:
    """Absolute tolerances per state kind, sized to what matters for the paper's comparisons."""
    atol = np.empty(N_STATES)
    atol[0:4] = 1e-9    # spring torques, N·m
    atol[4:8] = 1e-6    # joint speeds, rad/s
    atol[8:12] = 1e-8   # angles, rad
    atol[12:29] = 1e-7  # forces, N
    atol[29:35] = 1e-8  # mass velocities, m/s
    return atol


@kernel
def dopri5_advance(P, S, inertia, x, aux, t, dt, h, inp, rtol, atol):
    """Adaptive steps from t to t + dt; returns the step size to try next."""
    R, o, arms, sc, K, xt = _scratch()
    u, x_new = np.empty(6), np.empty(N_STATES)
    end = t + dt
    while t < end - 1e-12:
        step = min(h, end - t)
        ok, err = dopri5_step(P, S, inertia, x, aux, t, step, inp, rtol, atol, R, o, arms, sc, K, xt, u, x_new)
        factor = 0.9 * err ** -0.2 if err > 0.0 else 5.0
        if ok:
            t += step
            h = step * min(5.0, max(0.2, factor))
        else:
            h = step * max(0.2, factor)
            if h < 1e-12:
                break
    return h


@dataclass
class Stepper:
    """Advance the model by dt with the latest input velocities, one call at a time.

    ``method`` is "rk4" (fixed substeps of at most ``max_substep_s``) or "dopri5" (adaptive).
    """

    P: np.ndarray
    S: np.ndarray
    inertia: np.ndarray
    x: np.ndarray
    aux: np.ndarray | None = None
    t: float = 0.0
    method: str = "rk4"
    max_substep_s: float = DEFAULT_DT_S
    rtol: float = 1e-6

    def __post_init__(self):
        if self.method not in ("rk4", "dopri5"):
            raise ValueError(f"unknown integrator {self.method!r}; use 'rk4' or 'dopri5'")
        self.x = np.array(self.x, dtype=float)
        self.aux = np.array(self.aux if self.aux is not None else np.zeros(N_AUX), dtype=float)
        self._atol = default_atol()
        self._h = 1e-4

    def step(self, dt: float, rates_m_per_s) -> np.ndarray:
        """Advance by dt (s) with excursion velocities (6,) m/s held over the interval; returns x."""
        u = np.ascontiguousarray(rates_m_per_s, dtype=float)
        if u.shape != (6,):
            raise ValueError(f"rates must be six tendon velocities, got shape {u.shape}")
        if dt <= 0:
            raise ValueError(f"dt must be > 0 s, got {dt}")
        if self.method == "rk4":
            n = max(1, int(np.ceil(dt / self.max_substep_s - 1e-9)))
            rk4_steps_rates(self.P, self.S, self.inertia, self.x, self.aux, dt / n, n, u)
        else:
            inp = table_inputs([self.t, self.t + dt], np.vstack([np.zeros(6), u * dt]))
            self._h = dopri5_advance(self.P, self.S, self.inertia, self.x, self.aux, self.t, dt, self._h, inp,
                                     self.rtol, self._atol)
        self.t += dt
        return self.x
