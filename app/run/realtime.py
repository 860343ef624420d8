"""Real-time setup for the control loop: the scheduler of its thread, the GIL hand-off, garbage collection.

    realtime.prepare_process()              # in the process that runs the loop (before its device threads
                                            # start, so they inherit it): GIL switch interval, nice
    rt = realtime.raise_thread_priority()   # on the loop's thread: SCHED_FIFO, else a raised nice, else nothing
    with realtime.no_gc_pauses():           # while the servos are armed: no automatic collection
        ...
        realtime.collect_young_if_due()     # right after a tick: the young generations, in the slack
    realtime.report_stalls()                # in the rig core: a loop held up 1 s has every stack dumped
    stall = realtime.StallReport()          # on the loop's thread; stall.alive(now) each tick

Everything here is used when the OS allows it and never required: a lab PC without the rights runs the loop
at normal priority and says so once in the log.

- **SCHED_FIFO** (``os.sched_setscheduler(0, ...)``: on Linux 0 is the calling *thread*) puts the loop's
  thread ahead of every normal process on its core; it needs root, CAP_SYS_NICE or an ``rtprio`` limit
  (``ulimit -r``, /etc/security/limits.conf). Without it a lower nice value (needs the same rights below 0;
  a thread's nice is its own on Linux) is tried, and otherwise the loop runs as it is. The process's other
  threads get the raised nice too: the loop needs the GIL back from whichever of them holds it.
- **The GIL**: a thread that wants the GIL waits up to ``sys.getswitchinterval()`` (5 ms by default) for
  the holder to let go. Device threads, the IK and an in-process twin are Python too, so at 100 Hz that
  default alone is half a period of jitter; 0.5 ms hands the GIL back to the loop within a tenth of a tick.
- **Sessions.** Where the kernel groups processes by session for scheduling (Linux autogroup, on by default
  on desktop kernels: ``/proc/sys/kernel/sched_autogroup_enabled``), it shares the CPU between sessions first
  and a nice value orders threads only within their session. A core the window starts, and the live model,
  each lead a session of their own (so a terminal's Ctrl-C is not theirs), so their nice counts only
  against their own threads; a twin process stays in its rig's session (it ignores SIGINT instead). Raising
  the core's session too (``/proc/self/autogroup`` at -10) was measured and left out: on the quiet 2-core box
  it halved the window's frame rate during a trial (60 -> 35 fps), and the loop meets its goals without it
  (its thread runs SCHED_FIFO, outside the groups; README).
- **The operator's window** (``raise_window_priority``) runs at nice -5 where allowed: ahead of ordinary load,
  as desktops treat the foreground UI (macOS runs a UI thread at its highest non-real-time class), and behind
  the rig's own threads at -10, so it never takes the loop's CPU. At nice 0 on the 2-core lab PC under
  `with-load 2` the window got a third of a core and drew ~11 frames a second during a trial.
- **Garbage collection**: a gen-2 collection walks every tracked object of the process and holds the GIL
  throughout (100-600 ms with an in-process twin rig's heap on a loaded 2-core box, `uartlab bench loop`;
  the rig core's own 160 000 objects, 70 ms). ``gc.freeze()`` moves what exists into the permanent
  generation, which no collection walks: the rig core freezes its long-lived state once it serves
  (``keep_out_of_collections``), and arming a run freezes what exists then and turns automatic collection
  off; the loop collects the young generations itself right after a tick (a fraction of a millisecond).
  When the run ends automatic collection is back, and what was frozen stays frozen: unfreezing it would
  hand the next automatic full collection the whole heap again, a pause while the servos hold between runs
  that their Bus Watchdog (100 ms at the rig) would see. Objects made during the run are collected as
  usual; only a reference cycle among objects that were alive at arming and die later is never collected.
"""

from __future__ import annotations

import contextlib
import faulthandler
import gc
import logging
import math
import os
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass

log = logging.getLogger(__name__)

