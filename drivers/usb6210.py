"""NI USB-6210 analog input over nidaqmx: six SEA pots, their +5 V reference and the Nano17's six gauges.

    daq = Usb6210(rate_hz=1000.0)                          # real NI-DAQmx driver
    daq = Usb6210(grpc_options=twin.grpc_options(""))     # the DAQ twin (or NI gRPC Device Server)
    daq.start()
    for block in daq.blocks(timeout_s=1.0): ...            # AnalogBlock, (n, channels) volts
    daq.stop()

One continuous, hardware-timed task; a reader thread loops on ``AnalogMultiChannelReader.read_many_sample``
(one block per call; a reader that fell behind takes everything that piled up in one call, since each call is
a round trip to the device and, behind a slow one, block by block never catches up) and hands blocks to a
bounded queue, so a slow consumer costs the consumer blocks (counted, and reported
as ``gap_before`` on the next block it gets), never the DAQ buffer. An overflow of the DAQ's own buffer
(-200279: the reader thread itself was starved) is reported, the task restarted and the lost samples
estimated from the host clock. No loss is silent: for consecutive blocks a, b the consumer sees
``b.first_sample_index == a.first_sample_index + len(a.volts) + b.gap_before``.

Time base (kept simple on purpose): sample i is at ``t0_s + i / (rate_hz x time_scale)`` host seconds.
``t0_s`` starts as the host monotonic time just after the task started (the clock cannot have started later)
and is lowered to ``host_time - (index of the block's last sample) / (rate x time_scale)`` whenever a block
gives a smaller value: a block can only arrive after its last sample was taken, so the minimum over blocks
is the tightest estimate. ``time_scale`` is 1 for the hardware; a twin run at N x speed samples N x faster
against the host, and a reader that assumed 1x would think itself ahead while it falls behind for good.
No drift model: the 6210 timebase is 50 ppm (3 ms per minute); the recorder keeps host times as well.
"""

from __future__ import annotations

import collections
import logging
import math
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
from uartlab.drivers.interfaces import AnalogBlock, ConfigError, DeviceError

if TYPE_CHECKING:
    from nidaqmx import GrpcSessionOptions, Task
    from nidaqmx.stream_readers import AnalogMultiChannelReader

log = logging.getLogger(__name__)

AI_CHANNELS = 16                  # USB-6210: ai0-ai15 single-ended (device notes section 4)
MAX_AGGREGATE_RATE_HZ = 250e3     # one multiplexed ADC for all channels (NI 6210 spec sheet)
ADC_BITS = 16                     # its resolution (NI 6210 spec sheet): a reading is one of 65 536 levels
MIN_GAUGE_RATE_HZ = 1000.0        # the Nano17 contact transients need >= 1 kHz per gauge
RANGE_V = 10.0                    # gauges: the ATI box outputs +-10 V; pots: the USB +5 V rail may exceed
                                  # the +-5 V range's 5 % headroom, so +-10 V for them too
OVERFLOW_CODES = (-200279, -200361)   # PC buffer overwritten; on-board FIFO overflow (both: restart)
TIMEOUT_CODE = -200284
# A read's wait beyond its block: longer than the stale limits rigs run with (0.25 s, a twin rig's 1 s), so a
# stalled stream trips the interlock first, and this timeout is the backstop for a server that is gone.
READ_SLACK_S = 2.0
LATE_WAKE_S = 0.1   # a consumer's wait that returns this much after its deadline: this process was held up
POT_NAME, REFERENCE_NAME, GAUGE_NAME = "pot{}", "pot_ref", "gauge{}"  # virtual channel names in blocks


@dataclass
class Usb6210Stats:
    blocks: int = 0
    samples: int = 0                 # per channel, delivered to the queue
    overflows: int = 0
    restarts: int = 0
    samples_lost: int = 0            # estimated, over all overflows
    consumer_drops: int = 0          # blocks dropped because the consumer fell behind
    last_latency_s: float = 0.0      # host time of a block minus the sample-clock time of its last sample
    max_latency_s: float = 0.0
    # How long the last overflow restart's start took. Samples lost are counted up to its beginning, so the
    # sample times after it may be early by up to this: never late (the interlocks see samples older, not fresher).
    restart_start_s: float = 0.0


