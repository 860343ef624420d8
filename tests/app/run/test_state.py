"""What the control loop sees (app/run/state.py): a fault said on the hub is one; a replayed one is history."""

from __future__ import annotations

from uartlab.app.run.state import Latest
from uartlab.streams import Event, EventKind


def test_a_replayed_fault_stops_no_run():
    latest = Latest(settle_window_s=0.25, has_nano17=False)
    latest.update(Event(1.0, EventKind.FAULT, "daq", "the DAQ stopped answering", replayed=True), None)
    assert latest.faults == []
    latest.update(Event(1.0, EventKind.FAULT, "daq", "the DAQ stopped answering"), None)
    assert latest.faults == ["daq: the DAQ stopped answering"]
