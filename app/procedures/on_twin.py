"""Each procedure end to end on the twin plant (in-process): collect, fit, and the store's tables.

Every function returns (values, residuals, method, report lines) and raises CalibrationError before
anything could be written; ``on_progress(done, total)``, if given, is called per step (tendon, sweep,
simulation). The CLI (`uartlab calibrate ...`) calls these without --rig; with `--rig twin|rig.toml` the
same fits run on data collected at a rig through its drivers (app/procedures/at_rig.py).
"""

from __future__ import annotations

import numpy as np
from uartlab.calibration import mocap, model_fit, moment_arms, nano17, sea, servo_zero
from uartlab.drivers.sea import SeaCalibration
from uartlab.drivers.twins.plant import Plant, PlantConfig
from uartlab.sim.names import TENDONS

Result = tuple[dict, dict, str, list[str]]


def _plant(seed: int, perturbation: float, **kw) -> Plant:
    return Plant(PlantConfig(seed=seed, perturbation=perturbation, **kw))


def run_sea(seed: int = 0, perturbation: float = 0.1, degree: int | str = 1, on_progress=None) -> Result:
    plant = _plant(seed, perturbation)
    fits = []
    lines = [f"{'SEA':4} {'v0 [V]':>8} {'gain [N/V]':>11} {'rms [N]':>8} {'max [N]':>8} {'hyst [N]':>9}"
             "   (true v0, gain)"]
    for t in TENDONS:
        d = sea.collect_sea_on_plant(plant, t)
        f = sea.fit_sea(t, d.volts, d.loads_N, d.loading, degree)
        fits.append(f)
        v0, g = sea.true_sea(plant, t)
        lines.append(f"{t:4} {f.v0_V:8.4f} {f.gain_N_per_V:11.4f} {f.rms_N:8.4f} {f.max_residual_N:8.4f} "
                     f"{f.hysteresis_N:9.4f}   ({v0:.4f}, {g:.4f})")
        if on_progress is not None:
            on_progress(len(fits), len(TENDONS))
    values, residuals = sea.record_values(fits)
    return values, residuals, "twin: in-situ loads against the reference tension, loading then unloading", lines


def run_servo_zero(seed: int = 0, perturbation: float = 0.1, pretension_N: float = 0.3, on_progress=None) -> Result:
    plant = _plant(seed, perturbation)
    cals = [SeaCalibration(*sea.true_sea(plant, t)) for t in TENDONS]
    data = servo_zero.collect_servo_zero_on_plant(plant, cals, on_progress=on_progress)
    fits = [servo_zero.fit_servo_zero(t, d.excursion_m, d.force_N, pretension_N) for t, d in data.items()]
    lines = [f"{'SEA':4} {'taut [mm]':>10} {'k [N/mm]':>9} {'offset [mm]':>12} {'rms [N]':>8}"]
    lines += [f"{f.tendon:4} {f.taut_excursion_m * 1e3:10.3f} {f.slope_N_per_m * 1e-3:9.4f} "
              f"{f.pretension_offset_m * 1e3:12.3f} {f.rms_N:8.4f}" for f in fits]
    values, residuals = servo_zero.record_values(fits)
    return values, residuals, "twin: all slack, each tendon reeled in, line through the first rise", lines


def run_nano17(cal_file: str | None = None, tool_transform=(0, 0, 0, 0, 0, 0), seed: int = 0) -> Result:
    from uartlab.drivers.twins.nano17 import load_twin_calibration

    plant = _plant(seed, 0.0)
    cal = nano17.load_cal(cal_file) if cal_file else load_twin_calibration()
    result = nano17.tare(cal, nano17.collect_tare_on_plant(plant), cal_file or cal.path, tool_transform)
    lines = [f"file {result.cal_file} (serial {result.serial}), tool transform {list(result.tool_transform)}",
             "tare [V]   " + " ".join(f"{v:+.4f}" for v in result.bias_V),
             "noise      " + " ".join(f"{v:.4f}" for v in result.noise_std) + "  (N, N-mm)"]
    values, residuals = nano17.record_values(result)
    return values, residuals, "twin: 500 unloaded samples, mean = tare", lines


