"""FingerParams packed into one flat float64 array for the compiled (numba) kernels.

Why flat: numba touches the reference count of every array in a tuple each time a kernel reads a
field, which cost more than the model's arithmetic. One array with fixed offsets costs nothing.
The offsets below are compile-time constants of the kernels; ``view(P)`` gives named, shaped numpy
views for Python code.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from uartlab.sim.arm_patches import Patches
from uartlab.sim.names import GROUP_JOINTS, JOINTS, MOMENT_ARM_GROUPS, N_SEGMENTS, SEGMENT_MOMENT_ARM_GROUP, SEGMENTS
from uartlab.sim.params import FingerParams

# ---- parameter array P: offsets (and sizes) ------------------------------------------------------
DH = 0                          # (4, 4) per joint: a, d, alpha, theta offset
SIGN = DH + 16                  # (4,) anatomical -> D-H sign
WORLD_FROM_BASE = SIGN + 4      # (3, 3) row-major
GRAVITY = WORLD_FROM_BASE + 9   # (3,) world, m/s^2
LINK_MASS = GRAVITY + 3         # (5,) per D-H frame; frames 0 and 1 are massless
LINK_COM = LINK_MASS + 5        # (5, 3) COM in the link's own (distal-end) frame
LINK_INERTIA = LINK_COM + 15    # (5, 3, 3) about the COM, link frame
ARM_COEFFS = LINK_INERTIA + 45  # (17, 4, 3) moment-arm polynomial per segment and joint
ARM_COS_FE = ARM_COEFFS + N_SEGMENTS * 12  # (17, 4) 1.0: multiply by cos(theta_MCP_FE)
CROSSES = ARM_COS_FE + N_SEGMENTS * 4      # (17, 4) 1.0 where the segment crosses the joint
STIFFNESS = CROSSES + N_SEGMENTS * 4       # (17,) N/m
JOINT_STIFFNESS = STIFFNESS + N_SEGMENTS   # (4,) N·m/rad
JOINT_DAMPING = JOINT_STIFFNESS + 4        # (4,) N·m·s/rad
ROM = JOINT_DAMPING + 4                    # (4, 2) rad
EM_MASS = ROM + 8                          # (6,) kg
INTERACTION_POINT = EM_MASS + 6            # (3,) distal frame, m
MU_C = INTERACTION_POINT + 3               # Coulomb coefficient, m
STICK_TIME = MU_C + 1                      # s
CONTACT_A = STICK_TIME + 1                 # N at 1 mm
CONTACT_B = CONTACT_A + 1
CONTACT_KX = CONTACT_B + 1                 # N/m
CONTACT_KY = CONTACT_KX + 1
CONTACT_MUX = CONTACT_KY + 1
CONTACT_MUY = CONTACT_MUX + 1
PAD_RADIUS = CONTACT_MUY + 1               # m
COS_ALPHA = PAD_RADIUS + 1                 # (4,) cos and sin of the D-H twists, precomputed
SIN_ALPHA = COS_ALPHA + 4
ARM_FORM = SIN_ALPHA + 4                   # (17, 4) where the pair's patches start in P (0.0: the polynomial)

# The (segment, joint) pairs that have a moment arm: 23 of the 17 x 4, so the kernels loop over these.
_PAIRS = [(SEGMENTS.index(seg), JOINTS.index(joint)) for seg in SEGMENTS
          if (group := SEGMENT_MOMENT_ARM_GROUP.get(seg)) for joint in GROUP_JOINTS[group]]
PAIR_SEGMENT = np.array([s for s, _ in _PAIRS], dtype=np.int64)
PAIR_JOINT = np.array([j for _, j in _PAIRS], dtype=np.int64)
N_PAIRS = len(_PAIRS)

# The kernels' plan for the pairs that have a surface or table form: how many, then a row per pair, grid by grid
# and block by block: [cell: where the block whose head finds a new grid's cell starts (0: the cell found last),
# coeffs: where a new block's coefficients start (0: the value made last), nv: the block's cells across its
# v axis (-1: one angle), segment, joint]. Every offset is read straight from its row: decoding the blocks'
# heads pair by pair (a chain of dependent loads) took half the time of evaluating the tables.
ARM_PLAN = ARM_FORM + N_SEGMENTS * 4       # (1 + N_PAIRS * PLAN_ROW,)
PLAN_ROW = 5
P_SIZE = ARM_PLAN + 1 + N_PAIRS * PLAN_ROW  # the patches of surface and table forms follow (moment_arm_forms.py)

# ---- surface array S -----------------------------------------------------------------------------
S_ENABLED = 0    # 1.0 when there is a surface
S_POINT = 1      # (3,) a point on the plane, world
S_FRAME = 4      # (3, 3) row-major; columns s_x, s_y, n (outward normal)
S_SIZE = 13


class ModelView(NamedTuple):
    """Named numpy views into P, for Python code (the kernels index P directly)."""

    dh: np.ndarray
    sign: np.ndarray
    world_from_base: np.ndarray
    gravity: np.ndarray
    link_mass: np.ndarray
    link_com: np.ndarray
    link_inertia: np.ndarray
    arm_coeffs: np.ndarray
    arm_cos_fe: np.ndarray
    crosses: np.ndarray
    stiffness: np.ndarray
    joint_stiffness: np.ndarray
    joint_damping: np.ndarray
    rom: np.ndarray
    em_mass: np.ndarray
    interaction_point: np.ndarray


def view(P: np.ndarray) -> ModelView:
    def at(offset, shape):
        return P[offset:offset + int(np.prod(shape))].reshape(shape)

    return ModelView(
        at(DH, (4, 4)), at(SIGN, (4,)), at(WORLD_FROM_BASE, (3, 3)), at(GRAVITY, (3,)),
        at(LINK_MASS, (5,)), at(LINK_COM, (5, 3)), at(LINK_INERTIA, (5, 3, 3)),
        at(ARM_COEFFS, (N_SEGMENTS, 4, 3)), at(ARM_COS_FE, (N_SEGMENTS, 4)), at(CROSSES, (N_SEGMENTS, 4)),
        at(STIFFNESS, (N_SEGMENTS,)), at(JOINT_STIFFNESS, (4,)), at(JOINT_DAMPING, (4,)), at(ROM, (4, 2)),
        at(EM_MASS, (6,)), at(INTERACTION_POINT, (3,)),
    )


def compile_model(p: FingerParams) -> np.ndarray:
    """The flat parameter array P of a parameter set."""
    P = np.zeros(P_SIZE)
    v = view(P)
    v.dh[:] = np.stack([p.a_m, p.d_m, p.alpha_rad, p.theta_offset_rad], axis=1)
    v.sign[:] = p.dh_sign
    v.world_from_base[:] = p.world_from_base
    v.gravity[:] = p.gravity_m_per_s2
    for bone in range(3):
        frame = bone + 2  # the proximal phalanx is D-H link 2
        v.link_mass[frame] = p.bone_mass_kg[bone]
        # A link's D-H frame sits at its distal joint with x along the bone.
        v.link_com[frame] = p.bone_com_m[bone] - np.array([p.a_m[frame - 1], 0.0, 0.0])
        v.link_inertia[frame] = np.diag(p.bone_inertia_kgm2[bone])
    # A surface or table form's patches follow the fixed part of P, once per group and joint (the four
    # central-slip segments share theirs); a pair's ARM_FORM entry says where its patches start. Forms on the
    # same nodes share a grid number, and the kernels take those pairs grid by grid (ARM_PLAN), so a pose's
    # cell is found once per grid, not once per moment arm.
    patches: list[np.ndarray] = []
    blocks: dict[int, Patches] = {}   # by where each starts in P
    starts: dict[tuple[str, str], int] = {}
    grids: dict[tuple, int] = {}
    grid_of: dict[tuple[str, str], int] = {}
    pair_grid = np.zeros(N_PAIRS)   # 0: the polynomial
    for s, seg in enumerate(SEGMENTS):
        group = SEGMENT_MOMENT_ARM_GROUP.get(seg)
        if group is None:  # eq.-8 segments join two EM masses and cross no joint
            continue
        g = MOMENT_ARM_GROUPS.index(group)
        for joint in GROUP_JOINTS[group]:
            j = JOINTS.index(joint)
            v.arm_coeffs[s, j] = p.moment_arm_coeffs[g, j]
            v.arm_cos_fe[s, j] = float(p.moment_arm_cos_fe[g, j])
            v.crosses[s, j] = 1.0
            form = p.moment_arm_forms.get((group, joint))
            if form is not None:
                if (group, joint) not in starts:   # patches made once: the central slip's four segments share
                    block = form.patches()
                    grid_of[group, joint] = grids.setdefault(block.grid_key(), len(grids) + 1)
                    starts[group, joint] = P_SIZE + sum(b.size for b in patches)
                    blocks[starts[group, joint]] = block
                    patches.append(block.flat(grid_of[group, joint]))
                P[ARM_FORM + 4 * s + j] = starts[group, joint]
                pair_grid[_PAIRS.index((s, j))] = grid_of[group, joint]
    pair_block = P[ARM_FORM + 4 * PAIR_SEGMENT + PAIR_JOINT]
    with_form = [int(n) for n in np.lexsort((pair_block, pair_grid)) if pair_grid[n] > 0]
    P[ARM_PLAN] = len(with_form)
    grid, at = 0.0, 0
    for row, n in enumerate(with_form):
        new_grid, new_block = pair_grid[n] != grid, int(pair_block[n]) != at
        grid, at = pair_grid[n], int(pair_block[n])
        block = blocks[at]
        P[ARM_PLAN + 1 + PLAN_ROW * row:ARM_PLAN + 1 + PLAN_ROW * (row + 1)] = [
            at if new_grid else 0, at + block.coeffs_offset if new_block else 0,
            len(block.v_nodes) - 1 if len(block.axes) > 1 else -1, PAIR_SEGMENT[n], PAIR_JOINT[n]]
    v.stiffness[:] = np.concatenate([p.input_stiffness_N_per_m, p.em_stiffness_N_per_m])
    v.joint_stiffness[:] = p.joint_stiffness_Nm_per_rad
    v.joint_damping[:] = p.joint_damping_Nms_per_rad
    v.rom[:] = p.rom_rad
    v.em_mass[:] = p.em_mass_kg
    v.interaction_point[:] = p.interaction_point_m
    c = p.contact
    P[MU_C] = p.coulomb_coefficient_m
    P[STICK_TIME] = p.stick_time_s
    P[CONTACT_A], P[CONTACT_B] = c.a_N, c.b
    P[CONTACT_KX], P[CONTACT_KY] = c.Kx_N_per_m, c.Ky_N_per_m
    P[CONTACT_MUX], P[CONTACT_MUY] = c.mu_x, c.mu_y
    P[PAD_RADIUS] = c.pad_radius_m
    P[COS_ALPHA:COS_ALPHA + 4] = np.cos(p.alpha_rad)
    P[SIN_ALPHA:SIN_ALPHA + 4] = np.sin(p.alpha_rad)
    return np.concatenate([P, *patches]) if patches else P


def surface_array(point_m, frame: np.ndarray) -> np.ndarray:
    S = np.zeros(S_SIZE)
    S[S_ENABLED] = 1.0
    S[S_POINT:S_POINT + 3] = point_m
    S[S_FRAME:S_FRAME + 9] = np.asarray(frame, dtype=float).ravel()
    return S


def no_surface() -> np.ndarray:
    return np.zeros(S_SIZE)
