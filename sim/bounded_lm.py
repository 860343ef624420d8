"""A bounded Levenberg-Marquardt for small least-squares problems: min 0.5 ||r(x)||^2 with lo <= x <= hi.

Built for the per-frame IK (4 unknowns, a few dozen residuals), where scipy's general trust-region
solver spends almost all its time in bookkeeping around a microsecond of kinematics. Each step solves
the damped normal equations on the free variables only (a variable at a bound whose gradient pushes
it outward stays fixed there), projects the trial point onto the box, and is kept only if the cost
falls. Every iterate is therefore feasible, and the damping makes a projected step a descent step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

LAMBDA_START = 1e-3
LAMBDA_UP, LAMBDA_DOWN = 10.0, 0.3
LAMBDA_MAX = 1e16


@dataclass(frozen=True)
class BoundedFit:
    x: np.ndarray
    cost: float         # 0.5 ||r(x)||^2
    success: bool
    message: str
    njev: int           # Jacobian evaluations (the start plus one per accepted step)


def bounded_lm(residual_and_jacobian: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
               x0: np.ndarray, lo: np.ndarray, hi: np.ndarray, *, xtol: float = 1e-12,
               ftol: float = 1e-12, gtol: float = 1e-14, max_steps: int = 200) -> BoundedFit:
    """Minimise 0.5 ||r(x)||^2 over the box; ``residual_and_jacobian(x)`` returns r (m,) and J (m, n)."""
    x = np.clip(np.asarray(x0, dtype=float), lo, hi)
    r, J = residual_and_jacobian(x)
    cost = 0.5 * float(r @ r)
    lam = LAMBDA_START
    njev = 1
    for _ in range(max_steps):
        g = J.T @ r
        # Free: strictly inside, or at a bound with the descent direction -g pointing back inside.
        free = ~(((x <= lo) & (g > 0)) | ((x >= hi) & (g < 0)))
        projected_gradient = np.where(free, g, 0.0)
        if float(np.max(np.abs(projected_gradient))) <= gtol * max(1.0, cost):
            return BoundedFit(x, cost, True, "projected gradient below gtol", njev)
        JtJ = J.T @ J
        diag = np.diag(JtJ)
        # Marquardt scaling, floored so a column no residual sees (an unobserved joint) stays invertible.
        scale = np.maximum(diag, 1e-12 * max(float(diag.max()), 1e-300))
        # A fixed variable gets a zero row and column and a unit diagonal, so its step solves to exactly 0.
        A = JtJ * np.outer(free, free)
        rhs = np.where(free, -g, 0.0)
        while True:
            step = np.linalg.solve(A + np.diag(np.where(free, lam * scale, 1.0)), rhs)
            x_new = np.clip(x + step, lo, hi)
            taken = x_new - x
            if float(np.max(np.abs(taken))) <= xtol * (xtol + float(np.max(np.abs(x)))):
                return BoundedFit(x, cost, True, "step below xtol", njev)
            # An unclipped step is the model's minimiser: once its predicted decrease is at round-off,
            # no step can do better. (A clipped one says nothing of the sort; it is tried, or damped.)
            if np.array_equal(taken, step):
                predicted = -float(g @ taken + 0.5 * taken @ JtJ @ taken)
                if predicted <= ftol * cost:
                    return BoundedFit(x, cost, True, "predicted decrease below ftol", njev)
            r_new, J_new = residual_and_jacobian(x_new)
            cost_new = 0.5 * float(r_new @ r_new)
            if cost_new < cost:
                break
            lam *= LAMBDA_UP
            if lam > LAMBDA_MAX:
                return BoundedFit(x, cost, True, "no further decrease at round-off", njev)
        decrease = cost - cost_new
        x, r, J, cost = x_new, r_new, J_new, cost_new
        njev += 1
        lam = max(lam * LAMBDA_DOWN, 1e-12)
        if decrease <= ftol * cost or cost == 0.0:
            return BoundedFit(x, cost, True, "cost decrease below ftol", njev)
    return BoundedFit(x, cost, False, f"no convergence in {max_steps} steps", njev)
