"""Usb6210 and the sensor conversions through the unmodified nidaqmx client against the DAQ twin.

The plant is not advanced while the DAQ runs (no PlantClock), so every channel holds the plant's
present value plus fresh noise and the converted forces and wrench can be checked against the plant.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time

import numpy as np
import pytest
from uartlab.drivers.interfaces import AnalogBlock, ConfigError, DeviceError
from uartlab.drivers.sea import SeaCalibration
from uartlab.drivers.sensors import Nano17, SeaForces
from uartlab.drivers.twins.daq_grpc import DaqTwin
from uartlab.drivers.twins.nano17 import load_twin_calibration
from uartlab.drivers.twins.plant import Plant, PlantConfig
from uartlab.drivers.usb6210 import ADC_BITS, RANGE_V, Usb6210

# The DAQ twin samples in real time and the tests judge block timing: deadline threads.
pytestmark = pytest.mark.realtime
RATE_HZ = 1000.0


@pytest.fixture
def make_daq(daq_twin):
    """Usb6210s on the module's twin (each on its own generated session), stopped after the test."""
    made = []

    def make(on: DaqTwin | None = None, **kwargs) -> Usb6210:
        made.append(Usb6210(grpc_options=(on or daq_twin).grpc_options(""), **kwargs))
        return made[-1]

    yield make
    for daq in made:
        daq.stop()


def take(daq: Usb6210, n: int, timeout_s: float = 2.0) -> list[AnalogBlock]:
    blocks = []
    for block in daq.blocks(timeout_s=timeout_s):
        blocks.append(block)
        if len(blocks) == n:
            return blocks
    raise AssertionError(f"acquisition ended after {len(blocks)} blocks")


def assert_accounted_for(blocks: list[AnalogBlock]) -> None:
    """Every sample either delivered or counted in a gap: nothing lost silently."""
    for a, b in zip(blocks, blocks[1:], strict=False):
        assert b.first_sample_index == a.first_sample_index + len(a.volts) + b.gap_before


# ------------------------------------------------------------ acquisition
def test_blocks_are_contiguous_sized_and_on_the_host_clock(make_daq):
    daq = make_daq(rate_hz=RATE_HZ)
    assert daq.block_samples == 50 and len(daq.channel_names) == 13
    daq.start()
    blocks = take(daq, 30)
    daq.stop()
    assert all(b.volts.shape == (50, 13) and b.channel_names == daq.channel_names for b in blocks)
    assert [b.first_sample_index for b in blocks] == [blocks[0].first_sample_index + 50 * i for i in range(30)]
    assert all(b.gap_before == 0 for b in blocks)
    # The last sample of a block is taken before the block arrives, and shortly before (a fifth of the
    # 50 ms block at the median; 5.1 ms seen with the tests in two workers under `with-load 2`).
    lag_s = np.array([b.host_time_s - b.sample_times_s(daq.t0_s)[-1] for b in blocks])
    assert np.all(lag_s >= -1e-9) and np.median(lag_s) < 0.010 and np.all(lag_s < 0.050), lag_s
    span_s = blocks[-1].host_time_s - blocks[0].host_time_s
    rate_hz = (blocks[-1].first_sample_index - blocks[0].first_sample_index) / span_s
    assert rate_hz == pytest.approx(RATE_HZ, rel=0.02)
    assert daq.stats.overflows == daq.stats.consumer_drops == 0
    means = np.concatenate([b.volts for b in blocks]).mean(axis=0)
    assert means[daq.columns["reference"]] == pytest.approx([5.0], abs=1e-3)


def test_without_the_reference_there_are_12_channels(make_daq):
    daq = make_daq(reference_channel=None, rate_hz=2000.0, block_samples=200)
    daq.start()
    (block,) = take(daq, 1)
    assert block.volts.shape == (200, 12) and "pot_ref" not in block.channel_names


