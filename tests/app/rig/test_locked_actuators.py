"""LockedActuators (app/rig/locked_actuators.py): the rig's threads share one servo bus through it."""

from __future__ import annotations

import math
import threading
import time
from dataclasses import replace

import numpy as np
import pytest
from uartlab.app.rig import backends
from uartlab.app.rig.config import default_rig_config
from uartlab.app.rig.locked_actuators import LockedActuators
from uartlab.drivers.interfaces import Actuators


@pytest.fixture
def twin_and_bus():
    config = default_rig_config()
    config = replace(config, actuators=replace(config.actuators, packet_timeout_ms=300.0))
    twin = backends.start_twin_rig(config)
    device = backends.open_device("actuators", config, twin, 1.0)
    yield twin, device
    device.close()
    twin.stop()


@pytest.fixture
def bus_on_twin(twin_and_bus):
    return twin_and_bus[1]


def test_the_stream_the_engine_and_the_e_stop_share_the_bus_without_interleaving(bus_on_twin):
    actuators = LockedActuators(bus_on_twin)
    assert isinstance(actuators, Actuators)
    actuators.connect()
    actuators.enable()
    hold_m = actuators.read().excursion_m
    failures: list[BaseException] = []
    done = threading.Event()

    def keep(call) -> None:
        try:
            while not done.is_set():
                call()
        except BaseException as exc:  # reported below, with the bus counters
            failures.append(exc)

    threads = [threading.Thread(target=keep, args=(call,)) for call in (
        actuators.read,                                   # the actuators stream
        lambda: actuators.command(hold_m),                # the engine's ticks
        lambda: (actuators.stop(torque_off=False), actuators.enable()),  # holds and re-enables
    )]
    for t in threads:
        t.start()
    time.sleep(1.0)
    done.set()
    for t in threads:
        t.join(timeout=5)
    stats = bus_on_twin.stats
    # A late twin (a loaded machine) may time a reply out and the driver retry; interleaved transactions
    # are garbled replies or failed calls.
    assert not failures and stats.corrupt == 0, (failures, stats)
    assert stats.transactions > 100
    actuators.torque_off()
    assert not actuators.read().hardware_error.any()
    assert np.allclose(actuators.read().excursion_m, hold_m, atol=1e-3)


def commands_during_a_silent_read(twin, bus, silent_ids) -> tuple[LockedActuators, list, list[float], float]:
    """Unplug ``silent_ids``, read the bus on a thread (it retries, then turns torque off) and command every
    10 ms meanwhile: (the actuators, the read's errors, each command's wait in s, the read's duration in s)."""
    actuators = LockedActuators(bus)
    actuators.connect()
    actuators.enable()
    hold_m = actuators.read().excursion_m
    for dxl_id in silent_ids:
        twin.bus.unplug(dxl_id)
    read_error: list[BaseException] = []
    reading = threading.Event()

    def read_silent() -> None:
        reading.set()
        try:
            actuators.read()
        except Exception as exc:  # the lost servos: expected
            read_error.append(exc)

    reader = threading.Thread(target=read_silent)
    reader.start()
    reading.wait()
    time.sleep(0.02)  # the group read is on the wire
    waits_s, started = [], time.monotonic()
    while reader.is_alive():
        t0 = time.monotonic()
        actuators.command(hold_m)
        waits_s.append(time.monotonic() - t0)
        time.sleep(0.01)
    read_s = time.monotonic() - started
    for dxl_id in silent_ids:
        twin.bus.replug(dxl_id)
    return actuators, read_error, waits_s, read_s


def test_a_command_waits_for_one_transaction_not_for_every_retry_of_a_silent_servo(twin_and_bus):
    """A servo stops answering (its data line cut): the stream's read retries it, packet timeout after packet
    timeout, and then turns torque off. The engine's commands meanwhile wait for the one transaction in
    flight, not for the whole read."""
    twin, bus = twin_and_bus
    timeout_s = bus.packet_timeout_ms / 1e3
    actuators, read_error, waits_s, read_s = commands_during_a_silent_read(twin, bus, [3])
    assert read_error and "no reply" in str(read_error[0])
    # the read took its three tries and the torque-off confirmation: four timeouts
    assert read_s > 3.5 * timeout_s, read_s
    assert actuators.lock.yields >= 2
    # every command went out within about one transaction of being asked, not after the whole read (the
    # read is four timeouts long: a command waiting for all of it, or for two of them, fails here)
    assert max(waits_s) < 0.5 * read_s, (max(waits_s), timeout_s, read_s)
    assert len(waits_s) >= 3


def test_a_command_waits_for_one_confirmation_when_the_whole_bus_goes_silent(twin_and_bus):
    """Every servo stops answering (the bus's power or cable lost): the stream's read fails and turns torque off,
    confirming it servo by servo, each confirmation a packet timeout. The control loop's commands go out
    between them, so its ticks (and the interlocks they check) go on."""
    twin, bus = twin_and_bus
    _, read_error, waits_s, read_s = commands_during_a_silent_read(twin, bus, bus.ids)
    assert read_error and "no reply" in str(read_error[0])
    timeout_s = bus.packet_timeout_ms / 1e3
    assert read_s > 8 * timeout_s, read_s   # the read's three tries and six confirmations
    # a command waiting for all six confirmations (two thirds of the read) fails here
    assert max(waits_s) < 0.4 * read_s, (max(waits_s), timeout_s, read_s)


def test_a_background_holder_lets_an_urgent_caller_in_between_transactions():
    from uartlab.app.rig.locked_actuators import BusLock

    lock, order = BusLock(), []
    lock.acquire(urgent=False)
    urgent = threading.Thread(target=lambda: (lock.acquire(urgent=True), order.append("urgent"), lock.release()))
    urgent.start()
    while not lock._urgent_waiting:  # the urgent caller is queued
        time.sleep(0.001)
    lock.yield_to_urgent()          # between two transactions of the background holder
    order.append("background again")
    lock.release()
    urgent.join(timeout=2)
    assert order == ["urgent", "background again"]
    # an urgent holder never yields: its sequence (enable: read, goals, torque on) stays whole
    lock.acquire(urgent=True)
    other = threading.Thread(target=lambda: (lock.acquire(urgent=True), order.append("other"), lock.release()))
    other.start()
    while not lock._urgent_waiting:
        time.sleep(0.001)
    lock.yield_to_urgent()
    order.append("urgent holder done")
    lock.release()
    other.join(timeout=2)
    assert order[2:] == ["urgent holder done", "other"]


def test_a_read_does_not_start_just_before_the_control_loops_next_tick(bus_on_twin):
    actuators = LockedActuators(bus_on_twin)
    actuators.connect()
    actuators.read()
    actuators.announce_tick(time.monotonic() + 10.0)   # far away: the read goes at once
    actuators.read()
    assert actuators.reads_deferred == 0
    for _ in range(5):  # a loaded machine may let the guard pass between the announcement and the read
        due_s = time.monotonic() + 0.5 * actuators.read_guard_s   # inside the guard: the bus stays free
        actuators.announce_tick(due_s)
        actuators.read()
        if actuators.reads_deferred:
            break
    assert actuators.reads_deferred == 1
    assert time.monotonic() >= due_s                    # it waited for the tick (or for the guard to pass)
    actuators.announce_tick(-math.inf)                  # the loop ended: nothing to wait for
    actuators.read()
    assert actuators.reads_deferred == 1
