"""`uartlab bench loop`: does the control loop keep time, and how fresh is the data its interlocks see?

Each configuration runs in a process of its own (``python -m uartlab.app.bench.loop --worker ...``), side by
side in one run, so they share the machine's state of the moment:

- **bare**: a Python loop sleeping to absolute deadlines ``t0 + k * period`` with the control loop's own
  real-time setup (app/run/realtime.py). Nothing else runs: what this machine gives any Python loop.
- **rig**: the twin rig (app/rig/rig.py, ``Rig`` on app/data/twin_rig.toml) and the engine running the
  shipped free-motion suite (``Experiment``, app/run/experiment.py), no recording.
- **rig, no real-time setup**: the same with app/run/realtime.py turned off (normal scheduling, the default
  GIL switch interval, automatic garbage collection): what the setup buys.
- **rig + consumers**: the same, with the live model beside it (``LiveModel``, app/run/live_model.py) and a
  process drawing the operator window's plots at full rate (``uartlab bench gui``, when the gui extra is
  installed). ``SETUPS`` is the list: a new consumer is one more entry.
- **... + load**: with ``--with-load N``, each again while N CPU-bound processes compete for the cores (as
  /work/shared/tools/with-load does; the bench starts and ends them itself).

Measured from the `runner` stream the engine publishes once per tick: the tick interval (median, p99, max,
ticks later than two periods after the one before) and, at each tick where DAQ data arrived, the latency
from the acquisition of a sample (its host time through the DAQ clock sync) to that tick: for the newest
sample of the data and for the oldest (every sample waits at most that long). The highest sustained rate
tries the rig loop alone at 100, 200, 400 and 800 Hz: sustained = p99 interval <= 1.2 periods and no
interval over 5 periods. The gen-2 garbage collection time with the rig's heap is measured in the rig
process, before and after ``gc.freeze()``; during a run automatic collection is off (app/run/realtime.py).

Goals at 100 Hz: p99 interval <= 12 ms, no interval over 50 ms, sample-to-tick latency p99 <= 20 ms.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib.util
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, replace

import numpy as np

GOAL_P99_INTERVAL_S = 0.012
GOAL_MAX_INTERVAL_S = 0.050
GOAL_LATENCY_P99_S = 0.020
LATE_PERIODS = 2.0               # a tick this many periods after the one before is "late"
SUSTAINED_P99_PERIODS = 1.2      # the sustained-rate rule
SUSTAINED_MAX_PERIODS = 5.0
MAX_RATE_TRIES_HZ = (100.0, 200.0, 400.0, 800.0)
WORKER_TIMEOUT_S = 300.0         # start-up (imports, numba, twins): ~10 s idle, minutes on an overloaded box


@dataclass(frozen=True)
class Setup:
    """One configuration of the loop's process and what runs beside it."""

    name: str
    kind: str                     # "bare": the anchor; "rig": the twin rig and the engine
    live_model: bool = False      # the live model in the rig's process, stepping every tick of a trial
    drawing: bool = False         # a process drawing the window's plots at full rate (uartlab bench gui)
    load: int = 0                 # CPU-bound processes competing for the cores
    realtime: bool = True         # the loop's real-time setup (app/run/realtime.py); off: plain Python threads


SETUPS = (
    Setup("bare Python loop", "bare"),
    Setup("rig loop, no real-time setup", "rig", realtime=False),
    Setup("rig loop", "rig"),
    Setup("rig loop + live model + drawing", "rig", live_model=True, drawing=True),
)


def setups(with_load: int) -> list[Setup]:
    """SETUPS, and each again under ``with_load`` CPU-bound processes."""
    loaded = [replace(s, name=f"{s.name} + load {with_load}", load=with_load) for s in SETUPS] if with_load else []
    return [*SETUPS, *loaded]


# ------------------------------------------------------------------ statistics (parent)
def interval_stats(tick_times_s: np.ndarray, period_s: float) -> dict:
    intervals = np.diff(np.asarray(tick_times_s, dtype=float))
    if intervals.size == 0:
        return {"ticks": int(len(tick_times_s)), "median_ms": None, "p99_ms": None, "max_ms": None, "late_ticks": 0}
    return {"ticks": int(len(tick_times_s)),
            "median_ms": float(np.median(intervals) * 1e3), "p99_ms": float(np.percentile(intervals, 99) * 1e3),
            "max_ms": float(intervals.max() * 1e3),
            "late_ticks": int(np.count_nonzero(intervals > LATE_PERIODS * period_s))}