# est.: 0.5 ms: a tenth of a 200 Hz tick; shorter costs the other threads throughput in switches.
SWITCH_INTERVAL_S = 0.0005
STDERR_FD = 2
STALL_REPORT_S = 1.0        # est.: a loop held up this long (the twin rig's stale limit): every stack dumped
# est.: above every normal thread, well below the kernel's own (IRQ threads 50, watchdog 99).
FIFO_PRIORITY = 20
NICE_RAISE = -10            # est.: ahead of the desktop and the load, without starving the kernel's workers
WINDOW_NICE = -5            # est.: the operator's window: ahead of ordinary load, behind the rig's threads

_enabled = True
_report_stalls = False      # only where stderr is a log (the rig core), never a user's terminal
_logged: set[str] = set()
_gc_lock = threading.Lock()
_gc_holds = 0               # nested no_gc_pauses() in this process (several engines may run in tests)


@dataclass(frozen=True)
class Scheduling:
    """What the loop's thread got: "SCHED_FIFO", "nice" or "normal", and why not better."""

    policy: str
    detail: str


def enable(on: bool = True) -> None:
    """Turn the whole setup on (the default) or off for this process (`uartlab bench loop` compares both)."""
    global _enabled
    _enabled = on


def prepare_process(switch_interval_s: float = SWITCH_INTERVAL_S, nice: int = NICE_RAISE,
                    who: str = "the control loop") -> None:
    """In the process that runs the loop: a short GIL switch interval (only ever shortened), and a raised nice
    for every thread of the process (if allowed). The loop waits for the GIL from whichever thread holds it,
    so a device thread descheduled by an unrelated busy process while holding it stalls the loop: the whole
    process goes ahead of ordinary load, the loop's own thread (``raise_thread_priority``) ahead of all."""
    if not _enabled:
        return
    if sys.getswitchinterval() > switch_interval_s:
        sys.setswitchinterval(switch_interval_s)
        _log_once("switch", f"GIL switch interval {switch_interval_s * 1e3:g} ms for {who}")
    raised = _renice_threads(nice)
    if raised:
        _log_once("nice", f"nice {nice} for the {raised} threads of {who}'s process")


def raise_window_priority(nice: int = WINDOW_NICE) -> bool:
    """In the operator window's process, before its threads start (they and its children inherit it): every
    thread at ``nice`` if allowed; whether it was. A core the window starts raises its own threads further."""
    if not _enabled:
        return False
    raised = _renice_threads(nice) > 0
    _log_once("window nice", f"the operator window at nice {nice}" if raised else
              f"the operator window at its normal priority (nice {nice} not allowed: needs root or CAP_SYS_NICE)")
    return raised


def _renice_threads(nice: int) -> int:
    """Every thread of this process (Linux: /proc/self/task) at ``nice`` or better; how many were raised."""
    if not sys.platform.startswith("linux"):
        return 0
    raised = 0
    for entry in os.listdir("/proc/self/task"):
        tid = int(entry)
        try:
            if os.getpriority(os.PRIO_PROCESS, tid) > nice:
                os.setpriority(os.PRIO_PROCESS, tid, nice)
                raised += 1
        except OSError:  # not allowed (no CAP_SYS_NICE), or the thread has ended
            continue
    return raised


def raise_thread_priority(fifo_priority: int = FIFO_PRIORITY, nice: int = NICE_RAISE) -> Scheduling:
    """On the calling thread: SCHED_FIFO if allowed, else a raised nice if allowed, else nothing. Logged once."""
    if not _enabled:
        return Scheduling("normal", "real-time setup turned off")
    result = _try_fifo(fifo_priority) or _try_nice(nice) or Scheduling(
        "normal", "no SCHED_FIFO or negative nice allowed (needs root, CAP_SYS_NICE or an rtprio limit)")
    _log_once(f"sched {result.policy}", f"control loop and E-stop scheduling: {result.policy} ({result.detail})")
    return result


