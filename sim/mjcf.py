"""MJCF export for MuJoCo users: the bone chain of sim/urdf.py with the six tendons as spatial tendons, each
its series elastic actuator's spring, and the paper's free-motion pulls in MuJoCo beside uartlab.

What carries over and what cannot:

- Bones, joints, ROM, masses, inertias, joint damping and gravity: as they are (MuJoCo compiles the URDF).
  MuJoCo's joint limits are soft; with its default 20 ms time constant a phalanx of a few grams under a
  tendon's newton was pushed tens of degrees past its ROM, so the limits here act within four steps.
- Moment arms: at every joint a tendon crosses it wraps a cylinder on the flexion axis whose radius is the
  model's arm at the start pose (a pulley, on the side the arm's sign says). Its via sites lie on the bone
  line just outside the pulley, so the tendon wraps at every angle of the ROM and the arm is the radius
  throughout (sites at the arm's offset let the tendon leave the pulley on one side, and a co-contracted
  finger was unstable there). The MCP abduction arm is the via sites' offset along the FE axis, corrected
  against MuJoCo's own tendon lengths. MuJoCo's arms equal uartlab's at the start pose and stay constant;
  uartlab's vary with the angles (polynomials, surfaces or tables).
- Tendon slack: a tendon is a spring of the SEA's stiffness with a dead band below its rest length (MuJoCo's
  two-valued ``springlength``): slack when shorter, pulling when longer. Pulling a tendon in shortens its
  rest length, as the servo does.
- The extensor mechanism cannot be: a MuJoCo tendon is one path, it does not branch. Each EM input tendon is
  one path whose arm past the MCP is the rhombus's arms weighted by that tendon's share of each segment as the
  paper starts it (sim/state.py ``balanced_em_forces``): ED a third through the central slip and a third
  through each lateral band (so it extends PIP and DIP), each intrinsic half through the central slip and
  half through its band, into the distal phalanx. How the rhombus redistributes force as the finger moves,
  its springs and masses, and uartlab's Coulomb friction of the joints are lost. Holding the start pose then
  takes more co-contraction than in uartlab (the least tensions that hold it, found by a linear program in
  MuJoCo's geometry); :func:`compare_pull` reports them. (ED over the central slip alone could not hold the
  start with positive tensions under the shipped moment arms.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from uartlab.sim.names import EM_SEGMENTS, EM_TENDONS, GROUP_JOINTS, JOINTS, SEGMENT_MOMENT_ARM_GROUP, TENDONS
from uartlab.sim.params import FingerParams
from uartlab.sim.state import balanced_em_forces

ORIGIN_M = 0.03       # where each tendon starts, up the metacarpal (the servo side)
VIA_FACTOR = 1.1      # a joint's via sites this many pulley radii before and after it, on the bone line
MIN_VIA_M = 0.002
SIDE_M = 0.003        # a pulley's side site, this far outside it on the tendon's side
MIN_ARM_M = 1e-4      # an arm below this crosses the joint on its axis: no pulley
PULLEY_HALF_LENGTH_M = 0.004
TIMESTEP_S = 0.0005
COMMAND_STEPS = 4     # the pull's command is updated every 2 ms, uartlab's RK4 step
LIMIT_TIMECONST_S = 4 * TIMESTEP_S
SETTLE_S = 3.0        # MuJoCo's pull runs this long past uartlab's settled end
# Each tendon's single path: the places it crosses and whose arm it takes there. An EM tendon past the MCP takes
# the extensor mechanism's arm as its share of each segment gives it (``path_arm``).
EXTENSOR_MECHANISM = "extensor_mechanism"
PATHS: dict[str, tuple[tuple[str, str], ...]] = {
    "FDP": (("MCP", "FDP"), ("PIP", "FDP"), ("DIP", "FDP")),
    "FDS": (("MCP", "FDS"), ("PIP", "FDS")),
    **{t: (("MCP", t), ("PIP", EXTENSOR_MECHANISM), ("DIP", EXTENSOR_MECHANISM)) for t in EM_TENDONS},
}
FLEXION_AXIS = {"MCP": 1, "PIP": 2, "DIP": 3}   # the joint whose axis a place's pulley turns on
CHILD = {"MCP": "proximal_phalanx", "PIP": "middle_phalanx", "DIP": "distal_phalanx"}
PARENT = {"MCP": "world", "PIP": "proximal_phalanx", "DIP": "middle_phalanx"}
MUJOCO_MISSING = "MuJoCo is not installed: pip install 'uartlab[mujoco]'"


def _mujoco() -> Any:
    try:
        import mujoco
    except ImportError:
        raise ImportError(MUJOCO_MISSING) from None
    return mujoco


def finger_spec(params: FingerParams, start_rad: np.ndarray | None = None) -> Any:
    """A ``mujoco.MjSpec`` of the finger and its six tendons, moment arms matched at ``start_rad`` (default
    all joints at 0)."""
    mujoco = _mujoco()
    q0 = np.zeros(4) if start_rad is None else np.asarray(start_rad, float)
    ab_scale = np.ones(len(TENDONS))
    for _ in range(2):   # the abduction offsets, scaled to give the arm MuJoCo itself measures
        model = _spec(mujoco, params, q0, ab_scale).compile()
        for t, tendon in enumerate(TENDONS):
            want = params.moment_arm(PATHS[tendon][0][1], JOINTS[0], q0)
            got = -length_gradient(model, q0, t)[0]
            if abs(got) > 1e-9 and abs(want) > 1e-9:
                ab_scale[t] *= want / got
    return _spec(mujoco, params, q0, ab_scale)


def path_arm(params: FingerParams, tendon: str, group: str, joint: str, q: np.ndarray) -> float:
    """The arm (m, + flexes) of ``tendon``'s single path at ``joint`` in pose q: the group's own arm, or for
    the extensor mechanism the sum over its segments of each one's arm times the tendon's share of its force,
    as the paper starts the rhombus (sim/state.py ``balanced_em_forces``: ED a third each to the central slip
    and the two bands, an intrinsic half to the central slip and half to its band)."""
    if group != EXTENSOR_MECHANISM:
        return params.moment_arm(group, joint, q)
    unit = np.zeros(len(TENDONS))
    unit[TENDONS.index(tendon)] = 1.0
    arm = 0.0
    for segment, share in zip(EM_SEGMENTS, balanced_em_forces(unit), strict=True):
        segment_group = SEGMENT_MOMENT_ARM_GROUP.get(segment)   # None: a segment that crosses no joint
        if share > 0.0 and segment_group is not None and joint in GROUP_JOINTS[segment_group]:
            arm += share * params.moment_arm(segment_group, joint, q)
    return arm


def finger_mjcf(params: FingerParams, start_rad: np.ndarray | None = None) -> str:
    """The MJCF document of :func:`finger_spec`."""
    return finger_spec(params, start_rad).to_xml()


def _spec(mujoco, params: FingerParams, q0: np.ndarray, ab_scale: np.ndarray) -> Any:
    from uartlab.sim.urdf import finger_urdf

    spec = mujoco.MjSpec.from_string(finger_urdf(params))
    spec.option.gravity = np.asarray(params.gravity_m_per_s2, float)
    spec.option.timestep = TIMESTEP_S
    for joint in spec.joints:
        joint.solref_limit = [LIMIT_TIMECONST_S, 1.0]
    model = spec.compile()
    data = mujoco.MjData(model)
    data.qpos[:] = q0
    mujoco.mj_kinematics(model, data)
    anchors = np.array(data.xanchor)             # (4, 3) world, at q0
    axes = np.array(data.xaxis)                  # (4, 3) world: + is the anatomical + (flexion, abduction)
    distal = model.body("distal_phalanx").id
    tip = np.array(data.xpos[distal]) + np.array(data.xmat[distal]).reshape(3, 3) @ np.array([params.a_m[3], 0, 0])
    bone = {"MCP": _unit(anchors[2] - anchors[1]), "PIP": _unit(anchors[3] - anchors[2]),
            "DIP": _unit(tip - anchors[3])}
    place_on = _Placer(spec, model, data)
    for t, tendon in enumerate(TENDONS):
        path = spec.add_tendon(name=tendon, stiffness=float(params.input_stiffness_N_per_m[t]),
                               springlength=[0.0, 1.0])   # the dead band's top is set per run (rest length)
        place_on.site("world", f"{tendon}_origin", anchors[1] - ORIGIN_M * bone["MCP"], path)
        for place, group in PATHS[tendon]:
            j = FLEXION_AXIS[place]
            a, b = anchors[j], bone[place]
            r = path_arm(params, tendon, group, JOINTS[j], q0)
            side = _unit(np.cross(axes[j], b))   # a tendon on this side of the axis turns the joint the + way
            along = np.zeros(3)
            if place == "MCP":                   # abduction: an offset along the FE axis
                along = params.moment_arm(group, JOINTS[0], q0) * ab_scale[t] * _unit(np.cross(axes[0], b))
            via = max(VIA_FACTOR * abs(r), MIN_VIA_M)
            place_on.site(PARENT[place], f"{tendon}_{place}_in", a - via * b + along, path)
            if abs(r) > MIN_ARM_M:
                place_on.pulley(CHILD[place], f"{tendon}_{place}_pulley", a, axes[j], abs(r),
                                a + (abs(r) + SIDE_M) * np.sign(r) * side, path)
            place_on.site(CHILD[place], f"{tendon}_{place}_out", a + via * b + along, path)
    return spec


class _Placer:
    """Sites and wrapping cylinders on bodies at world points of the pose ``data`` holds, in a tendon's path."""

    def __init__(self, spec, model, data):
        self.spec, self.model, self.data = spec, model, data

    def _local(self, body: str, world: np.ndarray) -> tuple[Any, np.ndarray, np.ndarray]:
        b = self.model.body(body).id
        R, p = np.array(self.data.xmat[b]).reshape(3, 3), np.array(self.data.xpos[b])
        target = self.spec.worldbody if body == "world" else self.spec.body(body)
        return target, R, R.T @ (world - p)

    def site(self, body: str, name: str, world: np.ndarray, tendon) -> None:
        target, _, pos = self._local(body, world)
        target.add_site(name=name, pos=pos, size=[0.0015, 0, 0])
        tendon.wrap_site(name)

    def pulley(self, body: str, name: str, centre: np.ndarray, axis: np.ndarray, radius: float,
               side_world: np.ndarray, tendon) -> None:
        mujoco = _mujoco()
        target, R, pos = self._local(body, centre)
        quat = np.zeros(4)
        mujoco.mju_quatZ2Vec(quat, R.T @ axis)   # the cylinder's axis along the joint's
        target.add_geom(name=name, type=mujoco.mjtGeom.mjGEOM_CYLINDER, size=[radius, PULLEY_HALF_LENGTH_M, 0],
                        pos=pos, quat=quat, contype=0, conaffinity=0, group=3, mass=0)
        _, _, side = self._local(body, side_world)
        target.add_site(name=f"{name}_side", pos=side, size=[0.001, 0, 0])
        tendon.wrap_geom(name, f"{name}_side")


