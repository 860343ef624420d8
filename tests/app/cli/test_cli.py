"""The `uartlab` command as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
from uartlab.app.cli.main import main


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "uartlab.app.cli", *args], capture_output=True, text=True,
                          timeout=300)


def test_free_motion_prints_the_steady_state(capsys):
    assert main(["sim", "free-motion", "--tendon", "fdp"]) == 0
    out = capsys.readouterr().out
    assert "free/FDP" in out and "joint angles [deg]" in out and "tendon tensions [N]" in out
    assert "fingertip force [N]" in out


def test_contact_json_and_plot(capsys, tmp_path):
    png = tmp_path / "curl.png"
    assert main(["sim", "contact", "--pose", "curl", "--flexor", "FDP", "--em", "ED", "--json",
                 "--plot", str(png)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["trial"] == "contact/Curl/FDP+ED@67.5deg" and report["settled"]
    assert set(report["joint_angles_deg"]) == {"MCP_AB", "MCP_FE", "PIP", "DIP"}
    assert report["fingertip_force_N"]["magnitude"] > 0.1
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000


def test_export_urdf_and_params_round_trip(tmp_path, capsys):
    urdf = tmp_path / "f.urdf"
    assert main(["sim", "export-urdf", "-o", str(urdf)]) == 0
    joints = [j.get("name") for j in ET.parse(urdf).getroot().iter("joint") if j.get("type") == "revolute"]
    assert joints == ["MCP_AB", "MCP_FE", "PIP", "DIP"]
    toml = tmp_path / "p.toml"
    assert main(["sim", "params", "-o", str(toml)]) == 0
    capsys.readouterr()
    assert main(["sim", "free-motion", "--tendon", "ED", "--params", str(toml), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["settled"]


def test_bad_parameter_file_is_one_clear_line_not_a_traceback(tmp_path):
    bad = tmp_path / "bad.toml"
    from uartlab.sim import FingerParams

    bad.write_text(FingerParams.uart().to_toml().replace("em_mass_kg = 0.129", "em_mass_kg = -1.0"))
    proc = run("sim", "free-motion", "--tendon", "FDP", "--params", str(bad))
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    line = next(i for i, text in enumerate(bad.read_text().splitlines(), 1) if "em_mass_kg" in text)
    assert f"bad.toml:{line}: tendons.em_mass_kg: must be > 0" in proc.stderr


def test_unknown_tendon_is_a_usage_error():
    proc = run("sim", "free-motion", "--tendon", "EIP")
    assert proc.returncode == 2 and "invalid choice" in proc.stderr


@pytest.mark.parametrize("argv", [["--version"], ["sim", "--help"]])
def test_help_and_version(argv):
    proc = run(*argv)
    assert proc.returncode == 0 and ("uartlab" in proc.stdout)
