"""`uartlab bench record`: can the recorder take the whole rig, for minutes, without dropping a sample, and
what does an hour of it cost on disk?

Phase 1 (the load, paced in real time for ``--seconds``): the USB-6210 at its maximum aggregate rate
(250 kS/s: 13 channels x 19.2 kHz in 5 ms blocks of 96 rows, as the driver reads them), six MX-64 servos
at 200 Hz and the mocap at 240 Hz (12 markers x 3), each from its own generator thread, as the hub would.
Reported: dropped samples (generated minus on disk; goal 0), the recorder's CPU share of one core
(goal < 10 %), measured honestly as the writer thread's CPU time (``time.thread_time``) plus the CPU the
producers spend inside ``write()`` (copy and validation), over the wall time, and the bytes per hour.
Phase 2 (the ceiling): the same mix of records offered as fast as possible; the recorded seconds of rig
time per wall second is the ratio of the maximum sustainable rate to the load (goal >= 10x).
Both phases run for the shipped storage (``writer.COMPRESSED``) and for uncompressed datasets, side by
side, on the same signals; the size goal is the ratio (>= 2.5x smaller).
The signals are what the devices deliver, not random numbers (which no filter compresses): ADC volts on the
6210's 16-bit grid of its +-10 V range with a few LSB of noise around slow tendon-paced motion, forces
derived from them as doubles, positions in the servos' 4096 ticks per turn, marker coordinates from Motive's
float32. ``--soak`` records the load alone (shipped storage) and samples the process's resident memory.
Both write to the page cache of the output folder's disk, as a real recording does.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import tempfile
import threading
import time
from dataclasses import replace
from typing import NamedTuple

import numpy as np
from uartlab.app.cli.paths import writable_folder
from uartlab.app.record.player import SessionFile
from uartlab.app.record.writer import COMPRESSED, UNCOMPRESSED, SessionRecorder, StreamStorage
from uartlab.drivers.usb6210 import ADC_BITS, RANGE_V
from uartlab.pacing import FixedRate
from uartlab.processes import rss_mb
from uartlab.schema import actuators_spec, daq_spec, mocap_spec
from uartlab.streams import Record, StreamSpec

GOAL_CPU_SHARE = 0.10        # of one core
GOAL_HEADROOM = 10.0         # max sustainable rate / load
GOAL_SIZE_RATIO = 2.5        # uncompressed bytes / shipped bytes
GOAL_RSS_SLOPE_MB_PER_MIN = 0.1   # flat: at most 6 MB over an hour, the noise of the allocator
DAQ_CHANNELS, DAQ_RATE_HZ, DAQ_BLOCK = 13, 19_200.0, 96   # 13 x 19.2 kHz = 249.6 kS/s; 96 rows = 5 ms
# (6 pots, the reference, 6 gauges; each row also carries the derived tendon forces and wrench)
SERVO_RATE_HZ, MOCAP_RATE_HZ, MARKERS = 200.0, 240.0, 12  # the rig's rates; 12 markers on the finger

# The producers' own declarations (uartlab.schema) at the bench's rates: what a recording really writes.
SPECS = (daq_spec(DAQ_RATE_HZ), actuators_spec(SERVO_RATE_HZ),
         mocap_spec([f"m{i}" for i in range(MARKERS)], MOCAP_RATE_HZ))


class Layout(NamedTuple):
    """A way of storing the same streams: the datasets' dtypes and filters."""

    name: str
    storage: StreamStorage
    specs: tuple[StreamSpec, ...]


def _widened(spec: StreamSpec) -> StreamSpec:
    return replace(spec, fields=tuple(replace(f, dtype="f8") if np.dtype(f.dtype).kind == "f" else f
                                      for f in spec.fields))


SHIPPED = Layout("shipped (" + COMPRESSED.describe() + ")", COMPRESSED, SPECS)
# Every float a double, no filter: the size a naive HDF5 dump of the same streams takes.
WIDE = Layout("float64, uncompressed", UNCOMPRESSED, tuple(_widened(s) for s in SPECS))
BLOCK_ROWS = {"daq": DAQ_BLOCK, "actuators": 1, "mocap": 1}
RATE_HZ = {"daq": DAQ_RATE_HZ, "actuators": SERVO_RATE_HZ, "mocap": MOCAP_RATE_HZ}


