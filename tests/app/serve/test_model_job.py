"""The live model process's job: written by the core, read and checked by the process."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace

import pytest
from uartlab.app.run.residuals import plan_of
from uartlab.app.serve.model_job import VERSION, ModelJob
from uartlab.errors import ConfigError
from uartlab.protocols.suite import builtin_suite
from uartlab.sim import Finger, FingerParams


@pytest.fixture(scope="module")
def job() -> ModelJob:
    suite = builtin_suite("surface_contact")
    suite = replace(suite, trials=tuple(replace(t, repeats=2) for t in suite.trials[:2]))
    params = FingerParams.uart().perturbed(0.1, seed=1)
    return ModelJob.for_run(params, ["the shipped defaults", "moment arms 2026-11-30"], suite, 4.0, 100.0)


def test_a_job_round_trips_with_the_runners_plan_and_the_parameters_as_a_params_file_has_them(job):
    back = ModelJob.from_json(job.to_json(), "<test>")
    # Exactly what the parameter file format (sim/params.py) carries: a file written and read gives the same.
    assert back.params.to_toml() == FingerParams.from_toml_text(job.params.to_toml()).to_toml()
    assert back.params_sources == ("the shipped defaults", "moment arms 2026-11-30")
    suite = builtin_suite("surface_contact")
    expected = [(t.name, t.surface_angle_deg) for t in suite.trials[:2] for _ in range(2)]
    assert [(t.name, t.surface_angle_deg) for t in back.trials] == expected
    assert len(plan_of(replace(suite, trials=tuple(replace(t, repeats=2) for t in suite.trials[:2])))) == 4
    assert (back.time_scale, back.control_rate_hz) == (4.0, 100.0)
    assert "\n" not in job.to_json()   # one line: the process reads the first line of its stdin


def test_a_lab_s_tabulated_moment_arms_travel_with_the_job():
    """The live model gets the tables the parameter file names (their CSV texts), not just the file's keys."""
    from uartlab.sim.moment_arm_forms import tabulate

    params = FingerParams.uart()
    tables = {k: f for k, f in tabulate(params, step_deg=15.0).items() if k[0] == "FDP"}
    job = ModelJob.for_run(params.replace(moment_arm_forms=tables), ["a lab's tables"],
                           builtin_suite("free_motion"), 1.0, 100.0)
    back = ModelJob.from_json(job.to_json(), "<test>")
    assert set(back.params.moment_arm_forms) == set(tables)
    q = [0.05, 0.6, 0.9, 0.4]
    assert Finger(back.params).moment_arms(q) == pytest.approx(Finger(job.params).moment_arms(q), rel=1e-9)


@pytest.mark.parametrize(("change", "says"), [
    (lambda d: "not json", "the job: not a live model job: not JSON"),
    (lambda d: {**d, "format": "something else"}, 'expected "format": "uartlab live model job"'),
    (lambda d: {**d, "version": 7}, f"version 7, this uartlab reads version {VERSION}"),
    (lambda d: {**d, "colour": "red"}, "unknown fields ['colour']"),
    (lambda d: {**d, "time_scale": 0}, "time_scale: expected a number > 0, got 0"),
    (lambda d: {**d, "control_rate_hz": "fast"}, "control_rate_hz: expected a number > 0, got 'fast'"),
    (lambda d: {**d, "trials": [{"name": "a"}]}, "trials[0]: expected"),
    (lambda d: {**d, "trials": [{"name": "a", "surface_angle_deg": "steep"}]}, "trials[0].surface_angle_deg"),
    (lambda d: {**d, "params_sources": [1]}, "params_sources: expected a list of strings"),
    (lambda d: {**d, "params_toml": d["params_toml"].replace("pad_radius_mm = ", "pad_radius_mm = -")},
     "the job: params_toml:"),
])
def test_a_bad_job_is_refused_with_one_line_naming_the_field(job, change, says):
    doc = change(json.loads(job.to_json()))
    text = doc if isinstance(doc, str) else json.dumps(doc)
    with pytest.raises(ConfigError) as err:
        ModelJob.from_json(text, "the job")
    message = str(err.value)
    assert says in message and "\n" not in message, message


def test_the_process_given_a_bad_job_exits_2_with_one_line_and_no_traceback():
    proc = subprocess.run([sys.executable, "-m", "uartlab.app.serve.model_process", "--core", "ipc:///nonexistent/x"],
                          input=json.dumps({"format": "uartlab live model job", "version": VERSION}) + "\n",
                          capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines == ["live model process: the job on stdin: params_toml: expected str, got NoneType"], proc.stderr


def test_the_process_loads_the_model_from_this_interpreters_kernel_cache_and_warms_up_before_its_job():
    """Started as the core starts it, with no job yet: it warms up from the kernel cache every uartlab process
    shares (no compile: the kernels this test process uses are there), says so, and ends with its stdin."""
    from uartlab.sim.kernel_cache import COMPILE_MESSAGE, kernel_dir

    Finger().stepper(Finger().initial_state([0, 30, 45, 30], 1.0))   # this process's kernels are in the cache
    proc = subprocess.run([sys.executable, "-m", "uartlab.app.serve.model_process", "--core", "ipc:///nonexistent/x"],
                          input="", capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    word, _, info = proc.stdout.strip().partition(" ")
    assert word == "warm", proc.stdout
    assert json.loads(info)["kernel_cache"] == str(kernel_dir())
    assert COMPILE_MESSAGE not in proc.stderr and "compiling" not in proc.stderr, proc.stderr
