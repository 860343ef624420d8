"""NatNet messages as data: message ids, version helpers, and one dataclass per message.

Layouts follow NaturalPoint's PacketClient.cpp (SDK 2.5 ... 4.3) and NatNetTypes.h; where the
official samples disagree, the C++ depacketizer and real captures win (see shared/device-notes.md,
"OptiTrack NatNet"). Units are NatNet's own: metres, seconds, and host high-resolution clock ticks
for the camera/transmit timestamps (divide by ``ServerInfo.high_res_clock_frequency_hz``).

``decode.py`` turns datagrams into these objects, ``encode.py`` the reverse; the model-definition
dataclasses live in ``descriptions.py``.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from enum import IntEnum

Version = tuple[int, int, int, int]
Vec3 = tuple[float, float, float]
Quat = tuple[float, float, float, float]  # qx, qy, qz, qw: NatNet's order

NATNET_DEFAULT_COMMAND_PORT = 1510          # NatNetTypes.h
NATNET_DEFAULT_DATA_PORT = 1511             # NatNetTypes.h
NATNET_DEFAULT_MULTICAST_GROUP = "239.255.42.99"
MAX_PACKET_SIZE = 65503                     # NatNetTypes.h MAX_PACKETSIZE (payload)
MAX_NAME_LENGTH = 256                       # the fixed char[] of sSender


class MessageId(IntEnum):
    CONNECT = 0
    SERVERINFO = 1
    REQUEST = 2
    RESPONSE = 3
    REQUEST_MODELDEF = 4
    MODELDEF = 5
    REQUEST_FRAMEOFDATA = 6
    FRAMEOFDATA = 7
    MESSAGESTRING = 8
    DISCONNECT = 9
    KEEPALIVE = 10
    DISCONNECTBYTIMEOUT = 11
    ECHOREQUEST = 12
    ECHORESPONSE = 13
    DISCOVERY = 14
    UNRECOGNIZED_REQUEST = 100


# Labeled-marker params bits (NatNetTypes.h sMarker.params).
MARKER_OCCLUDED = 0x01
MARKER_POINT_CLOUD_SOLVED = 0x02
MARKER_MODEL_SOLVED = 0x04
MARKER_HAS_MODEL = 0x08
MARKER_UNLABELED = 0x10
MARKER_ACTIVE = 0x20
MARKER_ESTABLISHED = 0x40
MARKER_MEASUREMENT = 0x80
RIGID_BODY_TRACKING_VALID = 0x01            # sRigidBodyData.params bit 0
FRAME_RECORDING = 0x01                      # sFrameOfMocapData.params bit 0
FRAME_MODELS_CHANGED = 0x02                 # bit 1; bits 2/3 are documented inconsistently, not interpreted


def as_version(version: tuple[int, ...] | list[int] | str) -> Version:
    """(3, 0) / [4, 1, 0, 0] / "4.1" -> (4, 1, 0, 0). Raises ValueError naming the bad value."""
    parts = version.split(".") if isinstance(version, str) else list(version)
    try:
        nums = [int(p) for p in parts][:4]
    except (TypeError, ValueError):
        raise ValueError(f"NatNet version must be numbers like (4, 1, 0, 0) or '4.1', got {version!r}") from None
    if not nums or any(not 0 <= n <= 255 for n in nums):
        raise ValueError(f"NatNet version parts must be 0..255, got {version!r}")
    return tuple(nums + [0] * (4 - len(nums)))  # type: ignore[return-value]


def at_least(version: Version, major: int, minor: int = 0) -> bool:
    return (version[0], version[1]) >= (major, minor)


def has_section_sizes(version: Version) -> bool:
    """NatNet 4.1 added an i32 byte count after each frame section's count and each description's type."""
    return at_least(version, 4, 1)


# ------------------------------------------------------------------ errors
class NatNetDecodeError(ValueError):
    """A packet that does not parse: where (datagram offset), which field, and why."""

    def __init__(self, reason: str, offset: int, field: str, message_id: int | None = None):
        self.reason, self.offset, self.field, self.message_id = reason, offset, field, message_id
        what = f"message {message_id}" if message_id is not None else "packet"
        super().__init__(f"NatNet {what}: {reason} at byte {offset} (field {field})")


@dataclass(slots=True)
class DecodeError:
    """What ``decode_packet`` returns instead of raising: the error and the bytes that caused it."""

    error: NatNetDecodeError
    data: bytes

    @property
    def message_id(self) -> int | None:
        return self.error.message_id

    def __str__(self) -> str:
        return str(self.error)


# ------------------------------------------------------------------ small messages
@dataclass(slots=True)
class Connect:
    """NAT_CONNECT (and the payload shape of NAT_DISCOVERY). Clients send 0, 5 ("Ping"), 264, 271 or 273
    payload bytes; the optional sConnectionOptions sit at payload bytes 264..268 (NatNet 4.x)."""

    MESSAGE_ID = MessageId.CONNECT
    name: str = "NatNetLib"
    app_version: Version = (0, 0, 0, 0)
    natnet_version: Version = (0, 0, 0, 0)
    subscribed_data_only: bool | None = None   # None: no connection options sent
    bitstream_version: Version | None = None   # requested stream version; (0,0,0,0) = server default
    name_padding: bytes = b""                  # bytes after the name's NUL (kept for exact round trips)
    extra: bytes = b""                         # trailing payload past the known fields
    short_payload: bytes | None = None         # a payload shorter than sSender, verbatim (b"Ping\0", b"")


@dataclass(slots=True)
class Discovery(Connect):
    MESSAGE_ID = MessageId.DISCOVERY


@dataclass(slots=True)
class ServerInfo:
    """NAT_SERVERINFO: sSender (264 B) plus, from NatNet 3.0, clock and connection info (279 B)."""

    MESSAGE_ID = MessageId.SERVERINFO
    name: str = "Motive"
    app_version: Version = (0, 0, 0, 0)
    natnet_version: Version = (0, 0, 0, 0)
    high_res_clock_frequency_hz: int | None = None   # None for NatNet 2.x servers
    data_port: int | None = None
    is_multicast: bool | None = None
    multicast_group: str | None = None
    name_padding: bytes = b""
    extra: bytes = b""


@dataclass(slots=True)
class Request:
    """NAT_REQUEST: a NUL-terminated command such as "FrameRate" or "Bitstream,4.1"."""

    MESSAGE_ID = MessageId.REQUEST
    command: str = ""
    terminated: bool = True     # False: the sender left out the NUL (kept for exact round trips)


@dataclass(slots=True)
class Response:
    """NAT_RESPONSE: a 4-byte int/float or a NUL-terminated string; which one depends on the request."""

    MESSAGE_ID = MessageId.RESPONSE
    payload: bytes = b""

    def as_int(self) -> int:
        return int.from_bytes(self.payload[:4].ljust(4, b"\0"), "little", signed=True)

    def as_float(self) -> float:
        return struct.unpack("<f", self.payload[:4].ljust(4, b"\0"))[0]

    @property
    def text(self) -> str:
        return self.payload.split(b"\0", 1)[0].decode("utf-8", "replace")


@dataclass(slots=True)
class MessageString:
    MESSAGE_ID = MessageId.MESSAGESTRING
    text: str = ""


@dataclass(slots=True)
class EchoRequest:
    MESSAGE_ID = MessageId.ECHOREQUEST
    client_time: int = 0        # u64, the client's own clock (opaque to the server)


@dataclass(slots=True)
class EchoResponse:
    MESSAGE_ID = MessageId.ECHORESPONSE
    client_time: int = 0
    server_receive_ticks: int = 0   # server HR clock ticks when the request arrived


@dataclass(slots=True)
class Empty:
    """Messages with no meaningful payload (REQUEST_MODELDEF, KEEPALIVE, DISCONNECT ...). Clients pad
    some of them (a NUL after a KEEPALIVE), so the payload is kept."""

    message_id: int
    payload: bytes = b""

    @property
    def MESSAGE_ID(self) -> int:  # the same attribute as the other message classes have
        return self.message_id


@dataclass(slots=True)
class Unrecognized:
    """NAT_UNRECOGNIZED_REQUEST (Motive echoes an sSender back) or any message id we do not know."""

    message_id: int
    payload: bytes = b""

    @property
    def MESSAGE_ID(self) -> int:
        return self.message_id


# ------------------------------------------------------------------ frame of data
@dataclass(slots=True)
class MarkerSetData:
    name: str
    markers_m: list[Vec3] = field(default_factory=list)


@dataclass(slots=True)
class RigidBodyMarker:
    """Per-body marker of NatNet < 3.0 frames (3.0 moved these to the model definitions)."""

    position_m: Vec3
    id: int | None = None       # >= 2.0
    size_m: float | None = None  # >= 2.0


@dataclass(slots=True)
class RigidBodyData:
    id: int
    position_m: Vec3
    orientation: Quat
    mean_error_m: float | None = None   # >= 2.0: mean marker error
    params: int | None = None           # >= 2.6: bit 0 tracking valid
    markers: list[RigidBodyMarker] | None = None  # < 3.0 only

    @property
    def tracking_valid(self) -> bool:
        return self.params is None or bool(self.params & RIGID_BODY_TRACKING_VALID)


@dataclass(slots=True)
class SkeletonData:
    id: int
    bones: list[RigidBodyData] = field(default_factory=list)   # bone id = skeleton id << 16 | bone


@dataclass(slots=True)
class AssetMarkerData:
    id: int
    position_m: Vec3
    size_m: float
    params: int
    residual_m: float


@dataclass(slots=True)
class AssetData:
    """Trained markersets (NatNet >= 4.1)."""

    id: int
    rigid_bodies: list[RigidBodyData] = field(default_factory=list)
    markers: list[AssetMarkerData] = field(default_factory=list)


@dataclass(slots=True)
class LabeledMarker:
    id: int                     # model id << 16 | marker id
    position_m: Vec3
    size_m: float
    params: int | None = None   # >= 2.6
    residual_m: float | None = None  # >= 3.0

    @property
    def model_id(self) -> int:
        return self.id >> 16

    @property
    def marker_id(self) -> int:
        return self.id & 0xFFFF

    @property
    def occluded(self) -> bool:
        return bool((self.params or 0) & MARKER_OCCLUDED)

    @property
    def point_cloud_solved(self) -> bool:
        return bool((self.params or 0) & MARKER_POINT_CLOUD_SOLVED)

    @property
    def model_solved(self) -> bool:
        return bool((self.params or 0) & MARKER_MODEL_SOLVED)


@dataclass(slots=True)
class AnalogData:
    """A force plate's or device's channels for one mocap frame: channels[c] = that channel's subframes."""

    id: int
    channels: list[list[float]] = field(default_factory=list)


