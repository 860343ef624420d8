"""Which code builds each device of a rig: one table per device family, backend name -> where its factory is.

    ACTUATORS["twin"].load()(config, twin, time_scale)   # -> an unconnected Actuators on the twin's pty
    open_device("daq", config, twin, time_scale)        # the same through the family's table

As python-can's interface table: a backend is a (module, factory) pair imported only when a rig uses it,
so a rig of real devices never imports the twins (nor the twin's grpc server), and rig.toml's valid
backend names are the table's keys (config.py checks them). Every factory has one signature,
``(config: RigConfig, twin, time_scale) -> device`` with ``twin`` the running twin rig (None when no
device is on it) and ``time_scale`` the rig's protocol seconds per host second; it returns the device
unconnected, as its family's Protocol (drivers/interfaces.py). ``on_twin`` says a backend is hosted by
the twin rig: the rig starts one, may run it faster than real time, and knows its true constants.

This is the one module of app/rig that reaches uartlab.drivers.twins. To add a device: its driver module,
one line in its family's table (with a factory in app/rig/factories.py), one contract test
(tests/drivers/test_contracts.py).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from uartlab.app.rig.config import RigConfig
    from uartlab.drivers.ati import FTCalibration
    from uartlab.drivers.twins.plant import Plant  # noqa: F401 - the in-process twin's plant, for the rig's types
    from uartlab.drivers.twins.rig import TwinRig

FACTORIES = "uartlab.app.rig.factories"


@dataclass(frozen=True)
class Backend:
    module: str
    factory: str
    on_twin: bool    # hosted by the twin rig (the rig starts it for this device)

    def load(self):
        """The factory, its module imported now."""
        return getattr(importlib.import_module(self.module), self.factory)


ACTUATORS = {
    "real": Backend(FACTORIES, "mx64_bus", on_twin=False),
    "twin": Backend(FACTORIES, "mx64_bus_on_twin", on_twin=True),
}
DAQ = {
    "real": Backend(FACTORIES, "usb6210", on_twin=False),
    "twin": Backend(FACTORIES, "usb6210_on_twin", on_twin=True),
}
MOCAP = {
    "real": Backend(FACTORIES, "optitrack", on_twin=False),
    "twin": Backend(FACTORIES, "optitrack_on_twin", on_twin=True),
}
# The twin rig that hosts every "twin" device: (config: RigConfig) -> a started twin rig with ``bus.url``,
# ``daq.grpc_options()``, ``motive.command_port`` and ``plant``. By default its own process, as a real rig's
# devices are (`uartlab twin up`, app/rig/twin_process.py); in this process only when a caller asks for it.
TWIN_RIG = {
    "process": Backend("uartlab.app.rig.twin_process", "start_twin_process", on_twin=True),
    "in_process": Backend(__name__, "start_twin_rig", on_twin=True),
}

FAMILIES = {"actuators": ACTUATORS, "daq": DAQ, "mocap": MOCAP}   # rig.toml's section per table


def names(family: str) -> tuple[str, ...]:
    """The backend names a family's table has, sorted (for rig.toml's error message)."""
    return tuple(sorted(FAMILIES[family]))


def backend_of(config: RigConfig, family: str) -> Backend:
    """The table line this config chose for ``family`` ("actuators", "daq", "mocap")."""
    return FAMILIES[family][getattr(config, family).backend]


def any_on_twin(config: RigConfig) -> bool:
    """Some device is the twin's: the rig needs a twin rig running."""
    return any(backend_of(config, family).on_twin for family in FAMILIES)


def all_on_twin(config: RigConfig) -> bool:
    """Every device is the twin's: nothing holds the rig to real time."""
    return all(backend_of(config, family).on_twin for family in FAMILIES)


def open_device(family: str, config: RigConfig, twin, time_scale: float):
    """The family's device for this config, built by its backend's factory (unconnected)."""
    return backend_of(config, family).load()(config, twin, time_scale)


def start_twin_rig(config: RigConfig) -> TwinRig:
    """The twin rig for this config (plant, clock, bus, DAQ and Motive twins), started in this process."""
    from uartlab.drivers.twins.plant import PlantConfig
    from uartlab.drivers.twins.rig import TwinRig, TwinRigConfig

    t, a = config.twin, config.actuators
    plant = PlantConfig(pose=t.pose, surface_angle_deg=t.surface_angle_deg, perturbation=t.perturbation, seed=t.seed)
    return TwinRig(TwinRigConfig(plant=plant, speed=t.speed, servo_ids=a.ids, dxl_protocol=a.protocol,
                                 daq_device=config.daq.device)).start()


def twin_ft_calibration() -> FTCalibration:
    """The twin's Nano17 calibration file (rig.toml's ``calibration_file = "from_twin"``)."""
    from uartlab.drivers.twins.nano17 import load_twin_calibration

    return load_twin_calibration()


def twin_ft_calibration_name() -> str:
    """The twin's Nano17 calibration file's name, as a session file embeds it."""
    from uartlab.drivers.twins.nano17 import TWIN_CAL_FILE

    return TWIN_CAL_FILE


def twin_ft_calibration_file() -> tuple[str, str]:
    """The twin's Nano17 calibration file as (name, text), to embed in a session file verbatim."""
    from importlib import resources

    from uartlab.drivers.twins.nano17 import TWIN_CAL_FILE

    data = (resources.files("uartlab.drivers.twins") / "data" / TWIN_CAL_FILE).read_bytes()
    text = data.decode("utf-8", errors="replace")
    return TWIN_CAL_FILE, text


def preload_modules() -> None:
    """Import every module a rig start may import: each table's factories, their drivers (dynamixel_sdk,
    nidaqmx and grpc), the twin process's client (zmq) and the in-process twin rig's. For a caller that must
    not import them on a worker thread later: the window (PySide6 hooks ``__import__``; a first import of
    grpc/nidaqmx on a worker while the GUI thread was inside Qt deadlocked)."""
    importlib.import_module(FACTORIES)
    for module in ("uartlab.drivers.mx64_bus", "uartlab.drivers.usb6210", "uartlab.drivers.mocap",
                   "uartlab.app.rig.twin_process", "uartlab.app.rig.twin_control",
                   "uartlab.drivers.twins.daq_grpc", "uartlab.drivers.twins.dxl_bus",
                   "uartlab.drivers.twins.motive", "uartlab.drivers.twins.rig"):
        importlib.import_module(module)