ADC_LSB_V = 2 * RANGE_V / 2**ADC_BITS   # the 6210's grid on +-10 V (~5 % coarser with its overrange: immaterial)
SERVO_M_PER_TICK = 2 * np.pi * 0.0125 / 4096   # 4096 ticks per turn on a 12.5 mm spool radius
SIGNAL_S = 4.0    # each generator cycles through this much signal: longer than a chunk and deflate's window


def _signal(spec: StreamSpec, rows: int, rate_hz: float, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """``rows`` samples of every field of ``spec`` shaped like the device's data (see the module doc)."""
    t = np.arange(rows) / rate_hz
    out = {}
    for f in spec.fields:
        shape = (rows, *f.shape)
        width = int(np.prod(f.shape, dtype=int))
        slow = np.sin(2 * np.pi * 0.25 * t[:, None] + np.arange(width)).reshape(shape)  # tendon-paced motion
        if f.dtype in ("?", "b1"):
            out[f.name] = np.zeros(shape, dtype=bool)
        elif np.dtype(f.dtype).kind == "i":
            out[f.name] = np.broadcast_to(np.arange(rows).reshape((rows,) + (1,) * len(f.shape)), shape).copy()
        elif f.units == "V":
            volts = 2.0 + 1.5 * slow + rng.normal(0, 0.5e-3, shape)
            out[f.name] = np.round(volts / ADC_LSB_V) * ADC_LSB_V
        elif f.name.startswith("markers"):
            out[f.name] = (0.1 * slow + rng.normal(0, 1e-4, shape)).astype(np.float32).astype(f.dtype)
        elif f.name.startswith("excursion"):
            out[f.name] = np.round(0.01 * slow / SERVO_M_PER_TICK) * SERVO_M_PER_TICK
        elif f.name == "read_host_time_s":   # one read per block: the time repeats across its rows
            out[f.name] = np.repeat(t[::BLOCK_ROWS[spec.name]], BLOCK_ROWS[spec.name])[:rows] + 0.004
        else:   # derived values (forces, wrench, velocity, current): every bit significant
            out[f.name] = (3.0 * slow + rng.normal(0, 0.01, shape)).astype(f.dtype)
    return out


class _Producer(threading.Thread):
    """One device: a block every 1/rate x rows seconds, like a driver thread handing records to the hub."""

    def __init__(self, rec: SessionRecorder, spec: StreamSpec, seconds: float, t0: float):
        super().__init__(name=f"bench-{spec.name}", daemon=True)
        self.rec, self.spec, self.seconds, self.t0 = rec, spec, seconds, t0
        self.rows = BLOCK_ROWS[spec.name]
        self.period_s = self.rows / RATE_HZ[spec.name]
        self.signal = _signal(spec, int(SIGNAL_S * RATE_HZ[spec.name]), RATE_HZ[spec.name],
                              np.random.default_rng(len(spec.name)))
        self.generated = 0
        self.write_cpu_s = 0.0

    def block(self, k: int) -> dict[str, np.ndarray]:
        """The k-th block of the signal (cycling through it)."""
        n_signal = len(next(iter(self.signal.values())))
        i0 = (k * self.rows) % (n_signal - self.rows)
        return {name: a[i0:i0 + self.rows] for name, a in self.signal.items()}

    def run(self) -> None:
        n_blocks = int(self.seconds / self.period_s)
        dt = np.arange(self.rows) / RATE_HZ[self.spec.name]
        # Every block is written, late ones at once; all streams on one time base.
        pace = FixedRate(self.period_s, max_late_s=math.inf, start_s=self.t0)
        for k in range(n_blocks):
            pace.wait()
            rec = Record(self.spec.name, self.t0 + k * self.period_s + dt, self.block(k))
            c0 = time.thread_time()
            self.rec.write(rec)
            self.write_cpu_s += time.thread_time() - c0
            self.generated += self.rows


def load_values_per_s() -> float:
    """Scalar values per second the rig produces (host time included), all streams."""
    return sum(RATE_HZ[s.name] * (1 + sum(int(np.prod(f.shape, dtype=int)) for f in s.fields)) for s in SPECS)


def _recorder(path: str, layout: Layout, notes: str) -> SessionRecorder:
    rec = SessionRecorder(path, {"operator": "bench", "notes": notes}, flush_interval_s=0.5,
                          storage=layout.storage)
    for spec in layout.specs:
        rec.add_stream(spec)
    rec.start()
    return rec


def run_load(path: str, seconds: float, layout: Layout, rss_every_s: float | None = None) -> dict:
    """The rig's load in real time; with ``rss_every_s``, the resident memory sampled that often."""
    rec = _recorder(path, layout, "uartlab bench record")
    t0 = time.monotonic() + 0.1
    producers = [_Producer(rec, spec, seconds, t0) for spec in layout.specs]
    cpu0, wall0 = time.process_time(), time.monotonic()
    for p in producers:
        p.start()
    rss = []
    while any(p.is_alive() for p in producers):
        producers[0].join(rss_every_s)
        if rss_every_s is not None:
            rss.append((time.monotonic() - wall0, rss_mb()))
    for p in producers:
        p.join()
    rec.close()
    wall_s, process_cpu_s = time.monotonic() - wall0, time.process_time() - cpu0
    with SessionFile(path) as sf:
        on_disk = {s.name: sf.length(s.name) for s in SPECS}
    generated = {p.spec.name: p.generated for p in producers}
    recorder_cpu_s = rec.writer_cpu_s + sum(p.write_cpu_s for p in producers)
    file_bytes = os.path.getsize(path)
    return {"layout": layout.name, "seconds": seconds, "wall_s": wall_s, "generated": generated,
            "on_disk": on_disk,
            "dropped": sum(generated[k] - on_disk[k] for k in generated) + sum(rec.dropped.values()),
            "recorder_cpu_s": recorder_cpu_s, "writer_thread_cpu_s": rec.writer_cpu_s,
            "recorder_cpu_share": recorder_cpu_s / wall_s, "process_cpu_share": process_cpu_s / wall_s,
            "file_bytes": file_bytes, "bytes_per_hour": file_bytes * 3600.0 / seconds, "rss_mb": rss}


def run_max(path: str, wall_budget_s: float, layout: Layout) -> dict:
    """The same records in time order, offered as fast as the recorder takes them (with backpressure)."""
    rec = _recorder(path, layout, "max rate")
    producers = {s.name: _Producer(rec, s, 0.0, 0.0) for s in layout.specs}   # their signals, not threads
    periods = {s.name: BLOCK_ROWS[s.name] / RATE_HZ[s.name] for s in SPECS}
    blocks = dict.fromkeys(periods, 0)
    wall0 = time.monotonic()
    rig_t = 0.0
    while time.monotonic() - wall0 < wall_budget_s:
        name = min(blocks, key=lambda n: blocks[n] * periods[n])  # the device whose next block is due first
        rig_t = blocks[name] * periods[name]
        rows = BLOCK_ROWS[name]
        rec.write(Record(name, rig_t + np.arange(rows) / RATE_HZ[name], producers[name].block(blocks[name])))
        blocks[name] += 1
        while rec.pending_bytes > 64 * 1024 * 1024:  # backpressure: measure throughput, not a drop policy
            time.sleep(0.001)
    rec.close()  # the rate counts only once everything is on disk
    wall_s = time.monotonic() - wall0
    return {"layout": layout.name, "rig_seconds": rig_t, "wall_s": wall_s, "ratio": rig_t / wall_s,
            "dropped": sum(rec.dropped.values())}


def rss_slope_mb_per_min(rss: list[tuple[float, float]]) -> float:
    """Least-squares slope of the resident memory over the second half of the samples (the first half
    includes the warm-up: chunk caches filling, the allocator's first arenas)."""
    if len(rss) < 4:
        return math.nan
    t_s, mb = np.array(rss[len(rss) // 2:]).T
    return float(np.polyfit(t_s / 60.0, mb, 1)[0])


def _soak(folder: str | os.PathLike, seconds: float, as_json: bool) -> int:
    with tempfile.TemporaryDirectory(dir=folder, prefix="uartlab-bench-") as tmp:
        load = run_load(os.path.join(tmp, "soak.h5"), seconds, SHIPPED, rss_every_s=max(1.0, seconds / 120))
    slope = rss_slope_mb_per_min(load["rss_mb"])
    ok = load["dropped"] == 0 and slope <= GOAL_RSS_SLOPE_MB_PER_MIN
    if as_json:
        print(json.dumps({"load": load, "rss_slope_mb_per_min": slope, "ok": ok}, indent=2))
    else:
        first, last = load["rss_mb"][0][1], load["rss_mb"][-1][1]
        print(f"soak: the rig's full load for {seconds:.0f} s, {load['layout']}")
        print(f"resident memory:   {first:.1f} MB after {load['rss_mb'][0][0]:.0f} s, {last:.1f} MB at the end; "
              f"slope over the second half {slope:+.3f} MB/min  (goal <= {GOAL_RSS_SLOPE_MB_PER_MIN} MB/min)")
        print(f"file:              {load['bytes_per_hour'] / 1e9:.2f} GB per hour; dropped samples "
              f"{load['dropped']} (goal 0); recorder CPU {100 * load['recorder_cpu_share']:.2f} % of one core")
        print("OK" if ok else "GOAL MISSED")
    return 0 if ok else 1


def main(args: argparse.Namespace) -> int:
    folder = writable_folder(args.dir, "--dir") if getattr(args, "dir", None) else tempfile.gettempdir()
    as_json = getattr(args, "json", False)
    if getattr(args, "soak", False):
        return _soak(folder, float(args.seconds or 3600.0), as_json)
    seconds = float(getattr(args, "seconds", None) or 120.0)
    layouts = (SHIPPED, WIDE)
    with tempfile.TemporaryDirectory(dir=folder, prefix="uartlab-bench-") as tmp:
        load = [run_load(os.path.join(tmp, f"load{i}.h5"), seconds, s) for i, s in enumerate(layouts)]
        peak = [run_max(os.path.join(tmp, f"max{i}.h5"), min(20.0, max(3.0, seconds / 6)), s)
                for i, s in enumerate(layouts)]
    size_ratio = load[1]["bytes_per_hour"] / load[0]["bytes_per_hour"]
    shipped, shipped_peak = load[0], peak[0]
    ok = shipped["dropped"] == 0 and shipped["recorder_cpu_share"] < GOAL_CPU_SHARE and \
        shipped_peak["ratio"] >= GOAL_HEADROOM and size_ratio >= GOAL_SIZE_RATIO
    values_per_s = load_values_per_s()
    if as_json:
        print(json.dumps({"load_values_per_s": values_per_s, "load": load, "max": peak, "size_ratio": size_ratio,
                          "goals": {"dropped": 0, "recorder_cpu_share_max": GOAL_CPU_SHARE,
                                    "ratio_min": GOAL_HEADROOM, "size_ratio_min": GOAL_SIZE_RATIO},
                          "ok": ok}, indent=2))
        return 0 if ok else 1
    print(f"load: DAQ {DAQ_CHANNELS} x {DAQ_RATE_HZ:.0f} Hz = {DAQ_CHANNELS * DAQ_RATE_HZ / 1e3:.1f} kS/s, "
          f"6 servos at {SERVO_RATE_HZ:.0f} Hz, mocap {MARKERS} markers at {MOCAP_RATE_HZ:.0f} Hz "
          f"({values_per_s / 1e3:.0f} k values/s) for {seconds:.0f} s, each storage in turn")
    g, d = shipped["generated"], shipped["on_disk"]
    for name in g:
        print(f"  {name:10s} generated {g[name]:>10d}  on disk {d[name]:>10d}  ({shipped['layout']})")
    print(f"{'':22s}{layouts[0].name:>42s}  {layouts[1].name:>22s}")
    rows = (("dropped samples", "{dropped:d}", "goal 0"),
            ("recorder CPU share", "{recorder_cpu_share:.2%}", f"of one core, goal < {GOAL_CPU_SHARE:.0%}"),
            ("file per hour", "{gb_per_hour:.2f} GB", f"goal >= {GOAL_SIZE_RATIO} x smaller"))
    for label, fmt, goal in rows:
        cells = [fmt.format(**r, gb_per_hour=r["bytes_per_hour"] / 1e9) for r in load]
        print(f"{label:22s}{cells[0]:>42s}  {cells[1]:>22s}   {goal}")
    cells = [f"{p['ratio']:.1f} x" for p in peak]
    print(f"{'max sustainable rate':22s}{cells[0]:>42s}  {cells[1]:>22s}   the load, goal >= {GOAL_HEADROOM:.0f} x")
    print(f"smaller by:           {size_ratio:.2f} x  (goal >= {GOAL_SIZE_RATIO} x)")
    print("OK" if ok else "GOAL MISSED")
    return 0 if ok else 1
