"""The whole simulated rig in one object: plant, clock, and the three protocol twins.

    with TwinRig(TwinRigConfig(speed=1.0)) as rig:
        print(rig.endpoints())   # pty for the MX-64 bus, gRPC address for the DAQ, NatNet ports

`uartlab twin up` runs one until Ctrl-C; tests start one in-process with ephemeral ports.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from uartlab.drivers.twins.plant import Plant, PlantClock, PlantConfig

if TYPE_CHECKING:   # imported by start(): the DAQ twin brings grpc and nidaqmx
    from uartlab.drivers.twins.daq_grpc import DaqTwin
    from uartlab.drivers.twins.dxl_bus import DxlBusTwin
    from uartlab.drivers.twins.motive import MotiveTwin

# The real devices' well-known ports, used by `uartlab twin up` so drivers find the twins where they
# would find the hardware: NI gRPC Device Server's default port; Motive's NatNet command/data ports.
NI_GRPC_DEFAULT_PORT = 31763
NATNET_COMMAND_PORT, NATNET_DATA_PORT = 1510, 1511


@dataclass
class TwinRigConfig:
    plant: PlantConfig = field(default_factory=PlantConfig)
    speed: float = 1.0                  # model seconds per wall second
    servo_ids: tuple[int, ...] = (1, 2, 3, 4, 5, 6)
    dxl_protocol: float = 2.0
    daq_device: str = "Dev1"
    daq_address: str = "127.0.0.1:0"    # port 0: pick a free one
    natnet_address: str = "127.0.0.1"
    natnet_command_port: int = 0
    natnet_data_port: int = 0
    natnet_version: tuple[int, int, int, int] = (4, 1, 0, 0)
    natnet_multicast_group: str | None = None
    run_clock: bool = True              # False: the caller advances the plant (deterministic tests)


class TwinRig:
    def __init__(self, config: TwinRigConfig | None = None):
        self.config = config or TwinRigConfig()
        self.plant = Plant(self.config.plant)
        self.clock: PlantClock | None = None
        self.bus: DxlBusTwin | None = None
        self.daq: DaqTwin | None = None
        self.motive: MotiveTwin | None = None

    def start(self) -> TwinRig:
        from uartlab.drivers.twins.daq_grpc import DaqTwin
        from uartlab.drivers.twins.dxl_bus import DxlBusTwin
        from uartlab.drivers.twins.motive import MotiveTwin

        cfg = self.config
        try:
            self.bus = DxlBusTwin(self.plant, ids=cfg.servo_ids, protocol=cfg.dxl_protocol).start()
            self.daq = DaqTwin(self.plant, device=cfg.daq_device, address=cfg.daq_address,
                               time_scale=cfg.speed).start()
            self.motive = MotiveTwin(self.plant, address=cfg.natnet_address, command_port=cfg.natnet_command_port,
                                     data_port=cfg.natnet_data_port, multicast_group=cfg.natnet_multicast_group,
                                     natnet_version=cfg.natnet_version, time_scale=cfg.speed).start()
            if cfg.run_clock:
                self.clock = PlantClock(self.plant, speed=cfg.speed).start()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stop everything that started, the clock first so no device sees the plant jump."""
        for part in (self.clock, self.motive, self.daq, self.bus):
            if part is not None:
                part.stop()
        self.clock = None

    def endpoints(self) -> dict[str, str]:
        if self.bus is None or self.daq is None or self.motive is None:
            raise RuntimeError("the twin rig has no endpoints before start()")
        cfg = self.config
        natnet = ".".join(map(str, cfg.natnet_version[:2]))
        motive = f"{cfg.natnet_address} command {self.motive.command_port} data {self.motive.data_port}"
        if cfg.natnet_multicast_group:
            motive += f" multicast {cfg.natnet_multicast_group}"
        return {
            f"MX-64 bus (Dynamixel Protocol {cfg.dxl_protocol:.1f}, pty)": self.bus.port,
            "MX-64 bus, the same, as a serial line over TCP": self.bus.url,
            "USB-6210 (NI-DAQmx gRPC)": f"{self.daq.address}  device {cfg.daq_device}",
            f"Motive (NatNet {natnet})": motive,
        }

    def __enter__(self) -> TwinRig:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
