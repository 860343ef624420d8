"""The MX-64 bus twin: six Dynamixel MX-64s on a pseudo-terminal, driving the physics plant.

    with DxlBusTwin(plant, protocol=2.0, return_delay_us=0) as bus:
        port = dynamixel_sdk.PortHandler(bus.port)   # the unmodified vendor SDK talks to it
        bus.url                                      # the same bus as a serial line over TCP (socket://...)

Two ways onto the one bus: the pty, which any serial program opens by name (the vendor's examples), and a
TCP loopback port in pyserial's ``socket://`` form, as a serial-over-IP adapter serves a line. The rig core
uses the second. Bytes written to a pty reach its other side only when the kernel's tty worker (a kworker
at normal priority) has run, and a reader's select() waits for that worker: on a busy machine it queued
38 ms to over a second behind CPU-bound processes (perf sched), whatever the reader's own priority, and the
driver missed its replies. Loopback TCP delivers in the sender's own system call. The same worker makes a
host's output flush lossy on the pty: tcflush(TCOFLUSH) (pyserial's reset_output_buffer, which pypot calls
before every packet) discards what the host wrote and the worker has not yet handed over, so a broadcast
(no reply awaited) just before it can vanish, about one in two in a tight loop here. A USB adapter's driver has
no such flush (usb-serial defines no flush_buffer): there the packet has gone out.

Each servo keeps the real control table of its firmware (drivers/mx64.py) in a bytearray; reads of present
values come from ``plant.servo_state(i)``, writes of torque, goal and profile go to the plant. Servo index i in
the plant is the position of its ID in ``ids``. Firmware behaviour follows the ROBOTIS e-manual; where it is
silent the choice is marked "guess" (see also the end of this docstring).

Firmware facts modelled (e-manual):
- Status packets carry the Alert bit (0x80, 2.0) / the hardware bits (1.0) while Hardware Error Status != 0.
- EEPROM (2.0: below address 64) is locked while torque is on -> Access Error. Protocol 1.0 MX firmware locks
  EEPROM only through Lock (47) = 1, not through torque (control_table_torque_enable.md, _lock.md); Lock then
  stays 1 until power-up.
- Protocol 1.0 multi-turn mode (both angle limits 4095): Present Position = actual / Resolution Divider + Multi
  Turn Offset, and Goal Position counts in the same units (control_table_resolution_divider.md).
- Protocol 2.0: Present Position is continuous over turns until a reboot, a change to Position Control Mode or
  torque on in it brings it back within one turn, Homing Offset still added (control_table_opmode_note.md).
  Position Control Mode ignores a Homing Offset beyond +-1024 (control_table_homingoffset.md).
- Broadcast reads/writes get no status packet; ping always answers, whatever the Status Return Level.
- Bus Watchdog (98, 20 ms units, 2.0 only; control_table_buswatchdog.md): with torque on, when no instruction
  packet has reached the servo for longer than the set time, "the DYNAMIXEL will stop" with Profile
  Acceleration/Velocity "applied as 0", and the item reads -1 (0xFF). The e-manual never says torque goes
  off, so the twin stops dead and holds position with torque on. While tripped, writes to the goal items
  get a Data Range Error; writing 0 clears the error.
- Reboot (2.0 only; Protocol 1.0 has no Reboot, and dynamixel_sdk's 1.0 reboot() sends nothing) is the only
  way out of a shutdown: it clears the hardware error, turns torque off and restores the RAM area.
Guesses: a unicast packet with a bad CRC/checksum gets a CRC error (2.0) / checksum bit (1.0) reply from the
addressed servo; parameters that do not fit an instruction get Data Length Error (2.0) / Instruction bit (1.0);
on 1.0, writes to read-only or undefined addresses get the Range bit and writes to a locked EEPROM (or of 0 to
Lock) the Instruction bit; a non-zero Bus Watchdog write while it is tripped is refused with Data Range Error.
Indirect addressing (2.0) maps Indirect Data n onto the address in Indirect Address n (dxl_servo.py).
Timing: the serving thread asks for SCHED_FIFO (realtime.py) and waits out the Return Delay Time on the CPU,
counted from the end of the instruction packet; ``stats.slowest_reply_s`` is its worst answer so far, so a
client's missed timeout can be told from a late twin.
Not modelled: baud rate (a pty has none), time-based profiles, operating modes other than (extended)
position control, boot time after a reboot, Fast Sync/Bulk Read (0x8A/0x9A: not in the MX(2.0) e-manual).
"""

