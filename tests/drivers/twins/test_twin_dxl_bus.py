"""The MX-64 bus twin through ROBOTIS' own dynamixel_sdk, on both protocols, driving the real plant.

The plant is advanced by the tests themselves (no PlantClock), so everything is deterministic except the
bus watchdog, which runs on the wall clock as the firmware's does. The SDK's own packet timeout is about
34 ms at any baud rate (2 x LATENCY_TIMER + 2 ms); the tests' port waits up to 1 s for a status packet
instead, because on a loaded machine the twin's thread can be late by 100 ms or more (it shares the GIL and
the CPU with the SDK, which busy-waits), and 30 ms where a test expects silence.
"""

from __future__ import annotations

import time
from contextlib import contextmanager

import dynamixel_sdk as sdk
import pytest
from conftest import wait_for
from uartlab.drivers import mx64
from uartlab.drivers.twins import dxl_protocol as wire
from uartlab.drivers.twins.dxl_bus import DxlBusTwin
from uartlab.drivers.twins.plant import Plant, PlantConfig

IDS = (1, 2, 3, 4, 5, 6)
FDP = 0
# Addresses of the items the tests use, per protocol.
ADDR = {
    2.0: {"torque": 64, "goal": 116, "present": 132, "temp": 146, "volt": 144, "delay": 9, "pos_size": 4},
    1.0: {"torque": 24, "goal": 30, "present": 36, "temp": 43, "volt": 42, "delay": 5, "pos_size": 2},
}


class Port(sdk.PortHandler):
    """The SDK's port with the test's packet timeout (the packet handlers are the SDK's, unmodified)."""

    timeout_ms = 1000.0

    def setPacketTimeout(self, packet_length):  # the SDK calls this before every reply it waits for
        self.setPacketTimeoutMillis(self.timeout_ms)



@pytest.fixture
def plant() -> Plant:
    return Plant(PlantConfig())


class Bus:
    """A started twin and an SDK client connected to it."""

    def __init__(self, plant: Plant, protocol: float, **kwargs):
        self.plant, self.protocol, self.a = plant, protocol, ADDR[protocol]
        self.twin = DxlBusTwin(plant, ids=IDS, protocol=protocol, **{"return_delay_us": 0, **kwargs}).start()
        self.port = Port(self.twin.port)
        assert self.port.openPort() and self.port.setBaudRate(1_000_000)
        self.ph = sdk.PacketHandler(protocol)

    def close(self) -> None:
        self.port.closePort()
        self.twin.stop()

    def write(self, dxl_id: int, address: int, value: int, size: int) -> tuple[int, int]:
        fn = {1: self.ph.write1ByteTxRx, 2: self.ph.write2ByteTxRx, 4: self.ph.write4ByteTxRx}[size]
        return fn(self.port, dxl_id, address, value & ((1 << 8 * size) - 1))

    def read(self, dxl_id: int, address: int, size: int) -> tuple[int, int, int]:
        fn = {1: self.ph.read1ByteTxRx, 2: self.ph.read2ByteTxRx, 4: self.ph.read4ByteTxRx}[size]
        return fn(self.port, dxl_id, address)

    def ok_write(self, dxl_id: int, address: int, value: int, size: int) -> None:
        assert self.write(dxl_id, address, value, size) == (sdk.COMM_SUCCESS, 0)

    def round_trip(self) -> None:
        """Broadcasts get no reply: one ping makes sure the twin has served everything sent before it."""
        assert self.ph.ping(self.port, IDS[0])[1] == sdk.COMM_SUCCESS

    def read_error(self, dxl_id: int, address: int, length: int) -> tuple[int, int]:
        # An error reply carries no data; the SDK then hands back the CRC/checksum bytes as "data" (or raises
        # IndexError in readNByteTxRx when there are fewer than N), so only the error byte means anything.
        _, comm, error = self.ph.readTxRx(self.port, dxl_id, address, length)
        return comm, error

    def ok_read(self, dxl_id: int, address: int, size: int, signed: bool = False) -> int:
        value, comm, error = self.read(dxl_id, address, size)
        assert (comm, error) == (sdk.COMM_SUCCESS, 0)
        return value - (1 << 8 * size) if signed and value >> (8 * size - 1) else value

    @contextmanager
    def expecting_silence(self):
        self.port.timeout_ms = 30.0
        try:
            yield
        finally:
            self.port.timeout_ms = Port.timeout_ms

    def raw(self, packet: bytes, timeout_ms: float = Port.timeout_ms) -> tuple[list[int], int]:
        """Send a hand-made packet and take the next status packet with the SDK's own parser."""
        self.port.clearPort()
        self.port.writePort(packet)
        self.port.setPacketTimeoutMillis(timeout_ms)
        return self.ph.rxPacket(self.port, False) if self.protocol == 2.0 else self.ph.rxPacket(self.port)


