"""`uartlab calibrate model --session`: the model fitted to a session recorded through the whole stack (the
twin rig's MX-64 bus, USB-6210 over gRPC, Motive over NatNet, IK, the protocol runner, the recorder). The
twin's "true" finger is FingerParams.uart().perturbed(0.15, 0); the fit starts from it with the Coulomb
coefficient 30 % high and the contact law's a 30 % low and must bring both back."""

from __future__ import annotations

import gc
import shutil
import time
from importlib.resources import files

import h5py
import numpy as np
import pytest
from uartlab.app.cli import main
from uartlab.app.compare.measured import load_trials
from uartlab.app.experiment import Experiment
from uartlab.app.model_sessions import read_session_recordings
from uartlab.app.rig import Rig
from uartlab.app.rig_config import parse_rig_config
from uartlab.app.session import RecordingSession
from uartlab.calibration.applied import calibrated_params
from uartlab.calibration.errors import CalibrationError
from uartlab.calibration.model_fit import get_param, set_params
from uartlab.calibration.store import CalibrationStore
from uartlab.protocols.suite import parse_suite
from uartlab.sim import FingerParams

pytestmark = pytest.mark.realtime

PERTURBATION, SPEED = 0.15, 1.0   # the twin's truth: uart().perturbed(0.15, seed 0); real time (2x trips under load)
START_FACTORS = {"coulomb": 1.3, "a": 0.7}   # where the fit starts, relative to the twin's truth
# Tolerances, about twice the largest error seen: on seven twin-rig sessions (two at 2x, five at 1x on a
# machine loaded to 7 on 2 cores) the same fit came back within 1.1 % (coulomb) and 5.3 % (a) of the truth.
TOLERANCE = {"coulomb": 0.03, "a": 0.10}
FREE, CONTACT = "free/FDP", "contact/Curl/FDP+ED@67.5deg"
SUITE = f"""
[suite]
name = "model_fit"
repeats = 1
[suite.settle]
speed_deg_s = 0.1
measured_speed_deg_s = 1.0
window_s = 1.0
hold_s = 0.1
timeout_s = 20.0
[suite.limits]
max_excursion_mm = 20.0
max_tendon_force_N = 40.0
max_fingertip_force_N = 15.0
[[trial]]
name = "{FREE}"
pose = "Flex"
pulls = [ {{ tendon = "FDP", amplitude_mm = 15, duration_s = 4 }} ]
return = true
[[trial]]
name = "{CONTACT}"
pose = "Curl"
surface_angle_deg = 67.5
pulls = [ {{ tendon = "FDP", amplitude_mm = 15, duration_s = 4 }},
          {{ tendon = "ED", amplitude_mm = 7.5, duration_s = 4 }} ]
return = true
"""


def _record(path) -> tuple[list[str], str]:
    """(each trial's outcome, how the run ended)."""
    text = files("uartlab.app").joinpath("data/twin_rig.toml").read_text(encoding="utf-8")
    text = text.replace("perturbation = 0.0 ", f"perturbation = {PERTURBATION} ")
    text = text.replace("speed = 1.0 ", f"speed = {SPEED} ")
    with Rig(parse_rig_config(text, "twin_rig.toml")) as rig:
        session = RecordingSession(rig, path)
        time.sleep(0.3)        # the twin starts free: the Nano17 is unloaded, tare it as an operator would
        rig.tare_nano17()
        time.sleep(0.3)
        experiment = Experiment(rig, parse_suite(SUITE, "model_fit.toml"), session)
        try:
            experiment.start(preflight_timeout_s=10.0)
            assert experiment.wait(120.0)
            status = experiment.status()
            return [r.outcome for r in status.results], f"{status.phase}: {status.fault_reason}"
        finally:
            experiment.close()
            session.close()


@pytest.fixture(scope="module")
def session_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("sessions") / "twin.h5"
    # conftest freezes the heap for each realtime test, which is after a module fixture has run: freeze it
    # here too, so a full GC pass cannot stall the rig's device threads past the stale-stream limit
    gc.freeze()
    try:
        for _ in range(2):  # a loaded 2-core machine can still trip a stale-stream interlock: once more
            outcomes, ended = _record(path)
            if outcomes == ["settled", "settled"]:
                return path
            path.unlink(missing_ok=True)
    finally:
        gc.unfreeze()
    pytest.skip(f"the twin rig did not complete the suite twice ({outcomes}, {ended}): a rig problem, not the fit's")


