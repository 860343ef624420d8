"""The operator's window: live views fed from a Hub, the panels around them, the E-stop always in reach.

The rig lives in the rig core (app/serve/, `uartlab rig serve`), another process: the window attaches to it
(or starts it) and asks it for everything that touches the rig (``operations.py``, ``core_link.py``). Its
live views are fed from the core client's mirror of the core's streams, a Hub like any other (a replay's
too). The GUI thread only drains its bounded hub queue into ring buffers and draws (a frame timer at
~60 Hz), and shows the core's status a few times a second from what a poller thread fetched; requests to
the core run on worker threads (``tasks.Tasks``). A GUI that falls behind drops its oldest items
(counted, shown in the status bar); acquisition, the control loop and recording are in the core and never
wait for it.

E-stop: the red button in the toolbar, or Esc or F1 from anywhere in the application: a filter on the
whole application sees the key before any widget or dialog can take it. The press goes to the core's
E-stop socket from a thread of its own and latches here: protocol starts are refused until the operator
presses "Reset E-stop". Nothing in the window is modal (problems go to the notification area, file
choosers are non-modal), so the button is always clickable.
"""

from __future__ import annotations

import math
import time
from collections import deque
from pathlib import Path

from pyqtgraph.util.garbage_collector import GarbageCollector
from PySide6.QtCore import QCoreApplication, QEvent, QObject, QSettings, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QDockWidget,
    QLabel,
    QMainWindow,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QTabBar,
    QTabWidget,
    QToolBar,
    QVBoxLayout,
    QWidget,
)
from uartlab.app.gui.buffers import WINDOW_S, LiveData
from uartlab.app.gui.core_link import VIEWER_QUEUE as GUI_QUEUE
from uartlab.app.gui.live_plots import LivePlots, channels
from uartlab.app.gui.notifications import NotificationArea, next_step_for
from uartlab.app.gui.operations import Operations
from uartlab.app.gui.panels.calibration import CalibrationPanel
from uartlab.app.gui.panels.compare import ComparePanel
from uartlab.app.gui.panels.protocol import ProtocolPanel
from uartlab.app.gui.panels.recording import RecordingPanel, human_size
from uartlab.app.gui.panels.replay import ReplayPanel
from uartlab.app.gui.panels.results import ResultsPanel
from uartlab.app.gui.panels.rig import RigPanel
from uartlab.app.gui.pose_view import PoseView
from uartlab.app.gui.settings import operator_settings
from uartlab.app.gui.tasks import Tasks
from uartlab.app.gui.wording import for_operator
from uartlab.hub import Hub, Subscription
from uartlab.schema import MODEL_STREAM
from uartlab.streams import Event, Record

FRAME_MS = 15             # ~60 fps target; the timer skips frames rather than queueing them
POSE_PERIOD_S = 0.1       # pose redraws at 10 Hz whatever the frame rate (kinematics of two poses, scatter items)
STATUS_MS = 250           # health, recording, protocol status
ESTOP_KEYS = {Qt.Key.Key_Escape: "Esc", Qt.Key.Key_F1: "F1"}
DEVICE_NAMES = {"actuators": "servos", "daq": "DAQ", "mocap": "mocap"}   # the rig's devices, as the operator says
LOG_LINES = 5000


