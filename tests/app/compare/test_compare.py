"""`uartlab compare`: the paper's metrics on sessions whose truth is known (written from the model)."""

from __future__ import annotations

import csv
import os
import re

import h5py
import numpy as np
import pytest
from uartlab.app.cli.main import main
from uartlab.app.compare import metrics
from uartlab.app.compare.analysis import ParamSet, compare
from uartlab.app.compare.measured import CompareError, load_trials
from uartlab.app.compare.resim import Start, resimulate
from uartlab.app.compare.synthetic import write_model_session
from uartlab.app.record.writer import SessionRecorder
from uartlab.app.rig.rig import actuators_spec
from uartlab.sim import Finger, FingerParams, PlaneSurface
from uartlab.sim.scenarios import contact_trial, free_motion_trial
from uartlab.sim.surface import fingertip_force_from_sensor, sensor_force_from_fingertip

TRIALS = [free_motion_trial("FDP"), contact_trial("Curl", "FDP", "ED")]
PERTURBED = FingerParams.uart().perturbed(0.2, 3)
SPREAD = {"pretension_spread": 0.5, "deflection_spread": 0.3}  # repeats differ: non-zero SDs


@pytest.fixture(scope="module")
def perturbed_session(tmp_path_factory):
    path = tmp_path_factory.mktemp("compare") / "perturbed.h5"
    truth = write_model_session(path, TRIALS, PERTURBED, repeats=3, seed=1, **SPREAD)
    return str(path), truth


def run_compare(paths, *sets):
    trials, skipped = [], []
    for p in paths:
        t, s = load_trials(p)
        trials += t
        skipped += s
    sets = sets or (ParamSet("defaults", "", Finger()),)
    return compare(trials, list(sets), list(paths), skipped)


# ------------------------------------------------------------------ (1) the model against itself
def test_unperturbed_session_gives_errors_near_zero(tmp_path):
    path = tmp_path / "same.h5"
    write_model_session(path, TRIALS, repeats=2, seed=2, angle_noise_deg=0.1, force_noise_N=0.005)
    c = run_compare([str(path)])
    assert [g.name for g in c.groups] == [t.name for t in TRIALS]
    for g in c.groups:
        r = g.results["defaults"]
        assert g.n == 2 and r.sim.settled
        assert np.all(r.joint_mae_deg < 0.15), (g.name, r.joint_mae_deg)
        assert np.all(np.abs(r.repeat_theta_err_deg) < 0.2)
        assert np.all(r.rmse_theta_deg < 0.2)
        if g.kind == "contact":   # Curl FDP+ED settles at a 0.21 N press: 5 mN of noise is 2.4 % of it
            assert r.force["magnitude_pct"] < 2.5
            assert r.force["direction_deg"] < 1.0
            assert np.all(np.abs(r.force["mean_N"]) < 0.015)


def test_repeat_scatter_enters_the_papers_error_but_not_the_per_repeat_one(tmp_path):
    """The paper simulates once from the repeats' AVERAGE start: with a perfect model the repeats scatter
    around that one simulation, so its MAE is about the SD, while each repeat's own re-simulation is exact."""
    path = tmp_path / "scatter.h5"
    write_model_session(path, TRIALS, repeats=2, seed=2, **SPREAD)
    for g in run_compare([str(path)]).groups:
        r = g.results["defaults"]
        assert np.all(np.abs(r.repeat_theta_err_deg) < 0.01)
        assert g.joint_sd_deg.max() > 0.5
        assert np.all(r.joint_mae_deg <= g.joint_sd_deg + 0.05), (g.name, r.joint_mae_deg, g.joint_sd_deg)


