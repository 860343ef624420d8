"""The protocol runner: the state machine that turns a Suite into one excursion command per control tick.

Like Bluesky's RunEngine, the runner (not each trial) owns pause, resume, abort and the interlocks. It is
pure logic: whoever owns the control loop calls ``tick(now_s, obs)`` once per tick and sends the returned
Command to the actuators, so the whole machine is tested without threads or hardware.

Phases, per trial (each repeat of each suite trial, in file order)::

    SAFE -arm()-> ARMED -> PRETENSION -> ACTUATE -> SETTLE -> RECORD -> RETURN -> PRETENSION (next) ... DONE
    PAUSED, ABORTED and FAULT are reachable from every running phase.

Pause and resume, precisely: ``pause()`` holds the last commanded excursion from that tick on. ``resume()``
continues at a trial boundary: a trial paused before its RECORD (in PRETENSION, ACTUATE or SETTLE) is
discarded (outcome "interrupted by pause") and run again from its PRETENSION, because a sigmoid that stopped
halfway is not the paper's trial. A trial paused in RETURN has been recorded, so the runner moves on to the
next trial's PRETENSION, which starts from the held position and lowers the tension to the target.

A latched interlock trip puts the runner in FAULT; abort() puts it in ABORTED. Both command only the
configured safe action ("hold" or "torque_off") until ``reset()``, which needs the operator. ``estop()``
latches FAULT and always commands torque off, whatever the safe action.

Set-up: every trial starts from its pose (paper: "The UART testbed was placed in a flexed (Flex)
position" before each pull). ``on_setup(trial, changed)`` is asked at each trial start, ``changed`` saying
whether the pose or surface differs from the trial before: True means the finger is set up (the twin
places itself every time; a real rig whose return brought the finger back needs nothing); False pauses
the runner with the instruction for a person, and ``resume()`` starts that trial. Without ``on_setup``,
arming confirms the first trial's set-up and each change of set-up pauses.

A trial starts from rest: PRETENSION ends only when every tendon is at the target tension AND every joint
is still by the measured settle rule, so the model's initial state (the paper's: zero velocities) holds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

import numpy as np
from uartlab.errors import ConfigError
from uartlab.protocols.interlocks import InterlockLimits, Interlocks, Observation
from uartlab.protocols.limits import DEFAULT_PRETENSION_MAX_M, Limits, excursion_overruns
from uartlab.protocols.suite import Suite, SuiteTrial
from uartlab.protocols.trajectories import Trajectory
from uartlab.schema import PHASES, Outcome, Phase  # noqa: F401 - declared with the runner stream, which records a phase as its index
from uartlab.sim.names import TENDONS
from uartlab.sim.scenarios import MIN_PRETENSION_N
from uartlab.streams import Event, EventKind

# Pretension defaults. The target is the model's start-state minimum (sim.scenarios.MIN_PRETENSION_N,
# 0.3 N): "initially small tensions in all the input tendons" (paper) - every tendon taut, none pulling;
# more than that on all six at once is a co-contraction that moves the free finger off its start pose.
# est.: 0.2 N tolerance is far above the SEA pot's noise (~4 mN); 2e-4 m/N per tick closes 6 % of the
# error per tick on the paper's 0.3 N/mm SEA spring (about 50 ticks, no overshoot); 5 s is many times that.
DEFAULT_PRETENSION_N = MIN_PRETENSION_N
DEFAULT_PRETENSION_TOL_N = 0.2
DEFAULT_PRETENSION_GAIN_M_PER_N = 2e-4
DEFAULT_PRETENSION_TIMEOUT_S = 5.0
# Pretension never pulls a tendon further than this (declared with the limits, which count it in the
# worst-case excursion a suite may command): protocols/limits.py.


RUN_OVER = frozenset({Phase.DONE, Phase.ABORTED, Phase.FAULT})  # a run that has ended, well or not


_RUNNING = {Phase.ARMED, Phase.PRETENSION, Phase.ACTUATE, Phase.SETTLE, Phase.RECORD, Phase.RETURN}


class Action(Enum):
    IDLE = "idle"              # send nothing (SAFE: actuators not enabled yet)
    MOVE = "move"              # command(excursion_m)
    HOLD = "hold"              # command(excursion_m) = the last position; no new motion
    TORQUE_OFF = "torque_off"  # stop(torque_off=True)


@dataclass(frozen=True)
class Command:
    action: Action
    excursion_m: np.ndarray | None = None   # (6,) for MOVE and HOLD


@dataclass(frozen=True)
class TrialResult:
    trial: str
    repeat: int
    outcome: str               # an Outcome's text, a trip's or an E-stop's reason after a colon (core/schema.py)
    settle_time_s: float | None

    def __post_init__(self):   # plain text: an Outcome member is a str subclass that h5py and JSON readers do not know
        object.__setattr__(self, "outcome", str(self.outcome))


@dataclass(frozen=True)
class Pretension:
    target_N: float = DEFAULT_PRETENSION_N
    tol_N: float = DEFAULT_PRETENSION_TOL_N
    gain_m_per_N: float = DEFAULT_PRETENSION_GAIN_M_PER_N
    timeout_s: float = DEFAULT_PRETENSION_TIMEOUT_S
    max_m: float = DEFAULT_PRETENSION_MAX_M


class LatchingRunner:
    """What every runner the engine drives shares (a suite's Runner, a procedure's StepRunner): the safe
    action, the latching fault and E-stop, the one command each phase gives, and the phase events."""

    def __init__(self, interlocks: Interlocks, safe_action: str,
                 on_event: Callable[[Event], None] | None):
        if safe_action not in ("hold", "torque_off"):
            raise ValueError(f"safe_action must be 'hold' or 'torque_off', got {safe_action!r}")
        self.interlocks = interlocks
        self.safe_action = Action.HOLD if safe_action == "hold" else Action.TORQUE_OFF
        self.on_event = on_event
        self.events: list[Event] = []
        self.phase = Phase.SAFE
        self.fault_reason: str | None = None
        self._estopped = False
        self._last = np.zeros(6)          # last commanded excursion: what HOLD holds
        self._since = 0.0                 # when the current phase started

    def estop(self, now_s: float, why: str = "E-stop") -> None:
        """Emergency stop: latch FAULT with this reason and command torque off from now on."""
        self._estopped = True
        self.fault(now_s, "operator", "E-stop", why)

    def fault(self, now_s: float, check: str, subject: str, reason: str) -> None:
        """A fault found outside the interlocks (a command the bus refused, the E-stop): latch FAULT."""
        trip = self.interlocks.trip(check, subject, reason)
        if self.phase is not Phase.FAULT:
            self.fault_reason = trip.reason
            self._go(Phase.FAULT, now_s, trip.reason)

    def _command(self) -> Command:
        if self.phase is Phase.SAFE:
            return Command(Action.IDLE)
        if self.phase in (Phase.FAULT, Phase.ABORTED):
            if self.safe_action is Action.TORQUE_OFF or self._estopped:
                return Command(Action.TORQUE_OFF)
            return Command(Action.HOLD, self._last.copy())
        if self.phase in (Phase.ARMED, Phase.PAUSED, Phase.DONE):
            return Command(Action.HOLD, self._last.copy())
        return Command(Action.MOVE, self._last.copy())

    def _go(self, phase: Phase, now_s: float, detail: str) -> None:
        self.phase, self._since = phase, now_s
        event = Event(now_s, EventKind.PHASE, "runner", f"{phase.name}: {detail}")
        self.events.append(event)
        if self.on_event is not None:
            self.on_event(event)


class Runner(LatchingRunner):
    def __init__(self, suite: Suite, interlocks: Interlocks | None = None, safe_action: str = "hold",
                 pretension: Pretension | None = None,
                 on_event: Callable[[Event], None] | None = None,
                 on_setup: Callable[[SuiteTrial, bool], bool] | None = None):
        super().__init__(interlocks or Interlocks(InterlockLimits.from_suite(suite.limits)), safe_action, on_event)
        self.suite = suite
        self.pretension = pretension or Pretension()
        _refuse_overruns(suite, self.interlocks.limits, self.pretension)
        self.on_setup = on_setup
        self._setup: tuple | None = None       # (pose, surface angle) the finger is set up for
        self._awaiting_setup = False
        self.plan: list[tuple[SuiteTrial, int]] = [(t, r + 1) for t in suite.trials for r in range(t.repeats)]
        self.results: list[TrialResult] = []
        self._index = 0
        self._paused_from: Phase | None = None
        self._offset = np.zeros(6)        # pretension excursions the trial is added to
        self._actuate_t0 = 0.0
        self._traj: Trajectory | None = None
        self._still_since: float | None = None
        self._now = 0.0

    # ------------------------------------------------------------ operator
    def arm(self, now_s: float) -> None:
        if self.phase is not Phase.SAFE:
            raise RuntimeError(f"can only arm from SAFE, not {self.phase.name}")
        self._go(Phase.ARMED, now_s, f"suite {self.suite.name!r}, {len(self.plan)} trials")

    def pause(self, now_s: float) -> None:
        if self.phase in _RUNNING:
            self._paused_from = self.phase
            self._go(Phase.PAUSED, now_s, f"from {self.phase.name}, holding")

    def resume(self, now_s: float) -> None:
        if self.phase is not Phase.PAUSED:
            return
        if self._awaiting_setup:  # the operator has placed the finger
            self._awaiting_setup = False
            self._setup = _setup_of(self.plan[self._index][0])
            self._start_trial(now_s, "set up by operator")
            return
        before_record = self._paused_from in (Phase.PRETENSION, Phase.ACTUATE, Phase.SETTLE)
        if before_record:
            trial, repeat = self.plan[self._index]
            self.results.append(TrialResult(trial.name, repeat, Outcome.INTERRUPTED.value, None))
        elif self._paused_from is Phase.RETURN:
            self._index += 1
        self._start_trial(now_s, "resumed")

    def abort(self, now_s: float, why: str = "operator abort") -> None:
        if self.phase not in (Phase.ABORTED, Phase.FAULT):
            self._go(Phase.ABORTED, now_s, why)

    def reset(self, now_s: float) -> None:
        """Operator acknowledgement after FAULT, ABORTED or DONE: back to SAFE, interlocks unlatched."""
        if self.phase in (Phase.FAULT, Phase.ABORTED, Phase.DONE):
            self.interlocks.reset()
            self.fault_reason = None
            self._estopped = False
            self._index = 0
            self._setup = None
            self._go(Phase.SAFE, now_s, "reset by operator")

    @property
    def current(self) -> tuple[SuiteTrial, int] | None:
        """The trial and repeat being run (or next), None when none is left."""
        return self.plan[self._index] if self._index < len(self.plan) else None

    @property
    def awaiting_setup(self) -> bool:
        """PAUSED until a person sets the finger up for the next trial (``resume()`` once they have)."""
        return self._awaiting_setup

    @property
    def index(self) -> int:
        return self._index

    @property
    def offset_m(self) -> np.ndarray:
        """The excursions the current trial's pulls are added to (where pretension left the tendons)."""
        return self._offset.copy()

    # ------------------------------------------------------------ the tick
    def tick(self, now_s: float, obs: Observation) -> Command:
        self._now = now_s
        if self.phase not in (Phase.SAFE, Phase.ABORTED, Phase.FAULT):
            trip = self.interlocks.check(obs)
            if trip is not None:
                self.fault_reason = trip.reason
                self._go(Phase.FAULT, now_s, trip.reason)
        step = {Phase.ARMED: self._armed, Phase.PRETENSION: self._pretension, Phase.ACTUATE: self._actuate,
                Phase.SETTLE: self._settle, Phase.RECORD: self._record, Phase.RETURN: self._return}.get(self.phase)
        if step is not None:
            step(now_s, obs)
        return self._command()

    # ------------------------------------------------------------ phases
    def _armed(self, now_s: float, obs: Observation) -> None:
        self._last = np.asarray(obs.excursion_m, dtype=float).copy()  # start from where the tendons are
        self._start_trial(now_s, "first trial")

    def _start_trial(self, now_s: float, why: str) -> None:
        if self._index >= len(self.plan):
            self._go(Phase.DONE, now_s, f"{len(self.results)} results")
            return
        self._offset = self._last.copy()
        trial = self.plan[self._index][0]
        if self._setup is None and self.on_setup is None:
            self._setup = _setup_of(trial)  # arming confirmed it: the operator set up the first trial
        changed = _setup_of(trial) != self._setup
        ready = self.on_setup(trial, changed) if self.on_setup is not None else not changed
        if ready:
            self._setup = _setup_of(trial)
        else:
            self._awaiting_setup = True
            self._paused_from = Phase.PRETENSION
            self._go(Phase.PAUSED, now_s, f"set up the finger for {self._label()}: {_setup_text(trial)}, "
                                          "then resume")
            return
        self._go(Phase.PRETENSION, now_s, f"{self._label()} ({why})")

    def _pretension(self, now_s: float, obs: Observation) -> None:
        p = self.pretension
        # Take up slack only: a tendon already above the target may be what holds the pose against gravity
        # (the start state's smallest holding tensions reach a few N), so it is left as it is.
        err = np.maximum(p.target_N - np.asarray(obs.tendon_force_N, dtype=float), 0.0)
        if np.all(err <= p.tol_N) and self._still(obs):
            self._traj = self.plan[self._index][0].trajectory()
            self._actuate_t0 = now_s
            self._go(Phase.ACTUATE, now_s, self._label())
            self._actuate(now_s, obs)
            return
        if now_s - self._since >= p.timeout_s:
            worst = int(np.argmax(np.abs(err)))
            reason = (f"pretension timeout after {p.timeout_s:g} s: tendon {_tendon(worst)} at "
                      f"{obs.tendon_force_N[worst]:.2f} N, target at least {p.target_N:g} N")
            self.fault_reason = reason
            self._go(Phase.FAULT, now_s, reason)
            return
        # Proportional on force, clamped: pretension only takes up slack, it must never become a pull.
        self._offset = np.clip(self._offset + p.gain_m_per_N * err, -p.max_m, p.max_m)
        self._last = self._offset.copy()

    def _actuate(self, now_s: float, obs: Observation) -> None:
        assert self._traj is not None
        t = now_s - self._actuate_t0
        self._last = self._offset + self._traj.excursions([min(t, self._traj.end_s)])[0]
        if t >= self._traj.end_s:
            self._still_since = None
            self._go(Phase.SETTLE, now_s, self._label())
            self._settle(now_s, obs)

    def _settle(self, now_s: float, obs: Observation) -> None:
        s = self.suite.settle
        # The paper's rule on measured angles: every joint speed below the threshold, continuously for hold_s.
        still = self._still(obs)
        self._still_since = (self._still_since if self._still_since is not None else now_s) if still else None
        if self._still_since is not None and now_s - self._still_since >= s.hold_s:
            self._finish_trial(now_s, Outcome.SETTLED)
        elif now_s - self._since >= s.timeout_s:
            self._finish_trial(now_s, Outcome.SETTLE_TIMEOUT)

    def _finish_trial(self, now_s: float, outcome: Outcome) -> None:
        trial, repeat = self.plan[self._index]
        self.results.append(TrialResult(trial.name, repeat, outcome, now_s - self._since))
        self._go(Phase.RECORD, now_s, f"{self._label()}: {outcome} after {now_s - self._since:.3f} s")

    def _record(self, now_s: float, obs: Observation) -> None:
        trial = self.plan[self._index][0]
        if trial.return_to_start:
            # Rebuild the trajectory with its return starting now (trajectory time), so it is continuous.
            self._traj = trial.trajectory(return_at_s=now_s - self._actuate_t0)
        self._go(Phase.RETURN, now_s, self._label())
        self._return(now_s, obs)

    def _return(self, now_s: float, obs: Observation) -> None:
        trial = self.plan[self._index][0]
        assert self._traj is not None
        if trial.return_to_start:
            t = now_s - self._actuate_t0
            self._last = self._offset + self._traj.excursions([min(t, self._traj.end_s)])[0]
            if t < self._traj.end_s:
                return
        self._index += 1
        self._start_trial(now_s, "next")

    def _go(self, phase: Phase, now_s: float, detail: str) -> None:
        """A run that ends mid-trial gives that trial its outcome (tripped, E-stopped or aborted, with why)
        before the phase's event, so every started trial has one and the run's progress counts it."""
        if phase in (Phase.FAULT, Phase.ABORTED) and self._trial_in_progress():
            trial, repeat = self.plan[self._index]
            outcome = (Outcome.ABORTED if phase is Phase.ABORTED else
                       Outcome.ESTOPPED if self._estopped else Outcome.TRIPPED)
            why = detail.removeprefix("E-stop: ") if outcome is Outcome.ESTOPPED else detail
            self.results.append(TrialResult(trial.name, repeat, outcome.because(why), None))
        super()._go(phase, now_s, detail)

    def _trial_in_progress(self) -> bool:
        """Pretensioned, pulled or settling (or paused there), with no outcome yet."""
        started = (Phase.PRETENSION, Phase.ACTUATE, Phase.SETTLE)
        return self._index < len(self.plan) and (self.phase in started or (
            self.phase is Phase.PAUSED and self._paused_from in started and not self._awaiting_setup))

    # ------------------------------------------------------------ helpers
    def _still(self, obs: Observation) -> bool:
        speed = np.abs(np.asarray(obs.joint_speed_deg_s, dtype=float))
        return bool(np.all(speed < self.suite.settle.measured_speed_deg_s))

    def _label(self) -> str:
        trial, repeat = self.plan[self._index]
        return f"trial {trial.name!r} repeat {repeat}/{trial.repeats}"


def _tendon(i: int) -> str:
    return TENDONS[i]


def _setup_of(trial: SuiteTrial) -> tuple:
    return trial.pose, trial.surface_angle_deg


def _setup_text(trial: SuiteTrial) -> str:
    where = "no surface" if trial.surface_angle_deg is None else f"surface at {trial.surface_angle_deg:g} deg"
    return f"pose {trial.pose}, {where}, fingertip touching" if trial.surface_angle_deg is not None \
        else f"pose {trial.pose}, {where}"


def _refuse_overruns(suite: Suite, limits: InterlockLimits, pretension: Pretension) -> None:
    """The last check before anything moves: with this run's interlock limits, trials (after --trial and
    --repeats) and pretension clamp, no pull may command offset + amplitude beyond its excursion limit (the
    suite's validation checked the same with the default clamp; it would trip on every such trial)."""
    mm = Limits(dict(zip(TENDONS, (float(m) * 1e3 for m in limits.max_excursion_m), strict=True)))
    if overruns := excursion_overruns(suite.trials, mm, pretension.max_m * 1e3):
        raise ConfigError(f"{suite.source}: {overruns[0].reason}")
