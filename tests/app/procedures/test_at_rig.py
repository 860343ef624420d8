"""Calibration at the rig: every procedure on the twin rig through the real drivers (MX-64 bus on a pty,
USB-6210 over NI-DAQmx gRPC, NatNet) recovers the twin's truth within docs/calibration.md's tolerances;
the CLI's record is what a rig then loads; a failure writes nothing and leaves the servos holding."""

from __future__ import annotations

import hashlib
import re
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from conftest import DEVICE_TIMING, wait_for
from uartlab.app.cli.main import main
from uartlab.app.procedures import at_rig as rig_runs
from uartlab.app.rig.calibrations import RigCalibrations
from uartlab.app.rig.config import default_rig_config
from uartlab.app.rig.rig import Rig
from uartlab.calibration import CalibrationError
from uartlab.calibration.sea import load_schedule, true_sea
from uartlab.calibration.store import CalibrationStore
from uartlab.drivers.twins.nano17 import load_twin_calibration
from uartlab.sim.names import TENDONS

pytestmark = pytest.mark.realtime
SPEED = "4"   # the twin at 4x keeps the file short; the DAQ and bus still run at their real rates per model second


def _truth_column(lines: list[str]) -> dict[tuple[str, ...], float]:
    """The last number of each report line, keyed by its leading words (tendon[, joint])."""
    out = {}
    for line in lines[1:]:
        words = line.split()
        number = re.findall(r"-?\d+\.\d+", line)[-1]
        out[tuple(w for w in words[:2] if w.isalpha() or "_" in w)] = float(number)
    return out


# ------------------------------------------------------------------ the CLI, each with its own rig (run first,
# before the module's rig starts: two twin rigs at once would crowd two cores)
def test_cli_at_the_twin_rig_writes_a_record_the_rig_then_loads(tmp_path, capsys):
    store = tmp_path / "cal"
    assert main(["calibrate", "nano17", "--rig", "twin", "--speed", SPEED, "--store", str(store),
                 "--operator", "ana"]) == 0
    out = capsys.readouterr().out
    assert "twin rig:" in out and "written" in out
    record = CalibrationStore(store).current("nano17")
    assert record.provenance.rig == "twin" and record.provenance.operator == "ana"
    twin_cal = load_twin_calibration().path
    assert record.values["cal_sha256"] == hashlib.sha256(Path(twin_cal).read_bytes()).hexdigest()
    calibrations = RigCalibrations(replace(default_rig_config(), calibration_store=store))
    cal = calibrations.ft()                                  # what Rig.start builds its Nano17 from
    assert calibrations.nano17_mismatch is None
    missing, _ = calibrations.status(uses_nano17=True)
    assert not [m for m in missing if m.startswith("nano17")]  # a run finds its tare
    raw = np.zeros((1, 6))
    cal.set_units("N", "N-mm")
    stored_bias = np.asarray(record.values["bias_V"], float)
    assert np.allclose(cal.wrench(raw + stored_bias), 0.0, atol=1e-9)  # its tare is the stored one


def test_cli_a_sweep_with_no_motion_writes_nothing(tmp_path, capsys):
    store = tmp_path / "cal"
    assert main(["calibrate", "moment-arms", "--rig", "twin", "--speed", SPEED, "--store", str(store),
                 "--tendons", "FDP", "--amplitude-mm", "0.001"]) == 2   # 1 um: no motion to fit
    err = capsys.readouterr().err
    assert "moment-arms calibration, tendon FDP" in err
    # stderr is no terminal here (a log, a pipe): each step is a line, where minutes went by in silence
    assert re.search(r"^calibrate moment-arms: 1 of 1 sweeps done \(\d+ s\)$", err, re.M), err
    assert not store.exists() or CalibrationStore(store).current("moment_arms") is None


def test_cli_at_a_rig_file_writes_a_mocap_record_its_joint_estimator_uses(tmp_path, capsys):
    """--rig FILE (here a copy of the twin rig at 4x naming a store): the mocap record it writes is what a
    rig with real mocap builds its joint estimator from; it reads the twin's pose back from its markers."""
    from importlib import resources

    from uartlab.app.rig.config import load_rig_config
    from uartlab.drivers.twins.plant import Plant

    text = (resources.files("uartlab.app") / "data" / "twin_rig.toml").read_text(encoding="utf-8")
    text = text.replace('store = ""', 'store = "cal"').replace("speed = 1.0", f"speed = {SPEED}.0")
    rig_file = tmp_path / "rig.toml"
    rig_file.write_text(text)
    assert main(["calibrate", "mocap", "--rig", str(rig_file), "--store", str(tmp_path / "cal")]) == 0
    assert "written" in capsys.readouterr().out
    config = load_rig_config(rig_file)
    real_mocap = replace(config, mocap=replace(config.mocap, backend="real"))
    plant = Plant()
    names = [m.name for m in plant.markers]
    estimator = RigCalibrations(real_mocap).mocap_estimator(names)
    error_deg = np.degrees(np.abs(estimator.estimate(plant.mocap_markers()).angles_rad - plant.state()[8:12]))
    assert error_deg.max() < 1.5                           # one frame, with the twin's marker noise


