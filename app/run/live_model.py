"""The bond-graph model running beside the rig: a hub consumer that predicts each trial tick by tick.

    live = LiveModel(rig.hub, Finger(params), trials=suite,   # registers the `model` stream: do this
                     time_scale=rig.time_scale)               # before the recorder starts, so it is recorded
    session = RecordingSession(rig, path)
    live.start(); ...; live.close()                          # start() warms the model up first (compiles)

It reads the `runner` stream of app/run/engine.py (one sample per control tick: phase, trial_index, measured
excursions, tendon forces, joint angles, Nano17 wrench). Ticks are stamped in host seconds; the model
advances ``time_scale`` model seconds per host second (``rig.time_scale``: 1 on hardware, the twin's speed).
When a trial's actuation starts (phase becomes ACTUATE) it sets the model up the paper's way from the measured
state (``sim.scenarios.measured_start``: measured joint angles and input tendon forces, EM balanced at the
junctions, velocities zero, for contact the surface at the fingertip pressed in by the deflection the measured
normal force implies) and from then on advances the model's incremental Stepper in lockstep with the control
ticks, driven by the MEASURED excursion rates (difference of consecutive measured excursions over the tick
interval, held over the interval: the model's excursion input equals the measured one at every tick). It
follows the trial through SETTLE, RECORD and RETURN and stops when the runner leaves them.

Each tick gives one `model` sample at the tick's host time: the predicted joint angles, tendon tensions and
fingertip force, the residuals measured - model, ``lag_s`` (how far that tick is behind the newest tick the
model has received) and ``ticks_merged``.

Never blocking the control loop: the model only ever reads its own bounded hub queue (drop-oldest) on its own
thread; the control loop's ``publish`` appends and returns. If the model falls behind by more than
``behind_s`` it catches up by merging ticks (one step over several tick intervals with their mean excursion
rate, so the excursion still matches at the tick it lands on); if the hub had to drop ticks for it, the next
step bridges the gap the same way. Both are announced as hub events of kind "model" (recorded in the session
file's events) and show in ``ticks_merged`` of the sample that covers them.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np
from uartlab.app.run.residuals import PHASES, ResidualRMS, ResidualSummary, plan_of  # noqa: F401 - plan_of re-exported
from uartlab.hub import Hub
from uartlab.protocols.runner import Phase
from uartlab.schema import (  # noqa: F401 - the model stream's declarations re-exported for its users
    MODEL_FIELDS,
    MODEL_SOURCE,
    MODEL_STREAM,
    RUNNER,
    RUNNER_STREAM,
    model_spec,
)
from uartlab.sim import Finger, PlaneSurface
from uartlab.sim.bondgraph import W_FORCE, contact_into, make_work
from uartlab.sim.integrators import DEFAULT_DT_S, STATE_BOUNDS, Stepper
from uartlab.sim.kinematics import frames_into
from uartlab.sim.scenarios import deflection_for_force, measured_start
from uartlab.sim.surface import fingertip_force_from_sensor
from uartlab.streams import EventKind, Record, StreamSpec

ACTIVE_PHASES = frozenset(PHASES.index(p) for p in (Phase.ACTUATE, Phase.SETTLE, Phase.RECORD, Phase.RETURN))
ACTUATE = PHASES.index(Phase.ACTUATE)
# est.: a tenth of a second behind is where a live plot visibly trails the rig (10 ticks at 100 Hz); below
# it the model processes every tick, above it it merges ticks until it is back within it.
BEHIND_S = 0.1
QUEUE_TICKS = 2000  # 20 s of ticks at 100 Hz: a stall of seconds is merged, not dropped

@dataclass
class LiveStats:
    ticks: int = 0               # runner ticks received
    steps: int = 0               # model samples published
    merged: int = 0              # ticks folded into a later step (catching up, or bad samples)
    dropped: int = 0             # ticks the hub dropped from the model's queue
    behind_episodes: int = 0
    max_lag_s: float = 0.0
    trials: int = 0
    step_s: list[float] = field(default_factory=list, repr=False)  # wall time per step (bench)

    def counts(self) -> dict:
        """What the model received and made, by the names a `drops` event from "live model" gives them."""
        return {"runner_ticks": self.ticks, "model_samples": self.steps, "ticks_merged": self.merged,
                "ticks_dropped_from_queue": self.dropped, "trials": self.trials,
                "max_lag_s": round(self.max_lag_s, 4)}


@dataclass
class _Trial:
    index: int
    stepper: Stepper
    surface_angle_deg: float | None
    S: np.ndarray
    t: float                     # host time of the last step
    excursion: np.ndarray        # measured excursion at that tick
    name: str = "?"


class LiveModel:
    """See the module docstring. ``start()`` runs it on its own thread; ``process(records)`` runs it inline."""

    def __init__(self, hub: Hub, finger: Finger | None = None, trials=None, *, control_rate_hz: float = 100.0,
                 behind_s: float = BEHIND_S, queue_ticks: int = QUEUE_TICKS, method: str = "rk4",
                 max_substep_s: float = DEFAULT_DT_S, time_scale: float = 1.0, keep_step_times: bool = False,
                 clock: Callable[[], float] = time.perf_counter):
        self.hub, self.behind_s, self.method, self.max_substep_s = hub, float(behind_s), method, max_substep_s
        if not time_scale > 0:
            raise ValueError(f"time_scale must be > 0 (model seconds per host second), got {time_scale}")
        self.time_scale = float(time_scale)  # rig.time_scale: a twin at 4x runs model time 4x host time
        self.finger = finger if finger is not None else Finger()
        self.plan = plan_of(trials)
        self.register(hub, control_rate_hz)
        self.rms = ResidualRMS()
        self.summaries: list[tuple[str, ResidualSummary]] = []  # (trial name, its RMS residuals) per trial run
        self.stats = LiveStats()
        self._keep_step_times, self._clock = keep_step_times, clock
        self._work = make_work()
        self._trial: _Trial | None = None
        self._newest_t = -np.inf
        self._pending = 0            # ticks skipped since the last step, folded into the next
        self._behind = False
        self._behind_max_lag = 0.0
        self._episode_merged = self._episode_dropped = 0
        self._seen_drops = 0
        self._prev: tuple[int, int] | None = None
        self._gap = False
        self._unstarted: int | None = None  # the trial whose start is waiting for measurements
        self._last_finite: dict[str, np.ndarray | None] = {
            RUNNER.joint_angles_rad: None, RUNNER.tendon_force_N: None, RUNNER.wrench: np.zeros(6)}
        self._sub = hub.subscribe(MODEL_SOURCE, {RUNNER_STREAM}, maxsize=queue_ticks)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @staticmethod
    def register(hub: Hub, control_rate_hz: float = 100.0) -> StreamSpec:
        """Register the `model` stream (before a RecordingSession starts, so the recorder writes it)."""
        spec = model_spec(control_rate_hz)
        hub.register(spec)
        return spec

    # ------------------------------------------------------------ thread
    def warm_up(self) -> float:
        """Compile and run once what a trial's first tick runs (the measured start, the stepper, one step; free
        and in contact), so that first tick does not hold the GIL for tens of ms while the control loop runs.
        Returns the seconds it took. ``start`` calls it, before the run arms."""
        t0 = time.perf_counter()
        angles, forces = np.radians([0.0, 20.0, 20.0, 10.0]), np.full(6, 0.5)  # est.: any pose in the ROM
        try:
            for angle, normal_force_N in ((None, 0.0), (30.0, 1.0)):
                x0, surface, _ = measured_start(self.finger, angles, forces, angle, normal_force_N)
                stepper = self.finger.stepper(x0, surface, self.method, self.max_substep_s)
                stepper.step(0.01, np.zeros(6))
        except Exception as exc:  # noqa: BLE001 - a trial would meet the same error, and say so then
            self._say(f"warm-up failed ({type(exc).__name__}: {exc}); the first trial's step compiles instead")
        return time.perf_counter() - t0

    def start(self) -> LiveModel:
        if self._thread is None:
            self.warm_up()
            self._thread = threading.Thread(target=self._run, name="live-model", daemon=True)
            self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            item = self._sub.get(timeout_s=0.1)
            if item is None:
                continue
            try:
                self.process([item, *self._sub.drain()])  # everything queued: the lag is known
            except Exception as exc:  # noqa: BLE001 - a model bug must not end the thread silently
                self._say(f"model error outside a trial step: {type(exc).__name__}: {exc}")
        self.process(self._sub.drain())

    def close(self) -> LiveStats:
        """Stop the thread (after the queued ticks) and leave the hub."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._sub.close()
        return self.stats

    def __enter__(self) -> LiveModel:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------ ticks
    def process(self, items: Iterable) -> None:
        """Handle runner records (other items are ignored), oldest first."""
        ticks = [(r, k) for r in items if isinstance(r, Record) and r.stream == RUNNER_STREAM for k in range(len(r))]
        if not ticks:
            return
        self._check_drops()
        self._newest_t = max(self._newest_t, float(ticks[-1][0].host_time_s[ticks[-1][1]]))
        for i, (record, k) in enumerate(ticks):
            following = ticks[i + 1] if i + 1 < len(ticks) else None
            try:
                self._tick(record, k, following)
            except Exception as exc:  # noqa: BLE001 - the model must not die with one bad trial; say so
                why = f"model error: {type(exc).__name__}: {exc}"
                if self._trial is not None:
                    self._end_trial(why)
                else:
                    self._say(why)

    def _tick(self, record: Record, k: int, following) -> None:
        d = record.data
        t = float(record.host_time_s[k])
        phase, index = int(d[RUNNER.phase][k]), int(d[RUNNER.trial_index][k])
        self.stats.ticks += 1
        self._remember(d, k)
        active = phase in ACTIVE_PHASES
        prev, self._prev = self._prev, (phase, index)
        gap, self._gap = self._gap, False  # ticks were dropped just before this one
        trial = self._trial
        if trial is not None and (not active or index != trial.index):
            self._end_trial(f"runner {_phase_name(phase)}")
            trial = None
        if trial is None:
            # A trial starts at its actuation. A model that missed that tick (dropped, or started mid-trial)
            # joins late from the state it has; one whose trial ended early (diverged) waits for the next.
            continued = prev is not None and prev[0] in ACTIVE_PHASES and prev[1] == index and not gap
            if active and not continued:
                late = phase != ACTUATE or prev is None or prev[0] == ACTUATE or gap
                self._start_trial(t, phase, index, d, k, late)
            return
        self._advance(trial, t, phase, d, k, following)

    def _remember(self, d: dict, k: int) -> None:
        """The last finite measurement of each input, for a start when this tick's is missing."""
        for name in self._last_finite:
            value = d[name][k]
            if _finite(value):
                self._last_finite[name] = value  # a view: published records are never changed

    def _check_drops(self) -> None:
        n = self._sub.dropped.get(RUNNER_STREAM, 0)
        if n > self._seen_drops:
            new, self._seen_drops = n - self._seen_drops, n
            self.stats.dropped += new
            self._gap = True
            if self._trial is not None:
                self._pending += new
            self._fall_behind(f"the hub dropped {new} runner ticks from the model's full queue; the next step "
                              "bridges the gap with the mean measured excursion rate")
            self._episode_dropped += new

    def _start_trial(self, t: float, phase: int, index: int, d: dict, k: int, late: bool) -> None:
        t0 = self._clock()
        angles, forces = self._last_finite[RUNNER.joint_angles_rad], self._last_finite[RUNNER.tendon_force_N]
        wrench = self._last_finite[RUNNER.wrench]   # zeros until one is measured: never None
        stale = [n for n in (RUNNER.joint_angles_rad, RUNNER.tendon_force_N, RUNNER.wrench) if not _finite(d[n][k])]
        excursion = np.asarray(d[RUNNER.excursion_m][k], dtype=float).copy()
        if angles is None or forces is None or wrench is None or not _finite(excursion):
            if self._unstarted != index:  # once per trial; the next ticks try again (joining late)
                self._say(f"trial {index}: model not started yet: no measured joint angles, tendon forces or "
                          "excursion so far")
            self._unstarted, self._prev = index, None
            return
        entry = self.plan[index] if 0 <= index < len(self.plan) else None
        if entry is None and self.plan:
            self._say(f"trial {index}: not in the suite's {len(self.plan)} trials; modelled as free motion")
        angle = getattr(entry, "surface_angle_deg", None)
        normal_force = float(PlaneSurface(0.0 if angle is None else angle, (0.0, 0.0, 0.0)).normal
                             @ fingertip_force_from_sensor(wrench[:3], angle))
        x0, surface, notes = measured_start(self.finger, angles, forces, angle, normal_force)
        stepper = self.finger.stepper(x0, surface, self.method, self.max_substep_s)
        trial = self._trial = _Trial(index, stepper, angle, stepper.S, t, excursion, getattr(entry, "name", "?"))
        self._pending = 0
        self.stats.trials += 1
        self.rms.reset(index)
        name = trial.name
        where = f" late (in {_phase_name(phase)}, velocities assumed zero)" if late else ""
        contact = "free" if surface is None else \
            f"surface {angle:g} deg, {1e3 * deflection_for_force(self.finger, normal_force):.2f} mm deflection"
        self._say(f"trial {index} ({name}): model started{where} from the measured state: angles "
                  f"{np.round(np.degrees(x0.theta), 1).tolist()} deg, tendon forces {np.round(x0.F_input, 2).tolist()} "
                  f"N, {contact}" + "".join(f"; {n}" for n in notes)
                  + (f"; not measured this tick, the last measured used: {', '.join(stale)}" if stale else ""))
        self._publish(trial, t, phase, d, k, max(0.0, self._newest_t - t), 1, t0)

    def _advance(self, tr: _Trial, t: float, phase: int, d: dict, k: int, following) -> None:
        excursion = np.asarray(d[RUNNER.excursion_m][k], dtype=float)
        dt, lag = t - tr.t, max(0.0, self._newest_t - t)
        self.stats.max_lag_s = max(self.stats.max_lag_s, lag)
        can_merge = following is not None and _continues(following, tr.index)
        if dt <= 0 or not _finite(excursion) or (lag > self.behind_s and can_merge):
            # Fold this tick into the next step: a repeated timestamp, an unread servo, or catching up.
            if lag > self.behind_s:
                self._fall_behind(f"the model is {lag:.3f} s behind the newest tick (over {self.behind_s:g} s); "
                                  "merging ticks to catch up")
            self._behind_max_lag = max(self._behind_max_lag, lag)
            self._pending += 1
            self.stats.merged += 1
            self._episode_merged += 1
            return
        t0 = self._clock()
        dt_model = dt * self.time_scale
        x = tr.stepper.step(dt_model, (excursion - tr.excursion) / dt_model)
        if not (np.abs(x) < STATE_BOUNDS).all():   # non-finite or absurd (sim/integrators.py), as cheap as a sum
            self._end_trial(f"the model diverged {t - tr.t:.3f} s into the step at tick time {t:.3f} s")
            return
        tr.t, tr.excursion = t, excursion.copy()
        ticks, self._pending = 1 + self._pending, 0
        self._publish(tr, t, phase, d, k, lag, ticks, t0)
        if self._behind and lag <= self.behind_s:
            self._say(f"caught up: {self._episode_merged} ticks merged, {self._episode_dropped} dropped by the hub, "
                      f"at most {self._behind_max_lag:.3f} s behind")
            self._behind = False

    def _fall_behind(self, why: str) -> None:
        """Announce the start of a behind episode once; what follows is summed up when it has caught up."""
        if not self._behind:
            self._behind, self.stats.behind_episodes = True, self.stats.behind_episodes + 1
            self._behind_max_lag, self._episode_merged, self._episode_dropped = 0.0, 0, 0
            self._say(f"behind: {why}")

    def _publish(self, tr: _Trial, t: float, phase: int, d: dict, k: int, lag: float, ticks: int,
                 t0: float) -> None:
        x = tr.stepper.x
        theta, tension = x[8:12].copy(), x[12:18].copy()
        tip = self._tip_force(tr)
        measured_tip = fingertip_force_from_sensor(np.asarray(d[RUNNER.wrench][k], dtype=float)[:3],
                                                   tr.surface_angle_deg)
        res_theta = np.asarray(d[RUNNER.joint_angles_rad][k], dtype=float) - theta
        res_tension = np.asarray(d[RUNNER.tendon_force_N][k], dtype=float) - tension
        res_tip = measured_tip - tip
        step_s = self._clock() - t0
        self.hub.publish(Record.single(
            MODEL_STREAM, t, phase=phase, trial_index=tr.index, joint_angles_rad=theta, tendon_force_N=tension,
            fingertip_force_N=tip, measured_fingertip_force_N=measured_tip, residual_joint_angles_rad=res_theta,
            residual_tendon_force_N=res_tension, residual_fingertip_force_N=res_tip, lag_s=lag,
            ticks_merged=ticks, step_s=step_s))
        self.rms.add(tr.index, phase, res_theta, res_tension, res_tip)
        self.stats.steps += 1
        if self._keep_step_times:
            self.stats.step_s.append(step_s)

    def _tip_force(self, tr: _Trial) -> np.ndarray:
        if tr.surface_angle_deg is None:
            return np.zeros(3)
        w, x = self._work, tr.stepper.x
        frames_into(self.finger.P, x[8:12], w.R, w.o)
        contact_into(self.finger.P, tr.S, tr.stepper.aux, w.R, w.o, w.scratch)
        return w.scratch[W_FORCE:W_FORCE + 3].copy()

    def _end_trial(self, why: str) -> None:
        tr, self._trial = self._trial, None
        if tr is None:
            return
        s = self.rms.summary()
        self.summaries.append((tr.name, s))
        self._say(f"trial {tr.index}: model stopped ({why}) after {s.samples} scored ticks; RMS residual "
                  f"angles {_fmt(s.joint_angles_deg)} deg, tendons {_fmt(s.tendon_force_N)} N")

    def _say(self, message: str) -> None:
        self.hub.event(EventKind.MODEL, MODEL_SOURCE, message)   # the recorder fits it to the events table


def _finite(values: np.ndarray) -> bool:
    return math.isfinite(values.sum())  # NaN or inf anywhere makes the sum so; cheaper than isfinite().all()


def _continues(following, index: int) -> bool:
    record, k = following
    return int(record.data[RUNNER.phase][k]) in ACTIVE_PHASES and int(record.data[RUNNER.trial_index][k]) == index


def _phase_name(phase: int) -> str:
    return PHASES[phase].name if 0 <= phase < len(PHASES) else f"phase {phase}"


def _fmt(values: dict[str, float]) -> str:
    return " ".join(f"{k}={v:.2g}" for k, v in values.items())