# ------------------------------------------------------------------ (2) known perturbation = ground truth
def _ground_truth(repeats, finger):
    """The paper's comparison computed directly with sim and numpy: one simulation from the average initial
    state (angles, tensions, contact force) with the trial's sigmoids, against each repeat's true steady state."""
    trial = repeats[0].trial
    theta0 = np.mean([r.theta0_rad for r in repeats], axis=0)
    x0 = finger.initial_state(np.degrees(theta0), np.mean([r.tensions0_N for r in repeats], axis=0))
    surface = None
    if trial.kind == "contact":
        f0 = np.mean([r.tip_force_N[0] for r in repeats], axis=0)
        n = PlaneSurface(trial.surface_angle_deg, (0, 0, 0)).normal
        c = finger.params.contact
        deflection_m = 1e-3 * (f0 @ n / c.a_N) ** (1 / c.b)  # F_N = a |dZ_mm|^b, inverted
        surface = PlaneSurface.touching(finger.interaction_point(theta0), c.pad_radius_m, trial.surface_angle_deg,
                                        deflection_m)
    sim = finger.simulate(x0, trial.pulls, surface)
    measured = np.degrees([r.steady_theta_rad for r in repeats])
    truth = {"mae": np.abs(measured - np.degrees(sim.x[-1, 8:12])).mean(axis=0), "sd": measured.std(axis=0, ddof=1)}
    if surface is not None:
        f_exp = np.array([r.steady_force_N for r in repeats])
        f_sim = sim.fingertip_force_N()[-1]
        avg = f_exp.mean(axis=0)
        truth |= {"mean": (f_exp - f_sim).mean(axis=0), "fsd": (f_exp - f_sim).std(axis=0, ddof=1),
                  "mag": 100 * abs((np.linalg.norm(avg) - np.linalg.norm(f_sim)) / np.linalg.norm(avg)),
                  "dir": np.degrees(np.arccos(f_sim @ avg / (np.linalg.norm(avg) * np.linalg.norm(f_sim))))}
    return truth


def test_perturbed_session_metrics_equal_ground_truth(perturbed_session):
    path, truth = perturbed_session
    c = run_compare([path])
    finger = Finger()
    for g in c.groups:
        expected = _ground_truth([t for t in truth if t.name == g.name], finger)
        r = g.results["defaults"]
        assert g.n == 3
        np.testing.assert_allclose(r.joint_mae_deg, expected["mae"], atol=0.05, err_msg=g.name)
        np.testing.assert_allclose(g.joint_sd_deg, expected["sd"], atol=0.02, err_msg=g.name)
        assert expected["mae"].max() > 2.0  # the perturbation is visible: the test could fail
        if g.kind == "contact":
            np.testing.assert_allclose(r.force["mean_N"], expected["mean"], atol=3e-3)
            np.testing.assert_allclose(r.force["sd_N"], expected["fsd"], atol=2e-3)
            assert r.force["magnitude_pct"] == pytest.approx(expected["mag"], abs=0.5)
            assert r.force["direction_deg"] == pytest.approx(expected["dir"], abs=0.5)
            assert expected["mag"] > 10.0


def test_second_parameter_set_equal_to_the_truth_has_near_zero_errors(perturbed_session, tmp_path):
    """A vs B on the same measurements, repeats split over two sessions: the true parameters explain the data."""
    path, _ = perturbed_session
    second = tmp_path / "second.h5"
    write_model_session(second, TRIALS, PERTURBED, repeats=2, seed=7, **SPREAD)
    c = run_compare([path, str(second)], ParamSet("A", "", Finger()), ParamSet("B", "", Finger(PERTURBED)))
    for g in c.groups:
        assert g.n == 5  # 3 + 2 repeats, grouped by name across the sessions
        a, b = g.results["A"], g.results["B"]
        assert np.all(np.abs(b.repeat_theta_err_deg) < 0.05) and np.abs(a.repeat_theta_err_deg).max() > 2.0
        assert b.joint_mae_deg.max() < 0.5 * a.joint_mae_deg.max()
        if g.kind == "contact":
            assert np.all(np.abs(b.repeat_force_err_N) < 2e-3) and a.force["magnitude_pct"] > 10


