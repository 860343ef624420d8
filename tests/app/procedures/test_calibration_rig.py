"""A calibration procedure end to end through the rig's real drivers (MX-64 bus, USB-6210) on the twin."""

from __future__ import annotations

import time

import numpy as np
import pytest
from uartlab.app.rig.config import default_rig_config
from uartlab.app.rig.rig import Rig
from uartlab.calibration import CalibrationError
from uartlab.calibration.sea import collect_sea_on_rig, fit_sea, load_schedule, true_sea
from uartlab.drivers.sea import NOMINAL_REFERENCE_V
from uartlab.streams import Record

pytestmark = pytest.mark.realtime

FDP = 0


@pytest.fixture
def rig():
    with Rig(default_rig_config()) as running:
        running.actuators.enable()
        yield running


def pot_reader(rig, i: int):
    """This SEA's pot over the newest ~100 ms of DAQ blocks, corrected by the sensed +5 V reference."""
    sub = rig.hub.subscribe("calibration", {"daq"}, maxsize=1000)

    def read() -> float:
        time.sleep(0.12)
        blocks = [r for r in sub.drain() if isinstance(r, Record)][-2:]
        d = Record.concatenate(blocks).data
        return float(np.mean(d["pot_V"][:, i] * NOMINAL_REFERENCE_V / d["reference_V"]))
    return read


def test_sea_calibration_through_the_drivers_recovers_the_twins_pot(rig):
    plant = rig.twin_plant
    reference = lambda: float(plant.state()[12 + FDP])   # noqa: E731 - the twin's in-line load cell
    data = collect_sea_on_rig(rig.actuators, "FDP", pot_reader(rig, FDP), reference, load_schedule(3.0, 4),
                              settle_s=0.2, step_s=0.05)
    fit = fit_sea("FDP", data.volts, data.loads_N, data.loading)
    v0, gain = true_sea(plant, "FDP")
    assert fit.v0_V == pytest.approx(v0, abs=0.005)
    assert fit.gain_N_per_V == pytest.approx(gain, rel=0.02)
    assert fit.rms_N < 0.05


def test_a_load_that_never_arrives_is_a_clear_error_and_the_tendon_stops(rig):
    with pytest.raises(CalibrationError, match="FDP.*never reached 3 N"):
        collect_sea_on_rig(rig.actuators, "FDP", pot_reader(rig, FDP), lambda: 0.0, np.array([3.0]),
                           step_s=0.0, max_steps=2)
    time.sleep(0.5)                                  # the servo arrives where the first attempt left it
    start = rig.actuators.read().excursion_m[FDP]
    with pytest.raises(CalibrationError, match="FDP.*more than 20 mm from its start"):
        collect_sea_on_rig(rig.actuators, "FDP", pot_reader(rig, FDP), lambda: 0.0, np.array([3.0]), step_s=0.0)
    time.sleep(0.5)
    assert 0.010 < rig.actuators.read().excursion_m[FDP] - start <= 0.020 + 1e-4


def test_a_real_mocap_takes_its_joint_angles_from_the_stores_mocap_calibration(tmp_path):
    """The rig's joint estimator for real mocap is built from the stored calibration, in the stream's
    marker order; with it, a pose of the twin's finger is read back from Motive-frame markers."""
    from importlib import resources
    from types import SimpleNamespace

    from uartlab.app.procedures.on_twin import run_mocap
    from uartlab.app.rig.config import parse_rig_config
    from uartlab.calibration.store import CalibrationRecord, CalibrationStore
    from uartlab.drivers.twins.plant import Plant

    values, residuals, method, _ = run_mocap(seed=0, frames=50)
    CalibrationStore(tmp_path).save(CalibrationRecord("mocap", values, residuals))
    text = (resources.files("uartlab.app") / "data" / "twin_rig.toml").read_text(encoding="utf-8")
    text = text.replace('store = ""', f'store = "{tmp_path}"')
    text = text.replace('[mocap]\nbackend = "twin"', '[mocap]\nbackend = "real"')
    rig = Rig(parse_rig_config(text, "rig.toml", tmp_path))       # not started: only its wiring is used
    plant = Plant()
    names = [m.name for m in plant.markers][::-1]                 # Motive may stream them in any order
    rig.mocap = SimpleNamespace(marker_names=names)
    estimator = rig.joint_estimator()
    markers = plant.mocap_markers()[::-1]
    frame = estimator.estimate(markers)
    assert np.degrees(np.abs(frame.angles_rad - plant.state()[8:12])).max() < 1.5
    rig.mocap = SimpleNamespace(marker_names=[*names, "extra"])
    with pytest.raises(ValueError, match="no marker extra"):
        rig.joint_estimator()
