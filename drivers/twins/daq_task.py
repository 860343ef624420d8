"""The NI USB-6210 as NI-DAQmx presents it: AI voltage channels, sample clock, PC buffer, every-N and done events.

Pure Python (no gRPC; ``daq_grpc`` maps NI's RPCs onto ``DaqTask``), behaving as NI-DAQmx does on an
M Series device (device notes sections 3-4): the driver picks the smallest input range holding
[min, max]; DIFF pairs ai n with ai n+8, so only ai0-7 can be DIFF; one multiplexed ADC caps the
sample clock at 250 kS/s / channels; a continuous task's buffer is the larger of samps_per_chan and
NI's default for the rate; reading too slowly latches -200279 until the task stops; a read that times
out returns what it has with -200284. A digital-edge trigger on a PFI input holds the acquisition back
until its edge, which on the twin never comes (nothing drives its PFI lines). A task with logging on
writes a TDMS file (``daq_tdms``) from start to stop. ``DaqmxError`` carries NI's code and a message in
NI's layout.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from datetime import UTC, datetime, timedelta

import numpy as np
from nidaqmx.constants import FillMode, LoggingMode
from nidaqmx.error_codes import DAQmxErrors as E
from uartlab.drivers.twins.daq_buffer import DaqStats, DoneSubscription, EveryNSubscription, ReadBlock, SampleBuffer
from uartlab.drivers.twins.daq_channels import (  # noqa: F401 - re-exported for daq_grpc
    _BAD_VALUE,
    _TERM_NAMES,
    ADC_BITS,
    AI_CHANNELS,
    CHUNK_S,
    CONTINUOUS,
    DIFF,
    DIFF_CHANNELS,
    FINITE,
    MAX_AGGREGATE_RATE_HZ,
    NRSE,
    ONBOARD_FIFO_SAMPLES,
    OVERRANGE,
    RANGES_V,
    RSE,
    AiChannel,
    DaqmxError,
    PlantLike,
    bad_value,
    check_trigger_source,
    default_buffer_size,
    parse_physical_channels,
    resolve_terminal,
    select_range_V,
    unflatten,
)
from uartlab.drivers.twins.daq_tdms import LogConfig, TdmsLog


class DaqTask:
    """One NI-DAQmx AI task on the twin. Thread-safe: RPC threads, the acquisition thread and event
    streams all synchronise on ``self.cond`` (re-entrant)."""

    def __init__(self, name: str, device: str, plant: PlantLike, time_scale: float = 1.0,
                 stats: DaqStats | None = None, stalled: threading.Event | None = None):
        self.name, self.device, self.plant, self.time_scale = name, device, plant, time_scale
        self.stalled = stalled or threading.Event()
        self.stats = stats or DaqStats()
        self.channels: list[AiChannel] = []
        self.sample_mode: int | None = None   # None: on-demand timing (no sample clock configured)
        self.rate_Hz, self.samps_per_chan = 1000.0, 1000
        self.user_buffer_size: int | None = None
        self.read_channels: list[int] | None = None   # indices into channels; None: all
        self.read_all_avail = self.running = self.done = False
        self.error: DaqmxError | None = None
        self.buffer: SampleBuffer | None = None
        self.every_n: EveryNSubscription | None = None
        self.done_event: DoneSubscription | None = None
        # Digital-edge triggers on a PFI input; nothing drives the twin's PFI lines, so an armed trigger
        # never fires (a board with nothing wired to its trigger input).
        self.start_trigger: str | None = None
        self.ref_trigger: tuple[str, int] | None = None   # (source, pretrigger samples)
        self.logging = LogConfig()
        self._log: TdmsLog | None = None
        self._t0_wall_s = 0.0   # time.time() of sample 0 of the running acquisition
        self.cond = threading.Condition()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _fail(self, code: int, headline: str, *details: str) -> DaqmxError:
        return DaqmxError(code, headline, *details, f"Task Name: {self.name}")

    @property
    def _buffer(self) -> SampleBuffer:
        """The PC buffer of a timed task, made by each start."""
        if self.buffer is None:
            raise RuntimeError(f"task {self.name}: no PC buffer before a timed task's first start")
        return self.buffer

    def _refuse_while_running(self, what: str) -> None:
        if self.running:
            raise self._fail(E.CAN_NOT_PERFORM_OP_WHILE_TASK_RUNNING,
                             f"Specified operation cannot be performed while the task is running ({what}).")

    # ------------------------------------------------------------ configuration
    def add_voltage_channels(self, physical: str, names: str, term: int, min_V: float, max_V: float) -> None:
        ks = parse_physical_channels(physical, self.device)
        given = [n.strip() for n in names.split(",") if n.strip()]
        if len(given) == 1 < len(ks):  # one name for several channels: DAQmx numbers them name0, name1, ...
            given = [f"{given[0]}{i}" for i in range(len(ks))]
        given = given or [f"{self.device}/ai{k}" for k in ks]
        if len(given) != len(ks):
            raise self._fail(E.INVALID_ATTRIBUTE_VALUE, "The number of channel names does not match the number "
                             "of physical channels.", f"Names: {names}", f"Physical Channels: {physical}")
        new: list[AiChannel] = []
        for name, k in zip(given, ks, strict=True):
            if any(c.name.lower() == name.lower() for c in self.channels + new):
                raise self._fail(E.CHAN_ALREADY_IN_TASK, "Channel already exists in the task.", f"Channel Name: {name}")
            new.append(AiChannel(name, f"{self.device}/ai{k}", k, resolve_terminal(term, k, name),
                                 min_V, max_V, select_range_V(min_V, max_V, name)))
        with self.cond:
            self._refuse_while_running("add channels")
            self.channels += new

    def configure_clock(self, rate_Hz: float, sample_mode: int, samps_per_chan: int, source: str = "") -> None:
        task = f"Task Name: {self.name}"
        if source not in ("", "OnboardClock"):
            raise bad_value("DAQmx_SampClk_Src", source, "You Can Select: OnboardClock (the twin has no PFI)", task)
        if sample_mode not in (FINITE, CONTINUOUS):
            raise bad_value("DAQmx_SampQuant_SampMode", sample_mode,
                            "You Can Select: DAQmx_Val_FiniteSamps, DAQmx_Val_ContSamps", task)
        if sample_mode == FINITE and samps_per_chan < 1:
            raise bad_value("DAQmx_SampQuant_SampPerChan", samps_per_chan, "Minimum Value: 1", task)
        with self.cond:
            self._refuse_while_running("configure the sample clock")
            self.rate_Hz, self.sample_mode, self.samps_per_chan = rate_Hz, sample_mode, samps_per_chan

    def configure_channels(self, spec: str, *, min_V: float | None = None, max_V: float | None = None,
                           terminal: int | None = None) -> None:
        """Set DAQmx_AI_Min/Max/TermCfg of the channels spec names; the range is chosen again as at creation."""
        with self.cond:
            self._refuse_while_running("change a channel")
            for i in self.find_channels(spec):
                c = self.channels[i]
                lo, hi = c.min_V if min_V is None else min_V, c.max_V if max_V is None else max_V
                term = c.terminal if terminal is None else resolve_terminal(terminal, c.physical, c.name)
                self.channels[i] = dataclasses.replace(c, min_V=lo, max_V=hi, terminal=term,
                                                       range_V=select_range_V(lo, hi, c.name))

    def configure_triggers(self, start: str | None, ref: tuple[str, int] | None) -> None:
        with self.cond:
            self._refuse_while_running("configure a trigger")
            self.start_trigger, self.ref_trigger = start, ref

    def configure_logging(self, config: LogConfig) -> None:
        config.check()
        with self.cond:
            self._refuse_while_running("configure logging")
            self.logging = config

    def set_buffer_size(self, samps_per_chan: int | None) -> None:
        """DAQmx_Buf_Input_BufSize; None goes back to NI's default for the timing."""
        with self.cond:
            self._refuse_while_running("change the buffer size")
            self.user_buffer_size = None if samps_per_chan is None else int(samps_per_chan)

    @property
    def max_rate_Hz(self) -> float:
        return MAX_AGGREGATE_RATE_HZ / max(1, len(self.channels))

    @property
    def buffer_size(self) -> int:
        if self.user_buffer_size is not None:
            return self.user_buffer_size
        return self.samps_per_chan if self.sample_mode == FINITE else \
            max(self.samps_per_chan, default_buffer_size(self.rate_Hz))

    def verify(self) -> None:
        """What DAQmx checks when the task is verified (at start): channels, rate, buffer."""
        if not self.channels:
            raise self._fail(E.CAN_NOT_PERFORM_OP_WHEN_NO_CHANS_IN_TASK,
                             "Specified operation cannot be performed when there are no channels in the task.")
        if self.sample_mode is not None and not 0 < self.rate_Hz <= self.max_rate_Hz:
            raise bad_value("DAQmx_SampClk_Rate", f"{self.rate_Hz:g}", f"Maximum Value: {self.max_rate_Hz:g}",
                            f"Number of Channels: {len(self.channels)}", f"Task Name: {self.name}")
        if self.sample_mode is not None and self.buffer_size < 1:
            raise bad_value("DAQmx_Buf_Input_BufSize", self.buffer_size, f"Task Name: {self.name}")
        if self.start_trigger is not None:
            check_trigger_source(self.start_trigger, self.device, "DAQmx_DigEdge_StartTrig_Src")
        if self.ref_trigger is not None:
            check_trigger_source(self.ref_trigger[0], self.device, "DAQmx_DigEdge_RefTrig_Src")
        if self.logging.active and self.sample_mode is None:
            raise self._fail(E.LOGGING_MODE_NOT_SUPPORTED_NON_BUFFERED, "Logging is not supported for "
                             "non-buffered (on-demand) tasks. Configure the sample clock to log.",
                             "Property: DAQmx_Logging_Mode")

    def find_channels(self, spec: str) -> list[int]:
        """Indices of the task's channels that spec names (virtual or physical names); "" means all."""
        found = []
        for name in unflatten(spec) if spec.strip() else [c.name for c in self.channels]:
            hits = [i for i, c in enumerate(self.channels) if name.lower() in (c.name.lower(), c.physical_name.lower())]
            if not hits:
                raise self._fail(E.CHAN_NOT_IN_TASK, "Specified channel is not in the task.", f"Channel Name: {name}")
            found.append(hits[0])
        return found

    def read_columns(self) -> list[int]:
        return list(range(len(self.channels))) if self.read_channels is None else self.read_channels

    # ------------------------------------------------------------ run state and events
    def start(self) -> None:
        with self.cond:
            self._refuse_while_running("start it again")
            self.verify()
            if self.sample_mode is not None and self.logging.active:  # a file that will not open fails the start
                self._log = TdmsLog(self.logging, self.logging.group_name or self.name,
                                    [c.name for c in self.channels], self.rate_Hz, datetime.now(UTC))
            self.running, self.done, self.error = True, False, None
            if self.sample_mode is None:
                return  # on-demand: each read samples the plant there and then
            self.buffer = SampleBuffer(self.buffer_size, len(self.channels))
            if self.every_n is not None:
                self.every_n.next_at = self.every_n.n_samples
            self._stop = threading.Event()
            self._thread = threading.Thread(target=self._acquire, args=(self._stop,), daemon=True,
                                            name=f"daq-twin {self.name}")
            self._thread.start()

    def stop(self) -> None:
        with self.cond:
            self.running = False
            thread, self._thread = self._thread, None
            self._stop.set()
            self.cond.notify_all()
        if thread is not None:
            thread.join(timeout=5)
        with self.cond:
            log, self._log = self._log, None
        if log is not None:
            log.close()

    def clear(self) -> None:
        self.stop()
        self._drop_every_n()
        self._drop_done_event()

    def _drop_every_n(self) -> None:
        with self.cond:
            if self.every_n is not None:
                self.every_n.close()
            self.every_n = None

    def is_done(self) -> bool:
        with self.cond:
            return not self.running or self.done

    def _wait(self, ready, timeout_s: float) -> bool:
        """Wait on cond (held) until ready() or an error; timeout_s < 0 waits forever. True if ready."""
        deadline = None if timeout_s < 0 else time.monotonic() + timeout_s
        while self.error is None and not ready():
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False
            self.cond.wait(left)
        if self.error is not None:
            raise self.error
        return True

    def wait_until_done(self, timeout_s: float) -> None:
        with self.cond:
            if not self._wait(lambda: not self.running or self.done, timeout_s):
                raise self._fail(E.WAIT_UNTIL_DONE_DOES_NOT_INDICATE_DONE, "Wait Until Done did not indicate that "
                                 "the task was done within the specified timeout.", f"Timeout: {timeout_s}")

    def _refuse_event_change_while_running(self, register: bool) -> None:
        """DAQmx registers and unregisters its software events (every N samples, done) only while stopped."""
        if self.running:
            code, verb = ((E.CANNOT_REGISTER_DA_QMX_SOFTWARE_EVENT_WHILE_TASK_IS_RUNNING, "registered") if register
                          else (E.CANNOT_UNREGISTER_DA_QMX_SOFTWARE_EVENT_WHILE_TASK_IS_RUNNING, "unregistered"))
            raise self._fail(code, f"DAQmx software event cannot be {verb} because task is running.")

    def register_every_n(self, n_samples: int) -> EveryNSubscription:
        with self.cond:
            self._refuse_event_change_while_running(register=True)
            if n_samples == 0:
                raise self._fail(E.EVERY_N_SAMPS_EVENT_INTERVAL_ZERO_NOT_SUPPORTED,
                                 "Every N Samples Event interval of zero is not supported.")
            if self.every_n is not None:
                raise self._fail(E.EVERY_N_SAMPS_ACQ_INTO_BUFFER_EVENT_ALREADY_REGISTERED,
                                 "Every N Samples Acquired Into Buffer event is already registered.")
            self.every_n = EveryNSubscription(n_samples)
            return self.every_n

    def unregister_every_n(self) -> None:
        with self.cond:
            self._refuse_event_change_while_running(register=False)
        self._drop_every_n()

    def register_done(self) -> DoneSubscription:
        with self.cond:
            self._refuse_event_change_while_running(register=True)
            if self.done_event is not None:
                raise self._fail(E.DONE_EVENT_ALREADY_REGISTERED, "Done event is already registered.")
            self.done_event = DoneSubscription()
            return self.done_event

    def unregister_done(self) -> None:
        with self.cond:
            self._refuse_event_change_while_running(register=False)
        self._drop_done_event()

    def _drop_done_event(self) -> None:
        with self.cond:
            if self.done_event is not None:
                self.done_event.close()
            self.done_event = None

    def _finished(self, status: int) -> None:
        """The task stopped by itself (cond held): DAQmx's done event fires; a stop the application asks
        for does not fire it."""
        if self.done_event is not None:
            self.done_event.events.put(status)

    # ------------------------------------------------------------ acquisition
    def _sample(self, n: int) -> np.ndarray:
        """(n, channels) volts as the ADC returns them: the plant's columns (DIFF: ai n - ai n+8), clipped
        where the ADC saturates on each channel's range and on its 16-bit grid."""
        with self.plant.lock:  # the plant's noise generator is not thread-safe, and other twins share it
            raw = np.asarray(self.plant.analog_block(n), dtype=float)
        volts = raw[:, [c.physical for c in self.channels]]
        for j, c in enumerate(self.channels):
            if c.negative is not None:
                volts[:, j] -= raw[:, c.negative]
        limit_V = np.array([c.range_V * OVERRANGE for c in self.channels])
        lsb_V = 2 * limit_V / 2**ADC_BITS   # the ADC's codes: a reading is one of 65 536 levels of its range
        return np.round(np.clip(volts, -limit_V, limit_V) / lsb_V) * lsb_V

    def _acquire(self, stop: threading.Event) -> None:
        """Hardware-like sample clock: sample i is due at t0 + i / (rate x time_scale) in wall time."""
        rate_per_wall_s = self.rate_Hz * self.time_scale
        total = self.samps_per_chan if self.sample_mode == FINITE else None
        per_chunk = max(1, int(rate_per_wall_s * CHUNK_S))  # one wake per block, as the board's USB transfers
        t0, produced = time.monotonic(), 0
        self._t0_wall_s = time.time()
        while not stop.is_set():
            if self.stalled.is_set() or self._armed():  # nothing is due, and nothing catches up afterwards
                stall_start = time.monotonic()
                while (self.stalled.is_set() or self._armed()) and not stop.wait(CHUNK_S):
                    pass
                t0 += time.monotonic() - stall_start
                self._t0_wall_s += time.monotonic() - stall_start
            due = int((time.monotonic() - t0) * rate_per_wall_s)
            due = due if total is None else min(due, total)
            if due > produced:
                scans = self._sample(due - produced)
                with self.cond:
                    if stop.is_set():
                        return
                    if not self._buffer.write(scans):
                        return self._overflow()
                    if self._log is not None and not self.logging.logs_on_read:
                        self._log.write(scans)
                    produced = due
                    self.stats.count("samples_produced", len(scans))
                    while self.every_n is not None and self.every_n.next_at <= produced:
                        self.every_n.events.put(self.every_n.n_samples)
                        self.every_n.next_at += self.every_n.n_samples
                    self.done = total is not None and produced >= total
                    self.cond.notify_all()
                    if self.done:
                        return self._finished(0)
            next_wake = produced + per_chunk if total is None else min(produced + per_chunk, total)
            stop.wait(min(CHUNK_S, max(0.0, next_wake / rate_per_wall_s - (time.monotonic() - t0))))

    def _armed(self) -> bool:
        """A trigger waits for an edge; the twin's PFI inputs never see one."""
        return self.start_trigger is not None or self.ref_trigger is not None

    def _overflow(self) -> None:
        """The buffer is full of unread samples: DAQmx stops the acquisition and latches -200279."""
        self.stats.count("overflows")
        self.error = self._fail(
            E.SAMPLES_NO_LONGER_AVAILABLE, "The application is not able to keep up with the hardware acquisition.\n"
            "Increasing the buffer size, reading the data more frequently, or specifying a fixed number of samples "
            "to read instead of reading all available samples might correct the problem.",
            "Property: DAQmx_Read_RelativeTo", "Corresponding Value: DAQmx_Val_CurrReadPos",
            "Property: DAQmx_Read_Offset", "Corresponding Value: 0", f"Buffer Size: {len(self._buffer.data)}")
        self.error.samps_per_chan_read = 0
        self.cond.notify_all()
        self._finished(self.error.code)

    # ------------------------------------------------------------ reading
    def read(self, n_req: int, timeout_s: float, fill_mode: int, array_size: int) -> tuple[np.ndarray, int, int]:
        """(flat array, samples per channel read, status) laid out as DAQmx fills the caller's array."""
        block = self.read_block(n_req, timeout_s, array_size)
        return self._layout(block.scans, block.wanted, fill_mode, array_size), len(block.scans), block.status

    def read_block(self, n_req: int, timeout_s: float, array_size: int | None = None) -> ReadBlock:
        """Up to n_req samples per channel (< 0: the default read size), with status -200284 and a partial
        block when the timeout expired first. A task that is not running starts for the read and stops after
        it, as DAQmx's auto-start does. array_size None: the caller sizes its buffer to the read."""
        with self.cond:
            implicit = not self.running
            if implicit and self.every_n is not None:
                raise self._fail(E.AUTO_START_READ_NOT_ALLOWED_EVENT_REGISTERED, "Read cannot start the task "
                                 "automatically because an event is registered. Start the task first.")
            if self.logging.active and self.logging.mode == LoggingMode.LOG.value:
                raise self._fail(E.READ_NOT_SUPPORTED_FOR_LOGGING_MODE, "You cannot read data when the logging "
                                 "mode is set to Log. Set the logging mode to Log and Read to read and log data.",
                                 "Property: DAQmx_Logging_Mode", "Corresponding Value: DAQmx_Val_Log")
        if implicit:
            self.start()
        try:
            if self.sample_mode is None:
                now = datetime.now(UTC)
                scans = self._sample(max(1, n_req))[:, self.read_columns()]
                if array_size is not None:
                    self._check_array(len(scans), array_size)
                return ReadBlock(scans, len(scans), 0, now, 0.0)
            with self.cond:
                if self.error is not None:
                    raise self.error
                n = self.default_read_size() if n_req < 0 else n_req
                if array_size is not None:
                    self._check_array(n, array_size)
                left = self.samps_per_chan - self._buffer.read_pos
                if self.sample_mode == FINITE and n > left:
                    raise self._fail(E.SAMPLES_WILL_NEVER_BE_AVAILABLE, "Attempted to read a sample beyond the "
                                     "final sample acquired. The acquisition has stopped, therefore the sample "
                                     "specified by the combination of position and offset will never be available.",
                                     f"Samples Requested: {n}", f"Samples Left: {left}")
                self._wait(lambda: not self.running or self._buffer.available >= n, timeout_s)
                buffer = self._buffer
                first = buffer.read_pos
                # The sample clock's time of the block's first sample, kept as datetime arithmetic so that
                # back-to-back blocks are exactly n sample periods apart (a float epoch loses the microseconds)
                t0 = (datetime.fromtimestamp(self._t0_wall_s, UTC)
                      + timedelta(seconds=first / (self.rate_Hz * self.time_scale)))
                scans = buffer.take(min(n, buffer.available))
                if self._log is not None and self.logging.logs_on_read and len(scans):
                    self._log.write(scans)  # every channel of the task, whichever the read returns
                scans = scans[:, self.read_columns()]
            status = 0 if len(scans) == n else E.SAMPLES_NOT_YET_AVAILABLE
            return ReadBlock(scans, n, status, t0, 1.0 / self.rate_Hz)
        finally:
            if implicit:
                self.stop()

    def default_read_size(self) -> int:
        """DAQmx_Read_DefaultNumberOfSamplesToRead: all available, or what is left of a finite acquisition."""
        with self.cond:
            buffer = self.buffer if self.running else None
            if self.sample_mode == FINITE and not self.read_all_avail:
                return self.samps_per_chan - (buffer.read_pos if buffer is not None else 0)
            return buffer.available if buffer is not None else 0

    def _check_array(self, n: int, array_size: int) -> None:
        if n * len(self.read_columns()) > array_size:
            raise self._fail(E.READ_BUFFER_TOO_SMALL, "Buffer is too small to fit read data.",
                             f"Required Buffer Size in Samples: {n * len(self.read_columns())}",
                             f"Buffer Size in Samples: {array_size}")

    def _layout(self, scans: np.ndarray, n: int, fill_mode: int, array_size: int) -> np.ndarray:
        """The reply's flat array with a stride of n samples per channel, as DAQmx fills the caller's
        (channels, n) array; what a partial read leaves unfilled stays zero."""
        self._check_array(n, array_size)
        out = np.zeros((n, len(self.read_columns())))
        out[: len(scans)] = scans
        return (out if fill_mode == FillMode.GROUP_BY_SCAN_NUMBER.value else out.T).ravel()
