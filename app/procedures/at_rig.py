"""Each procedure end to end at a started rig: collect through its drivers, fit, and the store's tables.

The data come through ``RigProbe`` (app/procedures/probe.py): the MX-64 bus for excursions and goals, the
USB-6210 for pot, reference and gauge volts and the SEA forces, NatNet for the markers and the rig's
joints stream for the angles. The fits are the same functions on_twin.py uses. Every function returns
(values, residuals, method, report lines) like on_twin.py's and raises CalibrationError before anything
could be written; on the way out the servos hold (``RigProbe.procedure``). ``on_progress(done, total)``,
if given, is called after each tendon (SEA, servo zero) or sweep (moment arms).

On a twin rig the twin's Plant is read for the truth column of the report only (``twin_plant``), never
for data - with one stated exception: the SEA procedure's reference load. A reference is the one number a
calibration is given rather than measures (the hung mass, the in-line load cell); the twin has no load
cell on its DAQ, so its reference is the tension the twin carries plus 10 mN of noise, as on_twin.py's.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
from uartlab.app.procedures.probe import RigProbe
from uartlab.app.run.rig_like import RigLike
from uartlab.calibration import mocap, moment_arms, nano17, sea, servo_zero
from uartlab.drivers.sea import SeaGeometry
from uartlab.errors import CalibrationError
from uartlab.schema import ACTUATORS, DAQ, JOINTS_IK, MOCAP
from uartlab.sim import Finger, FingerParams
from uartlab.sim.names import TENDONS, tendon_index
from uartlab.sim.scenarios import POSES_DEG

Result = tuple[dict, dict, str, list[str]]
G_M_PER_S2 = 9.80665
TWIN_REFERENCE_NOISE_N = 0.01
# measured: in situ the finger flexes to its stops before the spring takes the load; the twin's FDP read
# 5.0 N at 40 mm and 7.3 N at 58 mm (6 N: 20 mm of spring). Just inside the probe's 60 mm travel limit.
SEA_MAX_TRAVEL_M = 0.058
# est.: the SEA spring (300 N/m) in series with the finger: servo-zero measures 165-300 N/m on the twin;
# the step-size guess, low so that most steps land short of the load rather than overshoot it
IN_SITU_STIFFNESS_N_PER_M = 150.0
IN_SITU_MAX_N = 6.0  # in situ the finger is the anchor: it flexes to its stops first (FDP: 7.3 N at 58 mm)
MAX_JIG_MOTION_M = 0.002  # est.: 10x Motive's marker noise; more and the finger is not held by the jig


def _where(rig: RigLike) -> str:
    return "twin rig" if rig.twin_plant is not None else f"rig {getattr(rig.config, 'source', '')}".strip()


# ------------------------------------------------------------------ SEA
def twin_reference(plant, tendon: str, noise_N: float = TWIN_REFERENCE_NOISE_N, seed: int = 0) -> Callable[[], float]:
    """The twin's reference load cell in line with ``tendon``: its true tension with noise (see module doc)."""
    i, rng = tendon_index(tendon), np.random.default_rng(seed)
    return lambda: float(plant.state()[12 + i] + rng.normal(0.0, noise_N))


PRESS_ENTER = "press Enter "   # how a prompt that waits for the operator ends (the window offers the key)


def collect_sea_hanging_weights(probe: RigProbe, tendon: str, masses_kg: np.ndarray, ask: Callable[[str], str],
                                settle_s: float = 1.0) -> sea.SeaData:
    """The bench method on a real rig: the operator hangs each mass on the unhooked tendon when asked (and
    takes them off again in reverse order); the servo holds; the pot is averaged once the weight is still."""
    i = tendon_index(tendon)
    masses = np.asarray(masses_kg, float)
    peak = int(np.argmax(masses))
    volts = []
    for n, m in enumerate(masses):
        verb = "hang" if n <= peak else "take off down to"
        ask(f"SEA {TENDONS[i]}: {verb} {m * 1e3:.0f} g on the tendon, wait until it is still, {PRESS_ENTER}")
        probe.wait(settle_s)
        volts.append(float(probe.pot_V(0.2)[i]))
    return sea.SeaData(TENDONS[i], np.array(volts), masses * G_M_PER_S2, np.arange(masses.size) <= peak)


