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

A read in flight when the command is due still holds it for that one read, so the control loop also says
when its next tick is due (``announce_tick``): a read does not start in the guard time before it (the
reads' own recent duration, x1.5) but waits for that tick to have run. The command then finds the bus idle.
"""

from __future__ import annotations

import math
import threading
import time

import numpy as np
from uartlab.drivers.interfaces import Actuators, ActuatorSample

READ_S_START = 0.002          # est.: one sync read of six MX-64s at 1 Mbps with USB latency, until measured
READ_GUARD_MAX_S = 0.005      # est.: half a 100 Hz period at most, so the stream still reads at its rate
READ_AVERAGING = 0.1          # weight of the newest read in the running duration (about the last 10 reads)


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
        self._tick = threading.Condition(threading.Lock())
        self._next_tick_s = -math.inf     # when the control loop's next command is due (host monotonic)
        self._read_s = READ_S_START       # recent duration of one read (exponential average)
        self.reads_deferred = 0           # reads that waited for a tick

    def announce_tick(self, due_s: float) -> None:
        """The control loop's next tick is due at ``due_s``; reads keep the bus free just before it."""
        with self._tick:
            self._next_tick_s = due_s
            self._tick.notify_all()

    @property
    def read_guard_s(self) -> float:
        """How long before a tick a read no longer starts: 1.5 recent reads, at most READ_GUARD_MAX_S."""
        return min(READ_GUARD_MAX_S, 1.5 * self._read_s)

    def _defer_read(self) -> None:
        with self._tick:
            due_s = self._next_tick_s
            gap_s = due_s - time.monotonic()
            if 0 < gap_s < self.read_guard_s:
                self.reads_deferred += 1
                # until the loop has ticked (it announces the next one), or a loop gone quiet stops mattering
                self._tick.wait_for(lambda: self._next_tick_s != due_s, gap_s + READ_GUARD_MAX_S)

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
        self._defer_read()
        with self._background:
            t0 = time.monotonic()
            sample = self.device.read()
            self._read_s += READ_AVERAGING * (time.monotonic() - t0 - self._read_s)
            return sample

    def stop(self, torque_off: bool = True) -> None:
        with self._urgent:
            self.device.stop(torque_off=torque_off)

    def torque_off(self) -> None:
        with self._urgent:
            self.device.torque_off()

    def close(self) -> None:
        with self._urgent:
            self.device.close()
