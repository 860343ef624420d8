"""app/run/realtime.py: the loop's real-time setup, used when the OS allows and never required."""

from __future__ import annotations

import gc
import os
import sys
import threading
import weakref

import pytest
from uartlab.app.run import realtime


def test_the_gil_switch_interval_is_only_ever_shortened():
    before = sys.getswitchinterval()
    try:
        sys.setswitchinterval(0.005)
        realtime.prepare_process()
        assert sys.getswitchinterval() == pytest.approx(realtime.SWITCH_INTERVAL_S)
        sys.setswitchinterval(0.0001)  # someone asked for shorter still: kept
        realtime.prepare_process()
        assert sys.getswitchinterval() == pytest.approx(0.0001)
    finally:
        sys.setswitchinterval(before)


def test_the_loop_thread_gets_what_the_os_allows_and_says_which():
    got: list[realtime.Scheduling] = []
    policy: list[int] = []

    def loop_thread() -> None:
        got.append(realtime.raise_thread_priority())
        if hasattr(os, "sched_getscheduler"):
            policy.append(os.sched_getscheduler(0))

    t = threading.Thread(target=loop_thread)
    t.start()
    t.join()
    s = got[0]
    assert s.policy in ("SCHED_FIFO", "nice", "normal") and s.detail
    if s.policy == "SCHED_FIFO":   # the thread itself, not the process, is real-time
        assert policy == [os.SCHED_FIFO] and os.sched_getscheduler(0) != os.SCHED_FIFO
    if policy and policy[0] != os.SCHED_FIFO:
        assert s.policy != "SCHED_FIFO"


class _Node:
    pass


def test_no_automatic_collection_while_held_and_back_after_nested_holders():
    assert gc.isenabled()
    alive_at_arming = _Node()
    try:
        with realtime.no_gc_pauses():
            assert not gc.isenabled() and gc.get_freeze_count() > 0
            with realtime.no_gc_pauses():
                assert not gc.isenabled()
            assert not gc.isenabled()  # the outer holder still holds
            made_in_the_run = _Node()
            made_in_the_run.me = made_in_the_run  # a cycle: only the collector frees it
            dies = weakref.ref(made_in_the_run)
            del made_in_the_run
        assert gc.isenabled()
        # What existed at arming stays out of every later full collection (no heap-wide pause between runs,
        # while the servos hold); what the run made and dropped is collected as usual.
        assert not any(o is alive_at_arming for o in gc.get_objects())   # the collectors' lists: not there
        gc.collect()
        assert dies() is None
    finally:
        gc.unfreeze()   # this test process as it was


def test_young_generations_are_collected_in_the_slack_when_due():
    with realtime.no_gc_pauses():
        threshold0 = gc.get_threshold()[0]
        junk = [[] for _ in range(2 * threshold0)]  # container allocations: the young count grows
        assert gc.get_count()[0] >= threshold0
        realtime.collect_young_if_due()
        assert gc.get_count()[0] < threshold0
        del junk


def test_turned_off_it_changes_nothing():
    realtime.enable(False)
    try:
        with realtime.no_gc_pauses():
            assert gc.isenabled()
        assert realtime.raise_thread_priority().policy == "normal"
    finally:
        realtime.enable(True)


STALLED_LOOP = """
import re, threading, time
from uartlab.app.run import realtime

def hold_the_gil():   # one C call that never lets go of the GIL (backtracking: ~2 s here): the loop cannot run
    re.match(r"(a+)+$", "a" * 26 + "b")

realtime.report_stalls()   # as the rig core does
stall = realtime.StallReport(after_s=0.4)
holder = threading.Thread(target=hold_the_gil)
started = time.monotonic()
while time.monotonic() - started < 0.5:   # the loop, ticking
    stall.alive(time.monotonic())
    time.sleep(0.01)
    if not holder.is_alive() and time.monotonic() - started > 0.2:
        holder.start()
holder.join()
stall.close()
print("loop done")
"""


def test_a_loop_stopped_by_a_thread_holding_the_gil_gets_every_threads_stack_written():
    """The loop cannot report its own stall (it needs the GIL to run): faulthandler's C thread writes the
    stacks, and the one holding the GIL is among them."""
    import subprocess

    proc = subprocess.run([sys.executable, "-c", STALLED_LOOP], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "loop done" in proc.stdout, proc.stderr
    assert "Timeout (0:00:00.400000)!" in proc.stderr
    assert "in hold_the_gil" in proc.stderr, proc.stderr


def test_a_loop_that_keeps_ticking_writes_nothing():
    import subprocess

    ticking = "\n".join(line for line in STALLED_LOOP.splitlines() if "holder" not in line)
    proc = subprocess.run([sys.executable, "-c", ticking], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "loop done" in proc.stdout and proc.stderr == "", proc.stderr


def test_stalls_are_reported_only_where_asked_for():
    """Off by default: an engine in a command's own process (a replay) writes nothing on the user's terminal."""
    import subprocess

    silent = STALLED_LOOP.replace("realtime.report_stalls()", "pass")
    proc = subprocess.run([sys.executable, "-c", silent], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "loop done" in proc.stdout and proc.stderr == "", proc.stderr