@pytest.fixture(params=[2.0, 1.0], ids=["p2", "p1"])
def bus(request, plant):
    b = Bus(plant, request.param)
    yield b
    b.close()


@pytest.fixture
def bus2(plant):
    b = Bus(plant, 2.0)
    yield b
    b.close()


@pytest.fixture
def bus1(plant):
    b = Bus(plant, 1.0)
    yield b
    b.close()


# ------------------------------------------------------------------ wire format
def test_crc_and_packets_match_the_e_manual_vectors():
    assert wire.crc16(b"123456789") == 0xFEE8  # CRC-16/BUYPASS check value
    ping = bytes.fromhex("FF FF FD 00 01 03 00 01 19 4E")
    assert wire.encode_p2(1, mx64.INST_PING) == ping
    assert wire.encode_status_p2(1, 0, bytes([0xA6, 0, 0, 0])) == bytes.fromhex("FFFFFD0001080055 00A6000000 8CC0")
    assert wire.encode_p1(1, 3, bytes([0x0C, 0x64, 0xAA])) == bytes.fromhex("FF FF 01 05 03 0C 64 AA DC")
    packet, consumed = wire.split_packet(b"\x00\x13" + ping, 2.0)
    assert (packet, consumed) == (None, 2)  # garbage before the header goes first
    packet, consumed = wire.split_packet(ping, 2.0)
    assert (packet.dxl_id, packet.instruction, packet.intact, consumed) == (1, mx64.INST_PING, True, 10)


def test_byte_stuffing_round_trip_agrees_with_the_sdk():
    body = bytes([0x55, 0x00, 0xFF, 0xFF, 0xFD, 0x01, 0xFF, 0xFF, 0xFD, 0xFD])
    packet = wire.encode_p2(1, body[0], body[1:])
    sdk_packet = list(packet[:7]) + list(body) + [0, 0]
    sdk_packet[5:7] = [len(body) + 2, 0]
    stuffed = sdk.Protocol2PacketHandler().addStuffing(sdk_packet)
    assert bytes(stuffed[:-2]) == packet[:-2]
    assert wire.unstuff(wire.stuff(body)) == body


def test_unit_conversions():
    assert mx64.rad_to_ticks(mx64.ticks_to_rad(1234)) == 1234
    assert mx64.velocity_units_to_rad_s(1) == pytest.approx(0.229 * 2 * 3.141592653589793 / 60)
    assert mx64.decode_sign_magnitude_p1(mx64.encode_sign_magnitude_p1(-300)) == -300
    assert mx64.encode_sign_magnitude_p1(-300) == 1024 + 300
    assert mx64.load_units_p1(3.0) == 500  # half the stall torque, CCW
    assert mx64.baud_rate_p1(34) == 57_143 and mx64.baud_rate_p1(1) == 1_000_000
    assert mx64.CONTROL_TABLE_P2["Present Position"].address == 132
    assert mx64.CONTROL_TABLE_P1["Present Load"].address == 40


# ------------------------------------------------------------------ basics through the SDK
def test_ping_all_six(bus):
    model = 311 if bus.protocol == 2.0 else 310
    for dxl_id in IDS:
        assert bus.ph.ping(bus.port, dxl_id) == (model, sdk.COMM_SUCCESS, 0)
    with bus.expecting_silence():
        assert bus.ph.ping(bus.port, 7)[1] == sdk.COMM_RX_TIMEOUT


def test_broadcast_ping_answers_in_id_order(plant):
    b = Bus(plant, 2.0)
    try:
        b.port.setBaudRate(4_000_000)  # shortens the SDK's fixed ~0.8 s broadcast window a little
        found, comm = b.ph.broadcastPing(b.port)
        assert comm == sdk.COMM_SUCCESS
        assert list(found) == list(IDS)
        assert all(v == [311, mx64.FIRMWARE_VERSION_P2] for v in found.values())
    finally:
        b.close()


