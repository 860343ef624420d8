"""Processes: the one way a parent ends a child process it started (a twin, the rig core, the live model, a
bench's drawing window): ask, wait, then insist, and always reap; and how much memory this one holds.

    end_process(child, timeout_s=5.0)   # SIGTERM; SIGKILL if it is still there after timeout_s; waited for
    exit_at_once(0)                     # a service process whose own stop is done: no interpreter teardown
    how_it_ended(-9)                    # "was killed by SIGKILL": a child's exit status, as said to a person
    is_alive(pid)                       # any process of this machine, ours or not
    rss_mb()                            # resident set size of this process now, MB

SIGTERM first because every uartlab process turns it into an orderly stop (torque off or hold, files
closed); SIGKILL only for one that hangs, so no child outlives its parent as a zombie or an orphan.
"""

from __future__ import annotations

import contextlib
import logging
import os
import resource
import signal
import subprocess
import sys
from typing import NoReturn


def end_process(child: subprocess.Popen, timeout_s: float, *, wait_first_s: float = 0.0) -> int:
    """End ``child`` and return its exit status. ``wait_first_s``: time to leave it to exit by itself (after
    it was told to by other means) before SIGTERM. Safe on a child that has already exited."""
    for ask, wait_s in ((None, wait_first_s), (signal.SIGTERM, timeout_s)):
        if child.poll() is not None:
            return child.returncode
        if ask is not None:
            child.send_signal(ask)
        try:
            return child.wait(wait_s)
        except subprocess.TimeoutExpired:
            pass
    child.kill()
    return child.wait()


HOW_IT_ENDED_PATTERN = r"was killed by (?:SIG\w+|signal \d+)|exited with status -?\d+"   # what how_it_ended says


def how_it_ended(returncode: int) -> str:
    """A child's exit status as said to a person: "was killed by SIGKILL", "exited with status 1"."""
    if returncode < 0:
        try:
            return f"was killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"was killed by signal {-returncode}"
    return f"exited with status {returncode}"


def is_alive(pid: int) -> bool:
    """Whether process ``pid`` exists on this machine (another user's counts; a zombie too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def exit_at_once(code: int) -> NoReturn:
    """End a service process (the rig core, a twin, the live model) whose own stop is done - devices closed,
    files closed - without the interpreter's teardown: for a process holding compiled model kernels, freeing
    numba's LLVM modules alone takes 0.3 s and closes nothing of ours, and the parent waits for it. The logs
    and standard streams are flushed first. (multiprocessing's children end the same way.)"""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):   # a closed or broken pipe: nothing more can be said
            stream.flush()
    os._exit(code)


def rss_mb() -> float:
    """Resident set size of this process now (Linux /proc; elsewhere the peak from getrusage)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3
