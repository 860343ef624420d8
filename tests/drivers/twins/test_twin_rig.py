"""The whole twin rig end to end, through the vendors' own clients: dynamixel_sdk commands the FDP servo,
nidaqmx reads the SEA pots, a NatNet client watches the finger move."""

from __future__ import annotations

import time

import dynamixel_sdk as sdk
import nidaqmx
import numpy as np
import pytest
from nidaqmx.constants import AcquisitionType, TerminalConfiguration
from uartlab.drivers.natnet.client import NatNetClient
from uartlab.drivers.twins.rig import TwinRig, TwinRigConfig

pytestmark = pytest.mark.realtime

TORQUE_ENABLE, GOAL_POSITION, PRESENT_POSITION = 64, 116, 132  # MX-64 Protocol 2.0 control table
SPEED = 4.0


@pytest.fixture(scope="module")
def rig():
    with TwinRig(TwinRigConfig(speed=SPEED)) as running:
        yield running


def _read_pots(rig, samples: int = 200) -> np.ndarray:
    with nidaqmx.Task(grpc_options=rig.daq.grpc_options("")) as task:
        task.ai_channels.add_ai_voltage_chan("Dev1/ai0:5", terminal_config=TerminalConfiguration.RSE,
                                             min_val=-10.0, max_val=10.0)
        task.timing.cfg_samp_clk_timing(1000.0, sample_mode=AcquisitionType.FINITE, samps_per_chan=samples)
        return np.asarray(task.read(number_of_samples_per_channel=samples, timeout=10.0))


@pytest.mark.slow
def test_fdp_servo_flexes_the_finger_and_every_device_sees_it(rig):
    port = sdk.PortHandler(rig.bus.port)
    assert port.openPort()
    ph = sdk.PacketHandler(2.0)
    try:
        for dxl_id in range(1, 7):
            assert ph.write1ByteTxRx(port, dxl_id, TORQUE_ENABLE, 1)[:2] == (sdk.COMM_SUCCESS, 0)
        start, result, _ = ph.read4ByteTxRx(port, 1, PRESENT_POSITION)
        assert result == sdk.COMM_SUCCESS
        theta0 = rig.plant.state()[8:12].copy()
        pots0 = _read_pots(rig).mean(axis=1)

        sea = rig.plant.config.seas[0]
        ticks = int(round(0.010 / sea.spool_radius_m / (2 * np.pi) * 4096))  # reel FDP in by 10 mm
        assert ph.write4ByteTxRx(port, 1, GOAL_POSITION, start + ticks)[:2] == (sdk.COMM_SUCCESS, 0)
        time.sleep(6.0 / SPEED)  # six model seconds: the servo arrives and the finger settles

        position, result, _ = ph.read4ByteTxRx(port, 1, PRESENT_POSITION)
        assert result == sdk.COMM_SUCCESS and abs(position - (start + ticks)) <= 1
    finally:
        port.closePort()

    x = rig.plant.state()
    assert x[9] > theta0[1] + np.radians(2) and x[10] > theta0[2] + np.radians(2)  # MCP and PIP flexed

    # The pots show the spring deflection that the plant's tendon force implies.
    pots = _read_pots(rig).mean(axis=1)
    k = rig.plant.params.input_stiffness_N_per_m[0]
    expected = sea.pot_zero_V + sea.pot_volts_per_rad * rig.plant.state()[12] / (k * sea.spool_radius_m)
    assert pots[0] > pots0[0] + 0.05
    assert pots[0] == pytest.approx(expected, abs=5e-3)

    # The mocap twin shows the pose: the distal bone's rigid body is where the plant's kinematics put it.
    with NatNetClient(command_port=rig.motive.command_port) as client:
        frame = next(client.frames(timeout_s=2.0)).frame
        bodies = {name: (p, R) for name, p, R in rig.plant.bone_poses()}
    distal = next(b for b in frame.rigid_bodies if b.id == 4)
    np.testing.assert_allclose(distal.position_m, bodies["distal"][0], atol=2e-4)  # the finger barely moves now
