"""Compare view: the comparison (sim vs experiment) of the open session, shown in the window.

``uartlab compare SESSION --out FOLDER --progress`` runs as a separate process (QProcess: the comparison
runs the model for every trial and must not hold the GUI thread); its ``progress:`` lines
(app/cli/progress.py) drive a progress bar and the step shown beside it, its other lines (the model's first
compile, a session skipped) are shown as they come, and the time running counts up, so the tab is never
silent. Then the folder it wrote is shown: the paper's Tables 4-6 as tables, each trial's measured-versus-model
curves, the figures at a readable size (compare_views.py), the HTML report, and every file of the folder.
``results_folder(session)`` is where the window looks first for a session's results. The folder's files are
listed on a worker thread, as deep as compare writes them and no more than MAX_LISTED: an operator who picks
their home folder, a network share or / by mistake gets a bounded list, and the window (its E-stop
included) never waits for the walk.
"""

from __future__ import annotations

import csv
import os
import sys
import time
from pathlib import Path

from PySide6.QtCore import QProcess, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSplitter,
    QStackedWidget,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)
from uartlab.app.cli.progress import parse_line
from uartlab.app.gui.file_chooser import choose
from uartlab.app.gui.panels.compare_views import Figures, PaperTables, TrialCurves, fill_table, read_csv, table_widget
from uartlab.app.gui.tasks import Tasks

SHOWN = (".csv", ".png", ".html", ".htm", ".txt", ".json")
LISTED_DEPTH = 2      # the folder and its subfolders: compare writes figures/ and transients/ one level down
MAX_LISTED = 2000     # a full session's results are ~150 files


def shown_files(folder: Path) -> tuple[list[Path], bool]:
    """The files of ``folder`` the panel shows (by SHOWN suffix), LISTED_DEPTH levels deep, at most MAX_LISTED;
    and whether the walk stopped at that cap."""
    found: list[Path] = []
    level = [folder]
    for _ in range(LISTED_DEPTH):
        below = []
        for directory in level:
            try:
                entries = list(os.scandir(directory))
            except OSError:   # unreadable: what the operator can open is listed, the rest passed over
                continue
            for entry in sorted(entries, key=lambda e: e.name):
                try:
                    if entry.is_dir(follow_symlinks=False):
                        below.append(Path(entry.path))
                    elif Path(entry.name).suffix.lower() in SHOWN and entry.is_file():
                        found.append(Path(entry.path))
                except OSError:
                    continue
                if len(found) >= MAX_LISTED:
                    return found, True
        level = below
    return found, False


def results_folder(session_path: str | Path) -> Path:
    """Where a session's comparison results live by default: next to it, ``<stem>_compare/``."""
    p = Path(session_path)
    return p.with_name(f"{p.stem}_compare")


