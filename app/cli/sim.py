"""`uartlab sim ...`: run the paper's experiments on the model from the command line.

    uartlab sim free-motion --tendon FDP [--json] [--plot out.png]
    uartlab sim contact --pose curl --flexor FDP --em ED
    uartlab sim paper                      # all 22 distinct trials, one line each
    uartlab sim export-urdf -o finger.urdf
    uartlab sim params -o my_params.toml   # the defaults, to edit and pass back with --params
    uartlab sim sensitivity [--method sobol]   # which parameters move the steady states (app/cli/sim_sensitivity.py)
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING

# Light modules only: the options are defined at every start-up; the model loads when a command runs.
from uartlab.sim.errors import SimulationDiverged
from uartlab.sim.names import EM_TENDONS, FLEXORS, JOINTS, TENDONS
from uartlab.sim.step_size import DEFAULT_DT_S

if TYPE_CHECKING:
    from uartlab.sim import Finger
    from uartlab.sim.scenarios import Trial

from uartlab.app.cli.paths import writable_file
from uartlab.app.cli.types import angle_deg, float_in

MIN_DT_S = 1e-6   # 24 million RK4 steps for a paper trial: minutes already


def add_parser(sub) -> None:
    sim = sub.add_parser("sim", help="simulate the paper's experiments on the bond-graph model")
    sim_sub = sim.add_subparsers(dest="sim_command", metavar="SCENARIO", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--params", type=Path, help="parameter TOML file (default: the UART defaults)")
        p.add_argument("--method", choices=("rk4", "dopri5"), default="rk4",
                       help="integrator: fixed-step RK4 (the paper's) or adaptive Dormand-Prince")
        p.add_argument("--dt", type=float_in(MIN_DT_S, math.inf, " s (smaller steps would take hours)"),
                       default=DEFAULT_DT_S,
                       help=f"RK4 step, s (default {DEFAULT_DT_S:g})")
        p.add_argument("--json", action="store_true", help="print the steady state as JSON")
        p.add_argument("--plot", type=Path, metavar="FILE.png", help="save time histories as a PNG")

    free = sim_sub.add_parser("free-motion", help="from Flex, one tendon pulled 15 mm over a 4 s sigmoid")
    free.add_argument("--tendon", required=True, type=str.upper, choices=TENDONS)
    common(free)
    free.set_defaults(run=_run_free)

    contact = sim_sub.add_parser("contact", help="from Hook/Curl, a flexor 15 mm and an EM tendon 7.5 mm")
    contact.add_argument("--pose", required=True, type=str.capitalize, choices=("Hook", "Curl"))
    contact.add_argument("--flexor", required=True, type=str.upper, choices=FLEXORS)
    contact.add_argument("--em", required=True, type=str.upper, choices=EM_TENDONS)
    contact.add_argument("--angle", type=angle_deg, help="surface angle, deg (default: the paper's)")
    common(contact)
    contact.set_defaults(run=_run_contact)

    paper = sim_sub.add_parser("paper", help="all 22 distinct trials of the paper, one line each")
    paper.add_argument("--params", type=Path)
    paper.add_argument("--json", action="store_true")
    paper.set_defaults(run=_run_paper)

    urdf = sim_sub.add_parser("export-urdf", help="write the finger as URDF (links, joints, limits, inertias)")
    urdf.add_argument("-o", "--out", type=Path, default=Path("uart_finger.urdf"))
    urdf.add_argument("--params", type=Path)
    urdf.set_defaults(run=_run_urdf)

    mjcf = sim_sub.add_parser("export-mjcf", help="write the finger with its tendons as MuJoCo MJCF (needs "
                                                  "uartlab[mujoco]); --compare: the free-motion pulls in both")
    mjcf.add_argument("-o", "--out", type=Path, default=Path("uart_finger.xml"))
    mjcf.add_argument("--params", type=Path)
    mjcf.add_argument("--compare", action="store_true",
                      help="also pull each tendon as the paper's free-motion trials do, in MuJoCo and in uartlab")
    mjcf.set_defaults(run=_run_mjcf)

    params = sim_sub.add_parser("params", help="write the parameter set as TOML (defaults unless --params)")
    params.add_argument("-o", "--out", type=Path,
                        help="file to write, with the moment-arm tables it names beside it (default: print)")
    params.add_argument("--params", type=Path)
    params.add_argument("--store", type=Path,
                        help="a calibration store: its current moment arms and model values written over the set")
    params.set_defaults(run=_run_params)

    from uartlab.app.cli import sim_sensitivity

    sim_sensitivity.add_parser(sim_sub)


def _finger(args) -> Finger:
    from uartlab.sim import Finger, FingerParams

    params = FingerParams.from_toml(args.params) if getattr(args, "params", None) else FingerParams.uart()
    return Finger(params)


def _simulate(args, trial: Trial) -> int:
    from uartlab.sim import scenarios as sc

    finger = _finger(args)
    if args.plot:
        writable_file(args.plot, "--plot")   # before the simulation
    try:
        result = sc.run_trial(finger, trial, method=args.method, dt=args.dt)
    except SimulationDiverged as exc:
        raise SimulationDiverged(diverged_message(exc, args.dt), exc.t_s, exc.dt_s, exc.method) from None
    report = {"trial": trial.name, "method": args.method, **result.steady_state(),
              "wall_time_s": round(result.wall_s, 4)}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(format_steady_state(report))
    if args.plot:
        from uartlab.app.cli.sim_plots import plot_result

        plot_result(result, args.plot, title=trial.name)
        print(f"plot written to {args.plot}", file=sys.stderr if args.json else sys.stdout)
    return 0


def diverged_message(exc: SimulationDiverged, dt_s: float) -> str:
    """The divergence as the option that caused it: '--dt 1: the integration diverged at t = 3 s (...)'."""
    if exc.dt_s is None or dt_s <= DEFAULT_DT_S:   # not the step: the parameters (or the adaptive method)
        return str(exc)
    return (f"--dt {dt_s:g}: the integration diverged at t = {exc.t_s:.3g} s (a step of {dt_s:g} s is too large "
            f"for this model; try <= {DEFAULT_DT_S:g})")


def _run_free(args) -> int:
    from uartlab.sim import scenarios as sc

    return _simulate(args, sc.free_motion_trial(args.tendon))


def _run_contact(args) -> int:
    from uartlab.sim import scenarios as sc

    return _simulate(args, sc.contact_trial(args.pose, args.flexor, args.em, args.angle))


def _run_paper(args) -> int:
    from uartlab.sim import scenarios as sc

    finger = _finger(args)
    rows = []
    for trial in sc.paper_trials():
        result = sc.run_trial(finger, trial)
        rows.append({"trial": trial.name, **result.steady_state()})
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    head = f"{'trial':34s} " + " ".join(f"{j:>7s}" for j in JOINTS) + "  " + \
        " ".join(f"{t:>5s}" for t in TENDONS) + "   |F| N  settled"
    print("steady state: joint angles deg, tendon tensions N, fingertip force N")
    print(head)
    for r in rows:
        angles = " ".join(f"{v:7.1f}" for v in r["joint_angles_deg"].values())
        tensions = " ".join(f"{v:5.2f}" for v in r["tendon_tensions_N"].values())
        print(f"{r['trial']:34s} {angles}  {tensions}  {r['fingertip_force_N']['magnitude']:6.3f}  "
              f"{'yes' if r['settled'] else 'NO'}")
    return 0


def _run_urdf(args) -> int:
    from uartlab.sim.urdf import write_urdf

    params = _finger(args).params
    write_urdf(params, writable_file(args.out, "-o"))
    print(f"URDF written to {args.out}")
    return 0


def _run_mjcf(args) -> int:
    import numpy as np
    from uartlab.sim import scenarios as sc
    from uartlab.sim.mjcf import compare_pull, finger_mjcf

    finger = _finger(args)
    start, _ = sc.trial_start(finger, sc.free_motion_trial("FDP"))   # the paper's Flex pose: its arms matched
    text = finger_mjcf(finger.params, np.asarray(start.theta))
    writable_file(args.out, "-o").write_text(text)
    print(f"MJCF written to {args.out} (moment arms matched in the Flex pose; MuJoCo cannot branch the extensor "
          "mechanism: see uartlab.sim.mjcf)")
    if args.compare:
        def row(values, fmt: str = "6.1f") -> str:
            return " ".join(f"{v:{fmt}}" for v in values)

        pulls = [compare_pull(finger.params, tendon) for tendon in TENDONS]
        print(f"free-motion pulls of 15 mm from {row(pulls[0].start_deg, '.0f')} deg "
              f"(start tensions {' '.join(TENDONS)} [N]: uartlab {row(pulls[0].uartlab_pretension_N, '.2f')}, "
              f"MuJoCo {row(pulls[0].mujoco_pretension_N, '.2f')})")
        print(f"  steady joint angles [deg] {' '.join(JOINTS)}")
        for c in pulls:
            print(f"  {c.tendon:4} uartlab {row(c.uartlab_deg)}   MuJoCo {row(c.mujoco_deg)}   "
                  f"MuJoCo - uartlab {row(c.difference_deg)}")
    return 0


def _run_params(args) -> int:
    params = _finger(args).params
    if args.store is not None:
        from uartlab.calibration.applied import calibrated_params
        from uartlab.calibration.store import CalibrationStore

        if not args.store.is_dir():
            raise ValueError(f"--store {args.store}: no such folder")
        params, sources = calibrated_params(CalibrationStore(args.store), params)
        for line in sources:
            print(f"applied {line}", file=sys.stderr)
    if args.out:
        params.to_toml(writable_file(args.out, "-o"))
        tables = sorted(params.arm_tables)
        print(f"parameters written to {args.out}" + (f" (tables beside it: {', '.join(tables)})" if tables else ""))
    else:
        print(params.to_toml())
    return 0


def format_steady_state(report: dict) -> str:
    lines = [f"{report['trial']}  ({report['method']}, "
             f"{'steady at' if report['settled'] else 'NOT steady by'} t = {report['t_end_s']:.2f} s)"]
    lines.append("  joint angles [deg]   " + "  ".join(f"{k} {v:6.2f}" for k, v in
                                                      report["joint_angles_deg"].items()))
    lines.append("  tendon tensions [N]  " + "  ".join(f"{k} {v:5.2f}" for k, v in
                                                      report["tendon_tensions_N"].items()))
    f = report["fingertip_force_N"]
    lines.append(f"  fingertip force [N]  X {f['X']:6.3f}  Y {f['Y']:6.3f}  Z {f['Z']:6.3f}  "
                 f"|F| {f['magnitude']:6.3f}")
    return "\n".join(lines)
