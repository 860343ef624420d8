"""The examples run as a researcher would run them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).parents[1] / "examples"


def test_moment_arm_sweep_runs_and_the_arm_matters(tmp_path):
    png = tmp_path / "sweep.png"
    proc = subprocess.run([sys.executable, str(EXAMPLES / "moment_arm_sweep.py"), "--out", str(png)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    rows = [line.split() for line in proc.stdout.splitlines() if line.startswith("  ")]
    mcp = [float(r[4]) for r in rows]  # "scale MCP_AB v MCP_FE v ..." -> the MCP_FE value
    assert len(mcp) == 5 and mcp[-1] != mcp[0]
    assert png.stat().st_size > 10_000