def test_a_stalled_consumer_loses_blocks_counted_as_a_gap(make_daq):
    daq = make_daq(rate_hz=RATE_HZ, buffer_s=0.3)   # 6 blocks of 50 queued at most
    daq.start()
    it = daq.blocks(timeout_s=2.0)
    first = [next(it)]
    time.sleep(0.8)
    blocks = first + [next(it) for _ in range(10)]
    assert daq.stats.consumer_drops > 0 and daq.stats.overflows == 0
    assert sum(b.gap_before for b in blocks) == pytest.approx(50 * daq.stats.consumer_drops, abs=50)
    assert_accounted_for(blocks)
    assert [e.kind for e in daq.events] == ["consumer_drop"]


def test_a_starved_reader_overflows_the_daq_buffer_restarts_and_records_the_gap(make_daq, daq_twin):
    events = []
    daq = make_daq(rate_hz=RATE_HZ, buffer_s=0.3, on_event=events.append)
    overflows_before = daq_twin.stats.overflows
    daq.start()
    blocks = take(daq, 2)
    # Starve the reader thread itself (as a long GC pause or a swapped-out process would): the twin's
    # 0.3 s buffer fills and NI-DAQmx latches -200279.
    real_read, stall_s, stalled = daq._reader.read_many_sample, 0.7, threading.Event()

    def starved_read(*args, **kwargs):
        if not stalled.is_set():
            stalled.set()
            time.sleep(stall_s)
        return real_read(*args, **kwargs)

    daq._reader.read_many_sample = starved_read
    blocks += take(daq, 12)
    assert daq.stats.overflows == daq.stats.restarts == 1 and daq_twin.stats.overflows == overflows_before + 1
    assert [e.kind for e in events] == ["overflow"] and events[0].samples_lost == daq.stats.samples_lost
    gaps = [b.gap_before for b in blocks if b.gap_before]
    assert len(gaps) == 1 and 0.8 * stall_s * RATE_HZ < gaps[0] < (stall_s + 0.1) * RATE_HZ
    assert_accounted_for(blocks)
    # Acquisition goes on after the restart, still on the host clock within a few ms (a clock carried over the
    # gap would be off by the stall, seconds) and the restart's own start (the samples lost are counted to its
    # beginning: under load the twin took 16 ms to start); one late delivery on a loaded machine stays within
    # a block.
    after = blocks[-5:]
    lag_s = np.array([b.host_time_s - b.sample_times_s(daq.t0_s)[-1] for b in after])
    assert 0 < daq.stats.restart_start_s < 1.0
    assert np.median(np.abs(lag_s)) < 0.01 + daq.stats.restart_start_s, (lag_s, daq.stats.restart_start_s)
    assert np.all(np.abs(lag_s) < 0.05 + daq.stats.restart_start_s), lag_s


def test_a_whole_process_held_up_past_the_consumers_timeout_is_not_a_silent_device(make_daq):
    """The process stopped (a loaded machine, a paused VM) longer than blocks()'s timeout: on waking, the
    consumer's wait is over, but the reader has not yet had its turn. The stream goes on."""
    daq = make_daq(rate_hz=RATE_HZ)
    daq.start()
    take(daq, 2)
    subprocess.Popen(["sh", "-c", f"kill -STOP {os.getpid()}; sleep 1.5; kill -CONT {os.getpid()}"])
    blocks = take(daq, 60, timeout_s=1.0)   # waits through the stop: 0.5 s past its timeout
    assert_accounted_for(blocks)
    assert daq.stats.overflows == 0


