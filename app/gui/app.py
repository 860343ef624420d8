"""`uartlab gui [--core ADDR] [--rig rig.toml] [--replay FILE]`: the operator's window.

With ``--rig`` or ``--core`` the window attaches at start to the rig core at ``--core`` (app/serve's
default address without it), or starts one (`uartlab rig serve --rig`, the rig.toml given or remembered)
if none answers there; with ``--replay`` the file is opened for replay. Without them the window opens with
the last rig configuration filled in (QSettings) and nothing attached.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from uartlab.app.palette import PLOT_BACKGROUND, PLOT_FOREGROUND


def qt_app():
    """The QApplication (one per process), with pyqtgraph on PySide6."""
    os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")
    try:
        import pyqtgraph as pg
        from PySide6.QtWidgets import QApplication
    except ImportError as exc:  # PySide6 installed but a system library it needs is not (libEGL ...)
        from uartlab.app.gui.qt_platform import explain_import_error

        raise explain_import_error(exc) from exc

    pg.setConfigOptions(antialias=False, background=PLOT_BACKGROUND, foreground=PLOT_FOREGROUND)
    if QApplication.instance() is None:
        _quiet_offscreen_size_hints()
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("uartlab-gui")
    app.setOrganizationName("uartlab")
    return app


def close_for_good(window) -> None:
    """Close ``window`` and delete it now, not at some later turn of the event loop: a window that outlived
    its scratch settings (app/gui/settings.py) would be closed again at exit and save into their removed
    folder, making it anew."""
    from PySide6.QtCore import QCoreApplication, QEvent

    window.close()
    window.deleteLater()
    QCoreApplication.sendPostedEvents(window, QEvent.Type.DeferredDelete)


# Qt's offscreen platform (tests, benchmarks, screenshots) warns this on every window resize: not the
# operator's concern, and a stream of it hides what is.
OFFSCREEN_NOISE = "This plugin does not support propagateSizeHints()"


def _quiet_offscreen_size_hints() -> None:
    """Drop Qt's offscreen size-hint warning; every other Qt message goes where Qt would send it."""
    from PySide6.QtCore import qInstallMessageHandler

    previous = None

    def handler(kind, context, message: str) -> None:
        if message == OFFSCREEN_NOISE:
            return
        if previous is not None:
            previous(kind, context, message)
        else:
            sys.stderr.write(message + "\n")

    global _message_handler
    _message_handler = handler   # Qt keeps only a pointer: the function must outlive this call
    previous = qInstallMessageHandler(handler)


_message_handler = None


def main(args: argparse.Namespace) -> int:
    from uartlab.app.gui.qt_platform import check

    if args.rig is not None:
        from uartlab.app.cli.extras import require

        require("rig")  # the twin rig and the hardware both run through the [rig] drivers
    check()  # before the QApplication: Qt aborts the process when its platform plugin cannot load
    from uartlab.app.rig.config import TWIN_RIG

    rig = None if args.rig is None else Path(args.rig)
    rig_file = None if str(rig) == TWIN_RIG else rig   # the twin rig has no file
    replay = None if args.replay is None else Path(args.replay)
    for path in (rig_file, replay):
        if path is not None and not path.exists():
            raise FileNotFoundError(f"{path}: no such file")
    if args.core is not None:   # a malformed address is one line here, not a window that cannot connect
        from uartlab.app.serve.endpoints import endpoints_for

        endpoints_for(args.core)
    from uartlab.app.run.realtime import raise_window_priority

    raise_window_priority()   # before Qt's and the window's threads start: they inherit it
    app = qt_app()
    from uartlab.app.gui.main_window import MainWindow

    window = MainWindow(core_address=args.core)
    window.resize(1600, 1000)
    window.show()
    if rig is not None or args.core is not None:   # attach at start: to the core named, or one on this rig
        config = "" if rig_file is None else str(rig_file.resolve())
        if rig is not None:
            window.rig_panel.config_edit.setText(config)
        window.ops.connect_rig(config if rig is not None else window.rig_panel.config_edit.text().strip())
    if replay is not None:
        window.ops.open_replay(str(replay.resolve()))
    return app.exec()