# ------------------------------------------------------------------ one rig for the procedures
def _started_rig() -> Rig:
    config = default_rig_config()
    return Rig(replace(config, twin=replace(config.twin, speed=float(SPEED)))).start()


@pytest.fixture(scope="module")
def _module_rig():
    held = [_started_rig()]
    yield held
    held[0].stop()


def _restarted(rig: Rig) -> Rig:
    rig.stop()
    return _started_rig()


@pytest.fixture
def rig(_module_rig):
    """The module's rig, brought up again after a test that left a device failed (as an operator reconnects):
    a servo bus whose watchdog tripped refuses goals until enabled, and would fail every later pre-flight."""
    if any(h.state == "failed" for h in _module_rig[0].health().values()):
        _module_rig[0] = _restarted(_module_rig[0])
    return _module_rig[0]


def test_sea_at_the_rig_recovers_the_twins_pots(rig):
    plant = rig.twin_plant
    values, residuals, method, lines = rig_runs.run_sea(rig, ("FDP", "ED"), loads_N=load_schedule(3.0, 4))
    assert method.startswith("twin rig:") and "true v0" in lines[0]
    for t in ("FDP", "ED"):
        v0, gain = true_sea(plant, t)
        assert values[t]["v0_V"] == pytest.approx(v0, abs=0.005)          # tolerance: 5 mV
        # tolerance: 2 %. The fit of 4 loads up to 3 N on the twin's 16-bit pots gave 0.999-1.008 of the true
        # gain in six quiet runs and 1.010 once in a full suite: 1 % sat at the edge of its own scatter.
        assert values[t]["gain_N_per_V"] == pytest.approx(gain, rel=0.02)
        assert residuals[t]["rms_N"] < 0.05


def test_nano17_tare_through_the_daq_recovers_the_twins_offsets(rig):
    values, residuals, _, _ = rig_runs.run_nano17(rig)
    truth = rig.twin_plant.nano17.bias_volts
    assert np.abs(np.asarray(values["bias_V"]) - truth).max() < 0.2e-3   # tolerance: 0.2 mV per gauge
    assert residuals["n_samples"] == 500


def test_servo_zero_at_the_rig_agrees_with_the_twins_tension(rig):
    values, _, _, lines = rig_runs.run_servo_zero(rig, ("FDP", "ED"))
    truth = _truth_column(lines)
    for t in ("FDP", "ED"):
        # tolerance: the taut point from the pots within 0.2 mm of the same sweep fitted on the twin's tension
        assert values[t]["taut_excursion_mm"] == pytest.approx(truth[(t,)], abs=0.2)


def test_mocap_at_the_rig_finds_the_twins_mounting(rig):
    plant = rig.twin_plant
    values, residuals, _, _ = rig_runs.run_mocap(rig, duration_s=2.0)
    T = np.asarray(values["world_from_motive"], float)
    M = T[:3, :3].T                                        # motive_from_world
    origin_m = -M @ T[:3, 3]
    angle = np.degrees(np.arccos(np.clip((np.trace(M.T @ plant.config.motive_from_world) - 1) / 2, -1, 1)))
    assert angle < 0.5                                                                    # tolerance: 0.5 deg
    assert np.abs(origin_m - plant.config.motive_origin_m).max() < 0.5e-3                 # tolerance: 0.5 mm
    true_local = {m.name: np.asarray(m.local_m) for m in plant.markers}
    for name, m in values["markers"].items():
        assert np.abs(np.asarray(m["local_mm"]) * 1e-3 - true_local[name]).max() < 1e-3   # tolerance: 1 mm


def test_moment_arms_at_the_rig_come_near_the_twins(rig, _module_rig):
    # once round (the CLI: twice), each pull over 8 s of twin time (the CLI: 4 s): the joints stream's
    # arrival jitter is host time, so a fast twin needs slower pulls for the same alignment error
    for attempt in range(2):
        try:
            values, residuals, _, lines = rig_runs.run_moment_arms(rig, order=TENDONS, ramp_s=8.0)
            break
        except CalibrationError as exc:
            # This test is about the sweep's accuracy; a twin's bus watchdog tripped by a host stalled on a
            # loaded machine (which the procedure rightly stops on: tests/app/procedures/test_procedure_safety.py)
            # gets one more try on a rig brought up again, as an operator would reconnect.
            if attempt or not re.search(DEVICE_TIMING, str(exc)):
                raise
            rig = _module_rig[0] = _restarted(_module_rig[0])
    errors_mm = _truth_column(lines)
    assert set(values["moment_arms"]) == set(TENDONS)
    for t in TENDONS:
        assert residuals[t]["path_rms_mm"] < 0.5       # the fitter's own acceptance
    # tolerance (4x twin, once round, 8 s pulls; docs/calibration.md): FDP at MCP_FE and PIP and FDS at PIP
    # within 1.5 mm RMS over the poses visited (measured 0.25-0.6). The other curves are not asserted: one
    # round leaves them poorly determined (path residuals < 0.2 mm, yet LUM at MCP_FE measured 1.5-8.5 mm off)
    for key in (("FDP", "MCP_FE"), ("FDP", "PIP"), ("FDS", "PIP")):
        assert errors_mm[key] < 1.5, (key, errors_mm[key])


