"""Protocols as data: trajectories, suite files and their validation, the dry run."""

from __future__ import annotations

import argparse
import json

import numpy as np
import pytest
from uartlab.app.cli.main import main as cli
from uartlab.protocols.dry_run import dry_run, main
from uartlab.protocols.suite import SuiteError, builtin_suite, load_suite, parse_suite
from uartlab.protocols.trajectories import Hold, Ramp, Return, Sigmoid, TendonProfile, Trajectory
from uartlab.schema import NAME_BYTES
from uartlab.sim.inputs import Sigmoid as SimSigmoid
from uartlab.sim.inputs import excursions_at, sigmoid_inputs, sigmoid_value
from uartlab.sim.scenarios import paper_trials

GOOD = """\
[suite]
name = "mine"
repeats = 2

[suite.limits]
max_excursion_mm = { FDP = 20.0, ED = 12.5 }
max_tendon_force_N = 40.0

[[trial]]
name = "a"
pose = "Flex"
pulls = [{ tendon = "FDS", amplitude_mm = 7.0, duration_s = 4.0 }]

[[trial]]
name = "b"
pose = "Hook"
surface_angle_deg = 45
pulls = [
    { tendon = "FDP", amplitude_mm = 15.0, duration_s = 4.0 },
    { tendon = "ED", amplitude_mm = 7.5, duration_s = 4.0 },
]
return = true
"""


# ------------------------------------------------------------------ trajectories
def test_sigmoid_starts_and_ends_exactly_and_rises_monotonically():
    p = TendonProfile("FDP", (Sigmoid(0.015, 4.0),), start_s=1.0)
    t = np.linspace(0.0, 6.0, 601)
    e = p.excursions(t)
    assert e[t <= 1.0].max() == 0.0 and np.all(e[t >= 5.0] == 0.015)
    assert np.all(np.diff(e) >= 0)
    # The same curve as the model's own sigmoid input.
    model = excursions_at(sigmoid_inputs([SimSigmoid("FDP", 0.015, 4.0, 1.0)]), t)[:, 0]
    np.testing.assert_allclose(e, model, atol=1e-12)


@pytest.mark.parametrize("steepness", [3.0, 10.0, 20.0])
def test_the_rig_and_the_model_trace_one_sigmoid(steepness):
    """Trajectories sample sim.inputs' curve: the model's compiled kernel gives the same numbers."""
    u = np.linspace(-0.1, 1.1, 241)
    rig = Sigmoid(1.0, 1.0, steepness).shape(u)
    model = [sigmoid_value(float(x), 1.0, 0.0, 1.0, steepness) for x in u]
    np.testing.assert_allclose(rig, model, rtol=0, atol=4e-16)
    assert rig[u <= 0].max() == 0.0 and rig[u >= 1].min() == 1.0


def test_hold_ramp_and_return_compose_per_tendon():
    p = TendonProfile("ED", (Ramp(0.01, 2.0), Hold(1.0), Return(2.0)))
    e = p.excursions(np.array([0.0, 1.0, 2.0, 2.5, 3.0, 5.0, 9.0]))
    np.testing.assert_allclose(e, [0.0, 0.005, 0.01, 0.01, 0.01, 0.0, 0.0], atol=1e-15)
    assert p.end_s == 5.0


def test_trajectory_leaves_other_tendons_at_zero_and_feeds_the_model():
    traj = Trajectory.pulls([("FDS", 0.015, 4.0, 0.0), ("LUM", 0.0075, 4.0, 0.0)], return_at_s=6.0)
    t = np.linspace(0, 12, 241)
    e = traj.excursions(t)
    assert e.shape == (241, 6)
    assert np.all(e[:, [0, 2, 3, 4]] == 0)
    assert e[t == 5.0, 1] == 0.015 and e[-1, 1] == 0.0 and e[-1, 5] == 0.0
    table = excursions_at(traj.to_inputs(), t)
    np.testing.assert_allclose(table, e, atol=2e-6)  # linear between 10 ms samples
    with pytest.raises(ValueError, match="before the pull ends"):
        Trajectory.pulls([("FDP", 0.015, 4.0, 0.0)], return_at_s=3.0)


# ------------------------------------------------------------------ suite files
def _key(trial):
    return (trial.kind, trial.pose, tuple((p.tendon, round(p.amplitude_m, 9), p.duration_s, p.start_s)
                                          for p in trial.pulls), trial.surface_angle_deg)


