"""The window's notification area: problems said in place, never in a modal dialog.

A modal message box takes the keyboard and mouse from the window behind it: while one is open the E-stop
button cannot be clicked, and Esc closes the box instead of stopping the servos. So every problem the
window reports lands here, above the views: what happened and the next step in the operator's words, a
colour for how bad it is, a button to dismiss it. The newest few stay visible; the log keeps them all.
"""

from __future__ import annotations

import html
import os
import time
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

VISIBLE = 3   # notifications shown at once; older ones are in the log

STYLES = {
    "error": "background: #b71c1c; color: white;",
    "warning": "background: #e65100; color: white;",
    "info": "background: #1565c0; color: white;",
}


# The next step for a problem, by what it concerns (the first word(s) of its subject), in the operator's words.
NEXT_STEPS = (
    ("E-STOP FAILED", "switch the servos off at the rig's hardware E-stop now"),
    ("fault in", "a run going stops with the servos holding; check that device's cable and power, then "
                 "Disconnect and Connect"),
    ("device", "check that device's cable and power, then Disconnect and Connect"),
    ("connect", "check the rig file and that every device is powered and plugged in, then press Connect again"),
    ("recording", "check the recording folder (it must exist, be writable and have free space), then start "
                  "recording again"),
    ("suite", "correct the suite file where the message says, then choose it again"),
    ("protocol", "put right what the message names, then press Start again"),
    ("open session", "choose another session file"),
)


def next_step_for(what: str) -> str:
    return next((step for subject, step in NEXT_STEPS if what.startswith(subject)), "details are in the Log tab")


def joined_subject(first: str, then: str) -> str:
    """"fault in actuators" and "fault in daq" -> "fault in actuators, daq" (the words they share said once)."""
    cut = os.path.commonprefix([first, then]).rfind(" ") + 1
    if then[cut:] in first[cut:].split(", "):
        return first
    return f"{first}, {then[cut:]}"


@dataclass(frozen=True)
class Notice:
    level: str          # "error", "warning", "info"
    what: str           # the subject: "recording", "fault in daq", "connect"
    text: str           # what happened, one sentence
    next_step: str      # what the operator does about it
    time_s: float


class NotificationArea(QWidget):
    """A stack of dismissable notices; empty (and taking no space) when there is nothing to say."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.notices: list[Notice] = []
        self._rows: list[QFrame] = []
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(4, 2, 4, 2)
        self._layout.setSpacing(2)
        self.setVisible(False)

    def notify(self, level: str, what: str, text: str, next_step: str = "") -> Notice:
        """A new notice; one that says what a notice shown already says (two streams of a twin rig whose
        process died) joins it instead, naming both subjects: the operator reads each problem once."""
        shown = range(max(0, len(self.notices) - VISIBLE), len(self.notices))
        same = next((i for i in shown if (self.notices[i].level, self.notices[i].text, self.notices[i].next_step)
                     == (level, text, next_step)), None)
        if same is not None:
            first = self.notices[same]
            notice = Notice(level, joined_subject(first.what, what), text, next_step, first.time_s)
            self.notices[same] = notice
        else:
            notice = Notice(level, what, text, next_step, time.time())
            self.notices.append(notice)
        self._rebuild()
        return notice

    def dismiss(self, notice: Notice) -> None:
        if notice in self.notices:
            self.notices.remove(notice)
            self._rebuild()

    def dismiss_all(self) -> None:
        self.notices.clear()
        self._rebuild()

    def visible_texts(self) -> list[str]:
        """What the operator reads now, newest first (tests and screenshots)."""
        labels = [row.findChild(QLabel) for row in self._rows]
        return [label.text() for label in labels if label is not None]

    def _rebuild(self) -> None:
        for row in self._rows:
            self._layout.removeWidget(row)
            row.deleteLater()
        self._rows = [self._row(n) for n in reversed(self.notices[-VISIBLE:])]
        for row in self._rows:
            self._layout.addWidget(row)
        hidden = len(self.notices) - VISIBLE
        if hidden > 0:
            more = QFrame()
            lay = QHBoxLayout(more)
            lay.setContentsMargins(6, 0, 6, 0)
            lay.addWidget(QLabel(f"{hidden} earlier notice{'s' if hidden > 1 else ''}: see the Log tab"))
            clear = QPushButton("Dismiss all")
            clear.clicked.connect(self.dismiss_all)
            lay.addStretch(1)
            lay.addWidget(clear)
            self._layout.addWidget(more)
            self._rows.append(more)
        self.setVisible(bool(self.notices))

    def _row(self, notice: Notice) -> QFrame:
        row = QFrame()
        row.setStyleSheet(f"QFrame {{ {STYLES.get(notice.level, STYLES['info'])} border-radius: 3px; }}")
        lay = QHBoxLayout(row)
        lay.setContentsMargins(8, 3, 4, 3)
        stamp = time.strftime("%H:%M:%S", time.localtime(notice.time_s))
        step = f" — <b>{html.escape(notice.next_step)}</b>" if notice.next_step else ""
        label = QLabel(f"{stamp}  {html.escape(notice.what)}: {html.escape(notice.text)}{step}")
        label.setTextFormat(Qt.TextFormat.RichText)
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        close = QPushButton("×")
        close.setFixedWidth(28)
        close.setToolTip("Dismiss (it stays in the log)")
        close.clicked.connect(lambda: self.dismiss(notice))
        lay.addWidget(label, 1)
        lay.addWidget(close)
        return row
