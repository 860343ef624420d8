"""Real-time scheduling for a twin's serving thread, where the OS grants it (Linux: root or CAP_SYS_NICE).

A real device answers from its own microcontroller; a twin answers from this machine's CPU, and on a busy
machine a normal thread can wait for it longer than the vendor client's whole timeout (the ROBOTIS SDK
gives a status packet ~34 ms). So the threads a twin's answers depend on ask for SCHED_FIFO at a low
priority: above every normal thread, below any real-time control loop on the machine. Where the OS says
no, the twins run as before: never required. Only threads that sleep between short bursts may use it.
"""

from __future__ import annotations

import os

BUS_PRIORITY = 10    # the Dynamixel bus twin's serving thread
PLANT_PRIORITY = 9   # the plant clock: the bus thread waits for the GIL whenever it holds it, so it must not
                     # be preempted by normal threads while it does (a GIL priority inversion, measured 270 ms)


def ask_for_realtime(priority: int) -> bool:
    """SCHED_FIFO at ``priority`` for the calling thread; False where the OS refuses (or has no such policy)."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))  # pid 0 on Linux: the calling thread
    except (AttributeError, OSError):
        return False
    return True

