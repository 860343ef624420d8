"""The twin rig as a separate device: `uartlab twin up` in its own process, started and stopped by the rig.

    twin = TwinProcess.for_rig(config).start()   # returns once every twin listens (or one clear error)
    twin.bus.url, twin.daq.grpc_options(""), twin.motive.command_port   # what the factories connect to
    twin.plant.state(); twin.plant.place("Hook", 30.0); twin.daq.stall()  # over the control channel
    twin.stop()                                    # SIGTERM, then SIGKILL after a timeout; reaped

A driver never shares an interpreter with the device it talks to, as on the real rig: the twins' threads
(plant clock, bus, gRPC server, NatNet) hold their own GIL, not the control loop's. The rig's drivers reach
them over the real protocols; ``plant`` (a ``TwinPlant``) and the fault injections go over the twin's
control channel (app/rig/twin_control.py).

The child is `uartlab twin spare` (imports and loads the plant's compiled kernels, then reads its `twin up`
arguments on stdin), so a process that starts many twins can have the next one loaded ahead
(``keep_spares``). It inherits the environment, so it uses the same kernel cache ($UARTLAB_CACHE_DIR).
Its stderr goes to ``log_path``, removed by a clean ``stop()`` and kept when this process dies: the twin
then outlives it by ``orphan_grace_s`` (the servos' Bus Watchdog trips meanwhile) and logs what it saw. A spare
whose process dies before it is used removes its own log (it has nothing to tell). The next process that
starts a twin removes the logs of gone processes that a kill -9 of the whole tree left empty, and the
post-mortems older than ``POST_MORTEM_KEEP_DAYS``: a log's name carries the pid of the process it was started for.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import IO, TYPE_CHECKING, Any

import numpy as np
from uartlab.app.rig.twin_control import TwinControl, TwinServo
from uartlab.errors import DeviceError
from uartlab.processes import end_process, how_it_ended, is_alive

if TYPE_CHECKING:
    from uartlab.app.rig.config import RigConfig
    from uartlab.sim import Finger, FingerParams

START_TIMEOUT_S = 120.0   # a cold kernel cache compiles the plant first: a minute on a busy 2-core machine
STOP_TIMEOUT_S = 10.0
LOG_PREFIX = "uartlab-twin-"   # then the pid of the process the twin was started for, in the temporary folder
ORPHAN_GRACE_S = 5.0      # several Bus Watchdog periods (the rig's default is 100 ms, at most 2.54 s)
POST_MORTEM_KEEP_DAYS = 7.0   # a twin's log of its parent's death: a week to look, then the temporary folder is clean


def twin_up_arguments(config: RigConfig) -> list[str]:
    """`uartlab twin up` arguments for the rig's [twin] table and its twin devices' settings."""
    t, a = config.twin, config.actuators
    args = ["--speed", repr(float(t.speed)), "--seed", str(t.seed), "--perturbation", repr(float(t.perturbation)),
            "--pose", t.pose, "--protocol", f"{a.protocol:.1f}", "--servo-ids", ",".join(map(str, a.ids)),
            "--daq-device", config.daq.device]
    if t.surface_angle_deg is not None:
        args.append(f"--surface-angle={t.surface_angle_deg!r}")   # "=": a negative angle is not an option
    return args


@dataclass
class TwinBus:
    port: str               # the pty, for any serial program (the vendor's examples)
    url: str                # the same bus over TCP loopback: what the rig's MX-64 driver opens (dxl_bus.py)


@dataclass
class TwinDaq:
    """The USB-6210 twin's NI gRPC server, and its fault injections."""

    address: str
    device: str
    _control: TwinControl
    _channels: list = field(default_factory=list)

    def grpc_options(self, session_name: str = "uartlab"):
        """Options for ``nidaqmx.Task(name, grpc_options=...)`` (a non-empty session name must equal the task
        name; "" lets each task have its own generated session)."""
        import grpc
        import nidaqmx

        # Unlimited receive size: one read of 12 channels x 100 kS is 9.6 MB, over gRPC's 4 MB default.
        channel = grpc.insecure_channel(self.address, options=[("grpc.max_receive_message_length", -1)])
        self._channels.append(channel)
        return nidaqmx.GrpcSessionOptions(channel, session_name)

    def stop(self) -> None:
        """The gRPC server goes away (the USB-6210 unplugged)."""
        self._control.call("daq_stop")

    def stall(self) -> None:
        """Acquisition delivers no samples until ``unstall()`` (a USB stall)."""
        self._control.call("daq_stall")

    def unstall(self) -> None:
        self._control.call("daq_unstall")

    def close_channels(self) -> None:
        for channel in self._channels:
            channel.close()
        self._channels.clear()


