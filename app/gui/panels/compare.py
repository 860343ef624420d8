"""Compare view: the tables and figures of ``uartlab compare`` (sim vs experiment) for the open session.

It shows a folder of results as the comparison writes them: CSV tables in a table view, PNG figures
scaled to the view, and an HTML report (Qt's rich-text browser: tables, headings and images render; no
JavaScript). ``results_folder(session)`` is where the window looks first for a session's results; the
"Run compare" button starts ``uartlab compare SESSION --out FOLDER`` as a separate process (QProcess:
the comparison runs the model for every trial and must not hold the GUI thread), then shows the folder.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

from PySide6.QtCore import QProcess, Qt, QUrl, Signal
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QSplitter,
    QStackedWidget,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)
from uartlab.app.gui.file_chooser import choose

SHOWN = (".csv", ".png", ".html", ".htm", ".txt", ".json")
MAX_ROWS = 5000  # a table view of more rows is unreadable; the file has them all


def results_folder(session_path: str | Path) -> Path:
    """Where a session's comparison results live by default: next to it, ``<stem>_compare/``."""
    p = Path(session_path)
    return p.with_name(f"{p.stem}_compare")


def read_csv(path: Path) -> tuple[list[str], list[list[str]]]:
    with path.open(newline="", encoding="utf-8", errors="replace") as f:
        rows = list(csv.reader(f))
    return (rows[0] if rows else []), rows[1:MAX_ROWS + 1]


class ComparePanel(QWidget):
    message = Signal(str)      # for the window's log
    error = Signal(str, str)   # (what, why)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.folder: Path | None = None
        self.session: str | None = None
        self.process: QProcess | None = None
        self.folder_label = QLabel("no results folder open")
        self.folder_label.setWordWrap(True)
        open_button = QPushButton("Open results folder…")
        open_button.clicked.connect(self._browse)
        self.run_button = QPushButton("Run compare for the open session")
        self.run_button.setEnabled(False)
        self.run_button.clicked.connect(self.run_compare)
        self.files = QListWidget()
        self.files.currentItemChanged.connect(lambda cur, _prev: self.show_file(cur.data(Qt.ItemDataRole.UserRole))
                                              if cur is not None else None)
        self.table = QTableWidget()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.image = QLabel()
        self.image.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.image_scroll = QScrollArea()
        self.image_scroll.setWidgetResizable(True)
        self.image_scroll.setWidget(self.image)
        self.browser = QTextBrowser()
        self.browser.setOpenExternalLinks(True)
        self.stack = QStackedWidget()
        for w in (self.browser, self.table, self.image_scroll):
            self.stack.addWidget(w)
        self.browser.setHtml("<p>Open a session's comparison results (a folder of CSV tables and PNG figures, "
                             "or its HTML report), or run the comparison for the session open in Replay.</p>")
        top = QHBoxLayout()
        top.addWidget(open_button)
        top.addWidget(self.run_button)
        top.addWidget(self.folder_label, 1)
        split = QSplitter()
        split.addWidget(self.files)
        split.addWidget(self.stack)
        split.setStretchFactor(1, 4)
        lay = QVBoxLayout(self)
        lay.addLayout(top)
        lay.addWidget(split, 1)
        self._pixmap: QPixmap | None = None

    def _browse(self) -> None:
        start = str(self.folder or (results_folder(self.session).parent if self.session else Path.cwd()))
        choose(self, "Comparison results", start, self.open_folder, mode="folder")

    def set_session(self, path: str | None) -> None:
        """The session open in Replay: its results are shown if they exist, and 'Run compare' targets it."""
        self.session = path
        self.run_button.setEnabled(path is not None)
        if path is not None and results_folder(path).is_dir():
            self.open_folder(results_folder(path))

    def open_folder(self, folder: str | Path) -> None:
        folder = Path(folder)
        if not folder.is_dir():
            self.error.emit("compare", f"{folder} is not a folder")
            return
        self.folder = folder
        self.folder_label.setText(str(folder))
        self.files.clear()
        paths = sorted(p for p in folder.rglob("*") if p.suffix.lower() in SHOWN and p.is_file())
        # The report first, then tables, then figures: the order an operator reads them in.
        order = {".html": 0, ".htm": 0, ".csv": 1, ".png": 2}
        for p in sorted(paths, key=lambda p: (order.get(p.suffix.lower(), 3), str(p))):
            item = QListWidgetItem(str(p.relative_to(folder)))
            item.setData(Qt.ItemDataRole.UserRole, str(p))
            self.files.addItem(item)
        if self.files.count():
            self.files.setCurrentRow(0)
        else:
            self.browser.setHtml(f"<p>No CSV, PNG or HTML files in {folder}.</p>")
            self.stack.setCurrentWidget(self.browser)

    def show_file(self, path: str) -> None:
        p = Path(path)
        suffix = p.suffix.lower()
        try:
            if suffix == ".csv":
                header, rows = read_csv(p)
                self.table.clear()
                self.table.setColumnCount(len(header))
                self.table.setHorizontalHeaderLabels(header)
                self.table.setRowCount(len(rows))
                for r, row in enumerate(rows):
                    for c, v in enumerate(row[: len(header)]):
                        self.table.setItem(r, c, QTableWidgetItem(v))
                self.table.resizeColumnsToContents()
                self.stack.setCurrentWidget(self.table)
            elif suffix == ".png":
                self._pixmap = QPixmap(str(p))
                if self._pixmap.isNull():
                    raise ValueError("not a readable PNG image")
                self._fit_image()
                self.stack.setCurrentWidget(self.image_scroll)
            elif suffix in (".html", ".htm"):
                self.browser.setSearchPaths([str(p.parent)])
                self.browser.setSource(QUrl.fromLocalFile(str(p)))
                self.stack.setCurrentWidget(self.browser)
            else:
                self.browser.setPlainText(p.read_text(encoding="utf-8", errors="replace"))
                self.stack.setCurrentWidget(self.browser)
        except (OSError, ValueError, csv.Error) as exc:
            self.error.emit("compare", f"{p}: {exc}")

    def _fit_image(self) -> None:
        if self._pixmap is None:
            return
        size = self.image_scroll.viewport().size()
        self.image.setPixmap(self._pixmap.scaled(size, Qt.AspectRatioMode.KeepAspectRatio,
                                                 Qt.TransformationMode.SmoothTransformation))

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._fit_image()

    def run_compare(self) -> None:
        running = self.process is not None and self.process.state() != QProcess.ProcessState.NotRunning
        if self.session is None or running:
            return
        out = results_folder(self.session)
        process = self.process = QProcess(self)
        process.setProcessChannelMode(QProcess.ProcessChannelMode.MergedChannels)
        process.finished.connect(lambda code, _status: self._compare_done(process, code, out))
        self.message.emit(f"compare: running uartlab compare {self.session} --out {out}")
        self.run_button.setEnabled(False)
        process.start(sys.executable, ["-m", "uartlab.app.cli", "compare", self.session, "--out", str(out)])

    def _compare_done(self, process: QProcess, code: int, out: Path) -> None:
        text = bytes(process.readAll().data()).decode("utf-8", "replace").strip()
        self.run_button.setEnabled(self.session is not None)
        if code != 0:
            self.error.emit("compare", text.splitlines()[-1] if text else f"uartlab compare exited with {code}")
            return
        self.message.emit(f"compare: done, results in {out}")
        self.open_folder(out)