def latency_stats(latency_s: np.ndarray) -> dict | None:
    """Over the physical latencies; ``clock_ahead``: how many put the sample after the tick that saw it (its
    host time from the DAQ clock sync was late by at least that much: app/rig/clock_sync.py's estimate)."""
    ok = latency_s[latency_s >= 0]
    if ok.size == 0:
        return None
    return {"n": int(ok.size), "clock_ahead": int(latency_s.size - ok.size),
            "median_ms": float(np.median(ok) * 1e3), "p99_ms": float(np.percentile(ok, 99) * 1e3),
            "max_ms": float(ok.max() * 1e3)}


def daq_latencies(tick_times_s: np.ndarray, daq_age_s: np.ndarray, daq_rate_hz: float) -> tuple[np.ndarray, np.ndarray]:
    """(newest, oldest) sample-to-tick latency at every tick that saw new DAQ data: the newest sample's host
    time is the tick's time minus the DAQ stream age it recorded; the oldest new one follows the previous newest."""
    t, age = np.asarray(tick_times_s, dtype=float), np.asarray(daq_age_s, dtype=float)
    newest_time = t - age
    ok = np.isfinite(newest_time)
    t, newest_time = t[ok], newest_time[ok]
    fresh = np.flatnonzero(np.diff(newest_time) > 0.5 / daq_rate_hz) + 1
    newest = t[fresh] - newest_time[fresh]
    # the clock sync may move a sample's host time by a fraction of a ms: never below the newest's latency
    oldest = np.maximum(newest, t[fresh] - (newest_time[fresh - 1] + 1.0 / daq_rate_hz))
    return newest, oldest


def summarize(setup: Setup, rate_hz: float, raw: dict) -> dict:
    period_s = 1.0 / rate_hz
    ticks = np.asarray(raw["tick_times_s"], dtype=float)
    out = {"setup": asdict(setup), "rate_hz": rate_hz, "seconds": raw["seconds"],
           "scheduling": raw.get("scheduling", ""), "interval": interval_stats(ticks, period_s)}
    if "daq_age_s" in raw:
        newest, oldest = daq_latencies(ticks, np.asarray(raw["daq_age_s"], dtype=float), raw["daq_rate_hz"])
        out["latency_newest"], out["latency_oldest"] = latency_stats(newest), latency_stats(oldest)
    for key in ("missed", "gc", "drawing", "live_model", "daq_block_s"):
        if key in raw:
            out[key] = raw[key]
    i = out["interval"]
    lat = out.get("latency_oldest")
    out["meets_goal"] = (i["p99_ms"] is not None and i["p99_ms"] <= GOAL_P99_INTERVAL_S * 1e3
                         and i["max_ms"] <= GOAL_MAX_INTERVAL_S * 1e3
                         and (lat is None or lat["p99_ms"] <= GOAL_LATENCY_P99_S * 1e3))
    return out


def sustained(result: dict) -> bool:
    i, period_ms = result["interval"], 1e3 / result["rate_hz"]
    return (i["p99_ms"] is not None and i["p99_ms"] <= SUSTAINED_P99_PERIODS * period_ms
            and i["max_ms"] <= SUSTAINED_MAX_PERIODS * period_ms)


# ------------------------------------------------------------------ running a configuration (parent)
@contextlib.contextmanager
def cpu_load(n: int) -> Iterator[list[int]]:
    """N CPU-bound processes for the block (as /work/shared/tools/with-load); ended by their own PIDs."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        yield [p.pid for p in procs]
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()


@contextlib.contextmanager
def drawing_process(seconds: float) -> Iterator[str]:
    """`uartlab bench gui` drawing every live plot at full rate, in a process of its own, while the block runs."""
    if importlib.util.find_spec("PySide6") is None or importlib.util.find_spec("pyqtgraph") is None:
        yield "not run (the gui extra is not installed)"
        return
    proc = subprocess.Popen([sys.executable, "-m", "uartlab.app.cli", "bench", "gui", "--seconds", f"{seconds:g}",
                             "--hours", "0.001"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    try:
        yield f"uartlab bench gui (pid {proc.pid})"
    finally:
        proc.kill()
        proc.wait()


def run_setup(setup: Setup, rate_hz: float, seconds: float) -> dict:
    """Run one configuration's loop in a process of its own; the summary of what it measured."""
    cmd = [sys.executable, "-m", "uartlab.app.bench.loop", "--worker", setup.kind, "--rate", str(rate_hz),
           "--seconds", str(seconds)] + (["--live-model"] if setup.live_model else []) + (
               [] if setup.realtime else ["--no-realtime"])
    with cpu_load(setup.load), contextlib.ExitStack() as stack:
        drawing = stack.enter_context(drawing_process(seconds + WORKER_TIMEOUT_S)) if setup.drawing else None
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=WORKER_TIMEOUT_S + seconds)
        except subprocess.TimeoutExpired:
            return {"setup": asdict(setup), "rate_hz": rate_hz,
                    "error": f"the loop's process did not finish in {WORKER_TIMEOUT_S + seconds:g} s"}
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"setup": asdict(setup), "rate_hz": rate_hz, "error": tail}
    raw = json.loads(done.stdout.strip().splitlines()[-1])
    if drawing is not None:
        raw["drawing"] = drawing
    return summarize(setup, rate_hz, raw)


