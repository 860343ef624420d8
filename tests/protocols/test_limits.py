"""The rig's limits (protocols/limits.py): rig.toml's ceilings, suites that may only tighten them, the
effective limits at the interlocks and in the dry run (pull + pretension), and the sanity bounds every rig,
calibration-store and .cal value is checked against at load."""

from __future__ import annotations

import re
from importlib import resources

import numpy as np
import pytest
from conftest import FT18766
from uartlab.app.rig.calibrations import RigCalibrations
from uartlab.app.rig.config import load_rig_config, parse_rig_config
from uartlab.calibration.store import CalibrationRecord, CalibrationStore
from uartlab.drivers.ati import FTCalibration
from uartlab.drivers.interfaces import ConfigError
from uartlab.errors import CalibrationError, UartlabError
from uartlab.protocols.dry_run import dry_run
from uartlab.protocols.interlocks import InterlockLimits
from uartlab.protocols.limits import (
    DEFAULT_MAX_EXCURSION_MM,
    DEFAULT_MAX_FINGERTIP_FORCE_N,
    DEFAULT_MAX_TENDON_FORCE_N,
    Ceilings,
    Limits,
    effective,
)
from uartlab.protocols.suite import SuiteError, builtin_suite, parse_suite, resolve_suite, within
from uartlab.sim.names import TENDONS

TWIN_RIG = (resources.files("uartlab.app") / "data" / "twin_rig.toml").read_text(encoding="utf-8")

SUITE = """\
[suite]
name = "one"
repeats = 1
[suite.limits]
max_tendon_force_N = {force}
max_excursion_mm = {excursion}
[[trial]]
name = "free/FDP"
pose = "Flex"
pulls = [{{ tendon = "FDP", amplitude_mm = {pull}, duration_s = 4.0 }}]
return = {back}
"""


def suite_text(force=40.0, excursion=20.0, pull=15.0, back="true") -> str:
    return SUITE.format(force=force, excursion=excursion, pull=pull, back=back)


def line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


def rig(tmp_path, text: str, name: str = "rig.toml"):
    path = tmp_path / name
    path.write_text(text)
    return load_rig_config(path)


def with_limits(**keys) -> str:
    body = "".join(f"{k} = {v}\n" for k, v in keys.items())
    start, end = TWIN_RIG.index("[limits]"), TWIN_RIG.index("[interlocks]")
    return TWIN_RIG[:start] + "[limits]\n" + body + "\n" + TWIN_RIG[end:]


# ------------------------------------------------------------------ one declaration
def test_the_defaults_are_declared_once_and_the_twin_rig_ships_them():
    ceilings = parse_rig_config(TWIN_RIG, "twin_rig.toml").ceilings.limits
    assert ceilings == Limits()
    assert (ceilings.max_tendon_force_N, ceilings.max_fingertip_force_N) == (DEFAULT_MAX_TENDON_FORCE_N,
                                                                              DEFAULT_MAX_FINGERTIP_FORCE_N)
    assert set(ceilings.max_excursion_mm.values()) == {DEFAULT_MAX_EXCURSION_MM}
    for name in ("free_motion", "surface_contact"):  # the paper's suites fit under them, pretension included
        builtin_suite(name)


# ------------------------------------------------------------------ suites only tighten
def test_a_suite_above_the_default_ceiling_is_refused_without_any_rig():
    text = suite_text(force="1e6")
    with pytest.raises(SuiteError) as info:
        parse_suite(text, "suite.toml")
    assert str(info.value).startswith(f"suite.toml:{line_of(text, 'max_tendon_force_N')}: "
                                      "suite.limits.max_tendon_force_N: 1e+06 N is above this rig's ceiling of 40 N")
    assert len(info.value.errors) == 1


def test_a_rigs_tighter_ceiling_refuses_a_suite_the_default_accepts(tmp_path):
    config = rig(tmp_path, with_limits(max_tendon_force_N=30.0, max_excursion_mm="{ FDP = 18.0 }"))
    assert config.ceilings.limits.max_tendon_force_N == 30.0
    assert config.ceilings.limits.max_excursion_mm == {**dict.fromkeys(TENDONS, 20.0), "FDP": 18.0}
    text = suite_text(force=35.0, pull=10.0)
    suite = parse_suite(text, "suite.toml")              # fine under the default 40 N
    with pytest.raises(SuiteError) as info:
        within(suite, config.ceilings)
    force, excursion = sorted(info.value.errors)
    assert force == (f"suite.toml:{line_of(text, 'max_tendon_force_N')}: suite.limits.max_tendon_force_N: "
                     f"35 N is above this rig's ceiling of 30 N ({tmp_path / 'rig.toml'} [limits])")
    assert excursion.startswith(f"suite.toml:{line_of(text, 'max_excursion_mm')}: suite.limits.max_excursion_mm: "
                                "20 mm is above this rig's ceiling of 18 mm")
    # Keys the suite leaves out are the rig's ceiling, not the default.
    quiet = parse_suite(text.replace("max_tendon_force_N = 35.0\n", "").replace("max_excursion_mm = 20.0\n", ""),
                        "suite.toml", config.ceilings)
    assert quiet.limits.max_tendon_force_N == 30.0 and quiet.limits.max_excursion_mm["FDP"] == 18.0


