"""`uartlab bench core`: what a rig core costs to start, to keep running at rest, and to stop.

Each round starts `uartlab rig serve` as an operator does (on the twin rig by default: the core, its twin
process and its live-model process) and measures

- ready: from the start until the core answers a client's hello;
- the CPU each of its processes had used by then, and in the ``--settle-seconds`` after it (the live model
  warms its kernels once the core answers), then the share of a core each uses at rest (no client, no run:
  the device streams, the interlocks' inputs, the twin's devices) over ``--idle-seconds``;
- stop: from SIGTERM until the core has exited (it stops its run, recording, model and twin first).

A bare ``python -c pass`` runs in the same rounds: the floor under any start, and the yardstick for a loaded
machine (the ratio). A rig at rest holds its share of the CPU for as long as it is up, beside the operator's
window on the lab PC; every test that brings up a rig pays the start and the stop. Linux (/proc) only.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from uartlab.app.bench.startup import BARE, time_once, uartlab_command
from uartlab.app.serve.client import core_answers

READY_TIMEOUT_S = 120.0   # a cold kernel cache compiles the twin's plant first
STOP_TIMEOUT_S = 60.0


def _cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` so far (None once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _children(pid: int) -> dict[int, str]:
    """The child processes of ``pid``, each named by what it is (twin, live model, or its command)."""
    out = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue
        if ppid == pid:
            words = [a.decode(errors="replace") for a in argv if a]
            out[int(entry.name)] = ("twin" if "twin" in words else
                                    "live model" if any("model_process" in w for w in words) else " ".join(words[:3]))
    return out


def one_round(rig: str | None, idle_s: float, settle_s: float) -> dict:
    folder = Path(tempfile.mkdtemp(prefix="uartlab-bench-core-"))
    address = f"ipc://{folder / 'core'}"
    command = [*uartlab_command(), "rig", "serve", "--core", address, *(["--rig", rig] if rig else [])]
    log = folder / "core.log"
    try:
        with open(log, "wb") as out:
            started = time.perf_counter()
            core = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
            try:
                while not core_answers(address):
                    if core.poll() is not None or time.perf_counter() - started > READY_TIMEOUT_S:
                        tail = log.read_text(errors="replace").strip().splitlines()[-1:] or ["no output"]
                        raise RuntimeError(f"the core did not come up: {tail[0]}")
                    time.sleep(0.02)
                ready_s = time.perf_counter() - started
                processes = {core.pid: "core", **_children(core.pid)}
                at_ready = {pid: _cpu_s(pid) or 0.0 for pid in processes}
                time.sleep(settle_s)
                settled = {pid: _cpu_s(pid) for pid in processes}
                time.sleep(idle_s)
                after_idle = {pid: _cpu_s(pid) for pid in processes}
                stopping = time.perf_counter()
                core.send_signal(signal.SIGTERM)
                core.wait(STOP_TIMEOUT_S)
                stop_s = time.perf_counter() - stopping
            finally:
                if core.poll() is None:
                    core.kill()
                    core.wait()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    per_process = {}
    for pid, name in processes.items():
        then, idle_cpu = settled[pid], after_idle[pid]
        per_process[name] = {
            "cpu_to_ready_s": at_ready[pid],
            "cpu_settling_s": None if then is None else then - at_ready[pid],
            "idle_cpu_percent": None if idle_cpu is None or then is None else 100 * (idle_cpu - then) / idle_s}
    return {"ready_s": ready_s, "stop_s": stop_s, "processes": per_process}


def measure(rounds: int, idle_s: float, rig: str | None, settle_s: float = 3.0) -> dict:
    if not Path("/proc/self/stat").exists():
        raise RuntimeError("uartlab bench core reads each process's CPU from /proc: Linux only")
    results, bare = [], []
    for _ in range(rounds):
        bare.append(time_once([sys.executable, "-c", "pass"]))
        results.append(one_round(rig, idle_s, settle_s))
    names = list(dict.fromkeys(name for r in results for name in r["processes"]))

    def median_of(name: str, key: str) -> float | None:
        values = [r["processes"][name][key] for r in results if r["processes"].get(name, {}).get(key) is not None]
        return statistics.median(values) if values else None

    ready, bare_s = statistics.median(r["ready_s"] for r in results), statistics.median(bare)
    return {
        "rounds": rounds, "settle_seconds": settle_s, "idle_seconds": idle_s,
        "rig": rig or "the twin rig (app/data/twin_rig.toml)",
        "python": sys.version.split()[0], "cpus": os.cpu_count(), "load_average_1min": os.getloadavg()[0],
        "bare_median_s": bare_s, "ready_median_s": ready, "ready_ratio_to_bare": ready / bare_s,
        "stop_median_s": statistics.median(r["stop_s"] for r in results),
        "processes": {name: {key: median_of(name, key) for key in ("cpu_to_ready_s", "cpu_settling_s",
                                                                   "idle_cpu_percent")} for name in names},
        "idle_cpu_percent_total": sum(median_of(name, "idle_cpu_percent") or 0.0 for name in names),
        "results": results,
    }


def main(args: argparse.Namespace) -> int:
    result = measure(args.rounds, args.idle_seconds, args.rig, args.settle_seconds)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"a rig core started, left {result['settle_seconds']:g} s to settle and {result['idle_seconds']:g} s at "
          f"rest, stopped; {result['rounds']} rounds "
          f"(medians; {result['rig']}; {result['cpus']} CPUs, load {result['load_average_1min']:.1f})")
    print(f"  ready (answers a hello)  {result['ready_median_s']:6.2f} s   "
          f"{result['ready_ratio_to_bare']:.0f}x a bare `{BARE}` ({result['bare_median_s']:.3f} s)")
    print(f"  stop (SIGTERM to exit)   {result['stop_median_s']:6.2f} s")
    print(f"  {'process':<12} {'CPU to ready s':>15} {'then settling s':>16} {'at rest, % of a core':>21}")
    for name, p in result["processes"].items():
        cells = [("-" if p[key] is None else f"{p[key]:{spec}}") for key, spec in
                 (("cpu_to_ready_s", ".2f"), ("cpu_settling_s", ".2f"), ("idle_cpu_percent", ".0f"))]
        print(f"  {name:<12} {cells[0]:>15} {cells[1]:>16} {cells[2]:>21}")
    print(f"  {'all':<12} {'':>15} {'':>16} {result['idle_cpu_percent_total']:>21.0f}")
    return 0
