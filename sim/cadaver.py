"""The model against cadaver fingers: single-tendon free motion (Nimbarte et al. 2008) and where the pad
meets a surface.

Free motion runs the app's own trials (scenarios.free_motion_trial: from Flex, one tendon pulled 15 mm over
4 s, the others held); the cadaver data are each tendon loaded to 10 % of its force potential, mean motion.
"""

from __future__ import annotations

import numpy as np
from uartlab.sim.finger import FINGERTIP_LINK, Finger, SimResult
from uartlab.sim.names import JOINTS
from uartlab.sim.scenarios import free_motion_trial, run_trial

# Nimbarte et al. 2008 (shared/model-defaults.md 5): mean motion MCP_FE, PIP, DIP in deg, + = flexion.
CADAVER_FREE_MOTION_DEG: dict[str, tuple[float, float, float]] = {
    "FDP": (19.7, 41.8, 29.4),
    "FDS": (24.8, 47.9, 0.0),
    "ED": (-18.3, -15.2, -4.0),
}
# The intrinsics flex the MCP and extend both IP joints; the MCP_AB sign (+ = radial abduction) per tendon:
# the dorsal interosseous and the lumbrical pass radial to the MCP, the palmar interosseous ulnar.
INTRINSIC_ABDUCTION_SIGN: dict[str, int] = {"DI": 1, "PI": -1, "LUM": 1}
FREE_MOTION_TENDONS: tuple[str, ...] = ("FDP", "FDS", "ED", "DI", "PI", "LUM")

# The distal D-H frame: x along the bone, z the flexion axis, +y dorsal (the nail side); volar is -y.
VOLAR_IN_DISTAL_FRAME = np.array([0.0, -1.0, 0.0])


def free_motion_deg(finger: Finger, tendon: str) -> np.ndarray:
    """(4,) joint motion in deg (end minus start, JOINTS order) of the app's free-motion trial of ``tendon``."""
    result = run_trial(finger, free_motion_trial(tendon))
    return result.theta_deg[-1] - result.theta_deg[0]


def free_motion_table(finger: Finger) -> dict[str, np.ndarray]:
    """Every single-tendon free-motion trial's joint motion (deg), by tendon."""
    return {t: free_motion_deg(finger, t) for t in FREE_MOTION_TENDONS}


def contact_points_distal_m(result: SimResult) -> np.ndarray:
    """(n, 3) the contact (stick) point in the distal D-H frame at every sample in contact (m)."""
    finger = result.finger
    out = []
    for x, aux in zip(result.x, result.aux, strict=True):
        if aux[0] > 0.0:
            R, o = finger.frames(x[8:12])
            out.append(R[FINGERTIP_LINK].T @ (aux[1:] - o[FINGERTIP_LINK]))
    return np.array(out).reshape(-1, 3)


def angle_from_volar_deg(points_distal_m: np.ndarray) -> np.ndarray:
    """Angle (deg) around the bone axis between each point's direction from the axis and the volar direction:
    0 on the pulp's midline, 90 at the side, 180 on the nail."""
    yz = np.asarray(points_distal_m, dtype=float)[:, 1:]
    cos = (yz @ VOLAR_IN_DISTAL_FRAME[1:]) / np.linalg.norm(yz, axis=1)
    return np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))


def markdown_table(columns: dict[str, dict[str, np.ndarray]]) -> str:
    """The cadaver data beside each named set of model runs (free_motion_table), as a Markdown table:
    MCP_FE/PIP/DIP per tendon, and MCP_AB for the model."""
    names = list(columns)
    head = "| Tendon | Nimbarte 2008 MCP/PIP/DIP | " + " | ".join(f"{n} MCP/PIP/DIP (MCP_AB)" for n in names) + " |"
    rows = [head, "|" + "---|" * (2 + len(names))]
    for t in FREE_MOTION_TENDONS:
        cad = CADAVER_FREE_MOTION_DEG.get(t)
        cad_text = "/".join(f"{v:+.1f}" for v in cad) if cad else "flex/ext/ext"
        cells = [_cell(columns[n][t]) for n in names]
        rows.append(f"| {t} | {cad_text} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def _cell(motion_deg: np.ndarray) -> str:
    by = dict(zip(JOINTS, motion_deg, strict=True))
    return f"{by['MCP_FE']:+.1f}/{by['PIP']:+.1f}/{by['DIP']:+.1f} ({by['MCP_AB']:+.1f})"
