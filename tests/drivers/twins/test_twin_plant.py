"""The physics plant behind the twins: servos, SEA springs, pots, Nano17 wrench, markers, clock."""

from __future__ import annotations

import time

import numpy as np
import pytest
from uartlab.drivers.twins.plant import HW_OVERHEATING, HW_OVERLOAD, Plant, PlantClock, PlantConfig, SeaConfig
from uartlab.sim.ik import marker_positions

FDP = 0


@pytest.fixture
def plant() -> Plant:
    return Plant(PlantConfig(pot_noise_V=0.0, gauge_noise_V=0.0, marker_noise_m=0.0))


def _pull(plant: Plant, i: int, excursion_m: float, seconds: float) -> None:
    """Every servo holds (torque on, as in a trial), then servo i reels its tendon in."""
    r = plant.config.seas[i].spool_radius_m
    for k in range(6):
        plant.set_torque(k, True)
    plant.set_goal_angle(i, plant.servo_state(i).angle_rad + excursion_m / r)
    plant.advance(seconds)


def test_servo_follows_its_profile_to_the_goal(plant):
    plant.set_torque(FDP, True)
    plant.set_profile(FDP, max_velocity_rad_s=2.0, max_accel_rad_s2=10.0)
    plant.set_goal_angle(FDP, 1.0)
    speeds = []
    for _ in range(150):
        plant.advance(0.01)
        speeds.append(plant.servo_state(FDP).velocity_rad_s)
    speeds = np.array(speeds)
    assert speeds.max() <= 2.0 + 1e-9
    moving = np.flatnonzero(speeds > 0)
    accel = np.abs(np.diff(speeds[: moving[-1] + 1]))  # up to arrival, where it stops on the goal
    assert accel.max() <= 10.0 * 0.01 + 1e-9
    assert plant.servo_state(FDP).angle_rad == pytest.approx(1.0)
    assert not plant.servo_state(FDP).moving


def test_reeling_in_fdp_flexes_the_finger_and_the_pots_show_the_spring(plant):
    theta0 = plant.state()[8:12].copy()
    _pull(plant, FDP, 0.010, 3.0)
    x = plant.state()
    assert x[12] > 1.0  # tendon force rose
    assert x[9] > theta0[1] and x[10] > theta0[2]  # MCP and PIP flexed
    sea = plant.config.seas[FDP]
    k = plant.params.input_stiffness_N_per_m[FDP]
    expected_V = sea.pot_zero_V + sea.pot_volts_per_rad * x[12] / (k * sea.spool_radius_m)
    assert plant.analog_inputs()[FDP] == pytest.approx(expected_V, abs=2 * 20.0 / 2**16)
    # And the pot voltage is what a user's calibration turns back into tension.
    volts = plant.analog_block(50)[:, FDP].mean()
    assert (volts - sea.pot_zero_V) / sea.pot_volts_per_rad * k * sea.spool_radius_m == pytest.approx(x[12], rel=2e-3)


def test_overload_shuts_the_servo_down_until_reboot():
    plant = Plant(PlantConfig(seas=[SeaConfig(force_limit_N=2.0) for _ in range(6)]))
    _pull(plant, FDP, 0.030, 2.0)
    s = plant.servo_state(FDP)
    assert s.hardware_error & HW_OVERLOAD and not s.torque_enabled
    plant.set_torque(FDP, True)
    assert not plant.servo_state(FDP).torque_enabled  # refused while shut down
    held = plant.state()[12]
    plant.set_goal_angle(FDP, s.angle_rad + 1.0)
    plant.advance(0.5)
    assert plant.state()[12] <= held + 1e-9  # no longer driven: the gears just hold the pretension
    plant.reboot(FDP)
    plant.set_torque(FDP, True)
    assert plant.servo_state(FDP).torque_enabled and plant.servo_state(FDP).hardware_error == 0


def test_a_torque_off_servo_holds_small_loads_and_yields_to_large_ones(plant):
    plant.advance(1.0)  # servos start unpowered, as on the real rig
    assert plant.state()[12:18].min() > 0.2  # the pretension is still there: the gears hold it
    plant2 = Plant(PlantConfig(seas=[SeaConfig(force_limit_N=100.0) for _ in range(6)]))
    _pull(plant2, FDP, 0.150, 4.0)  # well past the 25 N the gears hold at a 20 mm spool
    pulled = plant2.state()[12]
    holding_N = 0.5 / plant2.config.seas[FDP].spool_radius_m
    assert pulled > holding_N
    plant2.set_torque(FDP, False)
    plant2.advance(1.0)
    assert 0.0 < plant2.state()[12] <= holding_N * 1.02  # unwound down to what the gears can hold


def test_overheating_on_request(plant):
    plant.set_torque(2, True)
    plant.inject_overheat(2)
    plant.advance(0.01)
    s = plant.servo_state(2)
    assert s.hardware_error & HW_OVERHEATING and s.temperature_C > 80 and not s.torque_enabled


def test_markers_and_bones_follow_forward_kinematics(plant):
    _pull(plant, FDP, 0.008, 2.0)
    q = plant.state()[8:12]
    world = marker_positions(plant.finger, q, plant.markers)
    np.testing.assert_allclose(plant.mocap_markers(), plant.to_motive(world), atol=1e-12)
    bodies = dict((name, (p, R)) for name, p, R in plant.bone_poses())
    R, o = plant.finger.frames(q)
    np.testing.assert_allclose(bodies["distal"][0], plant.to_motive(o[3][None])[0], atol=1e-12)
    np.testing.assert_allclose(bodies["distal"][1], plant.config.motive_from_world @ R[4], atol=1e-12)
    assert plant.mocap_markers()[:, 1].min() > 0.1  # Y-up Motive frame: the finger is above the floor


def test_nano17_sees_the_reaction_of_the_contact_force():
    plant = Plant(PlantConfig(pose="Curl", surface_angle_deg=67.5, gauge_noise_V=0.0))
    _pull(plant, FDP, 0.010, 3.0)
    x = plant.state()
    force_on_tip = plant.finger.contact_forces(x, plant.stepper.aux, plant.surface)[0]
    wrench = plant.sensor_wrench()
    np.testing.assert_allclose(plant.surface.frame @ wrench[:3], -force_on_tip, atol=1e-12)
    assert wrench[2] < -0.1  # the finger pushes into the plate: -n in the sensor frame
    cal = plant.nano17.calibration
    unloaded = plant.nano17.gauge_volts(np.zeros(6))
    cal.bias(unloaded)
    np.testing.assert_allclose(cal.wrench(plant.analog_inputs()[8:14]), wrench, atol=0.02)


def test_perturbed_plant_differs_from_the_model():
    a, b = Plant(PlantConfig(perturbation=0.1, seed=1)), Plant(PlantConfig())
    assert not np.allclose(a.params.em_stiffness_N_per_m, b.params.em_stiffness_N_per_m)


def test_clock_runs_the_plant_in_real_time_times_speed(plant):
    clock = PlantClock(plant, speed=4.0).start()
    try:
        t0, w0 = plant.time_s, time.monotonic()
        time.sleep(0.5)
        ratio = (plant.time_s - t0) / (time.monotonic() - w0)
    finally:
        clock.stop()
    assert 3.0 < ratio < 4.5
    with pytest.raises(ValueError, match="speed"):
        PlantClock(plant, speed=0)
