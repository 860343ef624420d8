"""What the operator's buttons do: the rig core, the recording, the protocol run, the replay and the E-stop.

The rig lives in the rig core (app/serve/: `uartlab rig serve`), not in the window: "Connect" attaches to
the core at the window's address (``--core``), or starts one on the rig.toml of the Rig panel; every rig
operation (recording, a suite run, pause/resume/abort/reset, tare, the operator's moves) is a request to
it, sent from a worker thread (``window.tasks``) whose answer comes back on the GUI thread. What the panels
show (health, the recording, the run) is the core's status, polled off the GUI thread (``CoreLink``); the
plots are fed from the client's mirror of the core's streams. The E-stop goes to the core's own E-stop
socket from a thread that never waits on the window, and latches here too.

Closing the window never stops a trial: a core that was running before the window goes on; one the window
started is asked to shut down once its run is over, so the trial completes and the file is closed.

Replay of a session file stays in this process (app/record/player.py ``ReplayRig``).
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections import deque
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING

from uartlab.app.gui.wording import Said, drops_sentence, for_operator, steady_sentence
from uartlab.app.record.integrity import DAMAGED_BYTES
from uartlab.app.record.logs import IN_WORDS, event_level
from uartlab.app.serve.estop_server import where_recorded
from uartlab.app.serve.runs import run_busy
from uartlab.protocols.runner import RUN_OVER, Phase, TrialResult
from uartlab.streams import Event, EventKind

if TYPE_CHECKING:
    from uartlab.app.gui.core_link import CoreLink

PACE_WINDOW_S = 3.0   # wall seconds over which a replay's speed, as the plots advance, is measured


class Operations:
    def __init__(self, window):
        self.w = window
        self.core: CoreLink | None = None
        self.status: dict | None = None       # the core's newest status (``CoreLink.status``), on the GUI thread
        self._connected_text = ""            # the rig panel's line while the core answers
        self.backends: dict[str, str] = {}
        self.ceilings = None                   # the rig's [limits] (rig.toml), which a chosen suite must keep
        self.suite_label = ""
        self.starting = False                  # a run start request is on its way
        self.replay = None                     # ReplayRig
        self.replay_path: str | None = None
        self._replay_logged_s = -math.inf      # replayed events up to this recorded time are in the log
        self._replay_damage_said = 0           # the replay's damaged places already shown
        self._replay_pace: deque[tuple[float, float]] = deque()  # (wall, newest time plotted) while playing
        self.moving: str | None = None         # an operator move on the core's engine ("release tendons" ...)
        self.estop_latched = False
        self.estop_reset_at_s = -math.inf      # an "estop" event older than the last reset does not latch again
        self.estop_reason = ""
        self.trip_reason: str | None = None
        self.core_silent_s = 0.0                # how long the core has not answered (its last status that old)
        self.core_gone: str | None = None       # how the rig core this window started ended, once it has
        self._gone_said: object = None          # the core link whose end was said (once per link)
        self._recording_was: str | None = None  # the file the core recorded at the last poll
        self.reset_pending = False              # the operator acknowledged a run the core is still closing
        self.acknowledged_run: object = None    # the core's run id the operator acknowledged
        self.live_source = "live rig core"      # what the status bar calls the core's streams (twin or real)
        self.recording_request: str | None = None  # "starting" | "stopping" while the core is asked
        self._move_sent_s = math.inf           # when the core took the operator's move (its status says when over)
        p, r, rec, rp = window.protocol_panel, window.rig_panel, window.recording_panel, window.replay_panel
        r.connect_requested.connect(self.connect_rig)
        r.disconnect_requested.connect(self.disconnect_rig)
        r.tare_button.clicked.connect(lambda: self.ask("tare", "tare"))
        rec.start_requested.connect(self.start_recording)
        rec.stop_requested.connect(self.stop_recording)
        p.suite_chosen.connect(self.choose_suite)
        p.start_requested.connect(self.start_run)
        p.pause_requested.connect(lambda: self.ask("pause", "pause"))
        p.resume_requested.connect(self.resume)
        p.abort_requested.connect(lambda: self.ask("abort", "abort", why="operator abort"))
        p.reset_requested.connect(self.reset_run)
        p.release_requested.connect(lambda: self.operator_move("release tendons"))
        p.return_requested.connect(lambda: self.operator_move("return to start"))
        p.jog_requested.connect(lambda tendon, step_m: self.operator_move("jog", tendon, step_m))
        rp.open_requested.connect(self.open_replay)
        rp.play_requested.connect(self.play)
        rp.pause_requested.connect(self.pause)
        rp.seek_requested.connect(self.seek)
        rp.speed_changed.connect(self.set_speed)
        rp.live_requested.connect(self.back_to_live)
        rp.loop_box.toggled.connect(lambda on: setattr(self.replay, "loop", on) if self.replay else None)

    # ------------------------------------------------------------ what the core says
    @property
    def connected(self) -> bool:
        return self.core is not None

    @property
    def run_status(self):
        """The core's run as the protocol panel reads an ExperimentStatus (phase a Phase), or None when the
        core has no run. A run still assembling is SAFE; one that failed before it had a phase is FAULT."""
        run = (self.status or {}).get("run") or {}
        if run.get("state", "idle") == "idle":
            return None
        error = (run.get("error") or {}).get("text")
        phase = Phase(run["phase"]) if run.get("phase") else (Phase.FAULT if run.get("state") == "over" else Phase.SAFE)
        return SimpleNamespace(phase=phase, trial_index=run.get("trial_index", 0), n_trials=run.get("n_trials", 0),
                               trial_name=run.get("trial_name", ""), repeat=run.get("repeat", 0),
                               progress=run.get("progress", 0.0), message=run.get("message", ""),
                               fault_reason=run.get("fault_reason") or error,
                               operator_needed=run.get("operator_needed"), state=run.get("state"),
                               repeats=run.get("repeats", {}), id=run.get("id"),
                               submitted_s=run.get("submitted_s", 0.0),
                               results=[TrialResult(**r) for r in run.get("results", [])])

    @property
    def on_twin(self) -> bool:
        """The window is attached to a core whose every device is a twin (messages say so)."""
        return bool(self.backends) and all(b == "twin" for b in self.backends.values())

    def for_operator(self, text: str) -> Said | None:
        """A core's problem sentence in the operator's words, for this window's rig and core (app/gui/wording.py)."""
        return for_operator(text, self.on_twin, own_core=self.core is None or self.core.started_here)

    @property
    def run_busy(self) -> bool:
        """The core's run is starting, running or closing (its file, the live model): the servos are its."""
        return run_busy(self.status)

    @property
    def phase(self) -> Phase | None:
        status = self.run_status
        return None if status is None else status.phase

    @property
    def recording(self) -> dict | None:
        """The core's open session file (the operator's recording or the run's own): path, elapsed_s,
        samples (per stream, flushed), drops ({who: {stream: n}}); None when it records nothing."""
        return (self.status or {}).get("session") or None

    @property
    def has_start(self) -> bool:
        """A run has started on this core (where "return to start" goes)."""
        return bool((self.status or {}).get("has_start"))

    def ask(self, what: str, op: str, then=None, failed=None, /, **args) -> None:
        """Request ``op`` of the core on a worker thread; ``then(reply)`` on the GUI thread."""
        core = self.core
        if core is None:
            return

        def done(reply) -> None:
            self.refresh_now()
            if then is not None:
                then(reply)

        def refused(exc) -> None:
            self.refresh_now()
            (failed or (lambda e: self.w.report_error(what, e)))(exc)

        self.w.tasks.run(what, lambda: core.request(op, **args), done, refused)

    def refresh_now(self) -> None:
        """Take the poller's newest status now (after a request, so the buttons follow it at once)."""
        if self.core is not None:
            self.status = self.core.status() or self.status
        self._refresh_buttons()

    # ------------------------------------------------------------ the core
    def connect_rig(self, config_path: str) -> None:
        """Attach to the core at the window's address, or start one on ``config_path`` ("" the twin rig)."""
        from uartlab.app.gui.core_link import CoreLink

        if self.core is not None:
            return
        self.w.rig_panel.set_state("connecting", f"attaching to the rig core ({config_path or 'the twin rig'})…")
        address, log_path = self.w.core_address, self.w.core_log_path()

        def work():
            link = CoreLink.attach_or_start(address, config_path, streams=self.w.data.streams, log_path=log_path,
                                            check=lambda: _read_rig_toml(config_path))
            try:
                return link, _rig_config(link.hello)
            except BaseException:
                link.close(shutdown=link.started_here)
                raise

        def done(result) -> None:
            link, config = result
            self.core, self.ceilings = link, config.ceilings
            self.backends = {"actuators": config.actuators.backend, "daq": config.daq.backend,
                             "mocap": config.mocap.backend}
            kind = "twin" if config.uses_twin else "real"
            self.live_source = f"live rig core ({kind})"
            where = "started here" if link.started_here else "already running"
            self._connected_text = f"connected ({kind}, core {where}): {config.source}"
            self.w.rig_panel.set_state("connected", self._connected_text)
            self.w.settings.setValue("rig/config", config_path)
            self.w.log_line(f"attached to the rig core at {link.address} ({where}, pid {link.hello.get('pid')}); "
                            f"rig from {config.source}")
            if self.replay is None:
                self.w.attach(link.hub, self.live_source, link.viewer)
            self.refresh_now()

        def failed(exc) -> None:
            self.w.rig_panel.set_state("disconnected", "connection failed")
            self.w.report_error("connect", exc)

        self.w.tasks.run("connect", work, done, failed)

    def disconnect_rig(self) -> None:
        """Let go of the core: one this window started shuts down (after its run), one already running stays."""
        core, self.core, self.status = self.core, None, None
        if core is None:
            return
        self.w.rig_panel.set_state("disconnecting")
        if self.replay is None:
            self.w.attach(None, "none")

        def done(_):
            self.w.rig_panel.set_state("disconnected")
            self.w.log_line("detached from the rig core" + (" (shut down)" if core.started_here else ""))
            self._refresh_buttons()

        self.w.tasks.run("disconnect", core.close, done)
        self._refresh_buttons()

    # ------------------------------------------------------------ recording
    def start_recording(self) -> None:
        panel = self.w.recording_panel
        if self.core is None or self.recording is not None:
            return
        folder = str(panel.folder.resolve())
        self.recording_request = "starting"

        def done(reply) -> None:
            self.recording_request = None
            self.w.log_line(f"recording {reply.get('path')}")
            self.w.settings.setValue("recording/folder", str(panel.folder))

        def failed(exc) -> None:
            self.recording_request = None
            self.w.report_error("recording", exc)

        self.ask("start recording", "record_start", done, failed, folder=folder, operator=panel.operator,
                 notes=panel.notes)
        self._refresh_buttons()

    def stop_recording(self) -> None:
        if self.core is None or self.recording is None:
            return
        self.recording_request = "stopping"

        def failed(exc) -> None:
            self.recording_request = None
            self.w.report_error("recording", exc)

        self.ask("stop recording", "record_stop", self._recording_closed, failed)
        self._refresh_buttons()

    def _recording_closed(self, summary: dict) -> None:
        """What the window says once a session file is closed, from the core's summary."""
        self.recording_request, self._recording_was = None, None
        if not summary or "path" not in summary:
            return
        lost = int(summary.get("dropped", 0))
        self.w.log_line(f"recording closed: {summary['path']} ({'nothing dropped' if not lost else f'{lost} dropped'})")

    # ------------------------------------------------------------ protocol run
    def choose_suite(self, name_or_path: str, quiet: bool = False) -> None:
        from uartlab.protocols.suite import resolve_suite

        try:
            # Against this rig's ceilings (rig.toml [limits]) when one is connected: refused now, not at Start.
            suite = resolve_suite(name_or_path, self.ceilings)
        except Exception as exc:  # noqa: BLE001 - a bad suite file is a message (file:line: key), not a crash
            if not quiet:
                self.w.report_error("suite", exc)
            return
        self.suite_label = name_or_path
        self.w.protocol_panel.show_suite(suite, name_or_path)
        self.w.settings.setValue("protocol/suite", name_or_path)
        self._refresh_buttons()

    def start_run(self) -> None:
        """Ask the core to run the chosen suite (its pre-flight waits for every stream, up to seconds)."""
        panel = self.w.protocol_panel
        if panel.suite is None or self.core is None or self.phase is not None or self.starting or self.estop_latched:
            return
        if self.replay is not None:  # a run is watched live: never behind an old recording's curves
            self.w.log_line("replay closed: the run starts, the view shows the live rig")
            self.back_to_live()
        label = self.suite_label
        # The core reads the suite from its text: a file chosen here need not be where the core runs.
        suite = {"suite": Path(label).name, "suite_text": Path(label).read_text(encoding="utf-8")} \
            if label.endswith(".toml") else {"suite": label}
        rec = self.w.recording_panel
        self.starting = True
        panel.buttons["start"].setEnabled(False)

        def done(reply) -> None:
            self.starting = False
            self.w.log_line(f"protocol {panel.suite.name if panel.suite else label} submitted to the core "
                            f"(run {reply.get('id')})")

        def failed(exc) -> None:
            self.starting = False
            self.w.report_error("protocol", exc)

        self.ask("start protocol", "run", done, failed, **suite, trials=panel.selected_trials() or None,
                 repeats=panel.repeats() or None, folder=str(rec.folder.resolve()) if self.recording is None else None,
                 operator=rec.operator, notes=rec.notes)

    def resume(self) -> None:
        """Resume a paused run, or confirm the set-up a run waits for (a new pose or surface)."""
        run = self.run_status
        if run is not None and run.operator_needed:
            self.w.log_line(f"set-up confirmed for {run.operator_needed['trial']}")
            self.ask("confirm", "confirm")
        else:
            self.ask("resume", "resume")

    def reset_run(self) -> None:
        """Operator acknowledgement after DONE/ABORTED/FAULT: the next run may start. A run the core is still
        closing (its file, the live model) is acknowledged once it is over."""
        self.trip_reason = None
        self.acknowledged_run = ((self.status or {}).get("run") or {}).get("id")   # its fault is not shown again
        if self.run_busy:
            self.reset_pending = True
        else:
            self.reset_pending = False
            self.ask("close run", "reset")
        self.show_safety()

    # ------------------------------------------------------------ the operator's own moves
    def operator_move(self, what: str, *args) -> None:
        """"release tendons", "return to start" or "jog" (tendon, step m), on the core's engine."""
        if self.core is None or self.estop_latched or self.moving or self.run_busy:
            return
        self.moving = what
        self.w.log_line(f"{what}…")
        self._refresh_buttons()
        kwargs = {"tendon": args[0], "step_m": args[1]} if what == "jog" else {}

        def failed(exc) -> None:
            self.moving = None
            self.w.report_error(what, exc)
            self._refresh_buttons()

        def taken(_) -> None:
            self._move_sent_s = time.monotonic()

        # The core moves on its own worker and answers at once; its status says when the move is over.
        self._move_sent_s = math.inf
        self.ask(what, "move", taken, failed, what=what, **kwargs)

    def _move_over(self, status: dict) -> None:
        """The core's move has ended: its sentence (what moved, or why it failed) in the log."""
        what, self.moving = self.moving, None
        text = status.get("last_move") or f"{what}: done"
        if " failed: " in text:
            self.w.report_error(str(what), text.split(" failed: ", 1)[1])
        else:
            self.w.log_line(text)

    # ------------------------------------------------------------ E-stop
    def estop(self, reason: str) -> None:
        """Latch here and send the E-stop to the core's E-stop socket now (queued; never waits)."""
        self.estop_latched, self.estop_reason = True, reason
        if self.core is not None:
            self.core.estop(reason)
        procedure = self.w.calibration.estop()   # one moving a rig from its own process, outside the core
        self.show_safety()
        self.w.log_line(f"E-STOP: {reason}")
        if procedure is not None:
            self.w.log_line(f"E-STOP: the running calibration procedure was sent {procedure}")
        self._refresh_buttons()

    def _estop_answers(self) -> None:
        """The core's acknowledgements of the E-stops sent (torque off, read back), or why there was none."""
        if self.core is None:
            return
        for ack in self.core.estop_answers():
            if ack.error is not None:
                self.w.report_error("E-STOP FAILED", f"{ack.error} (press the rig's hardware E-stop)")
            else:
                # The core's own time: when the answer reached this poll says more of the poll than of the rig.
                off = f" in {1e3 * ack.torque_off_s:.0f} ms" if ack.torque_off_s is not None else ""
                where = where_recorded(ack.recorded_in)
                self.w.log_line(f"E-stop acknowledged by the rig core: torque off{off}; {where}")

    def reset_estop(self) -> None:
        self.estop_latched, self.estop_reason = False, ""
        self.estop_reset_at_s = time.monotonic()
        self.w.log_line("E-stop reset by the operator")
        if self.phase in RUN_OVER:
            self.reset_run()
        self.show_safety()
        self._refresh_buttons()

    # ------------------------------------------------------------ replay
    def open_replay(self, path: str) -> None:
        """Open a session file paused at the end of its first window of data: the view and the cursor agree."""
        from uartlab.app.record.player import ReplayRig, SessionFile

        speed, loop = self.w.replay_panel.speed, self.w.replay_panel.loop_box.isChecked()

        def work():
            f = SessionFile(path)
            try:
                span = f.time_span_s()
                info = (span, f.trials(), f.events(), f.complete, {n: f.length(n) for n in f.streams})
                return ReplayRig(f, speed=speed, loop=loop, hold_at_end=True, skip_damaged=True), info
            except BaseException:
                f.close()
                raise

        def done(result) -> None:
            rig, (span, trials, events, complete, counts) = result
            self._close_replay()
            self.replay, self.replay_path = rig, path
            self._replay_logged_s = -math.inf
            self._replay_damage_said = 0
            self.w.attach(rig.hub, f"replay of {Path(path).name}")
            self.w.replay_panel.show_file(path, span[0], span[1], trials, events, complete, counts)
            self.w.compare.set_session(path)
            self.w.settings.setValue("replay/folder", str(Path(path).parent))
            self.w.log_line(f"opened {path} for replay")
            if not math.isfinite(span[0]):   # no sample: the panel says there is nothing to play
                return
            window_s = self.w.data.window_s
            first_view_s = span[0] + min(window_s, span[1] - span[0])
            rig.seek(first_view_s, history_s=window_s)
            rig.start(paused=True)
            self.w.replay_panel.show_position(first_view_s, window_s)

        self.w.tasks.run("open session", work, done)

    def play(self) -> None:
        rig = self.replay
        if rig is None:
            return
        panel = self.w.replay_panel
        if rig.position_s >= panel.t0 + panel.span_s:  # at the end: play from the start again
            self.seek(panel.t0)
        rig.resume()
        panel.set_playing(True)

    def pause(self) -> None:
        if self.replay is None:
            return
        self.replay.pause()
        self.w.replay_panel.set_playing(False)

    def seek(self, t_s: float) -> None:
        """Jump to t_s; the player hands over the window before it first, so the plots keep their history."""
        rig = self.replay
        if rig is None:
            return
        window_s = self.w.data.window_s
        rig.seek(t_s, history_s=window_s)   # after this nothing from the old place comes
        if self.w.sub is not None:
            self.w.sub.drain()               # what was queued before the seek would redraw the old place
        self.w.data.clear()
        self._replay_logged_s = t_s          # events before the cursor were logged when they were played
        self._replay_pace.clear()            # the plots' speed is measured from the new place
        self.w.replay_panel.show_position(t_s, window_s)

    def set_speed(self, speed) -> None:
        if self.replay is not None:
            self.replay.speed = speed   # the player paces from where it is at the new speed

    def _close_replay(self) -> None:
        rig, self.replay, self.replay_path = self.replay, None, None
        if rig is not None:
            rig.close()
        self.w.replay_panel.set_playing(False)

    def back_to_live(self) -> None:
        self._close_replay()
        self.w.replay_panel.set_enabled(False)
        self.w.compare.set_session(None)
        if self.core is not None:
            self.w.attach(self.core.hub, self.live_source)
        else:
            self.w.attach(None, "none")

    def _show_replay(self) -> None:
        """The cursor, play/pause as the player is (it pauses at the end), and whether it keeps its speed."""
        rig, panel = self.replay, self.w.replay_panel
        if rig is None or not math.isfinite(panel.t0):   # none open, or one with no sample to play
            return
        if panel.playing == rig.paused:
            panel.set_playing(not rig.paused)
        for damaged in rig.damaged[self._replay_damage_said:]:   # said once each, the replay goes on
            self._replay_damage_said += 1
            self.w.notifications.notify(
                "warning", f"replay of {Path(self.replay_path or '').name}",
                f"{damaged.where}: damaged ({DAMAGED_BYTES}); the replay skips the rows read with them",
                f"uartlab verify --repair {self.replay_path} writes a copy with every whole sample")
            self.w.log_line(f"WARNING replay: {damaged}")
        shown_s = self.w.data.now_s   # what the plots show: the player and the window's drain both count
        # playing, the cursor follows the plots (behind the player when the window lags); paused, the player
        panel.show_position(shown_s if panel.playing and math.isfinite(shown_s) else rig.position_s,
                            self.w.data.window_s)
        due = rig.due_s
        behind_s = 0.0 if due is None or not math.isfinite(shown_s) else max(0.0, due - shown_s)
        pace = self._replay_pace
        if due is None or not math.isfinite(shown_s) or (pace and shown_s < pace[-1][1]):
            pace.clear()              # paused, a seek back: measured afresh
        else:
            pace.append((time.monotonic(), shown_s))
            while pace[-1][0] - pace[0][0] > PACE_WINDOW_S:
                pace.popleft()
        (w0, t0), (w1, t1) = (pace[0], pace[-1]) if pace else ((0.0, 0.0), (0.0, 0.0))
        panel.show_pace(panel.playing, behind_s, (t1 - t0) / (w1 - w0) if w1 - w0 >= 1.0 else None)

    # ------------------------------------------------------------ events and polling
    def on_event(self, e: Event) -> None:
        self.w.plots.add_event(e)   # the tare, trial starts and trips marked on the time axis, live and replayed
        if e.kind == EventKind.STEADY:
            self.w.results_panel.results.add_steady(e.message, e.host_time_s)
        elif e.kind == EventKind.UNMODELLED:
            self.w.results_panel.results.add_unmodelled(e.message)
        if e.replayed:  # the file's events, as the replay passes them: shown, never acted on
            line = _log_line_for(e)
            if e.host_time_s >= self._replay_logged_s and line is not None:
                self._replay_logged_s = e.host_time_s
                self.w.log_line(f"(replay, t = {e.host_time_s - self.w.replay_panel.t0:.2f} s) {line}")
            return
        line = _log_line_for(e)
        if line is not None:
            self.w.log_line(line)
        if e.kind == EventKind.TRIP:
            self.trip_reason = e.message
            self.show_safety()
        elif (e.kind == EventKind.ESTOP and not self.estop_latched
                      and e.host_time_s > self.estop_reset_at_s):  # an E-stop from before the reset is acknowledged
            self.estop_latched, self.estop_reason = True, e.message  # tripped by someone else: latch here too
            self.show_safety()
            self._refresh_buttons()
        elif e.kind == EventKind.FAULT:
            self.w.report_error(f"fault in {e.source}", e.message)

    def poll(self) -> None:
        """A few times a second: the core's status (health, recording, run, a move), the replay cursor."""
        w = self.w
        self._estop_answers()
        silent_s = 0.0   # how long the core has not answered (its last status is that much older)
        self.core_gone = self.core.ended() if self.core is not None else None
        if self.core is not None:
            asked_s, self.status = self.core.status_at()
            why = self.core.status_error
            # A core this window started is known gone at once, before a status request has timed out.
            if (why is not None or self.core_gone is not None) and math.isfinite(self.core.answered_s):
                silent_s = max(0.0, time.monotonic() - self.core.answered_s)
            if self.core_gone is not None:
                w.rig_panel.status.setText(f"{self.core_gone}: Disconnect and Connect to start a new one")
                if self._gone_said is not self.core:
                    self._gone_said = self.core
                    w.report_error("rig core", self.core_gone)
            else:
                w.rig_panel.status.setText(self._connected_text if why is None else f"the rig core has not answered "
                                                                                     f"for {silent_s:.0f} s; showing "
                                                                                     "its last status")
            w.rig_panel.status.setToolTip(why or "")
            if self.moving is not None and self.status is not None and asked_s > self._move_sent_s \
                    and not self.status.get("moving"):
                self._move_over(self.status)
        self.core_silent_s = silent_s
        status = self.status or {}
        if status:
            aged = {name: SimpleNamespace(**{**h, "last_sample_age_s": h["last_sample_age_s"] + silent_s})
                    for name, h in status.get("devices", {}).items()}   # as old as the status is by now
            unconfirmed = (f"{self.core_gone}: this is its last status" if self.core_gone is not None else
                           f"the rig core has not answered for {silent_s:.0f} s: this is its last status"
                           if silent_s > 0 else "")
            w.rig_panel.show_health(aged, self.backends, unconfirmed)
        self.show_safety()
        rec = self.recording
        w.show_recording(rec, _size_of(rec["path"]) if rec is not None else None)
        w.show_devices(status.get("devices", {}) if self.core is not None else {},
                       twin="twin" in self.backends.values(), silent_s=silent_s, core_gone=self.core_gone is not None)
        if rec is not None:
            w.recording_panel.show_status(rec["path"], rec["elapsed_s"], rec["samples"], rec["drops"])
            self._recording_was = rec["path"]
        elif self._recording_was is not None:   # closed by the core (the run's own file, at the run's end)
            w.log_line(f"recording closed: {self._recording_was}")
            self._recording_was = None
        run = self.run_status
        if self.reset_pending and not self.run_busy:
            self.reset_run()
        if run is None:
            w.protocol_panel.show_idle()
        else:
            w.protocol_panel.show_status(run)
            w.results_panel.show_run(run)
            if run.fault_reason and run.phase is Phase.FAULT and not self.estop_latched \
                    and run.id != self.acknowledged_run:
                self.trip_reason = run.fault_reason
        self._refresh_buttons()
        self._show_replay()

    def show_safety(self) -> None:
        """The toolbar's indicator from the E-stop latch, the newest trip and every device's health."""
        failed = {}
        if self.status and self.replay is None:
            failed = {h["device"]: h["last_error"] or "stopped answering"
                      for h in self.status.get("devices", {}).values() if h["state"] == "failed"}
        self.w.show_interlocks(self.estop_reason if self.estop_latched else self.trip_reason, self.estop_latched,
                               failed, connected=self.core is not None or self.replay is not None,
                               core_gone=self.core_gone if self.replay is None else None,
                               core_silent_s=self.core_silent_s if self.replay is None else 0.0)

    def _refresh_buttons(self) -> None:
        w = self.w
        phase = self.phase
        busy = self.run_busy
        can_move = self.core is not None and not self.estop_latched and self.moving is None and not busy
        can_start = can_move and w.protocol_panel.suite is not None and not self.starting
        w.protocol_panel.set_buttons(phase, can_start, can_move, self.has_start)
        setting_up = bool(self.run_status is not None and self.run_status.operator_needed)
        w.rig_panel.tare_button.setEnabled(self.core is not None and self.moving is None and (not busy or setting_up))
        if busy and phase in RUN_OVER:   # the core is still closing the run: acknowledged once it is over
            w.protocol_panel.buttons["reset"].setEnabled(False)
        if self.core is None:
            w.recording_panel.set_state("unavailable")
        elif self.recording_request is not None:   # "starting" / "stopping": the core has not answered yet
            w.recording_panel.set_state(self.recording_request)
        else:
            w.recording_panel.set_state("idle" if self.recording is None else "recording")

    def shutdown(self) -> None:
        """Window closing: let go of the core (the trial goes on; a core started here exits after its run)
        and close the replay."""
        core, self.core = self.core, None
        try:
            if core is not None:
                core.close()
        finally:
            self._close_replay()
            self.w.tasks.join(10.0)
            self.w.tasks.stop()


