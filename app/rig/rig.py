"""The rig at run time: drivers built from a RigConfig, one thread per device stream, all into one Hub.

    with Rig(default_rig_config()) as rig:          # twin backends: `uartlab twin up` on free ports, real drivers on it
        sub = rig.hub.subscribe("me", {"daq"})
        rig.actuators.command(x)                    # the driver (locked: the stream thread reads it too)
        rig.health(); rig.clock_sync()

Each device is built by its backend's factory from the tables in app/rig/backends.py and held by its
family's interface (drivers/interfaces.py: Actuators, AnalogInput, Mocap). Twin backends are served by a
twin rig in its own process (app/rig/twin_process.py), as hardware would be; ``Rig(config, twin="in_process")``
runs it in this interpreter instead (backends.TWIN_RIG's keys).

What the engine, the recording session, the procedures and the GUI may use of it is ``RigLike``
(app/run/rig_like.py); the drivers themselves (``rig.nano17``, ``rig.mocap`` ...) are the rig's own.

Streams ("actuators", "daq", "mocap") are declared once in uartlab.schema (``*_spec``) with units. Every sample
carries the host monotonic time and the device's own clock (Realtime Tick, DAQ sample index, Motive
timestamp). A device thread that dies publishes a "fault" Event naming the device and the exception and
ends; the other threads go on, and ``health()`` says which device failed.

Each stream thread feeds its device's (device clock, host arrival) pairs to a ``ClockSync``
(app/rig/clock_sync.py, which says how offset and drift are estimated); the DAQ's per-sample host times
come from that mapping. Every 5 s each estimate is published as a "clock" Event, and ``clock_sync()``
hands them to the recording session for the file. The MX-64 bus is one ``LockedActuators``: the
actuators thread reads it while the engine (app/run/engine.py) commands it. The joints stream (mocap IK)
is app/rig/joint_stream.py; what comes from rig.toml and the calibration store is app/rig/calibrations.py.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import deque
from typing import TYPE_CHECKING, TypeVar

import numpy as np
from uartlab.app.rig import backends
from uartlab.app.rig.calibrations import RigCalibrations
from uartlab.app.rig.clock_sync import ClockEstimate, ClockSync, TickUnwrap  # noqa: F401 - re-exported
from uartlab.app.rig.config import ConfigError, RigConfig
from uartlab.app.rig.joint_stream import DEFAULT_MAX_RATE_HZ as DEFAULT_IK_RATE_HZ
from uartlab.app.rig.joint_stream import JointStream
from uartlab.app.rig.locked_actuators import LockedActuators
from uartlab.app.run.rig_like import DeviceHealth  # noqa: F401 - re-exported for the rig's users
from uartlab.drivers.interfaces import Actuators, ActuatorSample, AnalogInput, Mocap
from uartlab.drivers.joint_angles import JointAngleEstimator
from uartlab.drivers.mx64_link import ServoError
from uartlab.drivers.sensors import Nano17, SeaForces
from uartlab.errors import DeviceError
from uartlab.hub import Hub
from uartlab.pacing import FixedRate
from uartlab.schema import (  # noqa: F401 - the *_spec re-exported for the rig's users
    NANO17_TARED,
    SIX,
    actuators_spec,
    daq_spec,
    joints_spec,
    mocap_spec,
    model_spec,
    runner_spec,
)
from uartlab.sim import FingerParams
from uartlab.streams import EventKind, Record

if TYPE_CHECKING:
    from uartlab.app.rig.backends import Plant, TwinRig
    from uartlab.app.rig.twin_process import TwinPlant, TwinProcess
    from uartlab.app.run.engine import Engine
    from uartlab.app.run.procedure import ProcedureRun

log = logging.getLogger(__name__)

_Device = TypeVar("_Device")
TWIN_EXIT_WAIT_S = 0.2   # a killed twin's connections close a moment before its exit can be read


def _opened(device: _Device | None, name: str) -> _Device:
    """The device a stream thread or the twin's setup relies on; a clear error if the rig never opened it."""
    if device is None:
        raise DeviceError(f"rig: the {name} is not open (the rig has not started)")
    return device


