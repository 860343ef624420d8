"""A procedure's motion at the rig: typed steps run by the engine, under the interlocks.

    with rig.motion("servo-zero", max_travel_m=0.060, max_tendon_force_N=5.0) as run:
        run.step(Move(goal_m))        # returns once the engine has brought the goals there
        run.step(Hold(0.5))           # protocol seconds, holding
        run.step(WaitUntilStill())    # the servos at their goals, not moving
        run.finish()                  # DONE: holding the last goals

Every calibration procedure at the rig moves the servos only through this (calibration/at_rig.py), so
the same per-tick interlocks guard it as a suite's trials: tendon force over the procedure's limit (never
above rig.toml's [limits] ceiling), the fingertip force ceiling, Nano17 saturation, stale streams, device
faults - and the E-stop, pause and abort. Excursion is bounded by the travel from where the procedure
began, not by the suites' excursion ceiling: procedures start wherever the tendons are and measure slack
and spring travel (servo-zero pays out 50 mm, the in-situ SEA load takes up to 58 mm); the force limit is
what keeps a finger safe while they do. A step refused or cut short raises ``ProcedureStopped``
with the reason; the servos are then holding (or off, as configured), the trip is recorded.
"""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np
from uartlab.protocols.interlocks import InterlockLimits, Interlocks
from uartlab.protocols.runner import Phase
from uartlab.protocols.steps import Hold, Move, ProcedureStopped, Step, StepRunner, Ticket, WaitUntilStill

from .engine import Engine

STEP_SLACK_S = 5.0   # host seconds a step may take beyond its own length before it counts as stuck


class ProcedureRun(Engine):
    def __init__(self, rig, name: str, *, max_travel_m: float, max_tendon_force_N: float | None = None,
                 streams: tuple[str, ...] = ("actuators", "daq"), safe_action: str = "hold",
                 forces_required: bool = True):
        ceiling = rig.config.ceilings.limits   # rig.toml [limits]: a procedure may only tighten them
        force = ceiling.max_tendon_force_N if max_tendon_force_N is None else min(max_tendon_force_N,
                                                                                  ceiling.max_tendon_force_N)
        self.max_travel_m = float(max_travel_m)
        # The excursion limit is set from where the tendons are when the run starts (_before_arm).
        limits = InterlockLimits(force, np.full(6, math.inf), self.stream_ages(rig, streams),
                                 ceiling.max_fingertip_force_N, forces_required)
        runner = StepRunner(name, Interlocks(limits), safe_action, on_event=self._on_runner_event)
        super().__init__(rig, runner)
        self.name = name
        self.start_m: np.ndarray | None = None

    def _before_arm(self) -> None:
        self.start_m = np.asarray(self.latest.excursion_m, dtype=float).copy()
        interlocks = self.runner.interlocks
        interlocks.limits = dataclasses.replace(interlocks.limits,
                                                max_excursion_m=np.abs(self.start_m) + self.max_travel_m)

    # ------------------------------------------------------------ the procedure's side
    def step(self, step: Step) -> None:
        """Run one step to its end; ProcedureStopped (the reason, the servos safe) if it could not."""
        deadline = time.monotonic() + self._host_length_s(step) + STEP_SLACK_S
        with self._lock:
            ticket: Ticket = self.runner.submit(step)
            while not ticket.done:
                if not self._thread.is_alive():
                    raise ProcedureStopped(f"{self.name}: the control loop is not running")
                if time.monotonic() > deadline:  # fails the ticket: the loop ends at the next check
                    self.runner.abort(self._protocol_now(), f"step {step} did not finish in time")
                self._ticked.wait(0.1)
        if ticket.error:
            raise ProcedureStopped(ticket.error)

    def finish(self, note: str = "") -> None:
        with self._lock:
            self.runner.finish(self._protocol_now(), note)
            if self.runner.phase is Phase.DONE:
                self._finished.set()

    @property
    def goal_m(self) -> np.ndarray:
        return self.runner.last_goal_m

    @property
    def phase(self) -> Phase:
        return self.runner.phase

    def _host_length_s(self, step: Step) -> float:
        if isinstance(step, Move):
            distance = float(np.max(np.abs(np.asarray(step.goal_m) - self.runner.last_goal_m)))
            return distance / step.speed_m_per_s / self.time_scale
        if isinstance(step, Hold):
            return step.seconds / self.time_scale
        assert isinstance(step, WaitUntilStill)
        return step.timeout_s / self.time_scale
