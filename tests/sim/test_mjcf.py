"""The MJCF export as a MuJoCo user meets it: the file loads in MuJoCo with the finger's joints, limits and six
tendons; its moment arms are uartlab's in the start pose; it holds that pose at rest; and the paper's FDP pull
flexes every joint in both simulators (where they part, and by how much, `uartlab sim export-mjcf --compare`
reports)."""

from __future__ import annotations

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

from uartlab.app.cli.main import main  # noqa: E402
from uartlab.sim import Finger, FingerParams  # noqa: E402
from uartlab.sim import scenarios as sc  # noqa: E402
from uartlab.sim.mjcf import PATHS, compare_pull, finger_mjcf, holding_tensions, length_gradient, path_arm  # noqa: E402
from uartlab.sim.names import JOINTS, TENDONS  # noqa: E402


@pytest.fixture(scope="module")
def flex():
    params = FingerParams.uart()
    finger = Finger(params)
    x0, _ = sc.trial_start(finger, sc.free_motion_trial("FDP"))
    q0 = np.asarray(x0.theta, float)
    return params, finger, q0, mujoco.MjModel.from_xml_string(finger_mjcf(params, q0))


def test_the_file_loads_with_the_fingers_joints_limits_and_tendon_springs(flex):
    params, _, _, model = flex
    assert [model.joint(i).name for i in range(model.njnt)] == list(JOINTS)
    assert np.allclose(model.jnt_range, params.rom_rad) and model.jnt_limited.all()
    assert [model.tendon(i).name for i in range(model.ntendon)] == list(TENDONS)
    assert np.allclose(model.tendon_stiffness, params.input_stiffness_N_per_m)
    assert np.allclose(model.opt.gravity, params.gravity_m_per_s2)


def test_each_tendons_moment_arms_are_uartlabs_in_the_start_pose(flex):
    """MuJoCo's arm (minus d length / d q) at every joint a tendon crosses equals the arm uartlab gives that
    tendon's path there (an EM tendon takes the slip's or band's arm: the single path it is given)."""
    params, finger, q0, model = flex
    for t, tendon in enumerate(TENDONS):
        arms = -length_gradient(model, q0, t)
        for place, group in PATHS[tendon]:
            joints = ("MCP_AB", "MCP_FE") if place == "MCP" else (place,)
            for joint in joints:
                want = path_arm(params, tendon, group if joint != "MCP_AB" else PATHS[tendon][0][1], joint, q0)
                assert arms[JOINTS.index(joint)] == pytest.approx(want, abs=2e-6), (tendon, joint)
        crossed = {j for place, _ in PATHS[tendon] for j in (("MCP_AB", "MCP_FE") if place == "MCP" else (place,))}
        for joint in set(JOINTS) - crossed:
            assert arms[JOINTS.index(joint)] == pytest.approx(0.0, abs=1e-9), (tendon, joint)


def test_the_start_pose_holds_at_rest_with_its_least_tensions(flex):
    params, _, q0, model = flex
    tensions = holding_tensions(model, q0, 0.3)
    assert (tensions >= 0.3 - 1e-9).all()
    data = mujoco.MjData(model)
    data.qpos[:] = q0
    mujoco.mj_forward(model, data)
    model.tendon_lengthspring[:, 1] = np.array(data.ten_length) - tensions / params.input_stiffness_N_per_m
    for _ in range(2000):   # 1 s
        mujoco.mj_step(model, data)
    assert np.degrees(np.abs(np.array(data.qpos) - q0)).max() < 0.1


def test_the_fdp_pull_flexes_mcp_and_dip_in_both_and_where_they_part():
    """Both flex MCP and DIP. uartlab flexes PIP too; MuJoCo's single-path finger, its ED and FDS
    co-contracted to hold the start without the extensor mechanism, lets PIP extend (the docstring's limit)."""
    c = compare_pull(FingerParams.uart(), "FDP")
    for name, angles in (("uartlab", c.uartlab_deg), ("MuJoCo", c.mujoco_deg)):
        assert angles[1] > c.start_deg[1] + 2.0 and angles[3] > c.start_deg[3] + 2.0, (name, angles)
    assert c.uartlab_deg[2] > c.start_deg[2] + 2.0 and c.mujoco_deg[2] < c.uartlab_deg[2]
    assert c.mujoco_pretension_N[2] > 2 * c.uartlab_pretension_N[2]   # ED: the co-contraction it takes


def test_the_command_writes_a_file_mujoco_loads(tmp_path, capsys):
    out = tmp_path / "finger.xml"
    assert main(["sim", "export-mjcf", "-o", str(out)]) == 0
    assert "MJCF written to" in capsys.readouterr().out
    model = mujoco.MjModel.from_xml_path(str(out))
    assert model.ntendon == 6 and model.njnt == 4