from __future__ import annotations

import logging
import os
import random
import select
import socket
import threading
import time
import tty
from collections import Counter
from dataclasses import dataclass, field

from uartlab.drivers import mx64
from uartlab.drivers.mx64 import BROADCAST_ID
from uartlab.drivers.twins import dxl_protocol as wire
from uartlab.drivers.twins import realtime
from uartlab.drivers.twins.dxl_servo import Servo, ServoPlant

log = logging.getLogger(__name__)

RX_BUFFER_MAX = 8192           # bounded: garbage can never grow the buffer without limit
INTER_BYTE_TIMEOUT_S = 0.02    # est. (undocumented firmware packet timeout): a half packet this stale is dropped
POLL_S = 0.002                 # select() period: the bus watchdog's resolution (its unit is 20 ms)


@dataclass
class BusStats:
    """What the twin has seen: valid packets, status packets sent, errors by kind, and its slowest answer
    (instruction packet read -> status packet written, return delay included)."""

    packets: int = 0
    replies: int = 0
    bytes_in: int = 0
    garbage_bytes: int = 0
    errors: Counter = field(default_factory=Counter)
    slowest_reply_s: float = 0.0


class BusFaults:
    """Faults injected into the twin's status packets: dropped (never sent) or with a corrupted CRC/checksum."""

    def __init__(self, seed: int = 0):
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self.drop_probability = 0.0
        self.corrupt_probability = 0.0
        self._drop, self._corrupt = 0, 0

    def drop_next(self, n: int = 1) -> None:
        with self._lock:
            self._drop += n

    def corrupt_next(self, n: int = 1) -> None:
        with self._lock:
            self._corrupt += n

    def clear(self) -> None:
        with self._lock:
            self._drop = self._corrupt = 0
            self.drop_probability = self.corrupt_probability = 0.0

    def take(self) -> str | None:
        """The fault for the next status packet: "drop", "corrupt" or None."""
        with self._lock:
            if self._drop:
                self._drop -= 1
                return "drop"
            if self._corrupt:
                self._corrupt -= 1
                return "corrupt"
        if self.drop_probability and self._rng.random() < self.drop_probability:
            return "drop"
        if self.corrupt_probability and self._rng.random() < self.corrupt_probability:
            return "corrupt"
        return None


@dataclass
class _Line:
    """One way onto the bus (the pty's master, or the TCP host's socket): its bytes not yet served."""

    fd: int
    buf: bytearray = field(default_factory=bytearray)
    last_byte_s: float = 0.0