class MainWindow(QMainWindow):
    def __init__(self, settings: QSettings | None = None, window_s: float = WINDOW_S, core_address: str | None = None):
        super().__init__()
        self.core_address = core_address   # the rig core to attach to (None: app/serve's default address)
        # Cyclic garbage is collected on this thread only: a Qt object whose last Python reference dies in
        # a rig or worker thread is destroyed there, and Qt's destructor then deadlocks against the GUI
        # thread (seen: worker in ~QWidget waiting for the GIL, GUI thread in ~QObject waiting for its lock).
        self._gc = GarbageCollector(interval=0.5)
        self.setWindowTitle("uartlab — UART finger rig")
        self.settings = settings if settings is not None else operator_settings()
        self.tasks = Tasks(self.report_error, self)
        self.data = LiveData(channels(), window_s)
        self.hub: Hub | None = None
        self.sub: Subscription | None = None
        self.source = "none"
        self.frames = 0
        self._drawn_version = -1
        self._frame_times: deque[float] = deque(maxlen=120)
        self._pose_drawn_s = -math.inf
        self.errors: list[str] = []     # every error reported, oldest first (bounded)

        self.plots = LivePlots(window_s)
        self.pose = PoseView()
        self.live_view = live = QSplitter()   # the Live tab: plots beside the pose
        live.addWidget(self.plots)
        live.addWidget(self.pose)
        live.setStretchFactor(0, 3)
        live.setStretchFactor(1, 1)
        self.compare = ComparePanel()
        self.calibration = CalibrationPanel()
        self.tabs = QTabWidget()
        self.tabs.addTab(live, "Live")
        self.tabs.addTab(self.compare, "Compare")
        self.tabs.addTab(self.calibration, "Calibration")
        self.notifications = NotificationArea()
        central = QWidget()
        column = QVBoxLayout(central)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        column.addWidget(self.notifications)
        column.addWidget(self.tabs, 1)
        self.setCentralWidget(central)

        self.rig_panel = RigPanel()
        self.protocol_panel = ProtocolPanel()
        self.recording_panel = RecordingPanel()
        self.replay_panel = ReplayPanel()
        self.results_panel = ResultsPanel()
        self.log = QPlainTextEdit()
        self.log.setReadOnly(True)
        self.log.setMaximumBlockCount(LOG_LINES)
        self.docks: dict[str, QDockWidget] = {}
        left = Qt.DockWidgetArea.LeftDockWidgetArea
        bottom = Qt.DockWidgetArea.BottomDockWidgetArea
        groups = ((left, ("Rig", self.rig_panel), ("Protocol", self.protocol_panel),
                   ("Recording", self.recording_panel)),
                  (bottom, ("Results", self.results_panel), ("Replay", self.replay_panel), ("Log", self.log)))
        for _, *members in groups:
            for name, widget in members:
                dock = QDockWidget(name, self)
                dock.setObjectName(f"dock_{name}")
                dock.setWidget(widget)
                self.docks[name] = dock
        for area, (first, _), *others in groups:
            self.addDockWidget(area, self.docks[first])
            for name, _ in others:
                self.tabifyDockWidget(self.docks[first], self.docks[name])
        self._hide_stale_tab_bars()
        self.docks["Rig"].raise_()
        self.docks["Results"].raise_()
        self.resizeDocks([self.docks["Results"]], [230], Qt.Orientation.Vertical)  # the plots get the rest

        self._build_toolbar()
        # Always in sight, whichever tab or dock is up: what is being recorded, where the data comes from,
        # and whether every device is answering.
        self.recording_label = QLabel()
        self.source_label = QLabel("no source")
        self.devices_label = QLabel()
        self.fps_label = QLabel("")
        self.statusBar().addWidget(self.recording_label)
        self.statusBar().addWidget(self.source_label, 1)
        self.statusBar().addPermanentWidget(self.devices_label)
        self.statusBar().addPermanentWidget(self.fps_label)
        self.show_recording(None)
        self.show_devices({})

        self.ops = Operations(self)
        for box in (self.plots.residuals_box, self.plots.freeze_box):
            box.toggled.connect(self.redraw)
        self.compare.message.connect(self.log_line)
        self.compare.error.connect(lambda what, why: self.report_error(what, why))
        self.calibration.rig_source = lambda: (self.rig_panel.config_edit.text().strip(), self.ops.connected)
        self.results_panel.message.connect(self.log_line)
        self.results_panel.error.connect(lambda what, why: self.report_error(what, why))
        self.calibration.message.connect(self.log_line)
        self.calibration.error.connect(lambda what, why: self.report_error(what, why))

        self.frame_timer = QTimer(self)
        self.frame_timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.frame_timer.timeout.connect(self.on_frame)
        self.frame_timer.start(FRAME_MS)
        self.status_timer = QTimer(self)
        self.status_timer.timeout.connect(self.on_status)
        self.status_timer.start(STATUS_MS)
        self.restore_settings()

    def _hide_stale_tab_bars(self) -> None:
        """Qt (6.11) leaves the first tab bar of the second tabbed dock group visible, standing over the docks,
        once a third dock joins the group; its tabs are the start of the group's real bar. Hidden, it stays
        hidden; Qt takes it again, shown, if it needs a bar."""
        bars = self.findChildren(QTabBar, options=Qt.FindChildOption.FindDirectChildrenOnly)
        tabs = [[bar.tabText(i) for i in range(bar.count())] for bar in bars]
        for bar, mine in zip(bars, tabs, strict=True):
            if any(len(other) > len(mine) and other[:len(mine)] == mine for other in tabs):
                bar.hide()

    # ------------------------------------------------------------ toolbar, E-stop
    def _build_toolbar(self) -> None:
        bar = QToolBar("Safety")
        bar.setObjectName("toolbar_safety")
        bar.setMovable(False)
        bar.setFloatable(False)
        bar.toggleViewAction().setEnabled(False)  # the E-stop cannot be hidden
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, bar)
        self.estop_button = QPushButton("E-STOP  (Esc / F1)")
        self.estop_button.setObjectName("estop")
        self.estop_button.setMinimumSize(220, 44)
        self.estop_button.setStyleSheet("QPushButton#estop { background: #d50000; color: white; font-size: 16pt;"
                                        " font-weight: bold; border: 3px solid #7f0000; border-radius: 6px; }")
        self.estop_button.setToolTip("Emergency stop: torque off on all six servos at once, and latch")
        self.estop_button.clicked.connect(lambda: self.ops.estop("operator E-stop (button)"))
        self.estop_reset = QPushButton("Reset E-stop")
        self.estop_reset.setEnabled(False)
        self.estop_reset.clicked.connect(lambda: self.ops.reset_estop())
        self.interlock_label = QLabel("interlocks: no rig connected")
        self.interlock_label.setMinimumWidth(300)
        self.interlock_label.setWordWrap(True)   # a long reason takes a second line, never the window's width
        self.interlock_label.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        bar.addWidget(self.estop_button)
        bar.addWidget(self.estop_reset)
        bar.addSeparator()
        bar.addWidget(self.interlock_label)
        self.estop_keys = _EstopKeys(lambda key: self.ops.estop(f"operator E-stop (key {key})"), self)
        app = QCoreApplication.instance()
        if app is not None:   # None only without a QApplication, where no key press can reach a window
            app.installEventFilter(self.estop_keys)
        view = self.menuBar().addMenu("&View")
        for dock in self.docks.values():
            view.addAction(dock.toggleViewAction())
        quit_action = QAction("&Quit", self)
        quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        quit_action.triggered.connect(self.close)
        self.menuBar().addMenu("&File").addAction(quit_action)

    def show_recording(self, recording: dict | None, size_bytes: int | None = None) -> None:
        """The status bar's recording indicator: the file, how long, how big; or that nothing is recorded."""
        if recording is None:
            self.recording_label.setText("○ not recording")
            self.recording_label.setStyleSheet("color: #666666")
            self.recording_label.setToolTip("")
            return
        size = "" if size_bytes is None else f", {human_size(size_bytes)}"
        minutes, seconds = divmod(int(recording.get("elapsed_s", 0)), 60)
        self.recording_label.setText(f"● REC {Path(recording['path']).name} ({minutes}:{seconds:02d}{size})")
        self.recording_label.setStyleSheet("color: #c62828; font-weight: bold")
        self.recording_label.setToolTip(str(recording["path"]))

    def show_devices(self, devices: dict[str, dict], twin: bool = False, silent_s: float = 0.0,
                     core_gone: bool = False) -> None:
        """The status bar's device health: each device's state in a word, red when one has failed or the core
        has gone; orange, and said, while the core has not answered for ``silent_s`` (the states are its last
        ones)."""
        if not devices:
            self.devices_label.setText("devices: –")
            self.devices_label.setStyleSheet("color: #666666")
            return
        words = {"streaming": "OK"}
        text = " · ".join(f"{DEVICE_NAMES.get(name, name)} {words.get(h['state'], h['state'])}"
                          for name, h in devices.items())
        failed = core_gone or any(h["state"] == "failed" for h in devices.values())
        silent = "core gone, last known: " if core_gone else f"core silent {silent_s:.0f} s, last known: " \
            if silent_s > 0 else ""
        self.devices_label.setText(silent + ("twin " if twin else "") + text)
        self.devices_label.setStyleSheet("color: #c62828; font-weight: bold" if failed else
                                         "color: #2e7d32" if not silent and all(h["state"] == "streaming"
                                                                                for h in devices.values())
                                         else "color: #e65100")

    def show_interlocks(self, reason: str | None, estop: bool, failed_devices: dict[str, str] | None = None,
                        connected: bool = True, core_gone: str | None = None, core_silent_s: float = 0.0) -> None:
        """The safety indicator: E-stop, the rig core gone (``core_gone``: how it ended), a failed device
        (named, with what to do; its error in the tooltip), a trip, unknown while the core is silent, or OK only
        when a rig is connected, answering and every device is healthy."""
        failed_devices = failed_devices or {}
        self.interlock_label.setToolTip(core_gone or "\n".join(f"{d}: {e}" for d, e in failed_devices.items())
                                        or (reason or ""))
        said = self.ops.for_operator(reason or "") if reason and not estop else None
        if said is not None:   # the reason as the operator reads it; the core's words stay in the tooltip
            reason = f"{said.text} — {said.next_step}"
        self.protocol_panel.set_interlocks(reason, estop)
        if estop:
            text, style = f"E-STOP LATCHED: {reason}", "color: white; background: #c62828; font-weight: bold"
        elif core_gone:   # before the devices: their states are the gone core's last
            gone = for_operator(core_gone)   # what it means for the servos: in the notice
            text = f"RIG CORE GONE — {gone.next_step if gone is not None else core_gone}"
            style = "color: white; background: #c62828; font-weight: bold"
        elif failed_devices:
            said = next((s for e in failed_devices.values() if (s := self.ops.for_operator(e))), None)
            text = (f"DEVICE FAILED: {', '.join(failed_devices)} — "
                    f"{said.next_step if said is not None else next_step_for('device')}")
            style = "color: white; background: #c62828; font-weight: bold"
        elif reason:
            text, style = f"INTERLOCK TRIP: {reason}", "color: white; background: #e65100; font-weight: bold"
        elif not connected:
            text, style = "interlocks: no rig connected", "color: #666666"
        elif core_silent_s > 0:
            text = f"interlocks: unknown — the rig core has not answered for {core_silent_s:.0f} s"
            style = "color: white; background: #e65100; font-weight: bold"
        else:
            text, style = "interlocks: OK", "color: #2e7d32; font-weight: bold"
        self.interlock_label.setText(text)
        self.interlock_label.setStyleSheet(style)
        self.estop_reset.setEnabled(estop)

    # ------------------------------------------------------------ the data feed
    def attach(self, hub: Hub | None, source: str, sub: Subscription | None = None) -> None:
        """Feed every view from this hub (the core client's mirror or a replay's); None detaches. ``sub``: a
        subscription to ``hub`` made earlier (the core client's, made before the core's history came in)."""
        if self.sub is not None:
            self.sub.close()
            self.sub = None
        self.hub, self.source = hub, source
        self.data.set_specs(hub.specs if hub is not None else {})
        self.plots.clear()
        self.pose.clear()
        if hub is not None:
            self.sub = sub if sub is not None else hub.subscribe("gui", maxsize=GUI_QUEUE)
        self.source_label.setText(f"source: {source}")

    def drain(self) -> int:
        """Everything queued for the GUI into the ring buffers; returns how many items."""
        if self.sub is None:
            return 0
        items = self.sub.drain()
        records: list[Record] = []
        for item in items:
            if isinstance(item, Event):
                self.data.add_all(records)   # the data before an event is in before the event is shown
                records = []
                self.ops.on_event(item)
                continue
            if item.stream == MODEL_STREAM:
                self.results_panel.results.add_model(item)
            if item.stream not in self.data.specs and self.hub is not None:
                spec = self.hub.specs.get(item.stream)  # a stream registered after we attached
                if spec is not None:
                    self.data.specs[item.stream] = spec
            records.append(item)
        self.data.add_all(records)
        return len(items)

    def redraw(self) -> None:
        """Draw at the next frame even if no new data came (a view option changed)."""
        self._drawn_version = -1

    def on_frame(self) -> None:
        try:
            self.drain()
            if self.data.version == self._drawn_version:
                return  # nothing new: no redraw (a paused replay, a disconnected rig)
            self._drawn_version = self.data.version
            self.plots.refresh(self.data, self.display_now())
            self.frames += 1
            now = time.monotonic()
            if now - self._pose_drawn_s >= POSE_PERIOD_S:
                self._pose_drawn_s = now
                self.pose.refresh(self.data)
            self._frame_times.append(now)
        except Exception as exc:  # a bad record must not stop the display loop for good
            self.report_error("display", exc)

    def display_now(self) -> float:
        """Time 0 of the plots. Live: the host clock, so a stream whose timestamps run ahead (a clock-sync
        problem) cannot drag the others off the screen, and one that stalls visibly falls behind. Replay:
        the newest recorded sample."""
        return time.monotonic() if self.source.startswith("live") else self.data.now_s

    def clock_warning(self) -> str:
        """Streams whose newest timestamp is ahead of the host clock by more than 0.5 s (live only)."""
        if not self.source.startswith("live"):
            return ""
        now = time.monotonic()
        ahead = {s: r.last_t - now for (s, _), r in self.data.rings.items() if r.last_t - now > 0.5}
        return ", ".join(f"{s} timestamps {a:.1f} s ahead of the host clock" for s, a in sorted(ahead.items()))

    @property
    def fps(self) -> float:
        """Frames drawn per second lately; 0 when none was drawn in the last second (nothing new to draw)."""
        t = self._frame_times
        if len(t) < 3 or t[-1] <= t[0] or time.monotonic() - t[-1] > 1.0:
            return 0.0
        return (len(t) - 1) / (t[-1] - t[0])

    def on_status(self) -> None:
        try:
            self.ops.poll()
            self.results_panel.refresh()
            self.plots.readouts(self.data)
            dropped = sum(self.sub.dropped.values()) if self.sub is not None else 0
            fps = self.fps
            drawn = f"display {fps:.0f} fps" if fps > 0 else "display idle (no new data)"
            self.fps_label.setText(f"{drawn} · GUI queue drops {dropped}")
            warning = self.clock_warning()
            if warning:
                self.statusBar().showMessage(f"clock sync: {warning}", 2000)
        except Exception as exc:  # noqa: BLE001 - shown to the operator; the timer goes on
            self.report_error("status", exc)

    def core_log_path(self) -> Path:
        """Where a rig core this window starts writes its output (the window has no terminal to show it):
        beside the window's settings (the operator's config folder; a test's or a benchmark's own)."""
        from uartlab.app.serve.spawn import core_log_path

        return core_log_path(Path(self.settings.fileName()).parent)

    # ------------------------------------------------------------ messages
    def log_line(self, text: str) -> None:
        self.log.appendPlainText(f"{time.strftime('%H:%M:%S')}  {text}")

    def report_error(self, what: str, exc: BaseException | str) -> None:
        """One readable sentence in the log (as the core said it) and in the notification area (in the
        operator's words where app/gui/wording.py knows them), with the next step."""
        why = exc if isinstance(exc, str) else (str(exc) or type(exc).__name__)
        text = f"{what}: {why}"
        self.errors = [*self.errors[-99:], text]
        self.log_line(f"ERROR {text}")
        said = self.ops.for_operator(why)
        if said is None:
            self.notifications.notify("error", what, why, next_step_for(what))
        else:
            self.notifications.notify("error", what, said.text, said.next_step)

    # ------------------------------------------------------------ settings
    def restore_settings(self) -> None:
        s = self.settings
        self.rig_panel.config_edit.setText(str(s.value("rig/config", "")))
        self.recording_panel.folder_edit.setText(str(s.value("recording/folder", "recordings")))
        self.recording_panel.operator_edit.setText(str(s.value("recording/operator", "")))
        self.replay_panel.last_folder = str(s.value("replay/folder", ""))
        self.plots.residuals_box.setChecked(str(s.value("plots/residuals", "false")).lower() == "true")
        suite = str(s.value("protocol/suite", ""))
        if suite:
            self.ops.choose_suite(suite, quiet=True)
        geometry, state = s.value("window/geometry"), s.value("window/state")
        if geometry is not None:
            self.restoreGeometry(geometry)
        if state is not None:
            self.restoreState(state)

    def save_settings(self) -> None:
        s = self.settings
        s.setValue("rig/config", self.rig_panel.config_edit.text().strip())
        s.setValue("recording/folder", self.recording_panel.folder_edit.text().strip())
        s.setValue("recording/operator", self.recording_panel.operator)
        s.setValue("replay/folder", self.replay_panel.last_folder)
        s.setValue("plots/residuals", "true" if self.plots.residuals_box.isChecked() else "false")
        if self.ops.suite_label:
            s.setValue("protocol/suite", self.ops.suite_label)
        s.setValue("window/geometry", self.saveGeometry())
        s.setValue("window/state", self.saveState())
        s.sync()

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        app = QCoreApplication.instance()
        if app is not None:
            app.removeEventFilter(self.estop_keys)
        self.frame_timer.stop()
        self.status_timer.stop()
        self.save_settings()
        self.calibration.stop_for_close()
        self.ops.shutdown()
        if self.sub is not None:
            self.sub.close()
        super().closeEvent(event)


class _EstopKeys(QObject):
    """Esc and F1 anywhere in the application, before any widget or dialog sees them: the E-stop."""

    def __init__(self, estop, parent: QObject):
        super().__init__(parent)
        self.estop = estop

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
        if event.type() in (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress) and event.key() in ESTOP_KEYS:
            if event.type() == QEvent.Type.KeyPress and not event.isAutoRepeat():
                self.estop(ESTOP_KEYS[event.key()])
            event.accept()
            return True  # consumed: no dialog closes on it, no widget takes it
        return False


def central_widget_for(window: MainWindow, name: str) -> QWidget:
    """The widget a screenshot of view ``name`` should show (tests and docs)."""
    return {"live": window.live_view, "compare": window.compare}[name]
