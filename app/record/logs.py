"""Log files beside what a command writes, and how loud each kind of rig event is.

    with log_file(session_path.with_suffix(".log")):   # `uartlab run/demo/record`, the GUI's recordings
        ...                                            # every INFO+ record of every logger goes into it
    with log_file(None) as capture:                    # a calibration: kept in memory until the store
        capture.note("a line the procedure printed")   #   has named its record, then
        capture.write_to(record_path.with_suffix(".log"))

The file gets INFO and above with timestamps and logger names, whatever -v/-q say for stderr: while a
log file is open the root logger passes INFO, and the handlers that were already there (the console's)
keep the level they had, so the console says no more than before.

Rig events (the hub's Event, recorded in the session's events table) are logged by the recording session
at ``event_level(kind)``: routine chatter (clock-sync updates) at DEBUG, what happened in the run (phases,
trials, steady states, operator actions) at INFO, what an operator must know (faults, trips, the E-stop,
lost samples) at WARNING.
"""

from __future__ import annotations

import contextlib
import io
import logging
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from uartlab.app.run.unmodelled import unmodelled_sentence
from uartlab.schema import EventKind

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
EVENT_LEVELS: dict[EventKind | str, int] = {
    EventKind.CLOCK: logging.DEBUG,
    EventKind.FAULT: logging.WARNING, EventKind.TRIP: logging.WARNING, EventKind.ESTOP: logging.WARNING,
    EventKind.OVERFLOW: logging.WARNING, EventKind.DROP: logging.WARNING, EventKind.UNMODELLED: logging.WARNING}
# Kinds recorded as JSON for their readers that a log line says in words
IN_WORDS: dict[EventKind | str, Callable[[str], str]] = {EventKind.UNMODELLED: unmodelled_sentence}
events_log = logging.getLogger("uartlab.events")

_lock = threading.Lock()
_active: list[logging.Handler] = []
_saved: dict = {}


def event_level(kind: EventKind | str) -> int:
    """The logging level of a rig event of this kind (INFO unless EVENT_LEVELS says otherwise: an unknown
    kind read from a newer file too)."""
    return EVENT_LEVELS.get(kind, logging.INFO)


def log_event(event) -> None:
    """One rig event (``uartlab.streams.Event``) as a log record at its kind's level; one played back from a
    file says so (it was recorded then, nothing acts on it now)."""
    said = IN_WORDS.get(event.kind)
    events_log.log(event_level(event.kind), "%s%s [%s] %s", "replayed " if event.replayed else "", event.kind,
                   event.source, event.message if said is None else said(event.message))


class _QuietFileHandler(logging.FileHandler):
    """A log file whose disk fills up or goes away stops taking lines, silently: logging's own report (a
    traceback on stderr per line) or an OSError at close would bury the one line that says what failed
    (the recorder's sentence, app/record/writer.py), and the console still has every warning."""

    def handleError(self, record: logging.LogRecord) -> None:
        self.setLevel(logging.CRITICAL + 1)  # nothing more is tried

    def flush(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            super().flush()

    def close(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            super().close()


class LogCapture:
    """The records of one session or procedure: into a file as they come, or in memory until write_to."""

    def __init__(self, path: str | Path | None, level: int = logging.INFO):
        self.path = Path(path) if path is not None else None
        self._buffer = io.StringIO()   # the records when there is no file
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.handler: logging.Handler = _QuietFileHandler(self.path, encoding="utf-8")
        else:
            self.handler = logging.StreamHandler(self._buffer)
        self.handler.setLevel(level)
        self.handler.setFormatter(logging.Formatter(FORMAT))

    def note(self, message: str, name: str = "uartlab") -> None:
        """A line into this log only (e.g. what a procedure printed on stdout), at INFO."""
        record = logging.getLogger(name).makeRecord(name, logging.INFO, "", 0, message, (), None)
        self.handler.handle(record)

    def text(self) -> str:
        if self.path is None:   # in memory (the buffer exists exactly when there is no path)
            return self._buffer.getvalue()
        self.handler.flush()
        return self.path.read_text(encoding="utf-8")

    def write_to(self, path: str | Path) -> Path:
        """Write what was captured to ``path`` (the in-memory form, once the output has its name)."""
        path = Path(path)
        path.write_text(self.text(), encoding="utf-8")
        return path


@contextlib.contextmanager
def log_file(path: str | Path | None, level: int = logging.INFO) -> Iterator[LogCapture]:
    """Every record at ``level`` and above, of every logger, into ``path`` (None: memory) for the block."""
    capture = LogCapture(path, level)
    _attach(capture.handler, level)
    try:
        yield capture
    except BaseException as exc:  # the file says how it ended; the console already gets the error once
        capture.note(f"stopped by {type(exc).__name__}: {exc}".rstrip(": "), "uartlab")
        raise
    finally:
        _detach(capture.handler)
        capture.handler.close()


def _attach(handler: logging.Handler, level: int) -> None:
    root = logging.getLogger()
    with _lock:
        if not _active:  # the first open log: let `level` through, the console's handlers stay as they were
            _saved.clear()
            _saved["level"] = root.level
            _saved["handlers"] = {h: h.level for h in root.handlers}
            if root.level > level:
                for h in root.handlers:
                    h.setLevel(max(h.level, root.level))
                root.setLevel(level)
        _active.append(handler)
        root.addHandler(handler)


def _detach(handler: logging.Handler) -> None:
    root = logging.getLogger()
    with _lock:
        root.removeHandler(handler)
        if handler in _active:
            _active.remove(handler)
        if not _active and _saved:
            for h, old in _saved["handlers"].items():
                h.setLevel(old)
            root.setLevel(_saved["level"])
            _saved.clear()
