"""The physics plant behind every twin: the finger model, six SEAs, the surface, the sensors.

One ``Plant`` holds the "true" rig. The twins (bus, DAQ, mocap) only read and command it, through
the thread-safe methods below, in the units the devices themselves would see (servo angles in rad,
analog inputs in volts, marker positions in metres). The plant advances in fixed ticks of model time;
``PlantClock`` drives it in real time (or N x faster); tests call ``advance`` directly.

Each SEA (paper, Actuation and Sensing): the MX-64 in position control turns a spool of radius
``spool_radius_m`` through a torsion spring; its tendon excursion is spool_radius x servo angle. The
model's input-tendon spring *is* the SEA spring (paper Table 3: k_t,IN = 0.3 N/mm at the tendon), so
the spring's angular deflection is F / (k_t,IN r^2) and the pot across it reads that angle.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import numpy as np
from uartlab.drivers.twins import realtime
from uartlab.drivers.twins.nano17 import Nano17Model
from uartlab.sim import Finger, FingerParams
from uartlab.sim.ik import default_markers, marker_positions
from uartlab.sim.names import TENDONS
from uartlab.sim.scenarios import MIN_PRETENSION_N, start_state
from uartlab.sim.surface import sensor_force_from_fingertip

# Hardware Error Status bits (MX-64 Protocol 2.0, address 70).
HW_INPUT_VOLTAGE, HW_OVERHEATING, HW_ENCODER, HW_ELECTRICAL_SHOCK, HW_OVERLOAD = 0x01, 0x04, 0x08, 0x10, 0x20
MX64_MAX_SPEED_RAD_S = 63 * 2 * np.pi / 60  # no-load speed at 12 V (e-manual): "unlimited" profile velocity
MX64_TORQUE_CONSTANT_NM_PER_A = 6.0 / 4.1   # stall torque / stall current at 12 V (e-manual)
# est.: an unpowered MX-64 (200:1 metal gears) holds about 0.5 N·m before it can be backdriven, so a
# torque-off servo keeps a pretensioned tendon taut; only a larger spring torque unwinds it.
BACKDRIVE_TORQUE_NM = 0.5
DAQ_RANGE_V = 10.0
DAQ_BITS = 16


@dataclass
class SeaConfig:
    """One series elastic actuator as built (defaults are estimates for the UART SEAs)."""

    spool_radius_m: float = 0.020       # est.: keeps 10 N within about 100 deg of spring wind-up
    pot_volts_per_rad: float = 5.0 / np.radians(340.0)  # est.: 5 V across a 340 deg single-turn pot
    pot_zero_V: float = 1.0             # est.: wiper reading at zero spring deflection
    force_limit_N: float = 40.0         # est.: above this the twin reports overload (Spectra line ~220 N)


@dataclass
class PlantConfig:
    pose: str = "Flex"                  # start pose (paper Fig. 12)
    pretension_N: float = MIN_PRETENSION_N
    surface_angle_deg: float | None = None  # None: free motion (no surface)
    surface_deflection_m: float = 0.5e-3
    perturbation: float = 0.0           # relative spread of the "true" parameters around the defaults
    seed: int = 0
    tick_s: float = 0.001               # plant update period
    pot_noise_V: float = 0.5e-3         # est.: a few LSB of the 6210 on +-10 V
    gauge_noise_V: float = 1.0e-3
    marker_noise_m: float = 0.2e-3      # est.: Flex V100:R2 at ~1 m
    marker_dropout: float = 0.0         # probability a marker is missing in a frame
    mocap_rate_hz: float = 100.0        # Flex V100:R2 cameras (paper)
    motive_from_world: np.ndarray = field(default_factory=lambda: np.array(  # Motive is Y-up
        [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]]))
    motive_origin_m: tuple[float, float, float] = (0.0, 0.25, 0.0)  # est.: finger 25 cm above the floor
    seas: list[SeaConfig] = field(default_factory=lambda: [SeaConfig() for _ in TENDONS])


@dataclass
class ServoState:
    angle_rad: float
    velocity_rad_s: float
    torque_Nm: float
    moving: bool
    temperature_C: float
    voltage_V: float
    hardware_error: int
    torque_enabled: bool

    @property
    def current_A(self) -> float:
        return self.torque_Nm / MX64_TORQUE_CONSTANT_NM_PER_A


@dataclass
class _Servo:
    """Position control with a trapezoidal profile (profile velocity/acceleration), as the MX-64 does."""

    angle: float = 0.0
    velocity: float = 0.0
    goal: float = 0.0
    max_velocity: float = 0.0  # 0 = unlimited
    max_accel: float = 0.0     # 0 = unlimited
    torque_on: bool = False
    hardware_error: int = 0
    temperature_C: float = 34.0

    def step(self, dt: float, backdrive_velocity: float) -> float:
        """Advance dt; returns the spool angle change. With torque off the gears hold unless the spring
        backdrives it (``backdrive_velocity``, 0 when the spring torque is below the gears' holding torque)."""
        if not self.torque_on:
            self.velocity = backdrive_velocity
            self.angle += self.velocity * dt
            self.goal = self.angle
            return self.velocity * dt
        vmax = self.max_velocity or MX64_MAX_SPEED_RAD_S
        error = self.goal - self.angle
        if self.max_accel > 0:
            # Brake in time: the speed that still stops at the goal with the profile deceleration.
            v_stop = np.sqrt(2 * self.max_accel * abs(error))
            target = np.sign(error) * min(vmax, v_stop)
            dv = np.clip(target - self.velocity, -self.max_accel * dt, self.max_accel * dt)
            self.velocity += dv
        else:
            self.velocity = np.sign(error) * min(vmax, abs(error) / dt)
        move = self.velocity * dt
        if abs(move) >= abs(error):
            move, self.velocity = error, 0.0
        self.angle += move
        return move


class Plant:
    """The simulated rig: finger, SEAs, surface, sensors. All public methods are thread-safe."""

    def __init__(self, config: PlantConfig | None = None, params: FingerParams | None = None):
        self.config = config or PlantConfig()
        base = params or FingerParams.uart()
        self.params = base.perturbed(self.config.perturbation, self.config.seed) if self.config.perturbation else base
        self.finger = Finger(self.params)
        self.lock = threading.RLock()
        self.rng = np.random.default_rng(self.config.seed)
        self.markers = default_markers(self.finger)
        self.nano17 = Nano17Model()
        self.time_s = 0.0
        self.servos = [_Servo() for _ in TENDONS]
        self._overheat = [False] * 6
        self._build_start()

    # ------------------------------------------------------------ set-up
    def _build_start(self) -> None:
        cfg = self.config
        x0, self.surface = start_state(self.finger, cfg.pose, cfg.surface_angle_deg, cfg.surface_deflection_m,
                                       cfg.pretension_N)
        self.stepper = self.finger.stepper(x0, self.surface, max_substep_s=cfg.tick_s)
        # The first step compiles (or loads from numba's cache) the stepper's kernels: seconds on a fresh
        # install. Done now on a throwaway stepper, not in the clock's first tick under the lock, where the
        # bus twin would wait on it and the driver's pings time out.
        self.finger.stepper(x0, self.surface, max_substep_s=cfg.tick_s).step(cfg.tick_s, np.zeros(6))

    def place(self, pose: str, surface_angle_deg: float | None) -> None:
        """What the operator does between trials of another set-up: the finger placed in ``pose`` (on the
        surface at that angle, or free), at rest with the pretension; the servos stay where they are."""
        cfg = self.config
        # The start-state solve takes a while: do it outside the lock, so the bus, DAQ and mocap twins keep
        # answering from the old state meanwhile, as a real rig would while someone moves the finger.
        x0, surface = start_state(self.finger, pose, surface_angle_deg, cfg.surface_deflection_m, cfg.pretension_N)
        stepper = self.finger.stepper(x0, surface, max_substep_s=cfg.tick_s)
        with self.lock:
            cfg.pose, cfg.surface_angle_deg = pose, surface_angle_deg
            self.stepper, self.surface = stepper, surface

    # ------------------------------------------------------------ time
    def advance(self, dt: float) -> None:
        """Advance the plant by dt seconds of model time (in ticks of config.tick_s)."""
        n = max(1, int(round(dt / self.config.tick_s)))
        h = dt / n
        for _ in range(n):
            with self.lock:
                self._tick(h)

    def _tick(self, h: float) -> None:
        rates = np.zeros(6)
        forces = self.stepper.x[12:18]
        k = self.params.input_stiffness_N_per_m
        for i, (servo, sea) in enumerate(zip(self.servos, self.config.seas, strict=True)):
            # Torque off and the spring torque beyond what the gears hold: the spring unwinds the servo,
            # relaxing the excess within ~50 ms.
            excess_N = forces[i] - BACKDRIVE_TORQUE_NM / sea.spool_radius_m
            backdrive = -excess_N / (k[i] * sea.spool_radius_m * 0.05) if excess_N > 0 else 0.0
            rates[i] = servo.step(h, backdrive) * sea.spool_radius_m / h
        self.stepper.step(h, rates)
        self.time_s += h
        self._check_faults()

    def _check_faults(self) -> None:
        forces = self.stepper.x[12:18]
        for i, servo in enumerate(self.servos):
            if servo.torque_on and forces[i] > self.config.seas[i].force_limit_N:
                self._shutdown(i, HW_OVERLOAD)
            if self._overheat[i]:
                servo.temperature_C = 85.0
                if servo.torque_on:
                    self._shutdown(i, HW_OVERHEATING)

    def _shutdown(self, i: int, bit: int) -> None:
        servo = self.servos[i]
        servo.hardware_error |= bit
        servo.torque_on = False  # the MX-64's Shutdown default (0x34) covers overload and overheating

    # ------------------------------------------------------------ servo side (bus twin)
    def servo_state(self, i: int) -> ServoState:
        with self.lock:
            s = self.servos[i]
            torque = float(self.stepper.x[12 + i]) * self.config.seas[i].spool_radius_m
            return ServoState(s.angle, s.velocity, torque, s.velocity != 0.0 or s.angle != s.goal,
                              s.temperature_C, 12.0, s.hardware_error, s.torque_on)

    def set_goal_angle(self, i: int, angle_rad: float) -> None:
        with self.lock:
            self.servos[i].goal = float(angle_rad)

    def set_torque(self, i: int, on: bool) -> None:
        with self.lock:
            servo = self.servos[i]
            if on and servo.hardware_error:
                return  # a shut-down servo ignores torque-on until rebooted
            if on and not servo.torque_on:
                servo.goal = servo.angle  # holds where it is, as the real servo does
                servo.velocity = 0.0
            servo.torque_on = bool(on)

    def set_profile(self, i: int, max_velocity_rad_s: float, max_accel_rad_s2: float) -> None:
        with self.lock:
            self.servos[i].max_velocity = max(0.0, float(max_velocity_rad_s))
            self.servos[i].max_accel = max(0.0, float(max_accel_rad_s2))

    def reboot(self, i: int) -> None:
        with self.lock:
            servo = self.servos[i]
            servo.hardware_error = 0
            servo.torque_on = False
            self._overheat[i] = False
            servo.temperature_C = 34.0

    def inject_overload(self, i: int) -> None:
        """Fault injection: servo i shuts down with the Overload bit, as past its torque limit."""
        with self.lock:
            self._shutdown(i, HW_OVERLOAD)

    def inject_overheat(self, i: int) -> None:
        with self.lock:
            self._overheat[i] = True

    # ------------------------------------------------------------ DAQ side
    def spring_deflection_rad(self) -> np.ndarray:
        with self.lock:
            F = self.stepper.x[12:18].copy()
        k = self.params.input_stiffness_N_per_m
        r = np.array([s.spool_radius_m for s in self.config.seas])
        return F / (k * r)  # the spring's stretch at the tendon (F / k) over the spool radius

    def analog_inputs(self) -> np.ndarray:
        """The 16 AI voltages now (see ``analog_block``)."""
        return self.analog_block(1)[0]

    def analog_block(self, n: int) -> np.ndarray:
        """(n, 16) AI voltages at the present state with fresh noise per sample, quantised to the 6210's
        16 bits on +-10 V. Wiring: pots on ai0-5 (RSE), the pots' +5 V reference on ai6 (for ratiometric
        correction), Nano17 gauges on ai8-13 (NRSE); ai7 and ai14-15 unconnected (0 V)."""
        clean = np.zeros(16)
        deflection = self.spring_deflection_rad()
        for i, sea in enumerate(self.config.seas):
            clean[i] = sea.pot_zero_V + sea.pot_volts_per_rad * deflection[i]
        clean[6] = 5.0
        clean[8:14] = self.nano17.gauge_volts(self.sensor_wrench())
        noise = np.zeros((n, 16))
        noise[:, :7] = self.rng.normal(0.0, self.config.pot_noise_V, (n, 7))
        noise[:, 8:14] = self.rng.normal(0.0, self.config.gauge_noise_V, (n, 6))
        lsb = 2 * DAQ_RANGE_V / 2**DAQ_BITS
        return np.clip(np.round((clean + noise) / lsb) * lsb, -DAQ_RANGE_V, DAQ_RANGE_V - lsb)

    def sensor_wrench(self) -> np.ndarray:
        """Force (N) and torque (N·mm) the finger applies to the Nano17 under the surface, in the sensor
        frame (= surface frame s_x, s_y, n, origin at the surface point). Zero without contact."""
        with self.lock:
            if self.surface is None:
                return np.zeros(6)
            x, aux = self.stepper.x.copy(), self.stepper.aux.copy()
        force_on_tip = self.finger.contact_forces(x, aux, self.surface)[0]
        if not force_on_tip.any():
            return np.zeros(6)
        frame = self.surface.frame
        on_sensor = sensor_force_from_fingertip(force_on_tip, self.surface.angle_deg)
        contact_point = aux[1:] if aux[0] > 0 else self.finger.interaction_point(x[8:12])
        lever_mm = 1e3 * frame.T @ (contact_point - np.asarray(self.surface.point_m))
        return np.concatenate([on_sensor, np.cross(lever_mm, on_sensor)])

    # ------------------------------------------------------------ mocap side
    def state(self) -> np.ndarray:
        with self.lock:
            return self.stepper.x.copy()

    def mocap_markers(self) -> np.ndarray:
        """(n, 3) labelled marker positions in Motive's frame (m), NaN where a marker is occluded."""
        q = self.state()[8:12]
        world = marker_positions(self.finger, q, self.markers)
        world = world + self.rng.normal(0.0, self.config.marker_noise_m, world.shape)
        pts = self.to_motive(world)
        if self.config.marker_dropout:
            pts[self.rng.random(len(pts)) < self.config.marker_dropout] = np.nan
        return pts

    def bone_poses(self) -> list[tuple[str, np.ndarray, np.ndarray]]:
        """(name, position m, rotation 3x3) in Motive's frame for metacarpal, proximal, middle, distal.

        A bone's rigid body sits at its proximal joint with the bone's D-H axes (x along the bone).
        """
        R, o = self.finger.frames(self.state()[8:12])
        M = self.config.motive_from_world
        bodies = [("metacarpal", o[0], R[0])]
        for name, link in (("proximal", 2), ("middle", 3), ("distal", 4)):
            bodies.append((name, o[link - 1], R[link]))
        return [(n, self.to_motive(p[None])[0], M @ rot) for n, p, rot in bodies]

    def to_motive(self, world_m: np.ndarray) -> np.ndarray:
        return world_m @ self.config.motive_from_world.T + np.asarray(self.config.motive_origin_m)


class PlantClock:
    """Runs a plant in its own thread, in real time x ``speed``. Stops on ``stop()``.

    It wakes every ``period_s`` and advances the plant in its 1 ms ticks: 5 ms is the servos' read period
    and the DAQ twin's block, so no reader sees a staler state, at a fifth of the wakes of one per tick."""

    def __init__(self, plant: Plant, speed: float = 1.0, period_s: float = 0.005):
        if speed <= 0:
            raise ValueError(f"speed must be > 0, got {speed}")
        self.plant, self.speed, self.period_s = plant, speed, period_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="plant-clock", daemon=True)
        self.lag_s = 0.0  # how far model time has fallen behind the wall clock (x speed)

    def start(self) -> PlantClock:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        realtime.ask_for_realtime(realtime.PLANT_PRIORITY)  # where allowed: see drivers/twins/realtime.py
        start_wall, start_model = time.monotonic(), self.plant.time_s
        while not self._stop.is_set():
            target = start_model + (time.monotonic() - start_wall) * self.speed
            behind = target - self.plant.time_s
            if behind > 0:
                self.plant.advance(min(behind, 0.05))  # catch up in bounded chunks
            self.lag_s = max(0.0, target - self.plant.time_s)
            self._stop.wait(self.period_s)