def run_sea(rig: RigLike, tendons: tuple[str, ...] = TENDONS, loads_N: np.ndarray | None = None, degree: int | str = 1,
            reference: Callable[[str], Callable[[], float]] | None = None, ask: Callable[[str], str] | None = None,
            say=None, on_progress=None) -> Result:
    """SEA per tendon at the rig, loading then unloading. With ``ask`` (a prompt that returns when the
    operator presses Enter) the operator hangs weights on the unhooked tendon and the servo holds;
    otherwise an in-line reference (``reference(tendon)`` -> a reader of newtons; the twin's by default on
    a twin rig) is read while the tendon is reeled in and out through the servo until it reads each load.
    The pot comes through the DAQ, ratiometrically corrected."""
    plant = rig.twin_plant
    loads = sea.load_schedule(IN_SITU_MAX_N) if loads_N is None else np.asarray(loads_N, float)
    if ask is not None:
        reference = None
    elif reference is None and plant is not None:
        reference = lambda t: twin_reference(plant, t)  # noqa: E731
    if reference is None and ask is None:
        raise CalibrationError("sea", "no reference load: on hardware give an in-line load cell or hang weights "
                                      "(the CLI asks for each mass)")
    scale = rig.time_scale
    fits = []
    truth = "   (true v0, gain)" if plant is not None else ""
    lines = [f"{'SEA':4} {'v0 [V]':>8} {'gain [N/V]':>11} {'rms [N]':>8} {'max [N]':>8} {'hyst [N]':>9}{truth}"]
    with RigProbe(rig, say) as probe, probe.procedure("sea"):
        for t in tendons:
            i = tendon_index(t)
            if ask is not None:   # then there is no reference (above); without either, refused above
                d = collect_sea_hanging_weights(probe, t, loads / G_M_PER_S2, ask)
            elif reference is not None:
                d = sea.collect_sea_on_rig(probe, t, lambda i=i: float(probe.pot_V(0.2)[i]), reference(t), loads,
                                           settle_s=0.4 / scale, step_s=0.1 / scale,
                                           max_travel_m=SEA_MAX_TRAVEL_M, stiffness_N_per_m=IN_SITU_STIFFNESS_N_PER_M)
                probe.command(np.where(np.arange(6) == i, probe.start_m, probe.goal_m))  # as found, for the next
                probe.settle()
            f = sea.fit_sea(t, d.volts, d.loads_N, d.loading, degree)
            fits.append(f)
            line = (f"{f.tendon:4} {f.v0_V:8.4f} {f.gain_N_per_V:11.4f} {f.rms_N:8.4f} {f.max_residual_N:8.4f} "
                    f"{f.hysteresis_N:9.4f}")
            if plant is not None:
                v0, g = sea.true_sea(plant, t)
                line += f"   ({v0:.4f}, {g:.4f})"
            lines.append(line)
            if on_progress is not None:
                on_progress(len(fits), len(tendons))
    values, residuals = sea.record_values(fits)
    how = ("in-situ loads through the servo against the twin's tension as reference" if plant is not None and
           reference is not None else "in-situ loads against an in-line load cell" if reference is not None
           else "hanging weights")
    return values, residuals, f"{_where(rig)}: {how}, pots through the USB-6210, loading then unloading", lines


# ------------------------------------------------------------------ Nano17
def run_nano17(rig: RigLike, cal_file: str | None = None, tool_transform=(0, 0, 0, 0, 0, 0), samples: int = 500,
               say=None) -> Result:
    """Tare from ``samples`` gauge readings through the DAQ with nothing touching the sensor. The .cal file
    is ``cal_file``, else the rig's (rig.toml [nano17]), else the twin's."""
    if not rig.has_nano17:
        raise CalibrationError("nano17", "this rig has no Nano17 gauges wired (rig.toml [daq] gauges)")
    if cal_file is None and rig.config.nano17.calibration_file is not None:
        cal_file = str(rig.config.nano17.calibration_file)
    if cal_file is None:
        from uartlab.app.rig.backends import twin_ft_calibration
        cal_file = str(twin_ft_calibration().path)
    cal = nano17.load_cal(cal_file, rig.config.nano17.index)
    with RigProbe(rig, say) as probe, probe.procedure("nano17", moves=False):
        rate = rig.config.daq.rate_hz
        volts = probe.fresh(DAQ.stream, (DAQ.gauge_V,), samples / rate, min_samples=samples)[DAQ.gauge_V][:samples]
    result = nano17.tare(cal, volts, cal_file, tool_transform)
    lines = [f"file {result.cal_file} (serial {result.serial}), tool transform {list(result.tool_transform)}",
             "tare [V]   " + " ".join(f"{v:+.4f}" for v in result.bias_V),
             "noise      " + " ".join(f"{v:.4f}" for v in result.noise_std) + "  (N, N-mm)"]
    plant = rig.twin_plant
    if plant is not None:
        lines.append("true [V]   " + " ".join(f"{v:+.4f}" for v in plant.nano17.bias_volts))
    values, residuals = nano17.record_values(result)
    method = f"{_where(rig)}: {volts.shape[0]} unloaded samples through the USB-6210, mean = tare"
    return values, residuals, method, lines


