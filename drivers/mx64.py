"""Dynamixel MX-64 device facts as data: control tables of both protocols, units, error bits, codes.

Shared by the bus twin (drivers/twins/dxl_bus.py) and the real driver, so both agree on every address.
Sources: ROBOTIS e-manual (repo ROBOTIS-GIT/emanual) docs/en/dxl/mx/mx-64-2.md (Protocol 2.0 firmware),
docs/en/dxl/mx/mx-64.md (Protocol 1.0 firmware), docs/en/dxl/protocol1.md, protocol2.md and the
_includes/en/dxl/control_table_*.md pages they include; dynamixel_sdk 4.1.0 for the instruction codes.
Pure data and small conversions; no I/O.
"""

from __future__ import annotations

import math
from typing import NamedTuple

MODEL_NUMBER_P2 = 311
MODEL_NUMBER_P1 = 310
# est.: the e-manual gives no value; Protocol 2.0 needs >= 39 (protocol2.md), Clear needs >= 42; Realtime Tick on
# Protocol 1.0 needs >= 40 (mx-64.md).
FIRMWARE_VERSION_P2 = 45
FIRMWARE_VERSION_P1 = 41

BROADCAST_ID = 0xFE
MAX_ID_P2 = 252  # 253 (0xFD) and 255 would look like header bytes on 2.0
MAX_ID_P1 = 253


class ControlItem(NamedTuple):
    """One control-table entry. ``lo``/``hi`` is the range the firmware accepts (Data Range Error beyond)."""

    address: int
    size: int
    access: str            # "R" or "RW"
    default: int           # initial value (0 where the e-manual gives "-": the twin fills those live)
    lo: int = 0
    hi: int = 0
    signed: bool = False

    @property
    def writable(self) -> bool:
        return self.access == "RW"


def _rw(address: int, size: int, default: int, lo: int, hi: int, signed: bool = False) -> ControlItem:
    return ControlItem(address, size, "RW", default, lo, hi, signed)


def _r(address: int, size: int, default: int = 0, signed: bool = False) -> ControlItem:
    return ControlItem(address, size, "R", default, signed=signed)


# ------------------------------------------------------------------ Protocol 2.0 (mx-64-2.md)
EEPROM_END_P2 = 64  # addresses below Torque Enable (64) are EEPROM: writable only with torque off
CONTROL_TABLE_P2: dict[str, ControlItem] = {
    "Model Number": _r(0, 2, MODEL_NUMBER_P2),
    "Model Information": _r(2, 4),
    "Firmware Version": _r(6, 1, FIRMWARE_VERSION_P2),
    "ID": _rw(7, 1, 1, 0, MAX_ID_P2),
    "Baud Rate": _rw(8, 1, 1, 0, 7),
    "Return Delay Time": _rw(9, 1, 250, 0, 254),
    "Drive Mode": _rw(10, 1, 0, 0, 5),
    "Operating Mode": _rw(11, 1, 3, 0, 16),
    "Secondary ID": _rw(12, 1, 255, 0, 255),
    "Protocol Type": _rw(13, 1, 2, 1, 2),
    "Homing Offset": _rw(20, 4, 0, -1_044_479, 1_044_479, signed=True),
    "Moving Threshold": _rw(24, 4, 10, 0, 1023),
    "Temperature Limit": _rw(31, 1, 80, 0, 100),
    "Max Voltage Limit": _rw(32, 2, 160, 95, 160),
    "Min Voltage Limit": _rw(34, 2, 95, 95, 160),
    "PWM Limit": _rw(36, 2, 885, 0, 885),
    "Current Limit": _rw(38, 2, 1941, 0, 1941),
    "Acceleration Limit": _rw(40, 4, 32767, 0, 32767),
    "Velocity Limit": _rw(44, 4, 435, 0, 1023),
    "Max Position Limit": _rw(48, 4, 4095, 0, 4095),
    "Min Position Limit": _rw(52, 4, 0, 0, 4095),
    "Shutdown": _rw(63, 1, 0x34, 0, 0xFF),
    "Torque Enable": _rw(64, 1, 0, 0, 1),
    "LED": _rw(65, 1, 0, 0, 1),
    "Status Return Level": _rw(68, 1, 2, 0, 2),
    "Registered Instruction": _r(69, 1),
    "Hardware Error Status": _r(70, 1),
    "Velocity I Gain": _rw(76, 2, 1920, 0, 16383),
    "Velocity P Gain": _rw(78, 2, 100, 0, 16383),
    "Position D Gain": _rw(80, 2, 0, 0, 16383),
    "Position I Gain": _rw(82, 2, 0, 0, 16383),
    "Position P Gain": _rw(84, 2, 850, 0, 16383),
    "Feedforward 2nd Gain": _rw(88, 2, 0, 0, 16383),
    "Feedforward 1st Gain": _rw(90, 2, 0, 0, 16383),
    "Bus Watchdog": _rw(98, 1, 0, 0, 127),  # the firmware itself writes -1 (0xFF) on a watchdog trip
    "Goal PWM": _rw(100, 2, 0, -885, 885, signed=True),
    "Goal Current": _rw(102, 2, 0, -1941, 1941, signed=True),
    "Goal Velocity": _rw(104, 4, 0, -1023, 1023, signed=True),
    "Profile Acceleration": _rw(108, 4, 0, 0, 32767),
    "Profile Velocity": _rw(112, 4, 0, 0, 32767),
    "Goal Position": _rw(116, 4, 0, -1_048_575, 1_048_575, signed=True),
    "Realtime Tick": _r(120, 2),
    "Moving": _r(122, 1),
    "Moving Status": _r(123, 1),
    "Present PWM": _r(124, 2, signed=True),
    "Present Current": _r(126, 2, signed=True),
    "Present Velocity": _r(128, 4, signed=True),
    "Present Position": _r(132, 4, signed=True),
    "Velocity Trajectory": _r(136, 4, signed=True),
    "Position Trajectory": _r(140, 4, signed=True),
    "Present Input Voltage": _r(144, 2),
    "Present Temperature": _r(146, 1),
}
# Indirect Address n (2 bytes, default = its Indirect Data address) and Indirect Data n (1 byte); 29..56 are
# above 255 and so reachable only on Protocol 2.0.
for _n in range(56):
    _addr, _data = (168 + 2 * _n, 224 + _n) if _n < 28 else (578 + 2 * (_n - 28), 634 + (_n - 28))
    CONTROL_TABLE_P2[f"Indirect Address {_n + 1}"] = _rw(_addr, 2, _data, 64, 661)
    CONTROL_TABLE_P2[f"Indirect Data {_n + 1}"] = _rw(_data, 1, 0, 0, 255)
