"""The FTDI latency timer: found through symlinks, read, set when writable, and said how to fix when not; the
MX-64 bus sets it at connect. A fake sysfs tree in tmp stands in for /sys (the module takes its root)."""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
from pathlib import Path

import pytest
from conftest import by_id_link, usb_serial_device
from uartlab.drivers import ftdi_latency
from uartlab.drivers.mx64_bus import Mx64Bus
from uartlab.drivers.twins.dxl_bus import DxlBusTwin
from uartlab.drivers.twins.plant import Plant, PlantConfig

NOBODY_UID = 65534
PACKET_TIMEOUT_MS = 300.0  # the twin shares this process's CPU (tests/drivers/test_mx64_bus.py)


@contextlib.contextmanager
def unprivileged():
    """Run the block as a user who cannot write root's files (as the lab's operator): root drops its effective
    uid for the block; anyone else is that user already."""
    if os.geteuid() != 0:
        yield
        return
    os.seteuid(NOBODY_UID)
    try:
        yield
    finally:
        os.seteuid(0)


@pytest.fixture
def sysfs(tmp_path: Path) -> Path:
    return tmp_path / "sys"


def test_a_by_id_symlink_is_followed_to_the_tty(sysfs: Path, tmp_path: Path) -> None:
    usb_serial_device(sysfs, "ttyUSB0", latency_ms=16)
    timer = ftdi_latency.find(str(by_id_link(tmp_path / "dev", "ttyUSB0")), sysfs)
    assert timer.is_ftdi and timer.tty == "ttyUSB0" and timer.value_ms == 16
    assert timer.path == sysfs / "bus/usb-serial/devices/ttyUSB0/latency_timer"
    assert not timer.ok(1) and timer.ok(16)


def test_a_writable_timer_is_set_to_1_ms(sysfs: Path) -> None:
    device = usb_serial_device(sysfs, "ttyUSB0", latency_ms=16)
    timer = ftdi_latency.ensure("/dev/ttyUSB0", 1, sysfs)
    assert timer.ok(1) and timer.value_ms == 1
    assert (device / "latency_timer").read_text().strip() == "1"


def test_a_timer_already_at_1_ms_is_left_alone(sysfs: Path) -> None:
    device = usb_serial_device(sysfs, "ttyUSB0", latency_ms=1)
    (device / "latency_timer").chmod(0o444)
    assert ftdi_latency.ensure("/dev/ttyUSB0", 1, sysfs).ok(1)


def test_an_unwritable_timer_says_the_file_the_value_and_the_fix() -> None:
    # Built outside pytest's root-only tmp folders so the unprivileged user can read it, as /sys is readable.
    with tempfile.TemporaryDirectory() as folder:
        sysfs = Path(folder) / "sys"
        device = usb_serial_device(sysfs, "ttyUSB1", latency_ms=16)
        for path in (Path(folder), *sysfs.rglob("*")):
            path.chmod(0o755 if path.is_dir() else 0o644)
        with unprivileged():
            timer = ftdi_latency.ensure("/dev/ttyUSB1", 1, sysfs)
        assert (device / "latency_timer").read_text().strip() == "16"
    assert timer.is_ftdi and not timer.ok(1) and timer.value_ms == 16 and not timer.writable
    advice = timer.advice(1)
    assert "\n" not in advice
    assert f"{timer.path} is 16 ms" in advice and "needs root or a udev rule" in advice
    assert f"echo 1 | sudo tee {timer.path}" in advice
    assert 'DRIVER=="ftdi_sio", ATTR{latency_timer}="1"' in advice and ftdi_latency.UDEV_RULE_FILE in advice
    assert timer.describe(1).startswith("16 ms, want 1 ms: echo 1 | sudo tee ")


def test_a_pty_is_not_an_ftdi_adapter(sysfs: Path) -> None:
    (sysfs / "bus/usb-serial/devices").mkdir(parents=True)
    master, slave = os.openpty()
    try:
        timer = ftdi_latency.ensure(os.ttyname(slave), 1, sysfs)
    finally:
        os.close(master)
        os.close(slave)
    assert not timer.is_ftdi and timer.ok(1)
    assert timer.describe(1).startswith("not an FTDI adapter (") and "not a USB serial" in timer.describe(1)


def test_another_usb_serial_driver_is_named(sysfs: Path) -> None:
    usb_serial_device(sysfs, "ttyUSB0", driver="cp210x", latency_ms=None)
    timer = ftdi_latency.find("/dev/ttyUSB0", sysfs)
    assert not timer.is_ftdi and timer.ok(1)
    assert timer.describe(1) == "not an FTDI adapter (ttyUSB0 uses the cp210x driver, not ftdi_sio)"


def test_an_unreadable_timer_is_said(sysfs: Path) -> None:
    device = usb_serial_device(sysfs, "ttyUSB0", latency_ms=None)
    (device / "latency_timer").write_text("garbage\n")
    timer = ftdi_latency.find("/dev/ttyUSB0", sysfs)
    assert timer.is_ftdi and timer.value_ms is None and not timer.ok(1)
    assert "cannot be read" in timer.describe(1)


@pytest.fixture
def bus_twin():
    plant = Plant(PlantConfig())
    twin = DxlBusTwin(plant, ids=(1, 2, 3, 4, 5, 6), protocol=2.0).start()
    try:
        yield twin
    finally:
        twin.stop()


def test_the_bus_sets_its_port_to_1_ms_at_connect(bus_twin, sysfs: Path, caplog) -> None:
    # The twin's pty stands in for /dev/ttyUSB0: the fake tree gives its tty name a latency timer at 16 ms.
    device = usb_serial_device(sysfs, Path(os.path.realpath(bus_twin.port)).name, latency_ms=16)
    bus = Mx64Bus(bus_twin.port, packet_timeout_ms=PACKET_TIMEOUT_MS)
    bus.sysfs_root = sysfs
    with caplog.at_level(logging.WARNING, logger="uartlab.drivers.mx64_bus"):
        bus.connect()
    try:
        assert (device / "latency_timer").read_text().strip() == "1"
        assert not caplog.records and not [e for e in bus.events if e.kind == "latency timer"]
    finally:
        bus.close()


def test_the_bus_on_a_pty_says_nothing(bus_twin, caplog) -> None:
    with caplog.at_level(logging.WARNING, logger="uartlab.drivers.mx64_bus"), \
            Mx64Bus(bus_twin.port, packet_timeout_ms=PACKET_TIMEOUT_MS):
        pass
    assert not [r for r in caplog.records if "latency" in r.getMessage()]


def test_the_bus_warns_in_one_line_when_it_cannot_set_the_timer(bus_twin, sysfs: Path, caplog) -> None:
    # A timer file that cannot be read or written (here a folder where the file should be) whoever runs this.
    device = usb_serial_device(sysfs, Path(os.path.realpath(bus_twin.port)).name, latency_ms=None)
    (device / "latency_timer").mkdir()
    bus = Mx64Bus(bus_twin.port, packet_timeout_ms=PACKET_TIMEOUT_MS)
    bus.sysfs_root = sysfs
    with caplog.at_level(logging.WARNING, logger="uartlab.drivers.mx64_bus"):
        bus.connect()
    try:
        warnings = [r.getMessage() for r in caplog.records]
        assert len(warnings) == 1 and "\n" not in warnings[0]
        assert f"{device / 'latency_timer'} is unreadable" in warnings[0] and "sudo tee" in warnings[0]
        assert [e.detail for e in bus.events if e.kind == "latency timer"] == warnings
        assert bus.read() is not None  # a warning, not a failure: the bus works at the slower timer
    finally:
        bus.close()
