"""Slow work off the GUI thread: ``tasks.run(fn, on_done, on_error)`` runs ``fn`` on its own thread and
calls back on the GUI thread (a queued Qt signal), so connecting a rig, opening a file or closing a
recording never freezes the window. Exceptions become ``on_error(exc)`` (default: the window's error
reporter), never a traceback on stderr.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal


class Tasks(QObject):
    _finished = Signal(object)  # a closure to run on the GUI thread

    def __init__(self, on_error: Callable[[str, BaseException], None], parent: QObject | None = None):
        super().__init__(parent)
        self._on_error = on_error
        self._threads: set[threading.Thread] = set()
        self._lock = threading.Lock()
        self._finished.connect(lambda fn: fn())  # the receiver lives in the GUI thread: a queued call

    def run(self, what: str, fn: Callable[[], object], on_done: Callable[[object], None] | None = None,
            on_error: Callable[[BaseException], None] | None = None) -> threading.Thread:
        """Run ``fn()`` on a worker thread named after ``what`` (which also names it in error messages)."""

        def work() -> None:
            try:
                result = fn()
            except BaseException as exc:  # noqa: BLE001 - every failure reaches the operator as a message
                err = exc
                self._finished.emit(lambda: on_error(err) if on_error else self._on_error(what, err))
            else:
                if on_done is not None:
                    self._finished.emit(lambda: on_done(result))
            finally:
                with self._lock:
                    self._threads.discard(threading.current_thread())

        thread = threading.Thread(target=work, name=f"gui-{what}", daemon=True)
        with self._lock:
            self._threads.add(thread)
        thread.start()
        return thread

    def call_soon(self, fn: Callable[[], None]) -> None:
        """Run ``fn`` on the GUI thread (from any thread)."""
        self._finished.emit(fn)

    @property
    def busy(self) -> bool:
        with self._lock:
            return bool(self._threads)

    def join(self, timeout_s: float = 10.0) -> None:
        """Wait for running tasks (at window close)."""
        with self._lock:
            threads = list(self._threads)
        for t in threads:
            t.join(timeout_s)