TABLE_SIZE_P2 = 662

OPERATING_MODES_P2 = {0: "current", 1: "velocity", 3: "position", 4: "extended position",
                      5: "current-based position", 16: "PWM"}
OP_MODE_POSITION, OP_MODE_EXTENDED_POSITION = 3, 4
HOMING_OFFSET_POSITION_MODE_MAX = 1024  # a larger Homing Offset is ignored in Position Control Mode
DRIVE_MODE_VALUES_P2 = (0, 1, 4, 5)  # bit0 reverse, bit2 time-based profile
BUS_WATCHDOG_ERROR = 0xFF  # -1 as an unsigned byte: the watchdog has tripped

# Moving Status (123) bits
MOVING_STATUS_IN_POSITION, MOVING_STATUS_PROFILE_ONGOING = 0x01, 0x02

# ------------------------------------------------------------------ Protocol 1.0 (mx-64.md)
EEPROM_END_P1 = 24
CONTROL_TABLE_P1: dict[str, ControlItem] = {
    "Model Number": _r(0, 2, MODEL_NUMBER_P1),
    "Firmware Version": _r(2, 1, FIRMWARE_VERSION_P1),
    "ID": _rw(3, 1, 1, 0, MAX_ID_P1),
    "Baud Rate": _rw(4, 1, 34, 0, 254),
    "Return Delay Time": _rw(5, 1, 250, 0, 254),
    "CW Angle Limit": _rw(6, 2, 0, 0, 4095),
    "CCW Angle Limit": _rw(8, 2, 4095, 0, 4095),
    "Temperature Limit": _rw(11, 1, 80, 0, 99),
    "Min Voltage Limit": _rw(12, 1, 60, 50, 160),
    "Max Voltage Limit": _rw(13, 1, 160, 50, 160),  # e-manual table says 240 but the range tops out at 160
    "Max Torque": _rw(14, 2, 1023, 0, 1023),
    "Status Return Level": _rw(16, 1, 2, 0, 2),
    "Alarm LED": _rw(17, 1, 36, 0, 127),
    "Shutdown": _rw(18, 1, 36, 0, 127),
    "Multi Turn Offset": _rw(20, 2, 0, -24_576, 24_576, signed=True),
    "Resolution Divider": _rw(22, 1, 1, 1, 4),
    "Torque Enable": _rw(24, 1, 0, 0, 1),
    "LED": _rw(25, 1, 0, 0, 1),
    "D Gain": _rw(26, 1, 0, 0, 254),
    "I Gain": _rw(27, 1, 0, 0, 254),
    "P Gain": _rw(28, 1, 32, 0, 254),
    "Goal Position": _rw(30, 2, 0, -28_672, 28_672, signed=True),  # 0..4095 in joint mode
    "Moving Speed": _rw(32, 2, 0, 0, 2047),   # 0..1023 in joint mode; bit 10 = CW in wheel mode
    "Torque Limit": _rw(34, 2, 1023, 0, 1023),
    "Present Position": _r(36, 2, signed=True),
    "Present Speed": _r(38, 2),
    "Present Load": _r(40, 2),
    "Present Voltage": _r(42, 1),
    "Present Temperature": _r(43, 1),
    "Registered": _r(44, 1),
    "Moving": _r(46, 1),
    "Lock": _rw(47, 1, 0, 0, 1),
    "Punch": _rw(48, 2, 0, 0, 1023),
    "Realtime Tick": _r(50, 2),
    "Current": _rw(68, 2, 2048, 0, 4095),
    "Torque Ctrl Mode Enable": _rw(70, 1, 0, 0, 1),
    "Goal Torque": _rw(71, 2, 0, 0, 2047),
    "Goal Acceleration": _rw(73, 1, 0, 0, 254),
}
TABLE_SIZE_P1 = 74
MULTI_TURN_LIMIT_TICKS_P1 = 28_672  # 7 revolutions either way