def measure(seconds: float, rate_hz: float, with_load: int, rates_hz: tuple[float, ...],
            max_rate_seconds: float) -> dict:
    results = [run_setup(s, rate_hz, seconds) for s in setups(with_load)]
    tries = [run_setup(Setup(f"rig loop at {r:g} Hz", "rig"), r, max_rate_seconds) for r in rates_hz]
    ok = [t["rate_hz"] for t in tries if "error" not in t and sustained(t)]
    return {"rate_hz": rate_hz, "seconds": seconds, "results": results, "rate_tries": tries,
            "max_sustained_hz": max(ok) if ok else None,
            "goals": {"p99_interval_ms": GOAL_P99_INTERVAL_S * 1e3, "max_interval_ms": GOAL_MAX_INTERVAL_S * 1e3,
                      "latency_p99_ms": GOAL_LATENCY_P99_S * 1e3}}


# ------------------------------------------------------------------ the loop's process (worker)
def _worker_bare(rate_hz: float, seconds: float) -> dict:
    from uartlab.app.run import realtime
    from uartlab.pacing import FixedRate

    realtime.prepare_process()
    scheduling = realtime.raise_thread_priority().policy
    gc.freeze()
    pace = FixedRate(1.0 / rate_hz)
    times = np.empty(int(seconds * rate_hz) + 1)
    for k in range(len(times)):
        times[k] = time.monotonic()
        pace.wait()
    return {"tick_times_s": times.tolist(), "seconds": seconds, "scheduling": scheduling, "missed": pace.missed}


def _gen2_collection_ms() -> float:
    t0 = time.perf_counter()
    gc.collect()
    return (time.perf_counter() - t0) * 1e3


def _worker_rig(rate_hz: float, seconds: float, live_model: bool) -> dict:
    from uartlab.app.rig.config import default_rig_config
    from uartlab.app.rig.factories import DAQ_BLOCK_S
    from uartlab.app.rig.rig import Rig
    from uartlab.app.run import realtime
    from uartlab.app.run.experiment import Experiment
    from uartlab.app.run.state import WATCHED_STREAMS
    from uartlab.protocols.suite import builtin_suite
    from uartlab.schema import RUNNER_STREAM
    from uartlab.streams import Record

    realtime.prepare_process()  # before the rig's threads start, as a core process does: they inherit it
    config = default_rig_config()
    suite = builtin_suite("free_motion", config.ceilings)
    with Rig(config) as rig:
        live = None
        if live_model:
            from uartlab.app.run.live_model import LiveModel
            from uartlab.sim import Finger

            live = LiveModel(rig.hub, Finger(), suite, control_rate_hz=rate_hz, time_scale=rig.time_scale).start()
        gc_ms = {"gen2_ms": _gen2_collection_ms()}
        gc.freeze()
        gc_ms["gen2_after_freeze_ms"] = _gen2_collection_ms()
        gc.unfreeze()  # the engine's own arming freezes again, as in a run
        sub = rig.hub.subscribe("bench", {RUNNER_STREAM}, maxsize=int(seconds * rate_hz) + 1000)
        exp = Experiment(rig, suite, None, control_rate_hz=rate_hz).start()
        try:
            time.sleep(seconds)
        finally:
            exp.close()
            if live is not None:
                live.close()
        records = sub.drain()
        sub.close()
        timing = exp.timing
    daq = WATCHED_STREAMS.index("daq")
    runner = [r for r in records if isinstance(r, Record)]
    ticks = np.concatenate([r.host_time_s for r in runner]).tolist() if runner else []
    ages = np.concatenate([r.data["stream_age_s"][:, daq] for r in runner]).tolist() if runner else []
    return {"tick_times_s": ticks, "daq_age_s": ages, "daq_rate_hz": config.daq.rate_hz, "seconds": seconds,
            "daq_block_s": DAQ_BLOCK_S, "scheduling": timing.scheduling, "missed": timing.missed, "gc": gc_ms,
            **({"live_model": {"trials": live.stats.trials, "steps": live.stats.steps}} if live else {})}


