"""Interlocks: the checks the runner evaluates every control tick against the latest observations.

Pure logic (no threads, no devices) so the safety rules are tested exactly as they run. A trip LATCHES:
a fault that cleared itself (a force spike, a stream that came back) is still a fault the operator must
see and acknowledge with ``reset()`` before anything moves again.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from uartlab.errors import InterlockError
from uartlab.protocols.limits import Ceilings, Limits, effective
from uartlab.sim.names import TENDONS

# Stream staleness limits, est.: the control loop and servo bus run at ~100 Hz, the DAQ delivers blocks
# every ~50 ms and Motive frames every 10 ms, so 0.25 s is several missed updates, yet short against a 4 s
# pull. The settle rule and the model need the finger's pose: losing the mocap is a fault too.
DEFAULT_MAX_STREAM_AGE_S: dict[str, float] = {"actuators": 0.25, "daq": 0.25, "mocap": 0.25}


class InterlockTrip(InterlockError):
    """Raised by callers that prefer exceptions; carries the Trip's one-sentence reason."""

    def __init__(self, trip: Trip):
        self.trip = trip
        super().__init__(trip.reason)


@dataclass(frozen=True)
class Observation:
    """The latest value of everything the runner and interlocks look at, as of one control tick."""

    tendon_force_N: np.ndarray                     # (6,) SEA forces, tendon order FDP FDS ED DI PI LUM
    excursion_m: np.ndarray                        # (6,) measured excursions
    hardware_error: np.ndarray = field(default_factory=lambda: np.zeros(6, dtype=int))  # (6,) MX-64 byte
    joint_speed_deg_s: np.ndarray = field(default_factory=lambda: np.zeros(4))          # (4,) |dq/dt|
    stream_age_s: dict[str, float] = field(default_factory=dict)  # now - host time of each stream's last sample
    saturated_gauges: tuple[str, ...] = ()         # Nano17 strain gauges at an output rail ("SG0".."SG5")
    fingertip_force_N: float = 0.0                 # |F| of the Nano17 (NaN: no reading, trips like any NaN)
    device_faults: tuple[str, ...] = ()            # a device stream died: its one-line reason
    servos_moving: np.ndarray = field(default_factory=lambda: np.zeros(6, dtype=bool))  # (6,) Moving flags

    @property
    def saturated(self) -> bool:
        return bool(self.saturated_gauges)


@dataclass(frozen=True)
class Trip:
    check: str          # "device", "force", "excursion", "hardware_error", "fingertip_force", "saturation",
                        # "stale_stream", "operator" (E-stop)
    subject: str        # the tendon, servo or stream it is about ("" for the Nano17)
    value: float
    reason: str         # one sentence for the operator and the events table


@dataclass(frozen=True)
class InterlockLimits:
    max_tendon_force_N: float
    max_excursion_m: np.ndarray                    # (6,)
    max_stream_age_s: dict[str, float]
    max_fingertip_force_N: float = math.inf
    # False only where the rig has no SEA calibration yet (the SEA procedure that makes it): unknown tendon
    # forces do not trip then, forces over the limit still do. Everywhere else an unread force is a fault.
    forces_required: bool = True

    @classmethod
    def from_suite(cls, limits: Limits,
                   max_stream_age_s: dict[str, float] | None = None) -> InterlockLimits:
        exc = np.array([limits.max_excursion_mm[t] * 1e-3 for t in TENDONS])
        ages = dict(DEFAULT_MAX_STREAM_AGE_S if max_stream_age_s is None else max_stream_age_s)
        return cls(limits.max_tendon_force_N, exc, ages, limits.max_fingertip_force_N)

    @classmethod
    def for_run(cls, suite_limits: Limits, ceilings: Ceilings | Limits,
                max_stream_age_s: dict[str, float] | None = None) -> InterlockLimits:
        """What a run's interlocks trip at: the effective limits (the rig's ceilings, tightened by the suite;
        never looser than the rig, whatever ceilings the suite was validated against) and the rig's stream
        ages (rig.toml [interlocks], which nothing may loosen)."""
        return cls.from_suite(effective(ceilings, suite_limits), max_stream_age_s)


class Interlocks:
    """``check(obs)`` returns the latched Trip (the first one) or None."""

    def __init__(self, limits: InterlockLimits):
        self.limits = limits
        self._trip: Trip | None = None

    @property
    def tripped(self) -> Trip | None:
        return self._trip

    def reset(self) -> None:
        """Operator acknowledgement; the next check() trips again at once if the fault persists."""
        self._trip = None

    def check(self, obs: Observation) -> Trip | None:
        if self._trip is None:
            self._trip = self._first_violation(obs)
        return self._trip

    def trip(self, check: str, subject: str, reason: str) -> Trip:
        """Latch a trip found outside check() (the E-stop); the first trip stays the reason."""
        if self._trip is None:
            self._trip = Trip(check, subject, math.nan, reason)
        return self._trip

    def _first_violation(self, obs: Observation) -> Trip | None:
        lim = self.limits
        if obs.device_faults:
            return Trip("device", "", math.nan, obs.device_faults[0])
        force = np.asarray(obs.tendon_force_N, dtype=float)
        for i, name in enumerate(TENDONS):
            # `not <=` so NaN (a dead sensor) trips too: fail safe.
            if not abs(force[i]) <= lim.max_tendon_force_N and (lim.forces_required or not np.isnan(force[i])):
                return Trip("force", name, float(force[i]),
                            f"tendon {name} force {force[i]:.1f} N is over the limit {lim.max_tendon_force_N:g} N")
        exc = np.asarray(obs.excursion_m, dtype=float)
        for i, name in enumerate(TENDONS):
            if not abs(exc[i]) <= lim.max_excursion_m[i]:
                return Trip("excursion", name, float(exc[i]),
                            f"tendon {name} excursion {exc[i] * 1e3:.1f} mm is over the limit "
                            f"{lim.max_excursion_m[i] * 1e3:g} mm")
        err = np.asarray(obs.hardware_error, dtype=int)
        for i, name in enumerate(TENDONS):
            if err[i] != 0:
                return Trip("hardware_error", name, float(err[i]),
                            f"servo {name} reports hardware error 0x{int(err[i]):02X}")
        # Saturation before force: a gauge at its rail makes every axis of the wrench meaningless (ATI), so the
        # force it shows is no measurement - the gauge is the reason.
        if obs.saturated_gauges:
            gauges = ", ".join(obs.saturated_gauges)
            return Trip("saturation", "Nano17", 1.0, f"the Nano17 is saturated: strain gauge {gauges} at its "
                                                     "output rail (the force reading is invalid)")
        if not abs(obs.fingertip_force_N) <= lim.max_fingertip_force_N:
            return Trip("fingertip_force", "Nano17", float(obs.fingertip_force_N),
                        f"fingertip force {obs.fingertip_force_N:.2f} N is over the limit "
                        f"{lim.max_fingertip_force_N:g} N")
        for stream, max_age in lim.max_stream_age_s.items():
            # A stream never seen counts as infinitely stale: no data is not "no fault".
            age = obs.stream_age_s.get(stream, math.inf)
            if not age <= max_age:
                return Trip("stale_stream", stream, float(age),
                            f"stream {stream} is stale: last sample {age:.3g} s ago (limit {max_age:g} s)")
        return None
