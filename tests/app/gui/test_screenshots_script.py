"""docs/make_screenshots.py, as a maintainer runs it to refresh the operator docs' pictures: the real window
starts its rig core on the twin rig, connects, and the picture shows the live rig, not an empty window."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.realtime, pytest.mark.slow]
pytest.importorskip("PySide6")

SCRIPT = Path(__file__).parents[3] / "docs" / "make_screenshots.py"


def test_the_script_takes_a_real_picture_of_the_connected_twin_rig(tmp_path):
    done = subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path), "--scenes", "connected"],
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    from PySide6.QtGui import QImage

    image = QImage(str(tmp_path / "connected.png"))
    assert image.width() >= 1600 and image.height() >= 1000
    assert [p.name for p in tmp_path.iterdir()] == ["connected.png"]   # only what was asked for


def test_an_unknown_scene_is_one_line_and_exit_2(tmp_path):
    done = subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path), "--scenes", "lunch"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "--scenes: unknown lunch" in done.stderr
    assert not any(tmp_path.iterdir())
