"""Datagram -> message. ``decode`` is strict (raises ``NatNetDecodeError`` naming offset and field);
``decode_packet`` is for streaming use and never raises: it returns a ``DecodeError`` and counts it.

Version-dependent fields follow PacketClient.cpp (``UnpackFrameData`` and friends, SDK 2.5, 2.10, 3.1
and 4.3), with one deliberate difference: NatNet 2.x skeleton bones carry the same per-body marker
lists as 2.x rigid bodies (SDK 2.10 reads them; 4.3 forgot them; the real 2.10 capture has them).
Stricter than the samples, so a wrong version or a damaged packet is an error rather than garbage:
counts must fit in the bytes left, 4.1 section byte counts must equal what their sections hold, and
nothing may follow the end-of-data tag.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from uartlab.drivers.natnet.decode_modeldef import decode_modeldef
from uartlab.drivers.natnet.packets import (
    AnalogData,
    AssetData,
    AssetMarkerData,
    Connect,
    DecodeError,
    Discovery,
    EchoRequest,
    EchoResponse,
    Empty,
    FrameOfData,
    LabeledMarker,
    MarkerSetData,
    Message,
    MessageId,
    MessageString,
    NatNetDecodeError,
    Request,
    Response,
    RigidBodyData,
    RigidBodyMarker,
    ServerInfo,
    SkeletonData,
    Unrecognized,
    Version,
    as_version,
    at_least,
    has_section_sizes,
)
from uartlab.drivers.natnet.wire import Reader

SENDER_BYTES = 264          # sSender: char[256] + 2 x u8[4]
SERVER_INFO_BYTES = 279     # sSender_Server (NatNet >= 3.0)
_EMPTY_IDS = {MessageId.REQUEST_MODELDEF, MessageId.REQUEST_FRAMEOFDATA, MessageId.KEEPALIVE,
              MessageId.DISCONNECT, MessageId.DISCONNECTBYTIMEOUT}


def split_header(data: bytes) -> tuple[int, int]:
    """(message id, payload end). nDataBytes is u16 (the Python samples read it signed: wrong above
    32767); a datagram longer than it says is accepted (clients pad KEEPALIVE), a shorter one is not."""
    if len(data) < 4:
        raise NatNetDecodeError(f"datagram of {len(data)} bytes is shorter than the 4-byte header", 0, "header")
    message_id, n = struct.unpack_from("<HH", data)
    if n > len(data) - 4:
        raise NatNetDecodeError(f"truncated: header says {n} payload bytes, datagram has {len(data) - 4}",
                                2, "nDataBytes", message_id)
    return message_id, 4 + n


def decode(data: bytes, version: Version | tuple[int, ...] | None = None) -> Message:
    """Strict decode of one datagram (header included). ``version`` is the stream's NatNet version,
    needed for FRAMEOFDATA and MODELDEF only."""
    data = bytes(data)
    message_id, end = split_header(data)
    r = Reader(data, 4, end, message_id)
    if message_id in (MessageId.FRAMEOFDATA, MessageId.MODELDEF):
        if version is None:
            r.fail("the stream's NatNet version is unknown (decode SERVERINFO first or pass version)", "version", 0)
        v = as_version(version)
        return decode_frame(r, v) if message_id == MessageId.FRAMEOFDATA else decode_modeldef(r, v)
    if message_id in (MessageId.CONNECT, MessageId.DISCOVERY):
        return _connect(r, Connect if message_id == MessageId.CONNECT else Discovery)
    if message_id == MessageId.SERVERINFO:
        return _server_info(r)
    if message_id == MessageId.REQUEST:
        payload = r.raw(r.remaining, "command")
        command, nul, _ = payload.partition(b"\0")
        return Request(command.decode("utf-8", "surrogateescape"), terminated=bool(nul))
    if message_id == MessageId.RESPONSE:
        return Response(r.raw(r.remaining, "payload"))
    if message_id == MessageId.MESSAGESTRING:
        return MessageString(r.raw(r.remaining, "text").partition(b"\0")[0].decode("utf-8", "replace"))
    if message_id == MessageId.ECHOREQUEST:
        return EchoRequest(r.u64("client_time"))
    if message_id == MessageId.ECHORESPONSE:
        return EchoResponse(r.u64("client_time"), r.u64("server_receive_ticks"))
    if message_id in _EMPTY_IDS:
        return Empty(message_id, r.raw(r.remaining, "payload"))
    return Unrecognized(message_id, r.raw(r.remaining, "payload"))


@dataclass
class DecodeStats:
    """Counts kept by ``decode_packet`` when given one (thread-confined: one per receive thread)."""

    packets: int = 0
    errors: int = 0
    last_error: NatNetDecodeError | None = None


def decode_packet(data: bytes, version: Version | tuple[int, ...] | None = None,
                  stats: DecodeStats | None = None) -> Message | DecodeError:
    """Streaming decode: a message, or a ``DecodeError`` for a malformed/truncated datagram. Never raises."""
    if stats is not None:
        stats.packets += 1
    try:
        return decode(data, version)
    except NatNetDecodeError as e:
        err = e
    except Exception as e:  # the streaming contract: even a decoder bug must not kill a receive thread
        err = NatNetDecodeError(f"decoder failure {type(e).__name__}: {e}", -1, "?", None)
    if stats is not None:
        stats.errors += 1
        stats.last_error = err
    return DecodeError(err, bytes(data))


# ------------------------------------------------------------------ sender, server info
def _connect(r: Reader, cls: type[Connect]) -> Connect:
    if r.remaining < SENDER_BYTES:
        payload = r.raw(r.remaining, "payload")
        return cls(name=payload.partition(b"\0")[0].decode("utf-8", "replace"), short_payload=payload)
    name, padding = r.fixed_name("name")
    msg = cls(name=name, app_version=r.version("app_version"), natnet_version=r.version("natnet_version"),
              name_padding=padding)
    if r.remaining >= 5:  # sConnectionOptions {u8 subscribedDataOnly; u8 BitstreamVersion[4]}
        msg.subscribed_data_only = r.raw(1, "subscribed_data_only") != b"\0"
        msg.bitstream_version = r.version("bitstream_version")
    msg.extra = r.raw(r.remaining, "extra")
    return msg


def _server_info(r: Reader) -> ServerInfo:
    name, padding = r.fixed_name("name")
    info = ServerInfo(name=name, app_version=r.version("app_version"), natnet_version=r.version("natnet_version"),
                      name_padding=padding)
    if r.remaining >= SERVER_INFO_BYTES - SENDER_BYTES:  # NatNet >= 3.0 appends clock and connection info
        info.high_res_clock_frequency_hz = r.u64("high_res_clock_frequency")
        info.data_port = r.u16("data_port")
        info.is_multicast = r.raw(1, "is_multicast") != b"\0"
        info.multicast_group = ".".join(str(b) for b in r.raw(4, "multicast_group"))
    info.extra = r.raw(r.remaining, "extra")
    return info


# ------------------------------------------------------------------ frame of data
def decode_frame(r: Reader, v: Version) -> FrameOfData:
    sized = has_section_sizes(v)
    frame = FrameOfData(r.i32("frame_number"))

    def section(name: str, min_item: int):
        r.ctx = ""
        n = r.count(f"{name}.count", min_item)
        return n, r.section_size(f"{name}.bytes", sized), r.pos

    n, size, start = section("marker_sets", 5)
    for i in range(n):
        r.ctx = f"marker_sets[{i}]"
        name = r.cstr("name")
        frame.marker_sets.append(MarkerSetData(name, r.vec3s(r.count("count", 12), "markers")))
    r.check_section(start, size, "marker_sets.bytes")

    n, size, start = section("unlabeled_markers", 12)
    frame.unlabeled_markers_m = r.vec3s(n, "unlabeled_markers")
    r.check_section(start, size, "unlabeled_markers.bytes")

    n, size, start = section("rigid_bodies", 32)
    for i in range(n):
        r.ctx = f"rigid_bodies[{i}]"
        frame.rigid_bodies.append(_rigid_body(r, v))
    r.check_section(start, size, "rigid_bodies.bytes")

    if at_least(v, 2, 1):
        n, size, start = section("skeletons", 8)
        for i in range(n):
            r.ctx = f"skeletons[{i}]"
            skeleton = SkeletonData(r.i32("id"))
            for j in range(r.count("bones.count", 32)):
                r.ctx = f"skeletons[{i}].bones[{j}]"
                skeleton.bones.append(_rigid_body(r, v))
            frame.skeletons.append(skeleton)
        r.check_section(start, size, "skeletons.bytes")

    if at_least(v, 4, 1):
        n, size, start = section("assets", 12)
        for i in range(n):
            r.ctx = f"assets[{i}]"
            frame.assets.append(_asset(r, i))
        r.check_section(start, size, "assets.bytes")

    if at_least(v, 2, 3):
        n, size, start = section("labeled_markers", 20)
        has_params, has_residual = at_least(v, 2, 6), v[0] >= 3
        for i in range(n):
            r.ctx = f"labeled_markers[{i}]"
            m = LabeledMarker(r.i32("id"), r.vec3("position"), r.f32("size"))
            m.params = r.u16("params") if has_params else None
            m.residual_m = r.f32("residual") if has_residual else None
            frame.labeled_markers.append(m)
        r.check_section(start, size, "labeled_markers.bytes")

    if at_least(v, 2, 9):
        n, size, start = section("force_plates", 8)
        frame.force_plates = [_analog(r, f"force_plates[{i}]") for i in range(n)]
        r.check_section(start, size, "force_plates.bytes")
    if at_least(v, 2, 11):
        n, size, start = section("devices", 8)
        frame.devices = [_analog(r, f"devices[{i}]") for i in range(n)]
        r.check_section(start, size, "devices.bytes")

    _suffix(r, v, frame)
    return frame


def _rigid_body(r: Reader, v: Version) -> RigidBodyData:
    body = RigidBodyData(r.i32("id"), r.vec3("position"), r.quat("orientation"))
    if v[0] < 3:  # the body's own markers; NatNet 3.0 moved them to the model definitions
        k = r.count("markers.count", 12)
        positions = r.vec3s(k, "markers.position")
        if v[0] >= 2:
            ids = list(struct.unpack_from(f"<{k}i", r.data, r._take(4 * k, "markers.id")))
            sizes = r.f32s(k, "markers.size")
            body.markers = [RigidBodyMarker(p, i, s) for p, i, s in zip(positions, ids, sizes, strict=True)]
        else:
            body.markers = [RigidBodyMarker(p) for p in positions]
    if v[0] >= 2:
        body.mean_error_m = r.f32("mean_error")
    if at_least(v, 2, 6):
        body.params = r.u16("params")
    return body


def _asset(r: Reader, i: int) -> AssetData:
    asset = AssetData(r.i32("id"))
    for j in range(r.count("rigid_bodies.count", 38)):
        r.ctx = f"assets[{i}].rigid_bodies[{j}]"
        asset.rigid_bodies.append(RigidBodyData(r.i32("id"), r.vec3("position"), r.quat("orientation"),
                                                r.f32("mean_error"), r.u16("params")))
    r.ctx = f"assets[{i}]"
    for j in range(r.count("markers.count", 26)):
        r.ctx = f"assets[{i}].markers[{j}]"
        asset.markers.append(AssetMarkerData(r.i32("id"), r.vec3("position"), r.f32("size"), r.u16("params"),
                                             r.f32("residual")))
    return asset


def _analog(r: Reader, ctx: str) -> AnalogData:
    r.ctx = ctx
    data = AnalogData(r.i32("id"))
    for c in range(r.count("channels.count", 4)):
        r.ctx = f"{ctx}.channels[{c}]"
        data.channels.append(r.f32s(r.count("frames.count", 4), "frames"))
    return data


def _suffix(r: Reader, v: Version, frame: FrameOfData) -> None:
    r.ctx = ""
    if v[0] < 3:
        frame.latency = r.f32("latency")
    frame.timecode = r.u32("timecode")
    frame.timecode_subframe = r.u32("timecode_subframe")
    if at_least(v, 2, 7):
        frame.timestamp_s = r.f64("timestamp")
    elif at_least(v, 2, 6):
        frame.timestamp_s = r.f32("timestamp")
    if v[0] >= 3:
        frame.camera_mid_exposure_ticks = r.u64("camera_mid_exposure_timestamp")
        frame.camera_data_received_ticks = r.u64("camera_data_received_timestamp")
        frame.transmit_ticks = r.u64("transmit_timestamp")
    if at_least(v, 4, 1):
        frame.precision_timestamp_s = r.u32("precision_timestamp_secs")
        frame.precision_timestamp_frac = r.u32("precision_timestamp_frac_secs")
    if at_least(v, 2, 6):
        frame.params = r.u16("params")
    frame.end_tag = r.i32("end_of_data")
    if r.remaining:
        r.fail(f"{r.remaining} unexpected bytes after the end-of-data tag (wrong stream version?)", "end_of_data")
