"""SEA calibration: pot volts -> tendon force per SEA from known loads, loading then unloading.

At the rig (docs/calibration.md): the tendon is unhooked from the finger and led over a low-friction
pulley; known masses are hung on it in increasing steps and then removed in decreasing steps, and at each
step the pot voltage is averaged once the weight has stopped swinging. On the twin there is no weight to
hang; the known load is the tension the plant really carries (its "reference load cell", with noise),
reached by reeling the tendon in against the finger, which is the in-situ variant of the same procedure.

Fit (pure, ``fit_sea``): F = g (V - v0) by least squares (or F = c0 + c1 V + c2 V^2 when asked for, or
when ``degree="auto"`` finds the quadratic term significant), over the ratiometrically corrected volts
(the driver's SeaCalibration form, drivers/sea.py). Reported: RMS and largest residual, and the
hysteresis: the largest force difference between separate loading and unloading fits over the volts
both phases covered.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from uartlab.drivers.sea import NOMINAL_REFERENCE_V, SeaCalibration
from uartlab.errors import CalibrationError
from uartlab.sim.names import TENDONS, tendon_index

MIN_POINTS = 5          # a line and its residuals: at least five loads (the ISO 376 practice is 8-10)
MIN_SPAN_N = 1.0        # loads must span at least this much force, or the gain is noise
MIN_VOLT_SPAN_V = 0.005  # ~30 LSB of the 6210 on +-10 V: below that the pot is not moving
QUADRATIC_GAIN = 2.0    # "auto" keeps the quadratic when it cuts the RMS residual by this factor


@dataclass
class SeaFit:
    tendon: str
    v0_V: float
    gain_N_per_V: float
    quadratic_N_per_V2: float   # 0 for a linear fit; else F = g (V - v0) + q (V - v0)^2
    rms_N: float
    max_residual_N: float
    hysteresis_N: float         # NaN when loading or unloading has fewer than 2 points
    n_points: int
    load_range_N: tuple[float, float]
    residuals_N: np.ndarray = field(repr=False)

    def force_N(self, volts: np.ndarray) -> np.ndarray:
        dv = np.asarray(volts, float) - self.v0_V
        return self.gain_N_per_V * dv + self.quadratic_N_per_V2 * dv * dv

    def calibration(self) -> SeaCalibration:
        """The driver's (linear) form."""
        return SeaCalibration(v0_V=self.v0_V, gain_N_per_V=self.gain_N_per_V)


def fit_sea(tendon: str, volts: np.ndarray, loads_N: np.ndarray, loading: np.ndarray | None = None,
            degree: int | str = 1) -> SeaFit:
    """Fit one SEA. ``volts`` (n,) ratiometrically corrected pot volts, ``loads_N`` (n,) the known loads in
    the order applied, ``loading`` (n,) True while loads were being added (None: up to the largest load).
    Raises CalibrationError (naming the SEA) for too few points, a non-monotonic load sequence, a pot that
    does not move, or a gain that is not positive."""
    where = f"SEA {tendon}"
    tendon = TENDONS[tendon_index(tendon)]
    V, F = np.asarray(volts, float).ravel(), np.asarray(loads_N, float).ravel()
    if V.shape != F.shape:
        raise CalibrationError("sea", f"{V.size} voltages for {F.size} loads", where)
    good = np.isfinite(V) & np.isfinite(F)
    if np.count_nonzero(good) < MIN_POINTS:
        raise CalibrationError("sea", f"too few load points ({np.count_nonzero(good)}; need at least {MIN_POINTS})",
                               where)
    if loading is None:
        loading = np.arange(F.size) <= int(np.argmax(F))
    loading = np.asarray(loading, bool).ravel()
    _check_monotonic(F[loading], +1, where)
    _check_monotonic(F[~loading], -1, where)
    V, F, loading = V[good], F[good], loading[good]
    if np.ptp(F) < MIN_SPAN_N:
        raise CalibrationError("sea", f"loads span only {np.ptp(F):.2f} N; need at least {MIN_SPAN_N} N", where)
    if np.ptp(V) < MIN_VOLT_SPAN_V:
        raise CalibrationError("sea", f"the pot moved only {np.ptp(V) * 1e3:.1f} mV over {np.ptp(F):.1f} N: "
                                      "is it wired to this SEA's channel?", where)
    lin = np.polyfit(V, F, 1)
    rms_lin = _rms(F - np.polyval(lin, V))
    coeffs = lin
    if degree == 2 or (degree == "auto" and V.size >= MIN_POINTS + 1):
        quad = np.polyfit(V, F, 2)
        if degree == 2 or rms_lin > QUADRATIC_GAIN * _rms(F - np.polyval(quad, V)):
            coeffs = quad
    elif degree not in (1, "auto"):
        raise CalibrationError("sea", f"degree must be 1, 2 or 'auto', got {degree!r}", where)
    if lin[0] <= 0 or not np.all(np.isfinite(coeffs)):
        raise CalibrationError("sea", f"force falls as the pot voltage rises (gain {lin[0]:.3g} N/V): pot wired "
                                      "backwards or loads recorded against the wrong SEA", where)
    v0, g, q = _vertex_form(coeffs, lin)
    res = F - np.polyval(coeffs, V)
    return SeaFit(tendon, v0, g, q, _rms(res), float(np.max(np.abs(res))), _hysteresis(V, F, loading), int(V.size),
                  (float(F.min()), float(F.max())), res)


