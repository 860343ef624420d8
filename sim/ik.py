"""Inverse kinematics from motion-capture markers: a weighted least-squares fit per frame.

As in the seed paper (and OpenSim's IK tool), each frame's joint angles minimise
    sum_i w_i ||x_exp_i - x_i(q)||^2   with q inside the ROM,
where every marker is fixed on one bone. Results carry the per-marker residual
e_i = ||x_exp_i - x_i(q)|| and the solve's run time, the quantities the seed reports.

Each frame is solved by the bounded Levenberg-Marquardt of bounded_lm.py on residuals and Jacobian from
one compiled call (marker_kernel.py), cheap enough for every 100 Hz mocap frame; solve_ik_scipy is the
same fit through scipy's least_squares (TRF), kept as the reference the tests and `uartlab bench sim`
compare against.

Marker frames (checked with Finger.frames at q = 0; world X distal, Y radial, Z dorsal, sim/data/uart.toml):
links 2, 3, 4 (proximal, middle, distal phalanx) have their origin at the bone's distal end, local x
along the bone (so points on a bone have x < 0), local +y dorsal and local +z on the flexion axis,
pointing ulnar. Frame 0 (the base, at the MCP) is pitched 30 deg to the metacarpal, so its local +z
is not dorsal; default_markers therefore places every marker in world coordinates at q = 0 and
converts, which stays right if a parameter set moves the frames.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from uartlab.sim.bounded_lm import bounded_lm
from uartlab.sim.kinematics import N_FRAMES, forward_frames
from uartlab.sim.marker_kernel import marker_residuals_into
from uartlab.sim.names import JOINTS

# Default marker offsets. The UART bones are 1.5x human, so a marker base on the dorsal shell sits
# roughly 8 mm above the bone axis; the third marker of each bone is set off radially so that the triplet
# is not collinear and the bone's full orientation (including rotation about its own axis) is observed.
# The two dorsal markers sit at 15 % and 85 % of the bone: the wider the spread, the better a short bone's
# angle is seen (with 0.5 mm noise the linearised DIP error is ~1.7 deg at 15/85 %, ~2.0 deg at 25/75 %).
DORSAL_M = 0.008
RADIAL_M = 0.006
ALONG = (0.15, 0.85)
METACARPAL_M = (0.015, 0.045)  # distances of the two dorsal base markers proximal to the MCP


@dataclass(frozen=True)
class Marker:
    """A marker rigidly fixed at ``local_m`` in D-H frame ``link`` (0 base/metacarpal, 2-4 phalanges)."""

    name: str
    link: int
    local_m: tuple[float, float, float]
    weight: float = 1.0

    def __post_init__(self) -> None:
        if not 0 <= self.link < N_FRAMES:
            raise ValueError(f"marker {self.name!r}: link must be 0..{N_FRAMES - 1}, got {self.link}")
        local = tuple(float(v) for v in self.local_m)
        if len(local) != 3 or not np.all(np.isfinite(local)):
            raise ValueError(f"marker {self.name!r}: local_m must be 3 finite numbers, got {self.local_m!r}")
        if not (np.isfinite(self.weight) and self.weight >= 0):
            raise ValueError(f"marker {self.name!r}: weight must be finite and >= 0, got {self.weight}")
        object.__setattr__(self, "local_m", local)  # store plain floats whatever was passed in


def default_markers(finger) -> tuple[Marker, ...]:
    """The UART marker set: 3 on the metacarpal base, then 3 per phalanx (dorsal at 15 % and 85 % of the
    bone, and one radial-dorsal at mid-bone)."""
    R, o = finger.frames(np.zeros(4))
    x, y, z = np.eye(3)  # world distal, radial, dorsal

    def fixed(name: str, link: int, world_at_rest: np.ndarray) -> Marker:
        local = R[link].T @ (world_at_rest - o[link])
        return Marker(name, link, (float(local[0]), float(local[1]), float(local[2])))

    near, far = METACARPAL_M
    mcp = o[0]  # the metacarpal runs along world -X from the MCP (the base origin)
    markers = [
        fixed("MC_dist", 0, mcp - near * x + DORSAL_M * z),
        fixed("MC_prox", 0, mcp - far * x + DORSAL_M * z),
        fixed("MC_rad", 0, mcp - 0.5 * (near + far) * x + RADIAL_M * y + DORSAL_M * z),
    ]
    for link, tag in ((2, "PP"), (3, "MP"), (4, "DP")):
        start, end = o[link - 1], o[link]
        length = float(np.linalg.norm(end - start))
        along = (end - start) / length
        dorsal = z - (z @ along) * along  # world up, made perpendicular to the bone
        dorsal /= np.linalg.norm(dorsal)
        radial = np.cross(dorsal, along)
        markers += [
            fixed(f"{tag}_prox", link, start + ALONG[0] * length * along + DORSAL_M * dorsal),
            fixed(f"{tag}_dist", link, start + ALONG[1] * length * along + DORSAL_M * dorsal),
            fixed(f"{tag}_rad", link, start + 0.5 * length * along + RADIAL_M * radial + DORSAL_M * dorsal),
        ]
    return tuple(markers)


def marker_positions(finger, q, markers: Sequence[Marker]) -> np.ndarray:
    """(n, 3) world positions (m) of the markers at joint angles q (rad)."""
    R, o = finger.frames(_pose(q, "q"))
    return np.array([o[m.link] + R[m.link] @ np.asarray(m.local_m) for m in markers]).reshape(-1, 3)


@dataclass
class IKResult:
    """One frame's fit."""

    q: np.ndarray             # (4,) rad, in JOINTS order
    residuals_m: np.ndarray   # (n,) ||x_exp - x(q)|| per marker, NaN where the marker was missing
    rms_m: float              # RMS of the residuals of all measured markers
    success: bool
    message: str
    iterations: int           # Jacobian evaluations (one per accepted trust-region step)
    wall_s: float = 0.0       # run time of the solve, which the seed reports next to the residuals


