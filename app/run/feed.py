"""A simulated `runner` stream: a trial run on the model, published tick by tick the way the engine
publishes its control ticks (the `runner` stream of app/run/engine.py). It feeds the live model in its tests and in
`uartlab bench live` without a rig; the "measured" values are the simulated finger's, so a live model with the
same parameters must reproduce them.

    run = simulated_trial(finger, contact_trial("Hook", "FDP", "ED"), rate_hz=100.0, trial_index=0)
    for record in run.records:
        hub.publish(record)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from uartlab.app.run.live_model import RUNNER_STREAM
from uartlab.app.run.residuals import PHASES
from uartlab.app.run.state import WATCHED_STREAMS
from uartlab.protocols.runner import Phase
from uartlab.sim import Finger, PlaneSurface, SimResult
from uartlab.sim.scenarios import INITIAL_DEFLECTION_M, Trial, start_state
from uartlab.sim.surface import sensor_force_from_fingertip
from uartlab.streams import Record


def runner_record(t: float, phase: Phase, trial_index: int, excursion_m, tendon_force_N, joint_angles_rad,
                  wrench, joint_speed_rad_s=None, command_m=None) -> Record:
    """One tick of the runner stream, every field of app/run/experiment.py's ``runner_spec``."""
    excursion = np.asarray(excursion_m, dtype=float)
    speed = np.zeros(4) if joint_speed_rad_s is None else np.asarray(joint_speed_rad_s, dtype=float)
    wrench = np.asarray(wrench, dtype=float)
    return Record.single(RUNNER_STREAM, t, phase=PHASES.index(phase), trial_index=trial_index,
                         command_m=excursion if command_m is None else command_m, excursion_m=excursion,
                         tendon_force_N=tendon_force_N, joint_angles_rad=joint_angles_rad,
                         joint_speed_rad_s=speed, wrench=wrench,
                         fingertip_force_N=float(np.linalg.norm(wrench[:3])),
                         hardware_error=np.zeros(6, dtype=np.int64),
                         stream_age_s=np.zeros(len(WATCHED_STREAMS)))  # a simulated rig is never stale


@dataclass
class SimulatedTrial:
    records: list[Record]             # one per control tick: PRETENSION, ACTUATE ... RECORD, next PRETENSION
    result: SimResult                 # the simulated truth, sampled at the ticks (t = 0 at actuation start)
    surface: PlaneSurface | None
    t0_s: float                       # host time of the actuation start


def simulated_trial(finger: Finger, trial: Trial, *, rate_hz: float = 100.0, trial_index: int = 0,
                    t0_s: float = 0.0, pre_ticks: int = 3, post_ticks: int = 3, offset_m=None,
                    deflection_m: float = INITIAL_DEFLECTION_M, settle_timeout_s: float = 5.0) -> SimulatedTrial:
    """``trial`` (sim.scenarios.Trial; a suite trial's ``sim_trial()``) on ``finger`` from the paper's start
    state, sampled at ``rate_hz`` as runner ticks: ``pre_ticks`` at rest in PRETENSION, ACTUATE while the pulls
    run, SETTLE until the paper's steady state, one RECORD, then ``post_ticks`` of the next trial's PRETENSION.
    Excursions carry the pretension ``offset_m`` (6,), as the runner's do. The Nano17 reads the force the
    finger applies to it in the surface frame (as the twin's, drivers/twins/plant.py); its torques are 0 here."""
    period = 1.0 / rate_hz
    dt = period / np.ceil(period / 2e-3 - 1e-9)  # RK4 steps of at most the paper's 2 ms, landing on the ticks
    angle = trial.surface_angle_deg if trial.kind == "contact" else None
    x0, surface = start_state(finger, trial.pose, angle, deflection_m)
    result = finger.simulate(x0, trial.pulls, surface, dt=dt, record_dt=period, settle_timeout_s=settle_timeout_s)
    offset = np.zeros(6) if offset_m is None else np.asarray(offset_m, dtype=float)
    excursions = offset + result.excursions_m
    tip = result.fingertip_force_N()
    wrench = np.zeros((len(result.t), 6))
    wrench[:, :3] = sensor_force_from_fingertip(tip, angle)
    end = max(p.start_s + p.duration_s for p in trial.pulls)
    records = [runner_record(t0_s + (k - pre_ticks) * period, Phase.PRETENSION, trial_index, excursions[0],
                             result.tensions_N[0], result.x[0, 8:12], wrench[0]) for k in range(pre_ticks)]
    speed = result.x[:, 4:8]
    n = len(result.t)
    for j in range(n):
        phase = Phase.RECORD if j == n - 1 else (Phase.ACTUATE if result.t[j] <= end + 1e-9 else Phase.SETTLE)
        records.append(runner_record(t0_s + result.t[j], phase, trial_index, excursions[j], result.tensions_N[j],
                                     result.x[j, 8:12], wrench[j], speed[j]))
    t_end = t0_s + result.t[-1]
    records += [runner_record(t_end + (k + 1) * period, Phase.PRETENSION, trial_index + 1, excursions[-1],
                              result.tensions_N[-1], result.x[-1, 8:12], wrench[-1]) for k in range(post_ticks)]
    return SimulatedTrial(records, result, surface, t0_s)
