"""Mocap: the finger's base frame in Motive's frame, and each marker's offset on its bone.

At the rig (docs/calibration.md): put the finger in the calibration jig (known joint angles, the Flex
pose by default), record a few seconds of labelled markers, then:

1. Base frame: the metacarpal markers sit at known places on the base fixture (their nominal positions
   in the model's world frame, ``sim.ik.default_markers``). The rigid transform that best maps their
   measured Motive positions onto those nominal positions (Kabsch / Umeyama, no scale) is
   ``world_from_motive``, what drivers.joint_angles needs.
2. Marker offsets: with the base frame known and the jig's joint angles, every marker on a moving bone
   is expressed in its bone's D-H frame: local = R_link^T (x_world - o_link). Those are the ``Marker``
   offsets the IK uses; glued-on markers are never where the drawing says, so this removes the bias.

Residuals: per base marker after the fit, and per marker the IK residual at the calibration pose with
the new offsets (near zero by construction; large means a swapped label or a moved jig).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from uartlab.errors import CalibrationError
from uartlab.sim.ik import Marker, marker_positions

MIN_FRAMES = 10
MAX_BASE_RESIDUAL_M = 0.002  # est.: 10x the marker noise; beyond it a base marker is mislabelled or moved
MIN_BASE_SPREAD_M = 0.002    # the base markers must span a triangle, not a line (2nd singular value)


@dataclass
class MocapCalibration:
    world_from_motive: np.ndarray    # (4, 4)
    markers: tuple[Marker, ...]      # with the fitted offsets
    base_residuals_m: np.ndarray     # (n_base,) after the base-frame fit
    pose_rad: np.ndarray             # (4,) the calibration pose used
    n_frames: int

    @property
    def motive_from_world(self) -> tuple[np.ndarray, np.ndarray]:
        """(M, o) of the mounting x_motive = M x_world + o, as PlantConfig gives it."""
        inv = np.linalg.inv(self.world_from_motive)
        return inv[:3, :3], inv[:3, 3]


def kabsch(src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rotation R and translation p minimising sum ||R src_i + p - dst_i||^2 (proper rotation, det +1)."""
    cs, cd = src.mean(axis=0), dst.mean(axis=0)
    H = (src - cs).T @ (dst - cd)
    U, _, Vt = np.linalg.svd(H)
    D = np.diag([1.0, 1.0, np.sign(np.linalg.det(Vt.T @ U.T))])
    R = Vt.T @ D @ U.T
    return R, cd - R @ cs


def fit_mocap(finger, nominal: tuple[Marker, ...], frames_motive_m: np.ndarray, pose_rad) -> MocapCalibration:
    """Base frame and marker offsets from (T, n, 3) Motive-frame frames of the finger held at ``pose_rad``.
    ``nominal`` gives each marker's name, bone and (for the base markers) its fixture position."""
    X = np.asarray(frames_motive_m, float)
    n = len(nominal)
    if X.ndim != 3 or X.shape[1:] != (n, 3):
        raise CalibrationError("mocap", f"frames must have shape (T, {n}, 3) for {n} markers, got {X.shape}")
    if X.shape[0] < MIN_FRAMES:
        raise CalibrationError("mocap", f"too few frames ({X.shape[0]}; need at least {MIN_FRAMES})")
    seen = np.all(np.isfinite(X), axis=2)
    never = [m.name for m, s in zip(nominal, seen.any(axis=0), strict=True) if not s]
    if never:
        raise CalibrationError("mocap", f"marker(s) never seen during the calibration: {', '.join(never)}")
    mean = np.nanmean(X, axis=0)  # the finger is still: average out the camera noise
    q = np.asarray(pose_rad, float)
    base = [k for k, m in enumerate(nominal) if m.link == 0]
    if len(base) < 3:
        raise CalibrationError("mocap", f"the base frame needs 3 markers on the metacarpal, got {len(base)}")
    nominal_world = marker_positions(finger, q, nominal)
    src, dst = mean[base], nominal_world[base]
    if np.linalg.svd(src - src.mean(axis=0), compute_uv=False)[1] < MIN_BASE_SPREAD_M:
        raise CalibrationError("mocap", "the metacarpal markers are (nearly) in a line: the base frame's roll "
                                        "is not defined")
    R, p = kabsch(src, dst)
    res = np.linalg.norm(src @ R.T + p - dst, axis=1)
    worst = int(np.argmax(res))
    if res[worst] > MAX_BASE_RESIDUAL_M:
        raise CalibrationError("mocap", f"base marker {nominal[base[worst]].name} is {res[worst] * 1e3:.1f} mm from "
                                        "where the fixture puts it: mislabelled or moved?", "base frame")
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = R, p
    world = mean @ R.T + p
    Rl, ol = finger.frames(q)
    markers = []
    for m, x in zip(nominal, world, strict=True):
        if m.link == 0:
            markers.append(m)  # the base markers define the frame; their nominal places stand
            continue
        local = Rl[m.link].T @ (x - ol[m.link])
        markers.append(Marker(m.name, m.link, (float(local[0]), float(local[1]), float(local[2])), m.weight))
    return MocapCalibration(T, tuple(markers), res, q, int(X.shape[0]))


def collect_mocap_on_plant(plant, frames: int = 100, dt_s: float = 0.01) -> tuple[np.ndarray, np.ndarray]:
    """(frames, n, 3) Motive-frame markers of the resting twin, and its true pose (the jig's angles)."""
    out = []
    for _ in range(frames):
        plant.advance(dt_s)
        out.append(plant.mocap_markers())
    return np.array(out), plant.state()[8:12].copy()


def record_values(c: MocapCalibration) -> tuple[dict, dict]:
    values = {"world_from_motive": c.world_from_motive, "pose_deg": np.degrees(c.pose_rad),
              "markers": {m.name: {"link": m.link, "local_mm": np.asarray(m.local_m) * 1e3, "weight": m.weight}
                          for m in c.markers}}
    residuals = {"base_residual_mm": {m.name: float(r) * 1e3 for m, r in
                                      zip([m for m in c.markers if m.link == 0], c.base_residuals_m, strict=True)},
                 "n_frames": c.n_frames}
    return values, residuals


def markers_from_values(values: dict) -> tuple[Marker, ...]:
    """The markers back from a stored mocap calibration's values."""
    return tuple(Marker(name, int(v["link"]), _m_from_mm(v["local_mm"]), float(v["weight"]))
                 for name, v in values["markers"].items())


def _m_from_mm(xyz_mm) -> tuple[float, float, float]:
    x, y, z = (float(v) * 1e-3 for v in xyz_mm)
    return x, y, z
