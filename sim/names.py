"""The model's names, with their index order: the paper's joints, tendons and poses (declared in
uartlab.names, re-exported here) and the model's own tendon segments, junction masses and moment-arm groups.

Every array in sim/ that is indexed by joint or tendon uses the order of these names.
"""

from __future__ import annotations

from uartlab.names import (  # noqa: F401 - re-exported: the model's modules and their users take every name from here
    DI,
    DIP,
    ED,
    FDP,
    FDS,
    JOINTS,
    LUM,
    MCP_AB,
    MCP_FE,
    PI,
    PIP,
    POSES,
    TENDONS,
    pose_name,
    tendon_index,
)

FLEXORS: tuple[str, ...] = ("FDP", "FDS")
EM_TENDONS: tuple[str, ...] = ("ED", "DI", "PI", "LUM")  # tendons that insert into the extensor mechanism

# The 11 extensor-mechanism (Winslow's rhombus) segments, in Table 1 order:
#   eq. 7 (level-1 mass -> across PIP, the central slip): e2 d2 p2 L2
#   eq. 8 (level-1 mass -> level-2 mass):                 ed3 ep3 d3 p3 L3
#   eq. 9 (level-2 mass -> across PIP and DIP, lateral bands into the terminal slip): d4 p4
EM_SEGMENTS: tuple[str, ...] = ("e2", "d2", "p2", "L2", "ed3", "ep3", "d3", "p3", "L3", "d4", "p4")

# All 17 translational springs: six input tendons then the 11 EM segments.
SEGMENTS: tuple[str, ...] = TENDONS + EM_SEGMENTS
N_SEGMENTS = len(SEGMENTS)

# The six EM junction masses: level 1 (one per EM input tendon) and level 2 (radial and ulnar bands).
EM_MASSES: tuple[str, ...] = ("e1", "d1", "p1", "L1", "ed2", "ep2")

# Moment-arm groups of the EM segments: the four eq.-7 segments all converge on the central slip;
# d4 runs in the radial lateral band (ED radial slip + DI + LUM), p4 in the ulnar one (ED ulnar slip + PI).
CENTRAL_SLIP = "central_slip"
RADIAL_BAND = "radial_lateral_band"
ULNAR_BAND = "ulnar_lateral_band"
MOMENT_ARM_GROUPS: tuple[str, ...] = TENDONS + (CENTRAL_SLIP, RADIAL_BAND, ULNAR_BAND)
SEGMENT_MOMENT_ARM_GROUP: dict[str, str] = {
    **{t: t for t in TENDONS},
    "e2": CENTRAL_SLIP, "d2": CENTRAL_SLIP, "p2": CENTRAL_SLIP, "L2": CENTRAL_SLIP,
    "d4": RADIAL_BAND, "p4": ULNAR_BAND,
}
# Which joints each moment-arm group crosses (a group has a moment arm exactly at these joints).
GROUP_JOINTS: dict[str, tuple[str, ...]] = {
    "FDP": ("MCP_AB", "MCP_FE", "PIP", "DIP"),
    "FDS": ("MCP_AB", "MCP_FE", "PIP"),
    "ED": ("MCP_AB", "MCP_FE"),
    "DI": ("MCP_AB", "MCP_FE"),
    "PI": ("MCP_AB", "MCP_FE"),
    "LUM": ("MCP_AB", "MCP_FE"),
    CENTRAL_SLIP: ("PIP",),
    RADIAL_BAND: ("PIP", "DIP"),
    ULNAR_BAND: ("PIP", "DIP"),
}

# The forms a moment-arm calibration writes: the model's polynomial in each joint's angle, or a table
# (sim/moment_arm_forms.py; a parameter file may also give a surface over both MCP angles).
ARM_FORMS: tuple[str, ...] = ("polynomial", "table")

# Bones that carry mass, distal to MCP, PIP and DIP (D-H links 2, 3, 4; link 1 is the massless AB-FE link).
BONES: tuple[str, ...] = ("proximal", "middle", "distal")
