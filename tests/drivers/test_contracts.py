"""Every backend of app/rig/backends.py's tables against its family's interface (drivers/interfaces.py).

One suite per interface, run once per backend name in the family's table, asserting what the app relies
on: connect / start / stop / close as the rig calls them (and twice), sample shapes, dtypes and units,
host timestamps on ``time.monotonic()`` and increasing, a fault as a DeviceError naming the device, and
torque off / stop leaving the device safe. A backend is built by the table's own factory from a rig.toml
config: the "twin" backend on the twin rig the table starts; a backend off the twin ("real") is the real
driver over the real protocol with rig.toml pointing at that same twin's endpoint (its pty, its gRPC
address, its NatNet port), since no hardware is here.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import replace

import numpy as np
import pytest
from conftest import wait_for
from uartlab.app.rig import backends
from uartlab.app.rig.config import RigConfig, default_rig_config
from uartlab.drivers.interfaces import Actuators, ActuatorSample, AnalogBlock, AnalogInput, DeviceError, Mocap
from uartlab.sim.names import TENDONS

# The twins serve on this process's threads against the drivers' deadlines: with the rig tests (conftest).
pytestmark = pytest.mark.realtime

# The driver's floor under the reply timeout: on a loaded machine the twin's serving thread can be late.
PACKET_TIMEOUT_MS = 300.0
ED = TENDONS.index("ED")


def _on_twin_endpoints(family: str, config: RigConfig, twin) -> RigConfig:
    """rig.toml of a backend off the twin, pointed at the twin's endpoint for this family."""
    if family == "actuators":
        return replace(config, actuators=replace(config.actuators, port=twin.bus.port))
    if family == "daq":
        return replace(config, daq=replace(config.daq, grpc_address=twin.daq.address))
    return replace(config, mocap=replace(config.mocap, server="127.0.0.1", command_port=twin.motive.command_port,
                                         local="127.0.0.1"))


@pytest.fixture
def twin_rig():
    # In this process: these tests unplug the bus and Motive twins under the drivers (bus.stop, motive.stop).
    twin = backends.TWIN_RIG["in_process"].load()(default_rig_config())
    yield twin
    twin.stop()


def _config(family: str, name: str, twin, **section) -> RigConfig:
    config = default_rig_config()
    config = replace(config, actuators=replace(config.actuators, packet_timeout_ms=PACKET_TIMEOUT_MS))
    config = replace(config, **{family: replace(getattr(config, family), backend=name, **section)})
    if not backends.FAMILIES[family][name].on_twin:
        config = _on_twin_endpoints(family, config, twin)
    return config


class Opened:
    """Devices built by a family's factories in one test, each closed (``close`` / ``stop``) after it."""

    def __init__(self, family: str, name: str, twin, finish: str):
        self.family, self.name, self.twin, self.finish = family, name, twin, finish
        self.devices = []

    def __call__(self, **section):
        device = backends.open_device(self.family, _config(self.family, self.name, self.twin, **section), self.twin,
                                      1.0)
        self.devices.append(device)
        return device

    def close_all(self) -> None:
        for device in self.devices:
            with contextlib.suppress(DeviceError):  # a test that took the twin away: the device is gone already
                getattr(device, self.finish)()


def _opened(request, family: str, twin, finish: str):
    opened = Opened(family, request.param, twin, finish)
    yield opened
    opened.close_all()


@pytest.fixture(params=sorted(backends.ACTUATORS))
def make_actuators(request, twin_rig):
    yield from _opened(request, "actuators", twin_rig, "close")


@pytest.fixture(params=sorted(backends.DAQ))
def make_daq(request, twin_rig):
    yield from _opened(request, "daq", twin_rig, "stop")


@pytest.fixture(params=sorted(backends.MOCAP))
def make_mocap(request, twin_rig):
    yield from _opened(request, "mocap", twin_rig, "close")


def _assert_host_times(times_s: list[float], before_s: float, after_s: float) -> None:
    assert np.all(np.diff(times_s) > 0), times_s
    assert before_s <= times_s[0] and times_s[-1] <= after_s


