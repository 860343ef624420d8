"""`uartlab run SUITE` and `uartlab demo`: a protocol suite on the rig, recorded, with a summary at the end.

    uartlab run free_motion                       # the twin rig unless --rig says otherwise
    uartlab run my_suite.toml --rig rig.toml --out recordings --operator kim
    uartlab run free_motion --dry-run             # the model only (protocols/dry_run.py)
    uartlab run free_motion --replay s.h5 --max-tendon-force 8   # limits on a recorded run (run/replay_dry_run.py)
    uartlab demo                                  # the twin at 4x, one repeat of each free-motion trial

Ctrl-C is the E-stop: torque off at once, the trip recorded, the file closed cleanly; a second Ctrl-C
leaves without waiting. Exit status: 0 when the run finished, 1 when it ended in FAULT (a recorder failure
mid-run included: it stops the run like a trip) or was aborted, 2 for bad input (suite, rig.toml) before
anything moved, 3 when the output disk has no room for the session (pre-flight) or the file failed after the
run ended, 130 after an E-stop from the keyboard.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING

from uartlab.app.cli.types import positive_float, positive_int
from uartlab.sim.names import JOINTS

if TYPE_CHECKING:  # the rig, the protocols and session files load when a command runs, not at start-up
    from uartlab.app.rig.config import RigConfig
    from uartlab.app.run.experiment import Experiment, ExperimentStatus, SteadyState
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
    p.add_argument("--rig", type=Path, help="rig.toml (default: the shipped twin rig)")
    p.add_argument("--out", type=Path, help="folder for the session file (default: the config's recording folder)")
    p.add_argument("--repeats", type=positive_int, help="run each trial this many times instead of the suite's repeats")
    p.add_argument("--trial", nargs="+", action="extend", dest="trials", metavar="NAME",
                   help="run only these trials (--trial a b, or --trial a --trial b)")
    p.add_argument("--speed", type=positive_float, help="twin only: model seconds per wall second")
    p.add_argument("--safe-action", choices=("hold", "torque_off"), default="hold",
                   help="what the servos do after a trip or abort (the E-stop always turns torque off)")
    p.add_argument("--operator", default="", help="who runs the session")
    p.add_argument("--notes", default="", help="free text stored with the session")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--params", type=Path, help="the live model's parameter TOML (default: the UART defaults)")
    p.add_argument("--no-live-model", action="store_true", help="do not run the model beside the rig")


# ------------------------------------------------------------------ entry points
def demo_main(args: argparse.Namespace) -> int:
    if args.speed is None and args.rig is None:
        args.speed = DEMO_SPEED
    if args.repeats is None:
        args.repeats = 1
    return main(args)


def main(args: argparse.Namespace) -> int:
    from uartlab.app.cli.extras import require
    from uartlab.protocols.runner import Phase
    from uartlab.protocols.suite import resolve_suite

    if getattr(args, "replay", None) is not None:
        return _replay(args)
    if _replay_options(args):
        raise ValueError(f"{_replay_options(args)[0]}: only with --replay FILE")
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
        return dry_run.main(argparse.Namespace(suite=suite, json=args.json, ceilings=config.ceilings))
    from uartlab.app.run.run import Run

    # Every input and the output folder are checked before the rig starts (app/cli/paths.py)
    folder = writable_folder(args.out, "--out") if args.out else writable_folder(
        config.recording.folder, f"{config.source}: recording.folder")
    RigCalibrations(config).check_files()
    live_model = not getattr(args, "no_live_model", False)
    params = None
    if getattr(args, "params", None) and live_model:  # a whole parameter set, used as given
        from uartlab.sim import FingerParams

        params = FingerParams.from_toml(args.params), [f"parameters {args.params}"]
    run = Run(suite, config=config, folder=folder, operator=args.operator, notes=args.notes,
              safe_action=args.safe_action, live_model=live_model, params=params,
              title=f"uartlab {getattr(args, 'command', 'run')}")
    estop = threading.Event()
    previous = signal.signal(signal.SIGINT, _estop_handler(estop))
    quiet = args.json or getattr(args, "quiet", 0) > 0
    try:
        with run:
            run.assemble()
            _say_warnings(run)
            status = _run(run, estop, quiet=quiet)
    finally:
        signal.signal(signal.SIGINT, previous)
    experiment, path = run.experiment, run.path
    if experiment is None or path is None:   # assembled, into a folder: it has both
        raise RuntimeError(f"{run.title}: the run has no experiment or no session file after it ran")
    _report(path, suite, experiment, status, args.json, run.live_model)
    if run.close_error is not None:  # the file failed after the run ended: an I/O failure (exit 3)
        raise run.close_error
    if estop.is_set():
        return 130
    return 1 if status.phase in (Phase.FAULT, Phase.ABORTED) else 0


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


def _say_warnings(run, said: int = 0) -> int:
    """Print the run's warnings from ``said`` on; returns how many have been printed."""
    for warning in run.warnings[said:]:
        print(f"warning: {warning}", file=sys.stderr, flush=True)
    return len(run.warnings)


