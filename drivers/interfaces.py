"""The small interfaces every device family implements — real backend and twin alike.

Like python-can's one abstract bus with many backends: the rig (app/rig/rig.py), the engine that
commands the servos and the calibration procedures talk to these, never to dynamixel_sdk, nidaqmx or
sockets directly. Each Protocol declares exactly what app/ calls on a device of its family, and app/
holds devices by these types (app/rig/backends.py builds them; tests/drivers/test_contracts.py holds
every backend to them). Every sample carries the host monotonic time (``time.monotonic()``) and, where
the device has one, its own clock. A device that fails raises ``DeviceError`` naming itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np
from uartlab import errors
from uartlab.errors import ConfigError  # noqa: F401 - the drivers' name for the package's kind


class DeviceError(errors.DeviceError):
    """A device failed; the message names the device (and servo, channel ...) first."""

    def __init__(self, device: str, message: str):
        self.device = device
        super().__init__(f"{device}: {message}")


# ---------------------------------------------------------------- actuators
@dataclass(slots=True)
class ActuatorSample:
    """One read of all six SEAs' servos (tendon order FDP FDS ED DI PI LUM)."""

    host_time_s: float
    excursion_m: np.ndarray          # (6,) tendon excursion from each SEA's zero, + = reeled in
    velocity_m_per_s: np.ndarray     # (6,)
    current_A: np.ndarray            # (6,)
    moving: np.ndarray               # (6,) bool
    hardware_error: np.ndarray       # (6,) int, the MX-64 Hardware Error Status byte
    device_tick_ms: np.ndarray | None = None  # (6,) Realtime Tick where the protocol has it


@runtime_checkable
class Actuators(Protocol):
    """Six series elastic actuators, commanded in tendon space (tendon order FDP FDS ED DI PI LUM)."""

    def connect(self) -> None:
        """Open the link and check every actuator is there; torque stays off."""

    def enable(self) -> None:
        """Torque on, holding where each actuator is."""

    def command(self, excursion_m: np.ndarray) -> None:
        """One goal per tendon (m from each SEA's zero, + = reeled in), in one transaction."""

    def read(self) -> ActuatorSample:
        """All six now; a servo fault turns torque off and raises DeviceError naming the servo."""

    def stop(self, torque_off: bool = True) -> None:
        """Stop moving: torque off, or hold where they are now."""

    def torque_off(self) -> None:
        """Torque off on all six, now (the E-stop)."""

    def close(self) -> None:
        """Torque off, then release the link. Safe to call twice."""


# ---------------------------------------------------------------- analog input
@dataclass(slots=True)
class AnalogBlock:
    """A block of hardware-timed samples from the DAQ."""

    host_time_s: float               # when the block was read
    first_sample_index: int          # index of row 0 since the task started (the sample clock)
    rate_hz: float
    volts: np.ndarray                # (n, channels)
    channel_names: tuple[str, ...]
    gap_before: int = 0              # samples lost just before this block (overflow + restart), never hidden

    def sample_times_s(self, t0_s: float) -> np.ndarray:
        """Sample-clock times t0 + i / fs of the rows."""
        return t0_s + (self.first_sample_index + np.arange(self.volts.shape[0])) / self.rate_hz


@runtime_checkable
class AnalogInput(Protocol):
    """A hardware-timed multichannel voltage acquisition (the USB-6210's pots, reference and gauges)."""

    name: str                        # names the device in DeviceError and the rig's health

    @property
    def columns(self) -> dict[str, list[int]]:
        """Each channel group's columns in ``AnalogBlock.volts``: "pots", "reference", "gauges"."""

    def start(self) -> None:
        """Open the task and start acquiring; a second start raises DeviceError."""

    def blocks(self, timeout_s: float | None = None) -> Iterator[AnalogBlock]:
        """Blocks in sample order until ``stop()``; DeviceError when none comes in ``timeout_s``."""

    def stop(self) -> None:
        """Stop acquiring and release the task; ``blocks()`` then ends. Safe to call twice."""


# ---------------------------------------------------------------- motion capture
@dataclass(slots=True)
class MocapSample:
    host_time_s: float
    frame_number: int
    device_time_s: float             # Motive's timestamp
    markers_m: np.ndarray            # (n, 3) labelled markers, NaN when occluded
    rigid_bodies: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)  # name -> (pos, quat)
    mid_exposure_ticks: int | None = None  # the cameras' mid-exposure on Motive's host clock, where sent


@runtime_checkable
class Mocap(Protocol):
    """Labelled markers from a motion-capture system, frame by frame."""

    marker_names: list[str]          # the columns of ``MocapSample.markers_m`` (known after connect)
    rate_hz: float | None            # the frame rate (None if the system did not say)

    def connect(self) -> None:
        """Reach the system and learn its marker layout; DeviceError naming the device if it cannot."""

    def samples(self, timeout_s: float | None = 1.0) -> Iterator[MocapSample]:
        """Every frame in order as it comes; ends when none comes in ``timeout_s`` (or after ``close()``)."""

    def close(self) -> None:
        """Stop listening and release the sockets. Safe to call twice."""
