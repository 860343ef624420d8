"""The Compare tab's views of a results folder: the paper's Tables 4-6, each trial's measured-versus-model
curves, and the figures at a readable size.

What they read is what `uartlab compare` writes (app/compare/report.py): the tables' CSV files by the stems
``PAPER_TABLES`` declares, ``transients/<slug(trial)>.csv`` with the columns ``transient_column`` reads
back, and ``figures/*.png``.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QScrollArea,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)
from uartlab.app.compare.tables import MEASURED, PAPER_TABLES, SIMULATED, digits_for, slug, transient_column
from uartlab.app.gui.live_plots import pen

MAX_ROWS = 5000        # a table view of more rows is unreadable; the file has them all
MAX_UPSCALE = 1.5      # a figure is widened to the view up to this (beyond, the lines blur)
LIST_WIDTH = 240       # px: the list of trials or figures beside the view
CURVE_PLOTS = (("deg", "joint angles [deg]"), ("N", "tendon tensions and fingertip force [N]"))


def read_csv(path: Path) -> tuple[list[str], list[list[str]]]:
    with path.open(newline="", encoding="utf-8", errors="replace") as f:
        rows = list(csv.reader(f))
    return (rows[0] if rows else []), rows[1:MAX_ROWS + 1]


def header_text(column: str) -> str:
    """The unit on a line of its own: "DIP MAE defaults [deg]" -> "DIP MAE defaults\\n[deg]"."""
    name, sep, unit = column.rpartition(" [")
    return f"{name}\n[{unit}" if sep else column


def cell_text(value: str, column: str) -> str:
    """A number to the decimals the report uses for its column; counts and text as they are."""
    try:
        int(value)
        return value
    except ValueError:
        pass
    try:
        return f"{float(value):.{digits_for(column)}f}"
    except ValueError:
        return value


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def fill_table(table: QTableWidget, header: list[str], rows: list[list[str]], as_report: bool = True) -> None:
    """Numbers right-aligned (``as_report``: to the report's decimals, else as in the file), every column as
    wide as its widest cell or header line (headers never wrap)."""
    table.clear()
    table.setColumnCount(len(header))
    table.setRowCount(len(rows))
    table.setHorizontalHeaderLabels([header_text(h) for h in header])
    for r, row in enumerate(rows):
        for c, v in enumerate(row[: len(header)]):
            item = QTableWidgetItem(cell_text(v, header[c]) if as_report else v)
            if _is_number(v):
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            table.setItem(r, c, item)
    table.resizeColumnsToContents()
    table.resizeRowsToContents()


def table_widget() -> QTableWidget:
    table = QTableWidget()
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.horizontalHeader().setDefaultAlignment(Qt.AlignmentFlag.AlignCenter)  # no word wrap: lines as given
    table.verticalHeader().setVisible(False)
    return table


class PaperTables(QScrollArea):
    """Tables 4-6 one under the other, each as tall as its rows (the page scrolls, not each table)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWidgetResizable(True)
        page = QWidget()
        lay = QVBoxLayout(page)
        self.titles: dict[str, QLabel] = {}
        self.tables: dict[str, QTableWidget] = {}
        for key, title in PAPER_TABLES.items():
            label = self.titles[key] = QLabel(f"<b>{title}</b>")
            table = self.tables[key] = table_widget()
            table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
            lay.addWidget(label)
            lay.addWidget(table)
        self.empty = QLabel("")
        lay.addWidget(self.empty)
        lay.addStretch(1)
        self.setWidget(page)

    def show_folder(self, folder: Path) -> int:
        """Fill the tables found in the folder; returns how many there were."""
        found = 0
        for key, table in self.tables.items():
            path = folder / f"{key}.csv"
            there = path.is_file()
            self.titles[key].setVisible(there)
            table.setVisible(there)
            if not there:
                continue
            found += 1
            fill_table(table, *read_csv(path))
            # every row shown: the header's height for its two lines, the rows', a horizontal scroll bar
            height = (table.horizontalHeader().sizeHint().height() + table.verticalHeader().length()
                      + table.horizontalScrollBar().sizeHint().height() + 2 * table.frameWidth())
            table.setFixedHeight(height)
        self.empty.setText("" if found else f"No tables 4-6 in {folder}.")
        return found


class TrialCurves(QSplitter):
    """Pick a trial: its measured mean curves (solid) and the model's (dashed), joint angles and forces."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.trials = QListWidget()
        self.trials.currentItemChanged.connect(lambda cur, _prev: self.show_trial(cur.data(Qt.ItemDataRole.UserRole))
                                               if cur is not None else None)
        self.view = pg.GraphicsLayoutWidget()
        self.plots: dict[str, pg.PlotItem] = {}
        self.legends: dict[str, pg.LegendItem] = {}
        for row, (unit, label) in enumerate(CURVE_PLOTS):
            plot = self.plots[unit] = self.view.addPlot(row=row, col=0)
            plot.setLabel("left", label)
            plot.setLabel("bottom", "time from actuation start [s]")
            plot.showGrid(x=True, y=True, alpha=0.2)
            legend = self.legends[unit] = pg.LegendItem(labelTextSize="8pt", colCount=2)
            self.view.addItem(legend, row=row, col=1)   # beside the plot: never on the data
        self.addWidget(self.trials)
        self.addWidget(self.view)
        self.setStretchFactor(1, 4)
        self.setSizes([LIST_WIDTH, 4 * LIST_WIDTH])
        self.shown: dict[str, list[str]] = {}   # unit -> the legend's names, as drawn

    def show_folder(self, folder: Path, names: list[str]) -> None:
        """List the trials with curves in the folder (``names``: the trials' names from its tables)."""
        self.trials.clear()
        by_file = {slug(n): n for n in names}
        for path in sorted((folder / "transients").glob("*.csv")):
            item = QListWidgetItem(by_file.get(path.stem, path.stem))
            item.setData(Qt.ItemDataRole.UserRole, str(path))
            self.trials.addItem(item)
        if self.trials.count():
            self.trials.setCurrentRow(0)

    def show_trial(self, path: str) -> None:
        header, rows = read_csv(Path(path))
        values = [[float(v) if v else float("nan") for v in row] for row in rows]
        t = [r[0] for r in values]
        for unit in self.plots:
            self.plots[unit].clear()
            self.legends[unit].clear()
            self.shown[unit] = []
        for c, column in enumerate(header):
            parsed = transient_column(column)
            if parsed is None or parsed[1] not in (MEASURED, SIMULATED) or parsed[3] not in self.plots:
                continue
            name, kind, label, unit = parsed
            # each tendon, joint and force axis in its colour (app/palette.py); "FX" is the force's X
            key = name[1:] if name in ("FX", "FY", "FZ") else name
            curve = self.plots[unit].plot(t, [r[c] for r in values], pen=pen(key, dashed=kind == SIMULATED, width=2))
            text = f"{name} measured" if kind == MEASURED else f"{name} model ({label})"
            self.legends[unit].addItem(curve, text)
            self.shown[unit].append(text)


class Figures(QSplitter):
    """Pick a figure: it fills the view's width (up to ``MAX_UPSCALE`` of its own; "full size": its own), the
    page scrolls."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.names = QListWidget()
        self.names.currentItemChanged.connect(lambda cur, _prev: self.show_figure(cur.data(Qt.ItemDataRole.UserRole))
                                              if cur is not None else None)
        self.image = QLabel()
        self.image.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
        self.scroll_area = QScrollArea()
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setWidget(self.image)
        self.full_size = QCheckBox("full size (scroll to see it all)")
        self.full_size.toggled.connect(self.fit)
        right = QWidget()
        column = QVBoxLayout(right)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.full_size)
        column.addWidget(self.scroll_area, 1)
        self.addWidget(self.names)
        self.addWidget(right)
        self.setStretchFactor(1, 5)
        self.setSizes([LIST_WIDTH, 4 * LIST_WIDTH])
        self.pixmap: QPixmap | None = None

    def show_folder(self, folder: Path) -> None:
        self.names.clear()
        for path in sorted((folder / "figures").glob("*.png")):
            item = QListWidgetItem(path.stem)
            item.setData(Qt.ItemDataRole.UserRole, str(path))
            self.names.addItem(item)
        if self.names.count():
            self.names.setCurrentRow(0)

    def show_figure(self, path: str) -> None:
        self.pixmap = QPixmap(path)
        self.fit()

    def fit(self) -> None:
        if self.pixmap is None or self.pixmap.isNull():
            return
        native = self.pixmap.width()
        fitted = min(self.scroll_area.viewport().width() - 2, int(native * MAX_UPSCALE))
        width = native if self.full_size.isChecked() else fitted
        self.image.setPixmap(self.pixmap.scaledToWidth(max(width, 100), Qt.TransformationMode.SmoothTransformation))

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self.fit()

    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)   # filled while hidden, the view had no width yet
        self.fit()

