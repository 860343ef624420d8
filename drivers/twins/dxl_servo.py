"""One simulated MX-64: its control table (a bytearray at the real addresses) coupled to one plant servo.

The bus (dxl_bus.py) parses packets and calls ``read``/``write``; this module knows what the firmware does
with an address: which bytes are live (refreshed from ``plant.servo_state(i)``), which writes are refused
and with which error, and what a write does to the plant. Indirect addressing (2.0; control_table_
indirect_data.md): a byte of Indirect Data n stands for the byte at the address Indirect Address n holds,
with that item's size, range and access, so reads and writes are mapped byte by byte before anything else;
the default Indirect Address n is Indirect Data n's own address, which makes it plain storage. Errors are
protocol-neutral kinds ("access", "data range", ...) turned into the status byte of the servo's protocol by
``status_error``.
"""

from __future__ import annotations

import time
from typing import NamedTuple, Protocol

from uartlab.drivers import mx64
from uartlab.drivers.mx64 import ControlItem


class ServoPlant(Protocol):
    """What a servo needs of the plant (drivers/twins/plant.py ``Plant``): index i is the servo."""

    def servo_state(self, i: int): ...  # ServoState: angle_rad, velocity_rad_s, torque_Nm, current_A, ...
    def set_goal_angle(self, i: int, angle_rad: float) -> None: ...
    def set_torque(self, i: int, on: bool) -> None: ...
    def set_profile(self, i: int, max_velocity_rad_s: float, max_accel_rad_s2: float) -> None: ...
    def reboot(self, i: int) -> None: ...

# Error kind -> Protocol 2.0 error number / Protocol 1.0 error bit. "locked" (EEPROM write refused) is an
# Access Error on 2.0; on 1.0 the e-manual names no bit for it, so Instruction is a guess, as is Range for
# writes to read-only/undefined addresses. A 1.0 goal outside CW/CCW Angle Limit gets the Angle Limit bit
# (control_table_mx_goal_position.md); the twin then also ignores the goal.
_P2_CODE = {"result fail": mx64.ERR_RESULT_FAIL, "instruction": mx64.ERR_INSTRUCTION, "crc": mx64.ERR_CRC,
            "data range": mx64.ERR_DATA_RANGE, "data length": mx64.ERR_DATA_LENGTH,
            "data limit": mx64.ERR_DATA_LIMIT, "access": mx64.ERR_ACCESS, "locked": mx64.ERR_ACCESS}
_P1_BIT = {"result fail": mx64.ERRBIT_INSTRUCTION, "instruction": mx64.ERRBIT_INSTRUCTION,
           "crc": mx64.ERRBIT_CHECKSUM, "data range": mx64.ERRBIT_RANGE, "data length": mx64.ERRBIT_RANGE,
           "data limit": mx64.ERRBIT_ANGLE, "access": mx64.ERRBIT_RANGE, "locked": mx64.ERRBIT_INSTRUCTION}
_GOAL_ITEMS = ("Goal PWM", "Goal Current", "Goal Velocity", "Goal Position")


class _Layout(NamedTuple):
    """A control table item's bytes (table[start:end]) and the values they can hold."""
    start: int
    end: int
    signed: bool
    low: int
    high: int

    @classmethod
    def of(cls, item: ControlItem) -> _Layout:
        bits = 8 * item.size
        low, high = (-(1 << bits - 1), (1 << bits - 1) - 1) if item.signed else (0, (1 << bits) - 1)
        return cls(item.address, item.address + item.size, item.signed, low, high)