class DxlBusTwin:
    """Six MX-64s answering Dynamixel Protocol 2.0 (or 1.0) on a pty; ``port`` is the path for PortHandler."""

    def __init__(self, plant: ServoPlant, ids: tuple[int, ...] = (1, 2, 3, 4, 5, 6), protocol: float = 2.0,
                 return_delay_us: float | None = None, seed: int = 0):
        if protocol not in (1.0, 2.0):
            raise ValueError(f"protocol must be 1.0 or 2.0, got {protocol}")
        max_id = mx64.MAX_ID_P1 if protocol == 1.0 else mx64.MAX_ID_P2
        if len(set(ids)) != len(ids) or not all(0 <= i <= max_id for i in ids):
            raise ValueError(f"servo IDs must be distinct and in 0..{max_id}, got {ids}")
        self.plant, self.protocol = plant, float(protocol)
        # None: the firmware default (250 x 2 us = 500 us); otherwise the nearest settable value.
        delay_raw = None if return_delay_us is None else min(254, max(0, round(return_delay_us / 2)))
        self.servos = [Servo(i, dxl_id, self.protocol, plant, delay_raw) for i, dxl_id in enumerate(ids)]
        self.faults = BusFaults(seed)
        self.stats = BusStats()
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._master = self._slave = -1
        self._port = ""
        self._listener: socket.socket | None = None
        self._host: socket.socket | None = None   # the one host connected over TCP (a line has one host)
        self._sink = -1                            # where the packet being served came from: its reply goes there
        self._heard_at = 0.0  # when the bytes that completed the packet being served were read
        self.realtime = False  # whether the serving thread got SCHED_FIFO (drivers/twins/realtime.py)

    # ------------------------------------------------------------ life cycle
    @property
    def port(self) -> str:
        if not self._port:
            raise RuntimeError("the bus twin is not started")
        return self._port

    @property
    def url(self) -> str:
        """The bus as a serial line over TCP, for pyserial's ``serial_for_url``."""
        if self._listener is None:
            raise RuntimeError("the bus twin is not started")
        host, port = self._listener.getsockname()[:2]
        return f"socket://{host}:{port}"

    def start(self) -> DxlBusTwin:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.setblocking(False)
        self._master, self._slave = os.openpty()
        # Raw before anyone opens it, so the line discipline never echoes or maps CR/LF (device-notes 2);
        # the twin keeps the slave open so the master never sees EIO when the host closes its side.
        tty.setraw(self._slave)
        os.set_blocking(self._master, False)
        self._port = os.ttyname(self._slave)
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="dxl-bus-twin", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
            self._thread = None
        for fd in (self._master, self._slave):
            if fd >= 0:
                os.close(fd)
        self._master = self._slave = -1
        for sock in (self._host, self._listener):
            if sock is not None:
                sock.close()
        self._host = self._listener = None

    def __enter__(self) -> DxlBusTwin:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # ------------------------------------------------------------ test and fault API
    def servo(self, dxl_id: int) -> Servo:
        for s in self.servos:
            if s.dxl_id == dxl_id:
                return s
        raise KeyError(f"no servo with ID {dxl_id} on the bus")

    def value(self, dxl_id: int, item: str) -> int:
        """A control-table item as the host would read it now (plugged in or not)."""
        with self._lock:
            s = self.servo(dxl_id)
            s.refresh()
            return s.get(item)

    def unplug(self, dxl_id: int) -> None:
        """Cut the servo's data line: it hears nothing and answers nothing (power and torque stay)."""
        with self._lock:
            self.servo(dxl_id).plugged = False

    def replug(self, dxl_id: int) -> None:
        with self._lock:
            self.servo(dxl_id).plugged = True

    def trip_watchdog(self, dxl_id: int) -> None:
        """The servo's Bus Watchdog lets go now, as if the host had been silent past it though it was not (what
        a USB adapter holding packets back looks like from the servo). Torque on and the watchdog set, as the
        firmware's own trip."""
        with self._lock:
            s = self.servo(dxl_id)
            s.check_watchdog(s.last_heard + 1e3)

    def power_cycle(self, dxl_id: int) -> None:
        """Power off and on: like a reboot (the only recovery from a shutdown on Protocol 1.0)."""
        with self._lock:
            self.servo(dxl_id).reboot()

    # ------------------------------------------------------------ serving thread
    def _run(self) -> None:
        self.realtime = realtime.ask_for_realtime(realtime.BUS_PRIORITY)
        assert self._listener is not None
        pty, tcp = _Line(self._master), _Line(-1)
        while not self._stop.is_set():
            listening = self._listener.fileno()
            sources = [self._master, listening] + ([tcp.fd] if tcp.fd >= 0 else [])
            ready, _, _ = select.select(sources, [], [], POLL_S)
            now = time.monotonic()
            if listening in ready:
                self._accept(tcp)
            for line in (pty, tcp):
                if line.fd >= 0 and line.fd in ready:
                    self._receive(line, now)
                self._serve(line, now)
            with self._lock:
                for s in self.servos:
                    s.check_watchdog(now)

    def _accept(self, tcp: _Line) -> None:
        """A host connects over TCP; one connected before has gone (a serial line has one host)."""
        assert self._listener is not None
        try:
            host, _ = self._listener.accept()
        except (BlockingIOError, InterruptedError):
            return
        if self._host is not None:
            self._host.close()
        host.setblocking(False)
        host.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # each status packet leaves at once
        self._host, tcp.fd = host, host.fileno()
        tcp.buf.clear()

    def _receive(self, line: _Line, now: float) -> None:
        try:
            chunk = os.read(line.fd, 4096)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:  # pty EIO: no slave open at the moment; a TCP reset: the host is gone
            chunk = b""
        if not chunk:
            if line.fd == self._master:
                time.sleep(POLL_S)   # wait for a host to open the pty
            elif self._host is not None:
                self._host.close()   # the TCP host hung up
                self._host, line.fd = None, -1
                line.buf.clear()
            return
        self.stats.bytes_in += len(chunk)
        line.buf += chunk
        line.last_byte_s = self._heard_at = now
        if len(line.buf) > RX_BUFFER_MAX:
            self.stats.garbage_bytes += len(line.buf) - RX_BUFFER_MAX
            del line.buf[:len(line.buf) - RX_BUFFER_MAX]

    def _serve(self, line: _Line, now: float) -> None:
        if not line.buf:
            return
        self._sink = line.fd
        self._drain(line.buf)
        if line.buf and now - line.last_byte_s > INTER_BYTE_TIMEOUT_S:
            self.stats.garbage_bytes += 1  # a header that never completed: look for the next one
            del line.buf[0]
            self._drain(line.buf)

    def _drain(self, buf: bytearray) -> None:
        while buf:
            packet, consumed = wire.split_packet(buf, self.protocol)
            if packet is None:
                self.stats.garbage_bytes += consumed
            del buf[:consumed]
            if packet is not None:
                try:
                    with self._lock:
                        self._handle(packet)
                except Exception:  # a twin bug must not kill the bus: count it and keep serving
                    log.exception("bus twin failed on %r", packet)
                    self.stats.errors["internal"] += 1
            elif consumed == 0:
                return

    # ------------------------------------------------------------ instructions
    def _find(self, dxl_id: int) -> Servo | None:
        return next((s for s in self.servos if s.plugged and s.dxl_id == dxl_id), None)

    def _handle(self, p: wire.Packet) -> None:
        broadcast = p.dxl_id == BROADCAST_ID
        target = None if broadcast else self._find(p.dxl_id)
        if not p.intact:
            self.stats.errors["crc"] += 1
            if target is not None:
                self._reply(target, "other", "crc")
            return
        if p.instruction == mx64.INST_STATUS:
            return  # another device's status packet on the bus
        self.stats.packets += 1
        now = time.monotonic()
        for s in self.servos:  # every instruction packet a servo hears feeds its bus watchdog
            if s.plugged and (broadcast or s is target):
                s.last_heard = now
        if not broadcast and target is None:
            return  # nobody with that ID: silence, as on a real bus
        known = mx64.INSTRUCTIONS_P1 if self.protocol == 1.0 else mx64.INSTRUCTIONS_P2
        handler = getattr(self, f"_inst_{p.instruction:02x}", None) if p.instruction in known else None
        if handler is None:
            self.stats.errors["instruction"] += 1
            if target is not None:
                self._reply(target, "other", "instruction")
            return
        try:
            handler(p, target)
        except wire.MalformedPacket:  # guess: 2.0 calls it a length error; 1.0 has no such bit
            error = "instruction" if self.protocol == 1.0 else "data length"
            self.stats.errors[error] += 1
            if target is not None:
                self._reply(target, "other", error)

    def _inst_01(self, p: wire.Packet, target: Servo | None) -> None:  # ping
        servos = [target] if target else sorted((s for s in self.servos if s.plugged), key=lambda s: s.dxl_id)
        for s in servos:
            params = b"" if self.protocol == 1.0 else bytes(s.table[0:2]) + bytes(s.table[6:7])
            self._reply(s, "ping", None, params)

    def _inst_02(self, p: wire.Packet, target: Servo | None) -> None:  # read
        address, length = wire.decode_read(p.params, self.protocol)
        if target is not None:
            self._read_reply(target, address, length)

    def _inst_03(self, p: wire.Packet, target: Servo | None) -> None:  # write
        address, data = wire.decode_write(p.params, self.protocol)
        for s in self._targets(target):
            self._answer(s, target, s.write(address, data))

    def _inst_04(self, p: wire.Packet, target: Servo | None) -> None:  # reg write
        address, data = wire.decode_write(p.params, self.protocol)
        for s in self._targets(target):
            error = s.write(address, data, apply=False)
            if error is None:
                s.pending = (address, data)
            self._answer(s, target, error)

    def _inst_05(self, p: wire.Packet, target: Servo | None) -> None:  # action
        for s in self._targets(target):
            if s.pending is None:  # Action without Reg Write: an error only when sent to this servo
                if target is not None:
                    self._answer(s, target, "instruction")
                continue
            address, data = s.pending
            s.pending = None
            self._answer(s, target, s.write(address, data))

    def _inst_06(self, p: wire.Packet, target: Servo | None) -> None:  # factory reset
        option = p.params[0] if p.params else 0xFF
        if target is None and option == 0xFF and self.protocol == 2.0:
            return  # MX(2.0) FW42+: a broadcast reset-all is ignored (protocol2.md)
        for s in self._targets(target):
            self._answer(s, target, None)
            s.factory_reset(option if self.protocol == 2.0 else 0xFF)

    def _inst_08(self, p: wire.Packet, target: Servo | None) -> None:  # reboot: answer first, then restart
        for s in self._targets(target):
            self._answer(s, target, None)
            s.reboot()

    def _inst_10(self, p: wire.Packet, target: Servo | None) -> None:  # clear multi-turn
        if target is not None:
            if bytes(p.params) != b"\x01\x44\x58\x4c\x22":
                self._answer(target, target, "data range")
            else:
                self._answer(target, target, target.clear_multi_turn())

    def _inst_82(self, p: wire.Packet, target: Servo | None) -> None:  # sync read
        address, length, ids = wire.decode_sync_read(p.params)
        if target is None:
            for dxl_id in ids:
                if (s := self._find(dxl_id)) is not None:
                    self._read_reply(s, address, length)

    def _inst_83(self, p: wire.Packet, target: Servo | None) -> None:  # sync write
        address, blocks = wire.decode_sync_write(p.params, self.protocol)
        for dxl_id, data in blocks.items():
            if target is None and (s := self._find(dxl_id)) is not None:
                self._count(s.write(address, data))

    def _inst_92(self, p: wire.Packet, target: Servo | None) -> None:  # bulk read
        for dxl_id, address, length in wire.decode_bulk_read(p.params, self.protocol):
            if target is None and (s := self._find(dxl_id)) is not None:
                self._read_reply(s, address, length)

    def _inst_93(self, p: wire.Packet, target: Servo | None) -> None:  # bulk write
        for dxl_id, address, data in wire.decode_bulk_write(p.params):
            if target is None and (s := self._find(dxl_id)) is not None:
                self._count(s.write(address, data))

    # ------------------------------------------------------------ status packets
    def _targets(self, target: Servo | None) -> list[Servo]:
        return [target] if target is not None else [s for s in self.servos if s.plugged]

    def _count(self, error: str | None) -> None:
        if error:
            self.stats.errors[error] += 1

    def _answer(self, s: Servo, target: Servo | None, error: str | None) -> None:
        """Count the error; reply only to a unicast packet (broadcast gets no status packet)."""
        self._count(error)
        if target is not None:
            self._reply(s, "other", error)

    def _read_reply(self, s: Servo, address: int, length: int) -> None:
        error, data = s.read(address, length)
        self._count(error)
        self._reply(s, "read", error, data)

    def _reply(self, s: Servo, kind: str, error: str | None, params: bytes = b"") -> None:
        level = s.get("Status Return Level")
        if (kind == "read" and level < 1) or (kind == "other" and level < 2):
            return
        packet = bytearray(wire.encode_status(self.protocol, s.dxl_id, s.status_error(error), params))
        # Return Delay Time counts from the end of the instruction packet. It is at most 508 us: without
        # real-time scheduling the twin waits it out on the CPU, as a sleep would hand the CPU away and on a
        # busy machine getting it back can take longer than the SDK's whole packet timeout (~34 ms).
        due = self._heard_at + s.get("Return Delay Time") * mx64.RETURN_DELAY_US_PER_UNIT * 1e-6
        if due > time.monotonic():  # the driver sets the delay to 0: no syscall then, and no GIL handed over
            if self.realtime:
                time.sleep(max(0.0, due - time.monotonic()))
            while time.monotonic() < due:
                pass
        fault = self.faults.take()
        if fault == "drop":
            self.stats.errors["dropped"] += 1
            return
        if fault == "corrupt":
            self.stats.errors["corrupted"] += 1
            packet[-1] ^= 0xFF
        # Counted before the bytes are visible: a driver that has read the reply never sees a count without it.
        self.stats.replies += 1
        try:
            os.write(self._sink, packet)
            self.stats.slowest_reply_s = max(self.stats.slowest_reply_s, time.monotonic() - self._heard_at)
        except (BlockingIOError, OSError):  # nobody reading and the pty buffer full, or the TCP host gone: lost
            self.stats.replies -= 1
            self.stats.errors["tx overflow"] += 1