# ------------------------------------------------------------------ Actuators
def _torque(twin) -> list[bool]:
    return [twin.plant.servo_state(i).torque_enabled for i in range(len(TENDONS))]


def _torque_after_a_read(actuators: Actuators, twin) -> list[bool]:
    """A sync write gets no reply: a read's replies prove the writes before it were served."""
    actuators.read()
    return _torque(twin)


def test_actuators_samples_have_six_of_each_in_si_units_on_the_host_clock(make_actuators):
    actuators = make_actuators()
    assert isinstance(actuators, Actuators)
    actuators.connect()
    before_s = time.monotonic()
    samples = [actuators.read() for _ in range(5)]
    after_s = time.monotonic()
    for s in samples:
        assert isinstance(s, ActuatorSample)
        for name in ("excursion_m", "velocity_m_per_s", "current_A"):
            value = getattr(s, name)
            assert value.shape == (6,) and value.dtype == np.float64 and np.all(np.isfinite(value)), name
        assert s.moving.shape == (6,) and s.moving.dtype == np.bool_
        assert s.hardware_error.shape == (6,) and np.issubdtype(s.hardware_error.dtype, np.integer)
        assert not s.hardware_error.any()
        assert s.device_tick_ms is None or (s.device_tick_ms.shape == (6,)
                                            and np.issubdtype(s.device_tick_ms.dtype, np.integer))
        assert np.all(np.abs(s.excursion_m) < 0.060)   # metres: the SEAs' travel is tens of mm
    _assert_host_times([s.host_time_s for s in samples], before_s, after_s)


def test_actuators_enable_command_stop_and_close_as_the_rig_does(make_actuators, twin_rig):
    actuators = make_actuators()
    actuators.connect()
    assert not any(_torque(twin_rig))                    # connect leaves torque off
    actuators.enable()
    assert all(_torque_after_a_read(actuators, twin_rig))
    goal_m = actuators.read().excursion_m + np.where(np.arange(6) == ED, 0.002, 0.0)
    actuators.command(goal_m)
    assert wait_for(lambda: abs(actuators.read().excursion_m[ED] - goal_m[ED]) < 2e-4, 3.0)
    actuators.stop(torque_off=False)                     # hold where they are
    assert all(_torque_after_a_read(actuators, twin_rig))
    actuators.stop()                                     # torque off
    assert not any(_torque_after_a_read(actuators, twin_rig))
    actuators.enable()
    actuators.torque_off()                               # the E-stop
    assert not any(_torque_after_a_read(actuators, twin_rig))
    actuators.enable()
    assert all(_torque_after_a_read(actuators, twin_rig))
    actuators.close()                                    # torque off, then the port closes
    assert wait_for(lambda: not any(_torque(twin_rig)), 1.0), _torque(twin_rig)
    actuators.close()                                    # the rig's stop may close it again


def test_actuators_servo_fault_is_a_device_error_naming_the_servo_and_torque_goes_off(make_actuators, twin_rig):
    actuators = make_actuators()
    actuators.connect()
    actuators.enable()
    twin_rig.plant.inject_overload(ED)
    with pytest.raises(DeviceError, match=rf"^MX-64 ID {ED + 1} \(ED\): "):
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:
            actuators.read()
    assert wait_for(lambda: not any(_torque(twin_rig)), 1.0), _torque(twin_rig)


def test_actuators_without_their_bus_are_a_device_error_naming_it(make_actuators, twin_rig):
    actuators = make_actuators()
    twin_rig.bus.stop()
    with pytest.raises(DeviceError, match=r"^MX-64 bus: "):
        actuators.connect()


# ------------------------------------------------------------------ AnalogInput
def _take(daq: AnalogInput, n: int) -> list[AnalogBlock]:
    blocks = []
    for block in daq.blocks(timeout_s=2.0):
        blocks.append(block)
        if len(blocks) == n:
            return blocks
    raise AssertionError(f"acquisition ended after {len(blocks)} blocks")


