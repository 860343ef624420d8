"""Nonsense numbers, unknown names and unusable schedulers: each one line naming the option and the value,
exit status 2, before any work; a model that diverges is an error, not a steady state; a closed pipe is
no traceback. (app/cli/types.py, app/cli/main.py's parser, sim/integrators.py, calibration/executors.py)"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import pytest
from uartlab.app.cli import types as cli_types
from uartlab.app.cli.main import main

CMD = [sys.executable, "-m", "uartlab.app.cli"]
BAD_INPUT = 2
CONTACT = ["sim", "contact", "--pose", "curl", "--flexor", "FDP", "--em", "ED"]


def run_main(argv, capsys) -> tuple[int, str]:
    """(exit status, stderr) of the command run in-process; a parse error exits through SystemExit."""
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    return code, capsys.readouterr().err


def assert_one_line(err: str, *expected: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].strip(), err
    assert "Traceback" not in err and "internal error" not in err, err
    for text in expected:
        assert text in lines[0], (text, lines[0])
    return lines[0]


# (argv, what the one line must name): every case exits 2 before anything runs (no rig, no simulation,
# no file read), so the table takes well under a second per case.
CASES = [
    (["record", "--seconds", "-1"], ["--seconds", "-1", "must be > 0"]),
    (["record", "--seconds", "0"], ["--seconds", "0"]),
    (["run", "free_motion", "--speed", "0"], ["--speed", "0"]),
    (["run", "free_motion", "--speed", "1e9"], ["--speed", "1e+09 is faster than the twin rig keeps up with"]),
    (["twin", "up", "--speed", "50"], ["uartlab twin up", "--speed", "50", "at most 20x"]),
    (["run", "free_motion", "--dry-run", "--repeats", "100000000"], ["--repeats must be from 1 to 100", "100000000"]),
    (["run", "free_motion", "--repeats", "0"], ["--repeats", "at least 1"]),
    (["run", "free_motion", "--repeats", "two"], ["--repeats", "'two' is not a whole number"]),
    (["demo", "--speed", "nan"], ["--speed", "'nan' is not a finite number"]),
    (["replay", "missing.h5", "--speed", "-2"], ["--speed", "-2", "'max'"]),
    (["replay", "missing.h5", "--speed", "inf"], ["--speed", "'inf'"]),
    (["bench", "bus", "--seconds", "-1"], ["uartlab bench bus", "--seconds", "-1"]),
    (["bench", "record", "--seconds", "nan"], ["--seconds", "nan"]),
    (["bench", "sim", "--repeats", "0"], ["--repeats", "0"]),
    (["bench", "live", "--rates", "100", "-200"], ["--rates", "-200"]),
    (["bench", "gui", "--daq-rate", "0"], ["--daq-rate", "0"]),
    (["gui", "--core", "foo://bar"], ["uartlab gui", "core address 'foo://bar'", "ipc://PATH or tcp://HOST:PORT"]),
    (["twin", "up", "--speed", "0"], ["uartlab twin up", "--speed", "0"]),
    (["twin", "up", "--perturbation", "-0.1"], ["--perturbation", "-0.1", "[0, 1)"]),
    (["calibrate", "moment-arms", "--perturbation", "5"], ["--perturbation", "5", "[0, 1)"]),
    (["twin", "up", "--surface-angle", "270"], ["--surface-angle", "270", "±180"]),
    (["twin", "up", "--duration", "-5"], ["--duration", "-5"]),
    (["calibrate", "sea", "--speed", "-1"], ["uartlab calibrate sea", "--speed", "-1"]),
    (["calibrate", "sea", "--perturbation", "nan"], ["--perturbation", "nan"]),
    (["calibrate", "sea", "--seed", "-3"], ["--seed", "-3"]),
    (["calibrate", "servo-zero", "--pretension", "-1"], ["--pretension", "-1"]),
    (["calibrate", "moment-arms", "--amplitude-mm", "0"], ["--amplitude-mm", "0"]),
    (["calibrate", "moment-arms", "--spring-n-per-mm", "0.3", "-1"], ["--spring-n-per-mm", "-1"]),
    (["calibrate", "mocap", "--jig", "0", "30", "45", "200"], ["--jig", "200", "±180"]),
    (["calibrate", "mocap", "--jig", "0", "nan", "45", "30"], ["--jig", "nan"]),
    (["calibrate", "nano17", "--tool", "0", "0", "inf", "0", "0", "0"], ["--tool", "inf"]),
    (["calibrate", "model", "--workers", "0"], ["--workers", "0"]),
    ([*CONTACT, "--angle", "400"], ["--angle", "400", "±180"]),
    (["sim", "free-motion", "--tendon", "FDP", "--dt", "0"], ["--dt", "0"]),
    (["sim", "free-motion", "--tendon", "FDP", "--dt", "-0.001"], ["--dt", "-0.001"]),
    (["sim", "free-motion", "--tendon", "FDP", "--dt", "1e-12"], ["--dt", "1e-12", "hours"]),
    (["sim", "free-motion", "--tendon", "XYZ"], ["--tendon", "XYZ"]),
    # unknown names: what there is, and the nearest
    (["calibrate", "model", "--fit", "coulombb"],
     ["--fit", "unknown parameter 'coulombb'", "did you mean coulomb?", "mu_y"]),
    (["calibrate", "model", "--fit", "coulomb", "--fit", "Kxx"], ["--fit", "'Kxx'", "did you mean Kx?"]),
    (["calibrate", "sea", "--tendons", "FDP", "XYZ"], ["--tendons", "unknown tendon 'XYZ'", "LUM"]),
    (["calibrate", "servo-zero", "--tendons", "fds", "--tendons", "EDD"], ["--tendons", "'EDD'", "did you mean ED?"]),
    (["run", "free_motoin"],
     ["unknown suite 'free_motoin'", "did you mean free_motion?", "built-in: free_motion, surface_contact", ".toml"]),
    (["run", "free_motion", "--trial", "free/LUMM"], ["--trial", "'free/LUMM'", "did you mean free/LUM?", "free/FDP"]),
    (["run", "free_motion", "--trial", "free/FDP", "--trial", "nope", "--dry-run"], ["'nope'", "free/ED"]),
    # one meaning per option: --params is a file; the names to fit are --fit
    (["calibrate", "model", "--params", "coulomb"], ["--params coulomb", "--fit coulomb"]),
    (["calibrate", "model", "--trial", "free/FDP"], ["--trial, --params and --jackknife need --session"]),
]


@pytest.mark.parametrize(("argv", "expected"), CASES, ids=[" ".join(a) for a, _ in CASES])
def test_bad_value_is_one_line_naming_it_exit_2(argv, expected, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)   # nothing may be written; if something were, not into the checkout
    code, err = run_main(argv, capsys)
    assert code == BAD_INPUT, err
    assert_one_line(err, *expected)
    assert os.listdir(tmp_path) == []


def test_a_parse_error_says_where_help_is(capsys):
    code, err = run_main(["record", "--seconds", "-1"], capsys)
    line = assert_one_line(err)
    assert code == BAD_INPUT and line.startswith("uartlab record: error: ") and line.endswith("(uartlab record --help)")
    assert "usage:" not in err


@pytest.mark.parametrize("argv", [["sim", "free-motion", "--tendon", "FDP", "--amplitude-mm", "5"],
                                  ["replay", "s.h5", "--stream", "daq"]])
def test_an_unknown_option_is_said_by_the_command_whose_help_lists_the_options(argv, capsys):
    command = "uartlab " + " ".join(argv[:2] if argv[0] == "sim" else argv[:1])
    code, err = run_main(argv, capsys)
    line = assert_one_line(err)
    assert code == BAD_INPUT and line.startswith(f"{command}: error: unrecognized arguments: {argv[-2]} {argv[-1]}")
    assert line.endswith(f"({command} --help)")


def test_list_options_take_several_values_or_a_repeated_flag():
    parser = __import__("uartlab.app.cli.main", fromlist=["build_parser"]).build_parser()
    one = parser.parse_args(["calibrate", "model", "--fit", "coulomb", "a", "--trial", "x", "y"])
    two = parser.parse_args(["calibrate", "model", "--fit", "coulomb", "--fit", "a", "--trial", "x", "--trial", "y"])
    assert one.fit == two.fit == ["coulomb", "a"] and one.trial == two.trial == ["x", "y"]
    run = parser.parse_args(["run", "free_motion", "--trial", "free/FDP", "free/ED", "--trial", "free/DI"])
    assert run.trials == ["free/FDP", "free/ED", "free/DI"]
    sea = parser.parse_args(["calibrate", "sea", "--tendons", "fdp", "--tendons", "ed", "lum"])
    assert sea.tendons == ["FDP", "ED", "LUM"]
    twin = parser.parse_args(["twin", "up", "--perturbation", "0.05"])
    assert twin.perturbation == 0.05
    assert parser.parse_args(["replay", "f.h5", "--speed", "MAX"]).speed == "max"


def test_validators_refuse_what_float_accepts():
    for text in ("nan", "NaN", "inf", "-inf", "1e999"):
        with pytest.raises(argparse.ArgumentTypeError, match="finite"):
            cli_types.finite_float(text)
    assert cli_types.positive_float("1e-3") == 1e-3 and cli_types.angle_deg("-180") == -180.0
    assert cli_types.non_negative_int("0") == 0 and cli_types.suggest("surface_contct", ["surface_contact"])


def test_an_integration_that_diverges_is_an_error_naming_the_step(capsys):
    code, err = run_main(["sim", "free-motion", "--tendon", "FDP", "--dt", "1"], capsys)
    assert code == BAD_INPUT
    line = assert_one_line(err, "--dt 1: the integration diverged at t = ", "too large", "try <= 0.002")
    assert "steady" not in line


def test_a_diverging_run_never_ends_as_a_steady_state(finger):
    from uartlab.sim.errors import SimulationDiverged
    from uartlab.sim.scenarios import free_motion_trial, trial_start

    trial = free_motion_trial("ED")
    x0, _ = trial_start(finger, trial)
    for dt in (0.05, 0.5, 1.0):   # unstable steps, some of which reach huge but finite states
        with pytest.raises(SimulationDiverged) as info:
            finger.simulate(x0, trial.pulls, dt=dt)
        assert info.value.dt_s == dt and info.value.t_s > 0


@pytest.fixture(scope="module")
def one_trial_session(tmp_path_factory):
    from uartlab.app.compare.synthetic import write_model_session
    from uartlab.sim.scenarios import free_motion_trial

    path = tmp_path_factory.mktemp("bad_input") / "s.h5"
    write_model_session(path, [free_motion_trial("FDP")])
    return path


@pytest.fixture(scope="module")
def unstable_params(tmp_path_factory):
    """Parameters the model cannot integrate at the default step (EM springs 100 times stiffer)."""
    from uartlab.sim import FingerParams

    p = FingerParams.uart()
    path = tmp_path_factory.mktemp("bad_input") / "stiff.toml"
    p.replace(em_stiffness_N_per_m=p.em_stiffness_N_per_m * 100).to_toml(path)
    return path


def test_compare_trials_matching_nothing_lists_what_there_is(one_trial_session, tmp_path, capsys):
    argv = ["compare", str(one_trial_session), "--trials", "contact/*", "--out", str(tmp_path / "r")]
    code, err = run_main(argv, capsys)
    assert code == BAD_INPUT
    assert_one_line(err, "--trials 'contact/*'", "the sessions have: free/FDP")


def test_parameters_that_make_the_model_diverge_are_an_error_not_a_table(one_trial_session, unstable_params,
                                                                         tmp_path, capsys):
    code, err = run_main(["sim", "free-motion", "--tendon", "FDP", "--params", str(unstable_params)], capsys)
    assert code == BAD_INPUT
    assert_one_line(err, "diverged", "the parameters may make the model unstable")
    argv = ["compare", str(one_trial_session), "--params", str(unstable_params), "--no-figures",
            "--out", str(tmp_path / "r")]
    code, err = run_main(argv, capsys)
    assert code == BAD_INPUT
    assert_one_line(err, "free/FDP", "diverged")


# ------------------------------------------------------------------ dask: one line with the address, in time
def _fit_on(address: str, capsys) -> tuple[int, str, float]:
    t0 = time.monotonic()
    code, err = run_main(["calibrate", "model", "--scheduler", address, "--dry-run"], capsys)
    return code, err, time.monotonic() - t0


def test_an_unreachable_scheduler_is_said_within_its_timeout(capsys, monkeypatch):
    from uartlab.calibration import executors

    monkeypatch.setattr(executors, "CONNECT_TIMEOUT_S", 2.0)
    code, err, seconds = _fit_on("tcp://127.0.0.1:1", capsys)
    assert code == BAD_INPUT and seconds < 15
    assert_one_line(err, "cannot reach the dask scheduler at tcp://127.0.0.1:1 within 2 s")


def test_a_scheduler_without_workers_is_said_not_waited_for(capsys, monkeypatch):
    distributed = pytest.importorskip("distributed")
    from uartlab.calibration import executors

    monkeypatch.setattr(executors, "WORKERS_TIMEOUT_S", 2.0)
    with distributed.LocalCluster(n_workers=0, processes=False, protocol="tcp", host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        code, err, seconds = _fit_on(cluster.scheduler_address, capsys)
    assert code == BAD_INPUT and seconds < 15
    assert_one_line(err, f"the dask scheduler at {cluster.scheduler_address} has no workers", "dask worker")


def test_workers_without_uartlab_are_said(tmp_path):
    """A real worker process whose imports of uartlab fail (a preload hides it), reached by the command in
    another process (so the in-process scheduler's own error log is not in the command's stderr)."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, protocol="tcp",
                                  host="127.0.0.1", dashboard_address=None,
                                  preload=["import sys; sys.modules['uartlab'] = None"]) as cluster:
        address = cluster.scheduler_address
        proc = subprocess.run([*CMD, "calibrate", "model", "--scheduler", address, "--dry-run"],
                              capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == BAD_INPUT, proc.stderr
    assert_one_line(proc.stderr, f"the dask workers at {address} cannot import uartlab",
                    "install uartlab on every worker")


# ------------------------------------------------------------------ a reader that went away
@pytest.mark.parametrize("argv", [["sim", "paper"], ["verify", "--json", "SESSION"]])
def test_a_closed_pipe_is_no_traceback(argv, tmp_path):
    if "SESSION" in argv:
        from uartlab.app.record.writer import SessionRecorder

        SessionRecorder(tmp_path / "s.h5", {"operator": "t"}).close()
        argv = [str(tmp_path / "s.h5") if a == "SESSION" else a for a in argv]
    proc = subprocess.Popen([*CMD, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    proc.stdout.close()   # the reader is gone before the first line (`| head -c 0`)
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=120) == 0, err
    assert err == "", err


def test_dry_run_runs_the_trials_named(capsys):
    assert main(["run", "free_motion", "--dry-run", "--trial", "free/FDP", "--json"]) == 0
    assert [t["trial"] for t in json.loads(capsys.readouterr().out)["trials"]] == ["free/FDP"]
