"""SEA, servo-zero, Nano17 and mocap procedures on the twin plant: the twin's true values come back."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from uartlab.calibration.mocap import collect_mocap_on_plant, fit_mocap
from uartlab.calibration.nano17 import collect_tare_on_plant, load_cal, tare
from uartlab.calibration.sea import collect_sea_on_plant, fit_sea, true_sea
from uartlab.calibration.servo_zero import collect_servo_zero_on_plant, fit_servo_zero
from uartlab.drivers.sea import SeaCalibration
from uartlab.drivers.twins.nano17 import DEFAULT_BIAS_VOLTS, load_twin_calibration
from uartlab.drivers.twins.plant import Plant, PlantConfig, SeaConfig
from uartlab.errors import CalibrationError
from uartlab.sim.ik import Marker, default_markers
from uartlab.sim.names import TENDONS


@pytest.fixture(scope="module")
def plant():
    # Every SEA different (pot zero, pot gain) and the springs perturbed: nothing to recover by luck.
    seas = [SeaConfig(pot_zero_V=0.8 + 0.1 * i, pot_volts_per_rad=(0.7 + 0.1 * i)) for i in range(6)]
    return Plant(PlantConfig(perturbation=0.1, seed=3, seas=seas))


@pytest.mark.parametrize("tendon", TENDONS)
def test_sea_fit_recovers_the_pot_zero_and_gain(plant, tendon):
    data = collect_sea_on_plant(plant, tendon)
    fit = fit_sea(tendon, data.volts, data.loads_N, data.loading)
    v0, gain = true_sea(plant, tendon)
    assert fit.v0_V == pytest.approx(v0, abs=0.005)       # tolerance: 5 mV
    assert fit.gain_N_per_V == pytest.approx(gain, rel=0.01)  # tolerance: 1 %
    assert fit.rms_N < 0.03 and fit.hysteresis_N < 0.05   # the twin's pot has no hysteresis


def test_sea_bad_data_names_the_sea():
    with pytest.raises(CalibrationError, match="sea calibration, SEA FDS: too few load points"):
        fit_sea("FDS", [1, 2, 3], [0, 1, 2])
    with pytest.raises(CalibrationError, match="SEA ED: loading loads are not monotonic"):
        fit_sea("ED", [1.0, 1.2, 1.1, 1.5, 1.8, 2.0], [0, 2, 1, 4, 6, 8], loading=[True] * 6)
    with pytest.raises(CalibrationError, match="the pot moved only"):
        fit_sea("PI", [1.0] * 6, [0, 1, 2, 3, 4, 5])


def test_servo_zero_agrees_with_the_plants_own_tension(plant):
    cals = [SeaCalibration(*true_sea(plant, t)) for t in TENDONS]
    data = collect_servo_zero_on_plant(plant, cals, tendons=("FDP", "ED", "LUM"))
    for name, d in data.items():
        fit = fit_servo_zero(name, d.excursion_m, d.force_N)
        truth = fit_servo_zero(name, d.excursion_m, d.true_force_N)  # the same sweep, the plant's real tension
        assert fit.taut_excursion_m == pytest.approx(truth.taut_excursion_m, abs=0.2e-3)  # tolerance: 0.2 mm
        assert fit.slope_N_per_m == pytest.approx(truth.slope_N_per_m, rel=0.05)
        assert fit.pretension_offset_m == pytest.approx(0.3 / fit.slope_N_per_m)


def test_servo_zero_bad_sweeps():
    x = np.linspace(0, 0.01, 20)
    with pytest.raises(CalibrationError, match="servo-zero calibration, tendon DI: the sweep is not monotonic"):
        fit_servo_zero("DI", x[::-1], np.maximum(0, 300 * (x - 0.004)))
    with pytest.raises(CalibrationError, match="tendon FDP: the tendon was not slack"):
        fit_servo_zero("FDP", x, 1.0 + 300 * x)
    with pytest.raises(CalibrationError, match="too few points"):
        fit_servo_zero("FDP", x[:4], x[:4])


def test_nano17_tare_recovers_the_gauge_offsets_and_reads_contact():
    free = Plant(PlantConfig())
    cal = load_twin_calibration()
    result = tare(cal, collect_tare_on_plant(free), cal.path)
    np.testing.assert_allclose(result.bias_V, DEFAULT_BIAS_VOLTS, atol=2e-4)  # tolerance: 0.2 mV per gauge
    touching = Plant(PlantConfig(pose="Hook", surface_angle_deg=45.0))
    touching.advance(0.3)
    measured = cal.wrench(touching.analog_block(400)[:, 8:14]).mean(axis=0)
    np.testing.assert_allclose(measured[:3], touching.sensor_wrench()[:3], atol=5e-3)  # tolerance: 5 mN
    assert result.cal_file == "twin_nano17.cal" and len(result.cal_sha256) == 64


def test_nano17_refuses_a_loaded_tare_and_a_missing_file(tmp_path):
    touching = Plant(PlantConfig(pose="Hook", surface_angle_deg=45.0, gauge_noise_V=0.05))
    cal = load_twin_calibration()
    with pytest.raises(CalibrationError, match="not quiet during the tare"):
        tare(cal, collect_tare_on_plant(touching), cal.path)
    with pytest.raises(CalibrationError, match="nano17 calibration"):
        load_cal(tmp_path / "nope.cal")


def test_mocap_recovers_the_mounting_and_the_glued_marker_offsets():
    M = Rotation.from_euler("xyz", [80, 10, -20], degrees=True).as_matrix()
    origin = np.array([0.3, 0.2, -0.1])
    plant = Plant(PlantConfig(motive_from_world=M, motive_origin_m=tuple(origin)))
    rng = np.random.default_rng(1)
    # The markers are glued up to ~3 mm away from where the drawing puts them (the base fixture is exact).
    plant.markers = tuple(Marker(m.name, m.link, tuple(np.array(m.local_m) + (rng.normal(0, 2e-3, 3) if m.link else 0)))
                          for m in plant.markers)
    frames, pose = collect_mocap_on_plant(plant, frames=300)
    cal = fit_mocap(plant.finger, default_markers(plant.finger), frames, pose)
    M_fit, o_fit = cal.motive_from_world
    angle = np.degrees(Rotation.from_matrix(M_fit.T @ M).magnitude())
    assert angle < 0.5 and np.linalg.norm(o_fit - origin) < 0.5e-3  # tolerance: 0.5 deg, 0.5 mm
    pairs = zip(cal.markers, plant.markers, strict=True)
    errors = [np.linalg.norm(np.subtract(a.local_m, b.local_m)) for a, b in pairs]
    assert max(errors) < 1.0e-3  # tolerance: 1 mm per marker (they were placed up to ~5 mm off)


def test_mocap_missing_marker_is_named():
    plant = Plant(PlantConfig())
    frames, pose = collect_mocap_on_plant(plant, frames=20)
    frames[:, 4] = np.nan
    with pytest.raises(CalibrationError, match="never seen during the calibration: PP_dist"):
        fit_mocap(plant.finger, default_markers(plant.finger), frames, pose)