def solve_ik(finger, measured_m, markers: Sequence[Marker], q0=None, weights=None) -> IKResult:
    """Fit q to measured marker positions (n, 3) world m; NaN rows are occluded markers and are skipped.

    ``weights`` (n,) overrides the markers' own weights; ``q0`` defaults to mid-ROM. Solved with the
    bounded Levenberg-Marquardt of sim/bounded_lm.py (cheap enough to run on every mocap frame).
    """
    start_time = time.perf_counter()
    problem = _IKProblem(finger, measured_m, tuple(markers), q0, weights)
    # Tight tolerances: exact data should come back to round-off, and each frame is only 4 unknowns.
    fit = bounded_lm(problem.residual_and_jacobian, problem.q_start, problem.lo, problem.hi)
    return problem.result(fit.x, fit.success, fit.message, fit.njev, start_time)


def solve_ik_scipy(finger, measured_m, markers: Sequence[Marker], q0=None, weights=None) -> IKResult:
    """The same fit through scipy's least_squares (TRF): the reference solve_ik is checked and benched
    against. Too slow per frame (its overhead is ~100x the kinematics), so not used on the live path."""
    from scipy.optimize import least_squares  # only the reference needs scipy

    start_time = time.perf_counter()
    problem = _IKProblem(finger, measured_m, tuple(markers), q0, weights)
    sol = least_squares(problem.residual, problem.q_start, jac=problem.jacobian, bounds=(problem.lo, problem.hi),
                        method="trf", ftol=1e-12, xtol=1e-12, gtol=1e-12, max_nfev=200)
    return problem.result(sol.x, bool(sol.success), str(sol.message), int(sol.njev or 0), start_time)