def test_present_position_starts_mid_range_and_tracks_the_plant(bus):
    a = bus.a
    start = bus.ok_read(1, a["present"], a["pos_size"], signed=True)
    assert start == 2048
    bus.plant.advance(0.3)  # torque off: the SEA spring backdrives the spool
    angle = bus.plant.servo_state(FDP).angle_rad
    assert bus.ok_read(1, a["present"], a["pos_size"], signed=True) == 2048 + mx64.rad_to_ticks(angle)
    assert bus.ok_read(1, a["temp"], 1) == 34
    assert bus.ok_read(1, a["volt"], 1 if bus.protocol == 1.0 else 2) == 120


def test_torque_enable_and_goal_position_reach_the_plant(bus):
    a = bus.a
    bus.ok_write(2, a["torque"], 1, 1)
    assert bus.plant.servo_state(1).torque_enabled
    assert bus.ok_read(2, a["torque"], 1) == 1
    bus.ok_write(2, a["goal"], 2048 + 400, a["pos_size"])
    assert bus.plant.servos[1].goal == pytest.approx(mx64.ticks_to_rad(400))
    bus.ok_write(2, a["torque"], 0, 1)
    assert not bus.plant.servo_state(1).torque_enabled


def test_sync_write_and_sync_read_all_six(bus2):
    b = bus2
    for dxl_id in IDS:
        b.ok_write(dxl_id, 64, 1, 1)
    writer = sdk.GroupSyncWrite(b.port, b.ph, 116, 4)
    for k, dxl_id in enumerate(IDS):
        assert writer.addParam(dxl_id, list((2048 + 100 * k).to_bytes(4, "little")))
    assert writer.txPacket() == sdk.COMM_SUCCESS
    b.round_trip()
    b.plant.advance(1.0)
    reader = sdk.GroupSyncRead(b.port, b.ph, 132, 4)
    for dxl_id in IDS:
        reader.addParam(dxl_id)
    assert reader.txRxPacket() == sdk.COMM_SUCCESS
    for k, dxl_id in enumerate(IDS):
        assert reader.isAvailable(dxl_id, 132, 4)
        assert reader.getData(dxl_id, 132, 4) == 2048 + 100 * k
        assert b.plant.servo_state(k).angle_rad == pytest.approx(mx64.ticks_to_rad(100 * k))


def test_sync_write_on_protocol_1(bus1):
    writer = sdk.GroupSyncWrite(bus1.port, bus1.ph, 24, 1)
    for dxl_id in IDS:
        writer.addParam(dxl_id, [1])
    assert writer.txPacket() == sdk.COMM_SUCCESS
    assert bus1.ok_read(6, 24, 1) == 1  # the reply to this read also proves the broadcast got no reply
    assert all(bus1.plant.servo_state(i).torque_enabled for i in range(6))
    assert sdk.GroupSyncRead(bus1.port, bus1.ph, 36, 2).txRxPacket() == sdk.COMM_NOT_AVAILABLE  # no Sync Read


def test_bulk_read(bus):
    a = bus.a
    reader = sdk.GroupBulkRead(bus.port, bus.ph)
    assert reader.addParam(1, a["present"], a["pos_size"])
    assert reader.addParam(2, a["temp"], 1)
    assert reader.addParam(5, a["torque"], 1)
    if bus.protocol == 2.0:
        assert reader.txRxPacket() == sdk.COMM_SUCCESS
    else:
        # dynamixel_sdk 4.1.0 bug: GroupBulkRead.txPacket passes a fast_option that Protocol1PacketHandler's
        # bulkReadTx does not take (TypeError). Send the group's own parameters by hand instead.
        with pytest.raises(TypeError):
            reader.txRxPacket()
        reader.makeParam()
        assert bus.ph.bulkReadTx(bus.port, reader.param, len(reader.param)) == sdk.COMM_SUCCESS
        assert reader.rxPacket() == sdk.COMM_SUCCESS
    assert reader.getData(1, a["present"], a["pos_size"]) == 2048
    assert reader.getData(2, a["temp"], 1) == 34
    assert reader.getData(5, a["torque"], 1) == 0


