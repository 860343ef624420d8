"""The twin rig's control channel: what a rig and its tests need of a twin beyond the devices' own protocols.

    server = TwinControlServer(twin_rig)             # in `uartlab twin up` (its own process)
    endpoint = server.bind("tcp://127.0.0.1:*")
    server.serve(stop_event)                          # answers until stop_event is set

    control = TwinControl(endpoint)                   # in the rig's process (app/rig/twin_process.py)
    control.call("place", pose="Hook", surface_angle_deg=None)
    x = control.call("plant_state")                   # the plant's state vector (numpy)

The drivers reach the twins over the real protocols (pty, NI gRPC, NatNet); this channel carries the rest:
placing the finger (an operator's job at the real rig), the plant's true values (the truth columns of
calibration reports, tests' assertions) and fault injections. ``OPERATIONS`` is the one table of what
it can do; an unknown operation or bad arguments get one line back, raised here as a DeviceError.

pyzmq REQ/REP on loopback. A request is JSON (an operation name and its keyword arguments), so whoever
can reach the port can at most drive the twin, never run code in it; a reply is a pickle (numpy arrays,
FingerParams, markers), read only by the process that started the twin and was told its endpoint.
The twin is passed in, never imported: the twins stay behind app/rig/backends.py and `uartlab twin`.
"""

from __future__ import annotations

import json
import pickle
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import zmq
from uartlab.drivers import mx64
from uartlab.errors import DeviceError

REPLY_TIMEOUT_S = 10.0   # placing the finger solves a start state: seconds on a loaded machine
POLL_S = 0.1             # the server's wake-up period to see its stop event


@dataclass(frozen=True)
class TwinServo:
    """One MX-64 twin as the plant and its control table hold it."""

    angle_rad: float
    velocity_rad_s: float
    goal_rad: float
    torque_enabled: bool
    hardware_error: int
    bus_watchdog_tripped: bool   # Bus Watchdog (98) reads its error value: the host went silent, the servo holds


@dataclass(frozen=True)
class Operation:
    doc: str
    run: Callable[..., Any]   # (twin rig, **arguments) -> a picklable answer


def _servos(twin) -> list[TwinServo]:
    out = []
    for k, servo in enumerate(twin.bus.servos):
        s, goal = twin.plant.servo_state(k), twin.plant.servos[k].goal
        tripped = "Bus Watchdog" in servo.items and servo.get("Bus Watchdog") == mx64.BUS_WATCHDOG_ERROR  # 2.0 only
        out.append(TwinServo(s.angle_rad, s.velocity_rad_s, float(goal), s.torque_enabled, s.hardware_error, tripped))
    return out


def _truth(twin) -> dict[str, Any]:
    """The plant's constants: what a perfect calibration would find (and the mocap mounting)."""
    plant = twin.plant
    cfg = plant.config
    return {"params": plant.params, "markers": plant.markers, "seas": [asdict(s) for s in cfg.seas],
            "motive_from_world": np.array(cfg.motive_from_world), "motive_origin_m": tuple(cfg.motive_origin_m)}


def _bus_stats(twin) -> dict[str, Any]:
    stats = twin.bus.stats
    return {"packets": stats.packets, "replies": stats.replies, "garbage_bytes": stats.garbage_bytes,
            "errors": dict(stats.errors), "slowest_reply_s": stats.slowest_reply_s,
            "realtime": bool(twin.bus.realtime), "plant_lag_s": twin.clock.lag_s if twin.clock else 0.0}