@dataclass(frozen=True, slots=True)
class DaqEvent:
    host_time_s: float
    kind: str                        # "overflow", "consumer_drop", "error"
    message: str
    samples_lost: int = 0


def parse_channels(spec: str | None, setting: str) -> list[int]:
    """"ai0:5", "ai8, ai10:11", "Dev1/ai6" -> physical channel numbers; ConfigError naming the setting."""
    if spec is None or not spec.strip():
        return []
    channels: list[int] = []
    for part in spec.split(","):
        m = re.fullmatch(r"\s*(?:[^/\s]+/)?ai(\d+)(?::(?:ai)?(\d+))?\s*", part, re.IGNORECASE)
        if m is None:
            raise ConfigError(f"{setting}: {part.strip()!r} is not an analog input (like 'ai0' or 'ai0:5')")
        first, last = int(m[1]), int(m[2] if m[2] is not None else m[1])
        for k in range(first, last + (1 if last >= first else -1), 1 if last >= first else -1):
            if k >= AI_CHANNELS:
                raise ConfigError(f"{setting}: ai{k} does not exist on the USB-6210 (ai0-ai{AI_CHANNELS - 1})")
            if k in channels:
                raise ConfigError(f"{setting}: ai{k} is listed twice")
            channels.append(k)
    return channels


def _channel_in(message: str) -> str | None:
    m = re.search(r"^(?:Channel Name|Physical Channel):\s*(\S+)", message, re.MULTILINE)
    return m[1] if m else None