@dataclass
class TwinMotive:
    """The Motive twin's NatNet ports, and its fault injections."""

    address: str
    command_port: int
    data_port: int
    _control: TwinControl

    def pause(self) -> None:
        """Motive stops streaming frames until ``resume()``."""
        self._control.call("motive_pause")

    def resume(self) -> None:
        self._control.call("motive_resume")


class _Nano17:
    def __init__(self, control: TwinControl):
        self._control = control

    @property
    def bias_volts(self) -> np.ndarray:
        return self._control.call("nano17_bias_volts")


class TwinPlant:
    """The twin's physics plant as the rig's users read it (RigLike.twin_plant): its true values for a
    calibration's truth column, tests' assertions, and the finger's placement. Never a measurement source."""

    def __init__(self, control: TwinControl):
        self._control = control
        self.nano17 = _Nano17(control)
        self._truth: dict[str, Any] | None = None
        self._finger: Finger | None = None
        self._last: tuple[np.ndarray, list[TwinServo]] | None = None   # as the twin was when it stopped

    # ------------------------------------------------------------ live values
    def state(self) -> np.ndarray:
        """The plant's state vector now: joint angles [8:12] rad, tendon forces [12:18] N."""
        return self._control.call("plant_state") if self._last is None else self._last[0].copy()

    def servo_states(self) -> list[TwinServo]:
        """All servos in one request."""
        return self._control.call("servos") if self._last is None else list(self._last[1])

    def keep_last(self) -> None:
        """Before the twin stops: remember its state and servos, so what the rig left behind (torque off,
        the last goals) can still be read after ``stop()``, as one would look at the hardware."""
        if self._last is None:
            self._last = (self.state(), self.servo_states())

    def servo_state(self, i: int) -> TwinServo:
        return self.servo_states()[i]

    # ------------------------------------------------------------ constants (asked once)
    def _constants(self) -> dict[str, Any]:
        if self._truth is None:
            self._truth = self._control.call("plant_truth")
        return self._truth

    @property
    def params(self) -> FingerParams:
        return self._constants()["params"]

    @property
    def markers(self) -> list:
        return self._constants()["markers"]

    @property
    def finger(self) -> Finger:
        if self._finger is None:
            from uartlab.sim import Finger

            self._finger = Finger(self.params)
        return self._finger

    @property
    def config(self) -> SimpleNamespace:
        """The plant's set-up as built: ``seas`` (spool_radius_m, pot_volts_per_rad, pot_zero_V, force_limit_N),
        ``motive_from_world``, ``motive_origin_m``."""
        c = self._constants()
        return SimpleNamespace(seas=[SimpleNamespace(**s) for s in c["seas"]], motive_from_world=c["motive_from_world"],
                               motive_origin_m=c["motive_origin_m"])

    # ------------------------------------------------------------ what an operator or a fault does
    def place(self, pose: str, surface_angle_deg: float | None) -> None:
        self._control.call("place", pose=pose,
                           surface_angle_deg=None if surface_angle_deg is None else float(surface_angle_deg))

    def inject_overload(self, i: int) -> None:
        """Servo ``i`` (0-based) shuts down with Overload."""
        self._control.call("inject_overload", i=int(i))


