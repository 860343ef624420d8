"""The contact surface of the paper's surface-contact experiments: a plane at an angle.

Frame: s_x = (cos a, 0, -sin a), s_y = Y, n = (sin a, 0, cos a) in the world frame (X distal, Z dorsal).
At a = 0 the plane is a table under a palm-down finger; as a grows it tilts to face distally (a = 90 deg:
a wall behind the fingertip, facing it), so a tip that a flexor draws back toward the palm presses into
it. The paper's surface angles (22.5, 45, 67.5 deg) are a; its Fig. 12 gives no more than that.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from uartlab.sim.compiled import surface_array

# The Nano17 sits under the surface with its x, y, z axes along the surface frame (s_x, s_y, n): the columns
# of this rotation. Identity on the paper's rig and the twin; a rig mounted otherwise says so here.
NANO17_IN_SURFACE = np.eye(3)


@dataclass(frozen=True)
class PlaneSurface:
    angle_deg: float
    point_m: tuple[float, float, float]

    @property
    def frame(self) -> np.ndarray:
        """Columns s_x, s_y, n in the world frame."""
        a = np.radians(self.angle_deg)
        return np.array([[np.cos(a), 0.0, np.sin(a)], [0.0, 1.0, 0.0], [-np.sin(a), 0.0, np.cos(a)]])

    @property
    def normal(self) -> np.ndarray:
        return self.frame[:, 2]

    def compiled(self) -> np.ndarray:
        """The flat surface array the kernels take."""
        return surface_array(self.point_m, self.frame)

    @classmethod
    def touching(cls, interaction_point_m: np.ndarray, pad_radius_m: float, angle_deg: float,
                 deflection_m: float) -> PlaneSurface:
        """A plane at ``angle_deg`` placed so the pad around the interaction point is pressed in by
        ``deflection_m`` (the paper: "surface located at the fingertip with initial deflection imposed")."""
        n = cls(angle_deg, (0.0, 0.0, 0.0)).normal
        point = np.asarray(interaction_point_m) - (pad_radius_m - deflection_m) * n
        return cls(angle_deg, (float(point[0]), float(point[1]), float(point[2])))


def fingertip_force_from_sensor(force_on_sensor_N, surface_angle_deg: float | None,
                                mount: np.ndarray = NANO17_IN_SURFACE) -> np.ndarray:
    """The force on the fingertip in the world frame (..., 3) from the force the finger applies to the Nano17,
    in the sensor's axes (..., 3; tared, tool transform applied). The sensor is under the surface at
    ``surface_angle_deg``; in free motion (None) under the table (0 deg). The one conversion from the sensor
    to the world: the live model, compare, the window and the twin all use it (or its inverse below)."""
    R = _sensor_in_world(surface_angle_deg, mount)
    return -(np.asarray(force_on_sensor_N, dtype=float) @ R.T)


def sensor_force_from_fingertip(force_on_fingertip_N, surface_angle_deg: float | None,
                                mount: np.ndarray = NANO17_IN_SURFACE) -> np.ndarray:
    """The inverse of `fingertip_force_from_sensor`: what the Nano17 reads (..., 3) when the surface pushes on
    the fingertip with ``force_on_fingertip_N`` (world frame, ..., 3)."""
    R = _sensor_in_world(surface_angle_deg, mount)
    return -(np.asarray(force_on_fingertip_N, dtype=float) @ R)


def _sensor_in_world(surface_angle_deg: float | None, mount: np.ndarray) -> np.ndarray:
    angle = 0.0 if surface_angle_deg is None else float(surface_angle_deg)
    return PlaneSurface(angle, (0.0, 0.0, 0.0)).frame @ mount