# ------------------------------------------------------------------ units
TICKS_PER_REV = 4096
RAD_PER_TICK = 2 * math.pi / TICKS_PER_REV  # 0.088 deg
CENTER_TICKS = 2048                          # the middle of the single-turn range (also easy SDK's zero radian)
VELOCITY_RPM_PER_UNIT = 0.229                # Profile / Goal / Present Velocity (P2.0)
PROFILE_ACCEL_REV_PER_MIN2_PER_UNIT = 214.577
CURRENT_MA_PER_UNIT = 3.36                   # Goal / Present Current, Current Limit (P2.0)
MOVING_SPEED_RPM_PER_UNIT = 0.114            # Moving Speed, Present Speed (P1.0)
GOAL_ACCEL_DEG_PER_S2_PER_UNIT = 8.583       # Goal Acceleration (P1.0)
LOAD_PERCENT_PER_UNIT = 0.1                  # Present Load (P1.0), of the maximum torque
SIGN_BIT_P1 = 1 << 10                        # Present Speed / Load: bit 10 set = CW (negative)
CURRENT_P1_MA_PER_UNIT, CURRENT_P1_ZERO = 4.5, 2048  # Current (68): I = 4.5 mA * (value - 2048)
VOLTAGE_V_PER_UNIT = 0.1
RETURN_DELAY_US_PER_UNIT = 2
BUS_WATCHDOG_MS_PER_UNIT = 20
REALTIME_TICK_WRAP = 32768                   # counts ms, back to 0 after 32767
STALL_TORQUE_NM = 6.0                        # at 12 V, 4.1 A: what Present Load's 100 % stands for (est.)

_RPM_TO_RAD_S = 2 * math.pi / 60


def ticks_to_rad(ticks: float) -> float:
    return ticks * RAD_PER_TICK


def rad_to_ticks(angle_rad: float) -> int:
    return int(round(angle_rad / RAD_PER_TICK))


def velocity_units_to_rad_s(units: float) -> float:
    return units * VELOCITY_RPM_PER_UNIT * _RPM_TO_RAD_S


def rad_s_to_velocity_units(velocity_rad_s: float) -> int:
    return int(round(velocity_rad_s / (VELOCITY_RPM_PER_UNIT * _RPM_TO_RAD_S)))


def profile_accel_units_to_rad_s2(units: float) -> float:
    return units * PROFILE_ACCEL_REV_PER_MIN2_PER_UNIT * 2 * math.pi / 3600.0


def moving_speed_units_to_rad_s(units: float) -> float:
    return units * MOVING_SPEED_RPM_PER_UNIT * _RPM_TO_RAD_S


def goal_accel_units_to_rad_s2(units: float) -> float:
    return math.radians(units * GOAL_ACCEL_DEG_PER_S2_PER_UNIT)


def current_A_to_units(current_A: float) -> int:
    return int(round(current_A * 1000.0 / CURRENT_MA_PER_UNIT))


def encode_sign_magnitude_p1(value: int, limit: int = 1023) -> int:
    """Protocol 1.0 speed / load: magnitude in bits 0-9, bit 10 set for CW (negative) values."""
    magnitude = min(abs(int(value)), limit)
    return magnitude | SIGN_BIT_P1 if value < 0 else magnitude


def decode_sign_magnitude_p1(raw: int) -> int:
    magnitude = raw & (SIGN_BIT_P1 - 1)
    return -magnitude if raw & SIGN_BIT_P1 else magnitude


def load_units_p1(torque_Nm: float) -> int:
    """Present Load (P1.0) for a motor torque: 0.1 % of the stall torque, sign-magnitude (CCW positive)."""
    return encode_sign_magnitude_p1(int(round(torque_Nm / STALL_TORQUE_NM * 100.0 / LOAD_PERCENT_PER_UNIT)))


