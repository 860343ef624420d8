"""The MX-64 bus's transaction layer: instruction packets out, status packets back, every failure counted.

``Mx64Link`` is the part of ``Mx64Bus`` that talks to the SDK's packet handler and knows nothing of tendons:
unicast instructions with bounded retries, control-table writes, broadcast Sync Writes, and the receive loop
that collects a group read's status packets by ID with the SDK's parser (GroupSyncRead.rxPacket drops the
error byte and readRx discards other servos' packets). Each reply is classified by its error byte and length:
usable, our instruction arrived damaged (resent), refused by the servo, or too short (corrupt). A bad or
missing reply is retried for that servo alone by unicast, at most ``max_retries`` times, and counted in
``stats`` / logged in ``events`` (between two tries ``between_tries`` is called, so the owner of a shared bus
may let a waiting command out first); a servo still failing after the retries has torque turned off on all six
and raises ``ServoError`` (no reply, refused) or ``CommError`` (corrupted replies, a port failure).

Also here: the error types, the ``BusStats`` / ``BusEvent`` records, and ``_Port``, the SDK port with an
optional floor under its packet timeout. The host class provides the state ``Mx64Link`` declares (the IDs,
the protocol and control table, the port, the counters) and ``tendon()`` and ``_safe_torque_off()``.
"""

from __future__ import annotations

import contextlib
import select
import socket
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field

import dynamixel_sdk as sdk
import serial
from uartlab.drivers import mx64
from uartlab.drivers.interfaces import ActuatorSample, DeviceError

# Where the error byte and the parameters sit in an SDK rx packet (protocolN_packet_handler.PKT_*).
_ERR_AT = {2.0: 8, 1.0: 4}
_ID_AT = {2.0: 4, 1.0: 2}
# Protocol 1.0 error bits about the instruction (the others are hardware conditions).
_P1_INSTRUCTION_BITS = mx64.ERRBIT_ANGLE | mx64.ERRBIT_RANGE | mx64.ERRBIT_CHECKSUM | mx64.ERRBIT_INSTRUCTION


class ServoError(DeviceError):
    """One servo failed: a hardware error (shutdown), no reply (lost) or a refused instruction."""

    def __init__(self, servo_id: int, tendon: str, what: str, hardware_error: int = 0):
        self.servo_id, self.tendon, self.what, self.hardware_error = servo_id, tendon, what, hardware_error
        self.sample: ActuatorSample | None = None  # the read that found the fault, when there was one
        super().__init__(f"MX-64 ID {servo_id} ({tendon})", what)


class CommError(DeviceError):
    """The bus itself failed (port, corrupted replies beyond the retries); names the servo when one."""

    def __init__(self, what: str, servo_id: int | None = None, tendon: str | None = None,
                 result: int | None = None):
        self.servo_id, self.tendon, self.result = servo_id, tendon, result
        device = "MX-64 bus" if servo_id is None else f"MX-64 ID {servo_id} ({tendon})"
        super().__init__(device, what)


@dataclass
class BusStats:
    """Counts since connect(): instruction packets sent, retries, failed replies; failures per servo ID."""

    transactions: int = 0
    retries: int = 0
    timeouts: int = 0
    corrupt: int = 0
    status_errors: int = 0
    goal_mismatches: int = 0
    by_servo: dict[int, Counter] = field(default_factory=dict)

    def count(self, servo_id: int, kind: str) -> None:
        self.by_servo.setdefault(servo_id, Counter())[kind] += 1


@dataclass(frozen=True)
class BusEvent:
    host_time_s: float
    servo_id: int | None
    kind: str       # "timeout", "corrupt", "status", "goal mismatch", "hardware error", "lost", "torque off"
    detail: str


READ_WAIT_S = 0.002     # the longest wait for a status packet's next bytes before the SDK checks its timeout
READ_YIELD_S = 100e-6   # where the port cannot be waited on (no select on it): a short sleep instead
SILENCE_NOTED_S = 0.02  # a pause between instruction packets this long is kept: the Bus Watchdog's unit
SILENCES_KEPT = 64


