"""Where the window keeps what it remembers (the last rig config, folders, the suite, the layout).

The operator's settings live in the operator's uartlab folder (app/user_config.py), as an INI file with
the name Qt's default ``QSettings("uartlab", "uartlab-gui")`` used there, so nothing remembered is lost.
Tests set ``UARTLAB_CONFIG_DIR`` for their whole session (tests/conftest.py); benchmarks use
``scratch_settings()``, a folder of their own that is removed afterwards.

Never point QSettings at a path that is not a plain file of ours (``os.devnull``): Qt saves by writing a
temporary file and renaming it over the target, so as root it would replace /dev/null with a regular file.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from PySide6.QtCore import QSettings
from uartlab.app.user_config import config_dir

FILE_NAME = "uartlab-gui.conf"


def operator_settings() -> QSettings:
    """The settings `uartlab gui` remembers between runs."""
    return QSettings(str(config_dir() / FILE_NAME), QSettings.Format.IniFormat)


@contextmanager
def scratch_settings() -> Iterator[QSettings]:
    """Settings in a temporary folder of their own, removed on leaving: the operator's stay untouched."""
    with tempfile.TemporaryDirectory(prefix="uartlab-settings-") as folder:
        settings = QSettings(str(Path(folder) / FILE_NAME), QSettings.Format.IniFormat)
        try:
            yield settings
        finally:
            settings.sync()
