"""The small interfaces every device family implements — real backend and twin alike.

Like python-can's one abstract bus with many backends: the rig (app/rig/rig.py), the engine that
commands the servos and the calibration procedures talk to these, never to dynamixel_sdk, nidaqmx or
sockets directly. Every sample carries the host
monotonic time (``time.monotonic()``) and, where the device has one, its own clock.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

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


class Actuators(Protocol):
    """Six series elastic actuators, commanded in tendon space."""

    def connect(self) -> None: ...
    def enable(self) -> None: ...                      # torque on, holding where they are
    def command(self, excursion_m: np.ndarray) -> None: ...  # one goal per tendon, one bus transaction
    def read(self) -> ActuatorSample: ...
    def stop(self, torque_off: bool = True) -> None: ...  # stop moving; optionally drop torque
    def close(self) -> None: ...


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


class AnalogInput(Protocol):
    def start(self) -> None: ...
    def blocks(self, timeout_s: float | None = None): ...  # iterator of AnalogBlock
    def stop(self) -> None: ...


# ---------------------------------------------------------------- motion capture
@dataclass(slots=True)
class MocapSample:
    host_time_s: float
    frame_number: int
    device_time_s: float             # Motive's timestamp
    markers_m: np.ndarray            # (n, 3) labelled markers, NaN when occluded
    rigid_bodies: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)  # name -> (pos, quat)


class Mocap(Protocol):
    def connect(self) -> None: ...
    def latest(self) -> MocapSample | None: ...
    def close(self) -> None: ...