OPERATIONS: dict[str, Operation] = {
    "ping": Operation("answers 'pong'", lambda twin: "pong"),
    "place": Operation("place the finger: pose (Flex/Hook/Curl), surface_angle_deg (None: free)",
                       lambda twin, pose, surface_angle_deg: twin.plant.place(pose, surface_angle_deg)),
    "plant_state": Operation("the plant's state vector (angles 8:12, tendon forces 12:18 ...)",
                             lambda twin: twin.plant.state()),
    "plant_truth": Operation("the plant's true parameters, markers, SEAs and mocap mounting", _truth),
    "nano17_bias_volts": Operation("the Nano17 twin's gauge offsets (V)",
                                   lambda twin: np.array(twin.plant.nano17.bias_volts)),
    "servos": Operation("every servo: angle, goal, torque, hardware error, Bus Watchdog tripped", _servos),
    "bus_stats": Operation("the bus twin's counters (packets, replies, errors, slowest answer s), whether its "
                           "thread got real-time scheduling, the plant clock's lag s", _bus_stats),
    "inject_overload": Operation("servo i (0-based) shuts down with Overload",
                                 lambda twin, i: twin.plant.inject_overload(int(i))),
    "daq_stats": Operation("the DAQ twin's counters: tasks created, samples produced per channel, overflows",
                           lambda twin: {"tasks_created": twin.daq.stats.tasks_created,
                                         "samples_produced": twin.daq.stats.samples_produced,
                                         "overflows": twin.daq.stats.overflows}),
    "daq_stop": Operation("the NI gRPC server goes away (the USB-6210 unplugged)", lambda twin: twin.daq.stop()),
    "daq_stall": Operation("acquisition delivers no samples until daq_unstall", lambda twin: twin.daq.stall()),
    "daq_unstall": Operation("acquisition delivers samples again", lambda twin: twin.daq.unstall()),
    "motive_pause": Operation("Motive stops streaming frames", lambda twin: twin.motive.pause()),
    "motive_resume": Operation("Motive streams frames again", lambda twin: twin.motive.resume()),
}


def answer(twin, request: bytes) -> tuple[bool, Any]:
    """(ok, value) for one request; not ok: a one-line reason."""
    try:
        message = json.loads(request)
        name, arguments = message["op"], message.get("args", {})
    except (ValueError, KeyError, TypeError):
        return False, "twin control: a request is JSON {\"op\": NAME, \"args\": {...}}"
    operation = OPERATIONS.get(name)
    if operation is None:
        return False, f"twin control: unknown operation {name!r} (known: {', '.join(sorted(OPERATIONS))})"
    try:
        return True, operation.run(twin, **arguments)
    except TypeError as exc:
        return False, f"twin control: {name}: bad arguments {arguments} ({exc})"
    except Exception as exc:  # the twin keeps serving; the caller gets the reason
        return False, f"twin control: {name} failed: {type(exc).__name__}: {exc}"


class TwinControlServer:
    """The REP side, in the twin's process."""

    def __init__(self, twin):
        self.twin = twin
        self._context = zmq.Context.instance()
        self._socket = self._context.socket(zmq.REP)
        self._socket.setsockopt(zmq.LINGER, 0)

    def bind(self, endpoint: str = "tcp://127.0.0.1:*") -> str:
        """Listen; returns the endpoint as bound (the port chosen for ``*``)."""
        self._socket.bind(endpoint)
        return self._socket.getsockopt_string(zmq.LAST_ENDPOINT)

    def serve(self, stop: threading.Event) -> None:
        """Answer requests, one at a time, until ``stop`` is set; then close."""
        try:
            while not stop.is_set():
                if not self._socket.poll(int(POLL_S * 1000)):
                    continue
                ok, value = answer(self.twin, self._socket.recv())
                self._socket.send(pickle.dumps((ok, value)))
        finally:
            self._socket.close()


class TwinControl:
    """The REQ side, in the rig's process. Thread-safe: one request at a time."""

    def __init__(self, endpoint: str, timeout_s: float = REPLY_TIMEOUT_S):
        self.endpoint, self.timeout_s = endpoint, timeout_s
        self._lock = threading.Lock()
        self._socket: zmq.Socket | None = None

    def _connected(self) -> zmq.Socket:
        if self._socket is None:
            socket = zmq.Context.instance().socket(zmq.REQ)
            socket.setsockopt(zmq.LINGER, 0)
            socket.connect(self.endpoint)
            self._socket = socket
        return self._socket

    def call(self, op: str, **arguments) -> Any:
        """The operation's answer; DeviceError with the twin's one-line reason, or when it does not answer."""
        if op not in OPERATIONS:   # the same table the twin answers from: a typo fails here, before the wire
            raise DeviceError(f"twin control: unknown operation {op!r} (known: {', '.join(sorted(OPERATIONS))})")
        with self._lock:
            socket = self._connected()
            socket.send(json.dumps({"op": op, "args": arguments}).encode())
            if not socket.poll(int(self.timeout_s * 1000)):
                socket.close()      # a REQ socket that missed its reply cannot send again: a fresh one next time
                self._socket = None
                raise DeviceError(f"twin control: no answer to {op!r} from {self.endpoint} in {self.timeout_s:g} s "
                                  "(the twin process is gone or stuck)")
            ok, value = pickle.loads(socket.recv())
        if not ok:
            raise DeviceError(value)
        return value

    def close(self) -> None:
        with self._lock:
            if self._socket is not None:
                self._socket.close()
                self._socket = None
