"""USB-6210 twin: the board's channels, ranges and terminal rules, and NI's error vocabulary.

This file says what a channel string may name and how the 6210 coerces ranges; daq_task.py runs the
tasks.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from nidaqmx.constants import AcquisitionType, TerminalConfiguration
from nidaqmx.error_codes import DAQmxErrors as E
from nidaqmx.errors import DaqError
from nidaqmx.utils import unflatten_channel_string

AI_CHANNELS = 16
DIFF_CHANNELS = 8                    # DIFF pairs ai n with ai n+8 (USB-621x manual)
RANGES_V = (0.2, 1.0, 5.0, 10.0)     # NI 6210 spec sheet
# The ADC spans ~5 % beyond each range: nominal resolution x 2^16 (320 uV x 65536 = 20.97 V on +-10 V).
OVERRANGE = 1.0486
ADC_BITS = 16
MAX_AGGREGATE_RATE_HZ = 250e3        # NI 6210 spec: one ADC shared by all channels of a scan
# M Series default AI convert clock: the fastest conversion plus 10 us of settling, unless a scan's
# conversions would then not fit in one sample period (M Series user manual, "AI Convert Clock").
CONVERT_SETTLING_S = 10e-6
# What else the board has (NI 6210 spec): two counters, four digital inputs (P0.0-3 = PFI0-3, usable as
# trigger sources) and four outputs (P1.0-3 = PFI4-7); no analog output.
COUNTERS = 2
PFI_INPUTS = 4
DIGITAL_LINES_PER_PORT = 4
ONBOARD_FIFO_SAMPLES = 4095          # device notes section 4 [verify]
# Wall time per plant.analog_block call: pots and gauges move on the tendons' tens of ms.
CHUNK_S = 0.005
RSE, NRSE, DIFF = TerminalConfiguration.RSE.value, TerminalConfiguration.NRSE.value, TerminalConfiguration.DIFF.value
FINITE, CONTINUOUS = AcquisitionType.FINITE.value, AcquisitionType.CONTINUOUS.value
_TERM_NAMES = {RSE: "DAQmx_Val_RSE", NRSE: "DAQmx_Val_NRSE", DIFF: "DAQmx_Val_Diff"}
PHYSICAL_CHAN_MISSING = ("Physical channel specified does not exist on this device.\n"
                         "Refer to the documentation for channels available on this device.")
_BAD_VALUE = ("Requested value is not a supported value for this property. The property value may be "
              "invalid because it conflicts with another property.")


class PlantLike(Protocol):
    lock: threading.RLock

    def analog_block(self, n: int) -> np.ndarray: ...


class DaqmxError(Exception):
    """An NI-DAQmx status code with NI's message; ``samps_per_chan_read`` rides along for reads."""

    def __init__(self, code: int, headline: str, *details: str, samps_per_chan_read: int | None = None):
        self.code = int(code)
        self.message = headline + ("\n\n" + "\n".join(details) if details else "")
        self.samps_per_chan_read = samps_per_chan_read
        super().__init__(f"{self.message} (status {self.code})")


def bad_value(prop: str, value: object, *details: str) -> DaqmxError:
    """NI's -200077, its answer to any property value the device cannot take."""
    return DaqmxError(E.INVALID_ATTRIBUTE_VALUE, _BAD_VALUE, f"Property: {prop}", f"Requested Value: {value}", *details)


def default_buffer_size(rate_Hz: float) -> int:
    """NI's default continuous-input buffer per channel (NI "How is buffer size determined", device notes)."""
    return next((size for limit_Hz, size in ((100.0, 1_000), (10e3, 10_000), (1e6, 100_000)) if rate_Hz <= limit_Hz),
                1_000_000)


def unflatten(spec: str) -> list[str]:
    """"a0:2, b" -> ["a0", "a1", "a2", "b"] by the client's own parser, so the syntax and its error are NI's."""
    try:
        return [name.strip() for name in unflatten_channel_string(spec)]
    except DaqError as exc:
        raise DaqmxError(exc.error_code, str(exc).split("\n\nStatus Code")[0], f"Channel String: {spec}") from None


def parse_physical_channels(spec: str, device: str) -> list[int]:
    """"Dev1/ai0:3, Dev1/ai8" -> [0, 1, 2, 3, 8], with NI's errors for a bad device or channel."""
    channels = []
    for name in unflatten(spec) or [""]:
        dev, _, chan = name.partition("/")
        if dev.lower() != device.lower():
            raise DaqmxError(E.INVALID_DEVICE_ID, "Device identifier is invalid.",
                             f"Device Specified: {dev}", f"Suggested Device(s): {device}", f"Physical Channel: {name}")
        match = re.fullmatch(r"ai(\d+)", chan.strip(), re.IGNORECASE)
        if match is None or int(match[1]) >= AI_CHANNELS:
            raise DaqmxError(E.PHYSICAL_CHAN_DOES_NOT_EXIST, PHYSICAL_CHAN_MISSING, f"Device: {device}",
                             f"Physical Channel: {chan}")
        channels.append(int(match[1]))
    return channels


