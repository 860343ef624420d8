"""The screenshots of docs/operator.md, taken from a real session on the twin rig through the real window.

    .venv/bin/python docs/make_screenshots.py                 # every scene, into docs/screenshots/
    .venv/bin/python docs/make_screenshots.py --out /tmp/s --scenes connected,running

A day at the rig, in order: the window starts its own rig core on the twin rig and connects; one free-motion
trial runs with the live model beside it and is recorded; a contact trial under a fingertip force limit
lower than the finger's press on its surface trips, and the tendons are released; the recorded session is
replayed; the comparison runs in the Compare tab; a calibration procedure runs in the Calibration tab; the
E-stop is pressed. Nothing is synthetic: every plot is the twin rig's data as the drivers read it. Offscreen
(QT_QPA_PLATFORM=offscreen) unless a display is asked for; takes a few minutes.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

LOW_LIMIT_SUITE = """
[suite]
name = "fingertip_limit_demo"
description = "Hook on a 45 deg surface, FDP 15 mm and ED 7.5 mm, under a 0.3 N fingertip force limit"
repeats = 1
[suite.limits]
max_fingertip_force_N = 0.3
[[trial]]
name = "contact/Hook/FDP+ED@45deg"
pose = "Hook"
surface_angle_deg = 45
pulls = [
    { tendon = "FDP", amplitude_mm = 15, duration_s = 4 },
    { tendon = "ED", amplitude_mm = 7.5, duration_s = 4 },
]
return = true
"""


class Director:
    """Drives the window as an operator would, waiting on what the window shows (never on sleeps alone)."""

    def __init__(self, out: Path, scenes: set[str], work: Path):
        from PySide6.QtCore import QSettings
        from uartlab.app.gui.app import qt_app
        from uartlab.app.gui.main_window import MainWindow

        self.app = qt_app()
        self.out, self.scenes, self.work = out, scenes, work
        self.window = MainWindow(QSettings(str(work / "gui.ini"), QSettings.Format.IniFormat),
                                 core_address=f"ipc://{work / 'core'}")
        self.window.resize(1600, 1000)
        self.window.show()
        self.window.recording_panel.folder_edit.setText(str(work / "recordings"))
        self.window.recording_panel.operator_edit.setText("docs")
        self.session: str | None = None

    def wait(self, done: Callable[[], bool], timeout_s: float, what: str) -> None:
        deadline = time.monotonic() + timeout_s
        while not done():
            if time.monotonic() > deadline:
                raise SystemExit(f"make_screenshots: {what} did not happen within {timeout_s:g} s "
                                 f"(window errors: {self.window.errors[-3:]})")
            self.app.processEvents()
            time.sleep(0.02)
        self.app.processEvents()

    def pause(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        self.wait(lambda: time.monotonic() >= end, seconds + 1, "a pause")

    def shoot(self, name: str, dock: str | None = None, tab=None) -> None:
        if name not in self.scenes:
            return
        w = self.window
        if dock is not None:
            w.docks[dock].raise_()
        if tab is not None:
            w.tabs.setCurrentWidget(tab)
        self.pause(0.4)   # a few frames drawn with the new layout
        self.out.mkdir(parents=True, exist_ok=True)
        path = self.out / f"{name}.png"
        if not w.grab().save(str(path)):
            raise SystemExit(f"make_screenshots: could not write {path}")
        print(f"  {path}")

    # ------------------------------------------------------------ the day
    def connect(self) -> None:
        w = self.window
        w.rig_panel.connect_button.click()
        self.wait(lambda: w.ops.connected and w.ops.status is not None, 120, "connecting to the twin rig")
        self.wait(lambda: w.plots.plots["tension"].measured[0].getData()[0] is not None, 30, "the first samples")
        self.pause(3.0)
        self.shoot("connected", dock="Rig")

    def run_one_trial(self) -> None:
        from uartlab.protocols.runner import RUN_OVER, Phase

        w, panel = self.window, self.window.protocol_panel
        w.ops.choose_suite("free_motion")
        panel.table.selectRow(1)                      # free/FDP
        panel.repeats_spin.setValue(1)
        self.wait(lambda: panel.buttons["start"].isEnabled(), 30, "Start enabled")
        panel.buttons["start"].click()
        # the pull under way (its 4 s sigmoid), not SETTLE: a quick settle passes between two status polls
        self.wait(lambda: w.ops.phase in (Phase.ACTUATE, Phase.SETTLE), 90, "the pull to start")
        self.pause(2.5)
        self.shoot("running", dock="Protocol")
        self.session = (w.ops.recording or {}).get("path")
        self.wait(lambda: w.ops.phase in RUN_OVER, 120, "the run's end")
        self.wait(lambda: w.ops.recording is None, 30, "the run's file closed")
        self.pause(1.0)
        self.shoot("done", dock="Protocol")
        panel.buttons["reset"].click()
        self.wait(lambda: w.ops.phase is None, 30, "the run acknowledged")

    def trip_and_release(self) -> None:
        from uartlab.protocols.runner import Phase

        w, panel = self.window, self.window.protocol_panel
        suite = self.work / "fingertip_limit_demo.toml"
        suite.write_text(LOW_LIMIT_SUITE, encoding="utf-8")
        w.ops.choose_suite(str(suite))
        panel.repeats_spin.setValue(0)
        self.wait(lambda: panel.buttons["start"].isEnabled(), 30, "Start enabled")
        panel.buttons["start"].click()
        self.wait(lambda: w.ops.phase is Phase.FAULT, 90, "the fingertip force interlock to trip")
        self.pause(1.5)
        self.shoot("trip", dock="Protocol")
        panel.buttons["reset"].click()
        self.wait(lambda: panel.buttons["release"].isEnabled(), 30, "Release enabled")
        panel.buttons["release"].click()
        self.wait(lambda: w.ops.moving is None, 90, "the tendons released")
        self.pause(1.0)
        self.shoot("released", dock="Protocol")

    def replay(self) -> None:
        w = self.window
        if self.session is None:
            raise SystemExit("make_screenshots: the run recorded no session to replay")
        w.replay_panel.speed_combo.setCurrentText("2")
        w.ops.open_replay(self.session)
        self.wait(lambda: w.ops.replay is not None, 30, "the session opened for replay")
        w.ops.play()
        self.pause(4.0)
        self.shoot("replay", dock="Replay")

    def compare(self) -> None:
        w = self.window
        panel = w.compare
        w.tabs.setCurrentWidget(panel)
        self.wait(lambda: panel.run_button.isEnabled(), 30, "Run compare enabled")
        panel.run_button.click()
        self.pause(2.0)
        self.shoot("compare_running", tab=panel)
        self.wait(lambda: not panel.running(), 600, "the comparison")
        self.shoot("compare", tab=panel)

    def calibration(self) -> None:
        w = self.window
        panel = w.calibration
        w.tabs.setCurrentWidget(panel)
        panel.store_edit.setText(str(self.work / "calibrations"))
        panel.procedure.setCurrentIndex(panel.procedure.findData("sea"))
        panel.run_button.click()
        self.wait(lambda: not panel.running() and panel.run_button.isEnabled(), 300, "the SEA calibration")
        self.shoot("calibration", tab=panel)
        w.tabs.setCurrentIndex(0)

    def estop(self) -> None:
        from PySide6.QtCore import Qt
        from PySide6.QtTest import QTest

        w = self.window
        w.ops.back_to_live()
        self.pause(2.0)
        QTest.keyClick(w, Qt.Key.Key_Escape)          # Esc: the E-stop from anywhere in the window
        self.wait(lambda: "E-stop acknowledged by the rig core" in w.log.toPlainText(), 10, "the E-stop acknowledged")
        self.pause(1.0)
        self.shoot("estop", dock="Log")
        w.estop_reset.click()

    def close(self) -> None:
        self.window.close()   # the core it started shuts down after it


# Each step of the day and the scenes it shoots, in order; a step runs when it or a later one is asked for.
STEPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("connect", ("connected",)), ("run_one_trial", ("running", "done")), ("trip_and_release", ("trip", "released")),
    ("replay", ("replay",)), ("compare", ("compare_running", "compare")), ("calibration", ("calibration",)),
    ("estop", ("estop",)),
)
SCENES = tuple(scene for _, scenes in STEPS for scene in scenes)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "screenshots",
                        help="where the PNGs go (default: docs/screenshots)")
    parser.add_argument("--scenes", default=",".join(SCENES),
                        help=f"comma-separated, of: {', '.join(SCENES)} (default: all)")
    parser.add_argument("--show", action="store_true", help="on the screen instead of offscreen")
    args = parser.parse_args(argv)
    wanted = {s.strip() for s in args.scenes.split(",") if s.strip()}
    unknown = wanted - set(SCENES)
    if unknown:
        parser.error(f"--scenes: unknown {', '.join(sorted(unknown))} (known: {', '.join(SCENES)})")
    if not args.show:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    last = max(i for i, (_, scenes) in enumerate(STEPS) if wanted & set(scenes))
    with tempfile.TemporaryDirectory(prefix="uartlab-screenshots-") as work:
        director = Director(args.out, wanted, Path(work))
        try:
            for step, _ in STEPS[:last + 1]:
                print(f"{step}…")
                getattr(director, step)()
        finally:
            director.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
