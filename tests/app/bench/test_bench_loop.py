"""`uartlab bench loop` (app/bench/loop.py): the report's structure, and that its numbers are physical.

No timing goal is asserted here (the machine is shared); the goals are the bench's to report."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest
from uartlab.app.bench.loop import SETUPS, daq_latencies, interval_stats, setups


def test_interval_and_latency_statistics_from_tick_times():
    period = 0.01
    ticks = np.arange(0, 101) * period
    ticks[50:] += 0.035              # one stall: the interval 45 ms, later than two periods
    s = interval_stats(ticks, period)
    assert s["ticks"] == 101 and s["late_ticks"] == 1
    assert s["median_ms"] == pytest.approx(10.0) and s["max_ms"] == pytest.approx(45.0)
    # DAQ at 1 kHz in 10 ms blocks arriving 3 ms after their last sample, seen at the next tick
    ages = []
    for t in ticks:
        newest = math.floor((t - 0.012) / 0.010) * 0.010 + 0.009  # the newest sample delivered by t
        ages.append(t - newest)
    newest_lat, oldest_lat = daq_latencies(ticks, np.array(ages), 1000.0)
    assert len(newest_lat) > 50 and np.all(newest_lat >= 0.003 - 1e-9)
    assert np.all(oldest_lat >= newest_lat) and np.all(oldest_lat <= newest_lat + 0.060)


def test_with_load_doubles_the_configurations():
    assert [s.load for s in setups(2)] == [0] * len(SETUPS) + [2] * len(SETUPS)
    assert setups(0) == list(SETUPS)


@pytest.mark.slow
@pytest.mark.timeout(900)  # six processes that each start a twin rig: ~1 min idle, several on a loaded box
def test_the_bench_runs_every_configuration_in_its_own_process_and_reports_them(tmp_path):
    out = tmp_path / "loop.json"
    done = subprocess.run([sys.executable, "-m", "uartlab.app.cli", "bench", "loop", "--seconds", "1.5",
                           "--max-rates", "100", "200", "--max-rate-seconds", "1", "--json", str(out)],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    for s in SETUPS:
        assert s.name in done.stdout
    assert "highest sustained rate" in done.stdout
    m = json.loads(out.read_text())
    assert [r["setup"]["name"] for r in m["results"]] == [s.name for s in SETUPS]
    assert [t["rate_hz"] for t in m["rate_tries"]] == [100.0, 200.0]
    assert m["max_sustained_hz"] in (None, 100.0, 200.0)
    for r in m["results"] + m["rate_tries"]:
        assert "error" not in r, r
        i, period_ms = r["interval"], 1e3 / r["rate_hz"]
        # physical: ticks came, at about the rate asked (a loaded box skips some, never runs ahead)
        assert i["ticks"] >= 0.2 * r["rate_hz"] * r["seconds"] and i["ticks"] <= r["rate_hz"] * r["seconds"] + 2
        assert 0 < i["median_ms"] <= i["p99_ms"] <= i["max_ms"] < 60_000
        assert i["median_ms"] > 0.5 * period_ms  # sleeping to deadlines: never much faster than the period
        assert 0 <= i["late_ticks"] < i["ticks"]
        if r["setup"]["kind"] == "rig":
            for key in ("latency_newest", "latency_oldest"):
                lat = r[key]
                assert lat is not None and lat["n"] > 0 and lat["clock_ahead"] >= 0
                assert 0 <= lat["median_ms"] <= lat["p99_ms"] <= lat["max_ms"] < 60_000
            assert r["gc"]["gen2_ms"] > 0 and r["gc"]["gen2_after_freeze_ms"] >= 0
    consumers = next(r for r in m["results"] if r["setup"]["live_model"])
    assert consumers["live_model"]["steps"] >= 0
