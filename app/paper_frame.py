"""The planes the finger's pose is drawn in, named as the paper names them (Tigue & Mascaro, Fig. 12's
global frame; Fig. 13 draws "the X-Y global plane" and "the Z-Y global plane"). The window's pose view and
the compare report's Fig. 13 both draw these, so an operator sees the same two pictures in both; the report's
Table 6 gives its per-axis force errors along the same axes, as the paper's Table 6 does.

Fig. 13's X-Y plane holds the free-motion poses (flexion), and its Z-Y plane shares the Y axis: the paper's
X is distal, its Y the flexion direction's other axis (dorsal-palmar) and its Z across the finger
(radial-ulnar). uartlab's world frame (X distal, Y radial, Z dorsal; core/schema.py FRAME_WORLD) stays the
frame of every file and every force; only these views (and Table 6's per-axis columns) rename its axes.
The paper's text gives the axes' names, not their signs: the views keep the world's (up is dorsal, + Z is
radial).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PaperAxis:
    name: str           # the paper's name
    world: str          # the uartlab world axis it is
    index: int          # that axis' index in a world-frame vector (x, y, z)
    direction: str      # anatomical direction of + along it

    @property
    def named(self) -> str:
        """The paper's name with its direction and, where it differs, the world axis: "Y dorsal (world Z)"."""
        same = "" if self.world == self.name else f" (world {self.world})"
        return f"{self.name} {self.direction}{same}"

    @property
    def label(self) -> str:
        """The axis label every view shows, e.g. "Y dorsal (world Z) [mm]"."""
        return f"{self.named} [mm]"


X = PaperAxis("X", "X", 0, "distal")
Y = PaperAxis("Y", "Z", 2, "dorsal")
Z = PaperAxis("Z", "Y", 1, "radial")


@dataclass(frozen=True)
class Plane:
    horizontal: PaperAxis
    vertical: PaperAxis
    view: str           # what the plane shows of the finger

    @property
    def title(self) -> str:
        return f"{self.horizontal.name}-{self.vertical.name} plane ({self.view})"


# The paper's X, Y, Z in order: Table 6's per-axis force errors are given along these (app/compare/tables.py).
AXES = (X, Y, Z)


# Fig. 13's two panels, left to right.
PLANES = (Plane(X, Y, "side: flexion"), Plane(Z, Y, "front: abduction"))