def length_gradient(model, q: np.ndarray, tendon: int, h: float = 1e-6) -> np.ndarray:
    """d (tendon length) / d q (m/rad) at q, by central differences of MuJoCo's own tendon lengths: minus the
    moment arm in uartlab's sign (an arm is the shortening per radian)."""
    mujoco = _mujoco()
    data = mujoco.MjData(model)
    grad = np.zeros(len(q))
    for j in range(len(q)):
        lengths = []
        for step in (h, -h):
            data.qpos[:] = q
            data.qpos[j] += step
            mujoco.mj_forward(model, data)
            lengths.append(float(data.ten_length[tendon]))
        grad[j] = (lengths[0] - lengths[1]) / (2 * h)
    return grad


def holding_tensions(model, q: np.ndarray, least_N: float) -> np.ndarray:
    """The least tendon tensions (each >= ``least_N``, smallest sum) whose torques hold the pose q against
    gravity in MuJoCo's geometry: the start uartlab's statics gives its own model (sim/statics.py)."""
    from scipy.optimize import linprog

    mujoco = _mujoco()
    data = mujoco.MjData(model)
    data.qpos[:] = q
    mujoco.mj_forward(model, data)
    arms = np.array([-length_gradient(model, q, t) for t in range(model.ntendon)])   # (6, 4)
    need = np.array(data.qfrc_bias)            # the generalized force that holds q at rest
    fit = linprog(np.ones(model.ntendon), A_eq=arms.T, b_eq=need, bounds=[(least_N, None)] * model.ntendon)
    if not fit.success:
        raise ValueError(f"MuJoCo's finger cannot be held at {np.degrees(q).round(1).tolist()} deg with tensions "
                         f">= {least_N:g} N: {fit.message}")
    return np.asarray(fit.x)


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


