"""The USB-6210 twin's answers beyond plain reads, through the unmodified nidaqmx client: channel properties,
waveform reads, TDMS logging, digital-edge triggers, and NI's error codes for what the twin does not have.

The plant is not advanced (conftest's ``daq_plant``), so a channel holds its value plus fresh noise.
"""

from __future__ import annotations

from datetime import timedelta

import grpc
import nidaqmx
import numpy as np
import pytest
from conftest import wait_for
from nidaqmx._stubs import nidaqmx_pb2 as pb
from nidaqmx._stubs import nidaqmx_pb2_grpc as pb_grpc
from nidaqmx.constants import (
    READ_ALL_AVAILABLE,
    AcquisitionType,
    LoggingMode,
    LoggingOperation,
    TerminalConfiguration,
    TriggerType,
    UsageTypeAI,
    WaveformAttributeMode,
)
from nidaqmx.errors import DaqError, DaqReadError
from nidaqmx.stream_readers import AnalogMultiChannelReader
from nitypes.waveform import AnalogWaveform
from nptdms import TdmsFile
from uartlab.drivers.twins import daq_channels

FINITE = AcquisitionType.FINITE


@pytest.fixture
def new_task(daq_twin):
    tasks = []

    def make() -> nidaqmx.Task:
        tasks.append(nidaqmx.Task(grpc_options=daq_twin.grpc_options("")))
        return tasks[-1]

    yield make
    for task in tasks:
        task.close()


def code_of(call) -> int:
    with pytest.raises(DaqError) as excinfo:
        call()
    return excinfo.value.error_code


# ------------------------------------------------------------ channel properties
def test_ai_max_and_min_read_back_the_coerced_range_and_choose_it_again_when_set(new_task):
    chan = new_task().ai_channels.add_ai_voltage_chan("Dev1/ai0", min_val=-0.5, max_val=0.5)
    assert (chan.ai_max, chan.ai_min, chan.ai_rng_high) == (1.0, -1.0, 1.0)
    chan.ai_max = 3.0
    assert (chan.ai_max, chan.ai_min) == (5.0, -5.0)
    assert code_of(lambda: setattr(chan, "ai_max", 20.0)) == -200077   # beyond the 6210's +-10 V
    del chan.ai_max, chan.ai_min   # reset: the device's widest range
    assert (chan.ai_max, chan.ai_min) == (10.0, -10.0)


def test_ai_term_cfg_set_changes_what_the_channel_measures(daq_plant, new_task):
    task = new_task()
    chan = task.ai_channels.add_ai_voltage_chan("Dev1/ai0")
    assert chan.ai_term_cfg == TerminalConfiguration.DIFF   # DEFAULT on ai0-7 of an M Series board
    volts = daq_plant.analog_block(2000).mean(axis=0)
    assert np.mean([task.read() for _ in range(20)]) == pytest.approx(volts[0] - volts[8], abs=2e-3)
    chan.ai_term_cfg = TerminalConfiguration.RSE
    assert chan.ai_term_cfg == TerminalConfiguration.RSE
    assert np.mean([task.read() for _ in range(20)]) == pytest.approx(volts[0], abs=2e-3)
    high = task.ai_channels.add_ai_voltage_chan("Dev1/ai9", terminal_config=TerminalConfiguration.RSE)
    assert code_of(lambda: setattr(high, "ai_term_cfg", TerminalConfiguration.DIFF)) == -200077  # no ai17


def test_channel_properties_cannot_change_while_the_task_runs(new_task):
    task = new_task()
    chan = task.ai_channels.add_ai_voltage_chan("Dev1/ai0")
    task.timing.cfg_samp_clk_timing(1000.0, sample_mode=AcquisitionType.CONTINUOUS)
    task.start()
    assert code_of(lambda: setattr(chan, "ai_max", 1.0)) == -200479
    task.stop()
    chan.ai_max = 1.0


# ------------------------------------------------------------ waveforms
def test_waveforms_of_a_multiplexed_scan_are_skewed_by_the_convert_clock(new_task):
    task = new_task()
    task.ai_channels.add_ai_voltage_chan("Dev1/ai0:2", terminal_config=TerminalConfiguration.RSE)
    task.timing.cfg_samp_clk_timing(1000.0, sample_mode=FINITE, samps_per_chan=20)
    waveforms = task.read_waveform(READ_ALL_AVAILABLE)
    assert [w.channel_name for w in waveforms] == ["Dev1/ai0", "Dev1/ai1", "Dev1/ai2"]
    assert all(w.sample_count == 20 and w.units == "Volts" for w in waveforms)
    assert waveforms[0].timing.sample_interval == timedelta(milliseconds=1)
    skew_s = daq_channels.convert_period_s(1000.0, 3)
    assert skew_s == pytest.approx(14e-6)   # 4 us conversion + 10 us settling
    t0 = [w.timing.start_time for w in waveforms]
    assert [(t - t0[0]).total_seconds() for t in t0] == pytest.approx([0.0, skew_s, 2 * skew_s], abs=2e-6)


