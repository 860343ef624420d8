"""URDF export: the exported chain, composed as the URDF spec says, reproduces the model's kinematics.

The forward kinematics here is written from the URDF spec alone (origin xyz, rpy = Rz(yaw) Ry(pitch)
Rx(roll), then a rotation by the joint value about the joint axis), independently of uartlab.sim.urdf.
"""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from uartlab.sim import JOINTS, Finger, FingerParams
from uartlab.sim.compiled import view
from uartlab.sim.urdf import finger_urdf, write_urdf

PHALANGES = {"proximal_phalanx": 2, "middle_phalanx": 3, "distal_phalanx": 4}  # URDF link -> D-H link
BONE_INDEX = {"proximal_phalanx": 0, "middle_phalanx": 1, "distal_phalanx": 2}


# ---------------------------------------------------------------- URDF forward kinematics, per spec
def _floats(text: str | None, default=(0.0, 0.0, 0.0)) -> np.ndarray:
    return np.array(default if text is None else [float(x) for x in text.split()])


def _rpy_matrix(roll: float, pitch: float, yaw: float) -> np.ndarray:
    cr, sr, cp, sp = np.cos(roll), np.sin(roll), np.cos(pitch), np.sin(pitch)
    cy, sy = np.cos(yaw), np.sin(yaw)
    Rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    Ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    Rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    return Rz @ Ry @ Rx


def _axis_rotation(axis: np.ndarray, angle: float) -> np.ndarray:
    k = axis / np.linalg.norm(axis)
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def _origin(el: ET.Element | None) -> np.ndarray:
    T = np.eye(4)
    origin = None if el is None else el.find("origin")
    if origin is not None:
        T[:3, :3] = _rpy_matrix(*_floats(origin.get("rpy")))
        T[:3, 3] = _floats(origin.get("xyz"))
    return T


def _link_poses(root: ET.Element, q) -> dict[str, np.ndarray]:
    """World pose (4x4) of every link, with revolute joint j at q[JOINTS.index(j)]."""
    by_child = {j.find("child").get("link"): j for j in root.findall("joint")}
    poses: dict[str, np.ndarray] = {}

    def pose(link: str) -> np.ndarray:
        if link not in poses:
            joint = by_child.get(link)
            if joint is None:
                poses[link] = np.eye(4)  # the root
            else:
                T = pose(joint.find("parent").get("link")) @ _origin(joint)
                if joint.get("type") == "revolute":
                    R = np.eye(4)
                    R[:3, :3] = _axis_rotation(_floats(joint.find("axis").get("xyz")),
                                               q[JOINTS.index(joint.get("name"))])
                    T = T @ R
                poses[link] = T
        return poses[link]

    for link in root.findall("link"):
        pose(link.get("name"))
    return poses


def _link(root: ET.Element, name: str) -> ET.Element:
    link = root.find(f"link[@name='{name}']")
    assert link is not None, name
    return link


def _inertia(el: ET.Element) -> np.ndarray:
    i = {k: float(v) for k, v in el.find("inertia").attrib.items()}
    return np.array([[i["ixx"], i["ixy"], i["ixz"]], [i["ixy"], i["iyy"], i["iyz"]],
                     [i["ixz"], i["iyz"], i["izz"]]])


# ---------------------------------------------------------------- parameter sets
def _general_params() -> FingerParams:
    """Every D-H feature non-trivial: d, alpha, offsets, both signs, tilted base, off-axis COMs."""
    p = FingerParams.uart()
    return p.replace(
        a_m=np.array([0.004, 0.055, 0.032, 0.027]),
        d_m=np.array([0.003, -0.002, 0.004, 0.001]),
        alpha_rad=np.radians([80.0, 10.0, -15.0, 5.0]),
        theta_offset_rad=np.array([0.2, -0.5, 0.1, -0.3]),
        dh_sign=np.array([-1.0, 1.0, -1.0, 1.0]),
        world_from_base=_rpy_matrix(0.3, -0.4, 0.7),
        bone_com_m=np.array([[0.02, 0.001, -0.002], [0.015, -0.001, 0.0005], [0.012, 0.0, 0.002]]),
        bone_inertia_kgm2=np.array([[4e-7, 5e-6, 3e-6], [2e-7, 6e-7, 4e-7], [1e-7, 8e-7, 5e-7]]),
        interaction_point_m=np.array([-0.006, 0.002, -0.003]),
    )


PARAMS = {"uart": FingerParams.uart, "general": _general_params}


def _poses(params: FingerParams, n: int = 25, seed: int = 7) -> np.ndarray:
    rom = params.rom_rad
    rng = np.random.default_rng(seed)
    q = rng.uniform(rom[:, 0], rom[:, 1], size=(n, 4))
    return np.vstack([np.zeros(4), rom[:, 0], rom[:, 1], q])


# ---------------------------------------------------------------- tests
@pytest.mark.parametrize("which", sorted(PARAMS))
def test_fingertip_and_coms_match_the_model(which):
    params = PARAMS[which]()
    finger = Finger(params)
    v = view(finger.P)
    root = ET.fromstring(finger_urdf(params))
    for q in _poses(params):
        poses = _link_poses(root, q)
        np.testing.assert_allclose(poses["fingertip"][:3, 3], finger.fingertip(q), rtol=0, atol=1e-9)
        R, o = finger.frames(q)
        np.testing.assert_allclose(poses["fingertip"][:3, :3], R[4], rtol=0, atol=1e-12)
        for name, i in PHALANGES.items():
            inertial = _link(root, name).find("inertial")
            T = poses[name] @ _origin(inertial)
            np.testing.assert_allclose(T[:3, 3], o[i] + R[i] @ v.link_com[i], rtol=0, atol=1e-9)
            inertia_world = T[:3, :3] @ _inertia(inertial) @ T[:3, :3].T
            np.testing.assert_allclose(inertia_world, R[i] @ v.link_inertia[i] @ R[i].T, rtol=0, atol=1e-15)
        pad = _link(root, "distal_phalanx").find("visual[@name='pad_visual']")
        np.testing.assert_allclose((poses["distal_phalanx"] @ _origin(pad))[:3, 3],
                                   finger.interaction_point(q), rtol=0, atol=1e-9)


