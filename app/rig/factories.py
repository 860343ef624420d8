"""How each backend's device is built from rig.toml: one factory per line of app/rig/backends.py's tables.

Every factory is ``(config: RigConfig, twin, time_scale) -> device``, unconnected. A real backend takes its
endpoint from rig.toml (serial port, NI-DAQmx or its gRPC server, Motive's address); a twin backend runs the
same real driver against the running twin rig's endpoint (its pty, gRPC address, NatNet port), so the twin is
reached over the real protocol. Each imports its driver when called: a rig loads only the drivers it uses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from uartlab.app.rig.config import RigConfig
    from uartlab.drivers.interfaces import Actuators, AnalogInput, Mocap

# est.: one control period at 100 Hz, so a sample waits at most one block before the control loop can see
# it (a 50 ms block, the driver's own default, adds up to 50 ms to a sample's latency); one read per block
# costs ~0.1-0.3 ms of host time (the nidaqmx call, or one RPC to a gRPC server): a few % of a core.
DAQ_BLOCK_S = 0.010
# est.: how long the driver's reader thread may be starved before NI-DAQmx's buffer overflows (-200279):
# 2 s overflowed on a loaded lab PC; 10 s of 13 channels at 1 kS/s is 1 MB of doubles.
DAQ_BUFFER_S = 10.0


# ------------------------------------------------------------------ actuators
def mx64_bus(config: RigConfig, twin, time_scale: float) -> Actuators:
    """The MX-64 bus on rig.toml's serial port."""
    return _mx64_bus(config, config.actuators.port)


def mx64_bus_on_twin(config: RigConfig, twin, time_scale: float) -> Actuators:
    """The MX-64 driver on the bus twin, over its TCP line: a pty's bytes wait for a kernel worker that a busy
    machine starves (drivers/twins/dxl_bus.py)."""
    return _mx64_bus(config, twin.bus.url)


def _mx64_bus(config: RigConfig, port: str) -> Actuators:
    from uartlab.drivers.mx64_bus import Mx64Bus

    a = config.actuators
    return Mx64Bus(port, ids=a.ids, protocol=a.protocol, baud=a.baud, seas=list(a.seas), watchdog_ms=a.watchdog_ms,
                   packet_timeout_ms=a.packet_timeout_ms or None)


# ------------------------------------------------------------------ DAQ
def usb6210(config: RigConfig, twin, time_scale: float) -> AnalogInput:
    """The USB-6210 through local NI-DAQmx, or the NI gRPC Device Server at ``daq.grpc_address``."""
    grpc_options = None
    if config.daq.grpc_address:
        import grpc
        import nidaqmx
        grpc_options = nidaqmx.GrpcSessionOptions(grpc.insecure_channel(config.daq.grpc_address), "")
    return _usb6210(config, time_scale, grpc_options)


def usb6210_on_twin(config: RigConfig, twin, time_scale: float) -> AnalogInput:
    """The USB-6210 driver through the DAQ twin's gRPC server (each task its own generated session)."""
    return _usb6210(config, time_scale, twin.daq.grpc_options(""))


def _usb6210(config: RigConfig, time_scale: float, grpc_options) -> AnalogInput:
    from uartlab.drivers.usb6210 import Usb6210

    d = config.daq
    # DAQ_BLOCK_S and DAQ_BUFFER_S are host seconds at 1x. A twin at N x speed delivers N x the samples per
    # second and its plant costs N x the CPU; there a block is N x DAQ_BLOCK_S of host time (N^2 x the samples),
    # so the gRPC reads stay within what a 2-core machine serves beside the plant (at 4x, 10 ms blocks left
    # the DAQ stale within seconds of a run). The protocol-time latency is N x anyway on a fast twin.
    block_host_s = DAQ_BLOCK_S * max(1.0, time_scale)
    return Usb6210(d.device, d.pots, d.reference or None, d.gauges or None, d.rate_hz,
                   block_samples=max(1, round(d.rate_hz * block_host_s * time_scale)),
                   buffer_s=DAQ_BUFFER_S * time_scale, grpc_options=grpc_options, time_scale=time_scale)


# ------------------------------------------------------------------ mocap
def optitrack(config: RigConfig, twin, time_scale: float) -> Mocap:
    """OptiTrack Motive over NatNet at rig.toml's server and ports."""
    from uartlab.drivers.mocap import OptiTrackMocap

    m = config.mocap
    return OptiTrackMocap(m.server, m.command_port, m.data_port, m.multicast, marker_set=m.marker_set, local=m.local)


def optitrack_on_twin(config: RigConfig, twin, time_scale: float) -> Mocap:
    """The NatNet driver against the Motive twin on loopback (data on a free port)."""
    from uartlab.drivers.mocap import OptiTrackMocap

    m = config.mocap
    return OptiTrackMocap("127.0.0.1", twin.motive.command_port, 0, m.multicast, marker_set=m.marker_set,
                          local="127.0.0.1")