class Usb6210:
    """The rig's USB-6210 as an ``AnalogInput``. Columns: pots, then the reference, then the gauges."""

    def __init__(self, device: str = "Dev1", pot_channels: str | None = "ai0:5", reference_channel: str | None = "ai6",
                 gauge_channels: str | None = "ai8:13", rate_hz: float = 1000.0, block_samples: int | None = None,
                 grpc_options: GrpcSessionOptions | None = None, buffer_s: float = 2.0,
                 on_event: Callable[[DaqEvent], None] | None = None, time_scale: float = 1.0):
        self.device, self.rate_hz, self.grpc_options, self.on_event = device, float(rate_hz), grpc_options, on_event
        self.samples_per_host_s = self.rate_hz * float(time_scale)   # the sample clock against the host's
        self.name = f"USB-6210 {device}"
        pots = parse_channels(pot_channels, "pot_channels")
        ref = parse_channels(reference_channel, "reference_channel")
        gauges = parse_channels(gauge_channels, "gauge_channels")
        if len(ref) > 1:
            raise ConfigError(f"reference_channel: one channel, got {reference_channel!r}")
        for (a, sa), (b, sb) in (((pots, "pot_channels"), (ref, "reference_channel")),
                                 ((pots, "pot_channels"), (gauges, "gauge_channels")),
                                 ((ref, "reference_channel"), (gauges, "gauge_channels"))):
            if common := sorted(set(a) & set(b)):
                raise ConfigError(f"{sa} and {sb} overlap on " + ", ".join(f"ai{k}" for k in common))
        if not pots and not gauges:
            raise ConfigError("pot_channels, gauge_channels: no channels to acquire")
        # All single-ended: the 6210 has only 8 DIFF pairs (ai n with ai n+8), so 6 DIFF gauges would take
        # ai0-5 and ai8-13 and leave room for 4 pots. Pots RSE (wiper to AI GND, like the pot's own
        # ground); gauges NRSE against AI SENSE, tied to the ATI box's signal ground (device notes 4).
        self.pot_physical, self.reference_physical, self.gauge_physical = pots, ref, gauges
        self.channel_names = tuple([POT_NAME.format(i) for i in range(len(pots))] + [REFERENCE_NAME] * len(ref)
                                   + [GAUGE_NAME.format(i) for i in range(len(gauges))])
        n_chan = len(self.channel_names)
        if not self.rate_hz > 0 or self.rate_hz * n_chan > MAX_AGGREGATE_RATE_HZ:
            raise ConfigError(f"rate_hz: {rate_hz:g} Hz x {n_chan} channels is beyond the USB-6210's "
                              f"{MAX_AGGREGATE_RATE_HZ:g} S/s aggregate (max {MAX_AGGREGATE_RATE_HZ / n_chan:g} Hz)")
        if gauges and self.rate_hz < MIN_GAUGE_RATE_HZ:
            raise ConfigError(f"rate_hz: {rate_hz:g} Hz is below the {MIN_GAUGE_RATE_HZ:g} Hz the Nano17 gauges need")
        # rate / 20: 50 ms blocks, short enough for the live view, long enough to keep the RPCs few.
        self.block_samples = int(block_samples) if block_samples is not None else max(1, round(self.rate_hz / 20))
        self.buffer_samples = int(round(buffer_s * self.rate_hz))
        if self.block_samples < 1 or self.buffer_samples < 2 * self.block_samples:
            raise ConfigError(f"block_samples, buffer_s: the buffer ({self.buffer_samples} samples) must hold at "
                              f"least two blocks of {self.block_samples}")
        self.stats = Usb6210Stats()
        self.events: collections.deque[DaqEvent] = collections.deque(maxlen=100)
        # The consumer queue holds as much as the DAQ buffer: a consumer that lags by more loses blocks.
        self._queue: collections.deque[AnalogBlock] = collections.deque()
        self._queue_blocks = max(2, math.ceil(self.buffer_samples / self.block_samples))
        self._cond = threading.Condition()
        self._error: DeviceError | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._task: Task | None = None
        self._reader: AnalogMultiChannelReader | None = None
        self.t0_s = math.nan

    # ------------------------------------------------------------ life cycle
    @property
    def columns(self) -> dict[str, list[int]]:
        """Block columns of each channel set: {"pots": [...], "reference": [...], "gauges": [...]}."""
        p, r = len(self.pot_physical), len(self.reference_physical)
        return {"pots": list(range(p)), "reference": list(range(p, p + r)),
                "gauges": list(range(p + r, len(self.channel_names)))}

    def start(self) -> None:
        if self._thread is not None:
            raise DeviceError(self.name, "already started")
        task = self._open()
        self._stop.clear()
        self._error = None
        self._queue.clear()
        self._thread = threading.Thread(target=self._run, name=f"usb6210-{self.device}", daemon=True)
        try:
            with self._nidaqmx("start the task"):
                task.start()
        except DeviceError:
            self._task, self._thread = None, None
            _quietly(task.close)
            raise
        self.t0_s = time.monotonic()
        self._thread.start()

    def stop(self) -> None:
        """Stop and close the task; never raises for a device that has already gone away."""
        self._stop.set()
        task, self._task = self._task, None
        if task is not None:
            for action in (task.stop, task.close):  # stop wakes the reader thread's blocking read
                try:
                    action()
                except Exception as exc:  # the device or server may be gone; stopping must still finish
                    log.debug("%s: %s during stop: %s", self.name, action.__name__, exc)
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout=5)
        with self._cond:
            self._cond.notify_all()

    def blocks(self, timeout_s: float | None = None) -> Iterator[AnalogBlock]:
        """Blocks in order until stop(). DeviceError when acquisition failed, or when no block came within
        timeout_s (a running 6210 always delivers). A wait that wakes late means this process was held up
        (a loaded machine, a VM paused), the reader thread with it: the reader gets timeout_s again from then,
        since the silence was ours, not the device's."""
        while True:
            with self._cond:
                deadline = None if timeout_s is None else time.monotonic() + timeout_s
                while not self._queue and self._error is None and not self._stop.is_set():
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        raise DeviceError(self.name, f"no samples for {timeout_s:g} s")
                    self._cond.wait(left)
                    if timeout_s is not None and deadline is not None and time.monotonic() - deadline > LATE_WAKE_S:
                        deadline = time.monotonic() + timeout_s
                if self._queue:
                    block = self._queue.popleft()
                elif self._error is not None:
                    raise self._error
                else:
                    return
            yield block

    def __enter__(self) -> Usb6210:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    # ------------------------------------------------------------ nidaqmx
    def _nidaqmx(self, doing: str) -> _NiErrors:
        return _NiErrors(self.name, doing)

    def _open(self) -> Task:
        import nidaqmx  # here, not at import: the rest of the app must load without the NI package
        from nidaqmx.constants import AcquisitionType, TerminalConfiguration
        from nidaqmx.stream_readers import AnalogMultiChannelReader

        # Over gRPC the client wants a non-empty session name to equal the task name.
        name = getattr(self.grpc_options, "session_name", "") or ""
        with self._nidaqmx("create the task"):
            task = nidaqmx.Task(name, grpc_options=self.grpc_options)
        self._task = task
        try:
            with self._nidaqmx("configure the channels"):
                sets = ((self.pot_physical, TerminalConfiguration.RSE, "pots"),
                        (self.reference_physical, TerminalConfiguration.RSE, "reference"),
                        (self.gauge_physical, TerminalConfiguration.NRSE, "gauges"))
                for physical, terminal, key in sets:
                    if physical:
                        names = [self.channel_names[c] for c in self.columns[key]]
                        task.ai_channels.add_ai_voltage_chan(
                            ",".join(f"{self.device}/ai{k}" for k in physical), ",".join(names),
                            terminal_config=terminal, min_val=-RANGE_V, max_val=RANGE_V)
                task.timing.cfg_samp_clk_timing(self.rate_hz, sample_mode=AcquisitionType.CONTINUOUS,
                                                samps_per_chan=self.buffer_samples)
                task.in_stream.input_buf_size = self.buffer_samples
                self._reader = AnalogMultiChannelReader(task.in_stream)
                # Our blocks are shaped from our own channel list; the check asks the driver for the task's
                # channel count on every read (over gRPC, a second round trip per block).
                self._reader.verify_array_shape = False
        except DeviceError:
            self._task = None
            _quietly(task.close)
            raise
        return task

    def _run(self) -> None:
        n, n_chan = self.block_samples, len(self.channel_names)
        timeout_s = n / self.rate_hz + READ_SLACK_S
        next_index, gap = 0, 0
        reader, task = self._reader, self._task   # set by _open() before start() starts this thread
        if reader is None or task is None:
            return
        behind = False
        while not self._stop.is_set():
            try:
                # Behind (the last block came more than two blocks late): what has piled up in one read, not
                # one call per block, so a starved reader catches up instead of falling further behind.
                k = n * max(1, min(task.in_stream.avail_samp_per_chan, self.buffer_samples) // n) if behind else n
                data = np.empty((n_chan, k))
                reader.read_many_sample(data, k, timeout=timeout_s)
            except Exception as exc:
                if self._stop.is_set():
                    return  # stop() stopped the task under the read
                code = getattr(exc, "error_code", None)
                if code in OVERFLOW_CODES:
                    try:
                        lost = self._restart(exc, next_index)
                    except DeviceError as err:
                        return self._fail(err)
                    gap, next_index = gap + lost, next_index + lost
                    continue
                return self._fail(_NiErrors.to_device_error(self.name, "read", exc))
            host_s = time.monotonic()
            block = AnalogBlock(host_s, next_index, self.rate_hz, np.ascontiguousarray(data.T), self.channel_names,
                                gap_before=gap)
            last_index = next_index + k - 1
            self.t0_s = min(self.t0_s, host_s - last_index / self.samples_per_host_s)
            latency_s = host_s - (self.t0_s + last_index / self.samples_per_host_s)
            self.stats.last_latency_s, self.stats.max_latency_s = latency_s, max(self.stats.max_latency_s, latency_s)
            behind = latency_s > 2 * n / self.samples_per_host_s
            next_index, gap = next_index + k, 0
            self._deliver(block)

    def _restart(self, exc: Exception, next_index: int) -> int:
        """Stop and restart after an overflow; the samples lost, estimated from the host clock. The restart
        time is taken before start(), so the estimate never counts more than was lost."""
        task = self._task
        if task is None:
            raise DeviceError(self.name, "the task was closed during an overflow restart")
        with self._nidaqmx("restart after an overflow"):
            task.stop()
            restart_s = time.monotonic()
            task.start()
            self.stats.restart_start_s = time.monotonic() - restart_s
        lost = max(0, round((restart_s - self.t0_s) * self.samples_per_host_s) - next_index)
        self.stats.overflows += 1
        self.stats.restarts += 1
        self.stats.samples_lost += lost
        self._event("overflow", f"DAQ buffer overflow (NI {getattr(exc, 'error_code', '?')}): task restarted, "
                    f"about {lost} samples ({lost / self.rate_hz:.3f} s) lost", lost)
        return lost

    def _deliver(self, block: AnalogBlock) -> None:
        with self._cond:
            if len(self._queue) >= self._queue_blocks:
                dropped = self._queue.popleft()
                lost = dropped.gap_before + len(dropped.volts)
                if self._queue:
                    self._queue[0].gap_before += lost
                else:
                    block.gap_before += lost
                self.stats.consumer_drops += 1
                drop_event = True
            else:
                drop_event = False
            self._queue.append(block)
            self.stats.blocks += 1
            self.stats.samples += len(block.volts)
            self._cond.notify_all()
        if drop_event and self.stats.consumer_drops == 1:  # once: a stalled consumer would flood the log
            self._event("consumer_drop", "the consumer is not keeping up: oldest blocks dropped")

    def _fail(self, err: DeviceError) -> None:
        self._event("error", str(err).removeprefix(f"{self.name}: "))
        with self._cond:
            self._error = err
            self._cond.notify_all()

    def _event(self, kind: str, message: str, samples_lost: int = 0) -> None:
        event = DaqEvent(time.monotonic(), kind, message, samples_lost)
        self.events.append(event)
        log.warning("%s: %s", self.name, message)
        if self.on_event is not None:
            try:
                self.on_event(event)
            except Exception:  # a broken listener must not end the acquisition
                log.exception("%s: on_event listener failed", self.name)


class _NiErrors:
    """Context manager: any nidaqmx / gRPC failure becomes DeviceError("USB-6210 Dev1", ...)."""

    def __init__(self, device: str, doing: str):
        self.device, self.doing = device, doing

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type, exc, tb) -> Literal[False]:
        if exc is None or isinstance(exc, DeviceError) or not isinstance(exc, Exception):
            return False
        raise self.to_device_error(self.device, self.doing, exc) from exc

    @staticmethod
    def to_device_error(device: str, doing: str, exc: Exception) -> DeviceError:
        text = str(exc)
        code = getattr(exc, "error_code", None)
        headline = text.split("\n")[0].strip() or type(exc).__name__
        channel = _channel_in(text)
        if type(exc).__name__ == "DaqNotFoundError":
            return DeviceError(device, "NI-DAQmx is not installed (use grpc_options for NI gRPC Device Server)")
        if code == TIMEOUT_CODE:
            headline = "no samples within the read timeout (unplugged, or the server went away?)"
        where = f" ({channel})" if channel else ""
        what = f" (NI {code})" if code is not None else f" ({type(exc).__name__})"
        return DeviceError(device, f"cannot {doing}{where}: {headline}{what}")


def _quietly(action: Callable[[], object]) -> None:
    try:
        action()
    except Exception as exc:  # cleaning up after a failure: the first error is the one to report
        log.debug("ignored during cleanup: %s", exc)
