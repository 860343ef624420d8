"""The MX-64 bus driver against the bus twin and the real plant, on both protocols.

The plant is advanced by the tests (no PlantClock), so the physics is deterministic; only the twin's
serving thread and its bus watchdog run on the wall clock. Broadcasts get no reply, so a test that checks
what a sync write did either reads first (a reply proves everything before it was served) or waits.
The driver's packet timeout gets a 300 ms floor: on a loaded machine the twin's thread can be late.
"""

from __future__ import annotations

import re
import socket
import struct
import time

import dynamixel_sdk as sdk
import numpy as np
import pytest
from conftest import wait_for
from uartlab.app.gui.wording import for_operator
from uartlab.drivers import mx64
from uartlab.drivers.interfaces import DeviceError
from uartlab.drivers.mx64_bus import CommError, Mx64Bus, ServoError
from uartlab.drivers.sea import SeaGeometry
from uartlab.drivers.twins.dxl_bus import DxlBusTwin
from uartlab.drivers.twins.plant import Plant, PlantConfig, SeaConfig

# The twin serves on this process's thread against the driver's deadlines: with the rig tests (conftest).
pytestmark = pytest.mark.realtime

IDS = (1, 2, 3, 4, 5, 6)
TIMEOUT_MS = 300.0
SPOOL_M = 0.020
TICK_M = 2 * np.pi * SPOOL_M / 4096  # one encoder tick of tendon



def torque(plant: Plant) -> list[bool]:
    return [plant.servo_state(i).torque_enabled for i in range(6)]


class Rig:
    """A plant, its bus twin and a driver connected to it."""

    def __init__(self, protocol: float, plant: Plant | None = None, ids=IDS, **kwargs):
        self.protocol = protocol
        self.plant = plant or Plant(PlantConfig())
        self.twin = DxlBusTwin(self.plant, ids=IDS, protocol=protocol).start()
        self.bus = Mx64Bus(self.twin.port, ids=ids, protocol=protocol, **{"packet_timeout_ms": TIMEOUT_MS, **kwargs})

    def close(self) -> None:
        self.bus.close()
        self.twin.stop()

    def settle(self, excursion_m: np.ndarray, seconds: float = 1.0):
        self.bus.command(excursion_m)
        self.bus.read()  # its replies prove the twin has applied the sync write before the plant moves
        self.plant.advance(seconds)
        return self.bus.read()


@pytest.fixture(params=[2.0, 1.0], ids=["p2", "p1"])
def rig(request):
    r = Rig(request.param)
    r.bus.connect()
    yield r
    r.close()


@pytest.fixture
def rig2():
    r = Rig(2.0)
    r.bus.connect()
    yield r
    r.close()


# ------------------------------------------------------------------ connect
def test_connect_configures_every_servo(rig):
    for dxl_id in IDS:
        assert rig.twin.value(dxl_id, "Return Delay Time") == 0
        assert rig.twin.value(dxl_id, "Torque Enable") == 0
        if rig.protocol == 2.0:
            assert rig.twin.value(dxl_id, "Operating Mode") == mx64.OP_MODE_EXTENDED_POSITION
            assert rig.twin.value(dxl_id, "Profile Velocity") == mx64.rad_s_to_velocity_units(4.0)
        else:
            assert rig.twin.value(dxl_id, "CW Angle Limit") == rig.twin.value(dxl_id, "CCW Angle Limit") == 4095
    assert rig.bus.stats.timeouts == rig.bus.stats.corrupt == rig.bus.stats.retries == 0


