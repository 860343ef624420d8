"""A recording session: every stream and event of a running rig, from the hub into one HDF5 file.

The recorder (app/record/writer.py) is a hub consumer like any other (the live model, GUI and engine are too): it
subscribes with a deep queue on its own thread, so a slow disk can never stall acquisition or control;
anything the hub had to drop for it is counted and written into the file at close, with each device's
clock offset and drift, so the file says how its streams line up and what, if anything, is missing.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import threading
import time
from collections import deque
from datetime import datetime
from pathlib import Path

import numpy as np
import tomli_w
from uartlab.app.record.logs import log_event, log_file
from uartlab.app.record.writer import SessionRecorder
from uartlab.app.run.rig_like import RigLike
from uartlab.errors import RecordingError
from uartlab.names import TENDONS
from uartlab.streams import Event, EventKind, Record

logger = logging.getLogger(__name__)

QUEUE_RECORDS = 200_000  # ~3 min of every stream at full rate: the recorder falls behind, not the rig
# What ``holds`` may ask about: the last events written, and how long it waits for one offered, not yet written.
EVENTS_REMEMBERED = 256
HOLDS_WAIT_S = 0.3


def session_path(folder: Path, label: str | None = None, now: datetime | None = None) -> Path:
    """``folder/session_<local date>_<time>[_<label>].h5``. The label (a suite's name) is the user's text:
    anything but letters, digits, '.', '-' and '_' becomes '_', so no name can reach outside ``folder``."""
    stamp = f"session_{(now or datetime.now()):%Y%m%d_%H%M%S}"
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", label).strip("._") if label else ""
    return Path(folder) / (f"{stamp}_{safe}.h5" if safe else f"{stamp}.h5")


def rig_texts(rig: RigLike) -> tuple[str, dict[str, str]]:
    """The rig config text and the calibration files it uses, to embed verbatim in the session file."""
    from uartlab.app.rig.config_text import effective_config_text

    cfg = rig.config
    config_text = effective_config_text(cfg)   # the text it was read from, with what the command line changed
    cal = cfg.nano17.calibration_file
    if cal is not None:
        calibrations = {Path(cal).name: Path(cal).read_text(encoding="utf-8", errors="replace")}
    else:
        from uartlab.app.rig.backends import twin_ft_calibration_file

        name, text = twin_ft_calibration_file()
        calibrations = {name: text}
    calibrations["sea.toml"] = sea_text(rig)
    # The calibration store's current set, verbatim (calibration/store.py); none without a store.
    from uartlab.calibration.store import current_calibration_texts

    calibrations.update(current_calibration_texts(cfg.calibration_store))
    return config_text, calibrations


def sea_text(rig: RigLike) -> str:
    """The SEA calibrations the rig converts pot volts with, as rig.toml's [sea.<tendon>] tables."""
    forces = getattr(rig, "sea_forces", None)
    if forces is None:
        return f"# no SEA conversion on this rig ({type(rig).__name__}): rig.toml [sea] calibration = " \
               f"{'from_twin' if rig.config.sea.calibrations is None else 'its [sea.<tendon>] fits'}\n"
    keys = ("v0_V", "gain_N_per_V", "quadratic_N_per_V2", "reference_V")
    tables = {t: {k: float(np.asarray(getattr(c, k))) for k in keys if hasattr(c, k)}
              for t, c in zip(TENDONS, forces.calibrations, strict=False)}
    return "# the SEA calibrations this rig converted pot volts with (F = gain * dV + quadratic * dV^2)\n" + \
        tomli_w.dumps({"sea": tables})


class RecordingSession:
    """Record a started rig into ``path`` until ``close()``.

    If the recorder fails (disk full, folder gone, permission lost), the session stops at once: it leaves
    the hub, publishes one "fault" event saying which file and how much of it was kept (``error``), and
    ``close()`` closes the file as far as the disk allows and raises that RecordingError.
    """

    def __init__(self, rig: RigLike, path: str | Path, operator: str = "", notes: str = "",
                 flush_interval_s: float | None = None, protocol=None, log: bool = False,
                 expected_s: float | None = None, command_line: str = ""):
        """``protocol``: the Suite this session runs; its exact text and sha256 go into /config/protocol.
        ``log``: keep the log records (INFO and above) in ``<session>.log`` beside the file until close (the
        GUI's recordings; `uartlab run`/`record` open theirs around the rig's start instead, app/record/logs.py).
        ``command_line``: the command that asked for it, where that is another process's (a client of the rig
        core); "" records this process's own.
        ``expected_s``: how long it should last (None: open-ended), for the free-space pre-flight, which
        refuses with RecordingError before the file is created and leaves a warning in ``warnings``."""
        from uartlab.app.record.free_space import check_free_space

        warning = check_free_space(Path(path).parent, rig.hub.specs, expected_s)
        self.warnings = [warning] if warning else []
        config_text, calibrations = rig_texts(rig)
        flush = flush_interval_s if flush_interval_s is not None else rig.config.recording.flush_interval_s
        self.rig = rig
        metadata = {"operator": operator, "notes": notes, "config_text": config_text,
                    "calibration_texts": calibrations}
        if command_line:
            metadata["command_line"] = command_line
        if protocol is not None:
            metadata["protocol_texts"] = {Path(protocol.source).name: protocol.text}
            metadata["protocol_sha256"] = protocol.sha256
        self.recorder = SessionRecorder(path, metadata, flush_interval_s=flush)
        for spec in rig.hub.specs.values():
            self.recorder.add_stream(spec)
        # Subscribed first: the samples of the file's first moments queue up while it goes into place.
        self._sub = rig.hub.subscribe("recorder", maxsize=QUEUE_RECORDS)
        try:
            self.recorder.start()   # the file at its path now, SWMR on, before any sample (writer.py)
        except RecordingError:
            self._sub.close()
            with contextlib.suppress(RecordingError):
                self.recorder.close()
            raise
        self.warnings += [f"removed {p}: a session file a recorder was killed while creating (it held no samples)"
                          for p in self.recorder.removed_partials]
        self._stop = threading.Event()
        self._error: BaseException | None = None
        self._events_written: deque[Event] = deque(maxlen=EVENTS_REMEMBERED)
        self._written = threading.Condition()
        self._taking = True   # False once the session's thread has written the last item it will take
        self._log = log_file(Path(path).with_suffix(".log")) if log else None
        if self._log is not None:
            self._log.__enter__()
        self._thread = threading.Thread(target=self._run, name="recording-session", daemon=True)
        self._thread.start()
        logger.info("recording session %s (%s%s), streams %s", self.path, f"operator {operator!r}" if operator
                 else "no operator", f", protocol {Path(protocol.source).name}" if protocol is not None else "",
                 ", ".join(self.recorder.specs))
        for text in self.warnings:  # into the file's events and the GUI's log
            rig.hub.event(EventKind.WARNING, "recorder", text)

    @property
    def path(self) -> str:
        return self.recorder.path

    def hub_drops(self) -> dict[str, int]:
        """Records the hub dropped from this session's queue so far, per stream (only those with drops). Its
        own: the hub names every recorder it ever had "recorder", "recorder#2" ..., and in a rig core that
        records session after session "recorder" is the first one's."""
        return {stream: c.dropped_records for stream, c in self._sub.stats().streams.items() if c.dropped_records}

    def holds(self, event: Event, wait_s: float = HOLDS_WAIT_S) -> bool:
        """Whether ``event``, published on the rig's hub, goes into this file: written already, or offered (this
        session still subscribed now, so it was when the event came, and close writes out all it was offered).
        A session that is closing gets up to ``wait_s`` to write it; False where that cannot be told."""
        with self._written:
            if event in self._events_written or (self._sub.subscribed and self.error is None):
                return True
            self._written.wait_for(lambda: event in self._events_written or not self._taking, wait_s)
            return event in self._events_written

    @property
    def error(self) -> BaseException | None:
        """Why the recording stopped (one sentence: the file, the cause, what it keeps); None while recording."""
        return self._error or self.recorder.error

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                if self.recorder.error is not None:  # the writer thread failed between two items
                    raise self.recorder.error
                item = self._sub.get(timeout_s=0.1)
                if item is not None:
                    self._write(item)
            for item in self._sub.drain():
                self._write(item)
        except BaseException as exc:  # noqa: BLE001 - said now, raised at close; acquisition goes on
            self._error = exc
            self._sub.close()  # stop at once: nothing more queues up for a file that takes no more
            text = str(exc) if isinstance(exc, RecordingError) else f"recording stopped: {self.path}: {exc}"
            self.rig.hub.event(EventKind.FAULT, "recorder", text)
        finally:
            with self._written:
                self._taking = False
                self._written.notify_all()

    def _write(self, item: Record | Event) -> None:
        if isinstance(item, Event):
            self.recorder.event(item)
            log_event(item)  # routine ones (clock sync) at debug: app/record/logs.py
            with self._written:
                self._events_written.append(item)
                self._written.notify_all()
        elif item.stream in self.recorder.specs:
            self.recorder.write(item)

    def begin_trial(self, name: str, protocol: str, parameters: dict, repeat: int = 0,
                    host_time_s: float | None = None) -> None:
        self.recorder.begin_trial(name, protocol, parameters, repeat, host_time_s)

    def end_trial(self, outcome: str, host_time_s: float | None = None) -> None:
        self.recorder.end_trial(outcome, host_time_s)

    def close(self) -> dict:
        """Stop, write drop counts and clock estimates, mark the file complete. Returns that summary.
        After a failure: close the file as far as the disk allows, and raise why the recording stopped."""
        # Out of the hub first, then the queue written to its end: whatever was published while this session
        # was subscribed is in the file (``holds``), the E-stop of a run that is ending included.
        self._sub.close()
        self._stop.set()
        self._thread.join(timeout=30)
        if self.error is not None:
            try:
                with contextlib.suppress(RecordingError):  # the same failure, said once below
                    self.recorder.close()
                # INFO: into the log file beside the session; the console has it once, from the command
                logger.info("session %s closed after its recording stopped: %s", self.path, self.error)
            finally:
                if self._log is not None:
                    self._log.__exit__(None, None, None)
                    self._log = None
            raise self.error
        hub_drops = {**self.rig.hub.drop_counts(), "recorder": self.hub_drops()}
        recorder_drops = dict(self.recorder.dropped)
        clock_sync = {name: _as_dict(sync.estimate()) for name, sync in self.rig.clock_sync().items()}
        summary = {"hub_drops": hub_drops, "recorder_drops": recorder_drops, "clock_sync": clock_sync,
                   "closed_host_time_s": time.monotonic()}
        # One short event per fact: the events table keeps each message to 512 bytes.
        now = time.monotonic()
        for device, estimate in clock_sync.items():
            self.recorder.event(Event(now, EventKind.CLOCK, device, json.dumps(estimate, default=float)))
        self.recorder.event(Event(now, EventKind.DROPS, "hub", json.dumps(hub_drops.get("recorder", {}))))
        self.recorder.event(Event(now, EventKind.DROPS, "recorder", json.dumps(recorder_drops)))
        try:
            self.recorder.close()
            lost = sum(recorder_drops.values()) + sum(hub_drops.get("recorder", {}).values())
            logger.log(logging.WARNING if lost or self._error else logging.INFO, "session %s closed: %s samples, %s",
                    self.path, sum(self.recorder.flushed.values()), f"{lost} dropped" if lost else "nothing dropped")
        finally:
            if self._log is not None:
                self._log.__exit__(None, None, None)
                self._log = None
        if self._error is not None:
            raise self._error
        return summary

    def __enter__(self) -> RecordingSession:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _as_dict(estimate) -> dict:
    if estimate is None:
        return {}
    if hasattr(estimate, "__dataclass_fields__"):
        return {k: getattr(estimate, k) for k in estimate.__dataclass_fields__}
    return dict(estimate)