class TwinProcess:
    """`uartlab twin up --json` as a child process, with what the rig's factories and tests use of it."""

    def __init__(self, arguments: list[str], start_timeout_s: float = START_TIMEOUT_S,
                 orphan_grace_s: float = ORPHAN_GRACE_S):
        self.arguments, self.start_timeout_s, self.orphan_grace_s = arguments, start_timeout_s, orphan_grace_s
        self.process: subprocess.Popen | None = None
        self.endpoints: dict[str, Any] = {}
        self.log_path: Path | None = None
        self._log: IO[bytes] | None = None
        self._control: TwinControl | None = None
        self.bus: TwinBus | None = None
        self.daq: TwinDaq | None = None
        self.motive: TwinMotive | None = None
        self.plant: TwinPlant | None = None

    @classmethod
    def for_rig(cls, config: RigConfig, **kwargs) -> TwinProcess:
        return cls(twin_up_arguments(config), **kwargs)

    @property
    def up_arguments(self) -> list[str]:
        """`uartlab twin up` arguments: endpoints as one JSON line, free ports, and this process as parent."""
        return ["--json", "--ephemeral-ports", "--parent-pid", str(os.getpid()),
                "--orphan-grace-s", repr(float(self.orphan_grace_s)), *self.arguments]

    def start(self) -> TwinProcess:
        """Start the twin and wait for its endpoints line; DeviceError (its stderr's last line) if it fails."""
        spare = _Spare.take()
        self.process, self.log_path, self._log = spare.process, spare.log_path, spare.log
        try:
            assert self.process.stdin is not None
            self.process.stdin.write(json.dumps(self.up_arguments).encode() + b"\n")
            self.process.stdin.close()
            self.endpoints = self._endpoints_line()
            e = self.endpoints
            self._control = control = TwinControl(e["control"])
            self.bus = TwinBus(e["bus_port"], e["bus_url"])
            self.daq = TwinDaq(e["daq_address"], e["daq_device"], control)
            self.motive = TwinMotive(e["natnet_address"], int(e["natnet_command_port"]), int(e["natnet_data_port"]),
                                     control)
            self.plant = TwinPlant(control)
        except BaseException:
            self.stop()
            raise
        _Spare.prepare_next()
        return self

    def _endpoints_line(self) -> dict[str, Any]:
        process = self.process
        assert process is not None and process.stdout is not None
        got: list[bytes] = []
        reader = threading.Thread(target=lambda: got.append(process.stdout.readline()),  # type: ignore[union-attr]
                                  name="twin-endpoints", daemon=True)
        reader.start()
        reader.join(self.start_timeout_s)
        line = got[0] if got else b""
        try:
            endpoints = json.loads(line)
            if not isinstance(endpoints, dict) or "control" not in endpoints:
                raise ValueError
            return endpoints
        except ValueError:
            pass
        if reader.is_alive():
            why = f"no endpoints within {self.start_timeout_s:g} s"
        elif process.poll() is None and line:
            why = f"it printed {line[:120]!r} instead of its endpoints"
        else:
            why = f"it exited with status {process.wait(5)}"
        raise DeviceError(f"twin process ({' '.join(self.arguments)}): {why}: {self.log_tail() or 'no error output'}")

    def log_tail(self) -> str:
        """The twin's last stderr line (where a failed start says why)."""
        if self.log_path is None or not self.log_path.exists():
            return ""
        lines = [line.strip() for line in self.log_path.read_text(errors="replace").splitlines() if line.strip()]
        return lines[-1] if lines else ""

    def ended(self, wait_s: float = 0.0) -> str | None:
        """How the twin process ended ("the twin process (pid N) was killed by SIGKILL"), waiting up to
        ``wait_s`` for it (its connections close a moment before it can be reaped); None while it runs."""
        if self.process is None:
            return None
        try:
            code = self.process.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            return None
        return f"the twin process (pid {self.process.pid}) {how_it_ended(code)}"

    @property
    def pid(self) -> int | None:
        return None if self.process is None else self.process.pid

    def stop(self, timeout_s: float = STOP_TIMEOUT_S) -> None:
        """End the twin (SIGTERM, then SIGKILL after ``timeout_s``) and reap it. Safe to call twice."""
        if self.plant is not None and self.process is not None and self.process.poll() is None:
            with contextlib.suppress(DeviceError):  # a twin that no longer answers: nothing to keep
                self.plant.keep_last()
        if self._control is not None:
            self._control.close()
        if self.daq is not None:
            self.daq.close_channels()
        process = self.process
        if process is not None:
            end_process(process, timeout_s)
            for pipe in (process.stdin, process.stdout):
                if pipe is not None:
                    pipe.close()
        if self._log is not None:
            self._log.close()
            self._log = None
        if self.log_path is not None:
            self.log_path.unlink(missing_ok=True)

    def __enter__(self) -> TwinProcess:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()