def _log_line_for(e: Event) -> str | None:
    """What the window's log says about a rig event: routine chatter (clock sync, drop counts with nothing
    lost) stays in the session file; the JSON a steady state or a drop count is recorded as, in words."""
    if event_level(e.kind) < logging.INFO:
        return None
    if e.kind == EventKind.STEADY:
        return f"steady state: {steady_sentence(e.message)}"
    if e.kind == EventKind.DROPS:
        said = drops_sentence(e.message)
        return None if said is None else f"{e.source}: {said}"
    in_words = IN_WORDS.get(e.kind)
    return f"{e.kind} [{e.source}] {e.message if in_words is None else in_words(e.message)}"


def _size_of(path: str) -> int | None:
    """The session file's size as this computer sees it (None: the core writes where this window cannot look)."""
    try:
        return os.path.getsize(path)
    except OSError:
        return None


def _rig_config(hello: dict):
    """The core's rig configuration (its rig.toml, as the core read it): the backends the Rig panel names and
    the [limits] a suite chosen here must keep."""
    from uartlab.app.rig.config import parse_rig_config

    source = Path(hello["config_source"])
    return parse_rig_config(hello["config_text"], source.name, source.parent)


def _read_rig_toml(path: str) -> None:
    """The rig.toml a core is about to be started on, read here first: bad input is one line (file:line: key)."""
    if path:
        from uartlab.app.rig.config import load_rig_config

        load_rig_config(path)
