"""`uartlab run SUITE` and `uartlab demo`: a protocol suite on the rig, recorded, with a summary at the end.

    uartlab run free_motion                       # the twin rig unless --rig says otherwise
    uartlab run my_suite.toml --rig rig.toml --out recordings --operator kim
    uartlab run free_motion --dry-run             # the model only (protocols/dry_run.py)
    uartlab run free_motion --replay s.h5 --max-tendon-force 8   # limits on a recorded run (run/replay_dry_run.py)
    uartlab demo                                  # the twin at 4x, one repeat of each free-motion trial

A run is the rig core's (app/serve/): this command attaches to the core at --core (default: $UARTLAB_CORE,
else the usual ipc address) or starts `uartlab rig serve` for the run, submits the suite and shows its
progress (app/cli/run_on_core.py). --dry-run and --replay stay here: nothing moves. Ctrl-C aborts the run
(its safe action, the file closed cleanly); a second Ctrl-C is the E-stop (torque off, latched). Exit status:
0 when the run finished, 1 when it ended in FAULT (a recorder failure mid-run included: it stops the run like
a trip) or was aborted, 2 for bad input (suite, rig.toml) before anything moved, 3 when the output disk has
no room for the session (pre-flight), the file failed after the run ended or no core could be reached, 130
after an E-stop from the keyboard.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from uartlab.app.cli.rig import CORE_HELP
from uartlab.app.cli.types import positive_float, positive_int, twin_speed

if TYPE_CHECKING:  # the rig, the protocols and session files load when a command runs, not at start-up
    from uartlab.app.rig.config import RigConfig
    from uartlab.protocols.suite import Suite

DEMO_SPEED = 4.0   # the twin at 4x: the demo's six 4 s pulls (with settle and return) in about 15 s


def add_parser(sub) -> None:
    run = sub.add_parser("run", help="run a protocol suite on the rig (the twin unless --rig), recorded")
    run.add_argument("suite", help="built-in suite (free_motion, surface_contact) or a suite .toml file")
    _common(run)
    run.add_argument("--dry-run", action="store_true", help="simulate every trial on the model and check the limits")
    replay = run.add_argument_group("replay", "--replay FILE: the suite's interlocks on a recorded run, nothing moves "
                                              "and nothing is written (--rig: whose ceilings and stream ages; "
                                              "default the rig.toml the session embeds)")
    replay.add_argument("--replay", type=Path, metavar="FILE", help="a session file recorded by `uartlab run`")
    replay.add_argument("--max-tendon-force", type=positive_float, metavar="N", help="tendon force limit, N")
    replay.add_argument("--max-fingertip-force", type=positive_float, metavar="N", help="fingertip force limit, N")
    replay.add_argument("--max-excursion", type=positive_float, metavar="MM",
                        help="excursion limit of every tendon, mm")
    run.set_defaults(run=main)
    demo = sub.add_parser("demo", help="no hardware needed: the twin rig runs one repeat of each free-motion "
                                       "trial, recorded, with the results")
    _common(demo)
    demo.set_defaults(run=demo_main, suite="free_motion", dry_run=False, replay=None)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rig", type=Path, help="rig.toml, or twin (the default: the shipped twin rig)")
    p.add_argument("--out", type=Path, help="folder for the session file (default: the config's recording folder)")
    p.add_argument("--repeats", type=positive_int, help="run each trial this many times instead of the suite's repeats")
    p.add_argument("--trial", nargs="+", action="extend", dest="trials", metavar="NAME",
                   help="run only these trials (--trial a b, or --trial a --trial b)")
    p.add_argument("--speed", type=twin_speed, help="twin only: model seconds per wall second")
    p.add_argument("--safe-action", choices=("hold", "torque_off"), default="hold",
                   help="what the servos do after a trip or abort (the E-stop always turns torque off)")
    p.add_argument("--operator", default="", help="who runs the session")
    p.add_argument("--notes", default="", help="free text stored with the session")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--params", type=Path, help="the model's parameter TOML: the live model's beside the rig, the "
                                               "dry run's (default: the UART defaults)")
    p.add_argument("--no-live-model", action="store_true", help="do not run the model beside the rig")
    p.add_argument("--core", metavar="ADDR", help=CORE_HELP + "; none there: one is started for the run")
    p.add_argument("--keys", metavar="DIR", help="CurveZMQ keys for a remote core: DIR/client.key_secret, "
                                                 "DIR/server.key")


# ------------------------------------------------------------------ entry points
def demo_main(args: argparse.Namespace) -> int:
    if args.speed is None and args.rig is None:
        args.speed = DEMO_SPEED
    if args.repeats is None:
        args.repeats = 1
    return main(args)


def main(args: argparse.Namespace) -> int:
    from uartlab.app.cli.extras import require
    from uartlab.protocols.suite import BUILTIN_SUITES, resolve_suite

    if getattr(args, "replay", None) is not None:
        return _replay(args)
    if _replay_options(args):
        raise ValueError(f"{_replay_options(args)[0]}: only with --replay FILE")
    if getattr(args, "params", None) and getattr(args, "no_live_model", False):
        raise ValueError("--params: not with --no-live-model (they are the live model's parameters)")
    if not args.dry_run:
        require("rig")  # the twin rig and the hardware both run through the [rig] drivers
    from uartlab.app.cli.paths import writable_folder
    from uartlab.app.rig.calibrations import RigCalibrations

    config = rig_config(args.rig, args.speed)
    # Validated against this rig's ceilings (rig.toml [limits]): a suite may only tighten them.
    suite = select(resolve_suite(args.suite, config.ceilings), args.trials, args.repeats)
    if args.dry_run:
        from uartlab.protocols import dry_run
        if args.rig:  # a dry run checks every input it is given: the rig's config and its calibration store
            RigCalibrations(config).check_files()
        return dry_run.main(argparse.Namespace(suite=suite, json=args.json, ceilings=config.ceilings,
                                               params=getattr(args, "params", None)))
    # Every input and the output folder are checked before the run is submitted (app/cli/paths.py); the core
    # checks the suite again against its own rig's ceilings.
    folder = writable_folder(args.out, "--out") if args.out else None
    RigCalibrations(config).check_files()
    live_model = not getattr(args, "no_live_model", False)
    request = {"suite": args.suite, "trials": args.trials, "repeats": args.repeats, "operator": args.operator,
               "notes": args.notes, "folder": str(folder.resolve()) if folder else None,
               "safe_action": args.safe_action, "live_model": live_model,
               "title": f"uartlab {getattr(args, 'command', 'run')}", "command_line": shlex.join(sys.argv)}
    if suite.text and args.suite not in BUILTIN_SUITES:   # a file: the core gets its text, named as given
        request["suite_text"] = suite.text
    if getattr(args, "params", None):  # a whole parameter set for the live model, used as given
        from uartlab.sim import FingerParams

        given = FingerParams.from_toml(args.params)   # bad parameters are refused here, before any core starts
        request.update(params_text=args.params.read_text(encoding="utf-8"), params_source=str(args.params),
                       params_tables=given.table_texts())
    from uartlab.app.cli.run_on_core import run_on_core

    return run_on_core(args, request)


def _replay_options(args: argparse.Namespace) -> list[str]:
    return [f"--{name.replace('_', '-')}" for name in ("max_tendon_force", "max_fingertip_force", "max_excursion")
            if getattr(args, name, None) is not None]


def _replay(args: argparse.Namespace) -> int:
    """`run SUITE --replay FILE` (app/run/replay_dry_run.py): the options that would move or write refused."""
    from uartlab.app.record.player import SessionFile
    from uartlab.app.rig.config import load_rig_config
    from uartlab.app.run import replay_dry_run
    from uartlab.app.run.replayed_rig import recorded_rig_config
    from uartlab.protocols.suite import resolve_suite

    given = [o for o, v in (("--dry-run", args.dry_run), ("--out", args.out), ("--speed", args.speed),
                            ("--repeats", args.repeats), ("--params", args.params)) if v]
    if given:
        raise ValueError(f"{given[0]}: not with --replay (a replay moves nothing and writes nothing)")
    if args.rig:
        config = load_rig_config(args.rig)
    else:
        with SessionFile(args.replay) as file:
            config = recorded_rig_config(file)
    suite = select(resolve_suite(args.suite, config.ceilings), args.trials, None)
    return replay_dry_run.main(args, suite, config)


def select(suite: Suite, trials: list[str] | None, repeats: int | None) -> Suite:
    """The suite narrowed to some trials and/or another repeat count (protocols/suite.py ``select_trials``)."""
    from uartlab.protocols.suite import select_trials

    return select_trials(suite, trials, repeats)


def rig_config(path: Path | None, speed: float | None) -> RigConfig:
    from uartlab.app.rig.config import default_rig_config, load_rig_config, twin_speed_problem

    config = load_rig_config(path) if path else default_rig_config()
    if speed is not None:
        if (problem := twin_speed_problem(speed)) is not None:
            raise ValueError(f"--speed: {problem}")
        config = replace(config, twin=replace(config.twin, speed=speed))
    return config
