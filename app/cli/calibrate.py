"""`uartlab calibrate sea|nano17|servo-zero|mocap|moment-arms|model`: run, print the fit, store it.

Without --rig the procedures drive a twin plant in-process (app/procedures/on_twin.py). With
``--rig twin`` (the shipped twin rig, ``--speed`` to run it faster) or ``--rig rig.toml`` they run at
the rig, through its real drivers (app/procedures/at_rig.py); ``model`` has no at-rig form. Nothing is
written with --dry-run, and nothing is written when a procedure fails: CalibrationError reaches the user
as one line, after the procedure has said why it stopped and that the servos hold.

At the rig the operator's signals are `uartlab run`'s: Ctrl-C (or SIGTERM: a window closing, a kill) stops
the procedure with the servos holding; Ctrl-C again, or Ctrl-\\ (SIGQUIT: what the window's E-stop sends a
procedure it started), is the E-stop: torque off on all six at once, read back, and said.
"""

from __future__ import annotations

import argparse
import getpass
import os
import signal
import threading
import time
from contextlib import contextmanager, suppress

KINDS = {"sea": "sea", "nano17": "nano17", "servo-zero": "servo_zero", "mocap": "mocap",
         "moment-arms": "moment_arms", "model": "model"}
DEFAULT_FIT = ("coulomb", "a", "Kx")   # calibrate model --fit


def add_parser(sub) -> None:
    from uartlab.app.cli.types import (
        angle_deg,
        finite_float,
        fraction,
        non_negative_int,
        one_of,
        positive_float,
        positive_int,
        twin_speed,
    )
    from uartlab.sim.names import ARM_FORMS

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
        p.add_argument("--speed", type=twin_speed, default=None, help="--rig twin: model seconds per wall second")
        p.add_argument("--seed", type=non_negative_int, default=0, help="twin seed")
        p.add_argument("--notes", default="", help="free text kept in the file's provenance")
        if name in ("sea", "servo-zero", "moment-arms", "model"):
            p.add_argument("--perturbation", type=fraction, default=None,
                           help="twin: relative spread of its true parameters around the defaults "
                                "(twin plant: 0.1, model 0.2; --rig twin: the rig file's, 0)")
        if name == "sea":
            p.add_argument("--degree", default="1", choices=("1", "2", "auto"), help="fit degree")
        if name == "servo-zero":
            p.add_argument("--pretension", type=positive_float, default=0.3, help="pretension (N) for the offset")
        if name == "nano17":
            p.add_argument("--cal", default=None, help="ATI .cal file (default: the twin's)")
            p.add_argument("--tool", type=finite_float, nargs=6, default=[0, 0, 0, 0, 0, 0],
                           metavar=("DX", "DY", "DZ", "RX", "RY", "RZ"), help="tool transform (mm, degrees)")
        if name in ("sea", "servo-zero", "moment-arms"):
            p.add_argument("--tendons", nargs="+", action="extend", default=None,
                           type=one_of(_tendons, "tendon", str.upper), metavar="TENDON",
                           help="at the rig: only these tendons (moment-arms: the sweep order, each once)")
        if name == "moment-arms":
            p.add_argument("--form", choices=ARM_FORMS, default="polynomial",
                           help="the model's polynomials in each joint's angle, or tables (CSV grids every 10 deg; "
                                "the MCP arms over both MCP angles) written beside the parameters")
            p.add_argument("--amplitude-mm", type=positive_float, default=15.0,
                           help="at the rig: each pull's excursion")
            p.add_argument("--spring-n-per-mm", type=positive_float, nargs="+", action="extend", default=None,
                           metavar="K",
                           help="at the rig: the SEA springs' rated stiffness, one for all or six in tendon order "
                                "(default the model's nominal 0.3 N/mm)")
        if name == "mocap":
            p.add_argument("--jig", type=angle_deg, nargs=4, default=None, metavar=("MCP_AB", "MCP_FE", "PIP", "DIP"),
                           help="at the rig: the jig's joint angles (deg; default the Flex pose 0 30 45 30)")
        if name == "model":
            p.add_argument("--fit", nargs="+", action="extend", default=None, metavar="NAME",
                           type=one_of(_fit_parameters, "parameter"),
                           help=f"which of coulomb damping a b Kx Ky mu_x mu_y (and band_head_radius band_head_x "
                                f"band_head_y, with --params giving the lateral bands a PIP_wrap) to fit "
                                f"(default: {' '.join(DEFAULT_FIT)})")
            p.add_argument("--scheduler", default=None,
                           help="dask scheduler address tcp://host:8786 (default: local processes)")
            p.add_argument("--workers", type=positive_int, default=None, help="local worker processes")
            p.add_argument("--session", nargs="+", action="extend", default=None, metavar="FILE.h5",
                           help="fit to these recorded sessions (default: trials recorded on the twin)")
            p.add_argument("--trial", nargs="+", action="extend", default=None, metavar="NAME",
                           help="with --session: only these trials (every repeat, across files)")
            p.add_argument("--params", default=None, metavar="PARAMS.toml",
                           help="with --session: start from this parameter file (default: what the sessions "
                                "were recorded with - the UART defaults and the moment arms and model values "
                                "calibrated then)")
            p.add_argument("--jackknife", action="store_true",
                           help="with --session: also the between-trial 1-sigma (one more fit per trial)")
        p.set_defaults(run=main)