@pytest.mark.parametrize("time_scale", [1.0, 2.0])
def test_a_late_reader_takes_what_piled_up_in_one_read_and_is_current_again(daq_plant, make_daq, time_scale):
    """A reader thread starved for a while (a busy PC) reads the backlog in one call rather than one call per
    block, each a round trip to the device: behind a slow RPC it would never catch up. Also on a twin run at
    2x, whose sample clock runs twice as fast against the host: a reader that took it for 1x thought itself
    ahead while it fell behind for good, and the rig's stale-stream interlock tripped a run with samples flowing."""
    if time_scale == 1.0:
        daq = make_daq(rate_hz=RATE_HZ, buffer_s=1.0)
    else:
        twin = DaqTwin(daq_plant, time_scale=time_scale).start()
        daq = make_daq(on=twin, rate_hz=RATE_HZ, buffer_s=1.0 * time_scale, time_scale=time_scale)
    daq.start()
    blocks = take(daq, 2)
    real_read, stall_s, stalled = daq._reader.read_many_sample, 0.3, threading.Event()

    def late_read(*args, **kwargs):
        if not stalled.is_set():
            stalled.set()
            time.sleep(stall_s)
        return real_read(*args, **kwargs)

    daq._reader.read_many_sample = late_read
    blocks += take(daq, 6)
    assert daq.stats.overflows == 0
    assert_accounted_for(blocks)
    sizes = [len(b.volts) for b in blocks]
    # The backlog in a read or two (a busy PC may starve the reader just before the stall too, so the read
    # that stalls can already be a larger one), never one read per block. Most of it, not all: the twin's
    # sample clock is a thread of this process too, and under load it may not have made the whole backlog
    # when the reader asks what is waiting (seen: 200 of 250 samples; the rest came as the next block).
    catch_ups = [n for n in sizes[2:] if n > daq.block_samples]
    assert 1 <= len(catch_ups) <= 2, sizes
    assert sum(catch_ups) >= 0.5 * stall_s * RATE_HZ * time_scale, sizes
    assert sizes[-2:] == [daq.block_samples] * 2, sizes
    # current again: each block's last sample was taken just before it arrived, on the host's clock
    newest_s = [daq.t0_s + (b.first_sample_index + len(b.volts) - 1) / (RATE_HZ * time_scale) for b in blocks[-2:]]
    lag_s = np.array([b.host_time_s for b in blocks[-2:]]) - newest_s
    assert np.all(np.abs(lag_s) < 0.05), lag_s
    if time_scale != 1.0:
        daq.stop()
        twin.stop()


# ------------------------------------------------------------ configuration and failures
@pytest.mark.parametrize(("kwargs", "setting"), [
    ({"gauge_channels": "ai8:13,ai16"}, "gauge_channels: ai16"),
    ({"pot_channels": "ai0:6"}, "pot_channels and reference_channel overlap on ai6"),
    ({"reference_channel": "ai9"}, "reference_channel and gauge_channels overlap on ai9"),
    ({"rate_hz": 20e3}, "rate_hz"),                  # x 13 channels > 250 kS/s
    ({"rate_hz": 500.0}, "rate_hz"),                 # the gauges need >= 1 kHz
    ({"pot_channels": "ao0"}, "pot_channels"),
    ({"block_samples": 2000, "buffer_s": 1.0}, "block_samples"),
])
def test_bad_configuration_is_refused_naming_the_setting(kwargs, setting):
    with pytest.raises(ConfigError, match=setting):
        Usb6210(**kwargs)


def test_pots_alone_may_run_slower():
    assert Usb6210(gauge_channels=None, rate_hz=100.0, buffer_s=2.0).channel_names[-1] == "pot_ref"


def test_an_error_from_nidaqmx_names_the_device_and_channel(make_daq):
    daq = make_daq(device="Dev2")   # the twin is Dev1
    with pytest.raises(DeviceError, match=r"USB-6210 Dev2: cannot configure the channels \(Dev2/ai0\).*\(NI -200220\)"):
        daq.start()


def test_the_twin_going_away_is_a_device_error_not_a_hang(daq_plant, make_daq):
    own_twin = DaqTwin(daq_plant).start()
    daq = make_daq(on=own_twin, rate_hz=RATE_HZ)
    daq.start()
    take(daq, 2)
    t0 = time.monotonic()
    own_twin.stop()
    with pytest.raises(DeviceError, match="USB-6210 Dev1"):
        take(daq, 100, timeout_s=3.0)
    daq.stop()
    assert time.monotonic() - t0 < 3.0


# ------------------------------------------------------------ conversions
def sea_calibrations(plant: Plant) -> list[SeaCalibration]:
    """From the twin's physical constants, as a hanging-weight fit would find them."""
    k = plant.params.input_stiffness_N_per_m
    return [SeaCalibration.from_geometry(s.pot_zero_V, s.pot_volts_per_rad, k[i], s.spool_radius_m)
            for i, s in enumerate(plant.config.seas)]