def test_bus_watchdog_is_armed_on_protocol_2(rig2):
    assert all(rig2.twin.value(i, "Bus Watchdog") == 100 // mx64.BUS_WATCHDOG_MS_PER_UNIT for i in IDS)


def test_a_missing_servo_is_named():
    r = Rig(2.0, ids=(1, 2, 3, 4, 5, 7), packet_timeout_ms=None)  # the SDK's own 34 ms: nobody is coming
    try:
        with pytest.raises(DeviceError, match=r"ID 7 \(LUM\).*no reply to ping"):
            r.bus.connect()
    finally:
        r.close()


def test_a_wrong_model_is_named():
    r = Rig(2.0)
    r.twin.servo(3).set("Model Number", 1020)  # an XM430 where an MX-64 should be
    try:
        with pytest.raises(ServoError, match=r"ID 3 \(ED\).*model number 1020 found, expected 311"):
            r.bus.connect()
    finally:
        r.close()


def test_a_port_that_does_not_exist_is_named():
    with pytest.raises(DeviceError, match="/dev/ttyUSB-nonexistent"):
        Mx64Bus("/dev/ttyUSB-nonexistent").connect()


def test_calls_before_connect_say_so():
    with pytest.raises(DeviceError, match="not connected"):
        Mx64Bus("/dev/ttyUSB0").read()


# ------------------------------------------------------------------ tendon space
def test_command_and_read_round_trip_in_tendon_space(rig):
    rig.bus.enable()
    goal = np.array([0.010, 0.0, 0.004, 0.0, -0.002, 0.0])
    sample = rig.settle(goal)
    for i in range(6):
        assert rig.plant.servo_state(i).angle_rad * SPOOL_M == pytest.approx(goal[i], abs=TICK_M)
    np.testing.assert_allclose(sample.excursion_m, goal, atol=TICK_M)
    assert not sample.moving.any() and not sample.hardware_error.any()
    assert sample.current_A[0] > 0  # the reeled-in FDP pulls harder: more motor current
    np.testing.assert_array_equal(sample.device_tick_ms, int(rig.plant.time_s * 1000) % 32768)


def test_a_mirrored_spool_turns_the_other_way():
    seas = [SeaGeometry(), SeaGeometry(direction=-1)] + [SeaGeometry() for _ in range(4)]
    r = Rig(2.0, seas=seas)
    try:
        r.bus.connect()
        r.bus.enable()
        sample = r.settle(np.array([0.0, 0.005, 0, 0, 0, 0]))
        assert r.plant.servo_state(1).angle_rad * SPOOL_M == pytest.approx(-0.005, abs=TICK_M)
        assert sample.excursion_m[1] == pytest.approx(0.005, abs=TICK_M)
    finally:
        r.close()


def test_one_sync_write_and_one_read_per_tick(rig):
    rig.bus.enable()
    rig.bus.read()
    packets, replies, sent = rig.twin.stats.packets, rig.twin.stats.replies, rig.bus.stats.transactions
    for _ in range(5):
        rig.bus.command(np.full(6, 0.001))
        rig.bus.read()
    assert rig.twin.stats.packets - packets == 10
    assert rig.twin.stats.replies - replies == 30
    assert rig.bus.stats.transactions - sent == 10


def test_an_excursion_beyond_the_servo_range_is_refused(rig):
    with pytest.raises(ValueError, match="FDS"):
        rig.bus.command(np.array([0.0, 100.0, 0, 0, 0, 0]))
    with pytest.raises(ValueError):
        rig.bus.command(np.zeros(5))


def test_stop_without_torque_off_holds_where_it_is(rig2):
    b, plant = rig2.bus, rig2.plant
    b.enable()
    b.command(np.array([0.010, 0, 0, 0, 0, 0]))
    b.read()
    plant.advance(0.05)  # on its way (4 rad/s x 20 mm = 80 mm/s)
    b.stop(torque_off=False)
    b.read()  # proves the hold (a sync write) was served
    held = plant.servo_state(0).angle_rad
    plant.advance(1.0)
    assert plant.servo_state(0).angle_rad * SPOOL_M < 0.008
    assert plant.servo_state(0).angle_rad == pytest.approx(held, abs=0.1)  # decelerates, then holds
    assert all(torque(plant))


# ------------------------------------------------------------------ faults
def test_an_unplugged_servo_is_named_and_the_others_lose_torque(rig):
    rig.bus.enable()
    rig.settle(np.zeros(6), 0.01)
    rig.twin.unplug(3)
    with pytest.raises(ServoError, match=r"ID 3 \(ED\).*no reply") as info:
        rig.bus.read()
    assert info.value.servo_id == 3 and info.value.tendon == "ED"
    assert wait_for(lambda: torque(rig.plant) == [False, False, True, False, False, False])  # 3 heard nothing
    assert rig.bus.stats.timeouts == 1 + rig.bus.max_retries
    assert rig.bus.stats.by_servo[3]["timeout"] == 1 + rig.bus.max_retries
    assert rig.bus.events[-1].kind == "torque off"


def test_a_corrupted_reply_is_retried_and_counted(rig):
    rig.bus.enable()
    rig.twin.faults.corrupt_next(1)  # the first status packet of the next read: servo 1's
    sample = rig.bus.read()
    assert sample.excursion_m.shape == (6,)
    stats = rig.bus.stats
    # every retry accounted for: the corrupted reply's, and a late one's on a loaded machine (a timeout)
    assert stats.corrupt == 1 and 1 <= stats.retries <= 1 + stats.timeouts + stats.status_errors, stats
    assert rig.bus.stats.by_servo[1]["corrupt"] == 1
    assert all(torque(rig.plant))


def test_persistent_corruption_raises_comm_error_after_the_retries(rig):
    rig.bus.enable()
    rig.twin.faults.corrupt_probability = 1.0
    with pytest.raises(CommError, match=r"ID 1 \(FDP\).*corrupt replies after 3 tries"):
        rig.bus.read()
    assert rig.bus.stats.retries == rig.bus.max_retries == 2
    rig.twin.faults.clear()
    assert wait_for(lambda: not any(torque(rig.plant)))  # a bus we cannot understand drives nothing


def test_a_dropped_reply_is_retried(rig):
    rig.bus.enable()
    rig.twin.faults.drop_next(1)
    rig.bus.read()
    assert rig.bus.stats.timeouts == 1 and rig.bus.stats.retries == 1


@pytest.mark.parametrize("protocol", [2.0, 1.0], ids=["p2", "p1"])
def test_overload_shuts_down_the_servo_and_torque_goes_off_on_all(protocol):
    seas = [SeaConfig(force_limit_N=2.0)] + [SeaConfig() for _ in range(5)]  # FDP starts at 1.3 N
    r = Rig(protocol, plant=Plant(PlantConfig(seas=seas)))
    try:
        r.bus.connect()
        r.bus.enable()
        r.bus.command(np.array([0.010, 0, 0, 0, 0, 0]))
        r.bus.read()
        r.plant.advance(0.5)
        assert r.plant.servo_state(0).hardware_error == mx64.HW_OVERLOAD
        with pytest.raises(ServoError, match=r"ID 1 \(FDP\).*overload") as info:
            r.bus.read()
        assert info.value.hardware_error == mx64.HW_OVERLOAD
        assert info.value.sample.hardware_error[0] == mx64.HW_OVERLOAD
        assert wait_for(lambda: not any(torque(r.plant)))
        if r.protocol == 2.0:
            r.bus.reboot(1)
            assert r.twin.value(1, "Hardware Error Status") == 0
            assert r.twin.value(1, "Bus Watchdog") == 5  # the reboot reset RAM; the driver re-armed it
            r.bus.enable()
            assert wait_for(lambda: all(torque(r.plant)))
        else:
            with pytest.raises(ServoError, match="power-cycle"):
                r.bus.reboot(1)
    finally:
        r.close()


def test_a_tripped_bus_watchdog_is_detected(rig2):
    b = rig2.bus
    b.watchdog_ms = 40.0
    b.enable()
    b.read()
    assert wait_for(lambda: rig2.twin.value(1, "Bus Watchdog") == mx64.BUS_WATCHDOG_ERROR)
    b.command(np.full(6, 0.002))
    with pytest.raises(ServoError, match="bus watchdog tripped") as trip:
        b.read()
    assert wait_for(lambda: not any(torque(rig2.plant)))
    # the fault says how long this host itself was silent: here it was, while the test waited for the trip
    assert silence_ms(trip.value) >= 40
    said = for_operator(str(trip.value))
    assert said is not None and "this computer was silent for more than 40 ms" in said.text
    b.watchdog_ms = 100.0
    b.enable()  # clears the trip and re-arms
    assert wait_for(lambda: rig2.twin.value(1, "Bus Watchdog") == 5)
    rig2.settle(np.full(6, 0.002), 0.5)


def test_a_watchdog_trip_while_this_host_kept_talking_says_the_host_was_not_silent(rig2):
    b = rig2.bus
    b.enable()
    b.command(np.full(6, 0.002))
    for _ in range(10):
        b.read()                      # polling, as the rig's servo reader does: never silent for long
    rig2.twin.trip_watchdog(3)        # the servo lets go all the same (a USB adapter holding packets back)
    with pytest.raises(ServoError, match="bus watchdog tripped") as trip:
        b.read()
    assert silence_ms(trip.value) < b.watchdog_ms
    said = for_operator(str(trip.value))
    assert said is not None and "though this computer paused at most" in said.text
    assert "U2D2" in said.next_step
    assert "this computer's CPU" in for_operator(str(trip.value), twin=True).next_step


def silence_ms(fault: Exception) -> int:
    """This host's longest silence, as the driver's watchdog fault gives it."""
    found = re.search(r"longest silence on the bus in the last [\d.]+ s: (\d+) ms", str(fault))
    assert found, fault
    return int(found[1])


def test_ctrl_c_during_command_turns_torque_off(rig, monkeypatch):
    rig.bus.enable()
    rig.bus.read()
    assert all(torque(rig.plant))
    goal_address = mx64.control_table(rig.protocol)["Goal Position"].address
    send = sdk.GroupSyncWrite.txPacket

    def interrupted(group):
        if group.start_address == goal_address:
            group.port.is_using = True  # as if Ctrl-C landed inside the SDK's transaction
            raise KeyboardInterrupt
        return send(group)

    monkeypatch.setattr(sdk.GroupSyncWrite, "txPacket", interrupted)
    with pytest.raises(KeyboardInterrupt):
        rig.bus.command(np.full(6, 0.003))
    assert wait_for(lambda: not any(torque(rig.plant)))


def test_close_turns_torque_off(rig):
    rig.bus.enable()
    rig.bus.read()
    assert all(torque(rig.plant))
    rig.bus.close()
    assert wait_for(lambda: not any(torque(rig.plant)))
    rig.bus.close()  # twice is harmless

    assert wait_for(lambda: not any(torque(rig.plant)))
    rig.bus.close()  # twice is harmless


# A line that went away is met during the next transaction: closed, by its write or its wait for the reply;
# reset, already by its first drain of the input. Both are said the same way.
@pytest.mark.parametrize("reset", [False, True], ids=["closed", "reset"])
def test_a_line_that_goes_away_is_said_on_every_later_transaction_not_port_in_use(reset):
    r = Rig(2.0)
    r.bus = Mx64Bus(r.twin.url, ids=IDS, protocol=2.0, packet_timeout_ms=TIMEOUT_MS)   # a serial-over-IP line
    r.bus.connect()
    try:
        r.bus.enable()
        if reset:   # the adapter's end aborts the connection (an RST, not a FIN)
            r.twin._host.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        r.twin.stop()                                 # the adapter (here, the bus twin) is gone
        time.sleep(0.1)                               # ...before the next transaction starts
        with pytest.raises(DeviceError, match=r"MX-64 bus: the serial line socket://\S+ is gone \("):
            r.bus.read()
        for later in (r.bus.read, lambda: r.bus.command(np.zeros(6)), r.bus.torque_off):
            with pytest.raises(DeviceError, match="is gone") as said:
                later()
            assert "Port is in use" not in str(said.value)
        with pytest.raises(DeviceError, match="is gone"):   # its torque off could not be sent...
            r.bus.close()
        assert r.bus._port is None                         # ...and the port is closed all the same
    finally:
        r.close()