def run_mocap(seed: int = 0, frames: int = 300) -> Result:
    from uartlab.sim.ik import default_markers

    plant = _plant(seed, 0.0)
    X, pose = mocap.collect_mocap_on_plant(plant, frames)
    result = mocap.fit_mocap(plant.finger, default_markers(plant.finger), X, pose)
    M, o = result.motive_from_world
    truth = plant.config.motive_from_world
    angle = np.degrees(np.arccos(np.clip((np.trace(M.T @ truth) - 1) / 2, -1, 1)))
    true_mm = np.round(np.array(plant.config.motive_origin_m) * 1e3, 2).tolist()
    lines = [f"base frame: origin {np.round(o * 1e3, 2).tolist()} mm (true {true_mm}), rotation off by {angle:.3f} deg",
             "base marker residuals [mm]: " + " ".join(f"{r * 1e3:.3f}" for r in result.base_residuals_m)]
    values, residuals = mocap.record_values(result)
    return values, residuals, f"twin: {frames} frames in the {np.degrees(pose).round(1).tolist()} deg pose", lines


def run_moment_arms(seed: int = 0, perturbation: float = 0.1, on_progress=None, form: str = "polynomial") -> Result:
    plant = _plant(seed, perturbation)
    cals = [SeaCalibration(*sea.true_sea(plant, t)) for t in TENDONS]
    data = moment_arms.collect_sweep_on_plant(plant, cals, order=TENDONS * 2, on_progress=on_progress)
    paths = data.path_m(plant.params.input_stiffness_N_per_m)
    fits, lines = moment_arms.fit_tendons(TENDONS, data.theta_rad, paths, data.force_N, plant.params, form,
                                          truth=plant.params)
    values, residuals = moment_arms.record_values(fits)
    method = f"twin: ACT, slow raised-cosine pulls of each tendon (twice), path = excursion - F/k, as {form}s"
    return values, residuals, method, lines


def model_recordings(names: tuple[str, ...], seed: int = 0, perturbation: float = 0.2):
    """(the defaults, the twin's truth, its recordings): four trials of a twin plant whose ``names`` are each
    off the defaults by a seeded factor within 1 +- ``perturbation`` (free motion under FDP and ED, contact
    from Hook and Curl) - what `uartlab calibrate model` fits on the twin."""
    from uartlab.sim import FingerParams
    from uartlab.sim.scenarios import contact_trial, free_motion_trial

    base = FingerParams.uart()
    rng = np.random.default_rng(seed)
    spread = rng.uniform(1 - perturbation, 1 + perturbation, len(names))
    truth = model_fit.set_params(base, {n: model_fit.get_param(base, n) * f
                                        for n, f in zip(names, spread, strict=True)})

    def factory(pose, angle):
        return Plant(PlantConfig(pose=pose, surface_angle_deg=angle, seed=seed), params=truth)

    trials = [free_motion_trial("FDP"), free_motion_trial("ED"), contact_trial("Hook", "FDP", "ED"),
              contact_trial("Curl", "FDS", "LUM")]
    return base, truth, [model_fit.record_trial_on_plant(factory, t, settle_s=0.5, sample_s=0.04) for t in trials]


def run_model(names: tuple[str, ...], executor=None, seed: int = 0, perturbation: float = 0.2,
              on_progress=None) -> Result:
    base, truth, recs = model_recordings(names, seed, perturbation)
    fit = model_fit.fit_model(base, recs, names, executor=executor, on_progress=on_progress)
    lines = [f"{'parameter':10} {'start':>12} {'fitted':>12} {'twin truth':>12} {'1-sigma':>8}"]
    lines += [f"{n:10} {fit.start[n]:12.5g} {fit.values[n]:12.5g} {model_fit.get_param(truth, n):12.5g} "
              f"{fit.std_factor[n] * 100:7.2f}%" for n in names]
    lines.append(f"rms angle {fit.rms_angle_deg:.3f} deg, rms force {fit.rms_force_N * 1e3:.2f} mN, "
                 f"{fit.simulations} simulations")
    values, residuals = model_fit.record_values(fit)
    method = f"twin: least squares over {len(recs)} trials ({', '.join(r.name for r in recs)})"
    return values, residuals, method, lines
