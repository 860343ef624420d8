"""Forward kinematics and the geometric Jacobian of the D-H chain (paper Table 2).

Standard D-H: T_i = Rz(theta_i) Tz(d_i) Tx(a_i) Rx(alpha_i), with the D-H angle
theta_i = offset_i + sign_i * q_i, where q are the anatomical joint angles (flexion and abduction +).
Frame i sits at the distal end of link i; frame 0 is the base, placed in the world by
``world_from_base``. All results are in the world frame, metres. ``P`` is the flat parameter array
of compiled.py.
"""

from __future__ import annotations

import numpy as np
from uartlab.sim.compiled import COS_ALPHA, DH, SIGN, SIN_ALPHA, WORLD_FROM_BASE
from uartlab.sim.jit import inline_kernel

N_FRAMES = 5  # base + one per joint


@inline_kernel
def frames_into(P: np.ndarray, q: np.ndarray, R: np.ndarray, o: np.ndarray) -> None:
    """Fill R (5, 3, 3) and o (5, 3) with every frame's rotation and origin in the world."""
    for r in range(3):
        o[0, r] = 0.0
        for c in range(3):
            R[0, r, c] = P[WORLD_FROM_BASE + 3 * r + c]
    for i in range(4):
        a = P[DH + 4 * i]
        d = P[DH + 4 * i + 1]
        th = P[DH + 4 * i + 3] + P[SIGN + i] * q[i]
        ct, st, ca, sa = np.cos(th), np.sin(th), P[COS_ALPHA + i], P[SIN_ALPHA + i]
        l00, l01, l02 = ct, -st * ca, st * sa
        l10, l11, l12 = st, ct * ca, -ct * sa
        l21, l22 = sa, ca
        px, py, pz = a * ct, a * st, d
        for r in range(3):
            p0, p1, p2 = R[i, r, 0], R[i, r, 1], R[i, r, 2]
            R[i + 1, r, 0] = p0 * l00 + p1 * l10
            R[i + 1, r, 1] = p0 * l01 + p1 * l11 + p2 * l21
            R[i + 1, r, 2] = p0 * l02 + p1 * l12 + p2 * l22
            o[i + 1, r] = o[i, r] + p0 * px + p1 * py + p2 * pz


@inline_kernel
def point_in_frame(R: np.ndarray, o: np.ndarray, frame: int, lx: float, ly: float, lz: float,
                   out: np.ndarray) -> None:
    for r in range(3):
        out[r] = o[frame, r] + R[frame, r, 0] * lx + R[frame, r, 1] * ly + R[frame, r, 2] * lz


@inline_kernel
def point_jacobian_into(P: np.ndarray, R: np.ndarray, o: np.ndarray, p: np.ndarray, last_joint: int,
                        J: np.ndarray) -> None:
    """Geometric Jacobian (6, 4) of world point ``p`` on link ``last_joint`` (1-based) in anatomical q.

    Rows 0-2 linear velocity, rows 3-5 angular velocity; joints beyond the link get zero columns.
    """
    for i in range(4):
        if i >= last_joint:
            for r in range(6):
                J[r, i] = 0.0
            continue
        s = P[SIGN + i]
        zx, zy, zz = R[i, 0, 2], R[i, 1, 2], R[i, 2, 2]
        dx, dy, dz = p[0] - o[i, 0], p[1] - o[i, 1], p[2] - o[i, 2]
        J[0, i] = s * (zy * dz - zz * dy)
        J[1, i] = s * (zz * dx - zx * dz)
        J[2, i] = s * (zx * dy - zy * dx)
        J[3, i] = s * zx
        J[4, i] = s * zy
        J[5, i] = s * zz


# ---------------------------------------------------------------- Python-facing helpers
def forward_frames(P: np.ndarray, q) -> tuple[np.ndarray, np.ndarray]:
    """Rotations (5, 3, 3) and origins (5, 3) of the base and every joint frame, world, m."""
    R = np.empty((N_FRAMES, 3, 3))
    o = np.empty((N_FRAMES, 3))
    frames_into(P, np.ascontiguousarray(q, dtype=float), R, o)
    return R, o


def point_on_link(P: np.ndarray, q, link: int, local) -> np.ndarray:
    R, o = forward_frames(P, q)
    return o[link] + R[link] @ np.asarray(local, dtype=float)


def jacobian_at(P: np.ndarray, q, link: int, local) -> np.ndarray:
    """6 x 4 geometric Jacobian of a point fixed in link ``link``'s frame."""
    R, o = forward_frames(P, q)
    p = o[link] + R[link] @ np.asarray(local, dtype=float)
    J = np.empty((6, 4))
    point_jacobian_into(P, R, o, p, link, J)
    return J
