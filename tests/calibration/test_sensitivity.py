"""`uartlab sim sensitivity` on the real model: which parameters move the paper's trials' steady states."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from uartlab.app.cli.main import main
from uartlab.calibration.sensitivity import OUTPUTS, local_effects, with_factors
from uartlab.sim import Finger, FingerParams
from uartlab.sim.scenarios import free_motion_trial, run_trial


def test_one_at_a_time_is_the_change_the_model_makes(tmp_path, capsys):
    """The local effects are the steady-state differences of the model itself, parameter by parameter: the FDP's
    own moment arms move the FDP trial, the joint damping (zero at steady state) moves nothing."""
    trial = free_motion_trial("FDP")
    params = FingerParams.uart()
    effects = local_effects(params, [trial], ["arms_FDP", "joint_damping"], fraction=0.15)
    stronger = run_trial(Finger(with_factors(params, {"arms_FDP": 1.15})), trial)
    base = run_trial(Finger(params), trial)
    np.testing.assert_allclose(effects.plus[0, 0, :4], np.degrees(stronger.x[-1, 8:12] - base.x[-1, 8:12]), atol=1e-9)
    assert effects.largest("arms_FDP")[0] > 0.3 and effects.largest("joint_damping")[0] < 0.1   # 0.5 deg by default

    assert main(["sim", "sensitivity", "--trials", "free/FDP", "--workers", "1", "--out", str(tmp_path), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    order = [p["parameter"] for p in summary["parameters"]]
    assert order.index("arms_FDP") < order.index("joint_damping")      # largest first
    assert not any(name.startswith("contact_") for name in order)      # no surface in free motion
    with open(summary["csv"], newline="") as f:
        rows = list(csv.DictReader(f))
    row = next(r for r in rows if r["parameter"] == "arms_FDP" and r["output"] == OUTPUTS[2])
    assert float(row["change at +0.15"]) == pytest.approx(effects.plus[0, 0, 2], abs=1e-5)


@pytest.mark.slow
@pytest.mark.compute
def test_sobol_indices_rank_what_moves_a_contact_trial(tmp_path, capsys):
    """The global analysis (SALib) over the moment arms and the contact law on one contact trial: indices in
    range, the contact law's normal stiffness moving the force more than the damping does."""
    pytest.importorskip("SALib")
    args = ["sim", "sensitivity", "--method", "sobol", "--samples", "16", "--trials", "contact/Hook/FDP+ED*",
            "--parameters", "arms_FDP", "arms_ED", "contact_a", "joint_damping", "--workers", "2",
            "--out", str(tmp_path), "--json"]
    assert main(args) == 0
    summary = json.loads(capsys.readouterr().out)
    st = {p["parameter"]: p["largest_ST"] for p in summary["parameters"]}
    assert st["arms_FDP"] > 0.1 and st["joint_damping"] < 0.05
    with open(summary["csv"], newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["ST"]]
    force = {r["parameter"]: float(r["ST"]) for r in rows if r["output"] == "|F| [N]"}
    assert force["contact_a"] > force["joint_damping"]
    assert all(-0.5 < float(r["S1"]) < 1.5 for r in rows)


def test_bad_parameters_and_trials_are_one_line(capsys):
    assert main(["sim", "sensitivity", "--parameters", "stiffnes"]) != 0
    assert "unknown parameter(s) ['stiffnes']" in capsys.readouterr().err
    assert main(["sim", "sensitivity", "--trials", "nothing/*"]) != 0
    assert "--trials nothing/*: no paper trial matches" in capsys.readouterr().err
    assert main(["sim", "sensitivity", "--method", "sobol", "--samples", "12"]) != 0
    assert "power of two" in capsys.readouterr().err


def test_a_moment_arm_factor_scales_the_curve_in_the_form_the_parameters_give_it():
    """A lab's tables (or surfaces) are what the analysis perturbs, not the unused polynomial under them."""
    from uartlab.sim.moment_arm_forms import tabulate

    params = FingerParams.uart()
    tabled = params.replace(moment_arm_forms=tabulate(params))
    scaled = with_factors(tabled, {"arms_FDP": 1.1})
    q = np.radians([5.0, 40.0, 50.0, 25.0])
    for joint in ("MCP_FE", "PIP", "DIP"):
        assert scaled.moment_arm("FDP", joint, q) == pytest.approx(1.1 * tabled.moment_arm("FDP", joint, q), rel=1e-12)
    assert scaled.moment_arm("FDS", "PIP", q) == tabled.moment_arm("FDS", "PIP", q)
