"""What a rig takes from the calibration store (app/rig/calibrations.py), without starting it: the
Nano17's tool transform and tare, a tare made with another sensor's file refusing the run, and the
model's parameters with the calibrated moment arms and identified values."""

from __future__ import annotations

from importlib import resources

import numpy as np
import pytest
from conftest import FT18766
from uartlab.app.procedures.on_twin import run_nano17
from uartlab.app.rig.calibrations import RigCalibrations
from uartlab.app.rig.config import parse_rig_config
from uartlab.calibration import model_fit
from uartlab.calibration.store import CalibrationRecord, CalibrationStore
from uartlab.drivers.twins.nano17 import load_twin_calibration
from uartlab.sim import FingerParams

TOOL_MM_DEG = (1.0, -2.0, 12.0, 0.0, 0.0, 90.0)


def twin_config(tmp_path, store: bool = True, **replacements):
    text = (resources.files("uartlab.app") / "data" / "twin_rig.toml").read_text(encoding="utf-8")
    if store:
        text = text.replace('store = ""', f'store = "{tmp_path / "store"}"')
    for old, new in replacements.items():
        assert old in text, old
        text = text.replace(old, new)
    return parse_rig_config(text, "rig.toml", tmp_path)


@pytest.fixture(scope="module")
def nano17_record():
    values, residuals, _, _ = run_nano17(tool_transform=TOOL_MM_DEG, seed=0)
    return CalibrationRecord("nano17", values, residuals)


def test_the_stores_tool_transform_and_tare_make_the_wrench(tmp_path, nano17_record):
    CalibrationStore(tmp_path / "store").save(nano17_record)
    cal = RigCalibrations(twin_config(tmp_path)).ft()
    expected = load_twin_calibration()
    expected.set_units("N", "N-m")
    expected.set_tool_transform(*TOOL_MM_DEG, dist_units="mm", angle_units="degrees")
    bias_V = np.asarray(nano17_record.values["bias_V"])
    expected.bias(bias_V)
    np.testing.assert_allclose(cal.bias_volts, bias_V)
    volts = bias_V + np.array([0.05, -0.02, 0.3, 0.01, -0.04, 0.02])
    np.testing.assert_allclose(cal.wrench(volts), expected.wrench(volts))
    # The transform moved the frame: without it the same volts read differently.
    untransformed = load_twin_calibration()
    untransformed.set_units("N", "N-m")
    untransformed.bias(bias_V)
    assert not np.allclose(cal.wrench(volts), untransformed.wrench(volts))


def test_rig_toml_tool_transform_wins_over_the_stores(tmp_path, nano17_record):
    CalibrationStore(tmp_path / "store").save(nano17_record)
    config = twin_config(tmp_path, **{"# tool_transform_mm_deg": "tool_transform_mm_deg"})
    cal = RigCalibrations(config).ft()
    plain = load_twin_calibration()
    plain.set_units("N", "N-m")
    plain.bias(np.asarray(nano17_record.values["bias_V"]))
    volts = np.full(6, 0.1)
    np.testing.assert_allclose(cal.wrench(volts), plain.wrench(volts))


def test_a_tare_made_with_another_sensors_file_refuses_the_run(tmp_path, nano17_record):
    CalibrationStore(tmp_path / "store").save(nano17_record)  # made with the twin's own .cal file
    (tmp_path / "FT18766.cal").write_text(FT18766, encoding="utf-8")
    config = twin_config(tmp_path, **{'calibration_file = "from_twin"': 'calibration_file = "FT18766.cal"'})
    calibrations = RigCalibrations(config)
    cal = calibrations.ft()
    assert not np.any(cal.bias_volts)  # the other sensor's tare is not applied ...
    missing, _ = calibrations.status(uses_nano17=True)
    assert any("not this rig's FT18766.cal" in m for m in missing), missing  # ... and pre-flight refuses


def test_stored_moment_arms_and_model_values_make_the_models_parameters(tmp_path):
    store = CalibrationStore(tmp_path / "store")
    base = FingerParams.uart()
    store.save(CalibrationRecord("moment_arms", {"moment_arms": {"FDP": {"PIP_mm": [10.0, 3.0, -1.0]}}}, {}))
    coulomb = 1.7 * model_fit.get_param(base, "coulomb")
    store.save(CalibrationRecord("model", {"fitted": {"coulomb": coulomb}}, {}))
    params, sources = RigCalibrations(twin_config(tmp_path)).model_params()
    assert model_fit.get_param(params, "coulomb") == pytest.approx(coulomb)
    assert [s.split()[0] for s in sources] == ["moment_arms", "model"]
    # Only the fitted curve changed: the FDP's PIP arm is the stored polynomial, its DIP arm and the FDS's stay.
    theta = np.array([0.0, 0.2, 0.7, 0.3])   # MCP_AB MCP_FE PIP DIP (rad); at 0.5 the default's arm is 11.25 mm too
    assert params.moment_arm("FDP", "PIP", theta) == pytest.approx((10.0 + 3.0 * 0.7 - 0.49) * 1e-3)
    assert params.moment_arm("FDP", "PIP", theta) != pytest.approx(base.moment_arm("FDP", "PIP", theta))
    for group, joint in (("FDP", "DIP"), ("FDP", "MCP_FE"), ("FDS", "PIP")):
        assert params.moment_arm(group, joint, theta) == pytest.approx(base.moment_arm(group, joint, theta))
    # Without a store the model runs on the defaults, and says nothing was applied.
    bare, sources = RigCalibrations(twin_config(tmp_path, store=False)).model_params()
    assert sources == [] and model_fit.get_param(bare, "coulomb") == model_fit.get_param(base, "coulomb")