# ------------------------------------------------------------------ device streams
class _Stream:
    """A device thread's bookkeeping: state, counts, recent arrival times (for the rate), its clock sync."""

    def __init__(self, rig: Rig, name: str, device: str, loop):
        self.rig, self.name, self.device, self.loop = rig, name, device, loop
        self.sync = ClockSync(name, rate=rig.time_scale)  # a twin's device clocks keep plant time
        self.state, self.samples, self.errors, self.last_error = "starting", 0, 0, ""
        self.last_host_s = -math.inf
        self._recent: deque[tuple[float, int]] = deque()
        self._next_sync_event_s = time.monotonic() + 5.0
        self.thread = threading.Thread(target=self._run, name=f"rig-{name}", daemon=True)

    def publish(self, record: Record, device_s: float | None, arrival_s: float) -> None:
        self.rig.hub.publish(record)
        self.state, self.samples, self.last_host_s = "streaming", self.samples + len(record), arrival_s
        self._recent.append((arrival_s, len(record)))
        while self._recent and self._recent[0][0] < arrival_s - 1.0:
            self._recent.popleft()
        if device_s is not None and math.isfinite(device_s):
            self.sync.observe(device_s, arrival_s)
        if arrival_s >= self._next_sync_event_s:  # every 5 s: few enough for the events table
            self._next_sync_event_s = arrival_s + 5.0
            e = self.sync.estimate()
            self.rig.hub.event(EventKind.CLOCK, self.name, f"{self.device}: host - device = {e.offset_s:.6f} s, drift "
                                       f"{e.drift_ppm:+.1f} ppm over {e.span_s:.0f} s ({e.points} envelope points)")

    def _run(self) -> None:
        try:
            self.loop(self)
            self.state = "stopped"
        except Exception as exc:  # any failure ends this device only; the others keep streaming
            error = f"{type(exc).__name__}: {exc}{self.rig.twin_ended()}"
            self.state, self.errors, self.last_error = "failed", self.errors + 1, error
            log.warning("%s stream failed: %s", self.name, self.last_error)
            if not self.rig._stopping.is_set():
                self.rig.hub.event(EventKind.FAULT, self.name, f"{self.device} stream stopped: {self.last_error}")

    def health(self, now_s: float) -> DeviceHealth:
        recent = [n for t, n in list(self._recent) if t >= now_s - 1.0]
        return DeviceHealth(self.device, self.state, float(sum(recent)), self.samples, self.errors,
                            self.last_error, now_s - self.last_host_s)