def test_a_failure_at_the_rig_leaves_the_servos_holding(rig, capsys):
    plant = rig.twin_plant
    said = []
    with pytest.raises(CalibrationError, match="FDP.*more than 58 mm"):   # a load that never arrives
        rig_runs.run_sea(rig, ("FDP",), loads_N=np.array([3.0]), reference=lambda t: (lambda: 0.0), say=said.append)
    assert said and "servos hold where they are" in said[-1] and "nothing written" in said[-1]
    _assert_holding(rig, plant)

    calls = []

    def operator_presses_ctrl_c():
        calls.append(1)
        if len(calls) > 3:
            raise KeyboardInterrupt
        return 0.0
    with pytest.raises(KeyboardInterrupt):
        rig_runs.run_sea(rig, ("ED",), loads_N=np.array([3.0]), reference=lambda t: operator_presses_ctrl_c,
                         say=said.append)
    assert "interrupted (Ctrl-C)" in said[-1]
    _assert_holding(rig, plant)
    assert "calibration" not in [s.name for s in rig.hub._subs]   # the probe left the hub


def test_hanging_weights_prompt_in_order_and_a_pot_that_does_not_move_is_refused(rig):
    """The hardware path (the operator hangs masses when asked): on the twin nothing is hung, so the pot
    stays put and the fit refuses it by name; the prompts came up then down, one per mass."""
    prompts = []
    with pytest.raises(CalibrationError, match="SEA FDS: the pot moved only"):
        rig_runs.run_sea(rig, ("FDS",), loads_N=load_schedule(3.0, 4), ask=prompts.append)
    grams = [int(re.search(r"(\d+) g", p).group(1)) for p in prompts]
    assert grams == [51, 136, 221, 306, 221, 136, 51] and prompts[0].startswith("SEA FDS: hang")
    _assert_holding(rig, rig.twin_plant)


def _assert_holding(rig, plant):
    """Torque on, and the servos stay where they stopped (goal = the position when held; a servo still
    moving then brakes on its profile, up to ~4 mm at full speed, and comes back to it)."""
    assert all(s.torque_enabled for s in plant.servo_states())
    time.sleep(0.5 / float(SPEED))
    first = rig.actuators.read().excursion_m
    time.sleep(0.2)
    sample = rig.actuators.read()
    assert not sample.moving.any()
    assert np.allclose(sample.excursion_m, first, atol=1e-4)


def test_a_servo_fault_mid_procedure_ends_it_with_torque_off_and_nothing_written(rig, tmp_path):
    """Last in the file: the fault ends the rig's actuator stream for good (a real servo needs a reboot)."""
    plant = rig.twin_plant
    said = []

    def reference_that_faults_a_servo():
        if not said:
            said.append("faulted")
            plant.inject_overload(3)          # DI shuts down with Overload while FDP is being loaded
        return 0.0
    # Ways the driver's fault ends it, whichever sees it first (a loaded machine reorders them): the actuator
    # stream's fault event tripping the engine, the DI error bits in the failed read (the engine's tick
    # between the read and that event), the procedure finding the rig's stream stopped, or - a test process
    # held up for seconds while the read was in its fault path (seen once under `with-load 2`: 5 s) - the
    # stale actuator stream. Then the trip's safe action (hold) is what the procedure says, and the driver's
    # fault path turns torque off after it: the stream must then say the overload ended it.
    seen = (r"stopped: (actuators: .*overload|servo DI reports hardware error 0x20"
            r"|ServoError: MX-64 ID 4 \(DI\).*overload|stream actuators is stale)")
    with pytest.raises(CalibrationError, match=seen) as stopped:
        rig_runs.run_sea(rig, ("FDP",), loads_N=np.array([3.0]), reference=lambda t: reference_that_faults_a_servo,
                         say=said.append)
    assert "nothing written" in said[-1]
    if "is stale" in str(stopped.value):
        assert "the servos hold" in said[-1]
        assert wait_for(lambda: rig.health()["actuators"].state == "failed", timeout_s=10.0)
        assert re.search(r"ServoError: MX-64 ID 4 \(DI\).*overload", rig.health()["actuators"].last_error)
    else:
        assert "torque off" in said[-1]
    assert not any(s.torque_enabled for s in plant.servo_states())
