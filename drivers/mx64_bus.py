"""The six MX-64 SEAs on one Dynamixel bus, through ROBOTIS' dynamixel_sdk 4.1.0 (the Actuators interface).

    bus = Mx64Bus("/dev/ttyUSB0")            # Protocol 2.0, IDs 1..6 = FDP FDS ED DI PI LUM, 1 Mbps
    bus.connect(); bus.enable()
    bus.command(excursion_m); sample = bus.read()   # one sync write + one sync read per control tick

One tick = two instructions. The read is one contiguous block per servo: on 2.0 Goal Position .. Present
Position (116..135, 20 B: goal, Realtime Tick, Moving, current, velocity, position). Hardware Error Status
(70) is far from it: instead of 77 B per servo (or an indirect-address block) the
driver uses the Alert bit of every status packet and reads 70 only from a servo that raises it. On 1.0 (no
Sync Read; the Bulk Read is sent by hand, GroupBulkRead.txRxPacket is broken there in SDK 4.1.0) it is Goal
Position .. Current (30..69, 40 B) so the real motor current comes along; the hardware bits are in every
error byte. The goal read back proves the sync write (which gets no reply) landed; a mismatch is counted
and, on 2.0, checked against a tripped Bus Watchdog. `uartlab bench bus` measures the cost on the wire.
At connect an FTDI adapter's latency timer is set to 1 ms, or one warning line says how (``ftdi_latency``).

A hardware error, a tripped watchdog or a lost servo turns torque off on all six (``torque_off`` reads it
back: the sync write gets no reply) and raises ``ServoError``; Ctrl-C in any call turns torque off, then
goes on. The packets themselves (retries, reply classification, the receive loop, ``stats`` / ``events``)
are ``mx64_link``'s job; its error types are re-exported from here.
"""

from __future__ import annotations

import functools
import logging
import time
from collections import deque
from collections.abc import Callable

import dynamixel_sdk as sdk
import numpy as np
import serial
from uartlab.drivers import ftdi_latency, mx64
from uartlab.drivers.interfaces import ActuatorSample, DeviceError
from uartlab.drivers.mx64_link import BusEvent, BusStats, CommError, Mx64Link, ServoError, _Port
from uartlab.drivers.sea import SeaGeometry
from uartlab.names import TENDONS

log = logging.getLogger(__name__)

DEFAULT_IDS = (1, 2, 3, 4, 5, 6)
# est.: 60 % of the MX-64's 6.6 rad/s no-load speed and 40 rad/s^2, so a 10 mm tendon step (0.5 rad on the
# 20 mm spool) settles in ~0.2 s without jerking the tendons.
PROFILE_VELOCITY_RAD_S = 4.0
PROFILE_ACCEL_RAD_S2 = 40.0
# est.: 20 control periods at 200 Hz; long enough for a GC pause, short enough to stop a dead host's servos.
WATCHDOG_MS = 100.0
SILENCE_LOOKBACK_S = 10.0   # a trip is seen at the first read after it: its silence ended moments before
HW_ERROR_NAMES = {mx64.HW_INPUT_VOLTAGE: "input voltage", mx64.HW_OVERHEATING: "overheating",
                  mx64.HW_ENCODER: "motor encoder", mx64.HW_ELECTRICAL_SHOCK: "electrical shock",
                  mx64.HW_OVERLOAD: "overload"}


