"""The distribution: one `uartlab` package, nothing generic at the top of site-packages, one entry point."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]


@pytest.fixture(scope="module")
def build(tmp_path_factory) -> tuple[Path, str]:
    """The wheel as `python -m build` makes it, and what the build said."""
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(ROOT)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    (path,) = out.glob("uartlab-*.whl")
    return path, done.stdout + done.stderr


@pytest.fixture(scope="module")
def wheel(build) -> Path:
    return build[0]


@pytest.mark.slow
@pytest.mark.compute
def test_the_wheel_builds_without_warnings(build):
    """Current metadata (an SPDX license, setuptools >= 77) and every shipped folder declared: no warning
    from the packaging tools (byte-compiling notes aside: they follow PYTHONDONTWRITEBYTECODE)."""
    said = [line for line in build[1].splitlines() if "warn" in line.lower() or "deprecat" in line.lower()]
    assert [line for line in said if "byte-compiling is disabled" not in line] == []


@pytest.mark.slow
@pytest.mark.compute
def test_wheel_installs_only_under_uartlab(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/", 1)[0] for n in names}
    assert tops == {"uartlab", next(t for t in tops if t.endswith(".dist-info"))}, tops
    for sub in ("app", "sim", "drivers", "protocols", "calibration"):
        assert f"uartlab/{sub}/__init__.py" in names
    assert "uartlab/sim/data/uart.toml" in names
    assert not any(n.startswith("uartlab/tests/") for n in names)


@pytest.mark.slow
@pytest.mark.compute
def test_wheel_declares_the_console_script(wheel):
    zf = zipfile.ZipFile(wheel)
    entry = next(n for n in zf.namelist() if n.endswith("entry_points.txt"))
    assert "uartlab = uartlab.app.cli.main:main" in zf.read(entry).decode()


def test_nothing_in_the_checkout_shadows_the_installed_package():
    """Python started in the checkout puts it first on sys.path: a folder named uartlab/ there would be
    imported instead of the installed package (a plain install then finds no uartlab.sim). The package
    root's sources live in core/."""
    assert not (ROOT / "uartlab").exists()
    assert (ROOT / "core" / "__init__.py").exists()