def _tendons() -> tuple[str, ...]:
    from uartlab.sim.names import TENDONS

    return TENDONS


def _fit_parameters() -> tuple[str, ...]:
    from uartlab.calibration.model_fit import PARAMETERS

    return PARAMETERS


def main(args: argparse.Namespace) -> int:
    """Run the procedure, print its report, store the record and ``<record>.log`` beside it: every log record
    of the run (INFO and above) and the lines printed. Progress (per tendon, sweep or simulation) on stderr."""
    import logging

    if args.rig is not None:  # at the rig (twin or hardware): through the [rig] drivers
        from uartlab.app.cli.extras import require

        require("rig")
    from uartlab.app.record.logs import log_file
    from uartlab.calibration.store import CalibrationRecord, CalibrationStore, Provenance

    proc = args.procedure
    if not args.dry_run:  # where the result goes, checked before the procedure runs (not after it)
        from uartlab.app.cli.paths import writable_folder

        # not created yet: nothing is written unless the procedure succeeds
        CalibrationStore(writable_folder(args.store, "--store", create=False)).current_files()
    if getattr(args, "cal", None):
        from uartlab.calibration.nano17 import load_cal

        load_cal(args.cal)   # a bad .cal file: said before any rig starts
    if args.rig is None and getattr(args, "perturbation", 0.0) is None:
        args.perturbation = 0.2 if proc == "model" else 0.1
    log = logging.getLogger(__name__)
    with log_file(None) as capture:  # in memory until the store names the record

        def say(line: str) -> None:
            print(line)
            capture.note(line, "uartlab.calibrate")

        log.info("uartlab calibrate %s %s", proc,
                 f"at the rig {args.rig!r}" if args.rig else "on the twin plant (in-process)")
        values, residuals, method, lines = _procedure(args, capture)
        say(f"{proc} calibration ({method})")
        for line in lines:
            say("  " + line)
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
        say(f"written {path} (now current)")
        capture.write_to(path.with_suffix(".log"))
    return 0


PROGRESS_UNITS = {"sea": "tendon", "servo-zero": "tendon", "moment-arms": "sweep", "model": "simulation"}


