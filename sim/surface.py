"""The contact surface of the paper's surface-contact experiments: a plane at an angle.

Frame: s_x = (cos a, 0, -sin a), s_y = Y, n = (sin a, 0, cos a) in the world frame (X distal, Z dorsal).
At a = 0 the plane is a table under a palm-down finger; as a grows it tilts to face distally (a = 90 deg:
a wall behind the fingertip, facing it), so a tip that a flexor draws back toward the palm presses into
it. The paper's surface angles (22.5, 45, 67.5 deg) are a; its Fig. 12 gives no more than that.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .compiled import surface_array


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
        return cls(angle_deg, tuple(float(v) for v in point))