def test_bulk_write_on_protocol_2(bus2):
    writer = sdk.GroupBulkWrite(bus2.port, bus2.ph)
    assert writer.addParam(1, 112, 4, list((50).to_bytes(4, "little")))   # profile velocity
    assert writer.addParam(3, 65, 1, [1])                                  # LED
    assert writer.txPacket() == sdk.COMM_SUCCESS
    assert bus2.ok_read(1, 112, 4) == 50
    assert bus2.ok_read(3, 65, 1) == 1
    assert bus2.plant.servos[0].max_velocity == pytest.approx(mx64.velocity_units_to_rad_s(50))


def test_reg_write_waits_for_action(bus):
    a = bus.a
    goal = list((0x0900).to_bytes(a["pos_size"], "little"))
    for dxl_id in (1, 2):
        bus.ok_write(dxl_id, a["torque"], 1, 1)
        assert bus.ph.regWriteTxRx(bus.port, dxl_id, a["goal"], len(goal), goal) == (sdk.COMM_SUCCESS, 0)
    assert bus.plant.servos[0].goal == pytest.approx(0.0)
    assert bus.ok_read(1, 69 if bus.protocol == 2.0 else 44, 1) == 1  # Registered Instruction
    bus.ph.action(bus.port, sdk.BROADCAST_ID)
    bus.round_trip()
    assert bus.plant.servos[1].goal == pytest.approx(mx64.ticks_to_rad(0x0900 - 2048))


def test_extended_position_mode_takes_signed_goals(bus2):
    bus2.ok_write(1, 11, 4, 1)
    bus2.ok_write(1, 64, 1, 1)
    bus2.ok_write(1, 116, -5000, 4)
    assert bus2.ok_read(1, 116, 4, signed=True) == -5000
    assert bus2.plant.servos[0].goal == pytest.approx(mx64.ticks_to_rad(-5000 - 2048))


def test_turn_count_restarts_at_reboot_and_in_position_mode(bus2):
    # MX(2.0) firmware brings Present Position back within one turn, Homing Offset still added, at reboot, on a
    # change to Position Control Mode and on torque on in it (control_table_opmode_note.md).
    b = bus2
    read_position = wire.encode_p2(1, mx64.INST_READ, bytes([132, 0, 4, 0]))
    at_2048 = bytes.fromhex("FF FF FD 00 01 08 00 55 00 00 08 00 00 1C 38")
    b.ok_write(1, 20, 100, 4)  # Homing Offset: the start reads 2148

    def a_turn_below() -> None:
        b.ok_write(1, 64, 0, 1)
        b.ok_write(1, 11, 4, 1)  # extended position
        b.ok_write(1, 64, 1, 1)
        b.ok_write(1, 116, 2148 - 4096 - 100, 4)
        b.plant.advance(1.0)
        assert b.ok_read(1, 132, 4, signed=True) == 2148 - 4096 - 100

    a_turn_below()
    assert b.ph.reboot(b.port, 1) == (sdk.COMM_SUCCESS, 0)
    assert b.raw(read_position) == (list(at_2048), sdk.COMM_SUCCESS)
    assert b.ok_read(1, 116, 4) == 2048  # the goal register holds the renumbered position

    a_turn_below()
    b.ok_write(1, 64, 0, 1)
    b.ok_write(1, 11, 3, 1)  # position control mode
    assert b.raw(read_position) == (list(at_2048), sdk.COMM_SUCCESS)

    b.twin.servo(1).zero_ticks += 4096  # the horn turned a full turn by hand, torque off
    assert b.ok_read(1, 132, 4) == 2048 + 4096
    b.ok_write(1, 64, 1, 1)
    assert b.raw(read_position) == (list(at_2048), sdk.COMM_SUCCESS)
    assert b.plant.servos[0].goal == pytest.approx(b.plant.servo_state(0).angle_rad)  # holds, no turn back


def test_position_mode_ignores_a_homing_offset_beyond_1024(bus2):
    b = bus2
    read_position = wire.encode_p2(1, mx64.INST_READ, bytes([132, 0, 4, 0]))
    b.ok_write(1, 20, 2000, 4)  # valid in extended position mode only (control_table_homingoffset.md)
    rx, comm = b.raw(read_position)
    assert (comm, bytes(rx)) == (sdk.COMM_SUCCESS, bytes.fromhex("FF FF FD 00 01 08 00 55 00 00 08 00 00 1C 38"))
    b.ok_write(1, 11, 4, 1)
    assert b.ok_read(1, 132, 4) == 2048 + 2000
    b.ok_write(1, 11, 3, 1)
    b.ok_write(1, 20, 1000, 4)
    assert b.ok_read(1, 132, 4) == 2048 + 1000
    b.ok_write(1, 64, 1, 1)
    b.ok_write(1, 116, 3548, 4)
    assert b.plant.servos[0].goal == pytest.approx(mx64.ticks_to_rad(500))


