"""Servo zero: each tendon's slack-to-taut point and the pretension offset, from force against excursion.

Procedure (docs/calibration.md): every tendon is let out until slack (the finger rests under gravity),
then each in turn is reeled in slowly in small steps while its SEA force is recorded. While slack the
force stays near zero; once taut it rises about linearly (the SEA spring in series with whatever resists
the finger: gravity, friction, the joint limits, the other tendons through the extensor mechanism).
The tendon's zero is where that first rise, extrapolated back, reaches zero force: the excursion at which
it just becomes taut. The pretension offset is how much further to reel in to reach the pretension.

Fit (pure, ``fit_servo_zero``): a line through the first rise, from the taut threshold up to
``fit_limit_N``; its zero crossing is x0 and its slope the stiffness seen at the tendon. Only the first
rise is used, so a finger that starts to move or reaches a joint limit at higher force does not bend it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from uartlab.drivers.sea import SeaCalibration, SeaGeometry
from uartlab.errors import CalibrationError
from uartlab.sim.names import TENDONS, tendon_index

MIN_SLACK_POINTS = 3
MIN_TAUT_POINTS = 4
FIT_LIMIT_N = 1.0  # est.: a few times the 0.3 N pretension; above it the finger moves and the line bends
TAUT_THRESHOLD_N = 0.2  # est.: the EM tendons keep up to ~0.15 N through the extensor mechanism when let out


@dataclass
class ServoZeroFit:
    tendon: str
    taut_excursion_m: float       # x0: where the tendon becomes taut, in the sweep's excursion
    slope_N_per_m: float          # s: stiffness seen at the tendon just after taut
    pretension_N: float
    pretension_offset_m: float    # reel in this much beyond x0 for the pretension
    rms_N: float
    n_points: int

    def zero_ticks(self, geometry: SeaGeometry) -> int:
        """The Present Position at which this tendon is just taut (SeaGeometry.zero_ticks)."""
        return int(geometry.excursion_to_ticks(self.taut_excursion_m))


def fit_servo_zero(tendon: str, excursion_m: np.ndarray, force_N: np.ndarray, pretension_N: float = 0.3,
                   fit_limit_N: float = FIT_LIMIT_N) -> ServoZeroFit:
    """Taut point from a reeling-in sweep (see the module docstring): the sweep must start slack (below the
    taut threshold) and rise through it; the first rise, from the threshold up to ``fit_limit_N`` (or 70 %
    of the largest force, whichever is lower), is fitted with a line whose zero crossing is x0."""
    where = f"tendon {tendon}"
    tendon = TENDONS[tendon_index(tendon)]
    x, F = np.asarray(excursion_m, float).ravel(), np.asarray(force_N, float).ravel()
    if x.shape != F.shape:
        raise CalibrationError("servo-zero", f"{x.size} excursions for {F.size} forces", where)
    if x.size < MIN_SLACK_POINTS + MIN_TAUT_POINTS:
        raise CalibrationError("servo-zero", f"too few points ({x.size}; need at least "
                                             f"{MIN_SLACK_POINTS + MIN_TAUT_POINTS})", where)
    if np.any(np.diff(x) <= 0):
        k = int(np.argmax(np.diff(x) <= 0))
        raise CalibrationError("servo-zero", f"the sweep is not monotonic (point {k + 1}: {x[k] * 1e3:.3f} mm then "
                                             f"{x[k + 1] * 1e3:.3f} mm); reel in steadily", where)
    taut_N = max(TAUT_THRESHOLD_N, 3 * _noise_floor(F))
    slack = np.flatnonzero(taut_N > F)
    if slack.size == 0 or slack[0] != 0:
        raise CalibrationError("servo-zero", f"the tendon was not slack at the start of the sweep ({F[0]:.2f} N > "
                                             f"{taut_N:.2f} N); let it out further first", where)
    limit = min(fit_limit_N, 0.7 * float(np.max(F)))
    first = int(np.argmax(taut_N <= F)) if np.any(taut_N <= F) else x.size
    above = np.flatnonzero(F[first:] > limit)
    last = first + (int(above[0]) if above.size else x.size - first)
    if last - first < MIN_TAUT_POINTS:
        raise CalibrationError("servo-zero", f"only {last - first} points between {taut_N:.2f} N and {limit:.2f} N "
                                             "on the taut side; reel in further or in smaller steps", where)
    xs, Fs = x[first:last], F[first:last]
    slope, icept = np.polyfit(xs, Fs, 1)
    if not np.isfinite(slope) or slope <= 0:
        raise CalibrationError("servo-zero", f"the force does not rise as the tendon is reeled in (slope "
                                             f"{slope:.3g} N/m): is the tendon attached?", where)
    x0 = float(-icept / slope)
    if not x[0] - 0.005 <= x0 <= xs[0]:
        raise CalibrationError("servo-zero", f"the fitted taut point {x0 * 1e3:.2f} mm is outside the sweep "
                                             f"({x[0] * 1e3:.2f} .. {xs[0] * 1e3:.2f} mm): no clear knee", where)
    rms = float(np.sqrt(np.mean((Fs - (slope * xs + icept)) ** 2)))
    return ServoZeroFit(tendon, x0, float(slope), float(pretension_N), float(pretension_N / slope), rms, int(xs.size))


def _noise_floor(F: np.ndarray) -> float:
    """Force noise from the quietest run of points (the slack part): robust spread of first differences."""
    d = np.diff(F)
    return float(1.4826 * np.median(np.abs(d - np.median(d))) / np.sqrt(2)) if d.size else 0.0


# ---------------------------------------------------------------- data collection on the twin plant
@dataclass
class ServoZeroData:
    tendon: str
    excursion_m: np.ndarray   # from the servo position (the spool), relative to the start
    force_N: np.ndarray       # from the pot through the SEA calibration
    true_force_N: np.ndarray  # the plant's own tension (twin only: the truth the test checks against)


def collect_servo_zero_on_plant(plant, calibrations: list[SeaCalibration], tendons: tuple[str, ...] = TENDONS,
                                slack_m: float = 0.050, step_m: float = 0.0002, dwell_s: float = 0.05,
                                samples: int = 20, stop_N: float = 1.5 * FIT_LIMIT_N, on_progress=None
                                ) -> dict[str, ServoZeroData]:
    """Every tendon let out by ``slack_m`` (the finger comes to rest under gravity against its joint limits,
    nothing pulling it), then each tendon in turn: reeled in by 1 mm steps until it carries force, backed
    off 3 mm, reeled in again by ``step_m`` steps until the force passes ``stop_N``, and let out again.
    Excursions are relative to each servo's position before the procedure. ``on_progress(done, total)``:
    after each tendon."""
    radii = [sea.spool_radius_m for sea in plant.config.seas]
    for s in range(6):
        plant.set_torque(s, True)
    start = [plant.servo_state(s).angle_rad for s in range(6)]
    for s in range(6):
        plant.set_goal_angle(s, start[s] - slack_m / radii[s])
    plant.advance(1.0)
    out = {}
    for name in tendons:
        i = tendon_index(name)

        def force() -> float:
            block = plant.analog_block(samples)
            return float(np.mean(calibrations[i].force_N(block[:, i], block[:, 6])))  # noqa: B023

        def goto(x: float, wait_s: float) -> None:
            plant.set_goal_angle(i, start[i] + x / radii[i])  # noqa: B023
            plant.advance(wait_s)

        x = -slack_m
        while x < slack_m and force() < 0.05:  # coarse: find roughly where it takes up force
            x += 0.001
            goto(x, 0.05)
        x -= 0.005
        goto(x, 0.3)
        xs, fs, truth = [], [], []
        while x < slack_m:
            goto(x, dwell_s)
            fs.append(force())
            xs.append((plant.servo_state(i).angle_rad - start[i]) * radii[i])
            truth.append(float(plant.state()[12 + i]))
            if fs[-1] > stop_N:
                break
            x += step_m
        goto(-slack_m, 0.5)
        out[TENDONS[i]] = ServoZeroData(TENDONS[i], np.array(xs), np.array(fs), np.array(truth))
        if on_progress is not None:
            on_progress(len(out), len(tendons))
    return out


def apply_zero_on_plant(plant, fits: list[ServoZeroFit], start_angles_rad: list[float] | None = None) -> None:
    """Reel every fitted tendon to its taut point plus the pretension offset (what the rig does next)."""
    for f in fits:
        i = tendon_index(f.tendon)
        r = plant.config.seas[i].spool_radius_m
        base = start_angles_rad[i] if start_angles_rad is not None else 0.0
        plant.set_goal_angle(i, base + (f.taut_excursion_m + f.pretension_offset_m) / r)
    plant.advance(1.0)


def true_taut_excursion(data: ServoZeroData, threshold_N: float = 1e-6) -> float:
    """The twin's truth: where the plant's own tension left zero during the sweep (linear between steps)."""
    k = int(np.argmax(data.true_force_N > threshold_N))
    if k == 0:
        return float("nan")
    x1, x2, f2 = data.excursion_m[k - 1], data.excursion_m[k], data.true_force_N[k]
    f3 = data.true_force_N[k + 1] if k + 1 < data.true_force_N.size else f2
    slope = (f3 - f2) / (data.excursion_m[k + 1] - x2) if k + 1 < data.excursion_m.size else np.inf
    return float(max(x1, x2 - f2 / slope)) if slope > 0 else float(x2)


def record_values(fits: list[ServoZeroFit], geometry: SeaGeometry | None = None) -> tuple[dict, dict]:
    geometry = geometry or SeaGeometry()
    values = {f.tendon: {"taut_excursion_mm": f.taut_excursion_m * 1e3, "zero_ticks": f.zero_ticks(geometry),
                         "pretension_N": f.pretension_N, "pretension_offset_mm": f.pretension_offset_m * 1e3,
                         "stiffness_N_per_mm": f.slope_N_per_m * 1e-3} for f in fits}
    residuals = {f.tendon: {"rms_N": f.rms_N, "n_points": f.n_points} for f in fits}
    return values, residuals
