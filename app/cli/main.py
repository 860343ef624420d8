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
from uartlab.processes import exit_at_once

# The command table: modules that define commands' options (`add_parser(sub)`), in `uartlab --help` order
# after doctor. The parser is built on every start-up (`uartlab --version` too), so these modules import
# nothing heavy at module level - no numpy, numba, scipy, h5py, Qt, gRPC - and a command's own modules load
# when it runs (tests/app/cli/test_cli_startup.py checks; `uartlab bench cli` measures).
COMMAND_MODULES = ("doctor", "calibrate", "sim", "twin", "rig", "record", "run", "estop", "gui", "verify", "export",
                   "replay", "compare", "bench")


class _Parser(argparse.ArgumentParser):
    """A command-line mistake is one line too: ``uartlab <cmd>: error: <what> (uartlab <cmd> --help)``, exit 2
    (subcommands' parsers are this class too: add_subparsers makes its parsers of the parent's class)."""

    def error(self, message: str):
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {' '.join(message.split())} ({self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="uartlab",
        description="Control, data acquisition and bond-graph modelling for the UART robotic finger.",
    )
    parser.add_argument("--version", action="version", version=f"uartlab {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    for module in COMMAND_MODULES:
        importlib.import_module(f"uartlab.app.cli.{module}").add_parser(sub)
    _add_common_options(parser, top=True)
    _add_common_options_everywhere(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:   # said by the command they were given to, whose --help lists its options (not by `uartlab`)
        _chosen_parser(parser, args).error(f"unrecognized arguments: {' '.join(unknown)}")
    _configure_logging(args)
    code = _run(args)
    if getattr(args, "service", False):
        exit_at_once(code)
    return code


def _run(args: argparse.Namespace) -> int:
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


def _chosen_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The (sub)command's own parser the arguments chose: `uartlab sim free-motion`'s for `sim free-motion`."""
    while True:
        chooser = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
        chosen = getattr(args, chooser.dest, None) if chooser is not None else None
        if chooser is None or chosen not in chooser.choices:
            return parser
        parser = chooser.choices[chosen]


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
    errors = getattr(exc, "errors", None)
    if isinstance(exc, UartlabError) and isinstance(errors, list) and all(isinstance(e, str) for e in errors):
        text = "; ".join(" ".join(e.split()) for e in errors)   # a file's every error, each readable
    elif isinstance(exc, UartlabError | ValueError):
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
    for key in ("sim_command", "bench", "twin_command", "rig_command", "procedure"):
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


if __name__ == "__main__":
    sys.exit(main())