class _IKProblem:
    """One frame's weighted marker residuals sqrt(w_i) (x_i(q) - x_exp_i) over the usable markers."""

    def __init__(self, finger, measured_m, markers: tuple[Marker, ...], q0, weights) -> None:
        n = len(markers)
        X = np.asarray(measured_m, dtype=float)
        if X.shape != (n, 3):
            raise ValueError(f"measured_m must have shape ({n}, 3) for {n} markers, got {X.shape}")
        w = _weights(markers, weights)
        present = np.all(np.isfinite(X), axis=1)
        links = np.array([m.link for m in markers], dtype=int)
        # Base markers (link 0) do not depend on q: they add a constant to the cost and nothing to the fit.
        use = np.flatnonzero(present & (w > 0) & (links > 0))
        if use.size < 2:
            raise ValueError(f"IK needs at least 2 usable markers on the moving bones (measured, weight > 0, "
                             f"link > 0), got {use.size}: {[markers[i].name for i in use]}")
        self.finger, self.markers, self.X, self.present = finger, markers, X, present
        self.lo, self.hi = finger.params.rom_rad[:, 0].copy(), finger.params.rom_rad[:, 1].copy()
        self.q_start = 0.5 * (self.lo + self.hi) if q0 is None else np.clip(_pose(q0, "q0"), self.lo, self.hi)
        self.all_links = links
        self.all_local = np.array([m.local_m for m in markers])
        self.use_links = links[use]
        self.local = np.ascontiguousarray(self.all_local[use])
        self.target = np.ascontiguousarray(X[use])
        self.sw = np.sqrt(w[use])  # sqrt so that the squared residual carries w_i
        self._R, self._o = np.empty((N_FRAMES, 3, 3)), np.empty((N_FRAMES, 3))

    def residual(self, q: np.ndarray) -> np.ndarray:
        return self.residual_and_jacobian(q)[0]

    def jacobian(self, q: np.ndarray) -> np.ndarray:
        return self.residual_and_jacobian(q)[1]

    def residual_and_jacobian(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Fresh arrays each call: the solver keeps the last accepted pair while it tries the next."""
        r = np.empty(3 * self.use_links.size)
        J = np.empty((r.size, 4))
        marker_residuals_into(self.finger.P, np.ascontiguousarray(q, dtype=float), self.use_links, self.local,
                              self.target, self.sw, self._R, self._o, r, J)
        return r, J

    def result(self, q: np.ndarray, success: bool, message: str, iterations: int, start_time: float) -> IKResult:
        q = np.clip(q, self.lo, self.hi)
        present = self.present
        residuals = np.full(len(self.markers), np.nan)
        R, o = forward_frames(self.finger.P, q)
        links = self.all_links[present]
        x = o[links] + np.einsum("kij,kj->ki", R[links], self.all_local[present])
        residuals[present] = np.linalg.norm(self.X[present] - x, axis=1)
        rms = float(np.sqrt(np.mean(residuals[present] ** 2)))
        # A joint is only observed by markers distal to it; say so rather than return its start value silently.
        blind = [JOINTS[j] for j in range(4) if not np.any(self.use_links > j)]
        if blind:
            message += f" Not observed by any marker (left at the start value): {', '.join(blind)}."
        return IKResult(q, residuals, rms, success, message, iterations, time.perf_counter() - start_time)


def solve_ik_trajectory(finger, measured_m, markers: Sequence[Marker], q0=None) -> tuple[np.ndarray, np.ndarray]:
    """Solve every frame of (T, n, 3) measurements, each warm-started from the previous frame's solution.

    Returns q (T, 4) rad and the per-marker residuals (T, n) m (NaN where a marker was missing).
    """
    markers = tuple(markers)
    n = len(markers)
    X = np.asarray(measured_m, dtype=float)
    if X.ndim != 3 or X.shape[1:] != (n, 3):
        raise ValueError(f"measured_m must have shape (T, {n}, 3) for {n} markers, got {X.shape}")
    Q = np.empty((X.shape[0], 4))
    E = np.empty((X.shape[0], n))
    q = q0
    for t in range(X.shape[0]):
        try:
            result = solve_ik(finger, X[t], markers, q0=q)
        except ValueError as exc:
            raise ValueError(f"frame {t}: {exc}") from exc
        Q[t], E[t] = result.q, result.residuals_m
        q = result.q  # consecutive frames are close, so the last answer is the best start
    return Q, E


def weighted_error(residuals, weights) -> float:
    """The seed's error: e_i = mean over frames of marker i's residual, error = sum w_i e_i / sum w_i.

    ``residuals`` (T, n) or one frame (n,); NaN entries (missing markers) are ignored, and a marker
    that was never seen drops out of both sums. ``weights`` (n,) or the markers themselves.
    """
    E = np.asarray(residuals, dtype=float)
    E = E[None, :] if E.ndim == 1 else E
    if E.ndim != 2:
        raise ValueError(f"residuals must have shape (T, n) or (n,), got {np.shape(residuals)}")
    w = _weights(tuple(weights), None) if _all_markers(weights) else np.asarray(weights, dtype=float)
    if w.shape != (E.shape[1],):
        raise ValueError(f"weights must have shape ({E.shape[1]},) for {E.shape[1]} markers, got {w.shape}")
    seen = np.isfinite(E)
    count = seen.sum(axis=0)
    e = np.where(seen, E, 0.0).sum(axis=0) / np.maximum(count, 1)
    ok = count > 0
    if not ok.any() or w[ok].sum() <= 0:
        raise ValueError("weighted_error needs at least one measured marker with a positive weight")
    return float(np.sum(w[ok] * e[ok]) / np.sum(w[ok]))


# ---------------------------------------------------------------- helpers
def _pose(q, what: str) -> np.ndarray:
    q = np.asarray(q, dtype=float)
    if q.shape != (4,):
        raise ValueError(f"{what} needs four joint angles ({', '.join(JOINTS)}), got shape {q.shape}")
    return q


def _all_markers(items) -> bool:
    return isinstance(items, Sequence) and len(items) > 0 and all(isinstance(m, Marker) for m in items)


def _weights(markers: tuple[Marker, ...], weights) -> np.ndarray:
    w = np.array([m.weight for m in markers], dtype=float) if weights is None else np.asarray(weights, float)
    if w.shape != (len(markers),):
        raise ValueError(f"weights must have shape ({len(markers)},) for {len(markers)} markers, got {w.shape}")
    if not np.all(np.isfinite(w) & (w >= 0)):
        raise ValueError(f"weights must be finite and >= 0, got {w.tolist()}")
    return w
