"""OptiTrack NatNet: message codec (2.x, 3.x, 4.x), and a unicast/multicast client (``client.py``)."""

from uartlab.drivers.natnet.client import ClientStats, NatNetClient, NatNetError, ReceivedFrame
from uartlab.drivers.natnet.decode import DecodeStats, decode, decode_packet
from uartlab.drivers.natnet.encode import encode
from uartlab.drivers.natnet.packets import (
    DecodeError,
    FrameOfData,
    MessageId,
    ModelDefinitions,
    NatNetDecodeError,
    ServerInfo,
    as_version,
)

__all__ = ["ClientStats", "DecodeError", "DecodeStats", "FrameOfData", "MessageId", "ModelDefinitions",
           "NatNetClient", "NatNetDecodeError", "NatNetError", "ReceivedFrame", "ServerInfo", "as_version", "decode",
           "decode_packet", "encode"]
