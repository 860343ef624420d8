"""The lateral bands' PIP moment arm from a planar wrap model: each band over the head of the proximal phalanx.

Across the PIP joint the lateral bands of the extensor mechanism - anatomically and on the UART - wrap around
the head of the proximal phalanx. Dorsal of the joint's axis in extension, they slide volarly around the head
as the joint flexes, so their extensor moment arm shrinks and in deep flexion may cross the axis and turn
flexor (the volar translation of the lateral bands that hand anatomy describes). The ACT method does not
capture this arm (the paper, Characterization), which estimates it with "a simple two-dimensional model"
from its Ref. 39; that model's text is not available to us, so this is such a model, built from the
geometry, with every parameter a length a lab can measure on its finger.

Geometry, in the PIP joint's sagittal plane: origin on the PIP axis, x distal along the proximal phalanx,
y dorsal; PIP flexion theta (anatomical, + = flexion) turns the middle phalanx clockwise (+x toward -y).

- The head: a circle of radius R (``head_radius_mm``) about c (``head_centre_mm`` = [x, y]), fixed to the
  proximal phalanx. The band comes from proximal along the phalanx's dorsum and meets it at its top.
- The hold: the point h (``band_hold_mm`` = [x, y] in the middle phalanx, as it lies at theta = 0) where
  the middle phalanx holds the band; at theta it is at P = Rz(-theta) h.
- The band wraps the head clockwise from its top to the tangent point T and runs straight from T to P, along
  the unit vector u = (cos beta, -sin beta): beta is T's angle clockwise from the top, and the free length is
  s = sqrt(|P - c|^2 - R^2).

The band's length over the joint (up to a constant) and, by virtual work, its moment arm (+ flexes: the
kernels' convention, the band lengthens by -r dtheta) are

    L(theta) = R beta + s                  r(theta) = -dL/dtheta = (c x u) - R

(x: the planar cross product) - r is the signed distance of the PIP axis from the free part's line. With the
centre on the axis r = -R at every angle (a tendon held on a pulley at the joint); a centre proximal of the
axis (c_x < 0) makes the extensor arm shrink with flexion, and once the axis lies outside the head the
free part's line can cross it: r changes sign where it does.

The band stays on the head across the joint's range of motion (0 <= beta < 180 deg: the hold point no higher
than the head's top when the joint is straight, and it never inside the head); a parameter set that breaks
this is refused where it is read, naming the angle.

The compiled kernels do not evaluate this closed form: it is sampled every ``STEP_DEG`` over the joint's range
of motion into cubic Hermite patches from its exact value and slope (sim/arm_patches.py, as a table is),
which stay within 1e-11 m of it (tests/sim/test_lateral_band_wrap.py). Outside the range the arm holds its
edge value, as the joint does.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np
from uartlab.sim.arm_patches import Patches, hermite
from uartlab.sim.names import JOINTS, PIP, RADIAL_BAND, ULNAR_BAND

# The arms this form may describe: the lateral bands over the PIP joint.
WRAP_ARMS: frozenset[tuple[str, str]] = frozenset({(RADIAL_BAND, JOINTS[PIP]), (ULNAR_BAND, JOINTS[PIP])})
KEYS = ("head_radius_mm", "head_centre_mm", "band_hold_mm")   # a wrap's keys in a parameter file, in mm
# Sampling step of the patches: at 1 deg the Hermite cubics stay within 1e-11 m of the closed form for
# heads of 2-6 mm (2.4e-12 m measured; the test holds 1e-11); the kernels find a cell by one multiplication,
# so their cost does not depend on the number of cells.
STEP_DEG = 1.0
CHECK_STEP_DEG = 0.25   # how finely the range of motion is searched for a band off or inside its head
ON_TOP_RAD = 1e-9       # a hold point level with the head's top is on it, whatever the rounding says


@dataclass(frozen=True)
class WrapState:
    """The band at PIP angles theta (arrays of theta's shape; lengths in m, angles in rad)."""

    length_m: np.ndarray      # L = R beta + s
    arm_m: np.ndarray         # r = -dL/dtheta
    slope_m: np.ndarray       # dr/dtheta, m/rad
    beta_rad: np.ndarray      # the tangent point's angle clockwise from the head's top
    gap_m: np.ndarray         # |P - c| - R: the hold point's distance outside the head


@dataclass(frozen=True, eq=False)
class ArmWrap:
    """A lateral band's PIP arm from the planar wrap model (lengths in m, in the PIP joint's sagittal plane)."""

    head_radius_m: float
    head_centre_m: tuple[float, float]    # [distal, dorsal] from the PIP axis, in the proximal phalanx
    band_hold_m: tuple[float, float]      # [distal, dorsal] from the PIP axis, in the middle phalanx at PIP 0
    range_rad: tuple[float, float]        # the PIP angles it is sampled over: the joint's range of motion

    def scaled(self, factor: float) -> ArmWrap:
        """Every length times ``factor``: a similar finger, whose arm is this one's times ``factor``."""
        return replace(self, head_radius_m=self.head_radius_m * factor,
                       head_centre_m=tuple(factor * np.asarray(self.head_centre_m)),
                       band_hold_m=tuple(factor * np.asarray(self.band_hold_m)))

    def state(self, pip_rad) -> WrapState:
        """The closed-form band at PIP angles ``pip_rad`` (scalar or array)."""
        th = np.asarray(pip_rad, dtype=float)
        R = self.head_radius_m
        (cx, cy), (hx, hy) = self.head_centre_m, self.band_hold_m
        cos, sin = np.cos(th), np.sin(th)
        px, py = hx * cos + hy * sin, -hx * sin + hy * cos      # P = Rz(-theta) h
        dpx, dpy = py, -px                                      # dP/dtheta
        dx, dy = px - cx, py - cy
        d2 = dx * dx + dy * dy
        dist = np.sqrt(d2)
        s = np.sqrt(np.maximum(d2 - R * R, 0.0))
        # u is the direction of P - c turned back by alpha, sin(alpha) = R / |P - c|: the tangent's side
        # that keeps the head on the band's right as it runs distally over the top.
        psi = np.arctan2(dy, dx) - np.arcsin(np.minimum(R / dist, 1.0))
        ux, uy = np.cos(psi), np.sin(psi)
        dd2 = 2.0 * (dx * dpx + dy * dpy)
        with np.errstate(divide="ignore", invalid="ignore"):
            dpsi = (dx * dpy - dy * dpx) / d2 + R * dd2 / (2.0 * d2 * s)
        beta = -psi
        return WrapState(length_m=R * beta + s, arm_m=cx * uy - cy * ux - R,
                         slope_m=(cx * ux + cy * uy) * dpsi, beta_rad=beta, gap_m=dist - R)

    def problem(self) -> str | None:
        """Why the band cannot wrap its head across the range of motion (first angle where it fails), or None."""
        lo, hi = self.range_rad
        theta = np.linspace(lo, hi, max(2, int(np.ceil(np.degrees(hi - lo) / CHECK_STEP_DEG)) + 1))
        st = self.state(theta)
        inside = np.flatnonzero(st.gap_m <= 0.0)
        if inside.size:
            return (f"the band's hold point comes inside the head at PIP {np.degrees(theta[inside[0]]):.4g} deg "
                    f"({1e3 * (st.gap_m[inside[0]] + self.head_radius_m):.4g} mm from its centre, radius "
                    f"{1e3 * self.head_radius_m:.4g} mm): move band_hold_mm out or shrink the head")
        off = np.flatnonzero(st.beta_rad < -ON_TOP_RAD)
        if off.size:
            return (f"the band leaves the head at PIP {np.degrees(theta[off[0]]):.4g} deg (its hold point lies dorsal "
                    f"of the head's tangent, {np.degrees(-st.beta_rad[off[0]]):.3g} deg short of the top): a band "
                    f"that wraps the head needs band_hold_mm no higher than the head's top at PIP "
                    f"{np.degrees(lo):.4g} deg")
        return None

    def patches(self) -> Patches:
        return self._patches

    @cached_property
    def _patches(self) -> Patches:
        lo, hi = self.range_rad
        nodes = np.linspace(lo, hi, max(2, int(np.ceil(np.degrees(hi - lo) / STEP_DEG)) + 1))
        st = self.state(nodes)
        coeffs = np.zeros((len(nodes) - 1, 1, 4, 4))
        for i in range(len(nodes) - 1):   # each cell's cubic from its ends' exact values and slopes
            ends = np.array([st.arm_m[i], st.arm_m[i + 1], st.slope_m[i], st.slope_m[i + 1]])
            coeffs[i, 0, :, 0] = hermite(nodes[i + 1] - nodes[i]) @ ends
        return Patches((PIP,), nodes, np.array([0.0, 1.0]), coeffs, clamp=True)