def test_builtin_suites_are_the_papers_trials():
    free, contact = builtin_suite("free_motion"), builtin_suite("surface_contact")
    trials = list(free.trials) + list(contact.trials)
    assert [_key(t.sim_trial()) for t in trials] == [_key(t) for t in paper_trials()]
    assert [t.name for t in trials] == [t.name for t in paper_trials()]
    assert len(contact.trials) == 16 and all(t.repeats == 5 for t in trials)
    assert free.settle.speed_deg_s == 0.1


def test_a_good_file_parses(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text(GOOD)
    suite = load_suite(path)
    assert suite.name == "mine" and suite.text == GOOD and suite.source == str(path)
    assert suite.limits.max_excursion_mm["ED"] == 12.5 and suite.limits.max_excursion_mm["PI"] == 20.0
    a, b = suite.trials
    assert a.kind == "free" and a.repeats == 2 and not a.return_to_start
    assert b.kind == "contact" and b.surface_angle_deg == 45.0 and b.return_to_start


def test_sha256_follows_the_exact_text():
    one, two = parse_suite(GOOD, "x.toml"), parse_suite(GOOD + "# a comment\n", "x.toml")
    assert one.sha256 != two.sha256 and one.sha256 == parse_suite(GOOD, "y.toml").sha256
    assert len(one.sha256) == 64


def _line(text: str, needle: str, nth: int = 0) -> int:
    return [n for n, line in enumerate(text.splitlines(), 1) if needle in line][nth]


@pytest.mark.parametrize("old, new, key, reason, nth", [
    ('tendon = "ED"', 'tendon = "XX"', "trial[1].pulls[1].tendon", "unknown tendon", 0),
    ('amplitude_mm = 7.5', 'amplitude_mm = 13.0', "trial[1].pulls[1].amplitude_mm", "beyond the limit", 0),
    ('pose = "Hook"', 'pose = "Fist"', "trial[1].pose", "unknown pose", 0),
    ('return = true', 'retrun = true', "trial[1].retrun", "unknown key", 0),
    ('name = "b"', 'name = "a"', "trial[1].name", "duplicate trial name", 1),
    # the session file and the reports know a trial by its whole name: one longer than they hold is refused
    ('name = "b"', f'name = "{"b" * (NAME_BYTES + 1)}"', "trial[1].name", f"at most {NAME_BYTES}", 0),
    ('name = "mine"', f'name = "{"é" * (NAME_BYTES // 2 + 1)}"', "suite.name", f"at most {NAME_BYTES} (UTF-8)", 0),
    ('duration_s = 4.0 },\n    { tendon = "ED"', 'duration_s = 0 },\n    { tendon = "ED"',
     "trial[1].pulls[0].duration_s", "must be > 0", 0),
    ('max_tendon_force_N = 40.0', 'max_tendon_force = 40.0', "suite.limits.max_tendon_force", "unknown key", 0),
    # a typo in a time must not make the model or the run allocate for days of samples
    ('duration_s = 4.0 },\n    { tendon = "ED"', 'duration_s = 1e6 },\n    { tendon = "ED"',
     "trial[1].pulls[0].duration_s", "the pull ends at 1e+06 s, later than a trial may (600 s)", 0),
    ('repeats = 2', 'settle = { timeout_s = 1e308 }\nrepeats = 2', "suite.settle.timeout_s",
     "1e+308 s is longer than a trial may wait (600 s)", 0),
    ('repeats = 2', 'settle = { hold_s = 30 }\nrepeats = 2', "suite.settle.hold_s",
     "30 s is not shorter than timeout_s (20 s): no trial could ever settle", 0),
    ('repeats = 2', 'description = 3\nrepeats = 2', "suite.description", "must be a string, got 3", 0),
    ('surface_angle_deg = 45', 'surface_angle_deg = 4500', "trial[1].surface_angle_deg",
     "must be within ±180 deg, got 4500", 0),
])
def test_every_error_names_file_line_and_key(old, new, key, reason, nth):
    text = GOOD.replace(old, new, 1)
    assert text != GOOD
    with pytest.raises(SuiteError) as info:
        parse_suite(text, "bad.toml")
    line = _line(text, new.split("\n")[0], nth)
    assert f"bad.toml:{line}: {key}: " in str(info.value) and reason in str(info.value)


def test_all_errors_are_reported_at_once_in_one_line(tmp_path, capsys):
    text = GOOD.replace('tendon = "ED"', 'tendon = "XX"').replace('pose = "Flex"', 'pose = "Fist"')
    with pytest.raises(SuiteError) as info:
        parse_suite(text, "bad.toml")
    assert len(info.value.errors) == 2
    path = tmp_path / "bad.toml"
    path.write_text(text)
    assert cli(["run", str(path), "--dry-run"]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    first, second = line.split(f"; {path}:")
    assert first.startswith(f"uartlab run: {path}:{_line(text, 'Fist')}: trial[0].pose: unknown pose")
    assert second.startswith(f"{_line(text, 'XX')}: trial[1].pulls[1].tendon: unknown tendon")


# ------------------------------------------------------------------ dry run
def test_dry_run_of_free_motion_settles_every_trial(finger):
    results = dry_run(builtin_suite("free_motion"), finger)
    assert len(results) == 6 and all(r.settled and r.returned and r.ok for r in results)
    fdp = next(r for r in results if r.trial == "free/FDP")
    assert fdp.joint_angles_deg["PIP"] > 50  # FDP flexes the PIP from the Flex pose's 45 deg
    assert all(r.peak_fingertip_force_N == 0.0 for r in results)  # no surface in free motion


def test_a_tight_force_limit_is_flagged(finger):
    text = GOOD.replace("max_tendon_force_N = 40.0", "max_tendon_force_N = 1.0")
    results = dry_run(parse_suite(text, "tight.toml"), finger)
    assert all(not r.ok for r in results)
    assert any("would exceed max_tendon_force_N on FDP:" in issue and "> 1 N" in issue
               for issue in results[0].issues)


def test_main_prints_table_and_json(tmp_path, capsys):
    path = tmp_path / "mine.toml"
    path.write_text(GOOD)
    assert main(argparse.Namespace(suite=str(path), json=False)) == 0
    assert "2 trials, 0 flagged" in capsys.readouterr().out
    path.write_text(GOOD.replace("max_tendon_force_N = 40.0", "max_tendon_force_N = 1.0"))
    assert main(argparse.Namespace(suite=str(path), json=True)) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["sha256"] and not report["trials"][0]["ok"]


def test_cli_dry_run_reports_every_trial(capsys):
    from uartlab.app.cli.main import main

    assert main(["run", "free_motion", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "6 trials, 0 flagged" in out and "free/FDP" in out
    assert main(["run", "no_such_suite", "--dry-run"]) == 2  # one clear line, nothing moved
    err = capsys.readouterr().err
    assert "no_such_suite" in err and "Traceback" not in err


def test_cli_dry_run_uses_the_parameters_it_is_given(tmp_path, capsys):
    """A researcher checks a parameter set before the rig: the dry run is of that model, and says so."""
    from uartlab.app.cli.main import main
    from uartlab.sim import FingerParams

    text = FingerParams.uart().to_toml()
    pip = text.index("[joints.PIP]")
    rom_at = text.index("rom_deg = [0.0, 100.0]", pip)    # the PIP's own range of motion
    stiff = tmp_path / "pip_to_50.toml"
    stiff.write_text(text[:rom_at] + "rom_deg = [0.0, 50.0]" + text[rom_at + len("rom_deg = [0.0, 100.0]"):])

    def fdp_pip_deg(*params: str) -> tuple[float, str]:
        assert main(["run", "free_motion", "--trial", "free/FDP", "--dry-run", "--json", *params]) == 0
        report = json.loads(capsys.readouterr().out)
        return report["trials"][0]["joint_angles_deg"]["PIP"], report["params"]

    default_pip, default_source = fdp_pip_deg()
    given_pip, given_source = fdp_pip_deg("--params", str(stiff))
    assert default_pip > 55.0 and given_pip <= 50.0 + 0.5
    assert "uart.toml" in default_source and given_source == str(stiff)
    bad = tmp_path / "bad.toml"
    bad.write_text('colour = "red"\n')
    assert main(["run", "free_motion", "--dry-run", "--params", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.toml:1: colour: unknown key" in err and len(err.strip().splitlines()) == 1


def test_params_without_the_live_model_are_refused(capsys):
    from uartlab.app.cli.main import main

    assert main(["run", "free_motion", "--no-live-model", "--params", "mine.toml"]) == 2
    assert "--params: not with --no-live-model" in capsys.readouterr().err
