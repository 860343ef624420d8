"""FingerParams: paper values, TOML round trip, and refusal of bad values with file, line and key."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from uartlab.app.cli.main import main
from uartlab.sim import FingerParams, ParameterError

DEFAULTS = (Path(__file__).parents[2] / "sim" / "data" / "uart.toml").read_text()


def test_paper_tables_2_and_3_in_si(params):
    np.testing.assert_allclose(params.a_m, [0.0, 0.0607, 0.030, 0.040])
    np.testing.assert_allclose(np.degrees(params.alpha_rad), [90, 0, 0, 0])
    np.testing.assert_allclose(np.degrees(params.theta_offset_rad), [0, -30, 0, 0])
    np.testing.assert_allclose(params.input_stiffness_N_per_m, 300.0)  # 0.3 N/mm
    np.testing.assert_allclose(params.em_stiffness_N_per_m, 15000.0)  # 15 N/mm
    np.testing.assert_allclose(params.em_mass_kg, 0.129)
    np.testing.assert_allclose(params.joint_damping_Nms_per_rad, 1e-5)  # 0.01 N mm s/rad
    assert params.coulomb_coefficient_m == pytest.approx(0.97e-3)
    c = params.contact
    assert (c.a_N, c.b, c.mu_x, c.mu_y) == (0.258, 1.72, 0.481, 0.553)
    assert c.Kx_N_per_m == pytest.approx(104.0) and c.Ky_N_per_m == pytest.approx(138.0)


def test_every_default_states_its_provenance():
    for number, line in enumerate(DEFAULTS.splitlines(), 1):
        code = line.split("#", 1)[0].strip()
        if "=" in code and not code.startswith(("schema", "[")) and "times_cos" not in code:
            assert "#" in line, f"uart.toml line {number} has no provenance comment: {line!r}"


def test_toml_round_trip_is_exact(params, tmp_path):
    path = tmp_path / "p.toml"
    params.to_toml(path)
    again = FingerParams.from_toml(path)
    for name in ("a_m", "rom_rad", "moment_arm_coeffs", "moment_arm_cos_fe", "bone_com_m", "world_from_base",
                 "input_stiffness_N_per_m", "em_stiffness_N_per_m"):
        np.testing.assert_allclose(getattr(again, name), getattr(params, name), err_msg=name)
    assert again.contact == params.contact


def test_the_defaults_written_out_are_the_shipped_file_with_every_comment(tmp_path):
    """`uartlab sim params -o` (the defaults), and a lab's own file passed back with --params: byte for byte."""
    out = tmp_path / "defaults.toml"
    assert main(["sim", "params", "-o", str(out)]) == 0
    assert out.read_text() == DEFAULTS
    ours = DEFAULTS.replace("a_N = 0.258", "a_N = 0.3  # our lab's fit, 2026-11", 1)
    (tmp_path / "ours.toml").write_text(ours)
    assert main(["sim", "params", "--params", str(tmp_path / "ours.toml"), "-o", str(tmp_path / "again.toml")]) == 0
    assert (tmp_path / "again.toml").read_text() == ours


def test_a_changed_value_is_written_exactly_and_says_what_it_replaced(params):
    stiffness = params.input_stiffness_N_per_m.copy()
    stiffness[0] = 312.5
    changed = params.replace(input_stiffness_N_per_m=stiffness, em_mass_kg=params.em_mass_kg * 1.1)
    text = changed.to_toml()
    line = next(x for x in text.splitlines() if x.startswith("input_stiffness_N_per_mm"))
    assert "FDP = 0.3125" in line and line.endswith("# was 0.3: paper T3 (SEA torsion spring, 0.3 +- 0.03; "
                                                      "units per papers/README)")
    assert "# was 0.129: paper T3" in text
    unchanged = [x for x in DEFAULTS.splitlines() if "input_stiffness" not in x and "em_mass_kg" not in x]
    assert unchanged == [x for x in text.splitlines() if "input_stiffness" not in x and "em_mass_kg" not in x]
    again = FingerParams.from_toml_text(text)
    np.testing.assert_array_equal(again.input_stiffness_N_per_m, changed.input_stiffness_N_per_m)
    np.testing.assert_array_equal(again.em_mass_kg, changed.em_mass_kg)
    assert again.to_toml() == text


