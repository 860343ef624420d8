"""Slow work off the GUI thread: ``tasks.run(fn, on_done, on_error)`` runs ``fn`` on its own thread and
calls back on the GUI thread, so connecting a rig, opening a file or closing a recording never freezes the
window. Exceptions become ``on_error(exc)`` (default: the window's error reporter), never a traceback on
stderr.

A worker never touches a Qt object: it puts its callback on a plain thread-safe queue, which a timer on the
GUI thread empties every ``DELIVER_MS``. A worker that finishes after its window is gone (its answer came
late; the window closed meanwhile) leaves its callback in a queue nobody empties, instead of emitting a
signal into a deleted QObject from another thread.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer

DELIVER_MS = 10   # how often the GUI thread runs finished tasks' callbacks: unnoticeable next to a request's time


class Tasks(QObject):
    def __init__(self, on_error: Callable[[str, BaseException], None], parent: QObject | None = None):
        super().__init__(parent)
        self._on_error = on_error
        self._threads: set[threading.Thread] = set()
        self._lock = threading.Lock()
        self._done: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()   # closures for the GUI thread
        self._timer = QTimer(self)
        self._timer.timeout.connect(self.deliver)
        self._timer.start(DELIVER_MS)

    def run(self, what: str, fn: Callable[[], object], on_done: Callable[[object], None] | None = None,
            on_error: Callable[[BaseException], None] | None = None) -> threading.Thread:
        """Run ``fn()`` on a worker thread named after ``what`` (which also names it in error messages)."""

        def work() -> None:
            try:
                result = fn()
            except BaseException as exc:  # noqa: BLE001 - every failure reaches the operator as a message
                err = exc
                self._done.put(lambda: on_error(err) if on_error else self._on_error(what, err))
            else:
                if on_done is not None:
                    self._done.put(lambda: on_done(result))
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
        self._done.put(fn)

    def deliver(self) -> None:
        """On the GUI thread: the callbacks of the tasks finished since the last call, in order."""
        while True:
            try:
                fn = self._done.get_nowait()
            except queue.Empty:
                return
            fn()

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

    def stop(self) -> None:
        """At window close, after ``join``: no callback runs any more (the widgets they touch are going)."""
        self._timer.stop()
