"""What the operator's buttons do: the rig, the recording, the protocol run, the replay and the E-stop.

Slow steps (starting the twin or the hardware, creating or closing a session file, opening a file to
replay, assembling and tearing down a run) go to worker threads through ``window.tasks``; their results
come back on the GUI thread. A protocol run is a ``Run`` (``app/run/run.py``), as in `uartlab run`: one
assembly, one E-stop path, one teardown. It is imported when a run starts, so the window works without it.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from uartlab.app.record.logs import event_level
from uartlab.app.run.run import estop_rig
from uartlab.errors import ConfigError
from uartlab.protocols.runner import RUN_OVER, Phase
from uartlab.streams import Event, EventKind

if TYPE_CHECKING:
    from uartlab.app.run.rig_like import RigLike


class Operations:
    def __init__(self, window):
        self.w = window
        self.rig: RigLike | None = None
        self.backends: dict[str, str] = {}
        self.session = None                  # RecordingSession
        self.session_started_s = 0.0
        self.auto_recording = False          # started by a protocol run: stopped when the run is over
        self.run = None                      # the protocol run (app/run/run.py), until the operator resets it
        self.starting = None                 # a Run being assembled and started on a worker thread
        self.suite_label = ""
        self.replay = None                   # ReplayRig
        self.replay_path: str | None = None
        self.replay_events: list[Event] = []  # the file's events, replayed as the data passes them
        self._next_event = 0
        self.run_start_m = None               # where the last run's tendons started ("return to start")
        self.last_engine = None               # the last run's engine: closed before anything else moves
        self.moving: str | None = None        # an operator move on the engine ("release tendons" ...)
        self.estop_latched = False
        self.estop_reset_at_s = -math.inf     # an "estop" event older than the last reset does not latch again
        self.estop_reason = ""
        self.trip_reason: str | None = None
        self._busy: set[str] = set()
        p, r, rec, rp = window.protocol_panel, window.rig_panel, window.recording_panel, window.replay_panel
        r.connect_requested.connect(self.connect_rig)
        r.disconnect_requested.connect(self.disconnect_rig)
        r.tare_button.clicked.connect(lambda: self.rig is not None and self.rig.tare_nano17())
        rec.start_requested.connect(self.start_recording)
        rec.stop_requested.connect(self.stop_recording)
        p.suite_chosen.connect(self.choose_suite)
        p.start_requested.connect(self.start_run)
        p.pause_requested.connect(lambda: self._call_experiment("pause"))
        p.resume_requested.connect(lambda: self._call_experiment("resume"))
        p.abort_requested.connect(lambda: self._call_experiment("abort", "operator abort"))
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

    @property
    def experiment(self):
        """The run's Experiment: its status, pause, resume, abort."""
        return self.run.experiment if self.run is not None else None

    @property
    def live_model(self):
        """The LiveModel beside the run: the plots' dashed `model` curves."""
        return self.run.live_model if self.run is not None else None

    # ------------------------------------------------------------ rig
    def connect_rig(self, config_path: str) -> None:
        from uartlab.app.cli.extras import require
        from uartlab.errors import MissingExtraError

        try:
            require("rig")  # the twin rig and the hardware both run through the [rig] drivers
        except MissingExtraError as exc:
            self.w.report_error("connect", exc)
            return
        from uartlab.app.rig.config import default_rig_config, load_rig_config
        from uartlab.app.rig.rig import Rig

        _import_device_modules()
        self.w.rig_panel.set_state("connecting", f"connecting to {config_path or 'the twin rig'}…")

        def work():
            config = load_rig_config(config_path) if config_path else default_rig_config()
            return Rig(config).start()

        def done(rig) -> None:
            self.rig = rig
            c = rig.config
            self.backends = {"actuators": c.actuators.backend, "daq": c.daq.backend, "mocap": c.mocap.backend}
            kind = "twin" if c.uses_twin else "real"
            self.w.rig_panel.set_state("connected", f"connected ({kind}): {c.source}")
            self.w.settings.setValue("rig/config", config_path)
            self.w.log_line(f"rig connected from {c.source}")
            if self.replay is None:
                self.w.attach(rig.hub, f"live rig ({kind})")
            self._refresh_buttons()

        def failed(exc) -> None:
            self.w.rig_panel.set_state("disconnected", "connection failed")
            self.w.report_error("connect", exc)

        self.w.tasks.run("connect", work, done, failed)

    def disconnect_rig(self) -> None:
        rig, session, run = self.rig, self.session, self.run
        if rig is None:
            return
        self.rig = self.session = self.run = self.starting = None
        self.w.rig_panel.set_state("disconnecting")
        if self.replay is None:
            self.w.attach(None, "none")

        def work():
            if run is not None:
                run.close("rig disconnected by the operator")
            if session is not None and not (run is not None and run.owns(session)):  # the run closed its own
                session.close()
            rig.stop()

        def done(_):
            self.w.rig_panel.set_state("disconnected")
            self.w.log_line("rig disconnected")
            self._refresh_buttons()

        self.w.tasks.run("disconnect", work, done)
        self._refresh_buttons()

    # ------------------------------------------------------------ recording
    def start_recording(self, then=None) -> None:
        from uartlab.app.record.session import RecordingSession, session_path

        rig, panel = self.rig, self.w.recording_panel
        if rig is None or self.session is not None:
            return
        folder = panel.folder
        path = session_path(folder)
        operator, notes = panel.operator, panel.notes
        panel.set_state("starting")

        def work():
            folder.mkdir(parents=True, exist_ok=True)
            return RecordingSession(rig, path, operator=operator, notes=notes, log=True)  # <session>.log beside

        def done(session) -> None:
            self.session, self.session_started_s = session, time.monotonic()
            panel.set_state("recording")
            self.w.log_line(f"recording {session.path}")
            self.w.settings.setValue("recording/folder", str(folder))
            if then is not None:
                then(session)

        def failed(exc) -> None:
            panel.set_state("idle" if self.rig is not None else "unavailable")
            self.w.report_error("recording", exc)

        self.w.tasks.run("start recording", work, done, failed)

    def stop_recording(self) -> None:
        session, self.session, self.auto_recording = self.session, None, False
        if session is None:
            return
        self.w.recording_panel.set_state("stopping")
        done = self._recording_closed(session.path)
        run = self.run
        if run is not None and run.owns(session):  # the run's own file: closed by the run
            if run.over:
                self.w.tasks.run("close run", lambda: (run.close(), run.session_summary)[1], done)
            else:
                self.w.tasks.run("stop recording", run.close_session, done)
        else:
            self.w.tasks.run("stop recording", session.close, done)

    def _recording_closed(self, path: str):
        """What the window says once a session file is closed, from the close's summary."""
        def done(summary) -> None:
            self.w.recording_panel.set_state("idle" if self.rig is not None else "unavailable")
            if summary is None:   # the run's file failed; its sentence is the run's fault reason
                return
            lost = sum(summary["recorder_drops"].values()) + sum(summary["hub_drops"].get("recorder", {}).values())
            what = "nothing dropped" if not lost else f"{lost} dropped"
            self.w.log_line(f"recording closed: {path} ({what})")
        return done

    # ------------------------------------------------------------ protocol run
    def choose_suite(self, name_or_path: str, quiet: bool = False) -> None:
        from uartlab.protocols.suite import resolve_suite

        try:
            # Against this rig's ceilings (rig.toml [limits]) when one is connected: refused now, not at Start.
            suite = resolve_suite(name_or_path, None if self.rig is None else self.rig.config.ceilings)
        except Exception as exc:  # noqa: BLE001 - a bad suite file is a message (file:line: key), not a crash
            if not quiet:
                self.w.report_error("suite", exc)
            return
        self.suite_label = name_or_path
        self.w.protocol_panel.show_suite(suite, name_or_path)
        self.w.settings.setValue("protocol/suite", name_or_path)
        self._refresh_buttons()

    def start_run(self) -> None:
        """Pre-flight and start on a worker thread (pre-flight waits for every stream, up to seconds)."""
        panel, rig = self.w.protocol_panel, self.rig
        if (panel.suite is None or rig is None or self.run is not None or self.starting is not None
                or self.estop_latched):
            return
        if self.replay is not None:  # a run is watched live: never behind an old recording's curves
            self.w.log_line("replay closed: the run starts, the view shows the live rig")
            self.back_to_live()
        try:
            from uartlab.app.cli.run import select
            from uartlab.app.run.run import Run
            from uartlab.protocols.suite import within

            # Chosen before (or without) this rig: validated again against its ceilings (rig.toml [limits]).
            suite = select(within(panel.suite, rig.config.ceilings), panel.selected_trials() or None,
                           panel.repeats() or None)
        except (ImportError, ValueError, ConfigError) as exc:
            self.w.report_error("protocol", exc)
            return
        record = self.session is None and panel.record_box.isChecked()
        rec = self.w.recording_panel
        # The model beside the rig with its calibrated moment arms and model values (the store's), as
        # `uartlab run` does; a recording the operator started is written into and left open.
        run = Run(suite, rig=rig, folder=rec.folder if record else None, session=None if record else self.session,
                  operator=rec.operator, notes=rec.notes, safe_action="hold", title="uartlab gui")
        self.starting = run
        panel.buttons["start"].setEnabled(False)
        last = self.last_engine

        def work():
            if last is not None:   # the last run's loop, if its close has not run yet: one engine at a time
                last.close()
            return run.start()     # assembles, refuses what would trip; on failure nothing is left open

        def done(_) -> None:
            if self.starting is not run:   # the rig was disconnected while the run started
                self.w.tasks.run("close run", lambda: run.close("rig disconnected by the operator"))
                return
            self.starting, self.run, self.trip_reason = None, run, None
            self.last_engine, self.run_start_m = run.experiment, run.experiment.start_m
            if run.owns_session:
                self.session, self.session_started_s, self.auto_recording = run.session, time.monotonic(), True
                rec.set_state("recording")
                self.w.log_line(f"recording {run.session.path}")
            if self.estop_latched and run.estop_reason is None:  # an E-stop event from elsewhere, while starting
                run.estop(self.estop_reason)
            self.w.log_line(f"protocol {suite.name} started: {len(suite.trials)} trials")
            self._refresh_buttons()

        def failed(exc) -> None:
            if self.starting is run:
                self.starting = None
            self.w.report_error("protocol", exc)
            self._refresh_buttons()

        self.w.tasks.run("start protocol", work, done, failed)

    def _call_experiment(self, method: str, *args) -> None:
        if self.experiment is None:
            return
        try:
            getattr(self.experiment, method)(*args)
        except Exception as exc:  # noqa: BLE001
            self.w.report_error(method, exc)

    def reset_run(self) -> None:
        """Operator acknowledgement after DONE/ABORTED/FAULT: the next run may start."""
        run, self.run = self.run, None
        if run is not None:
            done = None
            session = self.session
            if self.auto_recording and session is not None:  # the run's own file, closed with the run
                done = self._recording_closed(session.path)
                self.session, self.auto_recording = None, False
                self.w.recording_panel.set_state("stopping")

            def work():  # joins the control thread: off the GUI thread
                run.close()
                if run.experiment is not None:  # the acknowledgement, into a recording that goes on
                    run.experiment.reset()
                return run.session_summary

            self.w.tasks.run("close run", work, done)
        self.trip_reason = None
        self.show_safety()
        self._refresh_buttons()

    # ------------------------------------------------------------ the operator's own moves
    def operator_move(self, what: str, *args) -> None:
        """"release tendons", "return to start" or "jog" (tendon, step m) on the engine, off the GUI thread.
        One engine at a time: the last run's loop is closed first (the buttons are enabled once it is over)."""
        from uartlab.app.run.procedure import jog, release_tendons, return_to_start

        rig, last, start = self.rig, self.last_engine, self.run_start_m
        if rig is None or self.estop_latched or self.moving or (self.experiment is not None and
                                                                self.experiment.status().phase not in RUN_OVER):
            return
        self.moving = what
        self.w.log_line(f"{what}…")
        self._refresh_buttons()

        def work():
            if last is not None:
                last.close()
            if what == "release tendons":
                return release_tendons(rig)
            if what == "jog":
                return jog(rig, *args)
            if start is None:   # its button is off until a run has started
                raise ValueError("return to start: no run has started yet")
            return return_to_start(rig, start)

        def done(text) -> None:
            self.moving = None
            self.w.log_line(text)
            self._refresh_buttons()

        def failed(exc) -> None:
            self.moving = None
            self.w.report_error(what, exc)
            self._refresh_buttons()

        self.w.tasks.run(what, work, done, failed)

    # ------------------------------------------------------------ E-stop
    def estop(self, reason: str) -> None:
        """Torque off now (on a thread: a hung bus must not freeze the window) and latch until reset."""
        self.estop_latched, self.estop_reason = True, reason
        self.show_safety()
        self.w.log_line(f"E-STOP: {reason}")
        rig, run = self.rig, self.run or self.starting

        def act() -> None:  # the run's E-stop (latched even while it starts), or an operator move's, or the rig's
            if run is not None:
                run.estop(reason)
            elif rig is not None:
                estop_rig(rig, reason)

        threading.Thread(target=self._estop_thread, args=(act,), name="gui-estop", daemon=True).start()
        self._refresh_buttons()

    def _estop_thread(self, act) -> None:
        try:
            act()
        except Exception as exc:  # noqa: BLE001 - the failure is shown; the latch stays
            err = exc  # `exc` is unbound after the except block; the lambda runs later on the GUI thread
            self.w.tasks.call_soon(lambda: self.w.report_error("E-STOP FAILED", err))

    def reset_estop(self) -> None:
        self.estop_latched, self.estop_reason = False, ""
        self.estop_reset_at_s = time.monotonic()
        self.w.log_line("E-stop reset by the operator")
        if self.experiment is not None and self.experiment.status().phase in RUN_OVER:
            self.reset_run()
        self.show_safety()
        self._refresh_buttons()

    # ------------------------------------------------------------ replay
    def open_replay(self, path: str) -> None:
        from uartlab.app.record.player import ReplayRig, SessionFile

        speed, loop = self.w.replay_panel.speed, self.w.replay_panel.loop_box.isChecked()

        def work():
            f = SessionFile(path)
            try:
                span = f.time_span_s()
                info = (span, f.trials(), f.events(), f.complete, {n: f.length(n) for n in f.streams})
                return ReplayRig(f, speed=speed, loop=loop), info
            except BaseException:
                f.close()
                raise

        def done(result) -> None:
            rig, (span, trials, events, complete, counts) = result
            self._close_replay()
            self.replay, self.replay_path = rig, path
            self.replay_events, self._next_event = sorted(events, key=lambda e: e.host_time_s), 0
            self.w.attach(rig.hub, f"replay of {Path(path).name}")
            self.w.replay_panel.show_file(path, span[0], span[1], trials, events, complete, counts)
            self.w.compare.set_session(path)
            self.w.settings.setValue("replay/folder", str(Path(path).parent))
            self.w.log_line(f"opened {path} for replay")
            self.preview(span[0] + min(self.w.data.window_s, span[1] - span[0]))

        self.w.tasks.run("open session", work, done)

    def preview(self, t_s: float) -> None:
        """Show the window of recorded data that ends at t_s (after a seek while paused)."""
        rig = self.replay
        if rig is None:
            return
        window = self.w.data.window_s

        def work():
            recs = []
            for name in rig.specs:
                i0, i1 = rig.file.rows_between(name, t_s - window, t_s)
                if i1 > i0:
                    recs.append(rig.file.read(name, i0, i1))
            return recs

        def done(recs) -> None:
            if self.replay is not rig:
                return
            self.w.data.clear()
            for r in sorted(recs, key=lambda r: r.host_time_s[0]):
                self.w.data.add(r)
            self.w.plots.refresh(self.w.data)
            self.w.pose.refresh(self.w.data)
            self.w.replay_panel.show_position(t_s)

        self.w.tasks.run("seek", work, done)

    def replay_events_until(self, t_s: float) -> None:
        """ReplayRig replays samples, not events: the window logs the file's events as the data passes them."""
        ev = self.replay_events
        while self._next_event < len(ev) and ev[self._next_event].host_time_s <= t_s:
            self.on_event(ev[self._next_event], replayed=True)
            self._next_event += 1

    def _rewind_events(self, t_s: float) -> None:
        self._next_event = sum(1 for e in self.replay_events if e.host_time_s <= t_s - self.w.data.window_s)

    def play(self) -> None:
        if self.replay is None:
            return
        if self.replay.wait(0) and self.replay.position_s >= self.w.replay_panel.t0 + self.w.replay_panel.span_s:
            self.replay.seek(self.w.replay_panel.t0)  # at the end: play from the start again
            self._rewind_events(self.w.replay_panel.t0)
        self.replay.start()
        self.w.replay_panel.set_playing(True)

    def pause(self) -> None:
        if self.replay is None:
            return
        self.replay.stop()
        self.replay.seek(self.replay.position_s)  # where start() continues
        self.w.replay_panel.set_playing(False)

    def seek(self, t_s: float) -> None:
        if self.replay is None:
            return
        self.replay.seek(t_s)
        self._rewind_events(t_s)
        if self.w.sub is not None:
            self.w.sub.drain()  # what was queued before the seek would redraw the old place
        self.w.data.clear()
        if not self.w.replay_panel.playing:
            self.replay.position_s = t_s
            self.preview(t_s)

    def set_speed(self, speed) -> None:
        if self.replay is not None:
            self.replay.speed = speed
            self.replay.seek(self.replay.position_s)  # restart the pacing clock at the new speed

    def _close_replay(self) -> None:
        rig, self.replay, self.replay_path = self.replay, None, None
        self.replay_events, self._next_event = [], 0
        if rig is not None:
            rig.close()
        self.w.replay_panel.set_playing(False)

    def back_to_live(self) -> None:
        self._close_replay()
        self.w.replay_panel.set_enabled(False)
        self.w.compare.set_session(None)
        if self.rig is not None:
            self.w.attach(self.rig.hub, "live rig")
        else:
            self.w.attach(None, "none")

    # ------------------------------------------------------------ events and polling
    def on_event(self, e: Event, replayed: bool = False) -> None:
        if replayed:
            self.w.log_line(f"(replay, t = {e.host_time_s - self.w.replay_panel.t0:.2f} s) {e.kind} [{e.source}] "
                            f"{e.message}")
            return
        if event_level(e.kind) >= logging.INFO:  # routine chatter (clock-sync updates) stays in the file only
            self.w.log_line(f"{e.kind} [{e.source}] {e.message}")
        if e.kind == EventKind.TRIP:
            self.trip_reason = e.message
            self.show_safety()
        elif (e.kind == EventKind.ESTOP and not self.estop_latched and self.replay is None
                      and e.host_time_s > self.estop_reset_at_s):  # an E-stop from before the reset is acknowledged
            self.estop_latched, self.estop_reason = True, e.message  # tripped by someone else: latch here too
            self.show_safety()
            self._refresh_buttons()
        elif e.kind == EventKind.FAULT and self.replay is None:
            self.w.report_error(f"fault in {e.source}", e.message)

    def poll(self) -> None:
        """A few times a second: device health, recording counters, the run's status, the replay cursor."""
        w = self.w
        if self.rig is not None:
            w.rig_panel.show_health(self.rig.health(), self.backends)
        self.show_safety()
        if self.session is not None:
            rec = self.session.recorder
            w.recording_panel.show_status(self.session.path, time.monotonic() - self.session_started_s,
                                          dict(getattr(rec, "flushed", {})),
                                          {**self.rig.hub.drop_counts(), "file writer": dict(rec.dropped)}
                                          if self.rig is not None else {})
        if self.experiment is not None:
            status = self.experiment.status()
            w.protocol_panel.show_status(status)
            phase = status.phase
            if status.fault_reason and phase is Phase.FAULT and not self.estop_latched:
                self.trip_reason = status.fault_reason
            if self.auto_recording and phase in (Phase.DONE, Phase.ABORTED):
                self.stop_recording()  # the run closes: its last trial, the live model, then its file
            w.protocol_panel.set_buttons(phase, False, self.rig is not None and not self.estop_latched
                                         and self.moving is None, self.run_start_m is not None)
        if self.replay is not None:
            w.replay_panel.show_position(self.replay.position_s)
            if w.replay_panel.playing and self.replay.wait(0):
                w.replay_panel.set_playing(False)

    def show_safety(self) -> None:
        """The toolbar's indicator from the E-stop latch, the newest trip and every device's health."""
        failed = {}
        if self.rig is not None and self.replay is None:
            failed = {h.device: h.last_error or "stopped answering" for h in self.rig.health().values()
                      if h.state == "failed"}
        self.w.show_interlocks(self.estop_reason if self.estop_latched else self.trip_reason, self.estop_latched,
                               failed, connected=self.rig is not None or self.replay is not None)

    def _refresh_buttons(self) -> None:
        w = self.w
        phase = self.experiment.status().phase if self.experiment is not None else None
        can_move = self.rig is not None and not self.estop_latched and self.moving is None
        can_start = can_move and w.protocol_panel.suite is not None
        w.protocol_panel.set_buttons(phase, can_start, can_move, self.run_start_m is not None)
        if self.session is None:
            w.recording_panel.set_state("idle" if self.rig is not None else "unavailable")

    def shutdown(self) -> None:
        """Window closing: stop the run (servos hold/off), close the file, stop the rig and the replay."""
        run = self.run
        try:
            if run is not None:
                run.close("GUI closed")
        finally:
            if self.session is not None and not (run is not None and run.owns(self.session)):
                self.session.close()
            if self.rig is not None:
                self.rig.stop()
            self._close_replay()
            self.w.tasks.join(10.0)


def _import_device_modules() -> None:
    """Import what a rig start imports, here on the GUI thread. PySide6 hooks ``__import__``; a first import
    of grpc/nidaqmx on a worker thread while the GUI thread is inside Qt deadlocked (seen under pytest-qt,
    PySide6 6.11: worker stuck in the import, GUI thread in an enum call). Once imported, nothing is left
    for the worker to import. Costs ~0.5 s once, at the first connect."""
    from uartlab.app.rig.backends import preload_modules

    preload_modules()
    import uartlab.sim.statics  # noqa: F401 - scipy.optimize, imported by the twin's start state