def _procedure(args: argparse.Namespace, capture):
    """(values, residuals, method, report lines) of the procedure, with a progress bar where it has steps."""
    from uartlab.app.cli.progress import progress
    from uartlab.app.procedures import on_twin as twin_runs

    proc = args.procedure
    with progress(f"calibrate {proc}", unit=PROGRESS_UNITS.get(proc, "step")) as tick:
        if args.rig is not None:
            return _at_rig(args, capture, tick)
        if proc == "sea":
            degree = args.degree if args.degree == "auto" else int(args.degree)
            return twin_runs.run_sea(args.seed, args.perturbation, degree, on_progress=tick)
        if proc == "servo-zero":
            return twin_runs.run_servo_zero(args.seed, args.perturbation, args.pretension, on_progress=tick)
        if proc == "nano17":
            return twin_runs.run_nano17(args.cal, tuple(args.tool), args.seed)
        if proc == "mocap":
            return twin_runs.run_mocap(args.seed)
        if proc == "moment-arms":
            return twin_runs.run_moment_arms(args.seed, args.perturbation, on_progress=tick, form=args.form)
        from uartlab.calibration.executors import executor_for

        fit = tuple(dict.fromkeys(args.fit or DEFAULT_FIT))   # each once, in the order given
        if args.params in _fit_parameters():   # the old spelling: --params took the names to fit
            raise ValueError(f"--params {args.params}: --params is a parameter file (the start values); "
                             f"choose what to fit with --fit {args.params}")
        if args.session is None and (args.trial or args.params or args.jackknife):
            raise ValueError("calibrate model: --trial, --params and --jackknife need --session FILE.h5")
        if args.session is None:
            with executor_for(args.scheduler, args.workers) as ex:
                return twin_runs.run_model(fit, ex, args.seed, args.perturbation, on_progress=tick)
        from uartlab.app.procedures.from_sessions import fit_sessions, read_session_recordings
        from uartlab.app.record.params import recorded_params
        from uartlab.sim import FingerParams

        recordings = read_session_recordings(args.session, args.trial)  # bad files: before any worker starts
        if args.params:
            start, start_source = FingerParams.from_toml(args.params), args.params
        else:  # what the sessions' live model ran with: the defaults and the calibrations then current
            _, start_source, start = recorded_params(args.session)
        with executor_for(args.scheduler, args.workers) as ex:
            return fit_sessions(recordings, fit, start, ex, start_source, args.jackknife, on_progress=tick)