def select(suite: Suite, trials: list[str] | None, repeats: int | None) -> Suite:
    """The suite narrowed to some trials and/or another repeat count (the file's text and hash stay)."""
    chosen = suite.trials
    if trials:
        names = [t.name for t in suite.trials]
        unknown = [t for t in trials if t not in names]
        if unknown:
            from uartlab.app.cli.types import suggest

            raise ValueError(f"--trial: {suite.source} has no trial named {', '.join(map(repr, unknown))}"
                             f"{suggest(unknown[0], names)} (the suite has {', '.join(names)})")
        chosen = tuple(t for t in suite.trials if t.name in trials)
    if repeats is not None:
        if repeats < 1:
            raise ValueError(f"--repeats must be at least 1, got {repeats}")
        chosen = tuple(replace(t, repeats=repeats) for t in chosen)
        # More repeats of a trial that does not return start each where the last left the tendon.
        from uartlab.protocols.limits import excursion_overruns

        if overruns := excursion_overruns(chosen, suite.limits):
            raise ValueError(f"{suite.source}: with --repeats {repeats}: {overruns[0].reason}")
    return replace(suite, trials=chosen)


def rig_config(path: Path | None, speed: float | None) -> RigConfig:
    from uartlab.app.rig.config import default_rig_config, load_rig_config

    config = load_rig_config(path) if path else default_rig_config()
    if speed is not None:
        if speed <= 0:
            raise ValueError(f"--speed must be > 0, got {speed:g}")
        config = replace(config, twin=replace(config.twin, speed=speed))
    return config


# ------------------------------------------------------------------ the run
def _estop_handler(estop: threading.Event):
    def handler(signum, frame):
        if estop.is_set():  # the second Ctrl-C: leave now (the rig's close still turns torque off)
            raise KeyboardInterrupt
        estop.set()
    return handler


def _run(run, estop: threading.Event, quiet: bool) -> ExperimentStatus:
    said = len(run.warnings)
    run.start()
    _say_warnings(run, said)
    shown = ""
    tty = sys.stdout.isatty() and not quiet
    started = time.monotonic()
    while not run.wait(0.1):
        if estop.is_set():
            run.estop("E-stop: Ctrl-C at the console")
            break
        status = run.status()
        if quiet:
            continue
        line = _progress_line(status, time.monotonic() - started)
        if tty:
            print("\r" + line.ljust(100)[:100], end="", flush=True)
        elif status.message != shown:  # a log: one line per runner event
            shown = status.message
            print(f"[{time.monotonic() - started:7.1f} s] {status.message}", flush=True)
    if tty:
        print()
    run.wait(1.0)
    return run.status()


def _progress_line(status: ExperimentStatus, elapsed_s: float) -> str:
    width = 24
    filled = int(round(status.progress * width))
    bar = "#" * filled + "-" * (width - filled)
    trial = f"{status.trial_name} {status.repeat}" if status.trial_name else ""
    return f"[{bar}] {status.progress * 100:5.1f} %  {elapsed_s:6.1f} s  {status.phase:<10} {trial}"


# ------------------------------------------------------------------ the summary
def _report(path: Path, suite: Suite, exp: Experiment, status: ExperimentStatus, as_json: bool, live=None) -> None:
    steady = {(s.trial, s.repeat): s for s in exp.steady}
    if as_json:
        out = {"session_file": str(path), "suite": suite.name, "sha256": suite.sha256,
               "phase": status.phase, "fault_reason": status.fault_reason,
               "trials": [_result_dict(r, steady.get((r.trial, r.repeat))) for r in status.results]}
        if live is not None:
            out["live_model_rms_residuals"] = [{"trial": name, **asdict(s)} for name, s in live.summaries]
        print(json.dumps(out, indent=2))
        return
    print(summary_table(suite, status, steady))
    if live is not None and live.summaries:
        from uartlab.app.run.residuals import residual_table

        print(residual_table(live.summaries))
    print(f"session file: {path}")


def _result_dict(result, steady: SteadyState | None) -> dict:
    out = {"trial": result.trial, "repeat": result.repeat, "outcome": result.outcome,
           "settle_time_s": result.settle_time_s}
    if steady is not None:
        out.update(steady.to_dict())
    return out


def summary_table(suite: Suite, status: ExperimentStatus, steady: dict) -> str:
    from uartlab.protocols.runner import Phase

    joints = " ".join(f"{j:>7}" for j in JOINTS)
    lines = [f"suite {suite.name!r} ({suite.source}, sha256 {suite.sha256[:12]}): {status.phase}",
             f"{'trial':<24} {'rep':>3} {'outcome':<22} {'settle s':>8} {joints}  {'max tendon N':>12} {'tip N':>6}"]
    for r in status.results:
        s = steady.get((r.trial, r.repeat))
        settle = f"{r.settle_time_s:8.2f}" if r.settle_time_s is not None else f"{'-':>8}"
        if s is None:
            rest = " ".join(f"{'-':>7}" for _ in JOINTS) + f"  {'-':>12} {'-':>6}"
        else:
            angles = " ".join(f"{a:7.1f}" for a in s.joint_angles_deg)
            rest = f"{angles}  {s.tendon_force_N.max():12.2f} {float((s.fingertip_force_N ** 2).sum()) ** 0.5:6.2f}"
        lines.append(f"{r.trial:<24} {r.repeat:>3} {r.outcome:<22} {settle} {rest}")
    faulted = status.phase in (Phase.FAULT, Phase.ABORTED)
    lines.append(f"{len(status.results)} of {status.n_trials} trials run"
                 + (f"; stopped: {status.fault_reason or status.phase}" if faulted else ""))
    return "\n".join(lines)