# ------------------------------------------------------------------ servo zero
def run_servo_zero(rig: RigLike, tendons: tuple[str, ...] = TENDONS, pretension_N: float = 0.3, slack_m: float = 0.050,
                   step_m: float = 0.0002, dwell_s: float = 0.05, stop_N: float = 1.5 * servo_zero.FIT_LIMIT_N,
                   say=None, on_progress=None) -> Result:
    """All tendons let out ``slack_m``; each in turn reeled in through its servo (1 mm steps until it carries
    force, back 5 mm, then ``step_m`` steps until ``stop_N``) with its force from the rig's SEA forces and
    its excursion read back from the servo; a line through the first rise gives the taut point."""
    plant = rig.twin_plant
    geometries = list(getattr(rig.config.actuators, "seas", ())) or [SeaGeometry() for _ in TENDONS]
    fits, truths = [], {}
    with RigProbe(rig, say) as probe, probe.procedure("servo-zero"):
        slack = probe.start_m - slack_m
        probe.command(slack)
        probe.wait(1.0)  # the finger comes to rest on its stops, nothing pulling it
        for t in tendons:
            i = tendon_index(t)
            data = _reel_in(probe, i, slack, slack_m, step_m, dwell_s, stop_N, plant)
            probe.command(slack)
            probe.wait(0.5)
            fits.append(servo_zero.fit_servo_zero(t, data.excursion_m, data.force_N, pretension_N))
            # the same sweep fitted on the twin's own tension (as tests/calibration/test_calibration_sensors.py)
            if plant is not None:
                truths[TENDONS[i]] = servo_zero.fit_servo_zero(t, data.excursion_m, data.true_force_N,
                                                               pretension_N).taut_excursion_m
            if on_progress is not None:
                on_progress(len(fits), len(tendons))
    lines = [f"{'SEA':4} {'taut [mm]':>10} {'k [N/mm]':>9} {'offset [mm]':>12} {'rms [N]':>8}"
             + ("  (true taut [mm])" if plant is not None else "")]
    for f in fits:
        line = (f"{f.tendon:4} {f.taut_excursion_m * 1e3:10.3f} {f.slope_N_per_m * 1e-3:9.4f} "
                f"{f.pretension_offset_m * 1e3:12.3f} {f.rms_N:8.4f}")
        lines.append(line + (f"  ({truths[f.tendon] * 1e3:.3f})" if f.tendon in truths else ""))
    values, residuals = {}, {}
    for f in fits:  # each tendon's ticks through its own spool geometry
        v, r = servo_zero.record_values([f], geometries[tendon_index(f.tendon)])
        values.update(v)
        residuals.update(r)
    method = (f"{_where(rig)}: all slack, each tendon reeled in through its servo, SEA forces, line through "
              "the first rise")
    return values, residuals, method, lines


def _reel_in(probe: RigProbe, i: int, slack: np.ndarray, slack_m: float, step_m: float, dwell_s: float,
             stop_N: float, plant) -> servo_zero.ServoZeroData:
    goal = slack.copy()

    def go(x: float, wait_s: float) -> None:
        goal[i] = slack[i] + x
        probe.command(goal)
        probe.wait(wait_s)

    x = 0.0
    while x < 2 * slack_m and probe.tendon_force_N()[i] < 0.05:  # coarse: roughly where it takes up force
        x += 0.001
        go(x, 0.05)
    if x >= 2 * slack_m:
        raise CalibrationError("servo-zero", f"no force after reeling in {x * 1e3:.0f} mm: is the tendon attached "
                                             "and its SEA's pot read?", f"tendon {TENDONS[i]}")
    x -= 0.005  # may let it out past the slack start: an EM tendon keeps some force through the EM
    go(x, 0.3)
    xs, fs, truth = [], [], []
    while x < 2 * slack_m:
        go(x, dwell_s)
        fs.append(float(probe.tendon_force_N()[i]))
        xs.append(float(probe.read().excursion_m[i]))
        truth.append(float(plant.state()[12 + i]) if plant is not None else np.nan)  # truth column only
        if fs[-1] > stop_N:
            break
        x += step_m
    return servo_zero.ServoZeroData(TENDONS[i], np.array(xs), np.array(fs), np.array(truth))