class _Port(sdk.PortHandler):
    """The SDK port with an optional floor under its ~34 ms packet timeout (for loaded hosts and twins)."""

    packet_timeout: float   # the SDK's, ms
    is_open: bool

    def __init__(self, name: str, min_timeout_ms: float | None):
        super().__init__(name)
        self.min_timeout_ms = min_timeout_ms
        # This host's pauses between instruction packets (when each ended, how long): what the servos' Bus
        # Watchdog measures, from this side, so a trip can say whether this host was the silent one.
        self.silences: deque[tuple[float, float]] = deque(maxlen=SILENCES_KEPT)
        self.last_write_s: float | None = None
        self.lost: DeviceError | None = None   # set when the line went away under a transaction

    def writePort(self, packet):  # noqa: N802 (the SDK's name)
        now = time.monotonic()
        if self.last_write_s is not None and now - self.last_write_s >= SILENCE_NOTED_S:
            self.silences.append((now, now - self.last_write_s))
        self.last_write_s = now
        try:
            return super().writePort(packet)
        except (OSError, serial.SerialException) as exc:
            raise self._line_lost(exc) from exc

    def clearPort(self):  # noqa: N802 (the SDK's name)
        # Every transaction starts by draining the input, the first read to meet a line gone away.
        try:
            return super().clearPort()
        except (OSError, serial.SerialException) as exc:
            raise self._line_lost(exc) from exc

    def _line_lost(self, exc: Exception) -> DeviceError:
        """The line went away mid-transaction (an adapter unplugged, a serial-over-IP peer or the bus twin
        gone). The SDK set its busy flag for the transaction and would answer every later one "Port is in
        use!": released here, and each later transaction says what happened instead."""
        self.is_using = False
        self.lost = DeviceError("MX-64 bus", f"the serial line {self.port_name} is gone ({exc})")
        return self.lost

    def longest_silence_s(self, within_s: float) -> float:
        """The longest this host sent nothing on the bus, over the last ``within_s`` (the pause going on now
        included); 0 before anything was sent."""
        if self.last_write_s is None:
            return 0.0
        now = time.monotonic()
        recent = [silence for ended_s, silence in self.silences if now - ended_s <= within_s]
        return max([now - self.last_write_s, *recent])

    def setPacketTimeout(self, packet_length):  # noqa: N802 (the SDK's name)
        super().setPacketTimeout(packet_length)
        if self.min_timeout_ms:
            self.packet_timeout = max(self.packet_timeout, self.min_timeout_ms)

    def setupPort(self, cflag_baud):  # noqa: N802 (the SDK's name)
        """As the SDK's, and a serial line given as a pyserial URL (``socket://host:port``: a serial-over-IP
        adapter, or the bus twin of a twin rig) opened with ``serial_for_url``."""
        if "://" not in self.port_name:
            return super().setupPort(cflag_baud)
        if self.is_open:
            self.closePort()
        self.ser = serial.serial_for_url(self.port_name, baudrate=self.baudrate, timeout=0)
        line = getattr(self.ser, "_socket", None)   # pyserial's socket:// leaves Nagle on: each packet at once
        if line is not None:
            line.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.is_open = True
        self.ser.reset_input_buffer()
        self.tx_time_per_byte = (1000.0 / self.baudrate) * 10.0
        return True

    def closePort(self):  # noqa: N802 (the SDK's name)
        """As the SDK's; a ``socket://`` line is shut at once, where pyserial's close then sleeps 0.3 s "for
        quick reconnects" to the same server (every rig stop paid it; this port never reopens the line)."""
        line = getattr(self.ser, "_socket", None)
        if line is not None:
            with contextlib.suppress(OSError):   # the other end already gone
                line.shutdown(socket.SHUT_RDWR)
            line.close()
            self.ser._socket, self.ser.is_open = None, False   # so pyserial's close() is a no-op
        super().closePort()

    def readPort(self, length):  # noqa: N802 (the SDK's name)
        # The SDK waits for a status packet by calling this in a tight loop on a non-blocking port: it holds
        # the GIL and a core for the whole wait, starving every other thread of this process (the IK, the
        # GUI, an in-process twin's servos). An empty read waits until bytes arrive instead (select on the
        # port, at most READ_WAIT_S, well inside the SDK's ~34 ms timeout): one wake per arrival, where a
        # fixed 100 us nap woke ten times per transaction and cost the core a sixth of a CPU at 200 Hz.
        try:
            data = super().readPort(length)
        except (OSError, serial.SerialException) as exc:
            raise self._line_lost(exc) from exc
        if not data:
            self._wait_for_bytes()
        return data

    def _wait_for_bytes(self) -> None:
        try:
            select.select([self.ser.fileno()], [], [], READ_WAIT_S)
        except (AttributeError, OSError, ValueError, serial.SerialException):  # e.g. Windows: no select on a COM port
            time.sleep(READ_YIELD_S)


