"""`uartlab calibrate sea|nano17|servo-zero|mocap|moment-arms|model`: run, print the fit, store it.

Without --rig the procedures drive a twin plant in-process (calibration/twin_runs.py). With
``--rig twin`` (the shipped twin rig, ``--speed`` to run it faster) or ``--rig rig.toml`` they run at
the rig, through its real drivers (calibration/rig_runs.py); ``model`` has no at-rig form. Nothing is
written with --dry-run, and nothing is written when a procedure fails: CalibrationError reaches the user
as one line, after the procedure has said why it stopped and that the servos hold.
"""

from __future__ import annotations

import argparse
import getpass
import os

KINDS = {"sea": "sea", "nano17": "nano17", "servo-zero": "servo_zero", "mocap": "mocap",
         "moment-arms": "moment_arms", "model": "model"}


def add_parser(sub) -> None:
    cal = sub.add_parser("calibrate", help="calibration procedures (on the twin by default); results to the store")
    cal_sub = cal.add_subparsers(dest="procedure", metavar="PROCEDURE", required=True)
    helps = {"sea": "pot volts -> tendon force per SEA (loading and unloading)",
             "nano17": "choose the .cal file and tool transform, tare",
             "servo-zero": "each tendon's slack-to-taut point and pretension offset",
             "mocap": "the finger's base frame in Motive and marker offsets per bone",
             "moment-arms": "r_T,j(theta) by the ACT method, as model parameters",
             "model": "friction, damping, contact law by least squares over simulations"}
    for name, text in helps.items():
        p = cal_sub.add_parser(name, help=text)
        p.add_argument("--store", default="calibrations", help="calibration store folder (default ./calibrations)")
        p.add_argument("--dry-run", action="store_true", help="run and print, write nothing")
        p.add_argument("--operator", default=None, help="who ran it (default: the login name)")
        p.add_argument("--rig", default=None, help="at the rig: 'twin' (the shipped twin rig) or rig.toml; "
                                                    "default: the twin plant in-process")
        p.add_argument("--speed", type=float, default=None, help="--rig twin: model seconds per wall second")
        p.add_argument("--seed", type=int, default=0, help="twin seed")
        p.add_argument("--notes", default="", help="free text kept in the file's provenance")
        if name in ("sea", "servo-zero", "moment-arms", "model"):
            p.add_argument("--perturbation", type=float, default=None,
                           help="twin: relative spread of its true parameters around the defaults "
                                "(twin plant: 0.1, model 0.2; --rig twin: the rig file's, 0)")
        if name == "sea":
            p.add_argument("--degree", default="1", choices=("1", "2", "auto"), help="fit degree")
        if name == "servo-zero":
            p.add_argument("--pretension", type=float, default=0.3, help="pretension (N) for the offset")
        if name == "nano17":
            p.add_argument("--cal", default=None, help="ATI .cal file (default: the twin's)")
            p.add_argument("--tool", type=float, nargs=6, default=[0, 0, 0, 0, 0, 0],
                           metavar=("DX", "DY", "DZ", "RX", "RY", "RZ"), help="tool transform (mm, degrees)")
        if name in ("sea", "servo-zero", "moment-arms"):
            p.add_argument("--tendons", nargs="+", default=None, metavar="TENDON",
                           help="at the rig: only these tendons (moment-arms: the sweep order, each once)")
        if name == "moment-arms":
            p.add_argument("--amplitude-mm", type=float, default=15.0, help="at the rig: each pull's excursion")
            p.add_argument("--spring-n-per-mm", type=float, nargs="+", default=None, metavar="K",
                           help="at the rig: the SEA springs' rated stiffness, one for all or six in tendon order "
                                "(default the model's nominal 0.3 N/mm)")
        if name == "mocap":
            p.add_argument("--jig", type=float, nargs=4, default=None, metavar=("MCP_AB", "MCP_FE", "PIP", "DIP"),
                           help="at the rig: the jig's joint angles (deg; default the Flex pose 0 30 45 30)")
        if name == "model":
            p.add_argument("--params", nargs="+", default=["coulomb", "a", "Kx"],
                           help="which of coulomb damping a b Kx Ky mu_x mu_y to fit")
            p.add_argument("--scheduler", default=None,
                           help="dask scheduler address tcp://host:8786 (default: local processes)")
            p.add_argument("--workers", type=int, default=None, help="local worker processes")
            p.add_argument("--session", nargs="+", default=None, metavar="FILE.h5",
                           help="fit to these recorded sessions (default: trials recorded on the twin)")
            p.add_argument("--trial", nargs="+", default=None, metavar="NAME",
                           help="with --session: only these trials (every repeat, across files)")
            p.add_argument("--start", default=None, metavar="PARAMS.toml",
                           help="with --session: start from these model parameters (default: what the sessions "
                                "were recorded with - the UART defaults and the moment arms and model values "
                                "calibrated then)")
            p.add_argument("--jackknife", action="store_true",
                           help="with --session: also the between-trial 1-sigma (one more fit per trial)")
        p.set_defaults(run=main)


