"""`uartlab bench gui --live`: the frames per second the real window draws while a real trial runs.

A rig core on the twin rig (`uartlab rig serve`, a child process on a private address; or the core at
``--core``) runs a real suite trial with the live model; the operator window, in this process, attaches to
it exactly as `uartlab gui` does (the Rig panel's Connect), chooses the suite and presses Start. Once the
trial moves the tendons, the window runs as it does for an operator (its own frame timer, Qt's event
loop) for ``--seconds``, and the paint events of the plots' viewport are counted: what the operator would
see as frames. Offscreen, the raster engine really draws every pixel.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import tempfile
import time
from pathlib import Path

GOAL_FPS = 30.0           # issue goal on the 2-core lab PC: a live view, not a slideshow
ATTACH_TIMEOUT_S = 90.0   # the twin rig's start in the core (2-10 s; more on a loaded machine)
ACTIVE_TIMEOUT_S = 60.0   # pre-flight, tare and pretension before the first pull
PHASE_SAMPLE_MS = 20      # how often the run's phase is looked at while measuring (for the report only)


def _wait(app, until, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not until():
        if time.monotonic() > deadline:
            raise TimeoutError(f"bench gui --live: {what} within {timeout_s:.0f} s")
        app.processEvents()
        time.sleep(0.005)


def measure_live(app, window, suite: str, trial: str | None, seconds: float) -> dict:
    """Attach, start the trial, count frames while it moves; the run's phases seen on the way."""
    from PySide6.QtCore import QEventLoop, Qt, QTimer
    from uartlab.app.gui.bench import PaintCounter
    from uartlab.protocols.runner import RUN_OVER, Phase

    ops = window.ops
    window.rig_panel.config_edit.setText("")
    window.rig_panel.connect_button.click()
    _wait(app, lambda: ops.connected or bool(window.errors), ATTACH_TIMEOUT_S, "the rig core answering")
    if window.errors:
        raise RuntimeError(window.errors[-1])
    ops.choose_suite(suite)
    panel = window.protocol_panel
    if trial is not None:
        names = [t.name for t in panel.suite.trials]
        panel.table.selectRow(names.index(trial))
    panel.repeats_spin.setValue(1)
    _wait(app, lambda: ops.status is not None, 10.0, "the core's first status")
    panel.buttons["start"].click()
    moving = (Phase.PRETENSION, Phase.ACTUATE, Phase.SETTLE, Phase.RECORD, Phase.RETURN)
    _wait(app, lambda: ops.phase in moving or ops.phase in RUN_OVER or bool(window.errors), ACTIVE_TIMEOUT_S,
          "the trial moving")
    if ops.phase in RUN_OVER or window.errors:
        why = window.errors[-1] if window.errors else ops.run_status.fault_reason
        raise RuntimeError(f"the run ended before it could be measured: {why}")
    counter = PaintCounter(window.plots.layout_widget.viewport())
    phases: list[str] = []
    frames0, paints0, drops0 = window.frames, counter.count, _drops(window)
    messages0 = dict(ops.core.hub.published)
    def note_phase() -> None:
        if ops.phase is not None and (not phases or phases[-1] != ops.phase):
            phases.append(str(ops.phase))

    # Qt's own event loop, as `uartlab gui` runs it: the window's frame and status timers do the work (a
    # polling loop here would add its own wake-ups to the GUI thread's CPU).
    loop = QEventLoop()
    phase_timer = QTimer()
    phase_timer.timeout.connect(note_phase)
    phase_timer.start(PHASE_SAMPLE_MS)
    end = QTimer()
    end.setSingleShot(True)
    end.setTimerType(Qt.TimerType.PreciseTimer)
    end.timeout.connect(loop.quit)
    end.start(round(1e3 * seconds))
    t0, cpu0, proc0 = time.monotonic(), time.thread_time(), time.process_time()
    loop.exec()
    wall = time.monotonic() - t0
    phase_timer.stop()
    note_phase()
    gui_cpu_s, process_cpu_s = time.thread_time() - cpu0, time.process_time() - proc0
    paints = counter.count - paints0
    messages = {stream: (n - messages0.get(stream, 0)) / wall for stream, n in ops.core.hub.published.items()}
    return {"fps": paints / wall, "frames_drawn": window.frames - frames0, "paints": paints, "seconds": wall,
            "phases": phases, "gui_queue_drops": _drops(window) - drops0,
            "points_per_frame": window.plots.refresh(window.data, window.display_now()),
            "run_over_during_measurement": ops.phase in RUN_OVER,
            "fault_reason": ops.run_status.fault_reason if ops.phase is Phase.FAULT else None,
            # CPU time, which a busy machine does not inflate: what a frame costs the GUI thread, and the
            # window's process (the mirror thread, the status poller) as a share of one core.
            "gui_thread_cpu_ms_per_frame": 1e3 * gui_cpu_s / max(paints, 1),
            "window_process_cpu_share": process_cpu_s / wall,
            # what the window's data thread receives and decodes: its cost is per message, not per byte
            "messages_per_s": {stream: round(rate, 1) for stream, rate in sorted(messages.items()) if rate > 0}}


