"""`uartlab bench core` (app/bench/core.py): a real rig core on the twin rig, started, left at rest, stopped.
No speed goal is asserted here (the machine is shared); the numbers must be physical and the core gone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow   # a rig core, its twin rig and the live model, twice


def _cores_serving() -> set[int]:
    """Processes of `uartlab rig serve` on a bench's address."""
    pids = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"serve" in argv and any(b"uartlab-bench-core-" in a for a in argv):
                pids.add(int(entry.name))
    return pids


def test_the_bench_starts_rests_and_stops_a_real_core_and_reports_each_process(tmp_path):
    before = set(Path(tempfile.gettempdir()).glob("uartlab-bench-core-*"))
    done = subprocess.run([sys.executable, "-m", "uartlab.app.cli", "bench", "core", "--rounds", "2",
                           "--settle-seconds", "1", "--idle-seconds", "1", "--json"],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["rounds"] == 2 and len(report["results"]) == 2
    # the core and what it starts on a twin rig: its twin rig and its live model, each a process of its own
    assert set(report["processes"]) == {"core", "twin", "live model"}, report["processes"]
    cpus = os.cpu_count() or 1
    for name, p in report["processes"].items():
        assert p["cpu_to_ready_s"] > 0 and p["cpu_settling_s"] >= 0, name
        assert 0 <= p["idle_cpu_percent"] < 100 * cpus, name
    for name in ("core", "twin"):   # at rest the devices stream and the core reads them
        assert report["processes"][name]["idle_cpu_percent"] > 0, name
    assert report["idle_cpu_percent_total"] == pytest.approx(
        sum(p["idle_cpu_percent"] for p in report["processes"].values()))
    # a core starts well after a bare interpreter, and stops
    assert report["ready_median_s"] > report["bare_median_s"] > 0 and report["ready_ratio_to_bare"] > 1
    assert 0 < report["stop_median_s"] < 60
    # nothing left behind: no core serving, no scratch folder
    assert not _cores_serving()
    assert set(Path(tempfile.gettempdir()).glob("uartlab-bench-core-*")) == before
    assert list(tmp_path.iterdir()) == []
