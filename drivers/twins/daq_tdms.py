"""USB-6210 twin: TDMS logging of an AI task, as NI-DAQmx's ``DAQmxConfigureLogging`` sets it up.

A task that logs writes each block of samples to a TDMS file on the machine the driver runs on (here: the
twin's, relative paths from the twin's working directory, as NI gRPC Device Server passes them to the
driver): one group (the task's name unless given), one channel per virtual channel with the waveform
properties NI writes (``wf_start_time``, ``wf_increment``, ``wf_samples``, ``NI_ChannelName``,
``unit_string``), and the ``.tdms_index`` beside it. In LOG_AND_READ mode the samples are logged as they
are read; in LOG mode as they are acquired, and reads are refused. One difference from NI: the twin
stores scaled volts (float64), where NI-DAQmx stores the raw ADC codes with their scaling properties;
readers such as npTDMS return volts either way.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from nidaqmx.constants import LoggingMode, LoggingOperation
from nidaqmx.error_codes import DAQmxErrors as E
from nptdms import ChannelObject, GroupObject, TdmsFile, TdmsWriter
from uartlab.drivers.twins.daq_channels import DaqmxError, bad_value

MODES = {m.value for m in LoggingMode}
OPERATIONS = {op.value for op in LoggingOperation}


@dataclass
class LogConfig:
    """The task's DAQmx_Logging_* properties."""

    file_path: str = ""
    mode: int = LoggingMode.OFF.value
    group_name: str = ""
    operation: int = LoggingOperation.OPEN_OR_CREATE.value

    def check(self) -> None:
        if self.mode not in MODES:
            raise bad_value("DAQmx_Logging_Mode", self.mode, "You Can Select: DAQmx_Val_Off, DAQmx_Val_Log, "
                            "DAQmx_Val_LogAndRead")
        if self.operation not in OPERATIONS:
            raise bad_value("DAQmx_Logging_TDMS_Operation", self.operation, "You Can Select: DAQmx_Val_Open, "
                            "DAQmx_Val_OpenOrCreate, DAQmx_Val_CreateOrReplace, DAQmx_Val_Create")

    @property
    def active(self) -> bool:
        return self.mode != LoggingMode.OFF.value and bool(self.file_path)

    @property
    def logs_on_read(self) -> bool:
        return self.mode == LoggingMode.LOG_AND_READ.value


def _file_fault(path: str, why: str) -> DaqmxError:
    return DaqmxError(E.PAL_FILE_OPEN_FAULT, f"The TDMS file could not be opened: {why}.", f"File Path: {path}")


class TdmsLog:
    """One start-to-stop log of a task: the file open, one segment written per block."""

    def __init__(self, config: LogConfig, group: str, channels: list[str], rate_Hz: float, t0: datetime):
        path = os.path.abspath(config.file_path)
        exists = os.path.exists(path)
        op = LoggingOperation(config.operation)
        if op == LoggingOperation.CREATE and exists:
            raise _file_fault(path, "the file already exists (DAQmx_Val_Create)")
        if op == LoggingOperation.OPEN and not exists:
            raise _file_fault(path, "the file does not exist (DAQmx_Val_Open)")
        append = exists and op != LoggingOperation.CREATE_OR_REPLACE
        self.group = _free_group_name(path, group) if append else group
        self.channels, self.rate_Hz, self.t0 = channels, rate_Hz, t0
        self.samples = 0
        try:
            self._writer = TdmsWriter(path, mode="a" if append else "w", index_file=True)
            self._writer.open()
        except OSError as exc:
            raise _file_fault(path, exc.strerror or str(exc)) from None

    def write(self, scans: np.ndarray) -> None:
        """Append (samples, channels) volts as one segment; the first carries the properties."""
        objects: list = []
        if self.samples == 0:
            start = np.datetime64(self.t0.replace(tzinfo=None), "us")
            objects.append(GroupObject(self.group))
            objects += [ChannelObject(self.group, name, np.ascontiguousarray(scans[:, j]), properties={
                "wf_start_time": start, "wf_increment": 1.0 / self.rate_Hz, "wf_start_offset": 0.0,
                "wf_samples": len(scans), "NI_ChannelName": name, "unit_string": "Volts",
                "NI_UnitDescription": "Volts"}) for j, name in enumerate(self.channels)]
        else:
            objects += [ChannelObject(self.group, name, np.ascontiguousarray(scans[:, j]))
                        for j, name in enumerate(self.channels)]
        self._writer.write_segment(objects)
        self.samples += len(scans)

    def close(self) -> None:
        self._writer.close()


def _free_group_name(path: str, group: str) -> str:
    """NI appends " #1", " #2", ... to a group name the file already has."""
    with TdmsFile.open(path) as existing:
        taken = {g.name for g in existing.groups()}
    name, k = group, 0
    while name in taken:
        k += 1
        name = f"{group} #{k}"
    return name
