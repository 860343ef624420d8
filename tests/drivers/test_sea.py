"""SEA conversions: tendon excursion <-> servo ticks, and pot volts -> tendon force against the plant."""

from __future__ import annotations

import numpy as np
import pytest
from uartlab.drivers.sea import SeaCalibration, SeaGeometry
from uartlab.drivers.twins.plant import Plant, PlantConfig


def test_excursion_ticks_round_trip_with_a_mirrored_spool():
    g = SeaGeometry(spool_radius_m=0.015, direction=-1, zero_ticks=1000)
    excursion = np.array([-0.02, -0.001, 0.0, 0.0042, 0.03])
    ticks = g.excursion_to_ticks(excursion)
    assert ticks.dtype == np.int64
    assert ticks[2] == 1000 and ticks[3] < 1000  # reeling in turns the mirrored spool backwards
    np.testing.assert_allclose(g.ticks_to_excursion(ticks), excursion, atol=g.m_per_tick / 2)
    np.testing.assert_array_equal(g.excursion_to_ticks(g.ticks_to_excursion(ticks)), ticks)
    assert int(SeaGeometry().excursion_to_ticks(2 * np.pi * 0.020)) == 2048 + 4096  # one turn of a 20 mm spool


def test_geometry_rejects_nonsense():
    with pytest.raises(ValueError):
        SeaGeometry(direction=0)
    with pytest.raises(ValueError):
        SeaGeometry(spool_radius_m=0.0)


def _calibrations(plant: Plant) -> list[SeaCalibration]:
    k = plant.params.input_stiffness_N_per_m
    return [SeaCalibration.from_geometry(sea.pot_zero_V, sea.pot_volts_per_rad, k[i], sea.spool_radius_m)
            for i, sea in enumerate(plant.config.seas)]


@pytest.fixture
def loaded_plant() -> Plant:
    """The Flex pose with FDP, FDS and ED reeled in by a few mm and the intrinsics by one or two: every tension
    0.3 .. 6 N, well above the noise."""
    plant = Plant(PlantConfig())
    for i, goal_rad in enumerate((0.3, 0.3, 0.2, 0.08, 0.05, 0.08)):
        plant.set_torque(i, True)
        plant.set_goal_angle(i, goal_rad)
    plant.advance(1.0)
    return plant


def test_force_from_the_twin_pot_voltages_matches_the_plant(loaded_plant):
    plant = loaded_plant
    truth_N = plant.state()[12:18]
    volts = plant.analog_block(400)  # averaged: the 6210's noise and LSB are ~1 % of the smallest tension
    for i, cal in enumerate(_calibrations(plant)):
        force = float(np.mean(cal.force_N(volts[:, i], volts[:, 6])))
        assert force == pytest.approx(truth_N[i], rel=0.01)  # within 1 %
    assert truth_N.min() > 0.3


def test_from_geometry_constants():
    cal = SeaCalibration.from_geometry(1.0, 0.8, 300.0, 0.02)
    assert cal.gain_N_per_V == pytest.approx(300 * 0.02 / 0.8)
    assert cal.stiffness_Nm_per_rad == pytest.approx(300 * 0.02**2)
    assert cal.force_N(1.0) == 0.0
    # 1 rad of spring wind-up: tau = k_t * 1 rad, F = tau / r
    assert cal.force_N(1.8) == pytest.approx(300 * 0.02**2 / 0.02)


def test_ratiometric_correction_with_a_drifted_reference(loaded_plant):
    plant = loaded_plant
    cal = _calibrations(plant)[0]
    nominal = plant.analog_block(400)
    drift = 4.85 / 5.0  # the +5 V rail sagged by 3 %: every wiper voltage scales with it
    drifted = nominal * drift
    corrected = np.mean(cal.force_N(drifted[:, 0], drifted[:, 6]))
    assert corrected == pytest.approx(np.mean(cal.force_N(nominal[:, 0], nominal[:, 6])), rel=1e-9)
    assert corrected == pytest.approx(plant.state()[12], rel=0.01)
    uncorrected = np.mean(cal.force_N(drifted[:, 0]))
    assert abs(uncorrected - plant.state()[12]) > 0.05  # without the reference the drift shows as force


def test_vectorised_over_six_seas_and_blocks(loaded_plant):
    plant = loaded_plant
    cals = _calibrations(plant)
    six = SeaCalibration(v0_V=np.array([c.v0_V for c in cals]),
                         gain_N_per_V=np.array([c.gain_N_per_V for c in cals]))
    volts = plant.analog_block(200)
    forces = six.force_N(volts[:, :6], volts[:, 6])
    assert forces.shape == (200, 6)
    np.testing.assert_allclose(forces.mean(axis=0), plant.state()[12:18], rtol=0.01)


def test_a_quadratic_fit_adds_its_term_and_keeps_the_ratiometric_correction():
    from uartlab.drivers.sea import SeaCalibration

    cal = SeaCalibration(v0_V=1.0, gain_N_per_V=7.0, quadratic_N_per_V2=0.5)
    assert cal.force_N(3.0) == pytest.approx(7.0 * 2.0 + 0.5 * 4.0)
    # The reference read 10 % high: the wiper is scaled back before the fit applies.
    assert cal.force_N(3.3, reference_volts=5.5) == pytest.approx(7.0 * 2.0 + 0.5 * 4.0)
