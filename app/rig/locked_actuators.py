"""The rig's actuators, one bus transaction at a time, whichever thread asks; commands before reads.

Several threads share the servo bus: the rig's actuators stream thread reads it at the poll rate, the
engine's control loop (app/run/engine.py) enables, commands and stops, a calibration procedure reads
(app/procedures/probe.py), the GUI's E-stop turns torque off from the Qt thread, and ``Rig.stop`` closes it.
A bus transaction interleaved with another would garble both, so every call holds one ``BusLock``.

The lock has two priorities. A read is *background*: it waits while anything urgent is waiting, and a driver
that can (``Mx64Bus.between_tries``) gives the bus up between the retries of a read that is not being
answered, so the engine's command goes out after at most the one transaction in flight instead of after
every retry of a servo that stopped answering (with the twin's 200 ms packet floor: 0.2 s, not 0.6 s and
more). Everything else (command, enable, stop, torque off, close) is *urgent*.
"""

from __future__ import annotations

import threading

import numpy as np
from uartlab.drivers.interfaces import Actuators, ActuatorSample


class BusLock:
    """A re-entrant lock where urgent holders go first: background ones wait for no urgent waiter, and the
    background holder may ``yield_to_urgent`` between transactions."""

    def __init__(self):
        self._cond = threading.Condition(threading.Lock())
        self._owner: int | None = None
        self._depth = 0
        self._urgent_waiting = 0
        self._holder_urgent = False
        self.yields = 0            # times a background holder let an urgent caller in

    def acquire(self, urgent: bool) -> None:
        me = threading.get_ident()
        with self._cond:
            if self._owner == me:
                self._depth += 1
                return
            if urgent:
                self._urgent_waiting += 1
                try:
                    self._cond.wait_for(lambda: self._owner is None)
                finally:
                    self._urgent_waiting -= 1
            else:
                self._cond.wait_for(lambda: self._owner is None and not self._urgent_waiting)
            self._owner, self._depth, self._holder_urgent = me, 1, urgent

    def release(self) -> None:
        with self._cond:
            self._depth -= 1
            if self._depth == 0:
                self._owner = None
                self._cond.notify_all()

    def yield_to_urgent(self) -> None:
        """From a background holder, between two transactions: let every urgent waiter through, then take it
        back. An urgent holder never yields (an enable must not be split by the E-stop's torque off)."""
        me = threading.get_ident()
        with self._cond:
            if self._owner != me or self._holder_urgent or not self._urgent_waiting:
                return
            depth, self._owner, self._depth = self._depth, None, 0
            self.yields += 1
            self._cond.notify_all()
            self._cond.wait_for(lambda: self._owner is None and not self._urgent_waiting)
            self._owner, self._depth, self._holder_urgent = me, depth, False

    def held(self, urgent: bool) -> _Held:
        return _Held(self, urgent)


class _Held:
    __slots__ = ("_lock", "_urgent")

    def __init__(self, lock: BusLock, urgent: bool):
        self._lock, self._urgent = lock, urgent

    def __enter__(self) -> None:
        self._lock.acquire(self._urgent)

    def __exit__(self, *exc) -> None:
        self._lock.release()


class LockedActuators:
    """An ``Actuators`` whose every call holds the same ``BusLock``; ``device`` is the backend's driver."""

    def __init__(self, device: Actuators):
        self.device = device
        self.lock = BusLock()
        self._urgent, self._background = self.lock.held(True), self.lock.held(False)
        if hasattr(device, "between_tries"):  # the driver's hook between a read's retries
            device.between_tries = self.lock.yield_to_urgent

    def connect(self) -> None:
        with self._urgent:
            self.device.connect()

    def enable(self) -> None:
        with self._urgent:
            self.device.enable()

    def command(self, excursion_m: np.ndarray) -> None:
        with self._urgent:
            self.device.command(excursion_m)

    def read(self) -> ActuatorSample:
        with self._background:
            return self.device.read()

    def stop(self, torque_off: bool = True) -> None:
        with self._urgent:
            self.device.stop(torque_off=torque_off)

    def torque_off(self) -> None:
        with self._urgent:
            self.device.torque_off()

    def close(self) -> None:
        with self._urgent:
            self.device.close()