def test_protocol_1_multi_turn_offset_and_resolution_divider(bus1):
    b = bus1
    read_position = wire.encode_p1(1, mx64.INST_READ, bytes([36, 2]))
    b.ok_write(1, 20, 1024, 2)  # Multi Turn Offset
    b.ok_write(1, 22, 4, 1)     # Resolution Divider
    assert b.ok_read(1, 36, 2) == 2048  # both ignored outside multi-turn mode
    b.ok_write(1, 6, 4095, 2)
    b.ok_write(1, 8, 4095, 2)
    # Present = actual / divider + offset = 2048 / 4 + 1024 = 1536 (control_table_resolution_divider.md)
    rx, comm = b.raw(read_position)
    assert (comm, bytes(rx)) == (sdk.COMM_SUCCESS, bytes.fromhex("FF FF 01 04 00 00 06 F4"))
    b.ok_write(1, 24, 1, 1)
    assert b.ok_read(1, 30, 2) == 1536  # torque on holds where it is, in the same units
    b.ok_write(1, 30, 1536 + 256, 2)    # a quarter turn at 4 ticks per unit
    assert b.plant.servos[0].goal == pytest.approx(mx64.ticks_to_rad(1024))


def test_realtime_tick_follows_plant_time(bus2):
    t0 = bus2.ok_read(1, 120, 2)
    bus2.plant.advance(0.25)
    assert (bus2.ok_read(1, 120, 2) - t0) % 32768 == 250


def test_byte_stuffing_both_directions_through_the_sdk(bus2):
    # Indirect Data 1..3 are plain bytes: FF FF FD in a write and in the read's reply must be stuffed.
    assert bus2.ph.writeTxRx(bus2.port, 1, 224, 3, [0xFF, 0xFF, 0xFD]) == (sdk.COMM_SUCCESS, 0)
    data, comm, error = bus2.ph.readTxRx(bus2.port, 1, 224, 3)
    assert (list(data), comm, error) == ([0xFF, 0xFF, 0xFD], sdk.COMM_SUCCESS, 0)


def test_return_delay_time_is_honoured(plant):
    b = Bus(plant, 2.0, return_delay_us=None)  # the firmware default
    try:
        assert b.ok_read(1, 9, 1) == 250
        t = time.perf_counter()
        for _ in range(10):
            assert b.ph.ping(b.port, 1)[1] == sdk.COMM_SUCCESS
        assert (time.perf_counter() - t) / 10 >= 500e-6
    finally:
        b.close()


# ------------------------------------------------------------------ errors the firmware reports
def test_reboot_clears_an_overheat_shutdown(bus2):
    b = bus2
    b.ok_write(1, 64, 1, 1)
    b.plant.inject_overheat(FDP)
    b.plant.advance(0.01)
    value, comm, error = b.read(1, 70, 1)
    assert (value, comm, error) == (mx64.HW_OVERHEATING, sdk.COMM_SUCCESS, mx64.STATUS_ALERT_P2)
    assert b.read(1, 64, 1)[0] == 0 and not b.plant.servo_state(FDP).torque_enabled
    assert b.read(1, 146, 1)[0] == 85
    assert b.write(1, 64, 1, 1) == (sdk.COMM_SUCCESS, mx64.STATUS_ALERT_P2)  # torque stays off until reboot
    assert not b.plant.servo_state(FDP).torque_enabled
    assert b.ph.reboot(b.port, 1) == (sdk.COMM_SUCCESS, mx64.STATUS_ALERT_P2)  # answered before the restart
    assert b.read(1, 70, 1) == (0, sdk.COMM_SUCCESS, 0)
    b.ok_write(1, 64, 1, 1)
    assert b.plant.servo_state(FDP).torque_enabled


