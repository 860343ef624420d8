"""The window's settings: the operator's file unless a test or benchmark says otherwise, and never /dev/null."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QCoreApplication  # noqa: E402
from uartlab.app import user_config  # noqa: E402
from uartlab.app.gui import settings as gui_settings  # noqa: E402
from uartlab.app.gui.app import close_for_good  # noqa: E402
from uartlab.app.gui.main_window import MainWindow  # noqa: E402


def _dev_null_is_a_device() -> bool:
    return stat.S_ISCHR(os.stat(os.devnull).st_mode)


def test_the_test_session_never_uses_the_operators_settings(qtbot):
    folder = os.environ[user_config.CONFIG_DIR_ENV]  # set for the whole session by conftest.py
    assert "uartlab-test-config-" in folder
    window = MainWindow()
    qtbot.addWidget(window)
    assert Path(window.settings.fileName()) == Path(folder) / gui_settings.FILE_NAME


def test_qts_own_user_settings_are_in_the_test_sessions_folder_too():
    from PySide6.QtCore import QSettings

    qt_project = QSettings(QSettings.Scope.UserScope, "QtProject")  # where a QFileDialog saves its state
    assert Path(qt_project.fileName()).parent == Path(os.environ[user_config.CONFIG_DIR_ENV])


def test_the_operators_settings_are_in_the_user_config_folder(monkeypatch):
    import platformdirs

    monkeypatch.delenv(user_config.CONFIG_DIR_ENV)
    assert user_config.config_dir() == Path(platformdirs.user_config_dir("uartlab", appauthor=False))
    monkeypatch.setenv(user_config.CONFIG_DIR_ENV, "/somewhere/else")
    assert user_config.config_dir() == Path("/somewhere/else")


def test_scratch_settings_are_saved_in_their_own_folder_and_removed(qtbot):
    with gui_settings.scratch_settings() as settings:
        path = Path(settings.fileName())
        window = MainWindow(settings)
        window.close()  # saves every setting and syncs: Qt writes a temp file and renames it over the target
        assert path.is_file() and "geometry" in path.read_text()
        assert path.parent != Path(os.devnull).parent
        close_for_good(window)   # not closed again once the folder is gone (the save would make it anew)
    QCoreApplication.processEvents()
    assert not path.parent.exists()
    assert _dev_null_is_a_device()


@pytest.mark.slow
@pytest.mark.compute
def test_bench_gui_leaves_dev_null_the_operators_settings_and_the_temporary_folder_alone(tmp_path):
    operator, temporary = tmp_path / "operator-config", tmp_path / "tmp"
    temporary.mkdir()
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", UARTLAB_CONFIG_DIR=str(operator), TMPDIR=str(temporary))
    proc = subprocess.run([sys.executable, "-m", "uartlab.app.cli", "bench", "gui", "--seconds", "0.2",
                           "--hours", "0.001", "--json"], capture_output=True, text=True, env=env, timeout=240)
    assert proc.returncode in (0, 1), proc.stderr  # 1: the fps goal missed in 0.2 s on a loaded machine
    assert "memory" in json.loads(proc.stdout)
    assert _dev_null_is_a_device()
    assert not operator.exists()
    assert list(temporary.iterdir()) == []    # its scratch settings removed, not made anew at exit