class _Spare:
    """A `uartlab twin spare` process: the twins imported and their kernels loaded, waiting for its `twin up`
    arguments on stdin. With ``keep_spares(True)`` one is started ahead for the next twin of this process, so
    a start costs the twin's set-up only (tests start dozens of rigs); otherwise each start spawns its own."""

    kept: _Spare | None = None
    keep = False
    lock = threading.Lock()

    def __init__(self, warm: bool = False):
        _sweep_logs()
        fd, name = tempfile.mkstemp(prefix=f"{LOG_PREFIX}{os.getpid()}-", suffix=".log")
        self.log_path, self.log = Path(name), os.fdopen(fd, "w+b")
        command = [sys.executable, "-m", "uartlab.app.cli", "twin", "spare", "--log", name,
                   *(["--warm"] if warm else [])]
        # In the starter's session (not one of its own, which is a scheduling autogroup of its own, where its
        # nice -10 weighs nothing against the machine's other work); it ignores a Ctrl-C at the terminal, as
        # a device would: the program stops its rig in order, and the twin last (app/cli/twin.py).
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
                                        close_fds=True)

    @classmethod
    def take(cls) -> _Spare:
        with cls.lock:
            spare, cls.kept = cls.kept, None
        if spare is None or spare.process.poll() is not None:
            spare = cls()
        return spare

    @classmethod
    def prepare_next(cls) -> None:
        """After a twin is up (not while it starts: both would compete for the CPU), the next one's spare."""
        if cls.keep:
            cls.start_ahead()

    @classmethod
    def start_ahead(cls) -> None:
        """The next twin's spare, loading its kernels now, unless one is kept already."""
        with cls.lock:
            if cls.kept is None:
                cls.kept = cls(warm=True)

    @classmethod
    def discard(cls) -> None:
        with cls.lock:
            spare, cls.kept = cls.kept, None
        if spare is not None:
            process = spare.process
            for pipe in (process.stdin, process.stdout):   # stdin's end of input: it exits, nothing started
                if pipe is not None:
                    pipe.close()
            process.wait()
            spare.log.close()
            spare.log_path.unlink(missing_ok=True)


def _sweep_logs(min_age_s: float = 60.0, keep_s: float = POST_MORTEM_KEEP_DAYS * 86400.0) -> None:
    """Remove the twin logs of gone processes: empty ones (a kill -9 of the whole tree) untouched for
    ``min_age_s`` (its twin has stopped by then, after its orphan grace, or it would have written why), and
    post-mortems untouched for ``keep_s``."""
    now = time.time()
    for path in Path(tempfile.gettempdir()).glob(f"{LOG_PREFIX}*.log"):
        try:
            pid = int(path.name.removeprefix(LOG_PREFIX).split("-")[0])
            stat = path.stat()
        except (ValueError, OSError):
            continue
        age_s = now - stat.st_mtime
        if (age_s > (min_age_s if stat.st_size == 0 else keep_s) and stat.st_uid == os.getuid()
                and not is_alive(pid)):
            path.unlink(missing_ok=True)


def keep_spares(enabled: bool) -> None:
    """Keep a twin process started ahead of the next ``TwinProcess.start()`` of this process (or stop)."""
    _Spare.keep = enabled
    if not enabled:
        _Spare.discard()


def start_twin_ahead() -> None:
    """Start this process's next twin process now, loading its kernels, so that it loads while this process
    still imports what it needs (the rig core: about a second each, on two cores)."""
    _Spare.start_ahead()


def start_twin_process(config: RigConfig) -> TwinProcess:
    """The twin rig for this config in its own process, started (backends.TWIN_RIG["process"])."""
    return TwinProcess.for_rig(config).start()
