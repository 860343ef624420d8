"""`uartlab twin up`: bring the whole simulated rig up and keep it running until Ctrl-C."""

from __future__ import annotations

import argparse
import signal
import threading
import time
from typing import TYPE_CHECKING

from uartlab.app.cli.types import angle_deg, fraction, non_negative_int, positive_float

if TYPE_CHECKING:  # the twins load when `twin up` runs, not when the command line is built
    from uartlab.drivers.twins.rig import TwinRigConfig


def add_parser(sub) -> None:
    twin = sub.add_parser("twin", help="the simulated rig: twins of every device, driven by the finger model")
    twin_sub = twin.add_subparsers(dest="twin_command", metavar="ACTION", required=True)
    up = twin_sub.add_parser("up", help="start the twin rig and print where each device listens")
    up.add_argument("--speed", type=positive_float, default=1.0, help="model seconds per wall second (default 1)")
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
    up.add_argument("--duration", type=positive_float,
                    help="stop after this many seconds instead of waiting for Ctrl-C")
    up.set_defaults(run=run_up)


def build_config(args: argparse.Namespace) -> TwinRigConfig:
    from uartlab.drivers.twins.plant import PlantConfig
    from uartlab.drivers.twins.rig import NATNET_COMMAND_PORT, NATNET_DATA_PORT, NI_GRPC_DEFAULT_PORT, TwinRigConfig

    if args.speed <= 0:
        raise ValueError(f"--speed must be > 0, got {args.speed}")
    plant = PlantConfig(pose=args.pose, surface_angle_deg=args.surface_angle, perturbation=args.perturbation,
                        seed=args.seed)
    usual = not args.ephemeral_ports
    major, minor = (int(v) for v in args.natnet.split("."))
    return TwinRigConfig(
        plant=plant, speed=args.speed, dxl_protocol=args.protocol,
        daq_address=f"127.0.0.1:{NI_GRPC_DEFAULT_PORT if usual else 0}",
        natnet_command_port=NATNET_COMMAND_PORT if usual else 0,
        natnet_data_port=NATNET_DATA_PORT if usual else 0,
        natnet_version=(major, minor, 0, 0), natnet_multicast_group=args.multicast,
    )


def run_up(args: argparse.Namespace) -> int:
    from uartlab.app.cli.extras import require

    require("rig")  # before the twins load: they speak the real devices' protocols through the [rig] packages
    from uartlab.drivers.twins.rig import TwinRig

    config = build_config(args)
    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        rig = TwinRig(config).start()
    except OSError as exc:
        raise ValueError(f"could not open a twin endpoint ({exc.strerror or exc}); another twin or the real "
                         "software may hold the port — try --ephemeral-ports") from None
    try:
        print(f"uartlab twin rig up (speed {config.speed:g}x, seed {config.plant.seed}, pose {config.plant.pose})")
        for name, where in rig.endpoints().items():
            print(f"  {name:40s} {where}")
        print("Ctrl-C to stop.", flush=True)
        started = time.monotonic()
        while not stop.wait(0.2):
            if args.duration is not None and time.monotonic() - started >= args.duration:
                break
    finally:
        rig.stop()
        print("twin rig stopped.")
    return 0