# ------------------------------------------------------------------ baud rates
BAUD_RATES_P2 = {0: 9_600, 1: 57_600, 2: 115_200, 3: 1_000_000, 4: 2_000_000, 5: 3_000_000,
                 6: 4_000_000, 7: 4_500_000}


def baud_rate_p1(value: int) -> int:
    """Protocol 1.0 Baud Rate (4): 2 Mbps / (value + 1), except the three high-speed codes."""
    return {250: 2_250_000, 251: 2_500_000, 252: 3_000_000}.get(value, round(2_000_000 / (value + 1)))


# ------------------------------------------------------------------ errors
# Hardware Error Status (70, P2.0) and Shutdown (63) bits
HW_INPUT_VOLTAGE, HW_OVERHEATING, HW_ENCODER, HW_ELECTRICAL_SHOCK, HW_OVERLOAD = 0x01, 0x04, 0x08, 0x10, 0x20

# Protocol 2.0 status packet error byte: bit 7 Alert, bits 0-6 one error number
STATUS_ALERT_P2 = 0x80
ERR_RESULT_FAIL, ERR_INSTRUCTION, ERR_CRC, ERR_DATA_RANGE = 0x01, 0x02, 0x03, 0x04
ERR_DATA_LENGTH, ERR_DATA_LIMIT, ERR_ACCESS = 0x05, 0x06, 0x07
ERROR_NAMES_P2 = {ERR_RESULT_FAIL: "result fail", ERR_INSTRUCTION: "instruction", ERR_CRC: "crc",
                  ERR_DATA_RANGE: "data range", ERR_DATA_LENGTH: "data length", ERR_DATA_LIMIT: "data limit",
                  ERR_ACCESS: "access"}

# Protocol 1.0 status packet error byte: one bit per condition. The hardware conditions use the same bits
# as the P2.0 Hardware Error Status (input voltage 0, overheating 2, overload 5).
ERRBIT_VOLTAGE, ERRBIT_ANGLE, ERRBIT_OVERHEAT, ERRBIT_RANGE = 0x01, 0x02, 0x04, 0x08
ERRBIT_CHECKSUM, ERRBIT_OVERLOAD, ERRBIT_INSTRUCTION = 0x10, 0x20, 0x40
ERROR_BITS_P1 = {ERRBIT_VOLTAGE: "input voltage", ERRBIT_ANGLE: "angle limit", ERRBIT_OVERHEAT: "overheating",
                 ERRBIT_RANGE: "range", ERRBIT_CHECKSUM: "checksum", ERRBIT_OVERLOAD: "overload",
                 ERRBIT_INSTRUCTION: "instruction"}
HW_BITS_AS_P1 = HW_INPUT_VOLTAGE | HW_OVERHEATING | HW_OVERLOAD  # the hardware bits Protocol 1.0 can report

# ------------------------------------------------------------------ instructions
INST_PING, INST_READ, INST_WRITE, INST_REG_WRITE, INST_ACTION = 0x01, 0x02, 0x03, 0x04, 0x05
INST_FACTORY_RESET, INST_REBOOT, INST_CLEAR, INST_STATUS = 0x06, 0x08, 0x10, 0x55
INST_SYNC_READ, INST_SYNC_WRITE, INST_FAST_SYNC_READ = 0x82, 0x83, 0x8A
INST_BULK_READ, INST_BULK_WRITE, INST_FAST_BULK_READ = 0x92, 0x93, 0x9A
# What each firmware understands (the e-manual's instruction tables; MX Protocol 1.0 adds Bulk Read but has
# no Reboot, Sync Read or Bulk Write, and dynamixel_sdk answers reboot() on 1.0 with COMM_NOT_AVAILABLE).
INSTRUCTIONS_P2 = frozenset({INST_PING, INST_READ, INST_WRITE, INST_REG_WRITE, INST_ACTION, INST_FACTORY_RESET,
                             INST_REBOOT, INST_CLEAR, INST_SYNC_READ, INST_SYNC_WRITE, INST_BULK_READ,
                             INST_BULK_WRITE})
INSTRUCTIONS_P1 = frozenset({INST_PING, INST_READ, INST_WRITE, INST_REG_WRITE, INST_ACTION, INST_FACTORY_RESET,
                             INST_SYNC_WRITE, INST_BULK_READ})


def control_table(protocol: float) -> dict[str, ControlItem]:
    return CONTROL_TABLE_P1 if protocol == 1.0 else CONTROL_TABLE_P2


def items_by_address(protocol: float) -> dict[int, tuple[str, ControlItem]]:
    """address -> (name, item), for looking up what a read or write touches."""
    return {item.address: (name, item) for name, item in control_table(protocol).items()}
