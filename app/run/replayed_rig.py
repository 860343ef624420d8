"""A recorded session as a ``RigLike`` with null actuators: the engine runs on it, nothing moves.

    rig = ReplayedRig(SessionFile(path), start_s, stop_s).start()   # recorded host seconds
    exp = Experiment(rig, suite); exp.start(); ...; rig.finished.wait(); rig.stop()

The file's device streams (actuators, daq, mocap, joints) are published into the rig's hub at 1x from
``start_s`` to ``stop_s`` (read from the ``SessionFile`` a second ahead, delivered in 10 ms windows as
``ReplayRig`` does; the control loop must not wait on HDF5 reads), with their host times moved to now:
stream ages, gaps and rates are as recorded, so the stale-stream interlocks see what the live ones saw. The
servos are ``NullActuators``: every command is accepted and counted, nothing is sent anywhere; the
excursions the interlocks see are the recorded ones. The limits come from the rig.toml the session
embeds (or ``config`` given instead), the Nano17's rails from the .cal file it embeds, the time scale from
its trials. The recorded run's own ``runner`` and ``model`` streams are not replayed: the engine that runs
on this rig writes its own.
"""

from __future__ import annotations

import math
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from uartlab.app.record.player import SessionFile
from uartlab.app.rig.backends import twin_ft_calibration_name
from uartlab.app.rig.config import RigConfig, parse_rig_config
from uartlab.app.run.rig_like import DeviceHealth
from uartlab.drivers.interfaces import ActuatorSample, DeviceError
from uartlab.errors import ConfigError, InputFileError
from uartlab.hub import Hub
from uartlab.schema import ACTUATORS, DAQ, JOINTS_IK, MOCAP, WATCHED_STREAMS, runner_spec
from uartlab.streams import Record

if TYPE_CHECKING:
    from uartlab.app.run.engine import Engine

READ_CHUNK_S = 1.0   # recorded seconds read from the file at once: few HDF5 reads per second of replay
WINDOW_S = 0.010     # recorded seconds delivered at once: the DAQ's blocks arrive about as often live


class NullActuators:
    """Servos that accept every command and move nothing (a replayed or scripted rig's). ``read`` gives
    the newest actuators sample the rig has published (``latest``: a function returning that Record)."""

    def __init__(self, latest=None):
        self._latest = latest or (lambda: None)
        self.enabled = False
        self.commands = 0                   # goals accepted
        self.last_command_m: np.ndarray | None = None

    def enable(self) -> None:
        self.enabled = True

    def command(self, excursion_m: np.ndarray) -> None:
        x = np.asarray(excursion_m, dtype=float).reshape(-1)
        if x.shape != (6,):
            raise ValueError(f"six excursions needed, got {x.shape}")
        self.commands += 1
        self.last_command_m = x.copy()

    def read(self) -> ActuatorSample:
        rec = self._latest()
        if rec is None:
            raise DeviceError("actuators", "no actuator sample has been replayed yet")
        d = rec.data
        return ActuatorSample(float(rec.host_time_s[-1]), *(d[f][-1] for f in (
            ACTUATORS.excursion_m, ACTUATORS.velocity_m_per_s, ACTUATORS.current_A, ACTUATORS.moving,
            ACTUATORS.hardware_error)))

    def stop(self, torque_off: bool = True) -> None:
        if torque_off:
            self.enabled = False

    def torque_off(self) -> None:
        self.enabled = False


def recorded_rig_config(file: SessionFile) -> RigConfig:
    """The rig.toml the session embeds, as the rig ran it; InputFileError when it has none or it does not
    parse (a file from before the rig's text was always TOML may embed a Python description of it)."""
    where = f"{file.path}:/config/rig_toml"
    if not file.config_text.strip():
        raise InputFileError(f"{where}: the session embeds no rig configuration; give the rig's with --rig")
    try:
        return parse_rig_config(file.config_text, where, None)
    except ConfigError as exc:
        raise InputFileError(f"{exc} (give the rig's limits with --rig rig.toml)") from None


