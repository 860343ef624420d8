"""Static balance at a pose: which tendon pretensions hold the finger still.

Before a trial the operator pretensions every tendon so the finger holds its start pose (the paper:
"initially small tensions in all the input tendons"). For a simulated start we solve for that state:
input tensions F >= F_min, as close as possible to a nominal pretension, whose joint torques — with the
EM split balanced at its junctions — cancel gravity and any initial contact force.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize

from .names import JOINTS
from .state import balanced_em_forces


def tendon_torque_matrix(finger, q) -> np.ndarray:
    """B (4 x 6): joint torques (N·m) per newton of each input tendon, EM split included."""
    B = np.zeros((4, 6))
    for i in range(6):
        x = finger.initial_state(np.degrees(q), 0.0)
        F = np.zeros(6)
        F[i] = 1.0
        x.F_input = F
        x.F_em = balanced_em_forces(F)
        B[:, i] = _tendon_torques(finger, x.array)
    return B


def _tendon_torques(finger, x: np.ndarray) -> np.ndarray:
    return finger.moment_arms(x[8:12]).T @ x[12:29]


def holding_tensions(finger, theta_deg, nominal_N: float = 1.0, min_N: float = 0.3,
                     external_torque_Nm=None) -> np.ndarray:
    """Input tensions (6,) N that hold the pose against gravity (and ``external_torque_Nm``, e.g. contact).

    Raises ValueError naming the joint when no tensions within the bounds can balance it.
    """
    q = np.radians(np.asarray(theta_deg, dtype=float))
    B = tendon_torque_matrix(finger, q)
    tau_ext = finger.gravity_torques(q)
    if external_torque_Nm is not None:
        tau_ext = tau_ext + np.asarray(external_torque_Nm, dtype=float)
    sol = minimize(
        lambda F: 0.5 * np.sum((F - nominal_N) ** 2), np.full(6, nominal_N), jac=lambda F: F - nominal_N,
        method="SLSQP", bounds=[(min_N, None)] * 6,
        constraints=[{"type": "eq", "fun": lambda F: 1e3 * (B @ F + tau_ext), "jac": lambda F: 1e3 * B}],
        options={"ftol": 1e-12, "maxiter": 200},
    )
    residual = B @ sol.x + tau_ext
    worst = int(np.argmax(np.abs(residual)))
    if abs(residual[worst]) > 1e-6:
        raise ValueError(f"no tendon tensions >= {min_N} N hold the pose {list(theta_deg)} deg: "
                         f"{JOINTS[worst]} is left with {residual[worst] * 1e3:.3f} N·mm")
    return sol.x