class Servo:
    """Control table + firmware rules of one MX-64; ``index`` is its servo in the plant."""

    def __init__(self, index: int, dxl_id: int, protocol: float, plant: ServoPlant,
                 return_delay_raw: int | None = None):
        self.index, self.protocol, self.plant = index, protocol, plant
        self.p1 = protocol == 1.0
        self.items = mx64.control_table(protocol)
        self.eeprom_end = mx64.EEPROM_END_P1 if self.p1 else mx64.EEPROM_END_P2
        self.table = bytearray(mx64.TABLE_SIZE_P1 if self.p1 else mx64.TABLE_SIZE_P2)
        # Per item: where its bytes are and the values they hold (get/set run ~20 000 times a second at 200 Hz).
        self._layout = {name: _Layout.of(item) for name, item in self.items.items()}
        self._owner: list[tuple[str, ControlItem] | None] = [None] * len(self.table)
        for name, item in self.items.items():
            for a in range(item.address, item.address + item.size):
                self._owner[a] = (name, item)
        # Indirect Data address -> the address of the Indirect Address item that says where it points.
        self._indirect = {item.address: self.items[name.replace("Data", "Address")].address
                          for name, item in self.items.items() if name.startswith("Indirect Data")}
        self._load_defaults(eeprom=True)
        self.set("ID", dxl_id)
        if return_delay_raw is not None:
            self.set("Return Delay Time", return_delay_raw)
        # Per-servo zero so that the plant's initial angle reads as the middle of the range.
        self.zero_ticks = mx64.CENTER_TICKS - mx64.rad_to_ticks(plant.servo_state(index).angle_rad)
        self.plugged = True
        self.pending: tuple[int, bytes] | None = None   # a Reg Write waiting for Action
        self.last_heard = time.monotonic()              # for the bus watchdog
        self._hold_goal_register()

    # ------------------------------------------------------------ table access
    @property
    def dxl_id(self) -> int:
        return self.table[self.items["ID"].address]

    def get(self, name: str, table: bytearray | None = None) -> int:
        at = self._layout[name]
        return int.from_bytes((self.table if table is None else table)[at.start:at.end], "little", signed=at.signed)

    def set(self, name: str, value: int) -> None:
        """Store a value, clamped to what the item's bytes can hold (live values never raise)."""
        at = self._layout[name]
        value = min(at.high, max(at.low, int(value)))
        self.table[at.start:at.end] = value.to_bytes(at.end - at.start, "little", signed=at.signed)

    def _load_defaults(self, eeprom: bool, keep: tuple[str, ...] = ()) -> None:
        for name, item in self.items.items():
            if name not in keep and (eeprom or item.address >= self.eeprom_end):
                self.set(name, item.default)

    # ------------------------------------------------------------ live values from the plant
    def _present_ticks(self, angle_rad: float) -> int:
        ticks = self.zero_ticks + mx64.rad_to_ticks(angle_rad)
        if not self.p1:
            return ticks + self._homing_offset()  # Present = actual + Homing Offset
        if self._multi_turn_p1():  # Present = actual / Resolution Divider + Multi Turn Offset, multi-turn only
            return int(ticks / self.get("Resolution Divider")) + self.get("Multi Turn Offset")
        return ticks

    def _homing_offset(self) -> int:
        offset = self.get("Homing Offset")
        if abs(offset) > mx64.HOMING_OFFSET_POSITION_MODE_MAX and self.get("Operating Mode") == mx64.OP_MODE_POSITION:
            return 0  # Position Control Mode ignores an offset beyond +-1024 (control_table_homingoffset.md)
        return offset

    def _goal_angle_rad(self, goal_ticks: int) -> float:
        """The angle a Goal Position stands for: the inverse of ``_present_ticks``."""
        if not self.p1:
            goal_ticks -= self._homing_offset()
        elif self._multi_turn_p1():
            goal_ticks = (goal_ticks - self.get("Multi Turn Offset")) * self.get("Resolution Divider")
        return mx64.ticks_to_rad(goal_ticks - self.zero_ticks)

    def refresh(self) -> None:
        s = self.plant.servo_state(self.index)
        tick_ms = int(getattr(self.plant, "time_s", time.monotonic()) * 1000) % mx64.REALTIME_TICK_WRAP
        self.set("Torque Enable", int(s.torque_enabled))
        self.set("Realtime Tick", tick_ms)
        self.set("Present Temperature", round(s.temperature_C))
        position = self._present_ticks(s.angle_rad)
        profile_ongoing = s.torque_enabled and s.moving
        if self.p1:
            self._refresh_p1(s, position, profile_ongoing)
            return
        velocity = mx64.rad_s_to_velocity_units(s.velocity_rad_s)
        self.set("Hardware Error Status", s.hardware_error)
        self.set("Registered Instruction", int(self.pending is not None))
        # Moving (122): |velocity| above the threshold, or a profile in progress (control_table_moving_2.md)
        self.set("Moving", int(abs(velocity) > self.get("Moving Threshold") or profile_ongoing))
        v_prfl, a_prfl = self.get("Profile Velocity"), self.get("Profile Acceleration")
        profile_type = 0x00 if v_prfl == 0 else (0x30 if a_prfl else 0x10)
        self.set("Moving Status", profile_type | (mx64.MOVING_STATUS_PROFILE_ONGOING if profile_ongoing
                                                  else mx64.MOVING_STATUS_IN_POSITION))
        self.set("Present Current", mx64.current_A_to_units(s.current_A))
        self.set("Present Velocity", velocity)
        self.set("Present Position", position)
        self.set("Velocity Trajectory", velocity)  # the plant tracks its profile exactly
        self.set("Position Trajectory", position)
        self.set("Present Input Voltage", round(s.voltage_V / mx64.VOLTAGE_V_PER_UNIT))

    def _refresh_p1(self, s, position: int, profile_ongoing: bool) -> None:
        if self._multi_turn_p1():
            limit = mx64.MULTI_TURN_LIMIT_TICKS_P1
            position = min(limit, max(-limit, position))
        else:
            position %= mx64.TICKS_PER_REV
        speed = s.velocity_rad_s / mx64.moving_speed_units_to_rad_s(1)
        current_units = s.current_A * 1000.0 / mx64.CURRENT_P1_MA_PER_UNIT
        self.set("Present Position", position)
        self.set("Present Speed", mx64.encode_sign_magnitude_p1(round(speed)))
        self.set("Present Load", mx64.load_units_p1(s.torque_Nm))
        self.set("Present Voltage", round(s.voltage_V / mx64.VOLTAGE_V_PER_UNIT))
        self.set("Registered", int(self.pending is not None))
        self.set("Moving", int(profile_ongoing))
        self.set("Current", min(4095, max(0, mx64.CURRENT_P1_ZERO + round(current_units))))

    def _multi_turn_p1(self) -> bool:
        return self.get("CW Angle Limit") == 4095 and self.get("CCW Angle Limit") == 4095

    def status_error(self, error: str | None) -> int:
        """The status packet's error byte: the instruction's error plus the hardware condition."""
        hw = self.plant.servo_state(self.index).hardware_error
        if self.p1:
            return (_P1_BIT[error] if error else 0) | (hw & mx64.HW_BITS_AS_P1)
        return (_P2_CODE[error] if error else 0) | (mx64.STATUS_ALERT_P2 if hw else 0)

    # ------------------------------------------------------------ read / write
    def _target(self, address: int) -> int:
        """The address a byte access at ``address`` reaches: through Indirect Address n for Indirect Data n."""
        pointer = self._indirect.get(address)
        if pointer is None:
            return address
        return self.table[pointer] | self.table[pointer + 1] << 8

    def read(self, address: int, length: int) -> tuple[str | None, bytes]:
        if length == 0:
            return "data length", b""
        if address + length > len(self.table):
            return "access", b""
        self.refresh()
        if not self._indirect.keys() & range(address, address + length):
            return None, bytes(self.table[address:address + length])
        return None, bytes(self.table[self._target(a)] for a in range(address, address + length))

    def write(self, address: int, data: bytes, apply: bool = True) -> str | None:
        """Validate the whole write first (the firmware applies all of it or none), then apply it."""
        if address + len(data) > len(self.table):
            return "access"
        targets = [self._target(a) for a in range(address, address + len(data))]
        touched: list[tuple[str, ControlItem]] = []
        for a in targets:
            owner = self._owner[a] if a < len(self._owner) else None
            if owner is None:
                return "access"  # an address no item defines
            if owner not in touched:
                touched.append(owner)
        self.refresh()
        staged = bytearray(self.table)
        for a, byte in zip(targets, data, strict=True):
            staged[a] = byte
        written = set(targets)
        for name, item in touched:
            covered = written.issuperset(range(item.address, item.address + item.size))
            if not covered and not self.p1:  # 1.0 takes single bytes of a word (old hosts wrote low, then high)
                return "data length"
            if error := self._check(name, item, staged):
                return error
        if apply:
            before = bytearray(self.table)
            self.table[:] = staged
            for name, _ in touched:
                self._on_write(name, before)
        return None

    def _check(self, name: str, item: ControlItem, staged: bytearray) -> str | None:
        """The error a write of ``name`` gets; limits and modes are read from ``staged``, so one block that
        sets a limit and a goal is judged by the new limit."""
        value = self.get(name, staged)
        if not item.writable:
            return "access"
        if item.address < self.eeprom_end and self._eeprom_locked():
            return "locked"
        if self.p1:
            return self._check_p1(name, item, value, staged)
        if self.get("Bus Watchdog") == mx64.BUS_WATCHDOG_ERROR and (name in _GOAL_ITEMS or (
                name == "Bus Watchdog" and value != 0)):
            return "data range"  # goal items are read-only until the watchdog error is cleared with 0
        if name == "Operating Mode" and value not in mx64.OPERATING_MODES_P2:
            return "data range"
        if name == "Drive Mode" and value not in mx64.DRIVE_MODE_VALUES_P2:
            return "data range"
        if not item.lo <= value <= item.hi:
            return "data range"
        if name == "Goal Position" and self.get("Operating Mode", staged) == mx64.OP_MODE_POSITION \
                and not self.get("Min Position Limit", staged) <= value <= self.get("Max Position Limit", staged):
            return "data limit"
        if name == "Profile Acceleration" and value > self.get("Acceleration Limit", staged):
            return "data limit"
        return None

    def _check_p1(self, name: str, item: ControlItem, value: int, staged: bytearray) -> str | None:
        if name == "Lock" and value == 0 and self._eeprom_locked():
            return "locked"  # once set, Lock goes back to 0 only at power-up (control_table_lock.md)
        cw, ccw = self.get("CW Angle Limit", staged), self.get("CCW Angle Limit", staged)
        if name == "Goal Position" and not cw == ccw == 4095:  # joint mode: within the angle limits
            return None if cw <= value <= ccw else "data limit"
        if name == "Moving Speed" and not cw == ccw == 0:
            return None if value <= 1023 else "data range"  # bit 10 is a direction only in wheel mode
        return None if item.lo <= value <= item.hi else "data range"

    def _eeprom_locked(self) -> bool:
        if self.p1:
            return self.get("Lock") == 1
        return self.plant.servo_state(self.index).torque_enabled

    def _on_write(self, name: str, before: bytearray) -> None:
        i = self.index
        position_mode = not self.p1 and self.get("Operating Mode") == mx64.OP_MODE_POSITION
        if name == "Torque Enable":
            self.plant.set_torque(i, bool(self.get(name)))
            if self.get(name) and self.plant.servo_state(i).torque_enabled:
                if position_mode:
                    self._restart_turn_count()
                self._hold_goal_register()  # torque on holds where it is: the plant set its goal to the angle
        elif name == "Operating Mode" and position_mode and self.get(name, before) != mx64.OP_MODE_POSITION:
            self._restart_turn_count()
        elif name == "Goal Position":
            self.plant.set_goal_angle(i, self._goal_angle_rad(self.get(name)))
        elif name in ("Profile Velocity", "Profile Acceleration", "Moving Speed", "Goal Acceleration"):
            self._apply_profile()
        elif name == "Bus Watchdog" and self.get(name) == 0:
            self._apply_profile()  # the stop applied the profile as 0; the registers hold again

    def _hold_goal_register(self) -> None:
        """Goal Position := Present Position, wherever the firmware makes the servo hold where it is."""
        goal = self._present_ticks(self.plant.servo_state(self.index).angle_rad)
        self.set("Goal Position", goal % mx64.TICKS_PER_REV if self.p1 and not self._multi_turn_p1() else goal)

    def _apply_profile(self) -> None:
        if self.p1:
            speed = self.get("Moving Speed") & (mx64.SIGN_BIT_P1 - 1)  # 0 = as fast as the motor goes
            self.plant.set_profile(self.index, mx64.moving_speed_units_to_rad_s(speed),
                                   mx64.goal_accel_units_to_rad_s2(self.get("Goal Acceleration")))
            return
        velocity = self.get("Profile Velocity")
        if velocity == 0:  # Profile Velocity 0: no profile at all, acceleration included (step)
            self.plant.set_profile(self.index, 0.0, 0.0)
        else:
            self.plant.set_profile(self.index, mx64.velocity_units_to_rad_s(velocity),
                                   mx64.profile_accel_units_to_rad_s2(self.get("Profile Acceleration")))

    # ------------------------------------------------------------ firmware events
    def check_watchdog(self, now: float) -> None:
        """Bus Watchdog (98): with torque on and no packet for longer than the set time, stop and hold."""
        if self.p1:
            return
        units = self.get("Bus Watchdog")
        if units in (0, mx64.BUS_WATCHDOG_ERROR):
            return
        if now - self.last_heard <= units * mx64.BUS_WATCHDOG_MS_PER_UNIT * 1e-3:
            return
        s = self.plant.servo_state(self.index)
        if not s.torque_enabled:
            return
        self.table[self.items["Bus Watchdog"].address] = mx64.BUS_WATCHDOG_ERROR
        self.plant.set_profile(self.index, 0.0, 0.0)
        self.plant.set_goal_angle(self.index, s.angle_rad)
        self._hold_goal_register()

    def reboot(self) -> None:
        """Reboot / power cycle: hardware error cleared, torque off, RAM back to its initial values."""
        self.plant.reboot(self.index)
        if not self.p1:
            self._restart_turn_count()
        self.pending = None
        self._load_defaults(eeprom=False)
        self._apply_profile()
        self._hold_goal_register()
        self.last_heard = time.monotonic()

    def factory_reset(self, option: int) -> None:
        """0xFF all, 0x01 all but ID, 0x02 all but ID and baud rate (protocol2.md); then reboot."""
        keep = {0x01: ("ID",), 0x02: ("ID", "Baud Rate")}.get(option, ())
        self._load_defaults(eeprom=True, keep=keep)
        self.reboot()

    def _restart_turn_count(self) -> None:
        """Present Position back to the encoder's angle within one turn (plus Homing Offset), as 2.0 firmware does
        at power-up and reboot, on a change to Position Control Mode and on torque on in it
        (control_table_opmode_note.md); the goal register is renumbered so it still stands for the same angle."""
        actual = self.zero_ticks + mx64.rad_to_ticks(self.plant.servo_state(self.index).angle_rad)
        shift = actual // mx64.TICKS_PER_REV * mx64.TICKS_PER_REV
        self.zero_ticks -= shift
        self.set("Goal Position", self.get("Goal Position") - shift)

    def clear_multi_turn(self) -> str | None:
        """Clear (0x10, P2.0): bring Present Position back within one turn; refused while moving."""
        s = self.plant.servo_state(self.index)
        if s.moving and s.torque_enabled:
            return "result fail"
        shift = self._present_ticks(s.angle_rad) // mx64.TICKS_PER_REV * mx64.TICKS_PER_REV
        self.zero_ticks -= shift
        self.set("Goal Position", self.get("Goal Position") - shift)  # the same goal angle, renumbered
        return None