def test_a_rig_may_raise_its_own_ceilings_within_what_the_hardware_can_do(tmp_path):
    config = rig(tmp_path, with_limits(max_tendon_force_N=60.0))
    path = tmp_path / "strong.toml"
    path.write_text(suite_text(force=50.0))
    assert resolve_suite(str(path), config.ceilings).limits.max_tendon_force_N == 50.0
    with pytest.raises(SuiteError, match="50 N is above this rig's ceiling of 40 N"):
        resolve_suite(str(path))


@pytest.mark.parametrize("value, reason", [("-1.0", "must be > 0"), ("inf", "must be a number"),
                                           ("0", "must be > 0")])
def test_suite_limits_are_positive_and_finite(value, reason):
    text = suite_text(force=value)
    with pytest.raises(SuiteError, match=rf"suite.toml:5: suite.limits.max_tendon_force_N: {reason}"):
        parse_suite(text, "suite.toml")


# ------------------------------------------------------------------ effective limits at the interlocks
def test_the_interlocks_get_the_smaller_of_ceiling_and_suite():
    ceilings = Ceilings(Limits(dict.fromkeys(TENDONS, 12.0), 30.0, 15.0), "rig.toml [limits]")
    suite = parse_suite(suite_text(force=35.0, pull=5.0))          # validated against the default ceilings
    assert suite.limits.max_tendon_force_N == 35.0
    lim = InterlockLimits.for_run(suite.limits, ceilings, {"daq": 0.25})
    assert lim.max_tendon_force_N == 30.0 and lim.max_fingertip_force_N == 15.0
    np.testing.assert_allclose(lim.max_excursion_m, 0.012)
    assert lim.max_stream_age_s == {"daq": 0.25}
    tighter = parse_suite(suite_text(force=10.0, excursion=10.0, pull=5.0))
    lim = InterlockLimits.for_run(tighter.limits, ceilings)
    assert lim.max_tendon_force_N == 10.0 and np.allclose(lim.max_excursion_m, 0.010)
    assert effective(ceilings, tighter.limits) == tighter.limits


def test_an_experiment_arms_its_interlocks_with_the_rigs_ceilings(tmp_path):
    from conftest import ScriptedRig
    from uartlab.app.run.experiment import Experiment

    config = rig(tmp_path, with_limits(max_tendon_force_N=30.0, max_fingertip_force_N=5.0))
    suite = parse_suite(suite_text(force=35.0, pull=5.0))   # chosen before the rig was known
    # Nothing starts, nothing moves: the experiment is only built on the rig.
    exp = Experiment(ScriptedRig(config, has_joint_angles=False), suite)
    lim = exp.runner.interlocks.limits
    assert (lim.max_tendon_force_N, lim.max_fingertip_force_N) == (30.0, 5.0)
    assert lim.max_stream_age_s == {"actuators": 1.0, "daq": 1.0, "mocap": 1.0}


# ------------------------------------------------------------------ pull + pretension
def test_validation_refuses_a_pull_that_only_fits_without_the_pretension_offset():
    text = suite_text(excursion=15.0, pull=15.0)
    with pytest.raises(SuiteError) as info:
        parse_suite(text, "suite.toml")
    assert info.value.errors == [f"suite.toml:{line_of(text, 'amplitude_mm')}: trial[0].pulls[0].amplitude_mm: "
                                 "trial 'free/FDP': pull 15 mm + up to 5 mm pretension exceeds the 15 mm "
                                 "excursion limit for FDP"]
    parse_suite(suite_text(excursion=15.0, pull=10.0))   # 10 + 5 fits exactly


def test_a_trial_that_does_not_return_starts_the_next_where_it_left_the_tendon():
    text = suite_text(pull=8.0, back="false").replace("repeats = 1", "repeats = 2")
    with pytest.raises(SuiteError, match=r"trial 'free/FDP' \(repeat 2\): pull 8 mm \+ up to 13 mm where the "
                                         r"previous trial left FDP \(it does not return\) exceeds the 20 mm"):
        parse_suite(text, "suite.toml")
    parse_suite(text.replace("repeats = 2", "repeats = 1"))