@dataclass(slots=True)
class FrameOfData:
    MESSAGE_ID = MessageId.FRAMEOFDATA
    frame_number: int
    marker_sets: list[MarkerSetData] = field(default_factory=list)
    unlabeled_markers_m: list[Vec3] = field(default_factory=list)   # "other"/legacy markers
    rigid_bodies: list[RigidBodyData] = field(default_factory=list)
    skeletons: list[SkeletonData] = field(default_factory=list)      # >= 2.1
    assets: list[AssetData] = field(default_factory=list)            # >= 4.1
    labeled_markers: list[LabeledMarker] = field(default_factory=list)  # >= 2.3
    force_plates: list[AnalogData] = field(default_factory=list)     # >= 2.9
    devices: list[AnalogData] = field(default_factory=list)          # >= 2.11
    latency: float | None = None        # < 3.0 only; host-defined "capture to send" delta
    timecode: int = 0                   # SMPTE packed h<<24 | m<<16 | s<<8 | frame
    timecode_subframe: int = 0
    timestamp_s: float | None = None    # >= 2.6 (f32 in 2.6, f64 from 2.7): seconds since Motive started
    camera_mid_exposure_ticks: int | None = None   # >= 3.0, host HR clock
    camera_data_received_ticks: int | None = None
    transmit_ticks: int | None = None
    precision_timestamp_s: int | None = None       # >= 4.1 (e.g. PTP): whole seconds
    precision_timestamp_frac: int | None = None    # >= 4.1: fractional seconds (u32)
    params: int | None = None           # >= 2.6: bit 0 recording, bit 1 tracked models changed
    end_tag: int = 0                    # the i32 end-of-data marker (0 in every real capture)

    def rigid_body(self, body_id: int) -> RigidBodyData | None:
        return next((b for b in self.rigid_bodies if b.id == body_id), None)

    @property
    def timecode_hmsf(self) -> tuple[int, int, int, int]:
        t = self.timecode
        return (t >> 24) & 255, (t >> 16) & 255, (t >> 8) & 255, t & 255


# The model-definition dataclasses are in descriptions.py (this file would pass 400 lines); re-exported here.
from uartlab.drivers.natnet.descriptions import (  # noqa: E402, F401
    AssetDescription,
    AssetMarkerDescription,
    CameraDescription,
    Description,
    DeviceDescription,
    ForcePlateDescription,
    MarkerSetDescription,
    ModelDefinitions,
    RigidBodyDescription,
    RigidBodyMarkerDescription,
    SkeletonDescription,
    UnknownDescription,
)

Message = (Connect | Discovery | ServerInfo | Request | Response | MessageString | EchoRequest | EchoResponse
           | Empty | Unrecognized | FrameOfData | ModelDefinitions)
