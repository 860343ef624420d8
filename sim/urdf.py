"""URDF export of the finger's bone chain, for viewers and other rigid-body tools (RViz, PyBullet, Drake).

Only the rigid chain is exported (bones, joints, ROM, inertias, joint damping); tendons, the extensor
mechanism and the contact law have no URDF form.

Mapping from the D-H chain (kinematics.py). Each D-H link transform factors as

    T_i = Rz(theta_i) Tz(d_i) Tx(a_i) Rx(alpha_i) = Rz(sign_i * q_i) * C_i,
    C_i = Rz(offset_i) Tz(d_i) Tx(a_i) Rx(alpha_i)        (constant; Rz(offset) and Rz(s q) commute)

so D-H frame i is F_i = W * Rz(s_1 q_1) C_1 * ... * Rz(s_i q_i) C_i, with W = world_from_base. URDF
joints apply "origin, then rotate about the axis", so with joint i's origin equal to C_{i-1} the URDF
frame of the link after joint i is

    L_i = F_{i-1} * Rz(s_i q_i)    (the D-H frame i-1 turned by joint i, before link i's constant part)

whose origin is the proximal joint of D-H link i and whose z is joint i's axis:

    world --fixed, rpy = W--> metacarpal (= F_0)
    metacarpal       --MCP_AB, origin identity, axis s_1 z--> mcp_ab_link       (L_1, D-H link 1)
    mcp_ab_link      --MCP_FE, origin C_1,      axis s_2 z--> proximal_phalanx  (L_2, D-H link 2)
    proximal_phalanx --PIP,    origin C_2,      axis s_3 z--> middle_phalanx    (L_3, D-H link 3)
    middle_phalanx   --DIP,    origin C_3,      axis s_4 z--> distal_phalanx    (L_4, D-H link 4)
    distal_phalanx   --fixed,  origin C_4--> fingertip                          (= F_4)

Axis (0, 0, s_i) makes a positive URDF joint value a positive anatomical angle (flexion, abduction),
so the joint limits are ``rom_rad`` unchanged. A point p given in D-H frame F_i (COM, interaction
point) is C_i p in L_i; inertias are rotated into L_i (inertial rpy stays zero, which every parser
handles). A bone runs from (0, 0, d_i) to the origin of C_i in L_i, along F_i's x axis.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
from uartlab.sim.compiled import compile_model, view
from uartlab.sim.names import JOINTS
from uartlab.sim.params import FingerParams

LINKS: tuple[str, ...] = ("mcp_ab_link", "proximal_phalanx", "middle_phalanx", "distal_phalanx")
BONE_RADIUS_M = 0.007
# The model has no joint torque or speed limits (the joints are tendon-driven), but URDF requires both
# for a revolute joint: generous placeholders well above what the SEAs can produce.
EFFORT_NM = 10.0
VELOCITY_RAD_S = 50.0
# D-H link 1 (between the AB and FE axes) is massless; tools such as Gazebo and PyBullet reject or drop
# zero-mass moving links, so it gets a negligible mass and inertia instead.
TINY_MASS_KG = 1e-6
TINY_INERTIA_KGM2 = 1e-12


def _rz(t: float) -> np.ndarray:
    c, s = np.cos(t), np.sin(t)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _rx(t: float) -> np.ndarray:
    c, s = np.cos(t), np.sin(t)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def _transform(R: np.ndarray, p) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = p
    return T


def dh_constant(params: FingerParams, i: int) -> np.ndarray:
    """C_i = Rz(offset_i) Tz(d_i) Tx(a_i) Rx(alpha_i), the constant part of D-H link i (0-based i)."""
    a, d = params.a_m[i], params.d_m[i]
    Rz = _rz(params.theta_offset_rad[i])
    return _transform(Rz @ _rx(params.alpha_rad[i]), Rz @ np.array([a, 0.0, d]))


def matrix_rpy(R: np.ndarray) -> np.ndarray:
    """Roll, pitch, yaw with R = Rz(yaw) Ry(pitch) Rx(roll), the URDF convention."""
    pitch = np.arctan2(-R[2, 0], np.hypot(R[0, 0], R[1, 0]))
    if np.hypot(R[0, 0], R[1, 0]) < 1e-12:  # gimbal lock: only yaw - roll (or + roll) is defined
        return np.array([0.0, pitch, np.arctan2(-R[0, 1], R[1, 1])])
    return np.array([np.arctan2(R[2, 1], R[2, 2]), pitch, np.arctan2(R[1, 0], R[0, 0])])


def _num(v: float, tiny: float = 1e-15) -> str:
    """Exact (repr round-trips a float) and short: whole numbers without ".0", round-off as 0."""
    v = float(v)
    if abs(v) < tiny:
        return "0"
    return str(int(v)) if v.is_integer() and abs(v) < 1e15 else repr(v)


def _vec(values) -> str:
    return " ".join(_num(v) for v in values)


def _origin(parent: ET.Element, T: np.ndarray) -> None:
    ET.SubElement(parent, "origin", xyz=_vec(T[:3, 3]), rpy=_vec(matrix_rpy(T[:3, :3])))


def _inertial(link: ET.Element, mass: float, com, inertia: np.ndarray) -> None:
    el = ET.SubElement(link, "inertial")
    ET.SubElement(el, "origin", xyz=_vec(com), rpy="0 0 0")
    ET.SubElement(el, "mass", value=_num(mass))
    inertia = 0.5 * (inertia + inertia.T)
    scale = float(np.max(np.abs(inertia)))
    inertia = np.where(np.abs(inertia) < 1e-12 * scale, 0.0, inertia)  # drop rotation round-off
    ET.SubElement(el, "inertia", {f"i{'xyz'[r]}{'xyz'[c]}": _num(inertia[r, c], tiny=0.0)
                                  for r, c in ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))})


def _shape(link: ET.Element, name: str, T: np.ndarray, tag: str, **size: str) -> None:
    """The same primitive as <visual> and <collision>, placed at T in the link frame."""
    for kind in ("visual", "collision"):
        el = ET.SubElement(link, kind, name=f"{name}_{kind}")
        _origin(el, T)
        ET.SubElement(ET.SubElement(el, "geometry"), tag, size)


def _joint(robot: ET.Element, name: str, kind: str, parent: str, child: str, T: np.ndarray) -> ET.Element:
    joint = ET.SubElement(robot, "joint", name=name, type=kind)
    _origin(joint, T)
    ET.SubElement(joint, "parent", link=parent)
    ET.SubElement(joint, "child", link=child)
    return joint


def finger_urdf(params: FingerParams, name: str = "uart_finger") -> str:
    """The bone chain of ``params`` as a URDF document (see the module docstring for the frames)."""
    if not np.all(np.isin(params.dh_sign, (-1.0, 1.0))):
        raise ValueError(f"dh_sign must be +1 or -1 per joint, got {np.asarray(params.dh_sign).tolist()}")
    v = view(compile_model(params))
    C = [dh_constant(params, i) for i in range(4)]
    robot = ET.Element("robot", name=name)
    robot.append(ET.Comment(" Generated by uartlab.sim.urdf from FingerParams (SI units). Link frames: "
                            "see the uartlab.sim.urdf docstring. "))
    ET.SubElement(robot, "link", name="world")
    base = ET.SubElement(robot, "link", name="metacarpal")  # fixed to the world: needs no inertial
    base.append(ET.Comment(" D-H base frame 0 "))
    _joint(robot, "world_to_metacarpal", "fixed", "world", "metacarpal",
           _transform(params.world_from_base, np.zeros(3)))

    parent = "metacarpal"
    for i, (joint_name, link_name) in enumerate(zip(JOINTS, LINKS, strict=True)):
        T = np.eye(4) if i == 0 else C[i - 1]
        joint = _joint(robot, joint_name, "revolute", parent, link_name, T)
        ET.SubElement(joint, "axis", xyz=_vec([0.0, 0.0, params.dh_sign[i]]))
        lo, hi = params.rom_rad[i]
        ET.SubElement(joint, "limit", lower=_num(lo), upper=_num(hi), effort=_num(EFFORT_NM),
                      velocity=_num(VELOCITY_RAD_S))
        ET.SubElement(joint, "dynamics", damping=_num(params.joint_damping_Nms_per_rad[i]), friction="0")

        link = ET.SubElement(robot, "link", name=link_name)
        frame = i + 1  # D-H link index
        R_c, p_c = C[i][:3, :3], C[i][:3, 3]
        if v.link_mass[frame] > 0.0:
            _inertial(link, v.link_mass[frame], R_c @ v.link_com[frame] + p_c,
                      R_c @ v.link_inertia[frame] @ R_c.T)
        else:
            link.append(ET.Comment(" massless D-H link: a negligible mass, because many tools reject "
                                   "a zero-mass moving link "))
            _inertial(link, TINY_MASS_KG, p_c, TINY_INERTIA_KGM2 * np.eye(3))
        length = float(params.a_m[i])
        if length > 0.0:  # cylinder axis (z) along F_i's x, centred half a bone back from F_i's origin
            centre = C[i] @ _transform(np.eye(3), [-length / 2, 0.0, 0.0])
            along_x = _transform(np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]]), np.zeros(3))
            _shape(link, link_name, centre @ along_x, "cylinder", radius=_num(BONE_RADIUS_M),
                   length=_num(length))
        parent = link_name

    pad = _transform(np.eye(3), C[3][:3, :3] @ v.interaction_point + C[3][:3, 3])
    _shape(link, "pad", pad, "sphere",  # ``link`` is the distal phalanx, the last of the loop
           radius=_num(params.contact.pad_radius_m))
    ET.SubElement(robot, "link", name="fingertip")
    _joint(robot, "fingertip_joint", "fixed", "distal_phalanx", "fingertip", C[3])

    ET.indent(robot, space="  ")
    return '<?xml version="1.0"?>\n' + ET.tostring(robot, encoding="unicode") + "\n"


def write_urdf(params: FingerParams, path: str | Path) -> None:
    """Write :func:`finger_urdf` of ``params`` to ``path``."""
    Path(path).write_text(finger_urdf(params))