def _try_fifo(priority: int) -> Scheduling | None:
    if not hasattr(os, "sched_setscheduler"):
        return None
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
    except (OSError, ValueError):
        return None
    return Scheduling("SCHED_FIFO", f"priority {priority}")


def _try_nice(nice: int) -> Scheduling | None:
    if not hasattr(os, "setpriority") or not sys.platform.startswith("linux"):
        return None  # elsewhere a nice is the whole process's, and the device threads would share it
    tid = threading.get_native_id()
    try:
        before = os.getpriority(os.PRIO_PROCESS, tid)
        if before <= nice:
            return Scheduling("nice", f"already {before}")
        os.setpriority(os.PRIO_PROCESS, tid, nice)  # on Linux PRIO_PROCESS with a thread id is that thread
    except OSError:
        return None
    return Scheduling("nice", f"{before} -> {nice}")


@contextlib.contextmanager
def no_gc_pauses() -> Iterator[None]:
    """Automatic garbage collection off for the block: the young generations collected and everything that
    exists frozen first (no full collection: that is the 100-250 ms pause this avoids); after it, automatic
    collection back on, and what was frozen left frozen (see the module's notes). Nested and concurrent
    holders: collection resumes when the last leaves."""
    global _gc_holds
    if not _enabled:
        yield
        return
    with _gc_lock:
        if _gc_holds == 0:
            gc.collect(1)
            gc.freeze()
            gc.disable()
        _gc_holds += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_holds -= 1
            if _gc_holds == 0:
                gc.enable()


def keep_out_of_collections() -> None:
    """In a long-running process once its long-lived state exists (the rig core, serving): everything alive
    frozen out of every later collection's reach, without collecting first (that is the pause avoided)."""
    if _enabled:
        gc.freeze()


def report_stalls(on: bool = True) -> None:
    """Let this process's loops dump every thread's stack on a stall (``StallReport``): in the rig core, whose
    stderr is its log; not where stderr is a user's terminal (an in-process replay)."""
    global _report_stalls
    _report_stalls = on


class StallReport:
    """Every thread's stack written to stderr when the loop has not called ``alive`` for ``after_s``: by
    faulthandler's own C thread, which needs no GIL, so the dump shows a thread that holds the GIL and stops
    the loop with it (a loop stalled by the GIL cannot report it itself). The dump is headed "Timeout
    (0:00:01)!" (faulthandler's words). Each arming starts a thread, so it is re-armed at most four times per
    ``after_s``: a stall is reported 0.75-1 x ``after_s`` into it. One timer per process: the last armed.
    Off unless ``report_stalls()`` was called in this process."""

    def __init__(self, after_s: float = STALL_REPORT_S):
        self.after_s = after_s
        self._armed_s = -math.inf
        # The process's stderr by descriptor: a sys.stderr object swapped for another (a test's capture) could
        # be closed, and its number reused by a session file, while the timer still holds it.
        self._fd: int | None = None
        if _report_stalls:
            with contextlib.suppress(OSError):   # no stderr at all (a detached process): nothing to report to
                os.fstat(STDERR_FD)
                self._fd = STDERR_FD

    def alive(self, now_s: float) -> None:
        if self._fd is not None and now_s - self._armed_s >= self.after_s / 4:
            faulthandler.dump_traceback_later(self.after_s, file=self._fd)
            self._armed_s = now_s

    def close(self) -> None:
        if self._fd is not None and self._armed_s > -math.inf:
            faulthandler.cancel_dump_traceback_later()


def collect_young_if_due() -> None:
    """With automatic collection held off: the young generations when the interpreter would have collected
    them (its own thresholds), called by the loop right after a tick so the pause lands in the tick's slack.
    The old generation waits for the end of the run."""
    if gc.isenabled():
        return
    young, middle, _ = gc.get_count()
    threshold0, threshold1, _ = gc.get_threshold()
    if young >= threshold0:
        gc.collect(1 if middle >= threshold1 else 0)


def _log_once(key: str, message: str) -> None:
    if key not in _logged:
        _logged.add(key)
        log.info(message)