def test_protocol_1_reports_overheat_in_the_error_bits_and_has_no_reboot(bus1):
    b = bus1
    b.ok_write(1, 24, 1, 1)
    b.plant.inject_overheat(FDP)
    b.plant.advance(0.01)
    assert b.read(1, 43, 1) == (85, sdk.COMM_SUCCESS, mx64.ERRBIT_OVERHEAT)
    assert b.ph.reboot(b.port, 1) == (sdk.COMM_NOT_AVAILABLE, 0)  # the SDK does not even send it
    rx, comm = b.raw(wire.encode_p1(1, mx64.INST_REBOOT))
    assert comm == sdk.COMM_SUCCESS and rx[4] == mx64.ERRBIT_INSTRUCTION | mx64.ERRBIT_OVERHEAT
    b.twin.power_cycle(1)
    assert b.read(1, 43, 1) == (34, sdk.COMM_SUCCESS, 0)


def test_eeprom_is_locked_while_torque_is_on(bus2):
    b = bus2
    b.ok_write(1, 64, 1, 1)
    assert b.write(1, 9, 10, 1) == (sdk.COMM_SUCCESS, mx64.ERR_ACCESS)
    assert b.ok_read(1, 9, 1) == 0
    b.ok_write(1, 64, 0, 1)
    b.ok_write(1, 9, 10, 1)
    assert b.ok_read(1, 9, 1) == 10


def test_protocol_1_eeprom_locks_with_lock_not_torque(bus1):
    b = bus1
    b.ok_write(1, 24, 1, 1)
    b.ok_write(1, 5, 10, 1)  # MX 1.0 firmware: torque on does not lock EEPROM
    b.ok_write(1, 47, 1, 1)
    assert b.write(1, 5, 20, 1) == (sdk.COMM_SUCCESS, mx64.ERRBIT_INSTRUCTION)
    assert b.ok_read(1, 5, 1) == 10


def test_protocol_1_lock_clears_only_at_power_up(bus1):
    b = bus1
    b.ok_write(1, 47, 1, 1)
    # Writing 0 to Lock (47) is refused like the EEPROM write it would allow: FF FF 01 02 40 BC.
    rx, comm = b.raw(wire.encode_p1(1, mx64.INST_WRITE, bytes([47, 0])))
    assert (comm, bytes(rx)) == (sdk.COMM_SUCCESS, bytes.fromhex("FF FF 01 02 40 BC"))
    assert b.ok_read(1, 47, 1) == 1
    assert b.write(1, 5, 20, 1) == (sdk.COMM_SUCCESS, mx64.ERRBIT_INSTRUCTION)
    b.twin.power_cycle(1)
    assert b.ok_read(1, 47, 1) == 0
    b.ok_write(1, 5, 20, 1)


def test_write_errors_on_protocol_2(bus2):
    b = bus2
    assert b.write(1, 132, 0, 4) == (sdk.COMM_SUCCESS, mx64.ERR_ACCESS)          # read-only
    assert b.write(1, 14, 0, 1) == (sdk.COMM_SUCCESS, mx64.ERR_ACCESS)           # no item there
    assert b.write(1, 116, 100, 2) == (sdk.COMM_SUCCESS, mx64.ERR_DATA_LENGTH)   # half of Goal Position
    assert b.write(1, 11, 2, 1) == (sdk.COMM_SUCCESS, mx64.ERR_DATA_RANGE)       # no operating mode 2
    assert b.write(1, 116, 5000, 4) == (sdk.COMM_SUCCESS, mx64.ERR_DATA_LIMIT)   # beyond Max Position Limit
    assert b.read_error(1, 1000, 4) == (sdk.COMM_SUCCESS, mx64.ERR_ACCESS)       # beyond the table
    assert b.ph.ping(b.port, 1) == (311, sdk.COMM_SUCCESS, 0)
    assert {"access", "data length", "data range", "data limit"} <= set(b.twin.stats.errors)


def test_write_errors_on_protocol_1(bus1):
    b = bus1
    assert b.write(1, 30, 4095, 2) == (sdk.COMM_SUCCESS, 0)
    b.ok_write(1, 8, 3000, 2)  # CCW Angle Limit
    assert b.write(1, 30, 3500, 2) == (sdk.COMM_SUCCESS, mx64.ERRBIT_ANGLE)
    assert b.write(1, 32, 1500, 2) == (sdk.COMM_SUCCESS, mx64.ERRBIT_RANGE)      # joint mode speed 0..1023
    assert b.read_error(1, 200, 2) == (sdk.COMM_SUCCESS, mx64.ERRBIT_RANGE)