def test_session_trials_are_what_compare_reads_resampled(session_file):
    sessions = read_session_recordings([session_file])
    free, contact = sessions.recordings
    assert (free.name, contact.name) == (FREE, CONTACT) and not sessions.notes
    trials = {t.name: t for t in load_trials(session_file)[0]}
    for rec in (free, contact):
        trial = trials[rec.name]
        assert np.allclose(np.diff(rec.t_s), 0.04) and rec.t_s[-1] == pytest.approx(trial.duration_s, abs=0.04)
        assert np.allclose(rec.theta_rad, trial.signals["joint_angles_rad"].on_grid(rec.t_s))
        assert np.allclose(rec.start_theta_rad, trial.initial("joint_angles_rad"))
        assert np.allclose(rec.excursion_m[0], trial.initial("excursion_m"))
        assert np.degrees(np.ptp(rec.theta_rad[:, 2])) > 3.0   # PIP really moved in both trials
    assert not free.contact and not free.tip_force_N.any()
    assert contact.contact and contact.surface is None and contact.surface_angle_deg == 67.5
    assert np.allclose(contact.tip_force_N, trials[CONTACT].signals["fingertip_force_N"].on_grid(contact.t_s))
    assert np.linalg.norm(contact.tip_force_N[-1]) > 0.2   # pressed on the surface at the end


def test_cli_fits_the_session_and_the_store_applies_it(session_file, tmp_path, capsys):
    truth = FingerParams.uart().perturbed(PERTURBATION, 0)
    start = set_params(truth, {n: get_param(truth, n) * f for n, f in START_FACTORS.items()})
    start.to_toml(tmp_path / "start.toml")
    store = tmp_path / "calibrations"
    t0 = time.monotonic()
    assert main(["calibrate", "model", "--session", str(session_file), "--params", "coulomb", "a", "--start",
                 str(tmp_path / "start.toml"), "--workers", "2", "--store", str(store), "--operator", "ci"]) == 0
    seconds = time.monotonic() - t0
    out = capsys.readouterr().out
    assert f"2 trials ({CONTACT}, {FREE})" in out and "rms angle" in out and "1-sigma" in out, out
    params, sources = calibrated_params(CalibrationStore(store))
    assert sources and sources[0].startswith("model (a, coulomb) from")
    record = CalibrationStore(store).current("model")
    for name, tolerance in TOLERANCE.items():
        fitted, true = get_param(params, name), get_param(truth, name)
        sigma = record.residuals["std_log_factor"][name]
        print(f"{name}: fitted {fitted:.5g}, truth {true:.5g} ({fitted / true - 1:+.2%}), 1-sigma {sigma:.2%}")
        assert fitted == pytest.approx(true, rel=tolerance), name
        assert record.values["start"][name] == pytest.approx(get_param(start, name))
        assert 0.0 < sigma < 0.1                                    # determined, and not pretending to be exact
    assert record.residuals["rms_angle_deg"] < record.residuals["rms_angle_deg_start"]
    assert record.residuals["rms_force_N"] < 0.5 * record.residuals["rms_force_N_start"]
    print(f"calibrate model --session: {seconds:.1f} s")


def test_dry_run_writes_nothing(session_file, tmp_path, capsys):
    store = tmp_path / "calibrations"
    assert main(["calibrate", "model", "--session", str(session_file), "--trial", FREE, "--params", "coulomb",
                 "--workers", "2", "--store", str(store), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"1 trials ({FREE})" in out and "dry run: nothing written" in out
    assert not store.exists()


def _spoilt(session_file, tmp_path, name, spoil):
    path = tmp_path / name
    shutil.copy(session_file, path)
    with h5py.File(path, "r+") as f:
        spoil(f)
    return path


def _nan(*datasets):
    def spoil(f):
        for name in datasets:
            f[name][...] = np.nan
    return spoil


@pytest.mark.parametrize(("name", "spoil", "message"), [
    ("no_trials.h5", lambda f: f.__delitem__("trials/table"), "no_trials.h5: the session has no trials"),
    ("no_angles.h5", _nan("streams/joints/angles_rad", "streams/runner/joint_angles_rad"),
     "no_angles.h5: trial 1 (free/FDP): no samples of joints.angles_rad"),
    ("no_wrench.h5", _nan("streams/daq/wrench", "streams/runner/wrench"),
     f"no_wrench.h5#2 {CONTACT} (repeat 1): a surface-contact trial without the Nano17 wrench"),
])
def test_a_bad_session_is_one_error_naming_file_and_trial_and_nothing_is_written(session_file, tmp_path, capsys,
                                                                               name, spoil, message):
    path = _spoilt(session_file, tmp_path, name, spoil)
    with pytest.raises(CalibrationError, match="model calibration") as info:
        read_session_recordings([session_file, path])
    assert message in str(info.value)
    store = tmp_path / "calibrations"
    assert main(["calibrate", "model", "--session", str(path), "--params", "coulomb", "--store", str(store)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not store.exists()


def test_bad_requests_are_refused(session_file, tmp_path, capsys):
    text = tmp_path / "notes.h5"
    text.write_text("not HDF5", encoding="utf-8")
    store = tmp_path / "calibrations"
    for argv, message in ((["--session", str(text)], "notes.h5: not a session file"),
                          (["--session", str(session_file), "--trial", "free/XYZ"], "no trial named 'free/XYZ'"),
                          (["--session", str(session_file), "--trial", FREE, "--params", "a"],
                           "contact parameters need at least one surface-contact trial"),
                          (["--start", str(text)], "--trial and --start need --session")):
        assert main(["calibrate", "model", *argv, "--workers", "1", "--store", str(store)]) == 2
        assert message in capsys.readouterr().err
    assert not store.exists()
