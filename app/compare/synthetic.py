"""Session files written from the model: trials whose truth is known exactly.

A "true" finger (any ``FingerParams``, e.g. ``FingerParams.uart().perturbed(0.2, seed)``) runs the paper's
trials from the paper's start state (``sim.scenarios.start_state``: pose, holding pretensions, surface pressed
in), and its states become the measured streams of a session in the rig's layout (``actuators``, ``daq``,
``joints``; trial rows with the contract's ``parameters_json``). What `uartlab compare` reads back from such a
file is then known: the tests compare its metrics with values computed directly from the model, and a
researcher can try the report without a rig (``uartlab compare`` on ``write_model_session``'s output).

Repeats differ by a random pretension (``pretension_spread``) and initial pad deflection
(``deflection_spread``), so the measured SDs are not zero; ``angle_noise_deg`` and ``force_noise_N`` add
white noise per sample as the sensors would. The Nano17 reads the force the finger applies to it, in the
surface frame (as the twin plant does); torques are not modelled here (zeros).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
from uartlab.app.record.writer import SessionRecorder
from uartlab.schema import NANO17_TARED, actuators_spec, daq_spec, joints_spec
from uartlab.sim import Finger, FingerParams, SimResult
from uartlab.sim.scenarios import INITIAL_DEFLECTION_M, MIN_PRETENSION_N, Trial, start_state
from uartlab.sim.surface import PlaneSurface, sensor_force_from_fingertip
from uartlab.streams import Event, EventKind, Record

REST_S = 0.3       # at rest before actuation starts (the initial-state window reads it)
GAP_S = 1.0        # between trials (nothing recorded: the "return" of the real runner)
SPOOL_RADIUS_M = 0.020


@dataclass
class TrueRepeat:
    """The ground truth of one recorded repeat."""

    name: str
    repeat: int
    trial: Trial
    theta0_rad: np.ndarray
    tensions0_N: np.ndarray
    surface: PlaneSurface | None
    result: SimResult

    @property
    def tip_force_N(self) -> np.ndarray:
        return self.result.fingertip_force_N()

    @property
    def steady_theta_rad(self) -> np.ndarray:
        return self.result.x[-1, 8:12]

    @property
    def steady_force_N(self) -> np.ndarray:
        return self.tip_force_N[-1]


def trial_parameters(trial: Trial, repeat: int, repeats: int, pretension_m: np.ndarray,
                     time_scale: float = 1.0) -> dict:
    """parameters_json as app/run/experiment.py writes it (``Experiment.trial_parameters``)."""
    return {"suite": "model", "suite_sha256": "", "trial": trial.name, "kind": trial.kind, "pose": trial.pose,
            "surface_angle_deg": trial.surface_angle_deg,
            "pulls": [{"tendon": p.tendon, "amplitude_mm": 1e3 * p.amplitude_m, "duration_s": p.duration_s,
                       "start_s": p.start_s} for p in trial.pulls],
            "repeat": repeat, "repeats": repeats, "time_scale": time_scale,
            "pretension_excursion_m": [float(v) for v in pretension_m]}


def write_model_session(path: str | os.PathLike, trials: list[Trial], params: FingerParams | None = None, *,
                        repeats: int = 1, seed: int = 0, rate_hz: float = 100.0, pretension_spread: float = 0.0,
                        deflection_spread: float = 0.0, angle_noise_deg: float = 0.0,
                        force_noise_N: float = 0.0, time_scale: float = 1.0, tared: bool = True) -> list[TrueRepeat]:
    """Record ``repeats`` runs of every trial of the "true" finger into a session file; returns the truth.
    ``time_scale`` > 1 records it as a twin at that speed would: host time runs that many times slower."""
    finger = Finger(params or FingerParams.uart())
    rng = np.random.default_rng(seed)
    dt = 1.0 / rate_hz
    truth: list[TrueRepeat] = []
    with SessionRecorder(path, {"operator": "model", "notes": f"written from the model: {finger.params.source}"}) \
            as rec:
        for spec in (actuators_spec(rate_hz), daq_spec(rate_hz), joints_spec(rate_hz)):
            rec.add_stream(spec)
        clock = 1000.0
        if tared:
            # as the rig logs it
            rec.event(Event(clock - 1.0, EventKind.OPERATOR, "daq", f"{NANO17_TARED}: bias [0 0 0 0 0 0] V"))
        sample = 0
        for trial in trials:
            for k in range(1, repeats + 1):
                pretension = MIN_PRETENSION_N * (1 + pretension_spread * rng.uniform(-1, 1))
                deflection = INITIAL_DEFLECTION_M * (1 + deflection_spread * rng.uniform(-1, 1))
                x0, surface = start_state(finger, trial.pose, trial.surface_angle_deg, deflection, pretension)
                result = finger.simulate(x0, trial.pulls, surface, record_dt=dt)
                true = TrueRepeat(trial.name, k, trial, x0.theta.copy(), x0.F_input.copy(), surface, result)
                truth.append(true)
                start = clock + REST_S / time_scale
                rest = np.arange(-round(REST_S / dt), 0) * dt
                t = np.concatenate([rest, result.t])
                x = np.vstack([np.repeat(result.x[:1], rest.size, axis=0), result.x])
                force = np.vstack([np.repeat(true.tip_force_N[:1], rest.size, axis=0), true.tip_force_N])
                exc = np.vstack([np.zeros((rest.size, 6)), result.excursions_m])
                pretension_m = 0.002 * np.arange(1, 7)  # where each SEA sat after pretensioning (arbitrary)
                parameters = trial_parameters(trial, k, repeats, pretension_m, time_scale)
                rec.begin_trial(trial.name, "model", parameters, k, start)
                _write_streams(rec, start + t / time_scale, x, force, pretension_m + exc, surface, rng, sample,
                               angle_noise_deg, force_noise_N)
                rec.end_trial("settled" if result.settled else "settle timeout", start + result.t[-1] / time_scale)
                sample += t.size
                clock = start + (result.t[-1] + GAP_S) / time_scale
    return truth


def _write_streams(rec, host_t, x, tip_force, excursion, surface, rng, sample0, angle_noise_deg, force_noise_N):
    n = host_t.size
    theta = x[:, 8:12] + rng.normal(0.0, np.radians(angle_noise_deg), (n, 4)) if angle_noise_deg else x[:, 8:12]
    tension = x[:, 12:18] + rng.normal(0.0, force_noise_N, (n, 6)) if force_noise_N else x[:, 12:18]
    velocity = np.gradient(excursion, host_t, axis=0)
    rec.write(Record("actuators", host_t, {
        "excursion_m": excursion, "velocity_m_per_s": velocity, "current_A": tension * SPOOL_RADIUS_M / 1.46,
        "moving": np.abs(velocity) > 1e-6, "hardware_error": np.zeros((n, 6), "i8"),
        "device_tick_ms": np.full((n, 6), -1, "i8")}))
    wrench = np.zeros((n, 6))
    if surface is not None:
        on_sensor = sensor_force_from_fingertip(tip_force, surface.angle_deg)
        wrench[:, :3] = on_sensor + (rng.normal(0.0, force_noise_N, (n, 3)) if force_noise_N else 0.0)
    else:
        wrench[:] = np.nan  # free motion: no Nano17 under the finger
    nan6 = np.full((n, 6), np.nan)
    rec.write(Record("daq", host_t, {
        "sample_index": sample0 + np.arange(n), "read_host_time_s": host_t, "pot_V": nan6,
        "reference_V": np.full(n, np.nan), "gauge_V": nan6, "tendon_force_N": tension, "wrench": wrench}))
    rec.write(Record("joints", host_t, {
        "frame_number": sample0 + np.arange(n), "angles_rad": theta, "speed_rad_s": x[:, 4:8],
        "rms_residual_m": np.zeros(n), "well_posed": np.ones(n, bool)}))
