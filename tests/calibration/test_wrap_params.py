"""The lateral bands' PIP wrap fitted by `calibrate model` on the twin, stored, and applied to the model."""

import dataclasses

import numpy as np
import pytest
from uartlab.calibration.applied import calibrated_params
from uartlab.calibration.model_fit import fit_model, get_param, record_trial_on_plant, record_values, set_params
from uartlab.calibration.store import CalibrationRecord, CalibrationStore
from uartlab.drivers.twins.plant import Plant, PlantConfig
from uartlab.errors import CalibrationError
from uartlab.sim import FingerParams
from uartlab.sim.lateral_band_wrap import ArmWrap
from uartlab.sim.names import PIP, RADIAL_BAND, ULNAR_BAND
from uartlab.sim.scenarios import contact_trial, free_motion_trial

BASE = FingerParams.uart()
ROM = (float(BASE.rom_rad[PIP, 0]), float(BASE.rom_rad[PIP, 1]))


def wrapped(head_x_mm: float, radius_mm: float = 3.0, ulnar_radius_mm: float | None = None) -> FingerParams:
    """The defaults with both bands' PIP arm a wrap (hold mid-shaft, level with a head 1.5 mm above the axis)."""
    def wrap(r_mm):
        return ArmWrap(r_mm * 1e-3, (head_x_mm * 1e-3, 1.5e-3), (15e-3, 4.5e-3), ROM)

    return BASE.replace(moment_arm_forms={(RADIAL_BAND, "PIP"): wrap(radius_mm),
                                          (ULNAR_BAND, "PIP"): wrap(ulnar_radius_mm or radius_mm)})


def test_the_model_fit_finds_the_bands_head_from_recorded_trials_and_the_store_applies_it(tmp_path):
    """The twin's bands wrap a head centred 2 mm proximal of the PIP axis; the lab's file says 1 mm. An FDP
    pull and a Hook contact trial, re-simulated, put it back within 0.1 mm; the model record then gives the
    start file's wrap with the fitted centre."""
    truth, start = wrapped(-2.0), wrapped(-1.0)

    def factory(pose, angle):
        return Plant(PlantConfig(pose=pose, surface_angle_deg=angle), params=truth)

    trials = [free_motion_trial("FDP"), contact_trial("Hook", "FDP", "ED")]
    recs = [record_trial_on_plant(factory, t, settle_s=0.5, sample_s=0.04) for t in trials]
    fit = fit_model(start, recs, ("band_head_x",))
    assert fit.values["band_head_x"] == pytest.approx(-2.0e-3, abs=0.1e-3)   # tolerance 0.1 mm; measured 0.003 mm
    assert fit.rms_angle_deg < 0.5 * fit.rms_angle_deg_start and not fit.undetermined
    store = CalibrationStore(tmp_path)
    store.save(CalibrationRecord("model", *record_values(fit)))
    params, _ = calibrated_params(store, base=start)
    for band in (RADIAL_BAND, ULNAR_BAND):
        w = params.moment_arm_forms[band, "PIP"]
        assert w.head_centre_m == (fit.values["band_head_x"], 1.5e-3) and w.head_radius_m == 3e-3
    # written as the model reads it: a PIP_wrap with the fitted centre
    again = FingerParams.from_toml_text(params.to_toml()).moment_arm_forms[RADIAL_BAND, "PIP"]
    assert again.head_centre_m[0] == pytest.approx(fit.values["band_head_x"], rel=1e-12)


def test_the_wrap_parameters_are_the_bands_one_geometry():
    p = wrapped(-2.0, radius_mm=3.5)
    assert get_param(p, "band_head_radius") == 3.5e-3 and get_param(p, "band_head_x") == -2e-3
    q = set_params(p, {"band_head_radius": 3.2e-3, "coulomb": 1e-3})
    assert {q.moment_arm_forms[b, "PIP"].head_radius_m for b in (RADIAL_BAND, ULNAR_BAND)} == {3.2e-3}
    assert q.coulomb_coefficient_m == 1e-3
    np.testing.assert_allclose(q.moment_arm_forms[RADIAL_BAND, "PIP"].band_hold_m, (15e-3, 4.5e-3), rtol=1e-12)
    theta = np.radians([0.0, 30.0, 60.0, 0.0])
    assert q.moment_arm(RADIAL_BAND, "PIP", theta) == pytest.approx(
        float(q.moment_arm_forms[RADIAL_BAND, "PIP"].state(theta[PIP]).arm_m), abs=1e-11)


@pytest.mark.parametrize("params, values, message", [
    (BASE, {}, "the lateral bands' PIP arms are not wrap forms: start from a parameter file that gives both bands "
               "a PIP_wrap"),
    (wrapped(-2.0, 3.0, ulnar_radius_mm=3.5), {}, "the two lateral bands' PIP_wrap differ"),
    (wrapped(-2.0), {"band_head_radius": 1.0e-3}, r"lateral-band wrap \{'band_head_radius': 0.001\}: the band leaves "
                                                 r"the head at PIP 0 deg"),
])
def test_what_the_wrap_fit_cannot_take_is_one_sentence(params, values, message):
    with pytest.raises(CalibrationError, match=message):
        set_params(params, values) if values else get_param(params, "band_head_x")


def test_a_start_of_zero_cannot_be_scaled():
    w = wrapped(-2.0).moment_arm_forms[RADIAL_BAND, "PIP"]
    level = dataclasses.replace(w, head_centre_m=(-2e-3, 0.0), band_hold_m=(15e-3, 3e-3))   # centre on the axis' level
    p = BASE.replace(moment_arm_forms={(RADIAL_BAND, "PIP"): level, (ULNAR_BAND, "PIP"): level})
    with pytest.raises(CalibrationError, match=r"band_head_y \(head_centre_mm\[1\]\) starts at 0, which the fit "
                                               r"cannot scale: give it a nonzero start"):
        get_param(p, "band_head_y")