# ------------------------------------------------------------------ mocap
def run_mocap(rig: RigLike, pose: str = "Flex", jig_deg: tuple[float, ...] | None = None, duration_s: float = 3.0,
              params: FingerParams | None = None, say=None) -> Result:
    """Frames of the labelled markers from the NatNet stream with the finger in the jig (``jig_deg``, the
    pose's nominal angles by default). A twin rig places its finger in ``pose`` itself; at a real rig a
    person has put it in the jig before this runs."""
    q = np.radians(np.asarray(jig_deg if jig_deg is not None else POSES_DEG[pose], float))
    if q.shape != (4,):
        raise CalibrationError("mocap", f"the jig's angles need 4 values (MCP_AB MCP_FE PIP DIP), got {q.size}")
    finger = Finger(params or FingerParams.uart())
    from uartlab.sim.ik import default_markers

    by_name = {m.name: m for m in default_markers(finger)}
    names = list(rig.marker_names)
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise CalibrationError("mocap", f"Motive streams marker(s) the finger's marker set does not have: "
                                        f"{', '.join(unknown)}", f"marker set {rig.config.mocap.marker_set!r}")
    nominal = tuple(by_name[n] for n in names)
    streams = (ACTUATORS.stream, DAQ.stream, MOCAP.stream)
    with RigProbe(rig, say) as probe, probe.procedure("mocap", moves=False, streams=streams):
        if rig.places_finger_itself:
            rig.place_finger(pose, None)
            probe.wait(1.0)
        frames = probe.fresh(MOCAP.stream, (MOCAP.markers_m,), duration_s)[MOCAP.markers_m]
    moved_m = np.nanmax(np.ptp(frames, axis=0)) if np.isfinite(frames).any() else 0.0
    if moved_m > MAX_JIG_MOTION_M:  # the offsets follow from the jig's angles: a finger that moves spoils them
        raise CalibrationError("mocap", f"a marker moved {moved_m * 1e3:.1f} mm during the recording: is the finger "
                                        "held in the jig?")
    result = mocap.fit_mocap(finger, nominal, frames, q)
    M, o = result.motive_from_world
    lines = [f"base frame: origin {np.round(o * 1e3, 2).tolist()} mm",
             "base marker residuals [mm]: " + " ".join(f"{r * 1e3:.3f}" for r in result.base_residuals_m)]
    plant = rig.twin_plant
    if plant is not None:
        angle = np.degrees(np.arccos(np.clip((np.trace(M.T @ plant.config.motive_from_world) - 1) / 2, -1, 1)))
        true_mm = np.round(np.array(plant.config.motive_origin_m) * 1e3, 2).tolist()
        lines[0] += f" (true {true_mm}), rotation off by {angle:.3f} deg"
    values, residuals = mocap.record_values(result)
    method = f"{_where(rig)}: {frames.shape[0]} NatNet frames in the {np.degrees(q).round(1).tolist()} deg jig pose"
    return values, residuals, method, lines