@pytest.mark.parametrize("which", sorted(PARAMS))
def test_joint_axes_follow_the_anatomical_sign(which):
    """A positive URDF joint value turns about sign * z of D-H frame i-1: the model's Jacobian axis."""
    params = PARAMS[which]()
    finger = Finger(params)
    root = ET.fromstring(finger_urdf(params))
    q = _poses(params, n=1)[-1]
    poses = _link_poses(root, q)
    J = finger.jacobian(q)
    for j, joint in enumerate(root.findall("joint[@type='revolute']")):
        child = joint.find("child").get("link")
        axis_world = poses[child][:3, :3] @ _floats(joint.find("axis").get("xyz"))
        np.testing.assert_allclose(axis_world, J[3:, j], rtol=0, atol=1e-12)


@pytest.mark.parametrize("which", sorted(PARAMS))
def test_bone_cylinders_span_their_joints(which):
    params = PARAMS[which]()
    finger = Finger(params)
    root = ET.fromstring(finger_urdf(params))
    q = _poses(params, n=1)[-1]
    poses = _link_poses(root, q)
    R, o = finger.frames(q)
    for name, i in PHALANGES.items():
        visual = _link(root, name).find(f"visual[@name='{name}_visual']")
        cylinder = visual.find("geometry/cylinder")
        length = float(cylinder.get("length"))
        assert length == pytest.approx(params.a_m[i - 1])
        assert float(cylinder.get("radius")) == pytest.approx(0.007)
        T = poses[name] @ _origin(visual)
        ends = T[:3, 3] + np.outer([-0.5, 0.5], T[:3, 2] * length)
        proximal = o[i - 1] + params.d_m[i - 1] * R[i - 1][:, 2]  # D-H: Tz(d) comes before the bone
        np.testing.assert_allclose(ends, [proximal, o[i]], rtol=0, atol=1e-9)
    sphere = _link(root, "distal_phalanx").find("visual[@name='pad_visual']/geometry/sphere")
    assert float(sphere.get("radius")) == params.contact.pad_radius_m


def test_well_formed_and_names_the_four_joints_in_order():
    text = finger_urdf(FingerParams.uart(), name="my_finger")
    assert text.startswith("<?xml")
    root = ET.fromstring(text)
    assert root.tag == "robot" and root.get("name") == "my_finger"
    assert [j.get("name") for j in root.findall("joint[@type='revolute']")] == list(JOINTS)
    links = [link.get("name") for link in root.findall("link")]
    assert len(links) == len(set(links))
    assert set(links) == {"world", "metacarpal", "mcp_ab_link", *PHALANGES, "fingertip"}
    children = [j.find("child").get("link") for j in root.findall("joint")]
    assert sorted(children) == sorted(set(links) - {"world"})  # a tree rooted at world
    assert all(j.find("parent").get("link") in links for j in root.findall("joint"))
    base = root.find("joint[@name='world_to_metacarpal']")
    assert base.get("type") == "fixed" and base.find("parent").get("link") == "world"
    np.testing.assert_allclose(_origin(base)[:3, :3], FingerParams.uart().world_from_base, atol=1e-15)


@pytest.mark.parametrize("which", sorted(PARAMS))
def test_joint_limits_equal_rom(which):
    params = PARAMS[which]()
    root = ET.fromstring(finger_urdf(params))
    for j, name in enumerate(JOINTS):
        joint = root.find(f"joint[@name='{name}']")
        limit = joint.find("limit")
        assert [float(limit.get("lower")), float(limit.get("upper"))] == params.rom_rad[j].tolist()
        assert float(limit.get("effort")) > 0 and float(limit.get("velocity")) > 0
        assert float(joint.find("dynamics").get("damping")) == params.joint_damping_Nms_per_rad[j]


def test_masses_equal_params():
    params = FingerParams.uart().replace(bone_mass_kg=np.array([0.0213, 0.0071, 0.0049]))
    root = ET.fromstring(finger_urdf(params))
    for name, b in BONE_INDEX.items():
        mass = float(_link(root, name).find("inertial/mass").get("value"))
        assert mass == params.bone_mass_kg[b]
    # the massless AB-FE link carries a negligible, non-zero mass so that simulators load it
    tiny = _link(root, "mcp_ab_link").find("inertial")
    assert 0 < float(tiny.find("mass").get("value")) <= 1e-6
    assert np.all(np.diag(_inertia(tiny)) > 0) and np.all(np.diag(_inertia(tiny)) <= 1e-12)


def test_write_urdf_writes_a_file_that_parses(tmp_path):
    params = FingerParams.uart()
    path = tmp_path / "finger.urdf"
    write_urdf(params, path)
    assert path.read_text() == finger_urdf(params)
    root = ET.parse(path).getroot()
    assert root.tag == "robot"
    assert [j.get("name") for j in root.findall("joint[@type='revolute']")] == list(JOINTS)


def test_rejects_a_sign_that_is_not_plus_or_minus_one():
    params = dataclasses.replace(FingerParams.uart(), dh_sign=np.array([1.0, 0.0, -1.0, -1.0]))
    with pytest.raises(ValueError, match="dh_sign"):
        finger_urdf(params)