def is_physical_channel(name: str) -> bool:
    """Whether ``name`` (without the device) is one of the 6210's physical channels: aiN, ctrN, portN[/lineM]."""
    match = re.fullmatch(r"(ai|ctr|port)(\d+)(?:/line(\d+))?", name.strip(), re.IGNORECASE)
    if match is None:
        return False
    kind, k, line = match[1].lower(), int(match[2]), match[3]
    if kind == "port":
        return k < 2 and (line is None or int(line) < DIGITAL_LINES_PER_PORT)
    return line is None and k < (AI_CHANNELS if kind == "ai" else COUNTERS)


def physical_channel_missing(device: str, spec: str) -> DaqmxError | None:
    """NI's error for the first channel of spec that the board lacks (ao0 ...), or None if all exist."""
    for name in unflatten(spec) or [""]:
        dev, _, chan = name.lstrip("/").partition("/")
        if dev.lower() != device.lower():
            return DaqmxError(E.INVALID_DEVICE_ID, "Device identifier is invalid.", f"Device Specified: {dev}",
                              f"Suggested Device(s): {device}", f"Physical Channel: {name}")
        if not is_physical_channel(chan):
            return DaqmxError(E.PHYSICAL_CHAN_DOES_NOT_EXIST, PHYSICAL_CHAN_MISSING, f"Device: {device}",
                              f"Physical Channel: {chan}")
    return None


def check_trigger_source(terminal: str, device: str, prop: str) -> None:
    """A digital trigger must come from one of the board's PFI inputs ("/Dev1/PFI0"); NI answers anything
    else with -89120 when the task is verified."""
    dev, _, term = terminal.lstrip("/").partition("/")
    match = re.fullmatch(r"PFI(\d+)", term.strip(), re.IGNORECASE)
    if dev.lower() != device.lower() or match is None or int(match[1]) >= PFI_INPUTS:
        raise DaqmxError(E.INVALID_ROUTING_SOURCE_TERMINAL_NAME_ROUTING, "Source terminal to be routed could not "
                         "be found on the device.\nMake sure the terminal name is valid for the specified device. "
                         "Refer to Measurement & Automation Explorer or the device documentation for valid "
                         "terminal names.", f"Property: {prop}",
                         f"Source Device: {device}", f"Source Terminal: {terminal}")


def convert_period_s(rate_Hz: float, n_channels: int) -> float:
    """Time between the conversions of one scan's channels (each channel's waveform t0 is later by this)."""
    fastest_s = 1.0 / MAX_AGGREGATE_RATE_HZ + CONVERT_SETTLING_S
    return fastest_s if fastest_s * n_channels <= 1.0 / rate_Hz else 1.0 / (rate_Hz * n_channels)


def select_range_V(min_V: float, max_V: float, channel: str) -> float:
    """The smallest 6210 range holding [min_V, max_V], as NI-DAQmx chooses it."""
    if not min_V < max_V:
        raise DaqmxError(E.MIN_NOT_LESS_THAN_MAX, "Minimum is not less than maximum.",
                         f"Minimum Value: {min_V}", f"Maximum Value: {max_V}", f"Channel Name: {channel}")
    for range_V in RANGES_V:
        if -range_V <= min_V and max_V <= range_V:
            return range_V
    prop, value = ("DAQmx_AI_Min", min_V) if min_V < -RANGES_V[-1] else ("DAQmx_AI_Max", max_V)
    raise bad_value(prop, value, f"Maximum Value: {RANGES_V[-1]}", f"Minimum Value: {-RANGES_V[-1]}",
                    f"Channel Name: {channel}")


def resolve_terminal(term: int, physical: int, channel: str) -> int:
    """DEFAULT -> DIFF where the channel has a pair, else RSE; refuse what the 6210 cannot do."""
    if term == TerminalConfiguration.DEFAULT.value:
        return DIFF if physical < DIFF_CHANNELS else RSE
    allowed = (RSE, NRSE, DIFF) if physical < DIFF_CHANNELS else (RSE, NRSE)
    if term not in allowed:
        raise bad_value("DAQmx_AI_TermCfg", _TERM_NAMES.get(term, term),
                        "You Can Select: " + ", ".join(_TERM_NAMES[t] for t in allowed), f"Channel Name: {channel}")
    return term


@dataclass
class AiChannel:
    name: str
    physical_name: str
    physical: int    # K of aiK: the plant's column
    terminal: int    # TerminalConfiguration value
    min_V: float
    max_V: float
    range_V: float   # the hardware range DAQmx picked for [min_V, max_V]

    @property
    def negative(self) -> int | None:
        """The plant column on the negative input: ai n+8 for DIFF; None for AI GND (RSE) / AI SENSE (NRSE)."""
        return self.physical + DIFF_CHANNELS if self.terminal == DIFF else None