def _at_rig(args: argparse.Namespace, capture=None, tick=None):
    """Start the rig (the twin rig, or rig.toml's devices), run the procedure through its drivers, stop it.
    What the procedure says goes to stderr and into the calibration's log (``capture``)."""
    from dataclasses import replace
    from pathlib import Path

    import numpy as np
    from uartlab.app.cli import progress
    from uartlab.app.cli.run import rig_config
    from uartlab.app.procedures import at_rig as rig_runs
    from uartlab.app.rig.config import TWIN_RIG
    from uartlab.app.rig.rig import Rig
    from uartlab.sim.names import TENDONS, tendon_index

    proc = args.procedure
    if proc == "model":
        raise ValueError("calibrate model fits recorded trials by simulation; it has no --rig form")
    config = rig_config(Path(args.rig), args.speed)
    if args.rig == TWIN_RIG:
        given = getattr(args, "perturbation", None)  # the twin plant's default (0.1) is not the twin rig's
        perturbation = given if given is not None else config.twin.perturbation
        config = replace(config, twin=replace(config.twin, seed=args.seed, perturbation=perturbation))
    tendons = tuple(TENDONS[tendon_index(t)] for t in args.tendons) if getattr(args, "tendons", None) else None

    def say(line: str) -> None:
        progress.write(line)  # stderr, around the progress bar
        if capture is not None:
            capture.note(line, "uartlab.calibrate")

    started_s, unit = time.monotonic(), PROGRESS_UNITS.get(proc, "step")

    def step_done(done: int, total: int | None = None) -> None:
        """The bar's step; with no bar (stderr a log or a pipe) a line, so minutes at the rig are not silent."""
        if tick is not None:
            tick(done, total)
        if (tick is None or not tick.visible) and progress.shown() is not False:
            of = f" of {total}" if total is not None else ""
            say(f"calibrate {proc}: {done}{of} {unit}s done ({time.monotonic() - started_s:.0f} s)")

    # An E-stop while the rig comes up stops here, before anything moves (by default SIGQUIT would dump core).
    signal.signal(ESTOP_SIGNAL, _stop_before_the_rig_is_up)
    with Rig(config) as rig, _operator_signals(rig, say, f"calibration procedure {proc!r} at the rig"):
        if proc == "sea":
            degree = args.degree if args.degree == "auto" else int(args.degree)
            ask = None if rig.twin_plant is not None else input
            return rig_runs.run_sea(rig, tendons or TENDONS, degree=degree, ask=ask, say=say, on_progress=step_done)
        if proc == "servo-zero":
            return rig_runs.run_servo_zero(rig, tendons or TENDONS, args.pretension, say=say, on_progress=step_done)
        if proc == "nano17":
            return rig_runs.run_nano17(rig, args.cal, tuple(args.tool), say=say)
        if proc == "mocap":
            return rig_runs.run_mocap(rig, jig_deg=args.jig, say=say)
        k = None
        if args.spring_n_per_mm is not None:
            if len(args.spring_n_per_mm) not in (1, 6):
                raise ValueError(f"--spring-n-per-mm needs one or six values, got {len(args.spring_n_per_mm)}")
            k = np.asarray([v * 1e3 for v in args.spring_n_per_mm] * (6 // len(args.spring_n_per_mm)), float)
        return rig_runs.run_moment_arms(rig, tendons or TENDONS * 2, args.amplitude_mm * 1e-3,
                                        spring_stiffness_N_per_m=k, say=say, on_progress=step_done, form=args.form)


ESTOP_SIGNAL = signal.SIGQUIT   # Ctrl-\ at a terminal; the window's E-stop for a procedure it started
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
ESTOP_WAIT_S = 0.5   # how long the signal handler waits for torque off before the procedure unwinds
# Said once the rig is up and these signals are the operator's; before it, nothing has moved (the window sends
# SIGTERM then, not ESTOP_SIGNAL).
RIG_UP = "up; Ctrl-C stops the procedure (the servos hold), Ctrl-\\ is the E-stop (torque off)"


def _stop_before_the_rig_is_up(_signum, _frame) -> None:
    raise KeyboardInterrupt("operator E-stop")


@contextmanager
def _operator_signals(rig, say, what: str):
    """While a procedure has the rig: the first stop signal ends it with the servos holding (a
    KeyboardInterrupt naming it, which the procedure answers with its safe action: nothing written); Ctrl-C
    again or ESTOP_SIGNAL is the E-stop: torque off now (an E-stop first also ends the procedure). So is
    `uartlab estop` from another terminal, which reaches the procedure at the rig core's address while it has
    the devices (app/serve/estop_point.py; ``what`` names it there). The torque off runs on a thread other than
    the main one, which may be in the middle of a bus transaction that a torque off must not be sent into (the
    bus lock lets it in after that transaction)."""
    from uartlab.app.run.run import estop_rig
    from uartlab.app.serve.estop_point import EstopPoint
    from uartlab.app.serve.estop_server import estop_reason

    stopping = False
    estopped: list[str] = []   # the E-stop that came through the address: the procedure ends
    off = threading.Event()    # ... once its torque off is done (or ESTOP_WAIT_S)
    main_thread = threading.get_ident()   # signal handlers are set, and run, on the main thread

    def estop(why: str) -> float:
        """Torque off; when (monotonic s) it was. Raises what stopped it, after saying so."""
        try:
            off_s = estop_rig(rig, why)
        except Exception as exc:
            say(f"E-STOP FAILED: {exc} (press the rig's hardware E-stop)")
            raise
        say(f"E-STOP: {why}: torque off on all six servos")
        return off_s

    def estop_said(why: str) -> None:
        with suppress(Exception):   # a failure is said by estop
            estop(why)

    def on_signal(signum, _frame) -> None:
        nonlocal stopping
        if estopped:   # sent by the address's thread below, which turns torque off
            if stopping:
                return
            stopping = True
            off.wait(ESTOP_WAIT_S)
            raise KeyboardInterrupt(estopped[0])
        name = "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name
        if signum != ESTOP_SIGNAL and not stopping:
            stopping = True
            raise KeyboardInterrupt(name)
        why = f"operator E-stop ({'Ctrl-C again' if signum == signal.SIGINT else name})"
        torque_off = threading.Thread(target=estop_said, args=(why,), name="calibrate-estop", daemon=True)
        torque_off.start()
        if not stopping:
            stopping = True
            torque_off.join(ESTOP_WAIT_S)
            raise KeyboardInterrupt(why)

    def estop_from_address(reason: str, who: str) -> dict:
        """On the E-stop address's thread: the main thread told to end the procedure (a signal, so a wait for
        the bus or the operator's Enter ends at once, as for Ctrl-\\), and torque off from here."""
        received_s = time.monotonic()
        why = estop_reason(reason, who)
        if not estopped:
            estopped.append(why)
            signal.pthread_kill(main_thread, ESTOP_SIGNAL)
        try:
            off_s = estop(why)
        finally:
            off.set()
        return {"acted_s": off_s - received_s, "recorded_in": None, "received_s": received_s}

    before = {signum: signal.signal(signum, on_signal) for signum in (*STOP_SIGNALS, ESTOP_SIGNAL)}
    try:
        with EstopPoint(estop_from_address, what, say):
            say(f"{rig.config.source}: {RIG_UP}")
            yield
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)


def _login() -> str:
    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001 - no login name in some containers; provenance stays honest
        return ""
