"""File and folder choosers that never block the window.

Qt's static ``QFileDialog.get...`` functions run a modal dialog in a nested event loop: while one is open
the operator cannot click the E-stop. These open Qt's own (non-native: a native chooser is modal on some
desktops) dialog without modality and call back when the operator has chosen; cancelling calls nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QWidget

MODES = {"file": QFileDialog.FileMode.ExistingFile, "files": QFileDialog.FileMode.ExistingFiles,
         "folder": QFileDialog.FileMode.Directory, "save": QFileDialog.FileMode.AnyFile}


def choose(parent: QWidget, title: str, start: str, on_chosen: Callable, *, mode: str = "file",
           name_filter: str = "") -> QFileDialog:
    """Show a chooser; ``on_chosen(path)`` (mode "files": ``on_chosen([paths])``) once the operator picks."""
    dialog = QFileDialog(parent, title, start, name_filter)
    dialog.setOption(QFileDialog.Option.DontUseNativeDialog)
    dialog.setWindowModality(Qt.WindowModality.NonModal)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.setFileMode(MODES[mode])
    if mode == "folder":
        dialog.setOption(QFileDialog.Option.ShowDirsOnly)
    if mode == "save":   # a new file's name; Qt asks before replacing an existing one
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
    if mode == "files":
        dialog.filesSelected.connect(lambda paths: paths and on_chosen(list(paths)))
    else:
        dialog.fileSelected.connect(lambda path: path and on_chosen(path))
    dialog.show()
    return dialog
