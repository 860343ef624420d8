"""Static balance at a pose: which tendon pretensions hold the finger still.

Before a trial the operator pretensions every tendon and the finger rests at its start pose, held by
the tendons and by joint friction (the paper: "initially small tensions in all the input tendons").
For a simulated start we find such a state: the smallest input tensions F >= F_min whose net joint
torques — EM split balanced at its junctions, gravity and any initial contact included — stay inside
each joint's Coulomb stiction threshold (eqs. 15, 17), with a safety margin. Without friction the
same program asks for exact balance.
"""

from __future__ import annotations

import numpy as np
from uartlab.sim.names import JOINTS
from uartlab.sim.state import balanced_em_forces

STICTION_MARGIN = 0.5  # use at most half the stiction threshold, so the start is robustly static


def segment_forces_per_input() -> np.ndarray:
    """(17, 6): all segment forces per newton of each input tendon, EM balanced at the junctions."""
    out = np.zeros((17, 6))
    for i in range(6):
        F = np.zeros(6)
        F[i] = 1.0
        out[:6, i] = F
        out[6:, i] = balanced_em_forces(F)
    return out


def tendon_torque_matrix(finger, q) -> np.ndarray:
    """B (4 x 6): joint torques (N·m) per newton of each input tendon, EM split included."""
    return finger.moment_arms(q).T @ segment_forces_per_input()


def crossing_tension_matrix(finger, q) -> np.ndarray:
    """C (4 x 6): summed tension (N) of the segments crossing each joint, per newton of each input."""
    crosses = (np.abs(finger.moment_arms(q)) > 0) | _crossing_mask(finger)
    return crosses.T.astype(float) @ segment_forces_per_input()


def _crossing_mask(finger) -> np.ndarray:
    from uartlab.sim.compiled import view

    return view(finger.P).crosses > 0


def holding_tensions(finger, theta_deg, min_N: float = 0.3, external_torque_Nm=None,
                     margin: float = STICTION_MARGIN) -> np.ndarray:
    """Input tensions (6,) N holding the pose against gravity (and ``external_torque_Nm``, e.g. contact).

    Raises ValueError naming the joint when no tensions >= min_N can hold it.
    """
    from scipy.optimize import linprog  # here: the rig core imports this module's callers, never this

    q = np.radians(np.asarray(theta_deg, dtype=float))
    B = tendon_torque_matrix(finger, q)
    C = crossing_tension_matrix(finger, q)
    tau_ext = finger.gravity_torques(q)
    if external_torque_Nm is not None:
        tau_ext = tau_ext + np.asarray(external_torque_Nm, dtype=float)
    slack = margin * finger.params.coulomb_coefficient_m * C
    # |B F + tau_ext| <= slack F, as two one-sided rows per joint; minimise the total tension.
    A_ub = np.vstack([B - slack, -B - slack])
    b_ub = np.concatenate([-tau_ext, tau_ext])
    res = linprog(np.ones(6), A_ub=1e3 * A_ub, b_ub=1e3 * b_ub, bounds=[(min_N, None)] * 6, method="highs")
    if res.status != 0:
        # Report the joint that cannot be held with the smallest tensions.
        F = np.full(6, min_N)
        excess = np.abs(B @ F + tau_ext) - slack @ F
        worst = int(np.argmax(excess))
        raise ValueError(f"no tendon tensions >= {min_N} N hold the pose {list(theta_deg)} deg: "
                         f"{JOINTS[worst]} cannot be balanced ({res.message})")
    return res.x
