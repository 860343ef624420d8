"""The paper's experiments as ready functions (Experimental Setup and Results sections).

Free motion: from the Flex pose, one tendon pulled 15 mm over a 4 s sigmoid (6 trials).
Surface contact: from Hook or Curl, one flexor (FDP/FDS) pulled 15 mm and one EM tendon
(ED/DI/PI/LUM) 7.5 mm over 4 s, the surface at the angle the paper used for that flexor and pose
(16 trials). Initial state as the paper's Results: joint angles of the pose, input tensions that hold
it, EM tensions balanced at the junctions, velocities zero, the surface at the fingertip with an
initial deflection.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from uartlab.sim.finger import Finger, SimResult
from uartlab.sim.inputs import Sigmoid
from uartlab.sim.names import EM_TENDONS, FLEXORS, JOINTS, TENDONS, pose_name, tendon_index
from uartlab.sim.statics import holding_tensions
from uartlab.sim.surface import PlaneSurface

# Start poses (deg, MCP_AB MCP_FE PIP DIP). est.: read by eye from the paper's Figs. 12-13, which give
# no numbers: Flex mid-range at every joint; Hook with the MCP extended and the IPs flexed; Curl with all
# three flexed.
POSES_DEG: dict[str, tuple[float, float, float, float]] = {
    "Flex": (0.0, 30.0, 45.0, 30.0),
    "Hook": (0.0, 0.0, 70.0, 50.0),
    "Curl": (0.0, 45.0, 70.0, 45.0),
}
FREE_MOTION_AMPLITUDE_M = 0.015   # paper: "pulled 15 mm (at servo output)"
FLEXOR_AMPLITUDE_M = 0.015        # paper, surface contact
EM_AMPLITUDE_M = 0.0075           # paper, surface contact
DURATION_S = 4.0                  # paper: "over a four-second time span"
REPEATS = 5                       # paper: each trial repeated five times
SURFACE_ANGLE_DEG = {("FDP", "Hook"): 45.0, ("FDP", "Curl"): 67.5,   # paper, Surface Contact
                     ("FDS", "Hook"): 22.5, ("FDS", "Curl"): 45.0}
MIN_PRETENSION_N = 0.3            # est.: "initially small tensions in all the input tendons"
INITIAL_DEFLECTION_M = 0.5e-3     # est.: pad pressed 0.5 mm (about 0.08 N with the paper's contact law)


@dataclass(frozen=True)
class Trial:
    """One of the paper's distinct tendon-loading trials."""

    kind: str                      # "free" or "contact"
    pose: str
    pulls: tuple[Sigmoid, ...]
    surface_angle_deg: float | None = None

    @property
    def name(self) -> str:
        tendons = "+".join(p.tendon for p in self.pulls)
        if self.kind == "free":
            return f"free/{tendons}"
        return f"contact/{self.pose}/{tendons}@{self.surface_angle_deg:g}deg"


def free_motion_trial(tendon: str, amplitude_m: float = FREE_MOTION_AMPLITUDE_M,
                      duration_s: float = DURATION_S) -> Trial:
    tendon = _canonical(tendon)
    return Trial("free", "Flex", (Sigmoid(tendon, amplitude_m, duration_s),))


def contact_trial(pose: str, flexor: str, em: str, surface_angle_deg: float | None = None,
                  duration_s: float = DURATION_S) -> Trial:
    pose, flexor, em = pose_name(pose), _canonical(flexor), _canonical(em)
    if flexor not in FLEXORS:
        raise ValueError(f"the flexor must be one of {', '.join(FLEXORS)}, got {flexor}")
    if em not in EM_TENDONS:
        raise ValueError(f"the EM tendon must be one of {', '.join(EM_TENDONS)}, got {em}")
    if pose == "Flex":
        raise ValueError("surface contact starts from Hook or Curl, not Flex")
    angle = SURFACE_ANGLE_DEG[(flexor, pose)] if surface_angle_deg is None else float(surface_angle_deg)
    pulls = (Sigmoid(flexor, FLEXOR_AMPLITUDE_M, duration_s), Sigmoid(em, EM_AMPLITUDE_M, duration_s))
    return Trial("contact", pose, pulls, angle)


def paper_trials() -> list[Trial]:
    """The 22 distinct trials: 6 free motion, then 16 surface contact (Hook then Curl, FDP then FDS)."""
    free = [free_motion_trial(t) for t in ("ED", "FDP", "FDS", "DI", "PI", "LUM")]
    contact = [contact_trial(pose, flexor, em) for pose in ("Hook", "Curl") for flexor in FLEXORS
               for em in EM_TENDONS]
    return free + contact


