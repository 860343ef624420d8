"""Motion as data: the steps a procedure asks of the engine, and the runner that turns them into commands.

A calibration procedure at the rig, a jog, "release tendons" and "return to start" never command the
servos themselves. They hand the engine typed steps - ``Move``, ``Hold``, ``WaitUntilStill`` - one at a
time, and the engine's control loop interprets each as one command per tick under the same latching
interlocks, pause/resume/abort and E-stop as a suite's trials, recorded in the same `runner` stream (as
Bluesky's RunEngine interprets the messages of a plan). Reading the sensors is not motion: procedures read
the rig's streams themselves.

``StepRunner`` is pure logic with the protocol runner's interface (protocols/runner.py): whoever owns the
control loop calls ``tick(now_s, obs)`` once per tick and sends the Command that comes back. Times are
protocol seconds, as the runner's. A step's ``Ticket`` says when it is done, or why it failed (a trip, an
abort, a timeout): the procedure waiting on it then stops, and nothing it measured is used.

Phases: SAFE -arm()-> ARMED -> PROCEDURE (steps, or holding between them) -finish()-> DONE; PAUSED,
ABORTED and FAULT as in the runner.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from uartlab.errors import InterlockError
from uartlab.protocols.interlocks import Interlocks, Observation
from uartlab.protocols.runner import Command, LatchingRunner, Phase
from uartlab.streams import Event

# est.: 20 mm/s moves a tendon across its whole working range in about a second, several times slower
# than the MX-64 can reel (~130 mm/s on a 20 mm spool): a goal that is wrong is caught by the interlocks
# while the tendon is still on its way, not after it arrived.
MOVE_SPEED_M_PER_S = 0.020
# "Release tendons": paying out to slack, nothing can be hurt by it, but a finger held by tension drops.
RELEASE_SPEED_M_PER_S = 0.010
JOG_MAX_M = 0.005   # est.: one jog moves a tendon at most 5 mm; more is a procedure, not a nudge
STILL_TICKS = 3   # ticks in a row at the goal and not moving: "still" (one tick could be a pass-through)


class ProcedureStopped(InterlockError):
    """A step could not run or finish: the engine tripped, was aborted or E-stopped, or the step timed out."""


@dataclass(frozen=True)
class Move:
    """Goals for the six tendons (m, + = reeled in), reached at no more than ``speed_m_per_s`` per tendon."""

    goal_m: tuple[float, ...]
    speed_m_per_s: float = MOVE_SPEED_M_PER_S

    def __post_init__(self):
        goal = np.asarray(self.goal_m, dtype=float)
        if goal.shape != (6,) or not np.all(np.isfinite(goal)):
            raise ValueError(f"Move: goal_m must be six finite excursions (m), got {self.goal_m!r}")
        if not self.speed_m_per_s > 0:
            raise ValueError(f"Move: speed_m_per_s must be > 0, got {self.speed_m_per_s}")
        object.__setattr__(self, "goal_m", tuple(goal.tolist()))


@dataclass(frozen=True)
class Hold:
    """Hold the last goals for ``seconds`` (protocol seconds)."""

    seconds: float


@dataclass(frozen=True)
class WaitUntilStill:
    """Hold until every servo is at its goal (within ``within_m``) and not moving; fails after ``timeout_s``."""

    within_m: float = 0.5e-3
    timeout_s: float = 5.0


Step = Move | Hold | WaitUntilStill


@dataclass
class Ticket:
    """One submitted step: ``done`` once it finished, ``error`` (one sentence) if it could not."""

    step: Step
    done: bool = False
    error: str | None = None


@dataclass
class _Active:
    ticket: Ticket
    started_s: float
    elapsed_before_pause_s: float = 0.0
    still_ticks: int = 0
    extra: dict = field(default_factory=dict)


class StepRunner(LatchingRunner):
    """See the module docstring. ``name`` says what runs (a procedure's name) in every event."""

    def __init__(self, name: str, interlocks: Interlocks, safe_action: str = "hold",
                 on_event: Callable[[Event], None] | None = None, pay_out_only: bool = False):
        super().__init__(interlocks, safe_action, on_event)
        self.name = name
        self.pay_out_only = pay_out_only   # "release tendons": a Move that would reel any tendon in is refused
        self.results: list = []            # the runner's trial results: a procedure has none
        self.plan: list = []
        self.steps_done = 0
        self._queue: deque[Ticket] = deque()
        self._active: _Active | None = None
        self._now = 0.0
        self._paused_at: float | None = None

    # ------------------------------------------------------------ what the engine's status shows
    @property
    def current(self):
        return None

    @property
    def index(self) -> int:
        return self.steps_done

    @property
    def offset_m(self) -> np.ndarray:
        return np.zeros(6)

    @property
    def last_goal_m(self) -> np.ndarray:
        return self._last.copy()

    # ------------------------------------------------------------ the procedure's side
    def submit(self, step: Step) -> Ticket:
        ticket = Ticket(step)
        if self.phase in (Phase.FAULT, Phase.ABORTED, Phase.DONE):
            ticket.error, ticket.done = self._refusal(), True
        elif self.pay_out_only and isinstance(step, Move) and np.any(np.asarray(step.goal_m) > self._queued_goal()):
            ticket.error = f"{self.name} only pays tendons out: a goal above the last one is refused"
            ticket.done = True
        else:
            self._queue.append(ticket)
        return ticket

    def finish(self, now_s: float, note: str = "") -> None:
        """The procedure is over: DONE, the servos holding its last goals."""
        if self.phase in (Phase.ARMED, Phase.PROCEDURE, Phase.PAUSED):
            self._go(Phase.DONE, now_s, note or f"{self.steps_done} steps")

    # ------------------------------------------------------------ operator
    def arm(self, now_s: float) -> None:
        if self.phase is not Phase.SAFE:
            raise RuntimeError(f"can only arm from SAFE, not {self.phase.name}")
        self._go(Phase.ARMED, now_s, f"procedure {self.name!r}")

    def pause(self, now_s: float) -> None:
        if self.phase in (Phase.ARMED, Phase.PROCEDURE):
            self._paused_at = now_s
            if self._active is not None:
                self._active.elapsed_before_pause_s += now_s - self._active.started_s
            self._go(Phase.PAUSED, now_s, "holding")

    def resume(self, now_s: float) -> None:
        if self.phase is Phase.PAUSED:
            if self._active is not None:
                self._active.started_s = now_s
            self._paused_at = None
            self._go(Phase.PROCEDURE, now_s, "resumed")

    def abort(self, now_s: float, why: str = "operator abort") -> None:
        if self.phase not in (Phase.ABORTED, Phase.FAULT):
            self._go(Phase.ABORTED, now_s, why)
            self._fail_pending(why)

    def fault(self, now_s: float, check: str, subject: str, reason: str) -> None:
        super().fault(now_s, check, subject, reason)
        self._fail_pending(self.fault_reason or reason)

    def reset(self, now_s: float) -> None:
        if self.phase in (Phase.FAULT, Phase.ABORTED, Phase.DONE):
            self.interlocks.reset()
            self.fault_reason = None
            self._estopped = False
            self._go(Phase.SAFE, now_s, "reset by operator")

    # ------------------------------------------------------------ the tick
    def tick(self, now_s: float, obs: Observation) -> Command:
        dt, self._now = max(0.0, now_s - self._now), now_s
        if self.phase not in (Phase.SAFE, Phase.ABORTED, Phase.FAULT, Phase.DONE):
            trip = self.interlocks.check(obs)
            if trip is not None:
                self.fault_reason = trip.reason
                self._go(Phase.FAULT, now_s, trip.reason)
                self._fail_pending(trip.reason)
        if self.phase is Phase.ARMED:
            self._last = np.asarray(obs.excursion_m, dtype=float).copy()  # hold where the tendons are
            self._go(Phase.PROCEDURE, now_s, "holding where the tendons are")
        if self.phase is Phase.PROCEDURE:
            self._advance(now_s, dt, obs)
        return self._command()

    def _advance(self, now_s: float, dt: float, obs: Observation) -> None:
        if self._active is None and self._queue:
            self._active = _Active(self._queue.popleft(), now_s)
        a = self._active
        if a is None:
            return
        step = a.ticket.step
        if isinstance(step, Move):
            goal = np.asarray(step.goal_m)
            self._last = self._last + np.clip(goal - self._last, -step.speed_m_per_s * dt, step.speed_m_per_s * dt)
            if np.allclose(self._last, goal, rtol=0.0, atol=1e-9):
                self._last = goal.copy()
                self._complete()
        elif isinstance(step, Hold):
            if a.elapsed_before_pause_s + now_s - a.started_s >= step.seconds:
                self._complete()
        else:  # WaitUntilStill
            at_goal = np.all(np.abs(np.asarray(obs.excursion_m, dtype=float) - self._last) <= step.within_m)
            a.still_ticks = a.still_ticks + 1 if at_goal and not np.any(obs.servos_moving) else 0
            if a.still_ticks >= STILL_TICKS:
                self._complete()
            elif a.elapsed_before_pause_s + now_s - a.started_s >= step.timeout_s:
                off_mm = float(np.nanmax(np.abs(np.asarray(obs.excursion_m, dtype=float) - self._last))) * 1e3
                self._complete(f"the servos did not reach their goals within {step.timeout_s:g} s "
                               f"(off by up to {off_mm:.1f} mm): blocked?")

    def _complete(self, error: str | None = None) -> None:
        a, self._active = self._active, None
        assert a is not None, "only the active step completes"
        a.ticket.error = error
        a.ticket.done = True
        self.steps_done += 1

    # ------------------------------------------------------------ helpers
    def _queued_goal(self) -> np.ndarray:
        """The goals once every queued move is done (+1 um: the same goal again is no reel-in)."""
        moves = [t.step for t in ([self._active.ticket] if self._active else []) + list(self._queue)
                 if isinstance(t.step, Move)]
        return (np.asarray(moves[-1].goal_m) if moves else self._last) + 1e-6

    def _refusal(self) -> str:
        if self.phase is Phase.FAULT:
            return f"stopped: {self.fault_reason}"
        return "aborted" if self.phase is Phase.ABORTED else "the procedure is over"

    def _fail_pending(self, why: str) -> None:
        pending = ([self._active.ticket] if self._active is not None else []) + list(self._queue)
        self._active = None
        self._queue.clear()
        for ticket in pending:
            ticket.error, ticket.done = (f"stopped: {why}" if self.phase is Phase.FAULT else why), True

    def _go(self, phase: Phase, now_s: float, detail: str) -> None:
        super()._go(phase, now_s, f"{self.name}: {detail}")