class ReplayedRig:
    """``RigLike`` over a session file between two recorded host times (see the module docstring)."""

    def __init__(self, file: SessionFile, start_s: float, stop_s: float, config: RigConfig | None = None):
        self.file, self.start_s, self.stop_s = file, float(start_s), float(stop_s)
        self.config = config if config is not None else recorded_rig_config(file)
        self.hub = Hub()
        self.engine: Engine | None = None
        self.streams = tuple(s for s in WATCHED_STREAMS if s in file.streams)
        for name in self.streams:
            self.hub.register(file.streams[name])
        self.hub.register(runner_spec())           # the engine that runs on this rig publishes its own
        self._latest: dict[str, Record] = {}
        self._samples = dict.fromkeys(self.streams, 0)
        self.actuators = NullActuators(lambda: self._latest.get(ACTUATORS.stream))
        self._time_scale = _recorded_time_scale(file)
        # Read now, not in the control loop: a file without it is bad input, not a fault mid-run.
        self._cal = self._recorded_ft_calibration() if self.has_nano17 else None
        self.offset_s = math.nan                   # replayed host time - recorded host time
        self.finished = threading.Event()          # the replay reached stop_s (or the file's end)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="replayed-rig", daemon=True)

    # ------------------------------------------------------------ life cycle
    def start(self) -> ReplayedRig:
        self.offset_s = time.monotonic() - self.start_s
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=3)

    def _run(self) -> None:
        """Read a second at a time, deliver 10 ms windows when their recorded end has come (as a device's
        data would arrive), paced against the start: a slow read delays a window, never the ones after."""
        try:
            t = self.start_s
            while t < self.stop_s and not self._stop.is_set():
                chunk_end = min(t + READ_CHUNK_S, self.stop_s)
                chunk = [self.file.read(name, *self.file.rows_between(name, t, chunk_end)) for name in self.streams]
                while t < chunk_end and not self._stop.is_set():
                    window_end = min(t + WINDOW_S, chunk_end)
                    self._stop.wait(max(0.0, self.offset_s + window_end - time.monotonic()))
                    for rec in chunk:
                        i0, i1 = np.searchsorted(rec.host_time_s, (t, window_end), "left")
                        if i1 > i0:
                            self._publish(Record(rec.stream, rec.host_time_s[i0:i1] + self.offset_s,
                                                 {k: v[i0:i1] for k, v in rec.data.items()}))
                    t = window_end
        finally:
            self.finished.set()

    def _publish(self, rec: Record) -> None:
        self._latest[rec.stream] = rec
        self._samples[rec.stream] += len(rec)
        self.hub.publish(rec)

    def recorded_time_s(self, host_s: float) -> float:
        """A host time of this replay as the recorded run's host time."""
        return host_s - self.offset_s

    # ------------------------------------------------------------ what the rig knows
    @property
    def time_scale(self) -> float:
        return self._time_scale

    @property
    def has_nano17(self) -> bool:
        return bool(self.config.daq.gauges) and DAQ.stream in self.file.streams

    @property
    def has_sea_forces(self) -> bool:
        daq = self.file.streams.get(DAQ.stream)
        return daq is not None and any(f.name == DAQ.tendon_force_N for f in daq.fields)

    @property
    def has_joint_angles(self) -> bool:
        return JOINTS_IK.stream in self.streams

    @property
    def marker_names(self) -> tuple[str, ...]:
        spec = self.file.streams.get(MOCAP.stream)
        field = None if spec is None else next((f for f in spec.fields if f.name == MOCAP.markers_m), None)
        if field is None:
            return ()
        return tuple(field.description.split(" in order ", 1)[-1].split(";")[0].split())

    @property
    def places_finger_itself(self) -> bool:
        """The finger is wherever the recorded run had it: every trial is set up."""
        return True

    @property
    def twin_plant(self):
        return None

    def nano17_saturated(self, gauge_V: np.ndarray) -> np.ndarray:
        gauge_V = np.asarray(gauge_V, dtype=float)
        return np.zeros(gauge_V.shape, dtype=bool) if self._cal is None else self._cal.saturated(gauge_V)

    def _recorded_ft_calibration(self):
        """The Nano17 .cal file the session embeds (its output rails say when a gauge saturated)."""
        from uartlab.drivers.ati import FTCalibration

        n = self.config.nano17
        name = twin_ft_calibration_name() if n.calibration_file is None else Path(n.calibration_file).name
        text = self.file.calibration_texts.get(name)
        if text is None:
            raise InputFileError(f"{self.file.path}:/config/calibration: no {name} embedded (the Nano17's "
                                 "calibration the session was recorded with)")
        fd, tmp = tempfile.mkstemp(suffix=".cal")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            return FTCalibration.from_file(tmp, n.index)
        finally:
            os.unlink(tmp)

    def stream_age_limits_s(self) -> dict[str, float]:
        ages = dict(self.config.interlocks.max_stream_age_s)
        return {s: a for s, a in ages.items() if s in self.streams}

    def health(self) -> dict[str, DeviceHealth]:
        now = time.monotonic()
        state = "stopped" if self.finished.is_set() else "streaming"
        out = {}
        for name in self.streams:
            rec = self._latest.get(name)
            age = math.inf if rec is None else now - float(rec.host_time_s[-1])
            out[name] = DeviceHealth(f"{name} (replayed)", state, math.nan, self._samples[name], 0, "", age)
        return out

    def clock_sync(self) -> dict:
        return {}   # the replayed host times are the recorded ones moved: no device clock to follow

    def calibration_status(self) -> tuple[list[str], list[str]]:
        return [], []   # the run used the calibrations the file embeds; nothing is measured anew

    def model_params(self, base=None):
        from uartlab.app.record.params import recorded_model_params

        return recorded_model_params([self.file.path], base)

    def tare_nano17(self, wait_s: float = 0.0) -> bool:
        return True     # the recorded wrench is as the run tared it

    def place_finger(self, pose: str, surface_angle_deg: float | None) -> bool:
        return True

    def motion(self, name: str, **limits):
        raise DeviceError("replay", f"{name}: a replayed session moves nothing; procedures need a rig")


def _recorded_time_scale(file: SessionFile) -> float:
    """Protocol seconds per host second of the recorded run (its trials say it; 1 without any)."""
    for trial in file.trials():
        scale = trial["parameters"].get("time_scale")
        if scale:
            return float(scale)
    return 1.0