# ------------------------------------------------------------------ the rig
class Rig:
    """The live rig; satisfies ``RigLike`` (app/run/rig_like.py), which is all its users may use of it."""

    def __init__(self, config: RigConfig, hub: Hub | None = None, twin: str = "process"):
        if twin not in backends.TWIN_RIG:
            raise ValueError(f"Rig(twin={twin!r}): one of {', '.join(backends.TWIN_RIG)}")
        self.config, self.hub, self.twin_host = config, hub or Hub(), twin
        self._twin: TwinProcess | TwinRig | None = None
        self.engine: Engine | None = None   # the one control loop moving the servos now (the engine sets it)
        self.actuators: Actuators | None = None     # a LockedActuators: several threads share the bus
        self.daq: AnalogInput | None = None
        self.mocap: Mocap | None = None
        self.sea_forces: SeaForces | None = None
        self.nano17: Nano17 | None = None
        self._streams: dict[str, _Stream] = {}
        self.joints: JointStream | None = None
        self._stopping = threading.Event()
        self._tare_requested = threading.Event()
        self.calibrations = RigCalibrations(config)

    # ------------------------------------------------------------ life cycle
    def start(self) -> Rig:
        """Start the twin (if any backend is one), connect every device, then start one thread per stream."""
        try:
            if backends.any_on_twin(self.config):
                self._twin = backends.TWIN_RIG[self.twin_host].load()(self.config)
            self._open_devices()
            for stream in self._streams.values():
                stream.thread.start()
            if self.joints is not None:
                self.joints.start()
        except BaseException:
            self.stop()
            raise
        started = f"rig started from {self.config.source}: " + ", ".join(f"{s.device}" for s in self._streams.values())
        self.hub.event(EventKind.DEVICE, "rig", started)
        log.info("%s", started)  # the event reaches no session yet (none has subscribed): the log has it
        return self

    def _open_devices(self) -> None:
        a, d = self.config.actuators, self.config.daq
        twin = self._twin
        bus = backends.open_device("actuators", self.config, twin, self.time_scale)
        bus.connect()
        self.actuators = LockedActuators(bus)
        self._streams["actuators"] = _Stream(self, "actuators", "MX-64 bus", self._actuator_loop)
        self.hub.register(actuators_spec(a.poll_rate_hz))

        self.sea_forces = SeaForces(self.calibrations.sea(twin.plant if twin is not None else None))
        self.nano17 = Nano17(self.calibrations.ft()) if d.gauges else None
        daq: AnalogInput = backends.open_device("daq", self.config, twin, self.time_scale)
        self.daq = daq
        daq.start()
        self._streams["daq"] = _Stream(self, "daq", daq.name, self._daq_loop)
        self.hub.register(daq_spec(d.rate_hz))

        mocap: Mocap = backends.open_device("mocap", self.config, twin, self.time_scale)
        self.mocap = mocap
        mocap.connect()
        self._streams["mocap"] = _Stream(self, "mocap", "OptiTrack", self._mocap_loop)
        self.hub.register(mocap_spec(mocap.marker_names, mocap.rate_hz))
        self.hub.register(joints_spec(min(mocap.rate_hz or DEFAULT_IK_RATE_HZ, DEFAULT_IK_RATE_HZ)))
        estimator = self.joint_estimator()
        if estimator is not None:
            self.joints = JointStream(self.hub, estimator)
        # Streams of the experiment that runs on this rig: declared now so any recording started before
        # the experiment has their datasets (SWMR files cannot add them later).
        self.hub.register(runner_spec())
        self.hub.register(model_spec())

    def joint_estimator(self) -> JointAngleEstimator | None:
        """Markers -> joint angles: the twin knows its mounting; a real rig takes the store's current mocap
        calibration (base frame, marker offsets per bone); without one there are no joint angles (None)."""
        if backends.backend_of(self.config, "mocap").on_twin:
            plant = self._twin_plant_opened()
            return JointAngleEstimator.from_mounting(plant.finger, plant.markers, plant.config.motive_from_world,
                                                     plant.config.motive_origin_m)
        return self.calibrations.mocap_estimator(_opened(self.mocap, "mocap").marker_names)

    def calibration_status(self) -> tuple[list[str], list[str]]:
        """(missing, stale): one sentence each about the calibrations a run relies on (RigCalibrations)."""
        return self.calibrations.status(uses_nano17=self.nano17 is not None)

    def model_params(self, base: FingerParams | None = None) -> tuple[FingerParams, list[str]]:
        """The model's parameters with this rig's stored moment arms and model values (RigCalibrations)."""
        return self.calibrations.model_params(base)

    @property
    def time_scale(self) -> float:
        """Protocol seconds per host second: the twin's speed on an all-twin rig, 1 wherever hardware is."""
        speed, all_twin = self.config.twin.speed, backends.all_on_twin(self.config)
        if speed != 1.0 and not all_twin:
            raise ConfigError(f"{self.config.source}: twin.speed = {speed:g} needs every device on the twin "
                              "(real hardware runs at 1x)")
        return speed if all_twin else 1.0

    @property
    def has_nano17(self) -> bool:
        return self.nano17 is not None

    @property
    def has_sea_forces(self) -> bool:
        return self.sea_forces is not None

    @property
    def has_joint_angles(self) -> bool:
        return self.joints is not None

    @property
    def marker_names(self) -> tuple[str, ...]:
        return () if self.mocap is None else tuple(self.mocap.marker_names)

    def nano17_saturated(self, gauge_V: np.ndarray) -> np.ndarray:
        """Gauge readings at an output rail, by the Nano17's ATI calibration (all False without a Nano17)."""
        gauge_V = np.asarray(gauge_V, dtype=float)
        return np.zeros(gauge_V.shape, dtype=bool) if self.nano17 is None else self.nano17.cal.saturated(gauge_V)

    def stream_age_limits_s(self) -> dict[str, float]:
        """rig.toml [interlocks] stream ages, for the streams this rig has (no joints without a mocap
        calibration)."""
        ages = dict(self.config.interlocks.max_stream_age_s)
        if self.joints is None:
            ages.pop("joints", None)
        return ages

    @property
    def twin_plant(self) -> TwinPlant | Plant | None:
        """The twin's physics plant (None on hardware): its true values, for a calibration's truth column
        and tests; never a source of measurements."""
        return None if self._twin is None else self._twin.plant

    @property
    def twin_control(self) -> str | None:
        """The twin process's control endpoint (app/rig/twin_control.py: its truth, its fault injections), for
        clients of a rig core to reach; None on hardware or with the twin in this process."""
        endpoints = getattr(self._twin, "endpoints", None)   # a TwinProcess's dict; a TwinRig's is a method
        return endpoints.get("control") if isinstance(endpoints, dict) else None

    def twin_ended(self) -> str:
        """" (the twin process ... was killed by SIGKILL)" once a twin process has ended, else "": what a
        device's failure on a twin rig comes down to, said with it."""
        ended = getattr(self._twin, "ended", None)   # a TwinProcess; an in-process TwinRig ends with us
        said = ended(wait_s=TWIN_EXIT_WAIT_S) if ended is not None and not self._stopping.is_set() else None
        return f" ({said})" if said else ""

    def _twin_plant_opened(self) -> TwinPlant | Plant:
        plant = self.twin_plant
        if plant is None:
            raise DeviceError("rig: the twin rig is not running (the rig has not started)")
        return plant

    @property
    def places_finger_itself(self) -> bool:
        """The twin's finger is set up by software; a real one by a person."""
        return self._twin is not None and backends.backend_of(self.config, "mocap").on_twin

    def place_finger(self, pose: str, surface_angle_deg: float | None) -> bool:
        """Set up a trial: the twin places its finger and returns True; a real rig needs a person (False)."""
        if not self.places_finger_itself:
            return False
        self._twin_plant_opened().place(pose, surface_angle_deg)
        if self.joints is not None:
            self.joints.estimator.reset()  # the pose jumped: no warm start from the old one
        where = "free" if surface_angle_deg is None else f"surface at {surface_angle_deg:g} deg"
        self.hub.event(EventKind.OPERATOR, "twin", f"finger placed: pose {pose}, {where}")
        return True

    def motion(self, name: str, **limits) -> ProcedureRun:
        """The engine for a procedure's moves (app/run/procedure.py), started: pre-flight, torque on holding,
        the interlocks watching. ``limits``: ``max_travel_m`` (required), ``max_tendon_force_N``, ``streams``,
        ``forces_required``, ``safe_action``. The caller closes it."""
        from uartlab.app.run.procedure import ProcedureRun

        run = ProcedureRun(self, name, **limits)
        try:
            return run.start()
        except BaseException:
            run.close()
            raise

    def stop(self) -> None:
        """Stop the streams, torque off, close every device, then the twin. Safe to call twice."""
        self._stopping.set()
        if self.joints is not None:
            self.joints.stop()
        if self.daq is not None:
            self.daq.stop()           # ends the DAQ thread's blocks() iterator
        if self.mocap is not None:
            self.mocap.close()        # ends the mocap thread's frames() iterator
        for stream in self._streams.values():
            if stream.thread.is_alive():
                stream.thread.join(timeout=3)
        if self.actuators is not None:
            try:
                self.actuators.close()    # torque off on all six, then the port closes
            except Exception as exc:  # a dead bus must not keep the rest from closing
                log.warning("actuators: close failed: %s", exc)
        if self._twin is not None:
            self._twin.stop()
        for stream in self._streams.values():
            if stream.state != "failed":
                stream.state = "stopped"

    def __enter__(self) -> Rig:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # ------------------------------------------------------------ what the rig knows
    def health(self) -> dict[str, DeviceHealth]:
        now = time.monotonic()
        return {name: s.health(now) for name, s in self._streams.items()}

    def clock_sync(self) -> dict[str, ClockSync]:
        """Each device's ClockSync (``estimate()``, ``to_host()``), for the recorder and for lining streams up."""
        return {name: s.sync for name, s in self._streams.items()}

    def tare_nano17(self, wait_s: float = 0.0) -> bool:
        """Bias the Nano17 with the next DAQ block (the sensor must be unloaded). With ``wait_s``, wait
        that long for it to be done; returns whether it was."""
        self._tare_requested.set()
        deadline = time.monotonic() + wait_s
        while self._tare_requested.is_set() and time.monotonic() < deadline:
            time.sleep(0.005)
        return not self._tare_requested.is_set()

    # ------------------------------------------------------------ device threads
    def _actuator_loop(self, stream: _Stream) -> None:
        pace = FixedRate(1.0 / self.config.actuators.poll_rate_hz, sleep=self._stopping.wait)  # after a stall: no burst
        unwrap = TickUnwrap()
        actuators = _opened(self.actuators, "MX-64 bus")
        while not self._stopping.is_set():
            try:
                sample: ActuatorSample = actuators.read()
            except ServoError as exc:
                if exc.sample is not None:  # the read that found the fault: its error bits are the evidence
                    stream.publish(self._actuator_record(exc.sample), None, time.monotonic())
                raise
            arrival_s = time.monotonic()  # the tick was stamped during the transaction, before this
            record = self._actuator_record(sample)
            ticks = sample.device_tick_ms
            stream.publish(record, unwrap(int(ticks[0])) if ticks is not None else None, arrival_s)
            pace.wait()

    @staticmethod
    def _actuator_record(sample: ActuatorSample) -> Record:
        ticks = sample.device_tick_ms
        tick = np.full(SIX, -1, dtype=np.int64) if ticks is None else np.asarray(ticks, dtype=np.int64)
        return Record.single("actuators", sample.host_time_s, excursion_m=sample.excursion_m,
                             velocity_m_per_s=sample.velocity_m_per_s, current_A=sample.current_A,
                             moving=sample.moving, hardware_error=np.asarray(sample.hardware_error, np.int64),
                             device_tick_ms=tick)

    def _daq_loop(self, stream: _Stream) -> None:
        daq, sea_forces = _opened(self.daq, "DAQ"), _opened(self.sea_forces, "SEA force conversion")
        cols = daq.columns
        last_time: float | None = None
        for block in daq.blocks(timeout_s=2.0):
            n, v = len(block.volts), block.volts
            if block.gap_before:
                # The task was restarted: its sample clock began again, and the indices only carry on by the
                # driver's estimate of the gap. A new clock epoch: fit the offset afresh.
                stream.sync.reset()
                self.hub.event(EventKind.OVERFLOW, "daq", f"{block.gap_before} samples lost before index "
                                                          f"{block.first_sample_index} (counted, not hidden)")
            if self._tare_requested.is_set() and self.nano17 is not None:
                self._tare_requested.clear()
                bias_V = np.round(self.nano17.tare(block), 4)
                self.hub.event(EventKind.OPERATOR, "daq", f"{NANO17_TARED}: bias {bias_V} V")
            nan = np.full((n, 6), np.nan)
            index = block.first_sample_index + np.arange(n, dtype=np.int64)
            stream.sync.observe(index[-1] / block.rate_hz, block.host_time_s)
            # Per-sample host times from the sample clock through the clock sync: evenly spaced, and free
            # of the USB/RPC jitter that back-dating each block from its arrival would carry.
            times = np.asarray(stream.sync.to_host(index / block.rate_hz), dtype=float)
            if last_time is not None and times[0] <= last_time:
                # The offset estimate moved earlier (a prompter block arrived): rather than step back, the
                # samples catch up at half the sample spacing - monotonic, and back on the mapping within
                # about a block (shifting the whole block would carry the old offset on forever).
                spacing_s = 1.0 / (block.rate_hz * stream.sync.rate)
                times = np.maximum(times, last_time + 0.5 * spacing_s * np.arange(1, n + 1))
            last_time = times[-1]
            record = Record("daq", times, {
                "sample_index": index,
                "read_host_time_s": np.full(n, block.host_time_s),
                "pot_V": v[:, cols["pots"]],
                "reference_V": v[:, cols["reference"][0]] if cols["reference"] else np.full(n, np.nan),
                "gauge_V": v[:, cols["gauges"]] if cols["gauges"] else nan,
                "tendon_force_N": sea_forces.forces(block),
                "wrench": self.nano17.wrench(block) if self.nano17 is not None else nan,
            })
            stream.publish(record, None, block.host_time_s)  # observed above, before the mapping
        if not self._stopping.is_set():
            raise RuntimeError("the DAQ stopped delivering blocks")

    def _mocap_loop(self, stream: _Stream) -> None:
        stalled = False
        mocap = _opened(self.mocap, "mocap")
        while not self._stopping.is_set():
            got = False
            for sample in mocap.samples(timeout_s=0.5):
                got = True
                if stalled:
                    stalled = False
                    self.hub.event(EventKind.DEVICE, "mocap", "OptiTrack frames are back")
                ticks = sample.mid_exposure_ticks
                record = Record.single("mocap", sample.host_time_s, frame_number=sample.frame_number,
                                       motive_time_s=sample.device_time_s,
                                       mid_exposure_ticks=-1 if ticks is None else int(ticks),
                                       markers_m=sample.markers_m)
                stream.publish(record, sample.device_time_s, sample.host_time_s)
            if not got and not stalled and not self._stopping.is_set():
                # Motive may come back (a network blip, Motive restarted): say so, keep listening.
                stalled, stream.state = True, "silent"
                self.hub.event(EventKind.DEVICE, "mocap",
                               f"no OptiTrack frame for 0.5 s: is Motive streaming?{self.twin_ended()}")