@dataclass
class PullComparison:
    """One free-motion pull in both simulators, from the same start pose."""

    tendon: str
    start_deg: np.ndarray            # (4,) the trial's start pose
    uartlab_deg: np.ndarray          # (4,) steady joint angles
    mujoco_deg: np.ndarray
    uartlab_pretension_N: np.ndarray  # (6,) what holds the start in each
    mujoco_pretension_N: np.ndarray

    @property
    def difference_deg(self) -> np.ndarray:
        return self.mujoco_deg - self.uartlab_deg


def compare_pull(params: FingerParams, tendon: str = "FDP") -> PullComparison:
    """The paper's free-motion pull of ``tendon`` (its start pose, its 15 mm sigmoid) in uartlab and in MuJoCo;
    each starts holding the pose with its own least tensions (uartlab's the smallest of them, at least)."""
    _mujoco()   # a missing MuJoCo is said before uartlab's trial runs
    from uartlab.sim import Finger
    from uartlab.sim import scenarios as sc
    from uartlab.sim.inputs import sigmoid_inputs

    finger = Finger(params)
    trial = sc.free_motion_trial(tendon)
    ours = sc.run_trial(finger, trial)
    x0, _ = sc.trial_start(finger, trial)
    q0 = np.asarray(x0.theta, float)
    ours_pretension = np.asarray(x0.F_input, float)
    model = finger_spec(params, q0).compile()
    pretension = holding_tensions(model, q0, float(np.min(ours_pretension)))
    data, rest = held_start(model, params, q0, pretension)
    run_pull(model, data, rest, sigmoid_inputs(list(trial.pulls)), float(ours.t[-1]) + SETTLE_S)
    return PullComparison(tendon, np.degrees(q0), np.asarray(ours.final.theta_deg, float),
                          np.degrees(np.array(data.qpos)), ours_pretension, pretension)


def held_start(model, params: FingerParams, q: np.ndarray, tensions_N: np.ndarray) -> tuple[Any, np.ndarray]:
    """MuJoCo's state at rest in pose q, and each tendon's rest length (m) that gives it ``tensions_N`` there."""
    mujoco = _mujoco()
    data = mujoco.MjData(model)
    data.qpos[:] = q
    mujoco.mj_forward(model, data)
    return data, np.array(data.ten_length) - tensions_N / np.asarray(params.input_stiffness_N_per_m, float)


def run_pull(model, data, rest_m: np.ndarray, inputs: np.ndarray, until_s: float) -> None:
    """Step MuJoCo to ``until_s``, each tendon's rest length its start's less the commanded excursion (the
    servo reeling in; ``inputs`` as sim/inputs.py compiles them), set every ``COMMAND_STEPS`` steps."""
    from uartlab.sim.inputs import input_excursions_into

    mujoco = _mujoco()
    u = np.zeros(len(rest_m))
    while data.time < until_s:
        input_excursions_into(inputs, data.time, u)
        model.tendon_lengthspring[:, 1] = rest_m - u
        mujoco.mj_step(model, data, nstep=COMMAND_STEPS)