def test_unknown_instruction_gets_instruction_error(bus):
    if bus.protocol == 2.0:
        _, comm, error = bus.ph.txRxPacket(bus.port, [0, 0, 0, 0, 1, 3, 0, 0x7F, 0, 0])
        assert (comm, error) == (sdk.COMM_SUCCESS, mx64.ERR_INSTRUCTION)
    else:
        _, comm, error = bus.ph.txRxPacket(bus.port, [0, 0, 1, 2, 0x7F, 0])
        assert (comm, error) == (sdk.COMM_SUCCESS, mx64.ERRBIT_INSTRUCTION)
    assert bus.twin.stats.errors["instruction"] == 1
    assert bus.ph.ping(bus.port, 1)[1:] == (sdk.COMM_SUCCESS, 0)


def test_corrupted_crc_gets_crc_error_and_serving_goes_on(bus):
    if bus.protocol == 2.0:
        bad = bytearray(wire.encode_p2(3, mx64.INST_PING))
        id_at, error_at, expected = 4, 8, mx64.ERR_CRC
    else:
        bad = bytearray(wire.encode_p1(3, mx64.INST_PING))
        id_at, error_at, expected = 2, 4, mx64.ERRBIT_CHECKSUM
    bad[-1] ^= 0x5A
    rx, comm = bus.raw(bytes(bad))
    assert comm == sdk.COMM_SUCCESS and rx[id_at] == 3 and rx[error_at] == expected
    assert bus.twin.stats.errors["crc"] == 1
    assert bus.ph.ping(bus.port, 3)[1:] == (sdk.COMM_SUCCESS, 0)


def test_garbage_on_the_line_is_skipped(bus):
    ping = wire.encode_p2(2, 1) if bus.protocol == 2.0 else wire.encode_p1(2, 1)
    rx, comm = bus.raw(b"\x00\xff\xff\x12\xfd\xff" + bytes(range(40)) + ping)
    assert comm == sdk.COMM_SUCCESS
    assert bus.twin.stats.garbage_bytes > 0
    assert bus.ph.ping(bus.port, 2)[1:] == (sdk.COMM_SUCCESS, 0)


def test_a_half_packet_is_abandoned_after_the_packet_timeout(bus2):
    half = wire.encode_p2(1, mx64.INST_READ, bytes([132, 0, 4, 0]))[:9]
    bus2.port.writePort(half)
    assert wait_for(lambda: bus2.twin.stats.garbage_bytes > 0)  # dropped after INTER_BYTE_TIMEOUT_S
    assert bus2.ph.ping(bus2.port, 1)[1:] == (sdk.COMM_SUCCESS, 0)


# ------------------------------------------------------------------ injected faults
def test_a_dropped_reply_times_out_and_the_next_transaction_works(bus):
    bus.twin.faults.drop_next(1)
    with bus.expecting_silence():
        assert bus.ph.ping(bus.port, 4)[1] == sdk.COMM_RX_TIMEOUT
    assert bus.ph.ping(bus.port, 4)[1:] == (sdk.COMM_SUCCESS, 0)
    assert bus.twin.stats.errors["dropped"] == 1
    bus.twin.faults.drop_probability = 1.0  # a dead line
    with bus.expecting_silence():
        assert bus.ph.ping(bus.port, 4)[1] == sdk.COMM_RX_TIMEOUT
    bus.twin.faults.clear()
    assert bus.ph.ping(bus.port, 4)[1:] == (sdk.COMM_SUCCESS, 0)


def test_a_corrupted_reply_is_rejected_by_the_sdk(bus):
    bus.twin.faults.corrupt_next(1)
    assert bus.read(1, bus.a["temp"], 1)[1] == sdk.COMM_RX_CORRUPT
    assert bus.read(1, bus.a["temp"], 1) == (34, sdk.COMM_SUCCESS, 0)