def _worker_main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="uartlab.app.bench.loop --worker")
    p.add_argument("--worker", choices=("bare", "rig"), required=True)
    p.add_argument("--rate", type=float, required=True)
    p.add_argument("--seconds", type=float, required=True)
    p.add_argument("--live-model", action="store_true")
    p.add_argument("--no-realtime", action="store_true")
    a = p.parse_args(argv)
    if a.no_realtime:
        from uartlab.app.run import realtime

        realtime.enable(False)
    raw = _worker_bare(a.rate, a.seconds) if a.worker == "bare" else _worker_rig(a.rate, a.seconds, a.live_model)
    print(json.dumps(raw))
    return 0


# ------------------------------------------------------------------ report
def _ms(stats: dict | None, key: str) -> str:
    return "-" if not stats or stats.get(key) is None else f"{stats[key]:.1f}"


def render(m: dict) -> str:
    g = m["goals"]
    head = (f"{'configuration':42s} {'ticks':>6s} {'median':>7s} {'p99':>6s} {'max':>7s} {'late':>5s} "
            f"{'lat med':>7s} {'lat p99':>7s} {'lat max':>7s} {'goal':>5s}")
    lines = [f"uartlab bench loop - control loop at {m['rate_hz']:g} Hz, {m['seconds']:g} s per configuration, "
             "each in its own process",
             f"  tick interval [ms] (late: > {LATE_PERIODS:g} periods after the one before); DAQ sample -> tick "
             "latency [ms] of the oldest new sample (newest in brackets below)",
             f"  goals: p99 interval <= {g['p99_interval_ms']:g}, max <= {g['max_interval_ms']:g}, "
             f"latency p99 <= {g['latency_p99_ms']:g}", "", "  " + head]
    for r in m["results"]:
        lines.append("  " + _row(r))
    lines.append("")
    for r in m["results"]:
        if "error" in r:
            continue
        extra = [f"scheduling {r['scheduling'] or '?'}", f"{r.get('missed', 0)} deadlines skipped"]
        if r.get("latency_newest"):
            ln = r["latency_newest"]
            extra.append(f"newest-sample latency median {ln['median_ms']:.1f} p99 {ln['p99_ms']:.1f} "
                         f"max {ln['max_ms']:.1f} ms" + (f" ({ln['clock_ahead']} ticks left out: the clock sync put "
                                                        "the sample after the tick)" if ln["clock_ahead"] else ""))
        if r.get("gc"):
            extra.append(f"gen-2 GC {r['gc']['gen2_ms']:.1f} ms, after freeze {r['gc']['gen2_after_freeze_ms']:.1f} ms")
        if r.get("drawing"):
            extra.append(f"drawing: {r['drawing']}")
        lines.append(f"  {r['setup']['name']}: " + "; ".join(extra))
    lines += ["", "  highest sustained rate (rig loop alone; p99 <= "
              f"{SUSTAINED_P99_PERIODS:g} periods, max <= {SUSTAINED_MAX_PERIODS:g} periods):"]
    for t in m["rate_tries"]:
        ok = "error" not in t and sustained(t)
        lines.append(f"    {t['rate_hz']:>5g} Hz: " + ("sustained" if ok else "not sustained") + "  " + _row(t))
    best = m["max_sustained_hz"]
    lines.append(f"  -> {best:g} Hz" if best else "  -> none of the rates tried")
    return "\n".join(lines)


def _row(r: dict) -> str:
    name = r["setup"]["name"]
    if "error" in r:
        return f"{name:42s} failed: {r['error']}"
    i, lat = r["interval"], r.get("latency_oldest")
    goal = "yes" if r["meets_goal"] else "NO"
    return (f"{name:42s} {i['ticks']:>6d} {_ms(i, 'median_ms'):>7s} {_ms(i, 'p99_ms'):>6s} {_ms(i, 'max_ms'):>7s} "
            f"{i['late_ticks']:>5d} {_ms(lat, 'median_ms'):>7s} {_ms(lat, 'p99_ms'):>7s} {_ms(lat, 'max_ms'):>7s} "
            f"{goal:>5s}")


def main(args: argparse.Namespace) -> int:
    rates = tuple(args.max_rates) if getattr(args, "max_rates", None) else MAX_RATE_TRIES_HZ
    m = measure(args.seconds, args.rate, args.with_load, rates, args.max_rate_seconds or args.seconds)
    print(render(m))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(m, f, indent=2)
        print(f"  JSON: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(_worker_main(sys.argv[1:]))
