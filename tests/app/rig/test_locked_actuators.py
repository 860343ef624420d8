"""LockedActuators (app/rig/locked_actuators.py): the rig's threads share one servo bus through it."""

from __future__ import annotations

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
def bus_on_twin():
    config = default_rig_config()
    config = replace(config, actuators=replace(config.actuators, packet_timeout_ms=300.0))
    twin = backends.start_twin_rig(config)
    device = backends.open_device("actuators", config, twin, 1.0)
    yield device
    device.close()
    twin.stop()


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
