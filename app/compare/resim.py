"""The paper's re-simulation of a recorded trial (Results, first two paragraphs).

Initial state: "estimated from the average measured initial joint angles, input tendon forces, and contact
forces. The internal EM tendon segment tensions were initialized based on balancing forces at the tendon
junctions [...] All velocities were assumed to be initially zero. For the contact experiments, the position
of the surface was assumed to be located at the fingertip with initial fingertip deflection imposed."
So: joint angles and input tensions as measured (clipped into the ROM and to >= 0 N: noise can put them a hair
outside), EM segments balanced by ``Finger.initial_state``, spring torques and speeds zero; the surface plane
at the measured surface angle touching the pad, pressed in by the deflection that gives the measured normal
force under *this* parameter set's contact law (F_N = a |dZ|^b, dZ in mm): the deflection itself is not
measured, the force is. The shear too starts as measured (the paper's Fig. 16 starts every simulated force
component at the measured one): the pad's stick point is placed so the shear springs (eqs. 20-21) carry the
measured tangential force, within the friction limit mu F_N (beyond it the pad would already be sliding:
capped there, and said).

Inputs: "the displacements of the input tendons" — here the recorded excursions (a table input, linear between
samples, held after the trial's end). "Each simulation was finalized at steady-state [...] when all joint angle
velocities were less than 0.1 deg/s": ``Finger.simulate``'s rule, checked after the inputs stop moving.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from uartlab.app.compare.measured import CompareError
from uartlab.sim import Finger, PlaneSurface, table_inputs
from uartlab.sim.errors import SimulationDiverged

SETTLE_TIMEOUT_S = 20.0   # the suites' settle timeout: a model still moving after this is reported unsettled
RECORD_DT_S = 0.01        # simulated curves sampled every 10 ms (the transient plots and RMS errors)


@dataclass(frozen=True)
class Start:
    """What was measured at rest before actuation: what the simulation starts from."""

    theta_rad: np.ndarray            # (4,) JOINTS order
    tensions_N: np.ndarray           # (6,) TENDONS order
    surface_angle_deg: float | None  # None: free motion
    tip_force_N: np.ndarray | None   # (3,) world frame, force on the fingertip; None: free motion or not measured


@dataclass
class SimCurves:
    """A re-simulated trial: time series and the steady state at the end."""

    t_s: np.ndarray                  # (n,)
    theta_rad: np.ndarray            # (n, 4)
    tensions_N: np.ndarray           # (n, 6)
    tip_force_N: np.ndarray | None   # (n, 3) world frame, None without a surface
    settled: bool
    deflection_m: float | None       # the imposed initial deflection (contact only)
    notes: tuple[str, ...]

    @property
    def steady_theta_rad(self) -> np.ndarray:
        return self.theta_rad[-1]

    @property
    def steady_force_N(self) -> np.ndarray | None:
        return None if self.tip_force_N is None else self.tip_force_N[-1]

    def on_grid(self, grid_s: np.ndarray, values: np.ndarray) -> np.ndarray:
        """A simulated quantity (n, k) on grid_s, held at its steady value after the simulation ended."""
        return np.column_stack([np.interp(grid_s, self.t_s, v) for v in values.T])


def initial_deflection_m(finger: Finger, normal_force_N: float) -> float:
    """The pad deflection that gives ``normal_force_N`` under the finger's contact law (0 for no push)."""
    c = finger.params.contact
    if not normal_force_N > 0.0:
        return 0.0
    return 1e-3 * (normal_force_N / c.a_N) ** (1.0 / c.b)


def stick_point_m(finger: Finger, surface: PlaneSurface, theta_rad: np.ndarray, tip_force_N: np.ndarray,
                  normal_N: float, deflection_m: float) -> tuple[np.ndarray, tuple[str, ...]]:
    """Where the pad must stick (world, m) for the shear springs to push the fingertip with ``tip_force_N``'s
    tangential part (eqs. 20-21: F_x = -K_x dx, within mu_x F_N), and a note if that was beyond friction.
    ``normal_N`` is the normal force the pad's ``deflection_m`` carries."""
    c = finger.params.contact
    frame = surface.frame
    shear = []
    notes = []
    for axis, k_N_per_m, mu in ((0, c.Kx_N_per_m, c.mu_x), (1, c.Ky_N_per_m, c.mu_y)):
        wanted_N = float(tip_force_N @ frame[:, axis])
        limit_N = mu * normal_N
        if abs(wanted_N) > limit_N:
            notes.append(f"initial shear {'xy'[axis]} {wanted_N:.3f} N is beyond the model's friction limit "
                         f"{limit_N:.3f} N: started at the limit")
            wanted_N = float(np.sign(wanted_N)) * limit_N
        shear.append(-wanted_N / k_N_per_m)   # dx, dy (m): the interaction point's offset from the stick point
    ip = finger.interaction_point(theta_rad)
    height_m = c.pad_radius_m - deflection_m
    point = ip - height_m * frame[:, 2] - shear[0] * frame[:, 0] - shear[1] * frame[:, 1]
    return point, tuple(notes)


def initial_state(finger: Finger, start: Start):
    """(FingerState, PlaneSurface | None, deflection m | None, stick point | None, notes) the paper's way
    (module doc)."""
    notes = []
    rom = finger.params.rom_rad
    theta = np.clip(start.theta_rad, rom[:, 0], rom[:, 1])
    if np.any(np.abs(theta - start.theta_rad) > np.radians(0.5)):
        notes.append("initial joint angles clipped into the model's ROM by "
                     f"{np.degrees(np.abs(theta - start.theta_rad)).max():.1f} deg")
    tensions = np.clip(start.tensions_N, 0.0, None)
    x0 = finger.initial_state(np.degrees(theta), tensions)
    if start.surface_angle_deg is None:
        return x0, None, None, None, tuple(notes)
    normal = PlaneSurface(start.surface_angle_deg, (0.0, 0.0, 0.0)).normal
    f_n = float(start.tip_force_N @ normal) if start.tip_force_N is not None else 0.0
    if start.tip_force_N is None:
        notes.append("no initial contact force measured: the surface only touches the pad")
    deflection = initial_deflection_m(finger, f_n)
    surface = PlaneSurface.touching(finger.interaction_point(theta), finger.params.contact.pad_radius_m,
                                    start.surface_angle_deg, deflection)
    stick = None
    if start.tip_force_N is not None and deflection > 0.0:
        stick, shear_notes = stick_point_m(finger, surface, theta, start.tip_force_N, f_n, deflection)
        notes += shear_notes
    return x0, surface, deflection, stick, tuple(notes)


def resimulate(finger: Finger, start: Start, times_s: np.ndarray, excursions_m: np.ndarray,
               settle_timeout_s: float = SETTLE_TIMEOUT_S, what: str = "trial") -> SimCurves:
    """Simulate from the measured start with the recorded excursions to the paper's steady state."""
    x0, surface, deflection, stick, notes = initial_state(finger, start)
    try:
        result = finger.simulate(x0, table_inputs(times_s, excursions_m), surface, method="rk4",
                                 settle_timeout_s=settle_timeout_s, record_dt=RECORD_DT_S, stick_point_m=stick)
    except SimulationDiverged as exc:
        raise CompareError(f"{what}: the model diverged re-simulating it ({exc})") from None
    force = result.fingertip_force_N() if surface is not None else None
    if not result.settled:
        notes = (*notes, f"the model had not reached steady state {settle_timeout_s:g} s after the inputs stopped")
    return SimCurves(result.t, result.x[:, 8:12].copy(), result.x[:, 12:18].copy(), force, result.settled,
                     deflection, notes)
