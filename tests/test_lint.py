"""ruff is part of the test suite (it comes with the [test] extra), so a lint error fails CI."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path


def test_ruff_is_clean():
    beside_python = Path(sys.executable).with_name("ruff")
    ruff = str(beside_python) if beside_python.exists() else shutil.which("ruff")
    assert ruff, "ruff is not installed: pip install -e '.[test]'"
    proc = subprocess.run([ruff, "check", "."], cwd=Path(__file__).parents[1], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
