"""Compiled residuals and Jacobian of weighted marker positions, the inner loop of the per-frame IK.

r[3k:3k+3] = sw_k (x_k(q) - target_k) for a marker fixed at ``local[k]`` in frame ``links[k]``, and
J[3k:3k+3, j] = sw_k * sign_j * z_j x (x_k - o_j) for joints j proximal to that frame, else 0 (the
linear rows of kinematics.point_jacobian_into). One call replaces a dozen numpy operations per step.
"""

from __future__ import annotations

import numpy as np
from uartlab.sim.compiled import SIGN
from uartlab.sim.jit import kernel
from uartlab.sim.kinematics import frames_into


@kernel
def marker_residuals_into(P: np.ndarray, q: np.ndarray, links: np.ndarray, local: np.ndarray,
                          target: np.ndarray, sw: np.ndarray, R: np.ndarray, o: np.ndarray,
                          r: np.ndarray, J: np.ndarray) -> None:
    frames_into(P, q, R, o)
    for k in range(links.shape[0]):
        f = links[k]
        lx, ly, lz = local[k, 0], local[k, 1], local[k, 2]
        x0 = o[f, 0] + R[f, 0, 0] * lx + R[f, 0, 1] * ly + R[f, 0, 2] * lz
        x1 = o[f, 1] + R[f, 1, 0] * lx + R[f, 1, 1] * ly + R[f, 1, 2] * lz
        x2 = o[f, 2] + R[f, 2, 0] * lx + R[f, 2, 1] * ly + R[f, 2, 2] * lz
        w = sw[k]
        r[3 * k] = w * (x0 - target[k, 0])
        r[3 * k + 1] = w * (x1 - target[k, 1])
        r[3 * k + 2] = w * (x2 - target[k, 2])
        for j in range(4):
            if j >= f:
                J[3 * k, j] = 0.0
                J[3 * k + 1, j] = 0.0
                J[3 * k + 2, j] = 0.0
                continue
            s = w * P[SIGN + j]
            zx, zy, zz = R[j, 0, 2], R[j, 1, 2], R[j, 2, 2]
            dx, dy, dz = x0 - o[j, 0], x1 - o[j, 1], x2 - o[j, 2]
            J[3 * k, j] = s * (zy * dz - zz * dy)
            J[3 * k + 1, j] = s * (zz * dx - zx * dz)
            J[3 * k + 2, j] = s * (zx * dy - zy * dx)
