"""The right-hand side of the bond-graph finger model: paper eqs. 1-11 and 13-24, compiled.

Topology (Fig. 7 and Table 1). Every translational spring s carries force F_s and is stretched at
  dF_s/dt = k_s (v_from - v_to - sum_j r_sj(theta) theta_dot_j)                        (eqs. 4-9)
where v_from is the commanded excursion velocity (input tendons, flow sources) or an EM junction
mass velocity, v_to the velocity of the EM mass it pulls (or nothing), and r_sj the moment arm of
the segment at each joint it crosses. The joints follow eqs. 1, 3 and 16 with Coulomb friction 15-18,
the masses eqs. 10-11, tendon slack eq. 13 and ROM eq. 14.

Numerical choices the paper leaves open, each documented where it is made:
- eq. 17 holds a joint "when theta_dot = 0". We apply the friction torque that would stop the joint
  within ``stick_time_s``, capped at the Coulomb threshold: a stuck joint's speed decays to zero
  instead of chattering about it, and a sliding joint sees exactly -tau_c sign(theta_dot).
- eq. 14 stops a joint at its ROM: there its angle rate into the limit is zero, the torque into the
  limit is ignored, and a speed into the limit decays within ``stick_time_s``. The integrators also
  project onto the ROM after each step, so no angle is ever reported past a limit.
- The contact stick point (eqs. 20-21) is state outside the ODE: it is placed where the pad first
  touches and dragged along when the shear force reaches its slip limit, after each step.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from uartlab.sim.arm_patches import EQUAL_CELLS, UNBOUNDED
from uartlab.sim.compiled import (
    ARM_COEFFS,
    ARM_COS_FE,
    ARM_FORM,
    ARM_PLAN,
    CONTACT_A,
    CONTACT_B,
    CONTACT_KX,
    CONTACT_KY,
    CONTACT_MUX,
    CONTACT_MUY,
    EM_MASS,
    GRAVITY,
    INTERACTION_POINT,
    JOINT_DAMPING,
    JOINT_STIFFNESS,
    LINK_MASS,
    MU_C,
    N_PAIRS,
    PAD_RADIUS,
    PAIR_JOINT,
    PAIR_SEGMENT,
    PLAN_ROW,
    ROM,
    S_ENABLED,
    S_FRAME,
    S_POINT,
    SIGN,
    STICK_TIME,
    STIFFNESS,
)
from uartlab.sim.dynamics import gravity_torques_into
from uartlab.sim.jit import inline_kernel, kernel
from uartlab.sim.kinematics import N_FRAMES, frames_into, point_in_frame
from uartlab.sim.names import N_SEGMENTS
from uartlab.sim.state import I_F, I_TAU_K, I_THETA, I_THETA_DOT, I_V, N_STATES

# Spring topology, segment order of names.SEGMENTS:
#                          FDP FDS  ED  DI  PI LUM  e2  d2  p2  L2 ed3 ep3  d3  p3  L3  d4  p4
SEG_FROM_INPUT = np.array([0, 1, 2, 3, 4, 5, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1])
SEG_FROM_MASS = np.array([-1, -1, -1, -1, -1, -1, 0, 1, 2, 3, 0, 0, 1, 2, 3, 4, 5])
SEG_TO_MASS = np.array([-1, -1, 0, 1, 2, 3, -1, -1, -1, -1, 4, 5, 4, 5, 4, -1, -1])
# Masses: e1 d1 p1 L1 (level 1), ed2 ep2 (level 2).

# Offsets in the scratch vector of Work.
W_TAU_G, W_IP, W_FORCE, W_CP, W_QD_EFF, W_RATE, W_TAU_T, W_TENSION = 0, 4, 7, 10, 13, 17, 34, 38
W_SIZE = 42


class Work(NamedTuple):
    """Scratch arrays for the kernels, allocated once per simulation."""

    R: np.ndarray        # (5, 3, 3) frame rotations
    o: np.ndarray        # (5, 3) frame origins
    arms: np.ndarray     # (17, 4) moment arms at the current pose
    scratch: np.ndarray  # (42,) see the W_ offsets: gravity torques, contact, ROM rates, spring rates ...


@inline_kernel
def work_arrays():
    """Fresh (R, o, arms, scratch) for the kernels."""
    return np.zeros((N_FRAMES, 3, 3)), np.zeros((N_FRAMES, 3)), np.zeros((N_SEGMENTS, 4)), np.zeros(W_SIZE)


def make_work() -> Work:
    return Work(*work_arrays())


@inline_kernel
def _cell(P: np.ndarray, nodes: int, n: int, x: float, lookup: float) -> tuple[int, float]:
    """The cell of x among n + 1 ascending nodes at P[nodes:], and x local to it (held to the nodes' range).
    ``lookup`` (arm_patches.Patches.flat): one patch for all x, equal cells, or a search."""
    if lookup == UNBOUNDED:
        return 0, x - P[nodes]
    x = min(max(x, P[nodes]), P[nodes + n])
    if lookup == EQUAL_CELLS:   # the cells per radian is stored before the nodes
        i = min(int((x - P[nodes]) * P[nodes - 1]), n - 1)
        return i, x - P[nodes + i]
    lo, hi = 0, n - 1
    while lo < hi:   # the last cell whose low node is <= x
        mid = (lo + hi + 1) // 2
        if P[nodes + mid] <= x:
            lo = mid
        else:
            hi = mid - 1
    return lo, x - P[nodes + lo]


@inline_kernel
def patch_cell(P: np.ndarray, at: int, q: np.ndarray) -> tuple[int, float, int, float]:
    """Pose q's cell on the grid of the block at P[at:] (arm_patches.Patches.flat), and q local to it:
    (u cell, u, v cell, v); v is 0 on a grid over one angle."""
    nu, nv, lookup = int(P[at + 2]), int(P[at + 3]), P[at + 4]
    u_nodes = at + 7
    iu, du = _cell(P, u_nodes, nu, q[int(P[at])], lookup)
    if P[at + 1] < 0.0:
        return iu, du, 0, 0.0
    iv, dv = _cell(P, u_nodes + nu + 2, nv, q[int(P[at + 1])], lookup)
    return iu, du, iv, dv


@inline_kernel
def patch_value(P: np.ndarray, coeffs: int, nv: int, iu: int, du: float, iv: int, dv: float) -> float:
    """A surface or table form's moment arm in the cell ``patch_cell`` found: its block's coefficients start at
    P[coeffs:], in ``nv`` cells across its v axis (-1: over one angle)."""
    if nv < 0:   # one angle: the cell's cubic in u (its coefficients c[k, 0], every 4th)
        c = coeffs + 16 * iu
        return ((P[c + 12] * du + P[c + 8]) * du + P[c + 4]) * du + P[c]
    c = coeffs + 16 * (iu * nv + iv)
    r = 0.0
    for k in range(3, -1, -1):   # Horner in u over Horner in v
        row = c + 4 * k
        r = r * du + (((P[row + 3] * dv + P[row + 2]) * dv + P[row + 1]) * dv + P[row])
    return r


@inline_kernel
def moment_arms_into(P: np.ndarray, q: np.ndarray, arms: np.ndarray) -> None:
    """Moment arms at pose q into arms (17, 4); entries of segments that cross no joint stay untouched."""
    cos_fe = np.cos(q[1])
    for p in range(N_PAIRS):   # the polynomials
        s, j = PAIR_SEGMENT[p], PAIR_JOINT[p]
        if P[ARM_FORM + 4 * s + j] != 0.0:
            continue
        k = ARM_COEFFS + 12 * s + 3 * j
        r = P[k] + q[j] * (P[k + 1] + q[j] * P[k + 2])
        if P[ARM_COS_FE + 4 * s + j] != 0.0:
            r *= cos_fe
        arms[s, j] = r
    # The surfaces and tables by their plan (compiled.ARM_PLAN): each grid's cell found once, each block's
    # value made once (the central slip's four segments share theirs).
    r, iu, du, iv, dv = 0.0, 0, 0.0, 0, 0.0
    for n in range(int(P[ARM_PLAN])):
        row = ARM_PLAN + 1 + PLAN_ROW * n
        if P[row] != 0.0:
            iu, du, iv, dv = patch_cell(P, int(P[row]), q)
        if P[row + 1] != 0.0:
            r = patch_value(P, int(P[row + 1]), int(P[row + 2]), iu, du, iv, dv)
        arms[int(P[row + 3]), int(P[row + 4])] = r


@inline_kernel
def contact_into(P: np.ndarray, S: np.ndarray, aux: np.ndarray, R: np.ndarray, o: np.ndarray,
                 sc: np.ndarray) -> None:
    """Fingertip contact force (eqs. 19-23) into sc[W_FORCE] and its point of action into sc[W_CP].

    Needs R/o current; computes the interaction point sc[W_IP]. Zero force off the surface.
    """
    point_in_frame(R, o, 4, P[INTERACTION_POINT], P[INTERACTION_POINT + 1], P[INTERACTION_POINT + 2],
                   sc[W_IP:W_IP + 3])
    sc[W_FORCE] = 0.0
    sc[W_FORCE + 1] = 0.0
    sc[W_FORCE + 2] = 0.0
    if S[S_ENABLED] == 0.0:
        return
    nx, ny, nz = S[S_FRAME + 2], S[S_FRAME + 5], S[S_FRAME + 8]
    ipx, ipy, ipz = sc[W_IP], sc[W_IP + 1], sc[W_IP + 2]
    height = nx * (ipx - S[S_POINT]) + ny * (ipy - S[S_POINT + 1]) + nz * (ipz - S[S_POINT + 2])
    dz = height - P[PAD_RADIUS]  # eq. 19's dZ: < 0 when the pad is pressed in
    if dz >= 0.0:
        return
    if aux[0] > 0.0:
        cpx, cpy, cpz = aux[1], aux[2], aux[3]
    else:  # first touch: the stick point is right under the interaction point
        cpx, cpy, cpz = ipx - height * nx, ipy - height * ny, ipz - height * nz
    sc[W_CP], sc[W_CP + 1], sc[W_CP + 2] = cpx, cpy, cpz
    ex, ey, ez = ipx - cpx, ipy - cpy, ipz - cpz
    dx_mm = 1e3 * (S[S_FRAME] * ex + S[S_FRAME + 3] * ey + S[S_FRAME + 6] * ez)
    dy_mm = 1e3 * (S[S_FRAME + 1] * ex + S[S_FRAME + 4] * ey + S[S_FRAME + 7] * ez)
    fn = P[CONTACT_A] * (-1e3 * dz) ** P[CONTACT_B]
    kx_mm = P[CONTACT_KX] * 1e-3  # N/mm
    ky_mm = P[CONTACT_KY] * 1e-3
    fx = -np.sign(dx_mm) * min(kx_mm * abs(dx_mm), P[CONTACT_MUX] * fn)  # eqs. 20, 22
    fy = -np.sign(dy_mm) * min(ky_mm * abs(dy_mm), P[CONTACT_MUY] * fn)  # eqs. 21, 23
    for r in range(3):
        sc[W_FORCE + r] = fx * S[S_FRAME + 3 * r] + fy * S[S_FRAME + 3 * r + 1] + fn * S[S_FRAME + 3 * r + 2]


@inline_kernel
def rhs_into(P: np.ndarray, S: np.ndarray, inertia: np.ndarray, x: np.ndarray, aux: np.ndarray,
             u: np.ndarray, dx: np.ndarray, R: np.ndarray, o: np.ndarray, arms: np.ndarray,
             sc: np.ndarray) -> None:
    """dx/dt of the 35 states for input excursion velocities u (6,) m/s."""
    q = x[I_THETA:I_THETA + 4]
    stick_time = P[STICK_TIME]
    frames_into(P, q, R, o)
    moment_arms_into(P, q, arms)

    # eq. 14: no angle rate into a ROM limit. The same rate drives the tendons and the joint spring.
    for j in range(4):
        qdj = x[I_THETA_DOT + j]
        if (q[j] <= P[ROM + 2 * j] and qdj < 0.0) or (q[j] >= P[ROM + 2 * j + 1] and qdj > 0.0):
            qdj = 0.0
        sc[W_QD_EFF + j] = qdj

    # eqs. 4-9 with the slack rule of eq. 13.
    for s in range(N_SEGMENTS):
        rate = 0.0
        if SEG_FROM_INPUT[s] >= 0:
            rate += u[SEG_FROM_INPUT[s]]
        if SEG_FROM_MASS[s] >= 0:
            rate += x[I_V + SEG_FROM_MASS[s]]
        if SEG_TO_MASS[s] >= 0:
            rate -= x[I_V + SEG_TO_MASS[s]]
        sc[W_RATE + s] = rate
    for j in range(4):
        sc[W_TAU_T + j] = 0.0
        sc[W_TENSION + j] = 0.0
    for p in range(N_PAIRS):
        s, j = PAIR_SEGMENT[p], PAIR_JOINT[p]
        sc[W_RATE + s] -= arms[s, j] * sc[W_QD_EFF + j]
        sc[W_TAU_T + j] += arms[s, j] * x[I_F + s]
        sc[W_TENSION + j] += x[I_F + s]
    for s in range(N_SEGMENTS):
        dF = P[STIFFNESS + s] * sc[W_RATE + s]
        if x[I_F + s] <= 0.0 and dF < 0.0:
            dF = 0.0
        dx[I_F + s] = dF

    # eqs. 10-11: junction masses.
    for k in range(6):
        dx[I_V + k] = 0.0
    for s in range(N_SEGMENTS):
        if SEG_TO_MASS[s] >= 0:
            dx[I_V + SEG_TO_MASS[s]] += x[I_F + s]
        if SEG_FROM_MASS[s] >= 0:
            dx[I_V + SEG_FROM_MASS[s]] -= x[I_F + s]
    for k in range(6):
        dx[I_V + k] /= P[EM_MASS + k]

    # External torques (eq. 12 and gravity): tau_EXT = J^T W_FT + tau_G.
    gravity_torques_into(P, R, o, sc[W_TAU_G:W_TAU_G + 4])
    contact_into(P, S, aux, R, o, sc)
    fx, fy, fz = sc[W_FORCE], sc[W_FORCE + 1], sc[W_FORCE + 2]
    contact_on = fx != 0.0 or fy != 0.0 or fz != 0.0

    mu_c = P[MU_C]
    for j in range(4):
        qd = x[I_THETA_DOT + j]
        tau_tendon = sc[W_TAU_T + j]
        tension = sc[W_TENSION + j]
        tau_ext = sc[W_TAU_G + j]
        if contact_on:
            zx, zy, zz = R[j, 0, 2], R[j, 1, 2], R[j, 2, 2]
            ax, ay, az = sc[W_CP] - o[j, 0], sc[W_CP + 1] - o[j, 1], sc[W_CP + 2] - o[j, 2]
            tau_ext += P[SIGN + j] * (zx * (ay * fz - az * fy) + zy * (az * fx - ax * fz)
                                      + zz * (ax * fy - ay * fx))
        tau_net = tau_tendon - x[I_TAU_K + j] + tau_ext  # eq. 18

        # eq. 15: threshold from the resultant compressive load on the joint: tendons pull the distal
        # bone proximally along its axis; gravity of the distal bones; the fingertip force.
        tau_c = 0.0
        if mu_c > 0.0:
            link = max(j + 1, 2)
            mass_distal = 0.0
            for i in range(j + 1, N_FRAMES):
                mass_distal += P[LINK_MASS + i]
            cx = -tension * R[link, 0, 0] + mass_distal * P[GRAVITY] + fx
            cy = -tension * R[link, 1, 0] + mass_distal * P[GRAVITY + 1] + fy
            cz = -tension * R[link, 2, 0] + mass_distal * P[GRAVITY + 2] + fz
            tau_c = mu_c * np.sqrt(cx * cx + cy * cy + cz * cz)

        # eq. 17: the friction that would stop the joint within stick_time, capped at tau_c.
        damping = P[JOINT_DAMPING + j] * qd
        needed = -tau_net + damping - inertia[j] * qd / stick_time
        tau_f = min(max(needed, -tau_c), tau_c)
        acc = (tau_net - damping + tau_f) / inertia[j]  # eq. 16

        if q[j] <= P[ROM + 2 * j]:  # eq. 14 at the lower stop
            acc = max(acc, 0.0) - min(qd, 0.0) / stick_time
        elif q[j] >= P[ROM + 2 * j + 1]:
            acc = min(acc, 0.0) - max(qd, 0.0) / stick_time
        dx[I_THETA_DOT + j] = acc
        dx[I_THETA + j] = sc[W_QD_EFF + j]  # eq. 3
        dx[I_TAU_K + j] = P[JOINT_STIFFNESS + j] * sc[W_QD_EFF + j]  # eq. 1


@inline_kernel
def project_into(P: np.ndarray, S: np.ndarray, x: np.ndarray, aux: np.ndarray, R: np.ndarray,
                 o: np.ndarray, sc: np.ndarray) -> None:
    """After a step: hold angles inside the ROM, forces non-negative, and move the contact stick point."""
    for j in range(4):
        qi = I_THETA + j
        vi = I_THETA_DOT + j
        if x[qi] < P[ROM + 2 * j]:
            x[qi] = P[ROM + 2 * j]
            if x[vi] < 0.0:
                x[vi] = 0.0
        elif x[qi] > P[ROM + 2 * j + 1]:
            x[qi] = P[ROM + 2 * j + 1]
            if x[vi] > 0.0:
                x[vi] = 0.0
    for s in range(N_SEGMENTS):
        if x[I_F + s] < 0.0:
            x[I_F + s] = 0.0
    if S[S_ENABLED] == 0.0:
        aux[0] = 0.0
        return
    frames_into(P, x[I_THETA:I_THETA + 4], R, o)
    ip = sc[W_IP:W_IP + 3]
    point_in_frame(R, o, 4, P[INTERACTION_POINT], P[INTERACTION_POINT + 1], P[INTERACTION_POINT + 2], ip)
    nx, ny, nz = S[S_FRAME + 2], S[S_FRAME + 5], S[S_FRAME + 8]
    height = nx * (ip[0] - S[S_POINT]) + ny * (ip[1] - S[S_POINT + 1]) + nz * (ip[2] - S[S_POINT + 2])
    dz = height - P[PAD_RADIUS]
    if dz >= 0.0:
        aux[0] = 0.0
        return
    if aux[0] <= 0.0:
        aux[0] = 1.0
        aux[1], aux[2], aux[3] = ip[0] - height * nx, ip[1] - height * ny, ip[2] - height * nz
    # Slip (eqs. 20-23): where the shear spring would exceed its limit, drag the stick point to the limit.
    fn = P[CONTACT_A] * (-1e3 * dz) ** P[CONTACT_B]
    for axis in range(2):
        k = P[CONTACT_KX + axis]
        mu = P[CONTACT_MUX + axis]
        d = 0.0
        for r in range(3):
            d += S[S_FRAME + 3 * r + axis] * (ip[r] - aux[1 + r])
        limit = mu * fn / k  # metres
        if abs(d) > limit:
            shift = d - np.sign(d) * limit
            for r in range(3):
                aux[1 + r] += shift * S[S_FRAME + 3 * r + axis]


@kernel
def rhs(P: np.ndarray, S: np.ndarray, inertia: np.ndarray, x: np.ndarray, aux: np.ndarray,
        u: np.ndarray) -> np.ndarray:
    """dx/dt as a new array: the entry point for Python callers and scipy's solve_ivp."""
    R, o, arms, sc = work_arrays()
    dx = np.empty(N_STATES)
    rhs_into(P, S, inertia, x, aux, u, dx, R, o, arms, sc)
    return dx
