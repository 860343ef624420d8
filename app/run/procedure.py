"""A procedure's motion at the rig: typed steps run by the engine, under the interlocks.

    with rig.motion("servo-zero", max_travel_m=0.060, max_tendon_force_N=5.0) as run:
        run.step(Move(goal_m))        # returns once the engine has brought the goals there
        run.step(Hold(0.5))           # protocol seconds, holding
        run.step(WaitUntilStill())    # the servos at their goals, not moving
        run.finish()                  # DONE: holding the last goals

Every calibration procedure at the rig moves the servos only through this (app/procedures/probe.py), so
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
from uartlab.app.run.engine import Engine
from uartlab.app.run.rig_like import RigLike
from uartlab.protocols.interlocks import InterlockLimits, Interlocks
from uartlab.protocols.runner import Phase
from uartlab.protocols.steps import (
    JOG_MAX_M,
    RELEASE_SPEED_M_PER_S,
    Hold,
    Move,
    ProcedureStopped,
    Step,
    StepRunner,
    Ticket,
    WaitUntilStill,
)
from uartlab.sim.names import TENDONS

STEP_SLACK_S = 5.0   # host seconds a step may take beyond its own length before it counts as stuck


class ProcedureRun(Engine):
    def __init__(self, rig: RigLike, name: str, *, max_travel_m: float, max_tendon_force_N: float | None = None,
                 streams: tuple[str, ...] = ("actuators", "daq"), safe_action: str = "hold",
                 forces_required: bool = True, pay_out_only: bool = False):
        ceiling = rig.config.ceilings.limits   # rig.toml [limits]: a procedure may only tighten them
        force = ceiling.max_tendon_force_N if max_tendon_force_N is None else min(max_tendon_force_N,
                                                                                  ceiling.max_tendon_force_N)
        if pay_out_only:
            # It only lowers tensions: a tension over the limit (often why the rig tripped) must not stop it.
            force, forces_required = math.inf, False
        self.max_travel_m = float(max_travel_m)
        # The excursion limit is set from where the tendons are when the run starts (_before_arm).
        limits = InterlockLimits(force, np.full(6, math.inf), self.stream_ages(rig, streams),
                                 ceiling.max_fingertip_force_N, forces_required)
        runner = StepRunner(name, Interlocks(limits), safe_action, on_event=self._on_runner_event,
                            pay_out_only=pay_out_only)
        super().__init__(rig, runner)
        self.name = name

    def _before_arm(self, start_m: np.ndarray) -> None:
        interlocks = self.runner.interlocks
        interlocks.limits = dataclasses.replace(interlocks.limits,
                                                max_excursion_m=np.abs(start_m) + self.max_travel_m)

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

    def tendon_force_N(self) -> np.ndarray:
        """The newest SEA forces the interlocks see (6,; NaN: not measured)."""
        with self._lock:
            return np.asarray(self.latest.tendon_force_N, dtype=float).copy()

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


# ------------------------------------------------------------------ the operator's own moves
RELEASE_TAUT_N = 0.1          # est.: above the SEA pots' noise (~4 mN), below any pretension (0.3 N)
RELEASE_STEP_M = 0.002
RELEASE_SLACK_M = 0.005       # paid out past where the tendon went slack: the finger rests on its stops
RELEASE_MAX_TRAVEL_M = 0.060  # the most a release pays out; a tendon still taut then is said, not chased


def release_tendons(rig: RigLike, say=None) -> str:
    """Pay every taut tendon out, slowly, until it carries nothing, then ``RELEASE_SLACK_M`` more: what an
    operator does after a trip or an E-stop to take the load off the finger. Runs on the engine with every
    interlock but the force limit (it only lowers tensions; a reel-in is refused). Returns what it did."""
    with rig.motion("release tendons", max_travel_m=RELEASE_MAX_TRAVEL_M, pay_out_only=True,
                    streams=("actuators", "daq")) as run:
        goal = run.goal_m
        start = goal.copy()
        while True:
            forces = run.tendon_force_N()
            taut = ~(forces <= RELEASE_TAUT_N)   # NaN (no SEA calibration) counts as taut: pay out the full way
            taut &= start - goal < RELEASE_MAX_TRAVEL_M - RELEASE_SLACK_M - 1e-9
            if not taut.any():
                break
            goal = goal - RELEASE_STEP_M * taut
            run.step(Move(tuple(goal), RELEASE_SPEED_M_PER_S))
            run.step(Hold(0.1))
        goal = goal - RELEASE_SLACK_M
        run.step(Move(tuple(goal), RELEASE_SPEED_M_PER_S))
        run.step(WaitUntilStill(timeout_s=10.0))
        still = np.flatnonzero(~(run.tendon_force_N() <= RELEASE_TAUT_N))
        run.finish("tendons released")
    paid = (start - goal) * 1e3
    text = "tendons released: paid out " + ", ".join(f"{t} {p:.0f} mm" for t, p in zip(TENDONS, paid, strict=True))
    if still.size:
        text += "; still taut after the full release: " + ", ".join(TENDONS[i] for i in still)
    if say is not None:
        say(text)
    return text


def return_to_start(rig: RigLike, start_m: np.ndarray, say=None) -> str:
    """Bring the tendons back to ``start_m`` (where the last run began) at the engine's safe speed, under
    every interlock."""
    start_m = np.asarray(start_m, dtype=float)
    # As far as a full release and the largest pull the rig allows can have taken a tendon from its start.
    reach_m = RELEASE_MAX_TRAVEL_M + max(rig.config.ceilings.limits.max_excursion_mm.values()) * 1e-3
    with rig.motion("return to start", max_travel_m=reach_m) as run:
        far = np.abs(start_m - run.goal_m) > reach_m
        if far.any():
            raise ProcedureStopped(f"return to start: {', '.join(TENDONS[i] for i in np.flatnonzero(far))} more "
                                   f"than {reach_m * 1e3:g} mm from its start; release the tendons and set the "
                                   "finger up by hand")
        run.step(Move(tuple(start_m)))
        run.step(WaitUntilStill(timeout_s=10.0))
        run.finish("back at the start")
    text = "tendons back where the run started"
    if say is not None:
        say(text)
    return text


def jog(rig: RigLike, tendon: str, delta_m: float, say=None) -> str:
    """Move one tendon by ``delta_m`` (+ reels in) at the engine's safe speed, under every interlock (the rig's
    ceilings included): the operator's nudge, e.g. to take up slack by hand."""
    i = TENDONS.index(tendon)
    if not 0 < abs(delta_m) <= JOG_MAX_M:
        raise ValueError(f"jog {tendon}: a step of {delta_m * 1e3:g} mm; give 0 < |step| <= {JOG_MAX_M * 1e3:g} mm")
    with rig.motion(f"jog {tendon}", max_travel_m=JOG_MAX_M) as run:
        goal = run.goal_m
        goal[i] += delta_m
        run.step(Move(tuple(goal)))
        run.step(WaitUntilStill())
        run.finish(f"{tendon} {delta_m * 1e3:+g} mm")
    text = f"jog: {tendon} {delta_m * 1e3:+g} mm"
    if say is not None:
        say(text)
    return text