def test_daq_blocks_are_contiguous_volts_in_the_declared_columns_on_the_host_clock(make_daq):
    daq = make_daq()
    assert isinstance(daq, AnalogInput)
    cols = daq.columns
    assert (len(cols["pots"]), len(cols["reference"]), len(cols["gauges"])) == (6, 1, 6)
    width = len(cols["pots"] + cols["reference"] + cols["gauges"])
    assert sorted(cols["pots"] + cols["reference"] + cols["gauges"]) == list(range(width))
    before_s = time.monotonic()
    daq.start()
    blocks = _take(daq, 5)
    after_s = time.monotonic()
    for b in blocks:
        assert b.volts.ndim == 2 and b.volts.shape[1] == width and b.volts.dtype == np.float64
        assert len(b.channel_names) == width and b.rate_hz == default_rig_config().daq.rate_hz
        assert np.all(np.abs(b.volts) <= 10.0)           # volts, within the USB-6210's +-10 V range
    assert np.concatenate([b.volts for b in blocks])[:, cols["reference"]].mean() == pytest.approx(5.0, abs=0.01)
    assert [b.first_sample_index for b in blocks[1:]] == [a.first_sample_index + len(a.volts) + b.gap_before
                                                          for a, b in zip(blocks, blocks[1:], strict=False)]
    _assert_host_times([b.host_time_s for b in blocks], before_s, after_s)


def test_daq_start_once_stop_ends_the_blocks_and_twice_is_safe(make_daq):
    daq = make_daq()
    daq.start()
    _take(daq, 1)
    with pytest.raises(DeviceError, match=rf"^{daq.name}: "):
        daq.start()
    daq.stop()
    t0 = time.monotonic()
    for _ in daq.blocks(timeout_s=2.0):   # what was queued, then the end: no wait for the timeout
        pass
    assert time.monotonic() - t0 < 1.0
    daq.stop()


def test_daq_errors_name_the_device(make_daq):
    daq = make_daq(device="Dev2")    # the twin is Dev1
    assert daq.name == "USB-6210 Dev2"
    with pytest.raises(DeviceError, match=r"^USB-6210 Dev2: "):
        daq.start()


def test_daq_server_going_away_is_a_device_error_naming_the_device(make_daq, twin_rig):
    daq = make_daq()
    daq.start()
    _take(daq, 2)
    twin_rig.daq.stop()
    with pytest.raises(DeviceError, match=rf"^{daq.name}: "):
        _take(daq, 1000)


# ------------------------------------------------------------------ Mocap
def test_mocap_frames_have_the_named_markers_in_metres_on_the_host_clock(make_mocap):
    mocap = make_mocap()
    assert isinstance(mocap, Mocap)
    before_s = time.monotonic()      # frames queue from the handshake on
    mocap.connect()
    names = mocap.marker_names
    assert names and all(isinstance(n, str) for n in names)
    assert mocap.rate_hz is None or mocap.rate_hz > 0
    samples = []
    for sample in mocap.samples(timeout_s=1.0):
        samples.append(sample)
        if len(samples) == 10:
            break
    after_s = time.monotonic()
    assert len(samples) == 10
    for s in samples:
        assert s.markers_m.shape == (len(names), 3) and s.markers_m.dtype == np.float64
        assert np.all(np.abs(s.markers_m[np.isfinite(s.markers_m)]) < 2.0)   # metres: a finger in a capture volume
        assert np.isfinite(s.markers_m).any()
        assert s.mid_exposure_ticks is None or isinstance(s.mid_exposure_ticks, int)
    assert np.all(np.diff([s.frame_number for s in samples]) > 0)
    assert np.all(np.diff([s.device_time_s for s in samples]) >= 0)   # the plant clock steps: never back
    _assert_host_times([s.host_time_s for s in samples], before_s, after_s)


def test_mocap_close_ends_the_samples_and_twice_is_safe(make_mocap):
    mocap = make_mocap()
    mocap.connect()
    next(iter(mocap.samples(timeout_s=1.0)))
    mocap.close()
    t0 = time.monotonic()
    for _ in mocap.samples(timeout_s=5.0):
        pass
    assert time.monotonic() - t0 < 1.0
    mocap.close()


def test_mocap_without_its_server_is_a_device_error_naming_it(make_mocap, twin_rig):
    mocap = make_mocap()
    twin_rig.motive.stop()
    with pytest.raises(DeviceError, match=r"^OptiTrack: "):
        mocap.connect()
