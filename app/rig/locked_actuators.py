"""The rig's actuators, one bus transaction at a time, whichever thread asks.

Several threads share the servo bus: the rig's actuators stream thread reads it at the poll rate, the
engine's control loop (app/run/engine.py) enables, commands and stops, a calibration procedure reads
(app/procedures/probe.py), the GUI's E-stop turns torque off from the Qt thread, and ``Rig.stop`` closes it.
A bus transaction interleaved with another would garble both, so every call holds one (re-entrant) lock.
"""

from __future__ import annotations

import threading

import numpy as np
from uartlab.drivers.interfaces import Actuators, ActuatorSample


class LockedActuators:
    """An ``Actuators`` whose every call holds the same lock; ``device`` is the backend's driver."""

    def __init__(self, device: Actuators):
        self.device = device
        self._lock = threading.RLock()

    def connect(self) -> None:
        with self._lock:
            self.device.connect()

    def enable(self) -> None:
        with self._lock:
            self.device.enable()

    def command(self, excursion_m: np.ndarray) -> None:
        with self._lock:
            self.device.command(excursion_m)

    def read(self) -> ActuatorSample:
        with self._lock:
            return self.device.read()

    def stop(self, torque_off: bool = True) -> None:
        with self._lock:
            self.device.stop(torque_off=torque_off)

    def torque_off(self) -> None:
        with self._lock:
            self.device.torque_off()

    def close(self) -> None:
        with self._lock:
            self.device.close()
