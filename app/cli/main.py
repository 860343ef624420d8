"""The `uartlab` command: one entry point, one subcommand per job.

Every failure a user can cause or meet (a bad file, option or value; a device that does not answer; a
folder that cannot be written) ends as one line on stderr naming what and where, and the exit status of
its kind (`uartlab.errors.EXIT_CODES`; README, "Exit status"). `--debug` shows the traceback; nothing
else does. `-v`/`-q` set how much is logged, on every command.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Sequence

from uartlab import __version__
from uartlab.errors import (
    EXIT_BAD_INPUT,
    EXIT_DEVICE_OR_IO,
    EXIT_ESTOP,
    EXIT_INTERNAL,
    UartlabError,
    exit_code,
)

# The command table: modules that define commands' options (`add_parser(sub)`), in `uartlab --help` order
# after doctor. The parser is built on every start-up (`uartlab --version` too), so these modules import
# nothing heavy at module level - no numpy, numba, scipy, h5py, Qt, gRPC - and a command's own modules load
# when it runs (tests/app/cli/test_cli_startup.py checks; `uartlab bench cli` measures).
COMMAND_MODULES = ("calibrate", "sim", "twin", "record", "run")


class _Parser(argparse.ArgumentParser):
    """A command-line mistake is one line too: ``uartlab <cmd>: error: <what> (uartlab <cmd> --help)``, exit 2
    (subcommands' parsers are this class too: add_subparsers makes its parsers of the parent's class)."""

    def error(self, message: str):
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {' '.join(message.split())} ({self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    from uartlab.app.cli.types import positive_float, positive_int, speed_or_max

    parser = _Parser(
        prog="uartlab",
        description="Control, data acquisition and bond-graph modelling for the UART robotic finger.",
    )
    parser.add_argument("--version", action="version", version=f"uartlab {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    doctor = sub.add_parser("doctor", help="what this machine has for a rig, and what is missing")
    doctor.add_argument("--json", action="store_true", help="print the report as JSON")
    doctor.set_defaults(run=_run_doctor)

    for module in COMMAND_MODULES:
        importlib.import_module(f"uartlab.app.cli.{module}").add_parser(sub)

    gui = sub.add_parser("gui", help="the operator window: rig, live plots, protocols, recording, replay, compare")
    gui.add_argument("--rig", help="rig.toml to connect at start ('twin': the shipped twin rig)")
    gui.add_argument("--replay", help="session .h5 file to open for replay")
    gui.set_defaults(run=_lazy("gui.app", needs="gui"))

    verify = sub.add_parser("verify", help="check a session file and report what a crash left")
    verify.add_argument("file", help="session .h5 file")
    verify.add_argument("--json", action="store_true", help="print the report as JSON")
    verify.set_defaults(run=_lazy("record.verify"))

    replay = sub.add_parser("replay", help="play a recorded session back through the live stream interfaces")
    replay.add_argument("file", help="session .h5 file")
    replay.add_argument("--speed", type=speed_or_max, default=1.0,
                        help="1 = real time, N = N times faster, max = as fast as possible")
    replay.add_argument("--loop", action="store_true", help="start again at the end")
    replay.add_argument("--json", action="store_true", help="print the summary as JSON")
    replay.set_defaults(run=_lazy("cli.replay"))

    compare = sub.add_parser("compare", help="re-simulate recorded trials and compare with the model "
                             "(the paper's Tables 4-6, Figs. 13-16)")
    compare.add_argument("sessions", nargs="+", metavar="SESSION.h5", help="session files; trials with the same "
                         "name are repeats of one trial, across all files")
    compare.add_argument("--params", metavar="P.toml", help="model parameters (default: the shipped defaults)")
    compare.add_argument("--params-b", metavar="Q.toml", help="a second parameter set, compared side by side")
    compare.add_argument("--out", metavar="DIR", help="report folder (default: compare_<first session name>)")
    compare.add_argument("--trials", metavar="GLOB", help="only trials whose name matches, e.g. 'contact/Curl/*'")
    compare.add_argument("--no-figures", action="store_true", help="tables and CSV only (faster)")
    compare.add_argument("--json", action="store_true", help="print the summary as JSON instead of text tables")
    compare.set_defaults(run=_lazy("cli.compare"))

    bench = sub.add_parser("bench", help="benchmarks (speed goals are measured here, not in tests)")
    bench_sub = bench.add_subparsers(dest="bench", metavar="TARGET", required=True)
    bench_sim = bench_sub.add_parser("sim", help="model speed: real-time factor, vs scipy RK45, all trials")
    bench_sim.add_argument("--repeats", type=positive_int, default=5, help="timing repeats per measurement (median)")
    bench_sim.add_argument("--json", action="store_true", help="print the numbers as JSON")
    bench_sim.set_defaults(run=_run_bench_sim)
    bench_bus = bench_sub.add_parser("bus", help="MX-64 control loop rate against the bus twin vs the wire limit")
    bench_bus.add_argument("--seconds", type=positive_float, default=3.0, help="how long to run the control loop")
    bench_bus.add_argument("--protocol", type=float, choices=(1.0, 2.0), default=2.0)
    bench_bus.add_argument("--json", action="store_true", help="print the numbers as JSON")
    bench_bus.set_defaults(run=_lazy("bench.bus", needs="rig"))
    bench_record = bench_sub.add_parser("record", help="recorder ingest at the rig's full rates: CPU share, headroom")
    bench_record.add_argument("--seconds", type=positive_float, default=120.0, help="how long to sustain the load")
    bench_record.add_argument("--json", action="store_true", help="print the numbers as JSON")
    bench_record.add_argument("--dir", help="where to write the benchmark's file (default: the temp folder)")
    bench_record.set_defaults(run=_lazy("bench.record"))
    bench_live = bench_sub.add_parser("live", help="live model overhead per control tick vs the tick period")
    bench_live.add_argument("--repeats", type=positive_int, default=3, help="times each trial is fed (more ticks)")
    bench_live.add_argument("--rates", type=positive_float, nargs="+", action="extend", metavar="HZ",
                            help="control rates (default 100 200)")
    bench_live.add_argument("--no-real-time", action="store_true", help="skip the paced run with threads")
    bench_live.add_argument("--json", action="store_true", help="print the numbers as JSON")
    bench_live.set_defaults(run=_lazy("bench.live"))
    bench_gui = bench_sub.add_parser("gui", help="GUI frame rate, every live plot at full rate; memory over an hour")
    bench_gui.add_argument("--seconds", type=positive_float, default=10.0, help="how long to measure the frame rate")
    bench_gui.add_argument("--daq-rate", type=positive_float, default=19200.0,
                           help="DAQ samples per second per channel (19200: the USB-6210's 250 kS/s over 13 channels)")
    bench_gui.add_argument("--mocap-rate", type=positive_float, default=240.0, help="mocap frames per second (100-240)")
    bench_gui.add_argument("--hours", type=positive_float, default=1.0, help="simulated streaming for the memory check")
    bench_gui.add_argument("--json", action="store_true", help="print the numbers as JSON")
    bench_gui.set_defaults(run=_lazy("gui.bench", needs="gui"))
    bench_cli = bench_sub.add_parser("cli", help="start-up time of every command's --help and --version "
                                     "beside a bare `python -c pass`")
    bench_cli.add_argument("--repeats", type=int, default=5, help="runs of each command (median and max)")
    bench_cli.add_argument("--json", action="store_true", help="print the numbers as JSON")
    bench_cli.set_defaults(run=_lazy("bench.startup"))
    _add_common_options(parser, top=True)
    _add_common_options_everywhere(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    _configure_logging(args)
    where = _command_name(args)
    try:
        return int(args.run(args) or 0)
    except KeyboardInterrupt:
        print(f"{where}: interrupted", file=sys.stderr)
        return EXIT_ESTOP
    except BrokenPipeError:  # the reader went away (`uartlab verify --json F | head`): nothing more to say
        _silence_stdout()
        return 0
    except Exception as exc:  # noqa: BLE001 - every failure ends as one line; --debug shows the rest
        if args.debug:
            raise
        print(f"{where}: {_one_line(exc)}", file=sys.stderr)
        return _exit_status(exc)


def _exit_status(exc: BaseException) -> int:
    if isinstance(exc, UartlabError):
        return exit_code(exc)
    if isinstance(exc, ValueError | FileNotFoundError | IsADirectoryError | NotADirectoryError):
        return EXIT_BAD_INPUT         # a value or path the user gave, refused by code below the CLI
    if isinstance(exc, OSError):      # a path that cannot be read or written, a device that is gone
        return EXIT_DEVICE_OR_IO
    return EXIT_INTERNAL


def _one_line(exc: BaseException) -> str:
    """The error as one line: what and where; an OSError names its file; a bug says how to report it."""
    if isinstance(exc, UartlabError | ValueError):
        text = str(exc)
    elif isinstance(exc, OSError):
        reason = exc.strerror or str(exc)
        text = f"{exc.filename}: {reason.lower()}" if exc.filename else reason
    else:
        text = (f"internal error ({type(exc).__name__}: {exc}); "
                "run again with --debug for the traceback and report it")
    return " ".join(text.split()) or type(exc).__name__


def _command_name(args: argparse.Namespace) -> str:
    words = ["uartlab", args.command]
    for key in ("sim_command", "bench", "twin_command", "procedure"):
        if getattr(args, key, None):
            words.append(getattr(args, key))
    return " ".join(words)


def _configure_logging(args: argparse.Namespace) -> None:
    """-v: info, -vv: debug; -q: errors only. Routine chatter is debug; warnings show by default."""
    level = logging.WARNING - 10 * args.verbose + 10 * args.quiet
    if args.debug:
        level = logging.DEBUG
    logging.basicConfig(level=max(logging.DEBUG, min(level, logging.CRITICAL)), stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s" if level <= logging.DEBUG else "%(message)s")


def _silence_stdout() -> None:
    """Python flushes stdout again at exit; point it at devnull so that flush does not raise too."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _add_common_options(parser: argparse.ArgumentParser, top: bool = False) -> None:
    """-v/-q/--debug on the top-level command and on every subcommand (`uartlab compare F -v` works too)."""
    default = (lambda value: value) if top else (lambda _value: argparse.SUPPRESS)
    group = parser.add_argument_group("output")
    group.add_argument("-v", "--verbose", action="count", default=default(0), help="say more (-vv: debug)")
    group.add_argument("-q", "--quiet", action="count", default=default(0), help="say less: errors only")
    group.add_argument("--debug", action="store_true", default=default(False),
                       help="on an error, show the traceback; log everything")


def _add_common_options_everywhere(parser: argparse.ArgumentParser) -> None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):  # aliases map to the same parser
                _add_common_options(sub)
                _add_common_options_everywhere(sub)


def _run_doctor(args: argparse.Namespace) -> int:
    from uartlab.app.cli import doctor

    return doctor.main(args)


def _run_bench_sim(args: argparse.Namespace) -> int:
    from uartlab.app.bench import sim as bench_sim

    return bench_sim.main(args)


def _lazy(module: str, needs: str | None = None):
    """Import the subcommand's module only when it runs, so `uartlab --help` stays fast; with ``needs``,
    first check that extra is installed (one line naming the pip install if not; app/cli/extras.py)."""

    def run(args: argparse.Namespace) -> int:
        if needs is not None:
            from uartlab.app.cli.extras import require

            require(needs)
        return importlib.import_module(f"uartlab.app.{module}").main(args)

    return run


if __name__ == "__main__":
    sys.exit(main())