def _drops(window) -> int:
    return sum(window.sub.dropped.values()) if window.sub is not None else 0


def main(args: argparse.Namespace) -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from uartlab.app.gui.app import close_for_good, qt_app
    from uartlab.app.gui.qt_platform import check

    check()
    from uartlab.app.run.realtime import raise_window_priority

    window_raised = not args.normal_priority and raise_window_priority()   # as `uartlab gui` does
    app = qt_app()
    from uartlab.app.gui.core_link import SHUTDOWN_TIMEOUT_S, STOP_TIMEOUT_S
    from uartlab.app.gui.main_window import MainWindow
    from uartlab.app.gui.settings import scratch_settings
    from uartlab.app.serve.endpoints import endpoints_for
    from uartlab.processes import end_process

    with tempfile.TemporaryDirectory(prefix="uartlab-bench-gui-") as tmp, scratch_settings() as settings:
        address = args.core or f"ipc://{Path(tmp) / 'core'}"   # a private core unless one is named
        endpoints_for(address)   # an address the OS cannot take ($TMPDIR too long): said in one line now
        window = MainWindow(settings, core_address=address)
        window.recording_panel.folder_edit.setText(str(Path(tmp) / "recordings"))
        window.resize(1600, 1000)
        window.show()
        try:
            result = measure_live(app, window, args.suite, args.trial, args.seconds)
        finally:
            core = window.ops.core
            private_core = core.process if core is not None and core.started_here else None
            if core is not None and window.ops.phase is not None:
                with contextlib.suppress(Exception):   # the core shuts down (and aborts) anyway
                    core.request("abort", why="bench over")
            close_for_good(window)
            if private_core is not None:   # gone, its twin with it, before its folder is removed
                end_process(private_core, STOP_TIMEOUT_S, wait_first_s=SHUTDOWN_TIMEOUT_S)
    result.update(goal_fps=GOAL_FPS, fps_ok=result["fps"] >= GOAL_FPS, suite=args.suite, trial=args.trial,
                  cpus=os.cpu_count(), window_nice=os.getpriority(os.PRIO_PROCESS, 0), window_raised=window_raised)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"the operator window attached to a rig core on the twin rig, during a real {args.suite} trial "
              f"with the live model ({result['cpus']} CPUs), 1600x1000:")
        print(f"  {result['fps']:.1f} fps drawn over {result['seconds']:.1f} s ({result['frames_drawn']} frames, "
              f"phases {' > '.join(result['phases'])}, {result['points_per_frame']} points per frame, "
              f"GUI queue drops {result['gui_queue_drops']})  goal >= {GOAL_FPS:g}: "
              f"{'ok' if result['fps_ok'] else 'MISSED'}")
        if result["fault_reason"]:
            print(f"  the trial faulted while measured: {result['fault_reason']}")
        print(f"  GUI thread CPU {result['gui_thread_cpu_ms_per_frame']:.1f} ms per frame drawn; the window's "
              f"process used {100 * result['window_process_cpu_share']:.0f} % of one core (load average "
              f"{os.getloadavg()[0]:.1f}; the window at nice {result['window_nice']})")
        rates = result["messages_per_s"]
        print(f"  messages from the core: {sum(rates.values()):.0f}/s ("
              + ", ".join(f"{stream} {rate:g}" for stream, rate in rates.items()) + ")")
    return 0 if result["fps_ok"] else 1