def _vertex_form(coeffs: np.ndarray, lin: np.ndarray) -> tuple[float, float, float]:
    """F = c1 V + c0 -> (v0, g, 0); quadratic: expand about the zero-force voltage of the fit."""
    if len(coeffs) == 2:
        return float(-lin[1] / lin[0]), float(lin[0]), 0.0
    c2, c1, c0 = coeffs
    roots = np.roots([c2, c1, c0])
    real = roots[np.isreal(roots)].real
    v_lin = -lin[1] / lin[0]
    v0 = float(real[np.argmin(np.abs(real - v_lin))]) if real.size else float(v_lin)
    return v0, float(c1 + 2 * c2 * v0), float(c2)


def _check_monotonic(F: np.ndarray, sign: int, where: str) -> None:
    steps = sign * np.diff(F[np.isfinite(F)])
    if np.any(steps < -1e-9):
        k = int(np.argmax(steps < -1e-9))
        phase = "loading" if sign > 0 else "unloading"
        raise CalibrationError("sea", f"{phase} loads are not monotonic (step {k + 1}: {F[k]:.3g} N then "
                                      f"{F[k + 1]:.3g} N); hang weights in order", where)


def _hysteresis(V: np.ndarray, F: np.ndarray, loading: np.ndarray) -> float:
    up, down = loading, ~loading
    if np.count_nonzero(up) < 2 or np.count_nonzero(down) < 2 or np.ptp(V[up]) == 0 or np.ptp(V[down]) == 0:
        return float("nan")
    lo, hi = max(V[up].min(), V[down].min()), min(V[up].max(), V[down].max())
    if hi <= lo:
        return float("nan")
    grid = np.linspace(lo, hi, 50)
    return float(np.max(np.abs(np.polyval(np.polyfit(V[up], F[up], 1), grid)
                               - np.polyval(np.polyfit(V[down], F[down], 1), grid))))


def _rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(x))))


# ---------------------------------------------------------------- data collection on the twin plant
@dataclass
class SeaData:
    tendon: str
    volts: np.ndarray      # ratiometrically corrected pot volts, one per load step
    loads_N: np.ndarray    # reference load at each step
    loading: np.ndarray    # True on the way up


def load_schedule(max_N: float = 8.0, steps: int = 6) -> np.ndarray:
    """Loads up then down (the hanging-weight sequence): 0.5 N ... max, then back down."""
    up = np.linspace(0.5, max_N, steps)
    return np.concatenate([up, up[-2::-1]])


