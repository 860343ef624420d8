"""`uartlab bench record`: can the recorder take the whole rig, for minutes, without dropping a sample?

Phase 1 (the load, paced in real time for ``--seconds``): the USB-6210 at its maximum aggregate rate
(250 kS/s: 13 channels x 19.2 kHz in 5 ms blocks of 96 rows, as the driver reads them), six MX-64 servos
at 200 Hz and the mocap at 240 Hz (12 markers x 3), each from its own generator thread, as the hub would.
Reported: dropped samples (generated minus on disk; goal 0) and the recorder's CPU share of one core
(goal < 10 %), measured honestly as the writer thread's CPU time (``time.thread_time``) plus the CPU the
producers spend inside ``write()`` (copy and validation), over the wall time.
Phase 2 (the ceiling): the same mix of records offered as fast as possible; the recorded seconds of rig
time per wall second is the ratio of the maximum sustainable rate to the load (goal >= 10x).
Both phases write to the page cache of the output folder's disk, as a real recording does.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import tempfile
import threading
import time

import numpy as np
from uartlab.app.cli.paths import writable_folder
from uartlab.app.record.player import SessionFile
from uartlab.app.record.writer import SessionRecorder
from uartlab.pacing import FixedRate
from uartlab.schema import actuators_spec, daq_spec, mocap_spec
from uartlab.streams import Record, StreamSpec

GOAL_CPU_SHARE = 0.10        # of one core
GOAL_HEADROOM = 10.0         # max sustainable rate / load
DAQ_CHANNELS, DAQ_RATE_HZ, DAQ_BLOCK = 13, 19_200.0, 96   # 13 x 19.2 kHz = 249.6 kS/s; 96 rows = 5 ms
# (6 pots, the reference, 6 gauges; each row also carries the derived tendon forces and wrench)
SERVO_RATE_HZ, MOCAP_RATE_HZ, MARKERS = 200.0, 240.0, 12  # the rig's rates; 12 markers on the finger

# The producers' own declarations (uartlab.schema) at the bench's rates: what a recording really writes.
SPECS = (daq_spec(DAQ_RATE_HZ), actuators_spec(SERVO_RATE_HZ),
         mocap_spec([f"m{i}" for i in range(MARKERS)], MOCAP_RATE_HZ))
BLOCK_ROWS = {"daq": DAQ_BLOCK, "actuators": 1, "mocap": 1}
RATE_HZ = {"daq": DAQ_RATE_HZ, "actuators": SERVO_RATE_HZ, "mocap": MOCAP_RATE_HZ}


def _template(spec: StreamSpec, rows: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {f.name: rng.normal(size=(rows, *f.shape)).astype(f.dtype) for f in spec.fields}


class _Producer(threading.Thread):
    """One device: a block every 1/rate x rows seconds, like a driver thread handing records to the hub."""

    def __init__(self, rec: SessionRecorder, spec: StreamSpec, seconds: float, t0: float):
        super().__init__(name=f"bench-{spec.name}", daemon=True)
        self.rec, self.spec, self.seconds, self.t0 = rec, spec, seconds, t0
        self.rows = BLOCK_ROWS[spec.name]
        self.period_s = self.rows / RATE_HZ[spec.name]
        self.data = _template(spec, self.rows, np.random.default_rng(len(spec.name)))
        self.generated = 0
        self.write_cpu_s = 0.0

    def run(self) -> None:
        n_blocks = int(self.seconds / self.period_s)
        dt = np.arange(self.rows) / RATE_HZ[self.spec.name]
        # Every block is written, late ones at once; all streams on one time base.
        pace = FixedRate(self.period_s, max_late_s=math.inf, start_s=self.t0)
        for k in range(n_blocks):
            pace.wait()
            rec = Record(self.spec.name, self.t0 + k * self.period_s + dt, self.data)
            c0 = time.thread_time()
            self.rec.write(rec)
            self.write_cpu_s += time.thread_time() - c0
            self.generated += self.rows


def load_values_per_s() -> float:
    """Scalar values per second the rig produces (host time included), all streams."""
    return sum(RATE_HZ[s.name] * (1 + sum(int(np.prod(f.shape, dtype=int)) for f in s.fields)) for s in SPECS)


def run_load(path: str, seconds: float) -> dict:
    rec = SessionRecorder(path, {"operator": "bench", "notes": "uartlab bench record"}, flush_interval_s=0.5)
    for spec in SPECS:
        rec.add_stream(spec)
    rec.start()
    t0 = time.monotonic() + 0.1
    producers = [_Producer(rec, spec, seconds, t0) for spec in SPECS]
    cpu0, wall0 = time.process_time(), time.monotonic()
    for p in producers:
        p.start()
    for p in producers:
        p.join()
    rec.close()
    wall_s, process_cpu_s = time.monotonic() - wall0, time.process_time() - cpu0
    with SessionFile(path) as sf:
        on_disk = {s.name: sf.length(s.name) for s in SPECS}
    generated = {p.spec.name: p.generated for p in producers}
    recorder_cpu_s = rec.writer_cpu_s + sum(p.write_cpu_s for p in producers)
    return {"seconds": seconds, "wall_s": wall_s, "generated": generated, "on_disk": on_disk,
            "dropped": sum(generated[k] - on_disk[k] for k in generated) + sum(rec.dropped.values()),
            "recorder_cpu_s": recorder_cpu_s, "writer_thread_cpu_s": rec.writer_cpu_s,
            "recorder_cpu_share": recorder_cpu_s / wall_s, "process_cpu_share": process_cpu_s / wall_s,
            "file_bytes": os.path.getsize(path)}


def run_max(path: str, wall_budget_s: float) -> dict:
    """The same records in time order, offered as fast as the recorder takes them (with backpressure)."""
    rec = SessionRecorder(path, {"operator": "bench", "notes": "max rate"}, flush_interval_s=0.5)
    for spec in SPECS:
        rec.add_stream(spec)
    rec.start()
    rng = np.random.default_rng(0)
    data = {s.name: _template(s, BLOCK_ROWS[s.name], rng) for s in SPECS}
    periods = {s.name: BLOCK_ROWS[s.name] / RATE_HZ[s.name] for s in SPECS}
    next_t = dict.fromkeys(periods, 0.0)
    wall0 = time.monotonic()
    rig_t = 0.0
    while time.monotonic() - wall0 < wall_budget_s:
        name = min(next_t, key=next_t.__getitem__)  # the device whose next block is due first
        rig_t = next_t[name]
        rows = BLOCK_ROWS[name]
        rec.write(Record(name, rig_t + np.arange(rows) / RATE_HZ[name], data[name]))
        next_t[name] += periods[name]
        while rec.pending_bytes > 64 * 1024 * 1024:  # backpressure: measure throughput, not a drop policy
            time.sleep(0.001)
    rec.close()  # the rate counts only once everything is on disk
    wall_s = time.monotonic() - wall0
    return {"rig_seconds": rig_t, "wall_s": wall_s, "ratio": rig_t / wall_s, "dropped": sum(rec.dropped.values())}


def main(args: argparse.Namespace) -> int:
    seconds = float(getattr(args, "seconds", 120.0))
    folder = writable_folder(args.dir, "--dir") if getattr(args, "dir", None) else tempfile.gettempdir()
    with tempfile.TemporaryDirectory(dir=folder, prefix="uartlab-bench-") as tmp:
        load = run_load(os.path.join(tmp, "load.h5"), seconds)
        peak = run_max(os.path.join(tmp, "max.h5"), min(20.0, max(3.0, seconds / 6)))
    values_per_s = load_values_per_s()
    out = {"load_values_per_s": values_per_s, "load": load, "max": peak,
           "goals": {"dropped": 0, "recorder_cpu_share_max": GOAL_CPU_SHARE, "ratio_min": GOAL_HEADROOM}}
    ok = load["dropped"] == 0 and load["recorder_cpu_share"] < GOAL_CPU_SHARE and peak["ratio"] >= GOAL_HEADROOM
    out["ok"] = ok
    if getattr(args, "json", False):
        print(json.dumps(out, indent=2))
    else:
        g, d = load["generated"], load["on_disk"]
        print(f"load: DAQ {DAQ_CHANNELS} x {DAQ_RATE_HZ:.0f} Hz = {DAQ_CHANNELS * DAQ_RATE_HZ / 1e3:.1f} kS/s, "
              f"6 servos at {SERVO_RATE_HZ:.0f} Hz, mocap {MARKERS} markers at {MOCAP_RATE_HZ:.0f} Hz "
              f"({values_per_s / 1e3:.0f} k values/s) for {seconds:.0f} s")
        for name in g:
            print(f"  {name:10s} generated {g[name]:>10d}  on disk {d[name]:>10d}")
        print(f"dropped samples:      {load['dropped']}  (goal 0)")
        print(f"recorder CPU share:   {100 * load['recorder_cpu_share']:.2f} % of one core  (goal < "
              f"{100 * GOAL_CPU_SHARE:.0f} %; writer thread {load['writer_thread_cpu_s']:.2f} s + write() calls, "
              f"whole process incl. generators {100 * load['process_cpu_share']:.1f} %)")
        print(f"max sustainable rate: {peak['ratio']:.1f} x the load  (goal >= {GOAL_HEADROOM:.0f} x; "
              f"{peak['rig_seconds']:.1f} s of rig data in {peak['wall_s']:.2f} s)")
        print(f"file size:            {load['file_bytes'] / 1e6:.1f} MB for {seconds:.0f} s")
        print("OK" if ok else "GOAL MISSED")
    return 0 if ok else 1
