"""Joint angles from motion-capture markers with the model's inverse kinematics, and the filtering
that has to come before any derivative.

    estimator = JointAngleEstimator.from_mounting(finger, markers, plant.config.motive_from_world,
                                                  plant.config.motive_origin_m)
    frame = estimator.estimate(sample.markers_m)          # angles (4,) rad, residual per marker (m)
    qd = joint_velocities(Q, fs_hz=100.0)                 # (T, 4) rad/s, 6 Hz zero-lag low-pass first

Why it is built this way (seed paper, /work/shared/papers/004: IK per frame as OpenSim does, then a
6 Hz zero-lag IIR low-pass, OpenSim's default, before differentiating - without it the derived
velocities and accelerations are dominated by marker noise):
- Markers arrive in Motive's frame (Y-up, origin on the floor); the model's world frame is the finger's
  base. ``world_from_motive`` is the inverse of the rig's mounting. For the twin it is known
  (``PlantConfig.motive_from_world``, ``motive_origin_m``); at the rig calibration/mocap.py estimates it.
- Each frame is warm-started from the previous well-posed frame: at 100 Hz consecutive poses are close,
  so the solve converges in a few steps and does not jump between local minima.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike
from uartlab.sim.ik import IKResult, Marker, solve_ik
from uartlab.sim.names import JOINTS

if TYPE_CHECKING:
    from uartlab.sim import Finger

# A Motive -> world transform: 4x4 homogeneous, or (R 3x3, p 3); None is the identity.
Transform = ArrayLike | tuple[ArrayLike, ArrayLike] | None

# OpenSim's default cut-off for filtering coordinates (seed paper, ch. 5: "6 Hz, como hace OpenSim").
CUTOFF_HZ = 6.0
# est.: 4th order Butterworth, run forward and backward (8th order magnitude, zero phase): the usual
# biomechanics choice; the double pass puts the cut-off at -6 dB instead of -3 dB (not corrected here).
ORDER = 4
MIN_MARKERS_PER_BONE = 2   # fewer on a moving bone and its joint angle is not pinned down by that bone alone
MOVING_LINKS = (2, 3, 4)   # proximal, middle, distal phalanx (sim.ik marker links; link 0 is the fixed base)


def as_transform(world_from_motive: Transform) -> np.ndarray:
    """A 4x4 homogeneous transform from a 4x4 array or an (R 3x3, p 3) pair; None -> identity."""
    if world_from_motive is None:
        return np.eye(4)
    if isinstance(world_from_motive, tuple | list) and len(world_from_motive) == 2:
        R, p = (np.asarray(a, dtype=float) for a in world_from_motive)
        if R.shape != (3, 3) or p.shape != (3,):
            raise ValueError(f"world_from_motive (R, p) needs R 3x3 and p (3,), got {R.shape} and {p.shape}")
        T = np.eye(4)
        T[:3, :3], T[:3, 3] = R, p
        return T
    T = np.asarray(world_from_motive, dtype=float)
    if T.shape != (4, 4) or not np.allclose(T[3], (0, 0, 0, 1)):
        raise ValueError(f"world_from_motive must be a 4x4 homogeneous transform or (R, p), got shape {T.shape}")
    return T


def mounting_inverse(motive_from_world: ArrayLike, motive_origin_m: ArrayLike) -> np.ndarray:
    """world_from_motive for a mounting x_motive = M x_world + o (as drivers.twins.plant.Plant.to_motive)."""
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = np.asarray(motive_from_world, dtype=float), np.asarray(motive_origin_m, dtype=float)
    return np.linalg.inv(T)


@dataclass
class JointAngleFrame:
    """One frame's joint angles and how well the markers pinned them down."""

    angles_rad: np.ndarray     # (4,) in JOINTS order
    residuals_m: np.ndarray    # (n,) per marker, NaN where the marker was missing
    rms_m: float
    well_posed: bool           # every moving bone had >= MIN_MARKERS_PER_BONE markers
    ik: IKResult               # the full solve (iterations, run time, message)


