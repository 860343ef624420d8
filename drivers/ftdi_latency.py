"""The FTDI latency timer of a serial port: find it, read it, set it.

An FTDI USB serial adapter (the U2D2 is one) holds received bytes until 64 have arrived or its latency timer
runs out; Linux's ftdi_sio sets the timer to 16 ms, so every Dynamixel reply can wait up to 16 ms: a
six-servo sync read per tick then caps the loop near 60 Hz. At 1 ms the reply is on the host within about
a millisecond (ROBOTIS' e-Manual and the ros2 dynamixel docs say to set 1).

ftdi_sio shows the timer as ``/sys/bus/usb-serial/devices/<tty>/latency_timer`` (ms, 1..255), writable by
root unless a udev rule sets it when the adapter is plugged in. A port path may be a symlink
(/dev/serial/by-id/usb-FTDI_...-if00-port0 -> ../../ttyUSB0): the tty's name is what sysfs knows it by.
A pseudo-terminal (the twin), a CDC-ACM port (ttyACM*) or another usb-serial driver (cp210x, ch341) has
no such file: "not an FTDI adapter".

    timer = ftdi_latency.ensure("/dev/ttyUSB0", 1)    # set it when the file is writable, else say how
    if not timer.ok(1): print(timer.advice(1))

The sysfs root is a parameter so tests build a fake tree instead of touching /sys.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

WANTED_MS = 1
SYSFS_ROOT = Path("/sys")
USB_SERIAL_DEVICES = Path("bus/usb-serial/devices")
FTDI_DRIVER = "ftdi_sio"
UDEV_RULE = 'ACTION=="add", SUBSYSTEM=="usb-serial", DRIVER=="ftdi_sio", ATTR{{latency_timer}}="{ms}"'
UDEV_RULE_FILE = "/etc/udev/rules.d/99-ftdi-latency.rules"


@dataclass(frozen=True)
class LatencyTimer:
    """What one serial port has: an FTDI latency timer (``path``, ``value_ms``) or the reason it has none."""

    port: str                   # as configured
    tty: str                    # the device the port resolves to, e.g. "ttyUSB0"
    path: Path | None = None    # the sysfs latency_timer file; None: not an FTDI adapter
    value_ms: int | None = None
    writable: bool = False
    note: str = ""              # why there is no timer, or why it could not be read or set

    @property
    def is_ftdi(self) -> bool:
        return self.path is not None

    def ok(self, wanted_ms: int = WANTED_MS) -> bool:
        """True when nothing is to be done: the timer is at most ``wanted_ms``, or the port is not FTDI."""
        return not self.is_ftdi or (self.value_ms is not None and self.value_ms <= wanted_ms)

    def fix_commands(self, wanted_ms: int = WANTED_MS) -> tuple[str, str]:
        """The command that sets it now (until the adapter is re-plugged) and the udev rule that keeps it."""
        return (f"echo {wanted_ms} | sudo tee {self.path}",
                f"echo '{UDEV_RULE.format(ms=wanted_ms)}' "
                f"| sudo tee {UDEV_RULE_FILE} && sudo udevadm control --reload-rules && sudo udevadm trigger")

    def describe(self, wanted_ms: int = WANTED_MS) -> str:
        """One line for a report: the value and whether it is right, or why there is none."""
        if not self.is_ftdi:
            return f"not an FTDI adapter ({self.note})" if self.note else "not an FTDI adapter"
        if self.value_ms is None:
            return f"{self.path} cannot be read: {self.note}"
        if self.ok(wanted_ms):
            return f"{self.value_ms} ms ({self.path})"
        return f"{self.value_ms} ms, want {wanted_ms} ms: {self.fix_commands(wanted_ms)[0]}"

    def advice(self, wanted_ms: int = WANTED_MS) -> str:
        """The one warning line when the timer is too long: the file, the value and how to fix it."""
        now, rule = self.fix_commands(wanted_ms)
        value = f"{self.value_ms} ms" if self.value_ms is not None else f"unreadable ({self.note})"
        why = f" ({self.note})" if self.note and self.value_ms is not None else ""
        return (f"{self.port}: FTDI latency timer {self.path} is {value}{why}, not {wanted_ms} ms: every "
                f"Dynamixel reply may wait that long. Fix: {now}; for good, a udev rule: {rule}")


def _tty_name(port: str) -> str:
    """The kernel's name for the port: /dev/serial/by-id/... and other symlinks resolved to e.g. ttyUSB0."""
    return Path(os.path.realpath(port)).name


def find(port: str, sysfs_root: str | Path = SYSFS_ROOT) -> LatencyTimer:
    """The port's latency timer, read, without changing anything."""
    tty = _tty_name(port)
    device = Path(sysfs_root) / USB_SERIAL_DEVICES / tty
    timer_file = device / "latency_timer"
    if not timer_file.exists():
        if not device.exists():
            return LatencyTimer(port, tty, note=f"{tty} is not a USB serial (usb-serial) device")
        driver = Path(os.path.realpath(device / "driver")).name if (device / "driver").exists() else "unknown"
        return LatencyTimer(port, tty, note=f"{tty} uses the {driver} driver, not {FTDI_DRIVER}")
    writable = os.access(timer_file, os.W_OK)
    try:
        value = int(timer_file.read_text().strip())
    except (OSError, ValueError) as exc:
        return LatencyTimer(port, tty, timer_file, None, writable, note=str(exc))
    return LatencyTimer(port, tty, timer_file, value, writable)


def ensure(port: str, wanted_ms: int = WANTED_MS, sysfs_root: str | Path = SYSFS_ROOT) -> LatencyTimer:
    """Set the port's latency timer to ``wanted_ms`` when it is longer and the file is writable; the result
    says what the timer is now (``ok()``) and, when it could not be set, why (``note``)."""
    timer = find(port, sysfs_root)
    if timer.ok(wanted_ms) or timer.path is None:
        return timer
    try:
        timer.path.write_text(f"{wanted_ms}\n")
    except OSError as exc:
        reason = "needs root or a udev rule" if isinstance(exc, PermissionError) else str(exc)
        return LatencyTimer(port, timer.tty, timer.path, timer.value_ms, False, note=reason)
    return find(port, sysfs_root)