# ------------------------------------------------------------------ moment arms
def run_moment_arms(rig: RigLike, order: tuple[str, ...] = TENDONS * 2, amplitude_m: float = 0.015, ramp_s: float = 4.0,
                    spring_stiffness_N_per_m: np.ndarray | None = None, start_pose: str | None = "Flex",
                    say=None, on_progress=None, form: str = "polynomial") -> Result:
    """ACT sweeps: each tendon in ``order`` reeled in by ``amplitude_m`` over ``ramp_s`` (raised cosine) and
    let out again through its servo, the others holding; joint angles from the rig's joints stream (mocap
    IK), excursion from the servos, force from the SEAs; path = excursion - F/k, with k the SEA springs'
    rated stiffness (``spring_stiffness_N_per_m``, default the model's nominal). ``form``: polynomials or
    tables (calibration/moment_arms.py)."""
    if not rig.has_joint_angles:
        raise CalibrationError("moment-arms", "the rig has no joint angles: calibrate the mocap first")
    nominal = FingerParams.uart()
    k = np.asarray(nominal.input_stiffness_N_per_m if spring_stiffness_N_per_m is None
                   else spring_stiffness_N_per_m, float)
    if k.shape != (6,) or not np.all(k > 0):
        raise CalibrationError("moment-arms", f"spring stiffness needs six positive values (N/m), got {k.tolist()}")
    with RigProbe(rig, say) as probe:
        if start_pose and rig.places_finger_itself:
            rig.place_finger(start_pose, None)
        with probe.procedure("moment-arms", streams=(ACTUATORS.stream, DAQ.stream, MOCAP.stream, JOINTS_IK.stream)):
            probe.wait(1.0)
            with probe.tape() as tape:
                for done, name in enumerate(order, 1):
                    _sweep(probe, tendon_index(name), amplitude_m, ramp_s)
                    if on_progress is not None:
                        on_progress(done, len(order))
    theta, excursion, force = _resample_on_angles(tape, *_joint_angles(tape))
    paths = excursion - force / k
    plant = rig.twin_plant
    fits, lines = moment_arms.fit_tendons(order, theta, paths, force, nominal, form,
                                          truth=plant.params if plant is not None else None)
    values, residuals = moment_arms.record_values(fits)
    method = (f"{_where(rig)}: ACT, raised-cosine pulls through the servos ({' '.join(order)}), angles from the "
              f"mocap joints stream, path = excursion - F/k (k {np.round(k * 1e-3, 3).tolist()} N/mm), as {form}s")
    return values, residuals, method, lines


def _sweep(probe: RigProbe, i: int, amplitude_m: float, ramp_s: float, command_period_s: float = 0.02) -> None:
    """One raised-cosine pull of tendon i and back, goals sent every ``command_period_s`` of host time."""
    goal = probe.goal_m.copy()
    base = goal[i]
    t0 = time.monotonic()
    while True:
        t = (time.monotonic() - t0) * probe.time_scale
        if t >= 2 * ramp_s:
            break
        phase = t / ramp_s if t < ramp_s else 2 - t / ramp_s
        goal[i] = base + amplitude_m * 0.5 * (1 - np.cos(np.pi * phase))
        probe.command(goal)
        probe.wait(command_period_s * probe.time_scale)
    goal[i] = base
    probe.command(goal)
    probe.wait(0.3)


def _joint_angles(tape) -> tuple[np.ndarray, np.ndarray]:
    """(host times (n,), joint angles (n, 4)) of the well-posed solves of the rig's joints stream on the
    tape, timed as the stream times them (the frame's arrival). Timing them by Motive's timestamp through
    the rig's clock sync instead was tried and made the path residuals worse on a twin at 2x and 4x."""
    tq, theta = tape.field(JOINTS_IK.stream, JOINTS_IK.angles_rad)
    _, good = tape.field(JOINTS_IK.stream, JOINTS_IK.well_posed)
    if tq.size == 0:
        raise CalibrationError("moment-arms", "no joint angles came during the sweeps: is the mocap tracking?")
    keep = good.astype(bool) & np.all(np.isfinite(theta), axis=1)
    return tq[keep], theta[keep]


def _resample_on_angles(tape, tq: np.ndarray, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The joint angles (n, 4) with the servo excursions and SEA forces (n, 6) interpolated to their times
    (forces averaged over 10 ms first), where all three streams cover them."""
    te, excursion = tape.field(ACTUATORS.stream, ACTUATORS.excursion_m)
    tf, force = tape.field(DAQ.stream, DAQ.tendon_force_N)
    if te.size == 0 or tf.size == 0:
        missing = [s for s, n in ((ACTUATORS.stream, te.size), (DAQ.stream, tf.size)) if n == 0]
        raise CalibrationError("moment-arms", f"no {', '.join(missing)} data during the sweeps")
    keep = (tq >= max(te[0], tf[0])) & (tq <= min(te[-1], tf[-1]))
    tq, theta = tq[keep], theta[keep]
    width = max(1, int(round(0.010 / max(np.median(np.diff(tf)), 1e-6)))) if tf.size > 1 else 1
    kernel = np.ones(width) / width
    smooth = np.stack([np.convolve(force[:, s], kernel, mode="same") for s in range(6)], axis=1)
    E = np.stack([np.interp(tq, te, excursion[:, s]) for s in range(6)], axis=1)
    F = np.stack([np.interp(tq, tf, smooth[:, s]) for s in range(6)], axis=1)
    return theta, E, F