@pytest.mark.parametrize("reference_channel", ["ai6", None])
def test_sea_forces_equal_the_plants_tendon_forces(daq_plant, make_daq, reference_channel):
    daq = make_daq(rate_hz=RATE_HZ, reference_channel=reference_channel)
    daq.start()
    seas = SeaForces(sea_calibrations(daq_plant))
    forces = np.concatenate([seas.forces(b) for b in take(daq, 6)])
    expected = daq_plant.state()[12:18]
    assert forces.shape == (300, 6)
    assert forces.mean(axis=0) == pytest.approx(expected, rel=0.01, abs=0.005)
    # Per sample: 0.5 mV pot noise x ~7 N/V, and the 6210's 0.3 mV steps.
    assert np.abs(forces - expected).max() < 0.03


def test_the_reference_corrects_a_sagging_supply(daq_plant):
    seas = SeaForces(sea_calibrations(daq_plant))
    expected = daq_plant.state()[12:18]
    volts_at_5V = daq_plant.analog_block(1)[:, [0, 1, 2, 3, 4, 5, 6]]
    sagged = volts_at_5V * 4.8 / 5.0      # a ratiometric pot scales with its supply
    names = ("pot0", "pot1", "pot2", "pot3", "pot4", "pot5", "pot_ref")
    assert seas.forces(AnalogBlock(0.0, 0, RATE_HZ, sagged, names))[0] == pytest.approx(expected, abs=0.02)
    uncorrected = seas.forces(AnalogBlock(0.0, 0, RATE_HZ, sagged[:, :6], names[:6]))[0]
    assert np.abs(uncorrected - expected).max() > 0.2


def test_nano17_wrench_after_tare_equals_the_plants(make_daq):
    sensor = Nano17(load_twin_calibration())
    unloaded = make_daq(rate_hz=RATE_HZ)   # the module's plant has no surface: zero wrench
    unloaded.start()
    bias_V = sensor.tare(AnalogBlock(0.0, 0, RATE_HZ, np.concatenate([b.volts for b in take(unloaded, 4)]),
                                     unloaded.channel_names))
    # the plant's offsets, to within one step of the ADC's 16-bit grid (its readings are on it)
    step_V = 2 * RANGE_V / 2**ADC_BITS
    assert bias_V == pytest.approx([0.1873, -0.0921, 0.2436, -0.1588, 0.0512, -0.2274], abs=step_V)

    touching = Plant(PlantConfig(pose="Curl", surface_angle_deg=67.5))
    touching.set_torque(0, True)   # reel FDP in: the fingertip presses on the surface
    touching.set_goal_angle(0, touching.servo_state(0).angle_rad + 0.4)
    touching.advance(0.4)
    expected = touching.sensor_wrench()
    assert abs(expected[2]) > 0.3  # about -0.34 N normal, -1.9 N·mm about y
    with DaqTwin(touching) as contact_twin:
        daq = make_daq(on=contact_twin, rate_hz=RATE_HZ)
        daq.start()
        readings = [sensor.convert(b) for b in take(daq, 6)]
        daq.stop()
    wrench = np.concatenate([r.wrench for r in readings])
    assert wrench.shape == (300, 6)
    assert wrench.mean(axis=0) == pytest.approx(expected, rel=0.01, abs=0.01)
    assert all(r.valid.all() and not r.saturated.any() and not r.overloaded.any() for r in readings)


def test_nano17_flags_saturated_and_overloaded_samples():
    sensor = Nano17(load_twin_calibration())
    names = tuple(f"gauge{i}" for i in range(6))
    volts = np.zeros((3, 6))
    volts[1, 2] = 9.99                        # at the ATI box's +10 V rail
    volts[2] = np.linalg.solve(sensor.cal.working_matrix, [0, 0, 3 * sensor.cal.max_loads[2], 0, 0, 0])
    reading = sensor.convert(AnalogBlock(0.0, 0, RATE_HZ, volts, names))
    assert reading.saturated.tolist() == [False, True, False]
    assert reading.overloaded[2] and not reading.overloaded[0]  # 9.99 V on a gauge is far beyond rated too
    assert reading.valid.tolist() == [True, False, False]