class Mx64Link:
    """Transactions on the bus for ``Mx64Bus`` (a mixin: the state it uses is its host's, declared here)."""

    ids: tuple[int, ...]
    p1: bool                    # Protocol 1.0
    protocol: float
    port: str                   # the serial port's name
    table: dict[str, mx64.ControlItem]
    read_length: int            # bytes per servo of a group read
    max_retries: int
    stats: BusStats
    events: deque[BusEvent]
    _port: _Port | None         # None until connected
    _ph: sdk.PacketHandler
    # Called between the tries of one servo's transaction (and before a group read's retries): the bus is
    # idle there, so a shared-bus lock (app/rig/locked_actuators.py) may let a waiting command out first.
    between_tries: Callable[[], object] | None

    def tendon(self, dxl_id: int) -> str:
        raise NotImplementedError

    def _safe_torque_off(self) -> None:
        raise NotImplementedError

    def _between_tries(self) -> None:
        if self.between_tries is not None:
            self.between_tries()

    def _require_port(self) -> _Port:
        if self._port is None:
            raise DeviceError("MX-64 bus", f"{self.port} is not connected: call connect() first")
        if self._port.lost is not None:
            raise self._port.lost
        return self._port

    def _unicast(self, dxl_id: int, what: str, fn, *args, n_data: int | None = None,
                 after_failure: str | None = None):
        """One instruction to one servo with bounded retries on timeouts, corrupted replies and damaged
        instructions; returns the SDK's tuple. A refused instruction raises ServoError. ``after_failure``:
        the kind of failure of the group read this stands in for (every try is then a retry)."""
        port = self._require_port()
        tries = self.max_retries + (0 if after_failure else 1)
        kind: str | None = after_failure or "timeout"
        for attempt in range(tries):
            if attempt or after_failure:
                self._between_tries()
                self.stats.retries += 1
                self.stats.count(dxl_id, "retries")
            self.stats.transactions += 1
            out = fn(port, dxl_id, *args)
            comm, error = out[-2], out[-1]
            if comm == sdk.COMM_SUCCESS:
                kind = self._classify(error, len(out[0]) if n_data else 0, n_data or 0)
                if kind is None:
                    return out
                if kind == "refused":
                    self._note_failure(dxl_id, "status")
                    raise ServoError(dxl_id, self.tendon(dxl_id), f"{what} refused: {self._error_text(error)}")
            elif comm == sdk.COMM_RX_CORRUPT:
                kind = "corrupt"
            elif comm == sdk.COMM_RX_TIMEOUT:
                kind = "timeout"
            else:
                raise CommError(f"{what}: {self._ph.getTxRxResult(comm)}", dxl_id, self.tendon(dxl_id), comm)
            self._note_failure(dxl_id, kind)
        tendon, total = self.tendon(dxl_id), self.max_retries + 1
        if what != "ping":  # a servo we can no longer hear or understand must not be left driving
            self._event(dxl_id, "lost" if kind == "timeout" else "fault", what)
            self._between_tries()  # a waiting command first: the torque off confirms each servo, one more wait
            self._safe_torque_off()
        if kind == "timeout":
            raise ServoError(dxl_id, tendon, f"no reply to {what} after {total} tries "
                                             "(unplugged, unpowered, wrong ID or baud rate?)")
        raise CommError(f"{what}: {kind} replies after {total} tries", dxl_id, tendon)

    def _classify(self, error: int, n_got: int = 0, n_expected: int = 0) -> str | None:
        """A reply's error byte and length: None usable; "status" our instruction arrived damaged (resend);
        "refused" the servo rejected it; "corrupt" too short (error replies carry no data)."""
        if self.p1:
            if error & mx64.ERRBIT_CHECKSUM:
                return "status"
            if error & _P1_INSTRUCTION_BITS:
                return "refused"
        else:
            code = error & ~mx64.STATUS_ALERT_P2
            if code == mx64.ERR_CRC:
                return "status"
            if code:
                return "refused"
        return "corrupt" if n_got < n_expected else None

    def _error_text(self, error: int) -> str:
        if self.p1:
            return ", ".join(n for b, n in mx64.ERROR_BITS_P1.items() if error & b) or "none"
        return mx64.ERROR_NAMES_P2.get(error & ~mx64.STATUS_ALERT_P2, f"error 0x{error:02X}")

    def _note_failure(self, dxl_id: int, kind: str) -> None:
        attr = {"timeout": "timeouts", "corrupt": "corrupt", "status": "status_errors"}[kind]
        setattr(self.stats, attr, getattr(self.stats, attr) + 1)
        self.stats.count(dxl_id, kind)
        self._event(dxl_id, kind, "reply failed")

    def _write(self, dxl_id: int, name: str, value: int) -> None:
        item = self.table[name]
        fn = {1: self._ph.write1ByteTxRx, 2: self._ph.write2ByteTxRx, 4: self._ph.write4ByteTxRx}[item.size]
        self._unicast(dxl_id, f"write {name}", fn, item.address, int(value) & ((1 << 8 * item.size) - 1))

    def _sync_write(self, name: str, values) -> None:
        """One broadcast Sync Write of ``name`` to all six (no status packets come back)."""
        port, item = self._require_port(), self.table[name]
        group = sdk.GroupSyncWrite(port, self._ph, item.address, item.size)
        for dxl_id, value in zip(self.ids, values, strict=True):
            group.addParam(dxl_id, list(int(value).to_bytes(item.size, "little", signed=item.signed)))
        self.stats.transactions += 1
        result = group.txPacket()
        if result != sdk.COMM_SUCCESS:
            raise CommError(f"sync write {name}: {self._ph.getTxRxResult(result)}", result=result)

    def _collect(self, port: _Port) -> tuple[dict[int, tuple[bytes, int]], dict[int, str]]:
        """Status packets by ID until all have come or the packet timeout ends; returns (good, failed kinds)."""
        pending, replies, failed = set(self.ids), {}, {}
        err_at, id_at = _ERR_AT[self.protocol], _ID_AT[self.protocol]
        while pending:
            rx, result = self._ph.rxPacket(port) if self.p1 else self._ph.rxPacket(port, False)
            if result == sdk.COMM_SUCCESS:
                dxl_id, data = rx[id_at], bytes(rx[err_at + 1:err_at + 1 + self.read_length])
                if dxl_id in pending:
                    pending.discard(dxl_id)
                    kind = self._classify(rx[err_at], len(data), self.read_length)
                    if kind is None:
                        replies[dxl_id] = (data, rx[err_at])
                    else:  # a refusal is retried by unicast too, whose reply then raises with the reason
                        failed[dxl_id] = "corrupt" if kind == "corrupt" else "status"
            elif result == sdk.COMM_RX_CORRUPT and len(rx) > id_at and rx[id_at] in pending:
                pending.discard(rx[id_at])  # a bad CRC: the ID is still the best guess of whose it was
                failed[rx[id_at]] = "corrupt"
            else:
                failed.update({dxl_id: "timeout" for dxl_id in pending})
                break
        return replies, failed

    def _event(self, dxl_id: int | None, kind: str, detail: str) -> None:
        self.events.append(BusEvent(time.monotonic(), dxl_id, kind, detail))