def collect_sea_on_plant(plant, tendon: str, loads_N: np.ndarray | None = None, settle_s: float = 0.4,
                         samples: int = 200, reference_noise_N: float = 0.01) -> SeaData:
    """Reel ``tendon`` in and out on the twin plant until its tension reaches each load, then average the
    pot and the reference. The other SEAs hold where they are (the finger is the load's anchor)."""
    i = tendon_index(tendon)
    loads = load_schedule() if loads_N is None else np.asarray(loads_N, float)
    k = float(plant.params.input_stiffness_N_per_m[i])
    r = plant.config.seas[i].spool_radius_m
    for s in range(6):
        plant.set_torque(s, True)
    goal = plant.servo_state(i).angle_rad
    volts, refs = [], []
    peak = int(np.argmax(loads))
    for n, target in enumerate(loads):
        # Approach each load from the side the phase comes from (no overshoot), as weights are hung.
        for _ in range(60):
            err = target - plant.state()[12 + i]
            if abs(err) < 0.02:
                break
            step = 0.7 * err / k / r
            if (n <= peak and step < 0) or (n > peak and step > 0):
                step *= 0.3
            goal += step
            plant.set_goal_angle(i, goal)
            plant.advance(0.1)
        plant.advance(settle_s)
        block = plant.analog_block(samples)
        volts.append(np.mean(block[:, i] * NOMINAL_REFERENCE_V / block[:, 6]))
        refs.append(plant.state()[12 + i] + plant.rng.normal(0.0, reference_noise_N))
    return SeaData(TENDONS[i], np.array(volts), np.array(refs), np.arange(loads.size) <= peak)


def collect_sea_on_rig(actuators, tendon: str, read_pot_V, read_reference_N, loads_N: np.ndarray | None = None,
                       settle_s: float = 0.4, step_s: float = 0.1, max_steps: int = 60,
                       stiffness_N_per_m: float = 300.0, max_travel_m: float = 0.020) -> SeaData:
    """The same procedure through the rig's drivers: ``actuators`` (drivers.interfaces.Actuators: read and
    command), ``read_pot_V()`` -> this SEA's pot volts averaged over a short window, ratiometrically
    corrected, and ``read_reference_N()`` -> the reference load now (a load cell in line with the tendon,
    or the weight hanging from it). The tendon is reeled in and out until the reference reads each load;
    the other five servos hold. ``stiffness_N_per_m``: a guess of the SEA spring, only for step sizes.
    Safety: the tendon never travels more than ``max_travel_m`` from where it started (a load that never
    registers - a slipped knot, an unplugged load cell - must not reel the tendon in without end)."""
    i = tendon_index(tendon)
    loads = load_schedule() if loads_N is None else np.asarray(loads_N, float)
    goal = np.asarray(actuators.read().excursion_m, dtype=float).copy()
    start_m = goal[i]
    volts, refs = [], []
    peak = int(np.argmax(loads))
    for n, target in enumerate(loads):
        for _ in range(max_steps):
            err = target - read_reference_N()
            if abs(err) < 0.02:
                break
            step = 0.7 * err / stiffness_N_per_m
            if (n <= peak and step < 0) or (n > peak and step > 0):
                step *= 0.3  # approach each load from the side the phase comes from, as weights are hung
            goal[i] += step
            if abs(goal[i] - start_m) > max_travel_m:
                raise CalibrationError("sea", f"reaching {target:g} N would take the tendon more than "
                                              f"{max_travel_m * 1e3:g} mm from its start (the reference reads "
                                              f"{read_reference_N():.3g} N): is the load attached?", TENDONS[i])
            actuators.command(goal)
            time.sleep(step_s)
        else:
            raise CalibrationError("sea", f"the reference never reached {target:g} N (it reads "
                                          f"{read_reference_N():.3g} N): is the load attached?", TENDONS[i])
        time.sleep(settle_s)
        volts.append(float(read_pot_V()))
        refs.append(float(read_reference_N()))
    return SeaData(TENDONS[i], np.array(volts), np.array(refs), np.arange(loads.size) <= peak)


def true_sea(plant, tendon: str) -> tuple[float, float]:
    """The twin's true (v0_V, gain_N_per_V) for one SEA: what the fit should recover."""
    i = tendon_index(tendon)
    sea = plant.config.seas[i]
    return sea.pot_zero_V, float(plant.params.input_stiffness_N_per_m[i] * sea.spool_radius_m / sea.pot_volts_per_rad)


def record_values(fits: list[SeaFit]) -> tuple[dict, dict]:
    """(values, residuals) tables for the calibration store, one sub-table per SEA."""
    values = {f.tendon: {"v0_V": f.v0_V, "gain_N_per_V": f.gain_N_per_V, "quadratic_N_per_V2": f.quadratic_N_per_V2,
                         "reference_V": NOMINAL_REFERENCE_V} for f in fits}
    residuals = {f.tendon: {"rms_N": f.rms_N, "max_N": f.max_residual_N, "hysteresis_N": f.hysteresis_N,
                            "n_points": f.n_points, "load_range_N": list(f.load_range_N)} for f in fits}
    return values, residuals