def test_an_unplugged_id_stops_answering(bus):
    bus.twin.unplug(3)
    with bus.expecting_silence():
        assert bus.ph.ping(bus.port, 3)[1] == sdk.COMM_RX_TIMEOUT
        assert bus.write(3, bus.a["torque"], 1, 1)[0] == sdk.COMM_RX_TIMEOUT
    assert not bus.plant.servo_state(2).torque_enabled  # it did not hear the write either
    assert bus.ph.ping(bus.port, 4)[1:] == (sdk.COMM_SUCCESS, 0)
    bus.twin.replug(3)
    assert bus.ph.ping(bus.port, 3)[1:] == (sdk.COMM_SUCCESS, 0)


def test_unplugged_id_breaks_a_sync_read(bus2):
    bus2.twin.unplug(5)
    reader = sdk.GroupSyncRead(bus2.port, bus2.ph, 132, 4)
    for dxl_id in IDS:
        reader.addParam(dxl_id)
    with bus2.expecting_silence():
        assert reader.txRxPacket() == sdk.COMM_RX_TIMEOUT


def test_bus_watchdog_stops_the_servo_when_the_host_goes_silent(bus2):
    b = bus2
    b.ok_write(1, 64, 1, 1)
    b.ok_write(1, 112, 20, 4)  # slow profile (4.58 rpm) so the servo is still on its way
    start = b.plant.servo_state(FDP).angle_rad
    b.ok_write(1, 116, 2048 + 1000, 4)
    b.plant.advance(0.1)
    moving = b.plant.servo_state(FDP).angle_rad
    assert start < moving < start + mx64.ticks_to_rad(1000)
    b.ok_write(1, 98, 3, 1)    # 60 ms; from now on the host says nothing
    assert wait_for(lambda: b.twin.value(1, "Bus Watchdog") == mx64.BUS_WATCHDOG_ERROR)
    assert b.twin.servo(1).last_heard + 0.06 < time.monotonic()
    b.plant.advance(0.5)
    held = moving
    assert b.plant.servo_state(FDP).angle_rad == pytest.approx(held)  # stopped, holding
    assert b.plant.servo_state(FDP).torque_enabled                      # the e-manual's stop keeps torque
    assert b.ok_read(1, 98, 1) == 0xFF
    assert b.write(1, 116, 2048, 4) == (sdk.COMM_SUCCESS, mx64.ERR_DATA_RANGE)  # goal is read-only now
    b.ok_write(1, 98, 0, 1)    # clears the watchdog error
    b.ok_write(1, 116, 2048 + 1000, 4)
    assert b.plant.servos[FDP].goal == pytest.approx(mx64.ticks_to_rad(1000))


# ------------------------------------------------------------------ physics through the bus
def test_fdp_goal_moves_the_spool_under_the_profile_and_raises_the_tendon_force(bus2):
    b = bus2
    torque_on = sdk.GroupSyncWrite(b.port, b.ph, 64, 1)  # all six hold, or the finger collapses
    for dxl_id in IDS:
        torque_on.addParam(dxl_id, [1])
    assert torque_on.txPacket() == sdk.COMM_SUCCESS
    b.round_trip()
    b.plant.advance(0.05)
    force0 = b.plant.state()[12]
    b.ok_write(1, 108, 20, 4)  # 20 x 214.577 rev/min^2 = 1.87 rad/s^2
    b.ok_write(1, 112, 10, 4)  # 10 x 0.229 rpm = 0.24 rad/s
    start_ticks = b.ok_read(1, 132, 4, signed=True)
    goal_ticks = start_ticks + 60  # 92 mrad: 1.8 mm of tendon on the 20 mm spool
    b.ok_write(1, 116, goal_ticks, 4)
    vmax, amax = mx64.velocity_units_to_rad_s(10), mx64.profile_accel_units_to_rad_s2(20)
    speeds = []
    for _ in range(60):
        b.plant.advance(0.01)
        speeds.append(b.ok_read(1, 128, 4, signed=True))
        assert b.plant.servo_state(FDP).velocity_rad_s <= vmax + 1e-9
    assert max(speeds) == mx64.rad_s_to_velocity_units(vmax)
    b.plant.advance(0.5)
    assert b.ok_read(1, 132, 4, signed=True) == goal_ticks
    assert b.ok_read(1, 122, 1) == 0
    assert b.plant.servo_state(FDP).angle_rad == pytest.approx(mx64.ticks_to_rad(goal_ticks - 2048))
    assert b.plant.state()[12] > force0 + 0.2
    assert amax > 0 and b.ok_read(1, 126, 2, signed=True) > 0  # tendon tension shows as motor current