class ComparePanel(QWidget):
    message = Signal(str)      # for the window's log
    error = Signal(str, str)   # (what, why)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.folder: Path | None = None
        self.session: str | None = None
        self.process: QProcess | None = None
        self.output: list[str] = []          # the running comparison's lines
        self._partial = ""
        self._started_s = 0.0
        self._step = ""
        self._work_done = False
        self.folder_label = QLabel("no results folder open")
        self.folder_label.setWordWrap(True)
        open_button = QPushButton("Open results folder…")
        open_button.clicked.connect(self._browse)
        self.run_button = QPushButton("Run compare for the open session")
        self.run_button.setEnabled(False)
        self.run_button.clicked.connect(self.run_compare)
        self.progress = QProgressBar()
        self.progress.setMinimumWidth(200)
        self.progress.setVisible(False)
        self.step = QLabel("")
        self.clock = QTimer(self)
        self.clock.timeout.connect(self._show_step)

        self.tables = PaperTables()
        self.curves = TrialCurves()
        self.figures = Figures()
        self.report = QTextBrowser()
        self.report.setOpenExternalLinks(True)
        # Every file of the folder, as it is (the other tables, the report's CSVs)
        self.files = QListWidget()
        self.files.currentItemChanged.connect(lambda cur, _prev: self.show_file(cur.data(Qt.ItemDataRole.UserRole))
                                              if cur is not None else None)
        self.table = table_widget()
        self.image = QLabel()
        self.image.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
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
        self.all_files = all_files = QSplitter()
        all_files.addWidget(self.files)
        all_files.addWidget(self.stack)
        all_files.setStretchFactor(1, 4)
        self.views = QTabWidget()
        for widget, name in ((self.tables, "Tables 4-6"), (self.curves, "Trial curves"), (self.figures, "Figures"),
                             (self.report, "Report"), (all_files, "All files")):
            self.views.addTab(widget, name)

        top = QHBoxLayout()
        top.addWidget(open_button)
        top.addWidget(self.run_button)
        top.addWidget(self.progress)
        top.addWidget(self.step, 1)
        lay = QVBoxLayout(self)
        lay.addLayout(top)
        lay.addWidget(self.folder_label)
        lay.addWidget(self.views, 1)
        self._pixmap: QPixmap | None = None
        self.tasks = Tasks(lambda what, exc: self.error.emit(what, str(exc)), self)
        self._listing: Path | None = None    # the folder whose files are being listed

    def _browse(self) -> None:
        start = str(self.folder or (results_folder(self.session).parent if self.session else Path.cwd()))
        choose(self, "Comparison results", start, self.open_folder, mode="folder")

    def set_session(self, path: str | None) -> None:
        """The session open in Replay: its results are shown if they exist, and 'Run compare' targets it."""
        self.session = path
        self.run_button.setEnabled(path is not None and not self.running())
        if path is not None and results_folder(path).is_dir():
            self.open_folder(results_folder(path))

    def open_folder(self, folder: str | Path) -> None:
        folder = Path(folder)
        if not folder.is_dir():
            self.error.emit("compare", f"{folder} is not a folder")
            return
        self.folder = folder
        self.folder_label.setText(f"results: {folder}")
        try:
            found = self.tables.show_folder(folder)
            names = [row[0] for key in self.tables.tables if (folder / f"{key}.csv").is_file()
                     for row in read_csv(folder / f"{key}.csv")[1]]
            self.curves.show_folder(folder, names)
            self.figures.show_folder(folder)
            report = folder / "report.html"
            if report.is_file():
                self.report.setSearchPaths([str(folder)])
                self.report.setSource(QUrl.fromLocalFile(str(report)))
            else:
                self.report.setHtml(f"<p>No report.html in {folder}.</p>")
        except (OSError, ValueError, csv.Error) as exc:
            self.error.emit("compare", f"{folder}: {exc}")
            found = 0
        self._list_files(folder)
        self.views.setCurrentWidget(self.tables if found else self.all_files)

    def _list_files(self, folder: Path) -> None:
        self.files.clear()
        self._listing = folder
        self.browser.setHtml(f"<p>Listing the files of {folder}…</p>")
        self.stack.setCurrentWidget(self.browser)
        self.tasks.run("compare", lambda: shown_files(folder), lambda found: self._show_files(folder, found))

    def _show_files(self, folder: Path, found) -> None:
        if folder != self._listing:   # another folder was opened meanwhile
            return
        paths, capped = found   # shown_files(folder)
        # The report first, then tables, then figures: the order an operator reads them in.
        order = {".html": 0, ".htm": 0, ".csv": 1, ".png": 2}
        for p in sorted(paths, key=lambda p: (order.get(p.suffix.lower(), 3), str(p))):
            item = QListWidgetItem(str(p.relative_to(folder)))
            item.setData(Qt.ItemDataRole.UserRole, str(p))
            self.files.addItem(item)
        if capped:
            self.message.emit(f"compare: {folder} holds more than {MAX_LISTED} such files; the first {MAX_LISTED} "
                              "are listed (is it a comparison's results folder?)")
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
                fill_table(self.table, *read_csv(p), as_report=False)   # the file as it is
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
        width = min(self.image_scroll.viewport().width() - 2, self._pixmap.width())
        self.image.setPixmap(self._pixmap.scaledToWidth(max(width, 100), Qt.TransformationMode.SmoothTransformation))

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._fit_image()

    # ------------------------------------------------------------ running the comparison
    def running(self) -> bool:
        return self.process is not None and self.process.state() != QProcess.ProcessState.NotRunning

    def run_compare(self) -> None:
        if self.session is None or self.running():
            return
        out = results_folder(self.session)
        process = self.process = QProcess(self)
        process.setProcessChannelMode(QProcess.ProcessChannelMode.MergedChannels)
        process.readyReadStandardOutput.connect(lambda: self._read(process))
        process.finished.connect(lambda code, _status: self._compare_done(process, code, out))
        process.errorOccurred.connect(lambda err: self._not_started(process)
                                      if err == QProcess.ProcessError.FailedToStart else None)
        self.message.emit(f"compare: running uartlab compare {self.session} --out {out}")
        self.run_button.setEnabled(False)
        self.output, self._partial, self._work_done = [], "", False
        self.progress.setRange(0, 0)   # busy until the first count
        self.progress.setVisible(True)
        self._started_s = time.monotonic()
        self._step = "starting the comparison"
        self._show_step()
        self.clock.start(1000)
        process.start(sys.executable, ["-m", "uartlab.app.cli", "compare", self.session, "--out", str(out),
                                       "--progress"])

    def _read(self, process: QProcess) -> None:
        text = self._partial + bytes(process.readAllStandardOutput().data()).decode("utf-8", "replace")
        *lines, self._partial = text.split("\n")
        for line in (ln.rstrip("\r") for ln in lines):
            self._take(line)

    def _take(self, line: str) -> None:
        if not line.strip():
            return
        self.output.append(line)
        parsed = parse_line(line)
        if parsed is None:
            if not self._work_done:   # a note while it works (a session skipped, the model compiling): said
                self._step = line.removeprefix("compare: ")
                self.message.emit(line)
                self._show_step()
            return                    # after the work: the text tables the command prints, shown in the tab
        desc, done, total = parsed
        desc = desc.removeprefix("compare: ")
        self._work_done = desc == "done"
        if total is None:
            self.progress.setRange(0, 0)
            self._step = desc
        else:
            self.progress.setRange(0, max(total, 1))
            self.progress.setValue(done)
            self._step = f"{desc}: {done} of {total}"
        self._show_step()

    def _show_step(self) -> None:
        elapsed = int(time.monotonic() - self._started_s)
        self.step.setText(f"{self._step} ({elapsed // 60}:{elapsed % 60:02d})")

    def _not_started(self, process: QProcess) -> None:
        """No process, so no ``finished``: the tab says why and is ready again."""
        self.clock.stop()
        self.progress.setVisible(False)
        self.run_button.setEnabled(self.session is not None)
        self.step.setText(f"failed: {process.errorString()}")
        self.error.emit("compare", f"uartlab compare did not start: {process.errorString()}")

    def _compare_done(self, process: QProcess, code: int, out: Path) -> None:
        self._read(process)
        if self._partial:
            self._take(self._partial)
            self._partial = ""
        self.clock.stop()
        self.progress.setVisible(False)
        self.run_button.setEnabled(self.session is not None)
        elapsed = time.monotonic() - self._started_s
        if code != 0:
            lines = [ln for ln in self.output if parse_line(ln) is None]
            why = lines[-1] if lines else f"uartlab compare exited with {code}"
            self.step.setText(f"failed: {why}")
            self.error.emit("compare", why)
            return
        self.step.setText(f"done in {elapsed:.0f} s")
        self.message.emit(f"compare: done, results in {out}")
        self.open_folder(out)
