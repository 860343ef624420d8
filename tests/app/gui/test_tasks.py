"""The window's worker threads (app/gui/tasks.py): callbacks come back on the GUI thread, and a worker that
finishes after its window is gone touches no Qt object (it used to emit a signal into a deleted QObject from
its own thread)."""

from __future__ import annotations

import threading

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QObject, QThread  # noqa: E402
from uartlab.app.gui.tasks import Tasks  # noqa: E402


@pytest.fixture
def thread_errors(monkeypatch):
    """Exceptions that escape any thread during the test."""
    seen: list[BaseException] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: seen.append(args.exc_value))
    return seen


def test_results_and_errors_come_back_on_the_gui_thread(qtbot):
    tasks = Tasks(on_error=lambda what, exc: got.append((what, str(exc), QThread.currentThread())))
    got: list = []
    tasks.run("sum", lambda: sum(range(10)), lambda r: got.append((r, QThread.currentThread())))
    tasks.run("fail", lambda: 1 / 0)
    qtbot.waitUntil(lambda: len(got) == 2, timeout=5000)
    gui = QThread.currentThread()
    assert sorted(map(str, got)) == sorted(map(str, [(45, gui), ("fail", "division by zero", gui)]))


def test_a_task_that_ends_after_its_window_is_gone_touches_no_qt_object(qtbot, thread_errors):
    window = QObject()
    tasks = Tasks(on_error=lambda what, exc: None, parent=window)
    release, called = threading.Event(), []
    worker = tasks.run("slow answer", release.wait, lambda _: called.append("done"))
    tasks.stop()
    window.deleteLater()                  # the window closed while the core had not answered yet
    qtbot.waitUntil(lambda: not _alive(tasks), timeout=5000)
    release.set()                         # the answer comes late
    worker.join(5)
    qtbot.wait(50)
    assert not worker.is_alive() and called == [] and thread_errors == []


def _alive(obj: QObject) -> bool:
    from shiboken6 import isValid

    return isValid(obj)