def test_the_multi_channel_reader_fills_the_callers_waveforms(new_task):
    task = new_task()
    task.ai_channels.add_ai_voltage_chan("Dev1/ai0:1", terminal_config=TerminalConfiguration.RSE)
    task.timing.cfg_samp_clk_timing(1000.0, sample_mode=AcquisitionType.CONTINUOUS)
    waveforms = [AnalogWaveform(50), AnalogWaveform(50)]
    reader = AnalogMultiChannelReader(task.in_stream)
    task.start()
    assert reader.read_waveforms(waveforms, 50) == 50
    first = waveforms[0].timing.start_time
    assert reader.read_waveforms(waveforms, 50) == 50
    task.stop()
    # back to back: the second block starts 50 sample periods after the first
    assert (waveforms[0].timing.start_time - first).total_seconds() == pytest.approx(0.050, abs=1e-6)
    assert [w.channel_name for w in waveforms] == ["Dev1/ai0", "Dev1/ai1"]


def test_waveform_attribute_mode_none_sends_only_the_samples(new_task):
    task = new_task()
    task.ai_channels.add_ai_voltage_chan("Dev1/ai0")
    task.timing.cfg_samp_clk_timing(1000.0, sample_mode=FINITE, samps_per_chan=10)
    task.in_stream.waveform_attribute_mode = WaveformAttributeMode.NONE
    waveform = task.read_waveform()
    assert waveform.sample_count == 10 and waveform.channel_name == "" and not waveform.timing.has_start_time


# ------------------------------------------------------------ TDMS logging
def test_log_only_writes_what_is_acquired_and_refuses_reads(new_task, tmp_path):
    path = tmp_path / "run.tdms"
    task = new_task()
    task.ai_channels.add_ai_voltage_chan("Dev1/ai0:1", name_to_assign_to_channel="pot")
    task.timing.cfg_samp_clk_timing(2000.0, sample_mode=FINITE, samps_per_chan=200)
    task.in_stream.configure_logging(str(path), LoggingMode.LOG, group_name="trial")
    assert task.in_stream.logging_mode == LoggingMode.LOG and task.in_stream.logging_file_path == path
    task.start()
    assert code_of(lambda: task.read(10)) == -201301
    task.wait_until_done(timeout=10.0)
    task.stop()
    with TdmsFile.open(path) as tdms:
        channels = tdms["trial"].channels()
        assert [c.name for c in channels] == ["pot0", "pot1"]
        assert all(len(c[:]) == 200 for c in channels)
        assert channels[0].properties["wf_increment"] == pytest.approx(1 / 2000.0)
    assert path.with_name("run.tdms_index").exists()


def test_appending_to_a_log_adds_a_numbered_group(new_task, tmp_path):
    path = tmp_path / "runs.tdms"
    for _ in range(2):
        task = new_task()
        task.ai_channels.add_ai_voltage_chan("Dev1/ai0")
        task.timing.cfg_samp_clk_timing(1000.0, sample_mode=FINITE, samps_per_chan=5)
        task.in_stream.configure_logging(str(path), LoggingMode.LOG_AND_READ, group_name="g",
                                         operation=LoggingOperation.OPEN_OR_CREATE)
        assert len(task.read(READ_ALL_AVAILABLE)) == 5
        task.close()
    with TdmsFile.open(path) as tdms:
        assert [g.name for g in tdms.groups()] == ["g", "g #1"]
    task = new_task()
    task.ai_channels.add_ai_voltage_chan("Dev1/ai0")
    task.timing.cfg_samp_clk_timing(1000.0, sample_mode=FINITE, samps_per_chan=5)
    task.in_stream.configure_logging(str(path), LoggingMode.LOG_AND_READ, operation=LoggingOperation.CREATE)
    assert code_of(lambda: task.read(READ_ALL_AVAILABLE)) == -50204   # CREATE: the file must be new
    task.in_stream.logging_tdms_operation = LoggingOperation.CREATE_OR_REPLACE   # the failed start left no trace
    assert len(task.read(READ_ALL_AVAILABLE)) == 5
    name = task.name
    task.close()
    with TdmsFile.open(path) as tdms:
        assert [g.name for g in tdms.groups()] == [name]   # the default group: the task's name


def test_an_on_demand_task_cannot_log(new_task, tmp_path):
    task = new_task()
    task.ai_channels.add_ai_voltage_chan("Dev1/ai0")
    task.in_stream.configure_logging(str(tmp_path / "x.tdms"), LoggingMode.LOG_AND_READ)
    assert code_of(task.read) == -201299


# ------------------------------------------------------------ triggers
def test_a_start_trigger_on_pfi0_waits_for_an_edge_that_never_comes(new_task):
    task = new_task()
    task.ai_channels.add_ai_voltage_chan("Dev1/ai0")
    task.timing.cfg_samp_clk_timing(1000.0, sample_mode=FINITE, samps_per_chan=10)
    task.triggers.start_trigger.cfg_dig_edge_start_trig("/Dev1/PFI0")
    assert task.triggers.start_trigger.trig_type == TriggerType.DIGITAL_EDGE
    assert task.triggers.start_trigger.dig_edge_src == "/Dev1/PFI0"
    task.start()
    with pytest.raises(DaqReadError) as excinfo:
        task.read(10, timeout=0.3)
    assert excinfo.value.error_code == -200284 and excinfo.value.samps_per_chan_read == 0
    task.stop()
    task.triggers.start_trigger.disable_start_trig()
    assert len(task.read(10)) == 10