def _torque_off_on_interrupt(method):
    """Ctrl-C anywhere in a bus call: torque off first, then let the KeyboardInterrupt go on."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except KeyboardInterrupt:
            self._emergency_torque_off()
            raise
    return wrapper


class Mx64Bus(Mx64Link):
    """Six MX-64s (tendon order FDP FDS ED DI PI LUM) commanded in tendon space; implements ``Actuators``."""

    sysfs_root = ftdi_latency.SYSFS_ROOT  # where the port's FTDI latency timer is looked up (tests: a fake tree)

    def __init__(self, port: str, ids: tuple[int, ...] = DEFAULT_IDS, protocol: float = 2.0,
                 baud: int = 1_000_000, seas: list[SeaGeometry] | None = None, max_retries: int = 2,
                 profile_velocity_rad_s: float = PROFILE_VELOCITY_RAD_S,
                 profile_accel_rad_s2: float = PROFILE_ACCEL_RAD_S2, watchdog_ms: float = WATCHDOG_MS,
                 packet_timeout_ms: float | None = None):
        if protocol not in (1.0, 2.0):
            raise ValueError(f"protocol must be 1.0 or 2.0, got {protocol}")
        self.seas = list(seas) if seas is not None else [SeaGeometry() for _ in ids]
        if len(ids) != len(TENDONS) or len(self.seas) != len(ids):
            raise ValueError(f"need {len(TENDONS)} servo IDs and SEA geometries, got {len(ids)} and {len(self.seas)}")
        self.port, self.ids, self.protocol, self.baud = port, tuple(ids), float(protocol), int(baud)
        self.max_retries, self.watchdog_ms, self.packet_timeout_ms = max_retries, watchdog_ms, packet_timeout_ms
        self.profile_velocity_rad_s, self.profile_accel_rad_s2 = profile_velocity_rad_s, profile_accel_rad_s2
        self.table = mx64.control_table(self.protocol)
        self.p1 = self.protocol == 1.0
        goal, last = self.table["Goal Position"], self.table["Current" if self.p1 else "Present Position"]
        self.read_address, self.read_length = goal.address, last.address + last.size - goal.address
        self.stats = BusStats()
        self.events: deque[BusEvent] = deque(maxlen=256)
        self._port: _Port | None = None
        self._ph = sdk.PacketHandler(self.protocol)
        self._goal_ticks: np.ndarray | None = None   # the last goals commanded, to check the read-back
        self._last_ticks: np.ndarray | None = None   # the last Present Position read
        self.between_tries: Callable[[], object] | None = None  # see Mx64Link: the bus lock's yield

    def tendon(self, dxl_id: int) -> str:
        return TENDONS[self.ids.index(dxl_id)]

    # ------------------------------------------------------------------ life cycle
    @_torque_off_on_interrupt
    def connect(self) -> None:
        """Open the port, ping and model-check every servo, then configure them (torque stays off)."""
        self._port = _Port(self.port, self.packet_timeout_ms)
        try:
            opened = self._port.setBaudRate(self.baud)  # opens the port at this rate
        except (OSError, serial.SerialException) as exc:
            self._port = None
            raise DeviceError("MX-64 bus", f"cannot open serial port {self.port}: {exc}") from exc
        if not opened:
            self._port = None
            raise DeviceError("MX-64 bus", f"cannot open serial port {self.port} at {self.baud} baud")
        self.stats = BusStats()
        self._check_latency_timer()
        try:
            expected = mx64.MODEL_NUMBER_P1 if self.p1 else mx64.MODEL_NUMBER_P2
            for dxl_id in self.ids:
                model = self._unicast(dxl_id, "ping", self._ph.ping)[0]
                if model != expected:
                    raise ServoError(dxl_id, self.tendon(dxl_id), f"model number {model} found, expected {expected} "
                                     f"(MX-64 on Protocol {self.protocol:g})")
            for dxl_id in self.ids:
                self._configure(dxl_id)
        except BaseException:
            self._port.closePort()
            self._port = None
            raise

    def _check_latency_timer(self) -> None:
        """An FTDI adapter (the U2D2) at its 16 ms default delays every reply: set 1 ms, or warn how to."""
        timer = ftdi_latency.ensure(self.port, ftdi_latency.WANTED_MS, self.sysfs_root)
        if timer.ok():
            return
        log.warning("%s", timer.advice())
        self._event(None, "latency timer", timer.advice())

    def _configure(self, dxl_id: int) -> None:
        self._write(dxl_id, "Torque Enable", 0)  # EEPROM (2.0: return delay, mode) is writable only with torque off
        self._write(dxl_id, "Return Delay Time", 0)  # the default 500 us per reply would cost 3 ms per tick
        if self.p1:
            # Both angle limits 4095: multi-turn, +-7 revolutions, so tendon goals never wrap at a turn.
            self._write(dxl_id, "CW Angle Limit", 4095)
            self._write(dxl_id, "CCW Angle Limit", 4095)
        else:
            self._write(dxl_id, "Operating Mode", mx64.OP_MODE_EXTENDED_POSITION)  # +-256 turns, no wrap
        self._configure_ram(dxl_id)

    def _configure_ram(self, dxl_id: int) -> None:
        """What a reboot resets: the profile and the watchdog."""
        v, a = self.profile_velocity_rad_s, self.profile_accel_rad_s2
        if self.p1:
            self._write(dxl_id, "Moving Speed", min(1023, round(v / mx64.moving_speed_units_to_rad_s(1))))
            self._write(dxl_id, "Goal Acceleration", min(254, round(a / mx64.goal_accel_units_to_rad_s2(1))))
            return
        self._write(dxl_id, "Profile Acceleration", round(a / mx64.profile_accel_units_to_rad_s2(1)))
        self._write(dxl_id, "Profile Velocity", mx64.rad_s_to_velocity_units(v))
        self._write(dxl_id, "Bus Watchdog", 0)  # a tripped watchdog (0xFF) refuses any other value
        self._write(dxl_id, "Bus Watchdog", self._watchdog_units())

    def _watchdog_units(self) -> int:
        return max(1, min(127, round(self.watchdog_ms / mx64.BUS_WATCHDOG_MS_PER_UNIT)))

    @_torque_off_on_interrupt
    def enable(self) -> None:
        """Torque on, holding where each servo is (the goal registers are set to the present positions first)."""
        self._goal_ticks = None  # enable() is the way out of a watchdog trip: do not fault on its mismatch
        sample_ticks = self._read_ticks()
        if not self.p1:
            self._sync_write("Bus Watchdog", [0] * 6)  # clears a trip, which would refuse the goals; re-armed below
        self._sync_write("Goal Position", sample_ticks)
        if not self.p1:
            self._sync_write("Bus Watchdog", [self._watchdog_units()] * 6)
        self._sync_write("Torque Enable", [1] * 6)
        self._goal_ticks = np.asarray(sample_ticks)

    @_torque_off_on_interrupt
    def stop(self, torque_off: bool = True) -> None:
        """Stop moving: torque off, or hold where the servos are now (goal := present position)."""
        if torque_off:
            self.torque_off()
            return
        ticks = self._read_ticks()
        self._sync_write("Goal Position", ticks)
        self._goal_ticks = np.asarray(ticks)

    @_torque_off_on_interrupt
    def close(self) -> None:
        if self._port is None:
            return
        try:
            self.torque_off()
        finally:
            self._port.closePort()
            self._port = None

    def __enter__(self) -> Mx64Bus:
        self.connect()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def torque_off(self) -> None:
        """Torque off on all six: one sync write, then each servo's Torque Enable read back. A sync write gets
        no reply, so until a servo answers nothing says it has been served (an in-process twin may not have
        read it yet; on a noisy bus it may never arrive); a servo answers only after it has handled every
        packet before. One still torqued gets a unicast write and ServoError is raised if it stays on; one
        that does not answer (a lost servo) is named in the event."""
        self._sync_write("Torque Enable", [0] * 6)
        self._goal_ticks = None
        states = {}
        for dxl_id in self.ids:
            # On a bus gone silent each confirmation is a packet timeout: a waiting command (the control loop's
            # tick) or the E-stop goes out between them, not after all six.
            self._between_tries()
            states[dxl_id] = self._confirm_torque_off(dxl_id)
        silent = [f"ID {i} ({self.tendon(i)})" for i, state in states.items() if state is None]
        self._event(None, "torque off", "all servos" + (f"; no answer from {', '.join(silent)}" if silent else ""))
        for dxl_id, state in states.items():
            if state:
                raise ServoError(dxl_id, self.tendon(dxl_id), "still torqued after torque off")

    def _confirm_torque_off(self, dxl_id: int) -> bool | None:
        """Whether the servo still reads torque on after one unicast write of 0 more (None: no answer). Plain
        SDK calls, not ``_unicast``: this runs on the fault paths, where a failure must not come back here."""
        port, address = self._require_port(), self.table["Torque Enable"].address
        for attempt in range(2):
            value, comm, _ = self._ph.read1ByteTxRx(port, dxl_id, address)
            if comm == sdk.COMM_SUCCESS and value == 0:
                return False
            if comm == sdk.COMM_SUCCESS and not attempt:
                self._ph.write1ByteTxRx(port, dxl_id, address, 0)
            elif comm == sdk.COMM_RX_TIMEOUT:
                return None
        return True if comm == sdk.COMM_SUCCESS else None

    @_torque_off_on_interrupt
    def reboot(self, dxl_id: int) -> None:
        """Clear a shutdown (2.0 only: Protocol 1.0 MX firmware has no Reboot; power-cycle it instead)."""
        if self.p1:
            raise ServoError(dxl_id, self.tendon(dxl_id), "Protocol 1.0 has no reboot: power-cycle the servo")
        self._unicast(dxl_id, "reboot", self._ph.reboot)
        deadline = time.monotonic() + 2.0  # est.: the firmware boots in well under a second
        while True:
            comm = self._ph.ping(self._require_port(), dxl_id)[1]
            if comm == sdk.COMM_SUCCESS or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        self._configure_ram(dxl_id)  # the reboot restored the RAM defaults (profile, watchdog)

    # ------------------------------------------------------------------ control tick
    @_torque_off_on_interrupt
    def command(self, excursion_m: np.ndarray) -> None:
        """One sync write of all six Goal Positions for these tendon excursions (m, + = reeled in)."""
        x = np.asarray(excursion_m, dtype=float).reshape(-1)
        if x.shape != (len(self.ids),) or not np.all(np.isfinite(x)):
            raise ValueError(f"excursion_m must be {len(self.ids)} finite values, got {excursion_m!r}")
        ticks = np.array([int(g.excursion_to_ticks(v)) for g, v in zip(self.seas, x, strict=True)])
        item = self.table["Goal Position"]
        for k in np.flatnonzero((ticks < item.lo) | (ticks > item.hi)):
            raise ValueError(f"{TENDONS[k]} excursion {x[k] * 1e3:.1f} mm is {ticks[k]} ticks, beyond the "
                             f"servo's {item.lo}..{item.hi}")
        self._sync_write("Goal Position", ticks)
        self._goal_ticks = ticks

    @_torque_off_on_interrupt
    def read(self) -> ActuatorSample:
        """One sync read (2.0) / bulk read (1.0) of all six; a fault turns torque off and raises ServoError."""
        host_time_s = time.monotonic()
        goals = self._goal_ticks  # a command between this read's retries replaces it: no check this time
        replies = self._read_block()
        rows = np.array([self._decode(dxl_id, *replies[dxl_id]) for dxl_id in self.ids])  # (6, 7)
        goal, position, tick, moving, hw = (rows[:, j].astype(np.int64) for j in range(5))
        velocity_rad_s, current_A = rows[:, 5], rows[:, 6]
        direction = np.array([g.direction for g in self.seas])
        sample = ActuatorSample(
            host_time_s=host_time_s,
            excursion_m=np.array([g.ticks_to_excursion(t) for g, t in zip(self.seas, position, strict=True)]),
            velocity_m_per_s=np.array([g.angular_to_tendon(w) for g, w in zip(self.seas, velocity_rad_s, strict=True)]),
            current_A=current_A * direction,  # + = pulling the tendon in, whatever way the spool is mounted
            moving=moving.astype(bool), hardware_error=hw, device_tick_ms=tick)
        self._last_ticks = position
        if hw.any():
            self._fault(sample, hw)
        if self._goal_ticks is goals:
            self._check_goals(goal, sample)
        return sample

    # ------------------------------------------------------------------ read helpers
    def _decode(self, dxl_id: int, data: bytes, error: int) -> tuple[int, int, int, int, int, float, float]:
        """(goal, position, tick, moving, hardware error, velocity rad/s, current A) from one status packet."""
        f = functools.partial(self._field, data)
        head = (f("Goal Position"), f("Present Position"), f("Realtime Tick"), f("Moving"))
        if self.p1:
            speed = mx64.decode_sign_magnitude_p1(f("Present Speed")) * mx64.moving_speed_units_to_rad_s(1)
            current = (f("Current") - mx64.CURRENT_P1_ZERO) * mx64.CURRENT_P1_MA_PER_UNIT * 1e-3
            return (*head, error & mx64.HW_BITS_AS_P1, speed, current)
        hw = self._read_item(dxl_id, "Hardware Error Status") if error & mx64.STATUS_ALERT_P2 else 0
        return (*head, hw, mx64.velocity_units_to_rad_s(f("Present Velocity")),
                f("Present Current") * mx64.CURRENT_MA_PER_UNIT * 1e-3)

    def _read_ticks(self) -> list[int]:
        self.read()
        ticks = self._last_ticks
        assert ticks is not None, "read() keeps the positions it read"
        return [int(t) for t in ticks]

    def _field(self, data: bytes, name: str) -> int:
        item = self.table[name]
        at = item.address - self.read_address
        return int.from_bytes(data[at:at + item.size], "little", signed=item.signed)

    def _read_block(self) -> dict[int, tuple[bytes, int]]:
        port = self._require_port()
        self.stats.transactions += 1
        if self.p1:
            group = sdk.GroupBulkRead(port, self._ph)
            for dxl_id in self.ids:
                group.addParam(dxl_id, self.read_address, self.read_length)
            group.makeParam()
            result = self._ph.bulkReadTx(port, group.param, len(group.param))
        else:
            group = sdk.GroupSyncRead(port, self._ph, self.read_address, self.read_length)
            for dxl_id in self.ids:
                group.addParam(dxl_id)
            result = group.txPacket()
        if result != sdk.COMM_SUCCESS:
            raise CommError(f"read not sent: {self._ph.getTxRxResult(result)}", result=result)
        replies, failed = self._collect(port)
        for dxl_id, kind in failed.items():
            self._note_failure(dxl_id, kind)
            data, _, error = self._unicast(dxl_id, "read", self._ph.readTxRx, self.read_address, self.read_length,
                                           n_data=self.read_length, after_failure=kind)
            replies[dxl_id] = (bytes(data), error)
        return replies

    def _read_item(self, dxl_id: int, name: str) -> int:
        item = self.table[name]
        data = self._unicast(dxl_id, f"read {name}", self._ph.readTxRx, item.address, item.size, n_data=item.size)[0]
        return int.from_bytes(bytes(data[:item.size]), "little", signed=item.signed)

    def _check_goals(self, goal: np.ndarray, sample: ActuatorSample) -> None:
        """A goal register that differs from the last command: a lost sync write, or a tripped watchdog."""
        if self._goal_ticks is None:
            return
        for k in np.flatnonzero(goal != self._goal_ticks):
            dxl_id = self.ids[k]
            self.stats.goal_mismatches += 1
            self._event(dxl_id, "goal mismatch", f"goal register {goal[k]}, commanded {self._goal_ticks[k]}")
            if not self.p1 and self._read_item(dxl_id, "Bus Watchdog") == mx64.BUS_WATCHDOG_ERROR:
                silence_ms = 1e3 * self._require_port().longest_silence_s(SILENCE_LOOKBACK_S)
                self._fault(sample, None, dxl_id, f"bus watchdog tripped (host silent > {self.watchdog_ms:g} ms; "
                            f"this host's longest silence on the bus in the last {SILENCE_LOOKBACK_S:g} s: "
                            f"{silence_ms:.0f} ms); goals are refused until enable()")

    def _fault(self, sample: ActuatorSample, hw: np.ndarray | None, dxl_id: int | None = None,
               what: str = "") -> None:
        """Torque off on all six, then raise ServoError for the (first) faulty servo."""
        if hw is not None:
            k = int(np.flatnonzero(hw)[0])
            dxl_id, bits = self.ids[k], int(hw[k])
            names = [n for b, n in HW_ERROR_NAMES.items() if bits & b] or [f"0x{bits:02X}"]
            others = [f"ID {self.ids[j]} ({TENDONS[j]})" for j in np.flatnonzero(hw) if j != k]
            what = f"hardware error {', '.join(names)}: shut down until rebooted or power-cycled" + (
                f"; also {', '.join(others)}" if others else "")
        self._event(dxl_id, "hardware error" if hw is not None else "fault", what)
        self._safe_torque_off()
        assert dxl_id is not None, "a fault names its servo: by hw or by dxl_id"
        error = ServoError(dxl_id, self.tendon(dxl_id), what, 0 if hw is None else int(hw[self.ids.index(dxl_id)]))
        error.sample = sample
        raise error

    # ------------------------------------------------------------------ torque off on faults and Ctrl-C
    def _safe_torque_off(self) -> None:
        """Torque off for the fault paths: never masks the fault being reported."""
        try:
            self.torque_off()
        except DeviceError as exc:
            self._event(None, "torque off", f"failed: {exc}")

    def _emergency_torque_off(self) -> None:
        if self._port is None:
            return
        # Ctrl-C may have landed between the SDK's tx and rx: release its busy flag. It may also have cut a
        # packet short, and a servo then swallows the next bytes as that packet's tail: send the torque-off twice.
        self._port.is_using = False
        for _ in range(2):
            self._safe_torque_off()