def start_state(finger: Finger, pose: str, surface_angle_deg: float | None = None,
                deflection_m: float = INITIAL_DEFLECTION_M, pretension_N: float = MIN_PRETENSION_N):
    """Initial state and surface the way the paper initialises its simulations: the pose's joint angles,
    the smallest pretensions that hold it (with the initial contact force, if a surface is given), EM
    balanced, at rest; a surface at ``surface_angle_deg`` pressed in by ``deflection_m``."""
    theta = POSES_DEG[pose]
    surface = None
    external = None
    if surface_angle_deg is not None:
        q = np.radians(theta)
        c = finger.params.contact
        surface = PlaneSurface.touching(finger.interaction_point(q), c.pad_radius_m, surface_angle_deg, deflection_m)
        normal_force = c.a_N * (deflection_m * 1e3) ** c.b
        external = finger.jacobian(q, "interaction")[:3].T @ (normal_force * surface.normal)
    tensions = holding_tensions(finger, theta, pretension_N, external)
    return finger.initial_state(theta, tensions), surface


def deflection_for_force(finger: Finger, normal_force_N: float) -> float:
    """Pad deflection (m) at which the contact law (eq. 19, F = a |dZ_mm|^b) gives ``normal_force_N``;
    0 for no force (the surface just touching)."""
    c = finger.params.contact
    if not np.isfinite(normal_force_N) or normal_force_N <= 0.0:
        return 0.0
    return 1e-3 * (normal_force_N / c.a_N) ** (1.0 / c.b)


def measured_start(finger: Finger, theta_rad, tensions_N, surface_angle_deg: float | None = None,
                   normal_force_N: float = 0.0):
    """Initial state and surface from a measured rig state, the paper's way (Results): the measured joint
    angles, the measured input tendon forces, EM segments balanced at the junctions, velocities zero; for
    contact a surface at ``surface_angle_deg`` touching the pad with the deflection the measured normal
    force implies. Angles are clipped into the ROM and forces to >= 0 (sensor noise at the limits); what was
    clipped is returned as notes so a caller can say so."""
    theta = np.asarray(theta_rad, dtype=float).copy()
    forces = np.asarray(tensions_N, dtype=float).copy()
    if theta.shape != (4,) or forces.shape != (6,):
        raise ValueError(f"a measured start needs 4 joint angles and 6 tendon forces, got shapes {theta.shape}, "
                         f"{forces.shape}")
    if not (np.all(np.isfinite(theta)) and np.all(np.isfinite(forces))):
        raise ValueError("a measured start needs finite joint angles and tendon forces")
    notes = []
    rom = finger.params.rom_rad
    clipped = np.clip(theta, rom[:, 0], rom[:, 1])
    for j in np.flatnonzero(clipped != theta):
        notes.append(f"{JOINTS[j]} {np.degrees(theta[j]):.2f} deg clipped into its ROM")
    if np.any(forces < 0):
        names = ", ".join(TENDONS[i] for i in np.flatnonzero(forces < 0))
        notes.append(f"negative tendon forces clipped to 0 N: {names}")
    x0 = finger.initial_state(np.degrees(clipped), np.maximum(forces, 0.0))
    surface = None
    if surface_angle_deg is not None:
        deflection = deflection_for_force(finger, normal_force_N)
        surface = PlaneSurface.touching(finger.interaction_point(clipped), finger.params.contact.pad_radius_m,
                                        surface_angle_deg, deflection)
    return x0, surface, notes


def trial_start(finger: Finger, trial: Trial, deflection_m: float = INITIAL_DEFLECTION_M):
    """Initial state and surface for one of the paper's trials (see ``start_state``)."""
    angle = trial.surface_angle_deg if trial.kind == "contact" else None
    return start_state(finger, trial.pose, angle, deflection_m)


def run_trial(finger: Finger, trial: Trial, **simulate_kw) -> SimResult:
    x0, surface = trial_start(finger, trial)
    return finger.simulate(x0, trial.pulls, surface, **simulate_kw)


def free_motion(finger: Finger, tendon: str, **simulate_kw) -> SimResult:
    """Paper free-motion trial: from Flex, ``tendon`` pulled 15 mm over a 4 s sigmoid, to steady state."""
    return run_trial(finger, free_motion_trial(tendon), **simulate_kw)


def contact(finger: Finger, pose: str, flexor: str, em: str, **simulate_kw) -> SimResult:
    """Paper surface-contact trial from Hook or Curl at the paper's surface angle."""
    return run_trial(finger, contact_trial(pose, flexor, em), **simulate_kw)


def _canonical(tendon: str) -> str:
    return TENDONS[tendon_index(tendon)]
