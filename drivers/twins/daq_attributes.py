"""USB-6210 twin: the NI-DAQmx properties it answers, by group and attribute id, as ``DaqServicer`` serves them.

Each table maps an attribute id (nidaqmx's hex constant, named in the comment where the value does not say)
to how the twin computes it from a task, a channel or the device name. Which of them may be set is below
the tables; ``DaqServicer._set`` applies a set.
"""

from __future__ import annotations

from nidaqmx import constants as C
from uartlab.drivers.twins import daq_channels

# Reported as NI-DAQmx 2025 Q3. From 24.5 on, the client sizes READ_ALL_AVAILABLE reads with one
# attribute (DAQmx_Read_DefaultNumberOfSamplesToRead) instead of four.
DRIVER_VERSION = (25, 5, 0)
PRODUCT_TYPE = "USB-6210"

TASK_ATTRS = {
    0x1273: lambda t: ", ".join(c.name for c in t.channels),   # Task.ChanNames
    0x1276: lambda t: t.name,
    0x2181: lambda t: len(t.channels),
    0x230E: lambda t: t.device if t.channels else "",          # Task.Devices
    0x29BA: lambda t: int(bool(t.channels)),
    0x1274: lambda t: t.is_done(),                              # Task.Complete
}
READ_ATTRS = {
    0x1223: lambda t: t.buffer.available if t.running and t.buffer else 0,   # AvailSampPerChan
    0x217B: lambda t: len(t.read_columns()),                                  # NumChans
    0x1823: lambda t: ", ".join(t.channels[i].name for i in t.read_columns()),  # ChannelsToRead
    0x31E8: lambda t: t.default_read_size(),
    0x192A: lambda t: t.buffer.written if t.buffer else 0,                    # TotalSampPerChanAcquired
    0x1221: lambda t: t.buffer.read_pos if t.buffer else 0,                   # CurrReadPos
    0x1215: lambda t: t.read_all_avail,
    0x1211: lambda t: C.OverwriteMode.DO_NOT_OVERWRITE_UNREAD_SAMPLES.value,
    0x190A: lambda t: C.ReadRelativeTo.CURRENT_READ_POSITION.value,
    0x190B: lambda t: 0,                                                      # Offset
    0x1826: lambda t: True,                                                   # AutoStart
    0x2174: lambda t: False,                                                  # OverloadedChansExist
    0x2EC4: lambda t: t.logging.file_path,                                    # Logging.FilePath
    0x2EC5: lambda t: t.logging.mode,
    0x2EC6: lambda t: t.logging.group_name,                                   # Logging.TDMS.GroupName
    0x2EC7: lambda t: t.logging.operation,                                    # Logging.TDMS.Operation
}
TIMING_ATTRS = {
    0x1344: lambda t: t.rate_Hz,
    0x1300: lambda t: t.sample_mode or C.AcquisitionType.FINITE.value,
    0x1310: lambda t: t.samps_per_chan,
    0x1347: lambda t: (C.SampleTimingType.ON_DEMAND if t.sample_mode is None
                       else C.SampleTimingType.SAMPLE_CLOCK).value,
    0x22C8: lambda t: t.max_rate_Hz,                                          # SampClk.MaxRate
    0x1852: lambda t: "OnboardClock",
    0x1301: lambda t: C.Edge.RISING.value,
}
BUFFER_ATTRS = {0x186C: lambda t: t.buffer_size, 0x230A: lambda t: daq_channels.ONBOARD_FIFO_SAMPLES}
_EDGE, _NONE = C.TriggerType.DIGITAL_EDGE.value, C.TriggerType.NONE.value
TRIG_ATTRS = {
    0x1393: lambda t: _NONE if t.start_trigger is None else _EDGE,           # StartTrig.Type
    0x1419: lambda t: _NONE if t.ref_trigger is None else _EDGE,             # RefTrig.Type
    0x1407: lambda t: t.start_trigger or "",                                  # StartTrig.DigEdge.Src
    0x1434: lambda t: t.ref_trigger[0] if t.ref_trigger else "",              # RefTrig.DigEdge.Src
    0x1445: lambda t: t.ref_trigger[1] if t.ref_trigger else 0,               # RefTrig.PretrigSamples
}
CHAN_ATTRS = {
    0x187F: lambda c: C.ChannelType.ANALOG_INPUT.value,
    0x0695: lambda c: C.UsageTypeAI.VOLTAGE.value,
    0x17DE: lambda c: -c.range_V,   # AI.Min: "the coerced minimum value the device can measure" (NI)
    0x17DD: lambda c: c.range_V,
    0x1816: lambda c: -c.range_V,                                             # AI.Rng.Low
    0x1815: lambda c: c.range_V,
    0x1097: lambda c: c.terminal,
    0x1094: lambda c: C.VoltageUnits.VOLTS.value,
    0x18F5: lambda c: c.physical_name,
    0x1765: lambda c: 16.0,                                                   # AI.Resolution (bits)
    0x1764: lambda c: C.ResolutionType.BITS.value,
    0x1926: lambda c: "",                                                     # Description
    0x2304: lambda c: False,                                                  # IsGlobal
    0x17E0: lambda c: "",                                                     # AI.CustomScaleName
}
DEVICE_ATTRS = {
    0x0631: lambda dev: PRODUCT_TYPE,
    0x29A9: lambda dev: C.ProductCategory.M_SERIES_DAQ.value,
    0x2326: lambda dev: C.BusType.USB.value,
    0x231E: lambda dev: ", ".join(f"{dev}/ai{k}" for k in range(daq_channels.AI_CHANNELS)),
    0x2990: lambda dev: [v for r in daq_channels.RANGES_V for v in (-r, r)],
    0x298C: lambda dev: daq_channels.MAX_AGGREGATE_RATE_HZ,                       # AI.MaxSingleChanRate
    0x298D: lambda dev: daq_channels.MAX_AGGREGATE_RATE_HZ,                       # AI.MaxMultiChanRate
    0x298F: lambda dev: False,                                                # AI.SimultaneousSamplingSupported
    0x22CA: lambda dev: True,                                                 # IsSimulated: honest about it
    0x2FD2: lambda dev: [C.UsageTypeAI.VOLTAGE.value],
}
SYSTEM_ATTRS = {0x1272: lambda dev: DRIVER_VERSION[0], 0x1923: lambda dev: DRIVER_VERSION[1],
                 0x2F22: lambda dev: DRIVER_VERSION[2], 0x193B: lambda dev: dev}
GROUPS = {"Task": TASK_ATTRS, "Read": READ_ATTRS, "Timing": TIMING_ATTRS, "Buffer": BUFFER_ATTRS,
           "Trig": TRIG_ATTRS, "Chan": CHAN_ATTRS, "Device": DEVICE_ATTRS, "SystemInfo": SYSTEM_ATTRS}
TYPES = ("Bool", "Double", "DoubleArray", "Int32", "Int32Array", "String", "UInt32", "UInt64")
SETTABLE = ("Read", "Buffer", "Timing", "Chan")
# Settable channel attributes: DaqTask.configure_channels keyword, the value a reset restores.
CHAN_SETTERS = {0x17DD: ("max_V", daq_channels.RANGES_V[-1]), 0x17DE: ("min_V", -daq_channels.RANGES_V[-1]),
                 0x1097: ("terminal", C.TerminalConfiguration.DEFAULT.value)}
LOGGING_FIELDS = {0x2EC4: "file_path", 0x2EC5: "mode", 0x2EC6: "group_name", 0x2EC7: "operation"}
