"""`uartlab calibrate model --session`: the model fitted to a session recorded through the whole stack (the
twin rig's MX-64 bus, USB-6210 over gRPC, Motive over NatNet, IK, the protocol runner, the recorder). The
twin's "true" finger is FingerParams.uart().perturbed(0.15, 0); the fit starts from it with the Coulomb
coefficient 30 % high and must bring it back. The contact law's a is recovered from a session written from the
model (app/compare/synthetic.py, sensor noise, no rig): one contact trial does not determine it (the cost
along a is flat within a few % of the noise level and ragged with stick/slip, docs/calibration.md), four do.
The bad-file tests spoil that written session, so they do not depend on the rig."""

from __future__ import annotations

import shutil
import time

import h5py
import numpy as np
import pytest
from conftest import TWIN_SESSION_CONTACT, TWIN_SESSION_FREE, TWIN_SESSION_PERTURBATION
from uartlab.app.cli.main import main
from uartlab.app.compare.measured import load_trials
from uartlab.app.compare.synthetic import write_model_session
from uartlab.app.procedures.from_sessions import read_session_recordings
from uartlab.calibration.applied import calibrated_params
from uartlab.calibration.executors import executor_for
from uartlab.calibration.model_fit import fit_model, get_param, set_params
from uartlab.calibration.store import CalibrationStore
from uartlab.calibration.trial_jackknife import jackknife_sigma
from uartlab.errors import CalibrationError
from uartlab.sim import FingerParams
from uartlab.sim.scenarios import contact_trial, free_motion_trial

pytestmark = pytest.mark.realtime

PERTURBATION = TWIN_SESSION_PERTURBATION   # the twin's truth: uart().perturbed(0.15, seed 0), at 1x (conftest)
START_FACTOR = 1.3   # the fit starts with the twin's Coulomb coefficient 30 % high
# Tolerance about three times the largest error seen: on five twin-rig sessions (2x and 1x, the machine loaded
# to 7 on 2 cores) the fit came back within 1.1 % of the truth (1-sigma 0.15-0.3 %).
TOLERANCE = 0.03
# the written session: free FDP and four contact trials; the fit starts at the defaults, 20-25 % off. On three
# noise seeds: coulomb within 0.8 %, a within 3.7 % (1-sigma 0.15 % and 0.7 %).
SYNTHETIC_TOLERANCE = {"coulomb": 0.03, "a": 0.08}
FREE, CONTACT = TWIN_SESSION_FREE, TWIN_SESSION_CONTACT


@pytest.fixture(scope="module")
def session_file(twin_session_file):
    """The twin rig's session of both trials (tests/conftest.py), shared with compare's test."""
    return twin_session_file


SYNTHETIC_TRUTH = {"coulomb": 0.8, "a": 1.25}   # relative to the UART defaults, where the fit starts


@pytest.fixture(scope="module")
def synthetic_file(tmp_path_factory):
    """A session in the rig's layout written from the model (app/compare/synthetic.py), with sensor noise: no
    rig, so the reader's and the fit's own errors show without the rig's."""
    base = FingerParams.uart()
    truth = set_params(base, {n: get_param(base, n) * f for n, f in SYNTHETIC_TRUTH.items()})
    path = tmp_path_factory.mktemp("synthetic") / "model.h5"
    trials = [free_motion_trial("FDP"), contact_trial("Curl", "FDP", "ED"), contact_trial("Hook", "FDP", "ED"),
              contact_trial("Curl", "FDS", "LUM"), contact_trial("Hook", "FDS", "DI")]
    write_model_session(path, trials, truth, angle_noise_deg=0.3, force_noise_N=0.01)
    return path, truth


def test_a_written_session_gives_back_its_true_parameters(synthetic_file):
    path, truth = synthetic_file
    sessions = read_session_recordings([path])
    with executor_for(None, workers=2) as ex:
        fit = fit_model(FingerParams.uart(), sessions.recordings, tuple(SYNTHETIC_TRUTH), executor=ex)
        between, refits = jackknife_sigma(fit, sessions.recordings, ex)
    assert refits == 5 and not fit.undetermined
    for name in SYNTHETIC_TRUTH:
        error = fit.values[name] / get_param(truth, name) - 1
        print(f"{name}: {error:+.2%} of the truth, 1-sigma {fit.std_factor[name]:.2%}, "
              f"between trials {between[name]:.2%}")
        assert abs(error) < SYNTHETIC_TOLERANCE[name], name
        # the trials disagree by more than the noise along them says, and that spread covers the error
        assert between[name] > fit.std_factor[name] and abs(error) < 3 * between[name], name


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
    start = set_params(truth, {"coulomb": truth.coulomb_coefficient_m * START_FACTOR})
    start.to_toml(tmp_path / "start.toml")
    store = tmp_path / "calibrations"
    t0 = time.monotonic()
    assert main(["calibrate", "model", "--session", str(session_file), "--fit", "coulomb", "--params",
                 str(tmp_path / "start.toml"), "--workers", "2", "--store", str(store), "--operator", "ci",
                 "--jackknife"]) == 0
    seconds = time.monotonic() - t0
    out = capsys.readouterr().out
    assert f"2 trials ({CONTACT}, {FREE})" in out and "rms angle" in out and "1-sigma" in out, out
    params, sources = calibrated_params(CalibrationStore(store))
    assert sources and sources[0].startswith("model (coulomb) from")
    record = CalibrationStore(store).current("model")
    fitted, true = params.coulomb_coefficient_m, truth.coulomb_coefficient_m
    sigma = record.residuals["std_log_factor"]["coulomb"]
    between = record.residuals["jackknife_std_log_factor"]["coulomb"]
    print(f"coulomb: fitted {fitted:.5g}, truth {true:.5g} ({fitted / true - 1:+.2%}), 1-sigma {sigma:.2%}, "
          f"between the two trials {between:.2%}; calibrate model --session --jackknife took {seconds:.1f} s")
    assert "between-trial 1-sigma (jackknife, 2 refits with one trial left out): coulomb" in out
    assert fitted == pytest.approx(true, rel=TOLERANCE)
    assert record.values["start"]["coulomb"] == pytest.approx(start.coulomb_coefficient_m)
    assert 0.0 < sigma < 0.1                                        # determined, and not pretending to be exact
    assert record.residuals["rms_angle_deg"] < record.residuals["rms_angle_deg_start"]
    assert record.residuals["rms_force_N"] < 0.5 * record.residuals["rms_force_N_start"]