class JointAngleEstimator:
    """Per-frame IK from Motive-frame markers to the finger's joint angles (see the module docstring)."""

    def __init__(self, finger: Finger, markers: Sequence[Marker], world_from_motive: Transform = None):
        self.finger, self.markers = finger, tuple(markers)
        self.world_from_motive = as_transform(world_from_motive)
        self._links = np.array([m.link for m in self.markers])
        self._q: np.ndarray | None = None

    @classmethod
    def from_mounting(cls, finger: Finger, markers: Sequence[Marker], motive_from_world: ArrayLike,
                      motive_origin_m: ArrayLike) -> JointAngleEstimator:
        """For a known mounting (the twin's PlantConfig.motive_from_world, motive_origin_m)."""
        return cls(finger, markers, mounting_inverse(motive_from_world, motive_origin_m))

    def reset(self) -> None:
        """Forget the warm start (a new trial, or after a long gap in the stream)."""
        self._q = None

    def to_world(self, markers_motive_m: ArrayLike) -> np.ndarray:
        """(..., 3) Motive-frame positions -> the model's world frame (NaN stays NaN)."""
        X = np.asarray(markers_motive_m, dtype=float)
        T = self.world_from_motive
        return X @ T[:3, :3].T + T[:3, 3]

    def well_posed(self, markers_m: ArrayLike) -> bool:
        """Every moving bone has enough markers for its own angle (NaN rows are missing markers)."""
        present = np.all(np.isfinite(np.asarray(markers_m, dtype=float)), axis=1)
        return all(np.count_nonzero(present & (self._links == link)) >= MIN_MARKERS_PER_BONE
                   for link in MOVING_LINKS)

    def estimate(self, markers_motive_m: ArrayLike) -> JointAngleFrame:
        """Solve one frame (n, 3) in Motive's frame. Raises ValueError when too few markers for any fit."""
        X = self.to_world(markers_motive_m)
        result = solve_ik(self.finger, X, self.markers, q0=self._q)
        ok = self.well_posed(X)
        if ok:  # a poorly observed frame may land far off; do not let it steer the next start
            self._q = result.q
        return JointAngleFrame(result.q, result.residuals_m, result.rms_m, ok, result)

    def estimate_trajectory(self, markers_motive_m: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """(T, n, 3) Motive-frame markers -> angles (T, 4) rad and residuals (T, n) m, warm-started frame to frame."""
        X = np.asarray(markers_motive_m, dtype=float)
        if X.ndim != 3 or X.shape[1:] != (len(self.markers), 3):
            raise ValueError(f"markers must have shape (T, {len(self.markers)}, 3), got {X.shape}")
        Q, E = np.empty((len(X), 4)), np.empty((len(X), len(self.markers)))
        for t, frame in enumerate(X):
            try:
                result = self.estimate(frame)
            except ValueError as e:
                raise ValueError(f"frame {t}: {e}") from e
            Q[t], E[t] = result.angles_rad, result.residuals_m
        return Q, E


def lowpass_zero_lag(x: ArrayLike, fs_hz: float, cutoff_hz: float = CUTOFF_HZ, order: int = ORDER) -> np.ndarray:
    """Butterworth low-pass run forward and backward along axis 0 (zero phase), as OpenSim filters coordinates.

    ``x`` (T,) or (T, k) sampled at ``fs_hz``. Raises ValueError for a cut-off outside (0, fs/2), NaN in
    the signal (fill or cut gaps first: one NaN would spread over the whole record) or a signal too short
    for the edge padding.
    """
    x = np.asarray(x, dtype=float)
    if not (fs_hz > 0 and 0 < cutoff_hz < fs_hz / 2):
        raise ValueError(f"cutoff_hz must be in (0, fs_hz / 2) = (0, {fs_hz / 2:g}), got {cutoff_hz:g} Hz")
    if order < 1:
        raise ValueError(f"filter order must be >= 1, got {order}")
    # filtfilt's default edge padding (3 x the filter's taps) is the least that must fit in the signal.
    min_samples = 3 * (order + 1)
    n = 0 if x.ndim == 0 else x.shape[0]
    if n <= min_samples:
        raise ValueError(f"lowpass_zero_lag needs more than {min_samples} samples for order {order}, "
                         f"got {n} ({n / fs_hz:.3f} s at {fs_hz:g} Hz)")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"lowpass_zero_lag: {np.count_nonzero(~np.isfinite(x))} non-finite samples; "
                         "fill or cut the gaps before filtering")
    from scipy import signal  # here: scipy.signal costs 0.6 s to import, and the rig core never filters

    # Second-order sections: the transfer-function form loses precision at low cut-off / high rate.
    sos = signal.butter(order, cutoff_hz, btype="low", fs=fs_hz, output="sos")
    return signal.sosfiltfilt(sos, x, axis=0, padlen=min(n - 1, _settle_samples(fs_hz, cutoff_hz, order)))


def _settle_samples(fs_hz: float, cutoff_hz: float, order: int) -> int:
    """Edge padding long enough for the start-up transient to decay to 1e-9.

    filtfilt's default (3 x taps = 15 samples here) leaves a ~10 % error in the derivative of a ramp at
    the ends; the odd (point-reflected) extension continues a linear trend exactly, so all error left
    is that transient. Its slowest pole decays at 2 pi fc sin(pi / 2N) per second (Butterworth poles).
    """
    decay_per_s = 2 * np.pi * cutoff_hz * np.sin(np.pi / (2 * order))
    return int(np.ceil(np.log(1e9) / decay_per_s * fs_hz))


def joint_velocities(angles_rad: ArrayLike, fs_hz: float, cutoff_hz: float = CUTOFF_HZ,
                     order: int = ORDER) -> np.ndarray:
    """(T, 4) joint angles -> (T, 4) rad/s: zero-lag low-pass first, then central differences.

    Differentiating raw IK output amplifies marker noise by ~fs; filtering first is the seed's (and
    OpenSim's) order of operations.
    """
    Q = np.asarray(angles_rad, dtype=float)
    if Q.ndim != 2 or Q.shape[1] != len(JOINTS):
        raise ValueError(f"angles_rad must have shape (T, {len(JOINTS)}) ({', '.join(JOINTS)}), got {Q.shape}")
    return np.gradient(lowpass_zero_lag(Q, fs_hz, cutoff_hz, order), 1.0 / fs_hz, axis=0)
