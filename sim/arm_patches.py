"""The cubic patches the compiled kernels evaluate for every moment arm that is not the polynomial form.

A patch is r(u, v) = sum_k sum_l c[k, l] (u - u_i)^k (v - v_j)^l on one cell u_i <= u < u_i+1, v_j <= v < v_j+1
of a grid over one or two joint angles (a surface is one patch over all angles). The forms of
sim/moment_arm_forms.py and sim/lateral_band_wrap.py build them; sim/compiled.py packs them into the model's
flat parameter array; sim/bondgraph.py evaluates them (the same arithmetic as ``Patches.__call__``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from uartlab.sim.names import JOINTS

# How the kernels find an angle's cell: one patch for all angles (a surface), a division (a grid of equal
# steps, as a sweep or ``tabulate`` writes it) or a binary search.
UNBOUNDED, EQUAL_CELLS, SEARCH = 0.0, 1.0, 2.0


@dataclass(frozen=True, eq=False)
class Patches:
    """What the kernels evaluate: cells over ``axes`` (joint indices; one axis: v is unused)."""

    axes: tuple[int, ...]
    u_nodes: np.ndarray        # (nu + 1,) rad
    v_nodes: np.ndarray        # (nv + 1,) rad ([0, 1] for one axis)
    coeffs: np.ndarray         # (nu, nv, 4, 4) c[k, l] in m / rad^(k+l), local to the cell's low corner
    clamp: bool                # True: angles held to the nodes' range; False: one patch over all angles

    def flat(self, grid: int = 1) -> np.ndarray:
        """The block compiled into P: [u axis, v axis (-1: none), nu, nv, lookup, grid, u cells per rad, u nodes,
        v cells per rad, v nodes, coeffs] (a multiplication finds a cell of equal steps). ``grid`` numbers the
        blocks on the same nodes (``grid_key``) alike: the kernels find a pose's cell once per grid."""
        nu, nv = len(self.u_nodes) - 1, len(self.v_nodes) - 1
        equal = all(np.allclose(np.diff(n), n[1] - n[0], rtol=1e-12, atol=0) for n in (self.u_nodes, self.v_nodes))
        lookup = UNBOUNDED if not self.clamp else EQUAL_CELLS if equal else SEARCH
        head = [self.axes[0], self.axes[1] if len(self.axes) > 1 else -1, nu, nv, lookup, grid]

        def per_rad(nodes: np.ndarray) -> list[float]:
            step = nodes[1] - nodes[0]
            return [1.0 / step if step > 0 else 0.0]

        return np.concatenate([np.asarray(head, float), per_rad(self.u_nodes), self.u_nodes,
                               per_rad(self.v_nodes), self.v_nodes, self.coeffs.ravel()])

    @property
    def coeffs_offset(self) -> int:
        """Where the coefficients start in ``flat``'s block: after the head, the per-rad entries and the nodes."""
        return len(self.u_nodes) + len(self.v_nodes) + 8

    def grid_key(self) -> tuple:
        """Equal for blocks whose cells are found alike (the same axes, nodes and clamping)."""
        return self.axes, self.clamp, self.u_nodes.tobytes(), self.v_nodes.tobytes()

    def __call__(self, theta_rad: np.ndarray) -> tuple[float, np.ndarray]:
        """r (m) and dr/dtheta (4,) at anatomical angles ``theta_rad`` (4,): the kernels' arithmetic, in numpy."""
        u, iu, du_ok = locate(self.u_nodes, float(theta_rad[self.axes[0]]), self.clamp)
        if len(self.axes) > 1:
            v, iv, dv_ok = locate(self.v_nodes, float(theta_rad[self.axes[1]]), self.clamp)
        else:
            v, iv, dv_ok = 0.0, 0, False
        c = self.coeffs[iu, iv]
        pu = u ** np.arange(4)
        pv = v ** np.arange(4)
        dpu = np.array([0.0, 1.0, 2.0 * u, 3.0 * u * u])
        dpv = np.array([0.0, 1.0, 2.0 * v, 3.0 * v * v])
        grad = np.zeros(len(JOINTS))
        grad[self.axes[0]] = dpu @ c @ pv if du_ok else 0.0
        if len(self.axes) > 1:
            grad[self.axes[1]] = pu @ c @ dpv if dv_ok else 0.0
        return float(pu @ c @ pv), grad


def locate(nodes: np.ndarray, x: float, clamp: bool) -> tuple[float, int, bool]:
    """(x local to its cell, the cell, whether x is inside the nodes' range, i.e. r varies with it)."""
    if not clamp:
        return x - nodes[0], 0, True
    inside = nodes[0] <= x <= nodes[-1]
    x = min(max(x, nodes[0]), nodes[-1])
    i = int(np.clip(np.searchsorted(nodes, x, side="right") - 1, 0, len(nodes) - 2))
    return x - nodes[i], i, inside

def hermite(h: float) -> np.ndarray:
    """Power coefficients [c0..c3] of the cubic on [0, h] from [p(0), p(h), p'(0), p'(h)]."""
    return np.array([[1.0, 0.0, 0.0, 0.0],
                     [0.0, 0.0, 1.0, 0.0],
                     [-3.0 / h**2, 3.0 / h**2, -2.0 / h, -1.0 / h],
                     [2.0 / h**3, -2.0 / h**3, 1.0 / h**2, 1.0 / h**2]])
