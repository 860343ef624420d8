"""The notification area says each problem once."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from uartlab.app.gui.app import qt_app  # noqa: E402
from uartlab.app.gui.notifications import NotificationArea  # noqa: E402

GONE = "the twin rig's process was killed by SIGKILL: its servos, DAQ and motion capture are gone"


def test_the_same_problem_from_two_streams_is_one_notice_naming_both(qtbot):
    qt_app()
    area = NotificationArea()
    qtbot.addWidget(area)
    area.notify("error", "fault in actuators", GONE, "Disconnect and Connect to start a new twin rig")
    area.notify("error", "fault in daq", GONE, "Disconnect and Connect to start a new twin rig")
    area.notify("error", "fault in daq", GONE, "Disconnect and Connect to start a new twin rig")
    assert [n.what for n in area.notices] == ["fault in actuators, daq"]
    assert len(area.visible_texts()) == 1 and "fault in actuators, daq: the twin rig" in area.visible_texts()[0]
    area.notify("error", "recording", "the disk is full", "free some space")   # another problem: its own
    assert [n.what for n in area.notices] == ["fault in actuators, daq", "recording"]
