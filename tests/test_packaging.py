"""The distribution: one `uartlab` package, nothing generic at the top of site-packages, one entry point."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", str(out)],
                   check=True, timeout=300)
    (path,) = out.glob("uartlab-*.whl")
    return path


@pytest.mark.slow
def test_wheel_installs_only_under_uartlab(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/", 1)[0] for n in names}
    assert tops == {"uartlab", next(t for t in tops if t.endswith(".dist-info"))}, tops
    for sub in ("app", "sim", "drivers", "protocols", "calibration"):
        assert f"uartlab/{sub}/__init__.py" in names
    assert "uartlab/sim/data/uart.toml" in names
    assert not any(n.startswith("uartlab/tests/") for n in names)


@pytest.mark.slow
def test_wheel_declares_the_console_script(wheel):
    zf = zipfile.ZipFile(wheel)
    entry = next(n for n in zf.namelist() if n.endswith("entry_points.txt"))
    assert "uartlab = uartlab.app.cli:main" in zf.read(entry).decode()
