"""The paper's names for the finger's joints, input tendons and poses, with their index order.

Declared at the package root because every layer uses them the same way: the model indexes its arrays in
this order (uartlab.sim.names adds the model's own names: extensor-mechanism segments, moment-arm groups),
the MX-64 bus maps servo IDs to tendons, the stream schema sizes its fields, suites name tendons and poses.
"""

from __future__ import annotations

# Joint axes, proximal to distal (the paper's j = 1..4).
JOINTS: tuple[str, ...] = ("MCP_AB", "MCP_FE", "PIP", "DIP")
MCP_AB, MCP_FE, PIP, DIP = range(4)

# Input tendons, in the order of the six SEAs.
TENDONS: tuple[str, ...] = ("FDP", "FDS", "ED", "DI", "PI", "LUM")
FDP, FDS, ED, DI, PI, LUM = range(6)

# Initial poses of the paper's experiments (Fig. 12).
POSES: tuple[str, ...] = ("Flex", "Hook", "Curl")
# A contact surface's tilt (suites, the twin): beyond +-180 deg it is a typo, not an angle.
MAX_SURFACE_ANGLE_DEG = 180.0


def tendon_index(name: str) -> int:
    """Index of an input tendon, accepting any capitalisation; ValueError names the bad tendon."""
    for i, t in enumerate(TENDONS):
        if t.lower() == name.lower():
            return i
    raise ValueError(f"unknown tendon {name!r}; expected one of {', '.join(TENDONS)}")


def pose_name(name: str) -> str:
    """Canonical spelling of a pose name; ValueError names the bad pose."""
    for p in POSES:
        if p.lower() == name.lower():
            return p
    raise ValueError(f"unknown pose {name!r}; expected one of {', '.join(POSES)}")
