"""What the control loop sees and records: the newest measurements, the `runner` stream, steady states.

``Latest`` keeps the newest value of everything the runner looks at, from hub items (the mean of the last
10 ms of SEA and Nano17 readings; the settle rule's windowed joint speed). ``runner_spec`` (declared in
uartlab.schema, re-exported here) is the stream the engine publishes once per control tick;
``SteadyState`` is what RECORD keeps of a trial. ``PHASES`` (declared with the runner,
re-exported here) is what the stream's ``phase`` field indexes. The loop itself is the engine's (app/run/engine.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from uartlab.app.rig.joint_stream import WindowSlope
from uartlab.protocols.interlocks import Observation
from uartlab.protocols.runner import PHASES  # noqa: F401 - re-exported for the runner stream's users
from uartlab.schema import (  # noqa: F401 - runner_spec and the stream's constants re-exported for its users
    ACTUATORS,
    DAQ,
    DEFAULT_CONTROL_RATE_HZ,
    JOINTS_IK,
    WATCHED_STREAMS,
    runner_spec,
)
from uartlab.sim.names import JOINTS, TENDONS
from uartlab.streams import EventKind, Record

FORCE_AVERAGE_S = 0.010          # est.: SEA/Nano17 readings averaged over 10 ms (pot noise down ~3x at 1 kHz)


@dataclass(frozen=True)
class SteadyState:
    """One trial's steady state as the rig measured it (the RECORD phase)."""

    trial: str
    repeat: int
    outcome: str
    settle_time_s: float | None          # protocol seconds from the end of the pull
    joint_angles_deg: np.ndarray         # (4,) JOINTS order
    tendon_force_N: np.ndarray           # (6,) TENDONS order
    fingertip_force_N: np.ndarray        # (3,) Nano17 Fx Fy Fz (sensor frame)

    def to_dict(self) -> dict:
        return {"trial": self.trial, "repeat": self.repeat, "outcome": self.outcome,
                "settle_time_s": self.settle_time_s,
                "joint_angles_deg": dict(zip(JOINTS, np.round(self.joint_angles_deg, 3).tolist(), strict=True)),
                "tendon_force_N": dict(zip(TENDONS, np.round(self.tendon_force_N, 4).tolist(), strict=True)),
                "fingertip_force_N": np.round(self.fingertip_force_N, 4).tolist()}


class Latest:
    """The newest value of everything the runner looks at, kept up to date from hub items."""

    def __init__(self, settle_window_s: float, has_nano17: bool, saturated=None):
        self.excursion_m = np.full(6, np.nan)
        self.hardware_error = np.zeros(6, dtype=int)
        self.moving = np.zeros(6, dtype=bool)
        self.tendon_force_N = np.full(6, np.nan)
        self.wrench = np.full(6, np.nan) if has_nano17 else np.zeros(6)
        self.saturated_gauges: tuple[str, ...] = ()
        self.angles_rad = np.full(4, np.nan)
        self.well_posed = False
        self.host_time_s: dict[str, float] = {}
        self.faults: list[str] = []
        self.slope = WindowSlope(settle_window_s)
        self.fresh_after_s = -math.inf
        self._has_nano17, self._saturated = has_nano17, saturated

    def forget_pose(self, host_s: float) -> None:
        """The finger was placed at host_s: the settle rule starts over on frames taken after it."""
        self.slope.clear()
        self.fresh_after_s = host_s

    def update(self, item, protocol_time) -> None:
        if not isinstance(item, Record):
            if item.kind == EventKind.FAULT and not item.replayed:   # a recorded fault is history, not this rig's
                self.faults.append(f"{item.source}: {item.message}")
            return
        d, name = item.data, item.stream
        self.host_time_s[name] = float(item.host_time_s[-1])
        if name == ACTUATORS.stream:
            self.excursion_m = d[ACTUATORS.excursion_m][-1]
            self.hardware_error = d[ACTUATORS.hardware_error][-1]
            self.moving = d[ACTUATORS.moving][-1]
        elif name == DAQ.stream:
            n = max(1, min(len(item), int(round(FORCE_AVERAGE_S * _rate(item.host_time_s)))))
            self.tendon_force_N = d[DAQ.tendon_force_N][-n:].mean(axis=0)
            if self._has_nano17:
                self.wrench = d[DAQ.wrench][-n:].mean(axis=0)
                at_rail = self._saturated(d[DAQ.gauge_V][-n:]).any(axis=0)  # per gauge, over the window
                self.saturated_gauges = tuple(f"SG{g}" for g in np.flatnonzero(at_rail))
        elif name == JOINTS_IK.stream:
            for t, q, ok in zip(item.host_time_s, d[JOINTS_IK.angles_rad], d[JOINTS_IK.well_posed], strict=True):
                if t < self.fresh_after_s:  # solved from a frame taken before the finger was placed
                    continue
                self.slope.add(protocol_time(float(t)), q)
                self.angles_rad, self.well_posed = q, bool(ok)

    def settle_speed_deg_s(self) -> np.ndarray:
        """NaN (never "still") until the window is at least half full: two close samples prove nothing."""
        if self.slope.span_s < 0.5 * self.slope.window_s:
            return np.full(4, np.nan)
        return np.degrees(self.slope.slope())

    def observation(self, now_host_s: float, streams: tuple[str, ...]) -> Observation:
        ages = {s: now_host_s - self.host_time_s.get(s, -math.inf) for s in streams}
        return Observation(self.tendon_force_N.copy(), self.excursion_m.copy(), self.hardware_error.copy(),
                           self.settle_speed_deg_s(), ages, self.saturated_gauges,
                           float(np.linalg.norm(self.wrench[:3])), tuple(self.faults), self.moving.copy())


def _rate(t: np.ndarray) -> float:
    return (len(t) - 1) / (t[-1] - t[0]) if len(t) > 1 and t[-1] > t[0] else 1000.0