def test_more_repeats_of_a_trial_that_does_not_return_are_refused():
    from uartlab.app.cli.run import select

    suite = parse_suite(suite_text(pull=8.0, back="false"), "suite.toml")
    assert select(suite, None, 1).trials[0].repeats == 1
    with pytest.raises(ValueError, match=r"suite.toml: with --repeats 2: trial 'free/FDP' \(repeat 2\): pull 8 mm"):
        select(suite, None, 2)


def test_the_runner_refuses_a_run_whose_pretension_clamp_or_limits_make_a_pull_overrun():
    from uartlab.protocols.interlocks import Interlocks
    from uartlab.protocols.runner import Pretension, Runner

    suite = parse_suite(suite_text(pull=15.0), "suite.toml")     # 15 + 5 fits 20 mm
    Runner(suite)
    with pytest.raises(ConfigError, match=r"suite.toml: trial 'free/FDP': pull 15 mm \+ up to 8 mm pretension exceeds"):
        Runner(suite, pretension=Pretension(max_m=0.008))
    tight = Interlocks(InterlockLimits.for_run(suite.limits, Limits(dict.fromkeys(TENDONS, 18.0))))
    with pytest.raises(ConfigError, match="exceeds the 18 mm excursion limit for FDP"):
        Runner(suite, tight)


def test_the_dry_run_flags_pull_plus_pretension_over_the_rigs_excursion_limit(finger):
    suite = parse_suite(suite_text(pull=15.0), "suite.toml")       # 15 + 5 fits the default 20 mm
    [ok] = dry_run(suite, finger)
    assert ok.ok, ok.issues
    ceilings = Ceilings(Limits(dict.fromkeys(TENDONS, 15.0)), "rig.toml [limits]")
    [flagged] = dry_run(suite, finger, ceilings=ceilings)
    assert "trial 'free/FDP': pull 15 mm + up to 5 mm pretension exceeds the 15 mm excursion limit for FDP" \
        in flagged.issues


