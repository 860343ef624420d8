"""The bounded Levenberg-Marquardt (sim/bounded_lm.py) on problems with known answers."""

from __future__ import annotations

import numpy as np
from uartlab.sim.bounded_lm import bounded_lm


def test_a_linear_problem_lands_on_the_projection_of_its_free_minimum():
    # min ||x - c||^2 over a box is solved by clip(c): two coordinates end on a bound, one inside.
    c = np.array([2.0, -3.0, 0.25])
    lo, hi = np.array([-1.0, -1.0, -1.0]), np.array([1.0, 1.0, 1.0])
    fit = bounded_lm(lambda x: (x - c, np.eye(3)), np.zeros(3), lo, hi)
    assert fit.success
    np.testing.assert_allclose(fit.x, [1.0, -1.0, 0.25], atol=1e-12)


def test_rosenbrock_converges_inside_and_stops_on_an_active_bound():
    def rosenbrock(x):
        r = np.array([10.0 * (x[1] - x[0] ** 2), 1.0 - x[0]])
        J = np.array([[-20.0 * x[0], 10.0], [-1.0, 0.0]])
        return r, J

    fit = bounded_lm(rosenbrock, np.array([-1.2, 1.0]), np.array([-2.0, -2.0]), np.array([2.0, 2.0]))
    assert fit.success
    np.testing.assert_allclose(fit.x, [1.0, 1.0], atol=1e-9)
    # With x1 <= 0.5 the minimum moves onto that bound: x1 = 0.5, x0 = sqrt(0.5) minimises the rest
    # only approximately, so check the optimality conditions instead of a closed form.
    hi = np.array([2.0, 0.5])
    fit = bounded_lm(rosenbrock, np.array([-1.2, 0.0]), np.array([-2.0, -2.0]), hi)
    assert fit.success and fit.x[1] == 0.5
    r, J = rosenbrock(fit.x)
    g = J.T @ r
    assert abs(g[0]) < 1e-7 and g[1] < 0  # stationary along the free coordinate, pushing out at the bound


def test_every_iterate_is_feasible_and_a_start_outside_is_clipped():
    seen = []

    def f(x):
        seen.append(x.copy())
        return np.array([x[0] - 5.0, x[1] + 5.0]), np.eye(2)

    lo, hi = np.array([0.0, 0.0]), np.array([1.0, 1.0])
    fit = bounded_lm(f, np.array([-3.0, 4.0]), lo, hi)
    np.testing.assert_allclose(fit.x, [1.0, 0.0])
    assert all(np.all(x >= lo) and np.all(x <= hi) for x in seen)