def test_a_twin_run_faster_than_real_time_compares_in_protocol_seconds(perturbed_session, tmp_path):
    """Trials recorded at 4x (host time 4x shorter, time_scale 4 in the trial) give the same metrics."""
    path, _ = perturbed_session
    fast = tmp_path / "fast.h5"
    write_model_session(fast, TRIALS, PERTURBED, repeats=3, seed=1, time_scale=4.0, **SPREAD)
    slow_c, fast_c = run_compare([path]), run_compare([str(fast)])
    for g_slow, g_fast in zip(slow_c.groups, fast_c.groups, strict=True):
        assert g_fast.repeats[0].duration_s == pytest.approx(g_slow.repeats[0].duration_s)
        np.testing.assert_allclose(g_fast.results["defaults"].joint_mae_deg, g_slow.results["defaults"].joint_mae_deg,
                                   atol=1e-3)  # host times are rounded differently, nothing more


# ------------------------------------------------------------------ (3) the formulas and the force frame
def test_table6_footnotes_on_hand_made_vectors():
    assert metrics.magnitude_error(np.array([3.0, 4.0, 0.0]), np.array([0.0, 5.0, 0.0])) == 0.0
    assert metrics.direction_error_deg(np.array([3.0, 4.0, 0.0]), np.array([0.0, 5.0, 0.0])) == pytest.approx(
        np.degrees(np.arccos(0.8)))
    assert metrics.magnitude_error(np.array([3.0, 4.0, 0.0]), np.array([6.0, 8.0, 0.0])) == pytest.approx(1.0)
    assert metrics.direction_error_deg(np.array([1.0, 0, 0]), np.array([-2.0, 0, 0])) == pytest.approx(180.0)
    assert np.isnan(metrics.direction_error_deg(np.zeros(3), np.array([1.0, 0, 0])))
    # the paper uses the AVERAGE measured force for b and c: repeats (1,0,0) and (0,1,0) average to 45 deg
    f = metrics.force_errors(np.array([[1.0, 0, 0], [0, 1.0, 0]]), np.array([1.0, 1.0, 0.0]) / 2)
    assert f["direction_deg"] == pytest.approx(0.0, abs=1e-5) and f["magnitude_pct"] == pytest.approx(0.0)
    np.testing.assert_allclose(f["mean_N"], [0.0, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(f["sd_N"], [np.sqrt(0.5), np.sqrt(0.5), 0.0])


def test_a_resimulation_starts_at_the_measured_force_vector_shear_included():
    """The paper's Fig. 16: every simulated force component starts at the measured one, not just the normal."""
    finger = Finger(FingerParams.uart())
    theta = np.radians([0.0, 45.0, 50.0, 30.0])
    s_x, s_y, n = PlaneSurface(45.0, (0.0, 0.0, 0.0)).frame.T
    measured = 0.6 * n + 0.08 * s_x - 0.05 * s_y            # world frame, on the fingertip
    curves = resimulate(finger, Start(theta, np.full(6, 0.5), 45.0, measured), np.array([0.0, 1.0]),
                        np.zeros((2, 6)))
    np.testing.assert_allclose(curves.tip_force_N[0], measured, atol=1e-9)
    assert curves.notes == ()
    sliding = 0.6 * n + 0.9 * s_x                            # beyond mu_x * F_N: the pad could not hold it
    curves = resimulate(finger, Start(theta, np.full(6, 0.5), 45.0, sliding), np.array([0.0, 1.0]), np.zeros((2, 6)))
    mu_x = finger.params.contact.mu_x
    assert curves.tip_force_N[0] @ s_x == pytest.approx(mu_x * 0.6) and curves.tip_force_N[0] @ n == pytest.approx(0.6)
    assert any("beyond the model's friction limit" in note for note in curves.notes)


def test_joint_angle_error_and_sd_on_hand_made_values():
    mae, sd = metrics.joint_angle_errors(np.array([[1.0, 2, 3, 4], [3, 2, 1, 0]]), np.array([2.0, 2, 2, 2]))
    np.testing.assert_allclose(mae, [1, 0, 1, 2])
    np.testing.assert_allclose(sd, [np.sqrt(2), 0, np.sqrt(2), 2 * np.sqrt(2)])
    assert np.all(np.isnan(metrics.joint_angle_errors(np.ones((1, 4)), np.zeros(4))[1]))  # one repeat: no SD


def test_nano17_wrench_to_world_matches_the_twin_plant():
    from uartlab.drivers.twins.plant import Plant, PlantConfig

    plant = Plant(PlantConfig(pose="Curl", surface_angle_deg=67.5, perturbation=0.1, seed=4))
    plant.advance(0.05)
    x, aux = plant.stepper.x.copy(), plant.stepper.aux.copy()
    on_tip = plant.finger.contact_forces(x, aux, plant.surface)[0]
    assert np.linalg.norm(on_tip) > 0.01
    np.testing.assert_allclose(fingertip_force_from_sensor(plant.sensor_wrench()[:3], 67.5), on_tip, atol=1e-12)
    np.testing.assert_allclose(sensor_force_from_fingertip(on_tip, 67.5), plant.sensor_wrench()[:3], atol=1e-12)
    # pressing straight into a 90 deg wall (sensor -z) pushes the tip back along +X
    np.testing.assert_allclose(fingertip_force_from_sensor([0, 0, -1.0], 90.0), [1, 0, 0],
                               atol=1e-12)


# ------------------------------------------------------------------ (4) the report
def test_cli_writes_csv_html_and_figures(perturbed_session, tmp_path, capsys):
    path, _ = perturbed_session
    out = tmp_path / "report"
    assert main(["compare", path, "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "Table 4" in text and "Table 5" in text and "Table 6" in text and "free/FDP" in text
    for name in ("table4_free_motion", "table5_surface_contact", "table6_contact_force", "summary", "per_repeat",
                 "transient_rmse"):
        with open(out / f"{name}.csv", newline="") as f:
            rows = list(csv.reader(f))
        assert len(rows) >= 2 and all(len(r) == len(rows[0]) for r in rows), name
    with open(out / "table4_free_motion.csv", newline="") as f:
        row = next(r for r in csv.DictReader(f) if r["trial"] == "free/FDP")
    c = run_compare([path])
    assert float(row["PIP MAE defaults [deg]"]) == pytest.approx(c.groups[0].results["defaults"].joint_mae_deg[2],
                                                                 rel=1e-5)
    # Table 6's per-axis errors along the paper's axes (its Fig. 12 frame: Y dorsal = world Z, Z radial = world Y),
    # the vectors in our world frame
    with open(out / "table6_contact_force.csv", newline="") as f:
        row = next(csv.DictReader(f))
    force = next(g for g in c.groups if g.kind == "contact").results["defaults"].force
    for column, world in (("X distal", 0), ("Y dorsal (world Z)", 2), ("Z radial (world Y)", 1)):
        assert float(row[f"{column} mean defaults [N]"]) == pytest.approx(force["mean_N"][world], abs=1e-6)
    assert float(row["F_exp world Z [N]"]) == pytest.approx(force["average_exp_N"][2], abs=1e-6)
    html = (out / "report.html").read_text()
    linked = set(re.findall(r"src='([^']+\.png)'", html))
    on_disk = {f"figures/{n}" for n in os.listdir(out / "figures")}
    assert linked == on_disk and len(on_disk) == 2 + 2 * 2 + 1  # Fig 13 per pose, 14+15 per trial, 16 contact
    assert all(os.path.getsize(out / p) > 10_000 for p in on_disk)
    assert len(os.listdir(out / "transients")) == 2


def test_cli_json_and_trial_filter(perturbed_session, tmp_path, capsys):
    import json

    path, _ = perturbed_session
    assert main(["compare", path, "--trials", "contact/*", "--no-figures", "--json", "--out", str(tmp_path / "r")]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [t["trial"] for t in report["trials"]] == ["contact/Curl/FDP+ED@67.5deg"]
    d = report["trials"][0]["sets"]["defaults"]
    assert len(d["joint_mae_deg"]) == 4 and d["magnitude_error_pct"] > 0 and len(report["trials"][0]["sd_deg"]) == 4
    assert not (tmp_path / "r" / "figures").exists() and (tmp_path / "r" / "table6_contact_force.csv").exists()
    assert "matches" in _cli_error(capsys, path, "--trials", "nothing*", "--out", str(tmp_path / "r2"))


# ------------------------------------------------------------------ (5) bad input: one clear line
def _cli_error(capsys, *argv) -> str:
    assert main(["compare", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    return err


def test_not_a_session_file(tmp_path, capsys):
    bogus = tmp_path / "notes.h5"
    bogus.write_text("not hdf5")
    assert "notes.h5: not a session file" in _cli_error(capsys, str(bogus))
    plain = tmp_path / "plain.h5"
    with h5py.File(plain, "w") as f:
        f["x"] = 1
    assert "plain.h5: not a uartlab session file" in _cli_error(capsys, str(plain))
    assert "missing.h5: no such file" in _cli_error(capsys, str(tmp_path / "missing.h5"))


def test_session_without_trials(tmp_path, capsys):
    path = tmp_path / "empty.h5"
    with SessionRecorder(path) as rec:
        rec.add_stream(actuators_spec(100.0))
    with pytest.raises(CompareError, match="empty.h5: the session has no trials"):
        load_trials(path)
    assert "has no trials" in _cli_error(capsys, str(path))


def test_a_session_without_trials_is_skipped_with_a_note_and_the_batch_goes_on(perturbed_session, tmp_path, capsys):
    from uartlab.app.cli.progress import parse_line

    empty = tmp_path / "empty.h5"
    with SessionRecorder(empty) as rec:
        rec.add_stream(actuators_spec(100.0))
    good, _ = perturbed_session
    out = tmp_path / "r"
    assert main(["compare", str(empty), good, "--out", str(out), "--no-figures", "--progress"]) == 0
    captured = capsys.readouterr()
    notes = [line for line in captured.err.splitlines() if parse_line(line) is None and line.strip()]
    assert notes == [f"compare: skipping {empty}: the session has no trials (record with a protocol suite; "
                     "`uartlab record` alone records streams but no trials)"]
    steps = [parse_line(line) for line in captured.err.splitlines() if parse_line(line) is not None]
    assert ("compare: re-simulating", len(TRIALS), len(TRIALS)) in steps and steps[-1] == ("compare: done", 1, 1)
    assert "skipped empty.h5: the session has no trials" in captured.out
    assert (out / "table4_free_motion.csv").is_file() and "empty.h5" in (out / "report.html").read_text()


def test_unknown_params_key(perturbed_session, tmp_path, capsys):
    path, _ = perturbed_session
    bad = tmp_path / "q.toml"
    bad.write_text(FingerParams.uart().to_toml().replace("[contact]", "[contact]\nfrobnication = 3", 1))
    err = _cli_error(capsys, path, "--params-b", str(bad), "--out", str(tmp_path / "r"))
    assert "q.toml" in err and "frobnication" in err


def test_an_untared_nano17_is_noted_in_the_report(tmp_path, capsys):
    path = tmp_path / "untared.h5"
    write_model_session(path, TRIALS, repeats=1, tared=False)
    trials, _ = load_trials(path)
    assert [bool(t.notes) for t in trials] == [False, True]  # free motion has no force to worry about
    assert main(["compare", str(path), "--out", str(tmp_path / "r"), "--no-figures"]) == 0
    assert "not tared" in capsys.readouterr().out and "not tared" in (tmp_path / "r" / "report.html").read_text()


def test_unsettled_trials_are_skipped_and_named(tmp_path):
    path = tmp_path / "s.h5"
    write_model_session(path, TRIALS[:1], repeats=2)
    with h5py.File(path, "r+") as f:  # the runner timed out on the second repeat
        table = f["trials/table"][:]
        table["outcome"][1] = b"settle timeout"
        f["trials/table"][:] = table
    trials, skipped = load_trials(path)
    assert len(trials) == 1 and len(skipped) == 1 and "settle timeout" in skipped[0][1] and "#2" in skipped[0][0]