# ------------------------------------------------------------ done event
def test_the_done_event_fires_when_a_finite_acquisition_completes_not_on_stop(new_task):
    task = new_task()
    task.ai_channels.add_ai_voltage_chan("Dev1/ai0")
    task.timing.cfg_samp_clk_timing(1000.0, sample_mode=FINITE, samps_per_chan=100)
    statuses: list[int] = []
    task.register_done_event(lambda handle, status, data: statuses.append(status) or 0)
    assert code_of(lambda: task.register_done_event(lambda *args: 0)) == -200950   # already registered
    task.start()
    task.wait_until_done(timeout=2.0)
    assert wait_for(lambda: statuses == [0])
    task.stop()
    task.timing.cfg_samp_clk_timing(1000.0, sample_mode=AcquisitionType.CONTINUOUS)
    task.start()
    assert code_of(lambda: task.register_done_event(None)) == -200986   # not while it runs
    task.stop()   # the application stopped it: no event
    assert not wait_for(lambda: len(statuses) > 1, timeout_s=0.3)
    task.register_done_event(None)
    task.register_done_event(lambda *args: 0)   # unregistered, so it registers again


def test_the_done_event_carries_the_error_that_stopped_the_task(new_task):
    task = new_task()
    task.ai_channels.add_ai_voltage_chan("Dev1/ai0")
    task.timing.cfg_samp_clk_timing(10_000.0, sample_mode=AcquisitionType.CONTINUOUS)
    task.in_stream.input_buf_size = 1000   # 0.1 s, never read
    statuses: list[int] = []
    task.register_done_event(lambda handle, status, data: statuses.append(status) or 0)
    task.start()
    assert wait_for(lambda: statuses == [-200279])


# ------------------------------------------------------------ enum properties over the raw gRPC service
def test_enum_properties_fill_the_enum_and_the_raw_value_as_grpc_device_does(daq_twin):
    stub = pb_grpc.NiDAQmxStub(grpc.insecure_channel(daq_twin.address))
    task = stub.CreateTask(pb.CreateTaskRequest(session_name="")).task
    try:
        stub.CreateAIVoltageChan(pb.CreateAIVoltageChanRequest(
            task=task, physical_channel="Dev1/ai6", terminal_config=pb.INPUT_TERM_CFG_WITH_DEFAULT_RSE,
            min_val=-10.0, max_val=10.0, units=pb.VOLTAGE_UNITS2_VOLTS))
        term = stub.GetChanAttributeInt32(pb.GetChanAttributeInt32Request(
            task=task, channel="Dev1/ai6", attribute=pb.CHANNEL_ATTRIBUTE_AI_TERM_CFG))
        assert (term.value, term.value_raw) == (pb.CHANNEL_INT32_INPUT_TERM_CFG_RSE, TerminalConfiguration.RSE.value)
        types = stub.GetDeviceAttributeInt32Array(pb.GetDeviceAttributeInt32ArrayRequest(
            device_name="Dev1", attribute=pb.DEVICE_ATTRIBUTE_AI_SUPPORTED_MEAS_TYPES))
        assert list(types.value) == [pb.DEVICE_INT32_AI_MEASUREMENT_TYPE_VOLTAGE]
        assert list(types.value_raw) == [UsageTypeAI.VOLTAGE.value]
    finally:
        stub.ClearTask(pb.ClearTaskRequest(task=task))


# ------------------------------------------------------------ what the twin does not have: NI's codes
@pytest.mark.parametrize("make, code", [
    (lambda t: t.ao_channels.add_ao_voltage_chan("Dev1/ao0"), -200170),        # the 6210 has no AO
    (lambda t: t.ci_channels.add_ci_count_edges_chan("Dev1/ctr2"), -200170),  # two counters: ctr0-1
    (lambda t: t.ao_channels.add_ao_voltage_chan("Dev2/ao0"), -200220),       # no such device
    (lambda t: t.ci_channels.add_ci_count_edges_chan("Dev1/ctr0"), -209876),  # on the board, not in the twin
    (lambda t: t.di_channels.add_di_chan("Dev1/port0/line0"), -209876),
    (lambda t: t.ai_channels.add_ai_thrmcpl_chan("Dev1/ai0"), -209876),
])
def test_what_the_twin_does_not_do_answers_with_ni_codes(new_task, make, code):
    assert code_of(lambda: make(new_task())) == code


def test_a_property_the_twin_lacks_is_not_supported_in_the_task(new_task):
    task = new_task()
    task.ai_channels.add_ai_voltage_chan("Dev1/ai0")
    assert code_of(lambda: task.export_signals.start_trig_output_term) == -200452
    assert code_of(lambda: setattr(task.timing, "ai_conv_rate", 1000.0)) == -200452
