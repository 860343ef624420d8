"""Rigid-body dynamics of the bone chain: recursive Newton-Euler (seed paper 001), gravity, inertia.

The bond-graph model (paper, Dynamic section) lumps each joint's inertia into one rotary inertia and
neglects inertial coupling, Coriolis and centripetal terms, but keeps pose-dependent gravity torques.
So the simulation uses ``gravity_torques_into`` every step and the diagonal of the mass matrix,
evaluated once per run, as the joint inertias I_j (a fixed diagonal keeps the model's power balance
exact). The full RNEA here is the reference for both, and gives inverse dynamics
Q = M(q) q'' + C(q, q') q' - Q_grav(q) for recorded motion (seed 004).
"""

from __future__ import annotations

import numpy as np
from uartlab.sim.compiled import GRAVITY, LINK_COM, LINK_MASS, SIGN, view
from uartlab.sim.jit import inline_kernel
from uartlab.sim.kinematics import N_FRAMES, forward_frames


@inline_kernel
def gravity_torques_into(P: np.ndarray, R: np.ndarray, o: np.ndarray, tau: np.ndarray) -> None:
    """Torque gravity exerts on each joint (anatomical q): sum over distal links of (c - o_j) x m g.

    The zero-velocity case of RNEA written out, because the right-hand side needs it every call.
    """
    gx, gy, gz = P[GRAVITY], P[GRAVITY + 1], P[GRAVITY + 2]
    for j in range(4):
        tau[j] = 0.0
    for i in range(2, N_FRAMES):
        mass = P[LINK_MASS + i]
        if mass == 0.0:
            continue
        lx, ly, lz = P[LINK_COM + 3 * i], P[LINK_COM + 3 * i + 1], P[LINK_COM + 3 * i + 2]
        cx = o[i, 0] + R[i, 0, 0] * lx + R[i, 0, 1] * ly + R[i, 0, 2] * lz
        cy = o[i, 1] + R[i, 1, 0] * lx + R[i, 1, 1] * ly + R[i, 1, 2] * lz
        cz = o[i, 2] + R[i, 2, 0] * lx + R[i, 2, 1] * ly + R[i, 2, 2] * lz
        fx, fy, fz = mass * gx, mass * gy, mass * gz
        for j in range(i):
            dx, dy, dz = cx - o[j, 0], cy - o[j, 1], cz - o[j, 2]
            mx, my, mz = dy * fz - dz * fy, dz * fx - dx * fz, dx * fy - dy * fx
            tau[j] += P[SIGN + j] * (R[j, 0, 2] * mx + R[j, 1, 2] * my + R[j, 2, 2] * mz)


def rnea(P: np.ndarray, q, qd, qdd, gravity=None) -> np.ndarray:
    """Joint torques (N·m, anatomical q) that produce accelerations qdd at velocities qd under gravity.

    World-frame recursive Newton-Euler. Forward pass: each link's angular velocity and acceleration
    and the linear acceleration of its distal origin, the base accelerating at -g so that gravity is
    carried along. Backward pass: the force and moment each link receives from its parent at its
    proximal joint; the joint torque is that moment's component along the joint axis.
    """
    v = view(P)
    g = v.gravity if gravity is None else np.asarray(gravity, dtype=float)
    qd, qdd = np.asarray(qd, dtype=float), np.asarray(qdd, dtype=float)
    R, o = forward_frames(P, q)
    w = np.zeros((N_FRAMES, 3))
    dw = np.zeros((N_FRAMES, 3))
    a = np.zeros((N_FRAMES, 3))
    a[0] = -g
    com = np.zeros((N_FRAMES, 3))
    ac = np.zeros((N_FRAMES, 3))
    for i in range(1, N_FRAMES):
        z = R[i - 1][:, 2] * v.sign[i - 1]
        w[i] = w[i - 1] + qd[i - 1] * z
        dw[i] = dw[i - 1] + qdd[i - 1] * z + qd[i - 1] * np.cross(w[i - 1], z)
        d = o[i] - o[i - 1]
        a[i] = a[i - 1] + np.cross(dw[i], d) + np.cross(w[i], np.cross(w[i], d))
        com[i] = o[i] + R[i] @ v.link_com[i]
        e = com[i] - o[i]
        ac[i] = a[i] + np.cross(dw[i], e) + np.cross(w[i], np.cross(w[i], e))
    tau = np.zeros(4)
    f_child = np.zeros(3)
    n_child = np.zeros(3)
    for i in range(N_FRAMES - 1, 0, -1):
        mass = v.link_mass[i]
        inertia = R[i] @ v.link_inertia[i] @ R[i].T
        f = f_child + mass * ac[i]
        n = (n_child + np.cross(o[i] - o[i - 1], f_child) + np.cross(com[i] - o[i - 1], mass * ac[i])
             + inertia @ dw[i] + np.cross(w[i], inertia @ w[i]))
        tau[i - 1] = v.sign[i - 1] * float(R[i - 1][:, 2] @ n)
        f_child, n_child = f, n
    return tau


def inverse_dynamics(P: np.ndarray, q, qd, qdd, gravity: bool = True) -> np.ndarray:
    """Joint torques (N·m) needed for motion (q, qd, qdd)."""
    return rnea(P, q, qd, qdd, None if gravity else np.zeros(3))


def gravity_torques(P: np.ndarray, q) -> np.ndarray:
    """Torque (N·m) gravity applies at each joint: minus RNEA's holding torque at rest."""
    return -rnea(P, q, np.zeros(4), np.zeros(4))


def mass_matrix(P: np.ndarray, q) -> np.ndarray:
    """Joint-space mass matrix M(q) (4 x 4), one RNEA column per unit acceleration, gravity off."""
    return np.column_stack([rnea(P, q, np.zeros(4), e, np.zeros(3)) for e in np.eye(4)])


def joint_inertias(P: np.ndarray, q, floor_kgm2: float = 1e-7) -> np.ndarray:
    """The paper's lumped joint inertias I_j: the diagonal of M(q), the distal bones about each axis.

    M_jj = sum over links k beyond joint j of m_k |z_j x (c_k - o_j)|^2 + z_j^T I_k z_j — the same
    numbers as ``np.diag(mass_matrix(P, q))`` without four RNEA passes (it runs at every trial start).
    The floor keeps a joint with (almost) nothing distal to it from having zero inertia.
    """
    v = view(P)
    R, o = forward_frames(P, q)
    out = np.zeros(4)
    for j in range(4):
        z = R[j][:, 2]
        for k in range(max(j + 1, 2), N_FRAMES):
            lever = np.cross(z, o[k] + R[k] @ v.link_com[k] - o[j])
            out[j] += v.link_mass[k] * float(lever @ lever) + float(z @ (R[k] @ v.link_inertia[k] @ R[k].T) @ z)
    return np.maximum(out, floor_kgm2)


def potential_energy(P: np.ndarray, q) -> float:
    """Gravitational potential energy (J) of the bones, zero at the base origin."""
    v = view(P)
    R, o = forward_frames(P, q)
    return -sum(v.link_mass[i] * float(v.gravity @ (o[i] + R[i] @ v.link_com[i])) for i in range(2, N_FRAMES))
