"""The 35 ODE states of Table 1, with named access.

Layout (power-variable formulation):
  [0:4]   tau_K      joint spring torques, N·m           (eq. 1)
  [4:8]   theta_dot  joint speeds, rad/s                 (eq. 2 / 16)
  [8:12]  theta      joint angles, rad (anatomical)      (eq. 3)
  [12:18] F_input    input tendon forces FDP..LUM, N     (eqs. 4-6)
  [18:29] F_em       EM segment forces e2..p4, N         (eqs. 7-9)
  [29:35] v_em       EM junction mass velocities, m/s    (eqs. 10-11)
Besides these, a simulation keeps the contact point (aux): [in_contact, cp_x, cp_y, cp_z].
"""

from __future__ import annotations

import numpy as np
from uartlab.sim.names import EM_MASSES, EM_SEGMENTS, JOINTS, SEGMENTS, TENDONS

TAU_K = slice(0, 4)
THETA_DOT = slice(4, 8)
THETA = slice(8, 12)
F_INPUT = slice(12, 18)
F_EM = slice(18, 29)
F_ALL = slice(12, 29)
V_EM = slice(29, 35)
N_STATES = 35
N_AUX = 4

# Offsets used by the compiled kernels.
I_TAU_K, I_THETA_DOT, I_THETA, I_F, I_V = 0, 4, 8, 12, 29


class FingerState:
    """A view on a 35-vector (or a (n, 35) history) with the paper's names: ``x.theta``, ``x.F_input``."""

    __slots__ = ("array",)

    def __init__(self, array: np.ndarray | None = None):
        self.array = np.zeros(N_STATES) if array is None else np.asarray(array, dtype=float)
        if self.array.shape[-1] != N_STATES:
            raise ValueError(f"a finger state has {N_STATES} values, got shape {self.array.shape}")

    def _get(self, s):
        return self.array[..., s]

    tau_K = property(lambda self: self._get(TAU_K), lambda self, v: self._set(TAU_K, v))
    theta_dot = property(lambda self: self._get(THETA_DOT), lambda self, v: self._set(THETA_DOT, v))
    theta = property(lambda self: self._get(THETA), lambda self, v: self._set(THETA, v))
    F_input = property(lambda self: self._get(F_INPUT), lambda self, v: self._set(F_INPUT, v))
    F_em = property(lambda self: self._get(F_EM), lambda self, v: self._set(F_EM, v))
    v_em = property(lambda self: self._get(V_EM), lambda self, v: self._set(V_EM, v))

    def _set(self, s, value):
        self.array[..., s] = value

    @property
    def theta_deg(self) -> np.ndarray:
        return np.degrees(self.theta)

    def tension(self, segment: str) -> np.ndarray:
        """Force (N) in an input tendon (``"FDP"``) or an EM segment (``"d4"``)."""
        return self.array[..., 12 + SEGMENTS.index(segment)]

    def as_dict(self) -> dict[str, float]:
        """Flat, named copy of a single state (for printing and JSON)."""
        x = self.array
        out = {f"tau_K_{j}_Nm": x[i] for i, j in enumerate(JOINTS)}
        out |= {f"theta_dot_{j}_rad_per_s": x[4 + i] for i, j in enumerate(JOINTS)}
        out |= {f"theta_{j}_rad": x[8 + i] for i, j in enumerate(JOINTS)}
        out |= {f"F_{t}_N": x[12 + i] for i, t in enumerate(TENDONS)}
        out |= {f"F_{s}_N": x[18 + i] for i, s in enumerate(EM_SEGMENTS)}
        out |= {f"v_{mname}_m_per_s": x[29 + i] for i, mname in enumerate(EM_MASSES)}
        return {k: float(v) for k, v in out.items()}

    def copy(self) -> FingerState:
        return FingerState(self.array.copy())

    def __repr__(self) -> str:
        if self.array.ndim != 1:
            return f"FingerState(history of {self.array.shape[0]})"
        th = ", ".join(f"{j}={v:.1f}" for j, v in zip(JOINTS, self.theta_deg, strict=True))
        ft = ", ".join(f"{t}={v:.2f}" for t, v in zip(TENDONS, self.F_input, strict=True))
        return f"FingerState(theta_deg: {th}; F_N: {ft})"


def balanced_em_forces(F_input: np.ndarray) -> np.ndarray:
    """EM segment forces balancing the junctions, distal segments sharing equally (paper, Results).

    ED splits three ways (e2, ed3, ep3); DI, PI, LUM two ways; the lateral bands carry what flows in.
    """
    ed, di, pi, lum = F_input[2], F_input[3], F_input[4], F_input[5]
    e2 = ed3 = ep3 = ed / 3.0
    d2 = d3 = di / 2.0
    p2 = p3 = pi / 2.0
    L2 = L3 = lum / 2.0
    d4 = ed3 + d3 + L3
    p4 = ep3 + p3
    return np.array([e2, d2, p2, L2, ed3, ep3, d3, p3, L3, d4, p4])
