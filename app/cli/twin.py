"""`uartlab twin up`: bring the whole simulated rig up and keep it running until Ctrl-C.

It is also how a rig with twin backends gets its twins (app/rig/twin_process.py), so that no driver shares an
interpreter with the device it talks to, as on the real rig:

    uartlab twin up --json --ephemeral-ports --parent-pid $$   # one JSON line of endpoints, then runs

``--json`` prints one line once everything listens: the bus pty, the DAQ's gRPC address, the NatNet ports
and the twin's control endpoint (app/rig/twin_control.py: place the finger, the plant's truth, fault
injections). With ``--parent-pid`` the twin outlives its parent by ``--orphan-grace-s`` only: long enough
for the servos' Bus Watchdog to trip, as it would on hardware whose host died, and for a test to see it;
and it ignores Ctrl-C (SIGINT), which a terminal sends its parent too: the parent stops it, after its own
streams.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from uartlab.app.cli.types import (
    angle_deg,
    fraction,
    non_negative_float,
    non_negative_int,
    positive_float,
    positive_int,
    twin_speed,
)

if TYPE_CHECKING:  # the twins load when `twin up` runs, not when the command line is built
    from uartlab.drivers.twins.rig import TwinRig, TwinRigConfig

log = logging.getLogger(__name__)

DEFAULT_ORPHAN_GRACE_S = 5.0   # a few Bus Watchdog periods (at most 2.54 s each) after the parent is gone


def add_parser(sub) -> None:
    twin = sub.add_parser("twin", help="the simulated rig: twins of every device, driven by the finger model")
    twin_sub = twin.add_subparsers(dest="twin_command", metavar="ACTION", required=True)
    up = twin_sub.add_parser("up", help="start the twin rig and print where each device listens")
    up.add_argument("--speed", type=twin_speed, default=1.0, help="model seconds per wall second (default 1)")
    up.add_argument("--seed", type=non_negative_int, default=0, help="seed for noise and parameter perturbation")
    up.add_argument("--perturbation", type=fraction, default=0.0, metavar="FRACTION",
                    help="spread of the plant's true parameters around the model defaults, e.g. 0.05")
    up.add_argument("--pose", choices=("Flex", "Hook", "Curl"), default="Flex", type=str.capitalize)
    up.add_argument("--surface-angle", type=angle_deg, metavar="DEG", help="place a contact surface at the fingertip")
    up.add_argument("--protocol", type=float, choices=(1.0, 2.0), default=2.0, help="Dynamixel protocol")
    up.add_argument("--natnet", choices=("3.0", "4.1"), default="4.1", help="NatNet bitstream version")
    up.add_argument("--multicast", metavar="GROUP", help="also stream NatNet frames to this multicast group")
    up.add_argument("--ephemeral-ports", action="store_true",
                    help="pick free ports instead of the devices' usual ones (31763, 1510/1511)")
    up.add_argument("--servo-ids", type=servo_ids, default=(1, 2, 3, 4, 5, 6), metavar="ID,...",
                    help="the six MX-64s' IDs on the bus (default 1,2,3,4,5,6)")
    up.add_argument("--daq-device", default="Dev1", metavar="NAME", help="the USB-6210's NI-DAQmx name")
    up.add_argument("--duration", type=positive_float,
                    help="stop after this many seconds instead of waiting for Ctrl-C")
    up.add_argument("--json", action="store_true",
                    help="print one JSON line with every endpoint once all listen (for a parent process)")
    up.add_argument("--control", default="tcp://127.0.0.1:*", metavar="ENDPOINT",
                    help="the control channel's ZeroMQ endpoint (default: loopback, a free port)")
    up.add_argument("--parent-pid", type=positive_int, metavar="PID",
                    help="stop once this process is gone (after --orphan-grace-s)")
    up.add_argument("--orphan-grace-s", type=non_negative_float, default=DEFAULT_ORPHAN_GRACE_S, metavar="S",
                    help=f"how long the twin outlives --parent-pid (default {DEFAULT_ORPHAN_GRACE_S:g} s)")
    up.set_defaults(run=run_up, service=True)
    spare = twin_sub.add_parser("spare", help="load the twins, then run `twin up` with the argument line on stdin")
    spare.add_argument("--warm", action="store_true",
                       help="also load the plant's compiled kernels before the line comes (a spare started ahead)")
    spare.add_argument("--log", metavar="FILE", type=Path,
                       help="the file this process's stderr goes to: removed if input ends before the line comes "
                            "(whoever started it is gone or no longer needs it; nothing happened to tell)")
    spare.set_defaults(run=run_spare, service=True)


def servo_ids(text: str) -> tuple[int, ...]:
    """"1,2,3,4,5,6" -> (1, 2, 3, 4, 5, 6): six distinct IDs."""
    try:
        ids = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"servo IDs are six integers separated by commas, got {text!r}") from None
    if len(ids) != 6 or len(set(ids)) != 6:
        raise argparse.ArgumentTypeError(f"six distinct servo IDs are needed, got {text!r}")
    return ids


def build_config(args: argparse.Namespace) -> TwinRigConfig:
    from uartlab.app.rig.config import twin_speed_problem
    from uartlab.drivers.twins.plant import PlantConfig
    from uartlab.drivers.twins.rig import NATNET_COMMAND_PORT, NATNET_DATA_PORT, NI_GRPC_DEFAULT_PORT, TwinRigConfig

    if (problem := twin_speed_problem(args.speed)) is not None:
        raise ValueError(f"--speed: {problem}")
    plant = PlantConfig(pose=args.pose, surface_angle_deg=args.surface_angle, perturbation=args.perturbation,
                        seed=args.seed)
    usual = not args.ephemeral_ports
    major, minor = (int(v) for v in args.natnet.split("."))
    return TwinRigConfig(
        plant=plant, speed=args.speed, dxl_protocol=args.protocol, servo_ids=args.servo_ids,
        daq_device=args.daq_device,
        daq_address=f"127.0.0.1:{NI_GRPC_DEFAULT_PORT if usual else 0}",
        natnet_command_port=NATNET_COMMAND_PORT if usual else 0,
        natnet_data_port=NATNET_DATA_PORT if usual else 0,
        natnet_version=(major, minor, 0, 0), natnet_multicast_group=args.multicast,
    )


def run_up(args: argparse.Namespace) -> int:
    from uartlab.app.cli.extras import require

    require("rig")  # before the twins load: they speak the real devices' protocols through the [rig] packages
    from uartlab.app.rig.twin_control import TwinControlServer
    from uartlab.app.run import realtime
    from uartlab.drivers.twins.rig import TwinRig

    config = build_config(args)
    # The twins stand in for devices with processors of their own, and the core's deadlines wait on their
    # answers: their threads (started below: they inherit it) run at the core's priority where allowed, with
    # its short GIL hand-off. At nice 0, a twin thread holding the GIL (the DAQ's gRPC, NatNet) lost the CPU to
    # the core's threads at -10, and the bus twin's real-time thread waited for it.
    realtime.prepare_process(who="the twin rig")
    stop = threading.Event()
    # A twin started for a rig (--parent-pid) stands in for devices, which a Ctrl-C at the terminal does not
    # reach: the rig's program stops it, after its own streams. One run on its own stops on Ctrl-C.
    signal.signal(signal.SIGINT, signal.SIG_IGN if args.parent_pid is not None else lambda *_: stop.set())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        rig = TwinRig(config).start()
    except OSError as exc:
        raise ValueError(f"could not open a twin endpoint ({exc.strerror or exc}); another twin or the real "
                         "software may hold the port — try --ephemeral-ports") from None
    realtime.keep_out_of_collections()   # its servers and plant: no full collection pauses every answer
    control = TwinControlServer(rig)
    server: threading.Thread | None = None
    try:
        try:
            control_endpoint = control.bind(args.control)
        except Exception as exc:  # zmq.ZMQError: a bad endpoint or a taken port
            raise ValueError(f"--control {args.control}: cannot listen there ({exc})") from None
        server = threading.Thread(target=control.serve, args=(stop,), name="twin-control", daemon=True)
        server.start()
        _announce(args, rig, control_endpoint)
        _run_until_stopped(args, rig, stop)
    finally:
        stop.set()
        if server is not None:
            server.join(timeout=2)
        rig.stop()
        print("twin rig stopped.", file=sys.stderr if args.json else sys.stdout)
    return 0


def run_spare(args: argparse.Namespace) -> int:
    """A twin process (app/rig/twin_process.py): import the twins (with --warm, also load their compiled plant
    kernels: a spare started ahead of need), then wait for one line on stdin - a JSON list of `twin up`
    arguments - and run as `uartlab twin up` with them. End of input before that line: exit 0, nothing started."""
    from uartlab.app.cli.extras import require

    signal.signal(signal.SIGINT, signal.SIG_IGN)   # a spare is the rig's to stop, as `twin up` is below
    require("rig")
    from uartlab.app.cli.main import main
    from uartlab.drivers.twins.plant import Plant
    from uartlab.drivers.twins.rig import TwinRig  # noqa: F401 - imported now, not when the line comes

    if args.warm:
        Plant()   # compiles, or loads from the kernel cache, the stepper's kernels: in memory for the real plant
    line = sys.stdin.readline()
    if not line.strip():
        if args.log is not None:
            args.log.unlink(missing_ok=True)
        return 0
    try:
        arguments = json.loads(line)
        if not isinstance(arguments, list) or not all(isinstance(a, str) for a in arguments):
            raise ValueError
    except ValueError:
        raise ValueError(f"stdin must be one JSON list of `twin up` arguments, got {line[:80]!r}") from None
    return main(["twin", "up", *arguments])


def _announce(args: argparse.Namespace, rig: TwinRig, control_endpoint: str) -> None:
    config = rig.config
    if args.json:
        assert rig.bus is not None and rig.daq is not None and rig.motive is not None  # started
        print(json.dumps({
            "pid": os.getpid(), "bus_port": rig.bus.port, "bus_url": rig.bus.url,
            "dxl_protocol": config.dxl_protocol,
            "servo_ids": list(config.servo_ids), "daq_address": rig.daq.address, "daq_device": config.daq_device,
            "natnet_address": config.natnet_address, "natnet_command_port": rig.motive.command_port,
            "natnet_data_port": rig.motive.data_port, "control": control_endpoint,
        }), flush=True)
        return
    print(f"uartlab twin rig up (speed {config.speed:g}x, seed {config.plant.seed}, pose {config.plant.pose})")
    for name, where in {**rig.endpoints(), "control channel (ZeroMQ REQ/REP)": control_endpoint}.items():
        print(f"  {name:40s} {where}")
    print("Ctrl-C to stop.", flush=True)


def _run_until_stopped(args: argparse.Namespace, rig: TwinRig, stop: threading.Event) -> None:
    """Until Ctrl-C/SIGTERM, --duration, or --orphan-grace-s after the parent is gone."""
    started, orphaned_at = time.monotonic(), None
    while not stop.wait(0.1):
        now = time.monotonic()
        if args.duration is not None and now - started >= args.duration:
            return
        if args.parent_pid is not None and orphaned_at is None and os.getppid() != args.parent_pid:
            orphaned_at = now   # re-parented: the process that started us is gone
            log.warning("twin: parent process %d is gone; the twin stays up %g s (the servos' Bus Watchdog "
                        "trips meanwhile), then stops", args.parent_pid, args.orphan_grace_s)
        if orphaned_at is not None and now - orphaned_at >= args.orphan_grace_s:
            log.warning("twin: stopping, %g s after the parent left; servos: %s", args.orphan_grace_s,
                        _servo_summary(rig))
            return


def _servo_summary(rig: TwinRig) -> str:
    from uartlab.app.rig.twin_control import OPERATIONS

    parts = []
    for dxl_id, s in zip(rig.config.servo_ids, OPERATIONS["servos"].run(rig), strict=True):
        state = "watchdog tripped, " if s.bus_watchdog_tripped else ""
        state += "torque on, holding" if s.torque_enabled else "torque off"
        parts.append(f"ID {dxl_id} {state}")
    return "; ".join(parts)
