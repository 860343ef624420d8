"""USB-6210 twin: a read as NI's analog waveforms (``ReadAnalogWaveforms``), one per channel read.

Each waveform carries what NI-DAQmx puts in one: t0, the time of the channel's first sample (a multiplexed
board converts a scan's channels one after another, so channel j is j convert periods later, as
nidaqmx-python's plotting example expects), dt, the sample period (0: on-demand reads have no sample
clock), and as extended properties the channel's name and its units. The client's
``WaveformAttributeMode`` chooses which of them travel.
"""

from __future__ import annotations

from datetime import timedelta

import hightime as ht
import ni.protobuf.types.precision_timestamp_conversion as ptc
from ni.protobuf.types.waveform_pb2 import DoubleAnalogWaveform, WaveformAttributeValue
from nidaqmx.constants import WaveformAttributeMode
from uartlab.drivers.twins.daq_channels import AiChannel, convert_period_s

UNITS = "Volts"   # the twin's channels measure volts only


def analog_waveforms(scans, t0, dt_s: float, channels: list[AiChannel], mode: int) -> list[DoubleAnalogWaveform]:
    """``scans`` (samples, channels) volts of ``channels``, first sample at the UTC datetime ``t0``."""
    timing = bool(mode & WaveformAttributeMode.TIMING.value)
    properties = bool(mode & WaveformAttributeMode.EXTENDED_PROPERTIES.value)
    skew_s = convert_period_s(1.0 / dt_s, len(channels)) if dt_s > 0 else 0.0
    out = []
    for j, channel in enumerate(channels):
        wf = DoubleAnalogWaveform(y_data=scans[:, j])
        if timing:
            at = t0 + timedelta(seconds=j * skew_s)   # no float epoch on the way: it loses the microseconds
            start = ht.datetime(at.year, at.month, at.day, at.hour, at.minute, at.second, at.microsecond,
                                tzinfo=at.tzinfo)
            wf.t0.CopyFrom(ptc.hightime_datetime_to_protobuf(start))
            wf.dt = dt_s
        if properties:
            wf.attributes["NI_ChannelName"].CopyFrom(WaveformAttributeValue(string_value=channel.name))
            wf.attributes["NI_UnitDescription"].CopyFrom(WaveformAttributeValue(string_value=UNITS))
        out.append(wf)
    return out
