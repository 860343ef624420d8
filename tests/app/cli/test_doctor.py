"""Tests for `uartlab doctor`: the report's shape, honesty about gaps, and that it never raises."""

from __future__ import annotations

import argparse
import json
import socket
import sys
from importlib import metadata

import numpy
import pytest
from conftest import by_id_link, usb_serial_device
from uartlab import __version__
from uartlab.app.cli import doctor

SECTIONS = ("python", "packages", "qt", "nidaqmx", "serial_ports", "latency_timers", "network", "missing")
HEADINGS = ("Python", "Packages", "Qt", "NI-DAQmx", "Serial ports", "FTDI latency timer", "Network", "What is missing")


@pytest.fixture(scope="module")
def report() -> dict:
    return doctor.collect()


def _hide_nidaqmx(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make nidaqmx look uninstalled: no distribution metadata, and `import nidaqmx` fails."""
    real_version = metadata.version

    def fake_version(dist: str) -> str:
        if dist == "nidaqmx":
            raise metadata.PackageNotFoundError(dist)
        return real_version(dist)

    monkeypatch.setattr(metadata, "version", fake_version)
    monkeypatch.setitem(sys.modules, "nidaqmx", None)  # None in sys.modules makes the import raise


def test_collect_returns_all_sections(report: dict) -> None:
    assert set(SECTIONS) <= set(report)
    assert report["uartlab"] == __version__  # the one version declaration (uartlab/_version.py)
    assert set(report["python"]) == {"version", "executable", "platform"}
    assert report["python"]["executable"] == sys.executable
    assert [name for name, _, _ in doctor.PACKAGES] == list(report["packages"])
    assert isinstance(report["serial_ports"], list)
    assert isinstance(report["missing"], list)
    assert all(isinstance(sentence, str) and sentence.endswith(".") for sentence in report["missing"])
    assert "gRPC" in report["nidaqmx"]["twin"]


def test_packages_report_real_numpy_version(report: dict) -> None:
    assert report["packages"]["numpy"] == numpy.__version__


def test_network_lists_the_interfaces_socket_sees(report: dict) -> None:
    names = [iface["name"] for iface in report["network"]["interfaces"]]
    assert names == [name for _, name in socket.if_nameindex()]
    assert report["network"]["mocap"]


def test_render_has_each_heading_and_a_line_per_package(report: dict) -> None:
    lines = doctor.render(report).splitlines()
    for heading in HEADINGS:
        assert heading in lines, heading
    for name, version in report["packages"].items():
        expected = f"OK       {version}" if version else "missing"
        assert any(line.split()[:1] == [name] and expected in line for line in lines), name


def test_render_says_when_nothing_is_missing(report: dict) -> None:
    assert "Nothing is missing for a full rig." in doctor.render({**report, "missing": []})
    assert "Nothing is missing" not in doctor.render({**report, "missing": ["Something is missing."]})


def test_render_survives_an_empty_report() -> None:
    assert "What is missing" in doctor.render({})


def test_json_output_round_trips(report: dict, capsys: pytest.CaptureFixture[str]) -> None:
    assert json.loads(json.dumps(report)) == report  # plain JSON data, no default= needed
    assert doctor.main(argparse.Namespace(json=True)) == 0
    printed = json.loads(capsys.readouterr().out)
    assert set(SECTIONS) <= set(printed)
    assert printed["packages"]["numpy"] == numpy.__version__


def test_text_output_returns_zero(capsys: pytest.CaptureFixture[str]) -> None:
    assert doctor.main(argparse.Namespace(json=False)) == 0
    assert capsys.readouterr().out.startswith("uartlab doctor")


def test_absent_package_is_named_in_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    _hide_nidaqmx(monkeypatch)
    report = doctor.collect()
    assert report["packages"]["nidaqmx"] is None
    assert report["packages"]["numpy"] == numpy.__version__  # only the hidden package is affected
    sentences = [s for s in report["missing"] if s.startswith("nidaqmx is not installed")]
    assert len(sentences) == 1 and "pip install nidaqmx" in sentences[0] and sentences[0].endswith(".")
    assert report["nidaqmx"]["driver"] is None and "does not import" in report["nidaqmx"]["reason"]
    # The package sentence already covers it; a second "driver not found" line would be noise.
    assert not any("driver not found" in s for s in report["missing"])
    assert any(line.split()[:2] == ["nidaqmx", "missing"] for line in doctor.render(report).splitlines())


def test_qt_probe_works_offscreen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    qt = doctor.collect()["qt"]
    assert qt["imports"] is True
    assert qt["app_starts"] is True, qt["error"]
    assert qt["platform"] == "offscreen" and qt["source"] == "QT_QPA_PLATFORM"
    assert qt["probed_platform"] == "offscreen"  # the subprocess really ran with the caller's environment
    assert qt["note"] is None
    assert "offscreen (from QT_QPA_PLATFORM)" in doctor.render({"qt": qt})


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="native Qt platforms need no display")
def test_qt_without_display_suggests_offscreen(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(var, raising=False)
    report = doctor.collect()  # must return (not hang or abort) even though Qt cannot start here
    assert "QT_QPA_PLATFORM=offscreen" in report["qt"]["note"]
    assert any("QT_QPA_PLATFORM=offscreen" in s for s in report["missing"])


def test_qt_probe_timeout_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    def hang(*args: object, **kwargs: object) -> None:
        raise doctor.subprocess.TimeoutExpired(cmd="python", timeout=20)

    monkeypatch.setattr(doctor.subprocess, "run", hang)  # also makes `ip` time out: both must be survived
    report = doctor.collect()
    assert report["qt"]["app_starts"] is False and "20 s" in report["qt"]["error"]
    assert report["network"]["ipv4_source"] is None


def test_loopback_only_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket, "if_nameindex", lambda: [(1, "lo")])
    monkeypatch.setattr(doctor, "_ip_addresses",
                        lambda: {"lo": {"ipv4": ["127.0.0.1"], "loopback": True, "state": "UNKNOWN"}})
    network = doctor.collect()["network"]
    assert network["mocap_ok"] is False and network["mocap"] == doctor.LOOPBACK_ONLY
    missing = doctor._missing({"network": network, "packages": {}}, {})
    assert any("Motive server cannot be reached" in s for s in missing)


def test_no_ip_command_still_lists_interfaces(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doctor.shutil, "which", lambda name: None)
    monkeypatch.setattr(socket, "if_nameindex", lambda: [(1, "lo"), (2, "eth0")])
    network = doctor.collect()["network"]
    assert [i["ipv4"] for i in network["interfaces"]] == [None, None]
    assert network["mocap_ok"] is None and "eth0" in network["mocap"]


def test_failing_probes_never_raise(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: object, **kwargs: object) -> None:
        raise OSError("no such thing on this machine")

    monkeypatch.setattr(socket, "if_nameindex", boom)
    from serial.tools import list_ports

    monkeypatch.setattr(list_ports, "comports", boom)
    report = doctor.collect()
    assert report["serial_ports"] == [] and report["network"]["interfaces"] == []
    failed = [s for s in report["missing"] if "probe failed" in s]
    assert any("serial_ports" in s for s in failed) and any("network" in s for s in failed)
    assert "What is missing" in doctor.render(report)


# ------------------------------------------------------------------ the FTDI latency timer
def _real_rig(tmp_path, port: str):
    from uartlab.app.rig.config import load_rig_config

    path = tmp_path / "lab.toml"
    path.write_text(f'[actuators]\nbackend = "real"\nport = "{port}"\n')
    return load_rig_config(path), str(path)


def test_the_rig_port_latency_timer_is_reported_with_the_fix(tmp_path) -> None:
    sysfs = tmp_path / "sys"
    usb_serial_device(sysfs, "ttyUSB0", latency_ms=16)
    rig, name = _real_rig(tmp_path, str(by_id_link(tmp_path / "dev", "ttyUSB0")))
    report = doctor.collect(rig, name, sysfs_root=sysfs)
    row = report["latency_timers"][0]
    assert row["source"] == f"{name} actuators.port" and row["ftdi"] and row["value_ms"] == 16 and not row["ok"]
    timer_file = sysfs / "bus/usb-serial/devices/ttyUSB0/latency_timer"
    assert row["fix"] == f"echo 1 | sudo tee {timer_file}"
    assert any("latency timer" in m and "16 ms" in m and row["fix"] in m for m in report["missing"])
    text = doctor.render(report)
    assert "FTDI latency timer" in text and f"too long 16 ms, want 1 ms: echo 1 | sudo tee {timer_file}" in text
    assert timer_file.read_text().strip() == "16"  # doctor reports; only the driver sets it


def test_a_timer_at_1_ms_is_ok(tmp_path) -> None:
    sysfs = tmp_path / "sys"
    usb_serial_device(sysfs, "ttyUSB0", latency_ms=1)
    rig, name = _real_rig(tmp_path, "/dev/ttyUSB0")
    report = doctor.collect(rig, name, sysfs_root=sysfs)
    assert report["latency_timers"][0]["ok"] and not any("latency" in m for m in report["missing"])


def test_doctor_on_a_rig_file_from_the_command_line(tmp_path) -> None:
    import subprocess

    twin = tmp_path / "twin.toml"
    twin.write_text('[actuators]\nbackend = "twin"\n')
    out = subprocess.run([sys.executable, "-m", "uartlab.app.cli", "doctor", "--rig", str(twin)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "(twin)" in out.stdout and "the twin's pseudo-terminal: not an FTDI adapter" in out.stdout
    bad = subprocess.run([sys.executable, "-m", "uartlab.app.cli", "doctor", "--rig", str(tmp_path / "no.toml")],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.strip().splitlines() == [f"uartlab doctor: {tmp_path / 'no.toml'}: cannot read the rig "
                                               "configuration: no such file or directory"]
