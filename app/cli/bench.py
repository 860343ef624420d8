"""`uartlab bench TARGET`: the benchmarks (speed and memory goals are measured here, not in tests).

Each target's work is its module in app/bench/ (the window's in app/gui/bench.py), imported when it runs.
"""

from __future__ import annotations

import argparse
import importlib


def add_parser(sub) -> None:
    from uartlab.app.cli.types import non_negative_int, positive_float, positive_int

    bench = sub.add_parser("bench", help="benchmarks (speed goals are measured here, not in tests)")
    bench_sub = bench.add_subparsers(dest="bench", metavar="TARGET", required=True)
    bench_sim = bench_sub.add_parser("sim", help="model speed: real-time factor, vs scipy RK45, all trials")
    bench_sim.add_argument("--repeats", type=positive_int, default=5, help="timing repeats per measurement (median)")
    bench_sim.add_argument("--json", action="store_true", help="print the numbers as JSON")
    bench_sim.set_defaults(run=_bench("uartlab.app.bench.sim"))
    bench_bus = bench_sub.add_parser("bus", help="MX-64 control loop rate against the bus twin vs the wire limit")
    bench_bus.add_argument("--seconds", type=positive_float, default=3.0, help="how long to run the control loop")
    bench_bus.add_argument("--protocol", type=float, choices=(1.0, 2.0), default=2.0)
    bench_bus.add_argument("--json", action="store_true", help="print the numbers as JSON")
    bench_bus.set_defaults(run=_bench("uartlab.app.bench.bus", needs="rig"))
    bench_record = bench_sub.add_parser(
        "record", help="recorder ingest at the rig's full rates: CPU share, headroom, bytes per hour, compressed "
                       "beside uncompressed; --soak: resident memory over a long recording")
    bench_record.add_argument("--seconds", type=positive_float,
                              help="how long to sustain the load (default 120 s; 3600 s with --soak)")
    bench_record.add_argument("--soak", action="store_true",
                              help="record the load alone and sample the resident memory (goal: flat)")
    bench_record.add_argument("--json", action="store_true", help="print the numbers as JSON")
    bench_record.add_argument("--dir", help="where to write the benchmark's file (default: the temp folder)")
    bench_record.set_defaults(run=_bench("uartlab.app.bench.record"))
    bench_live = bench_sub.add_parser("live", help="live model overhead per control tick vs the tick period")
    bench_live.add_argument("--repeats", type=positive_int, default=3, help="times each trial is fed (more ticks)")
    bench_live.add_argument("--rates", type=positive_float, nargs="+", action="extend", metavar="HZ",
                            help="control rates (default 100 200)")
    bench_live.add_argument("--no-real-time", action="store_true", help="skip the paced run with threads")
    bench_live.add_argument("--json", action="store_true", help="print the numbers as JSON")
    bench_live.set_defaults(run=_bench("uartlab.app.bench.live"))
    bench_gui = bench_sub.add_parser("gui", help="GUI frame rate, every live plot at full rate; memory over an hour")
    bench_gui.add_argument("--seconds", type=positive_float, default=10.0, help="how long to measure the frame rate")
    bench_gui.add_argument("--daq-rate", type=positive_float, default=19200.0,
                           help="DAQ samples per second per channel (19200: the USB-6210's 250 kS/s over 13 channels)")
    bench_gui.add_argument("--mocap-rate", type=positive_float, default=240.0, help="mocap frames per second (100-240)")
    bench_gui.add_argument("--hours", type=positive_float, default=1.0, help="simulated streaming for the memory check")
    bench_gui.add_argument("--json", action="store_true", help="print the numbers as JSON")
    bench_gui.add_argument("--live", action="store_true",
                           help="instead: the real window attached to a rig core on the twin rig during a real trial")
    bench_gui.add_argument("--suite", default="free_motion", help="--live: the suite whose trial runs")
    bench_gui.add_argument("--trial", default="free/FDP", help="--live: the trial (default free/FDP)")
    bench_gui.add_argument("--core", metavar="ADDR", help="--live: a running core to attach to (default: start one)")
    bench_gui.add_argument("--normal-priority", action="store_true",
                           help="--live: the window at nice 0, as where the OS refuses `uartlab gui` its raise")
    bench_gui.set_defaults(run=_bench("uartlab.app.gui.bench", needs="gui"))
    bench_loop = bench_sub.add_parser("loop", help="control-loop timing and DAQ-sample-to-tick latency, each "
                                      "configuration in its own process; the highest sustained rate")
    bench_loop.add_argument("--seconds", type=positive_float, default=10.0, help="how long each configuration runs")
    bench_loop.add_argument("--rate", type=positive_float, default=100.0, help="control rate (Hz)")
    bench_loop.add_argument("--with-load", type=non_negative_int, default=0, metavar="N",
                            help="each configuration again with N CPU-bound processes competing")
    bench_loop.add_argument("--max-rates", type=positive_float, nargs="+", metavar="HZ",
                            help="rates tried for the highest sustained one (default 100 200 400 800)")
    bench_loop.add_argument("--max-rate-seconds", type=positive_float,
                            help="seconds per tried rate (default --seconds)")
    bench_loop.add_argument("--json", metavar="PATH", help="also write the numbers as JSON to PATH")
    bench_loop.set_defaults(run=_bench("uartlab.app.bench.loop", needs="rig"))
    bench_compare = bench_sub.add_parser("compare", help="`uartlab compare` on one full session: one process "
                                         "beside every core")
    bench_compare.add_argument("--repeats", type=positive_int, default=2, help="runs of each (median)")
    bench_compare.add_argument("--json", action="store_true", help="print the numbers as JSON")
    bench_compare.set_defaults(run=_bench("uartlab.app.bench.compare"))
    bench_fit = bench_sub.add_parser("fit", help="a model-parameter fit on one worker process beside two")
    bench_fit.add_argument("--repeats", type=positive_int, default=1, help="fits on each (median)")
    bench_fit.add_argument("--json", action="store_true", help="print the numbers as JSON")
    bench_fit.set_defaults(run=_bench("uartlab.app.bench.fit", needs="rig"))
    bench_core = bench_sub.add_parser("core", help="a rig core's start, its processes' CPU at rest, and its stop, "
                                      "beside a bare `python -c pass`")
    bench_core.add_argument("--rounds", type=positive_int, default=3, help="cores started and stopped (medians)")
    bench_core.add_argument("--settle-seconds", type=positive_float, default=3.0,
                            help="how long each core is left to finish starting (the live model warms) before")
    bench_core.add_argument("--idle-seconds", type=positive_float, default=5.0,
                            help="how long each core is left at rest to measure its CPU")
    bench_core.add_argument("--rig", metavar="RIG_TOML", help="the rig file the core serves (default: the twin rig)")
    bench_core.add_argument("--json", action="store_true", help="print the numbers as JSON")
    bench_core.set_defaults(run=_bench("uartlab.app.bench.core", needs="rig"))
    bench_cli = bench_sub.add_parser("cli", help="start-up time of every command's --help and --version "
                                     "beside a bare `python -c pass`")
    bench_cli.add_argument("--repeats", type=int, default=5, help="runs of each command (median and max)")
    bench_cli.add_argument("--json", action="store_true", help="print the numbers as JSON")
    bench_cli.set_defaults(run=_bench("uartlab.app.bench.startup"))


def _bench(module: str, needs: str | None = None):
    """The target's ``main``, imported only when it runs; with ``needs``, that extra is checked first."""

    def run(args: argparse.Namespace) -> int:
        if needs is not None:
            from uartlab.app.cli.extras import require

            require(needs)
        return importlib.import_module(module).main(args)

    return run