def test_dry_run_writes_nothing(session_file, tmp_path, capsys):
    store = tmp_path / "calibrations"
    assert main(["calibrate", "model", "--session", str(session_file), "--trial", FREE, "--fit", "coulomb",
                 "--workers", "2", "--store", str(store), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"1 trials ({FREE})" in out and "dry run: nothing written" in out
    assert not store.exists()


def _spoilt(session_file, tmp_path, name, spoil):
    """A copy of the written session with ``spoil`` applied to it through h5py."""
    path = tmp_path / name
    shutil.copy(session_file, path)
    with h5py.File(path, "r+") as f:
        spoil(f)
    return path


def _nan(*datasets):
    def spoil(f):
        for name in datasets:
            if name in f:
                f[name][...] = np.nan
    return spoil


@pytest.mark.parametrize(("name", "spoil", "message"), [
    ("no_trials.h5", lambda f: f.__delitem__("trials/table"), "no_trials.h5: the session has no trials"),
    ("no_angles.h5", _nan("streams/joints/angles_rad", "streams/runner/joint_angles_rad"),
     "no_angles.h5: trial 1 (free/FDP): no samples of joints.angles_rad"),
    ("no_wrench.h5", _nan("streams/daq/wrench", "streams/runner/wrench"),
     f"no_wrench.h5#2 {CONTACT} (repeat 1): a surface-contact trial without the Nano17 wrench"),
])
def test_a_bad_session_is_one_error_naming_file_and_trial_and_nothing_is_written(synthetic_file, tmp_path, capsys,
                                                                               name, spoil, message):
    good, _ = synthetic_file
    path = _spoilt(good, tmp_path, name, spoil)
    with pytest.raises(CalibrationError, match="model calibration") as info:
        read_session_recordings([good, path])
    assert message in str(info.value)
    store = tmp_path / "calibrations"
    assert main(["calibrate", "model", "--session", str(path), "--fit", "coulomb", "--store", str(store)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not store.exists()


def test_bad_requests_are_refused(synthetic_file, tmp_path, capsys):
    session_file, _ = synthetic_file
    text = tmp_path / "notes.h5"
    text.write_text("not HDF5", encoding="utf-8")
    store = tmp_path / "calibrations"
    for argv, message in ((["--session", str(text)], "notes.h5: not a session file"),
                          (["--session", str(session_file), "--trial", "free/XYZ"], "no trial named 'free/XYZ'"),
                          (["--session", str(session_file), "--trial", FREE, "--fit", "a"],
                           "contact parameters need at least one surface-contact trial"),
                          (["--params", str(text)], "--trial, --params and --jackknife need --session")):
        assert main(["calibrate", "model", *argv, "--workers", "1", "--store", str(store)]) == 2
        assert message in capsys.readouterr().err
    assert not store.exists()


def test_what_the_trials_cannot_determine_is_said_and_not_written(synthetic_file, tmp_path, capsys):
    path, truth = synthetic_file
    store = tmp_path / "calibrations"
    # no trial slides sideways: mu_y does not move the residual at all
    assert main(["calibrate", "model", "--session", str(path), "--trial", FREE, CONTACT, "--fit", "coulomb",
                 "mu_y", "--workers", "2", "--store", str(store), "--operator", "ci"]) == 0
    out = capsys.readouterr().out
    assert "mu_y is not determined by these trials (1-sigma inf %): not written" in out, out
    record = CalibrationStore(store).current("model")
    assert set(record.values["fitted"]) == {"coulomb"} and set(record.values["not_determined"]) == {"mu_y"}
    params, _ = calibrated_params(CalibrationStore(store))
    assert params.contact.mu_y == FingerParams.uart().contact.mu_y
    assert params.coulomb_coefficient_m == pytest.approx(truth.coulomb_coefficient_m, rel=0.03)


def test_a_fit_that_does_not_converge_is_an_error(synthetic_file, tmp_path):
    path, _ = synthetic_file
    recordings = read_session_recordings([path], [FREE]).recordings
    with pytest.raises(CalibrationError, match="did not converge in 2 evaluations"):
        fit_model(FingerParams.uart(), recordings, ("coulomb",), max_iterations=1)


def test_what_the_reader_notes_about_a_trial_is_passed_on(tmp_path):
    path = tmp_path / "untared.h5"
    write_model_session(path, [contact_trial("Curl", "FDP", "ED")], tared=False)
    (note,) = read_session_recordings([path]).notes
    assert note.startswith(f"untared.h5#1 {CONTACT} (repeat 1): the Nano17 was not tared"), note