def test_cli_refuses_a_suite_above_the_ceiling_in_one_line(tmp_path, capsys):
    from uartlab.app.cli.main import main

    path = tmp_path / "greedy.toml"
    path.write_text(suite_text(force="1e6"))
    assert main(["run", str(path), "--dry-run"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert f"{path}:5: suite.limits.max_tendon_force_N: 1e+06 N is above this rig's ceiling of 40 N" in err
    # The same suite at 35 N passes the default rig and is refused by a rig with a 30 N ceiling.
    path.write_text(suite_text(force=35.0, pull=5.0))
    (tmp_path / "lab.toml").write_text(with_limits(max_tendon_force_N=30.0))
    assert main(["run", str(path), "--dry-run", "--rig", str(tmp_path / "lab.toml")]) == 2
    assert "35 N is above this rig's ceiling of 30 N" in capsys.readouterr().err


# ------------------------------------------------------------------ sanity bounds at load
SEA_TABLES = "\n".join(f"[sea.{t}]\nv0_V = 1.0\ngain_N_per_V = 7.0\n" for t in TENDONS)


def sea_rig(**fdp) -> str:
    fdp_table = "[sea.FDP]\n" + "".join(f"{k} = {v}\n" for k, v in {"v0_V": 1.0, "gain_N_per_V": 7.0, **fdp}.items())
    return (TWIN_RIG.replace('calibration = "from_twin"', "", 1) + "\n"
            + SEA_TABLES.replace("[sea.FDP]\nv0_V = 1.0\ngain_N_per_V = 7.0\n", fdp_table))


@pytest.mark.parametrize("text, key, reason", [
    (sea_rig(gain_N_per_V=0.0), "sea.FDP.gain_N_per_V", "must be within 1-1000 N/V"),
    (sea_rig(gain_N_per_V=-1.0), "sea.FDP.gain_N_per_V", "must be within 1-1000 N/V"),
    (sea_rig(gain_N_per_V=5000.0), "sea.FDP.gain_N_per_V", "must be within 1-1000 N/V"),
    (sea_rig(v0_V=20.0), "sea.FDP.v0_V", "within the DAQ's +-10 V"),
    (TWIN_RIG.replace("daq_max_age_s = 1.0", "daq_max_age_s = 1e9"), "interlocks.daq_max_age_s",
     "must be between one control tick (0.01 s) and 5 s, got 1e+09"),
    (TWIN_RIG.replace("daq_max_age_s = 1.0", "daq_max_age_s = 0.001"), "interlocks.daq_max_age_s",
     "must be between one control tick (0.01 s) and 5 s, got 0.001"),
    (TWIN_RIG.replace("watchdog_ms = 500.0", "watchdog_ms = 0"), "actuators.watchdog_ms", "must be finite and > 0"),
    (TWIN_RIG.replace("watchdog_ms = 500.0", "watchdog_ms = 3000"), "actuators.watchdog_ms", "20..2540 ms"),
    (TWIN_RIG.replace("flush_interval_s = 1.0", "flush_interval_s = 100"), "recording.flush_interval_s",
     "must be <= 5 s"),
    (with_limits(max_tendon_force_N=-1.0), "limits.max_tendon_force_N", "must be finite and > 0, got -1"),
    (with_limits(max_fingertip_force_N="nan"), "limits.max_fingertip_force_N", "must be finite and > 0"),
    (with_limits(max_excursion_mm="{ ED = 0.0 }"), "limits.max_excursion_mm.ED", "must be finite and > 0"),
    (with_limits(max_tendon_force_N="1e6"), "limits.max_tendon_force_N", "must be <= 300"),
])
def test_every_bad_rig_value_is_refused_with_file_line_and_key(tmp_path, text, key, reason):
    with pytest.raises(ConfigError) as info:
        rig(tmp_path, text)
    message = str(info.value)
    assert re.match(rf"{re.escape(str(tmp_path / 'rig.toml'))}:\d+: {re.escape(key)}: ", message), message
    assert reason in message


def test_a_recording_folder_through_a_file_is_refused_at_load(tmp_path):
    (tmp_path / "notes.txt").write_text("x")
    text = TWIN_RIG.replace('folder = "recordings"', f'folder = "{tmp_path / "notes.txt" / "rec"}"')
    with pytest.raises(ConfigError, match=r"rig.toml:\d+: recording.folder: .* is a file"):
        rig(tmp_path, text)


def test_a_stored_sea_fit_with_zero_gain_is_refused_naming_its_file(tmp_path):
    """The store refuses to write a fit that cannot be physical, and refuses to read one edited in by hand."""
    store = CalibrationStore(tmp_path / "store")
    fits = {t: {"v0_V": 1.0, "gain_N_per_V": 7.0} for t in TENDONS}
    fits["ED"]["gain_N_per_V"] = 0.0
    with pytest.raises(UartlabError, match=r"values.ED.gain_N_per_V: must be within 1-1000 N/V"):
        store.save(CalibrationRecord("sea", fits))
    fits["ED"]["gain_N_per_V"] = 7.0
    path = store.save(CalibrationRecord("sea", fits))
    config = parse_rig_config(TWIN_RIG.replace('store = ""', f'store = "{tmp_path / "store"}"'), "rig.toml")
    # each a fit that would blind the force interlock: no force, no rise, a division by a zero reference
    for edited, reason in (("0.0", "must be within 1-1000 N/V"), ("nan", "must be a finite"),
                           ("1e-300", "must be within 1-1000 N/V"),
                           ("7.0\nquadratic_N_per_V2 = -1e308", r"values.ED.quadratic_N_per_V2: with -1e\+308 the "
                                                                  r"force falls as the pot turns \(at 5 V\)"),
                           ("7.0\nquadratic_N_per_V2 = 10.0",
                            r"values.ED.quadratic_N_per_V2: with 10 the force falls as the pot turns \(at 0 V\)"),
                           ("7.0\nreference_V = 0", r"values.ED.reference_V: must be > 0")):
        text = path.read_text()
        ed = text.index("[values.ED]")
        path.write_text(text[:ed] + text[ed:].replace("gain_N_per_V = 7.0", f"gain_N_per_V = {edited}", 1))
        with pytest.raises(UartlabError, match=rf"{re.escape(str(path))}:\d+: (values.ED.gain_N_per_V: )?{reason}"):
            RigCalibrations(config).sea()
        path.write_text(text)


@pytest.mark.parametrize("old, new, reason", [
    ("-0.90361", "nan", "the Fx row of the calibration matrix is not finite"),
    # Fy the same as Fx: the two axes cannot be told apart.
    ("  0.10894  40.17421  -1.99940 -20.54550  -0.38501 -19.71422 ",
     " -0.90361   0.16847  -1.45054 -35.83695   2.19920  33.74633 ", "singular or nearly so"),
])
def test_an_ati_matrix_that_is_not_finite_or_singular_is_refused_naming_the_file(tmp_path, old, new, reason):
    assert old in FT18766
    path = tmp_path / "FT1.cal"
    path.write_bytes(FT18766.replace(old, new, 1).encode("utf-8"))
    with pytest.raises(CalibrationError) as info:
        FTCalibration.from_file(path)
    assert str(info.value).startswith(str(path)) and reason in str(info.value)
    good = tmp_path / "good.cal"
    good.write_bytes(FT18766.encode("utf-8"))
    FTCalibration.from_file(good)