def test_perturbed_is_seeded_and_round_trips(params):
    a, b = params.perturbed(0.1, seed=7), params.perturbed(0.1, seed=7)
    np.testing.assert_array_equal(a.em_stiffness_N_per_m, b.em_stiffness_N_per_m)
    assert not np.allclose(a.em_stiffness_N_per_m, params.em_stiffness_N_per_m)
    assert np.all(np.abs(a.em_stiffness_N_per_m / params.em_stiffness_N_per_m - 1) <= 0.1)
    np.testing.assert_allclose(FingerParams.from_toml_text(a.to_toml()).em_stiffness_N_per_m,
                               a.em_stiffness_N_per_m)


def _line(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.mark.parametrize("old, new, key", [
    ("input_stiffness_N_per_mm = 0.3", "input_stiffness_N_per_mm = -0.3", "tendons.input_stiffness_N_per_mm"),
    ("rom_deg = [0.0, 100.0]", "rom_deg = [100.0, 0.0]", "joints.PIP.rom_deg"),
    ("[moment_arms.LUM]", "[moment_arms.EIP]", "moment_arms.EIP"),
    ("em_stiffness_N_per_mm = 15.0", "em_stiffness_N_per_mm = 0.0", "tendons.em_stiffness_N_per_mm"),
    ("mass_g = 6.0", "mass_g = -6.0", "bones.middle.mass_g"),
    ("PIP_mm = [7.8]", "DIP_mm = [7.8]", "moment_arms.FDS.DIP_mm"),
    ("a_N = 0.258", "a_N = \"big\"", "contact.a_N"),
    # finite in TOML, infinite in SI: refused before the unit conversion overflows
    ("input_stiffness_N_per_mm = 0.3", "input_stiffness_N_per_mm = 1e308", "tendons.input_stiffness_N_per_mm"),
    ("d_mm = [0.0, 0.0, 0.0, 0.0]", "d_mm = [1e308, 0.0, 0.0, 0.0]", "kinematics.d_mm"),
])
def test_bad_values_are_refused_naming_file_line_and_key(old, new, key):
    assert old in DEFAULTS
    text = DEFAULTS.replace(old, new, 1)
    with pytest.raises(ParameterError) as err:
        FingerParams.from_toml_text(text, source="bad.toml")
    message = str(err.value)
    assert message.startswith(f"bad.toml:{_line(text, new)}: {key}:"), message


def test_missing_key_and_bad_toml(tmp_path):
    with pytest.raises(ParameterError, match=r"kinematics\.a_mm: missing"):
        FingerParams.from_toml_text(DEFAULTS.replace("a_mm = [0.0, 60.7, 30.0, 40.0]", ""))
    broken = tmp_path / "broken.toml"
    broken.write_text("[kinematics\n")
    with pytest.raises(ParameterError, match="broken.toml.*not valid TOML"):
        FingerParams.from_toml(broken)
    with pytest.raises(ParameterError, match="cannot read"):
        FingerParams.from_toml(tmp_path / "absent.toml")


def test_per_tendon_stiffness_table():
    table = "{FDP = 0.33, FDS = 0.3, ED = 0.3, DI = 0.3, PI = 0.3, LUM = 0.27}"
    text = DEFAULTS.replace("input_stiffness_N_per_mm = 0.3", f"input_stiffness_N_per_mm = {table}")
    p = FingerParams.from_toml_text(text)
    np.testing.assert_allclose(p.input_stiffness_N_per_m, [330, 300, 300, 300, 300, 270])
    bad = DEFAULTS.replace("input_stiffness_N_per_mm = 0.3", "input_stiffness_N_per_mm = {XYZ = 0.3}")
    with pytest.raises(ParameterError, match="input_stiffness_N_per_mm.XYZ: unknown tendon"):
        FingerParams.from_toml_text(bad)


def test_moment_arm_query_matches_table(params):
    theta = np.radians([0.0, 40.0, 50.0, 20.0])
    # FDP at PIP: 10.8 + 0.9 theta (mm); DI at MCP_AB: 9 cos(theta_MCP_FE)
    assert params.moment_arm("FDP", "PIP", theta) == pytest.approx((10.8 + 0.9 * theta[2]) * 1e-3)
    assert params.moment_arm("DI", "MCP_AB", theta) == pytest.approx(9e-3 * np.cos(theta[1]))