def main(args: argparse.Namespace) -> int:
    if args.rig is not None:  # at the rig (twin or hardware): through the [rig] drivers
        from .extras import require

        require("rig")
    from uartlab.calibration import twin_runs
    from uartlab.calibration.store import CalibrationRecord, CalibrationStore, Provenance

    proc = args.procedure
    if args.rig is None and getattr(args, "perturbation", 0.0) is None:
        args.perturbation = 0.2 if proc == "model" else 0.1
    if args.rig is not None:
        result = _at_rig(args)
    elif proc == "sea":
        degree = args.degree if args.degree == "auto" else int(args.degree)
        result = twin_runs.run_sea(args.seed, args.perturbation, degree)
    elif proc == "servo-zero":
        result = twin_runs.run_servo_zero(args.seed, args.perturbation, args.pretension)
    elif proc == "nano17":
        result = twin_runs.run_nano17(args.cal, tuple(args.tool), args.seed)
    elif proc == "mocap":
        result = twin_runs.run_mocap(args.seed)
    elif proc == "moment-arms":
        result = twin_runs.run_moment_arms(args.seed, args.perturbation)
    else:
        from uartlab.calibration.executors import executor_for

        if args.session is None and (args.trial or args.start or args.jackknife):
            raise ValueError("calibrate model: --trial, --start and --jackknife need --session FILE.h5")
        if args.session is None:
            with executor_for(args.scheduler, args.workers) as ex:
                result = twin_runs.run_model(tuple(args.params), ex, args.seed, args.perturbation)
        else:
            from uartlab.app.model_sessions import fit_sessions, read_session_recordings
            from uartlab.app.session_params import recorded_params
            from uartlab.sim import FingerParams

            recordings = read_session_recordings(args.session, args.trial)  # bad files: before any worker starts
            if args.start:
                start, start_source = FingerParams.from_toml(args.start), args.start
            else:  # what the sessions' live model ran with: the defaults and the calibrations then current
                _, start_source, start = recorded_params(args.session)
            with executor_for(args.scheduler, args.workers) as ex:
                result = fit_sessions(recordings, tuple(args.params), start, ex, start_source, args.jackknife)
    values, residuals, method, lines = result
    print(f"{proc} calibration ({method})")
    for line in lines:
        print("  " + line)
    if args.dry_run:
        print("dry run: nothing written")
        return 0
    operator = args.operator if args.operator is not None else _login()
    if getattr(args, "session", None):   # fitted to recordings: they name where the data came from
        source = "sessions " + ", ".join(os.path.basename(p) for p in args.session)
    else:
        source = args.rig or "twin plant"
    record = CalibrationRecord(KINDS[proc], values, residuals,
                               Provenance(operator=operator, rig=source, method=method, notes=args.notes))
    path = CalibrationStore(args.store).save(record)
    print(f"written {path} (now current)")
    return 0


def _at_rig(args: argparse.Namespace):
    """Start the rig (the twin rig, or rig.toml's devices), run the procedure through its drivers, stop it."""
    import sys
    from dataclasses import replace
    from pathlib import Path

    from uartlab.calibration import rig_runs
    from uartlab.sim.names import TENDONS, tendon_index

    from .rig import Rig
    from .run_cli import rig_config

    proc = args.procedure
    if proc == "model":
        raise ValueError("calibrate model fits recorded trials by simulation; it has no --rig form")
    config = rig_config(None if args.rig == "twin" else Path(args.rig), args.speed)
    if args.rig == "twin":
        given = getattr(args, "perturbation", None)  # the twin plant's default (0.1) is not the twin rig's
        perturbation = given if given is not None else config.twin.perturbation
        config = replace(config, twin=replace(config.twin, seed=args.seed, perturbation=perturbation))
    tendons = tuple(TENDONS[tendon_index(t)] for t in args.tendons) if getattr(args, "tendons", None) else None

    def say(line: str) -> None:
        print(line, file=sys.stderr)

    with Rig(config) as rig:
        if proc == "sea":
            degree = args.degree if args.degree == "auto" else int(args.degree)
            ask = None if rig.twin_plant is not None else input
            return rig_runs.run_sea(rig, tendons or TENDONS, degree=degree, ask=ask, say=say)
        if proc == "servo-zero":
            return rig_runs.run_servo_zero(rig, tendons or TENDONS, args.pretension, say=say)
        if proc == "nano17":
            return rig_runs.run_nano17(rig, args.cal, tuple(args.tool), say=say)
        if proc == "mocap":
            return rig_runs.run_mocap(rig, jig_deg=args.jig, say=say)
        k = None
        if args.spring_n_per_mm is not None:
            if len(args.spring_n_per_mm) not in (1, 6) or min(args.spring_n_per_mm) <= 0:
                raise ValueError(f"--spring-n-per-mm needs one or six positive values, got {args.spring_n_per_mm}")
            k = [v * 1e3 for v in args.spring_n_per_mm] * (6 // len(args.spring_n_per_mm))
        return rig_runs.run_moment_arms(rig, tendons or TENDONS * 2, args.amplitude_mm * 1e-3,
                                        spring_stiffness_N_per_m=k, say=say)


def _login() -> str:
    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001 - no login name in some containers; provenance stays honest
        return ""
