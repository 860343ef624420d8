"""Message -> datagram, the mirror of ``decode`` for every version it reads (the twin streams 3.0 and
4.1; the real captures round-trip byte-for-byte). Fields a version lacks are simply not written;
fields a version needs but the message leaves as None are written as 0."""

from __future__ import annotations

import socket
import struct
from collections.abc import Callable
from typing import Any

from uartlab.drivers.natnet.descriptions import (
    AssetDescription,
    CameraDescription,
    DeviceDescription,
    ForcePlateDescription,
    MarkerSetDescription,
    ModelDefinitions,
    RigidBodyDescription,
    SkeletonDescription,
    UnknownDescription,
)
from uartlab.drivers.natnet.packets import (
    MAX_PACKET_SIZE,
    AnalogData,
    Connect,
    EchoRequest,
    EchoResponse,
    Empty,
    FrameOfData,
    Message,
    MessageString,
    Request,
    Response,
    RigidBodyData,
    ServerInfo,
    Unrecognized,
    Version,
    as_version,
    at_least,
    has_section_sizes,
)
from uartlab.drivers.natnet.wire import Writer


def encode(msg: Message, version: Version | tuple[int, ...] | None = None) -> bytes:
    """One datagram (header included). ``version`` is needed for FrameOfData and ModelDefinitions."""
    w = Writer()
    if isinstance(msg, FrameOfData | ModelDefinitions):
        if version is None:
            raise ValueError(f"encoding {type(msg).__name__} needs the stream's NatNet version")
        v = as_version(version)
        if isinstance(msg, FrameOfData):
            encode_frame(w, msg, v)
        else:
            encode_modeldef(w, msg, v)
    elif isinstance(msg, Connect):  # also Discovery
        _connect(w, msg)
    elif isinstance(msg, ServerInfo):
        _server_info(w, msg)
    elif isinstance(msg, Request):
        w.raw(msg.command.encode("utf-8", "surrogateescape") + (b"\0" if msg.terminated else b""))
    elif isinstance(msg, Response | Empty | Unrecognized):
        w.raw(msg.payload)
    elif isinstance(msg, MessageString):
        w.cstr(msg.text)
    elif isinstance(msg, EchoRequest):
        w.u64(msg.client_time)
    elif isinstance(msg, EchoResponse):
        w.u64(msg.client_time)
        w.u64(msg.server_receive_ticks)
    else:
        raise TypeError(f"cannot encode {type(msg).__name__} as a NatNet message")
    if len(w.buf) > MAX_PACKET_SIZE:
        raise ValueError(f"{type(msg).__name__} payload of {len(w.buf)} bytes exceeds NatNet's {MAX_PACKET_SIZE}")
    return struct.pack("<HH", int(msg.MESSAGE_ID), len(w.buf)) + bytes(w.buf)


def _connect(w: Writer, msg: Connect) -> None:
    if msg.short_payload is not None:
        w.raw(msg.short_payload)
        return
    w.fixed_name(msg.name, msg.name_padding)
    w.version(msg.app_version)
    w.version(msg.natnet_version)
    if msg.bitstream_version is not None or msg.subscribed_data_only is not None:
        w.raw(b"\1" if msg.subscribed_data_only else b"\0")
        w.version(msg.bitstream_version or (0, 0, 0, 0))
    w.raw(msg.extra)


def _server_info(w: Writer, msg: ServerInfo) -> None:
    w.fixed_name(msg.name, msg.name_padding)
    w.version(msg.app_version)
    w.version(msg.natnet_version)
    if msg.high_res_clock_frequency_hz is not None:  # NatNet >= 3.0 servers
        w.u64(msg.high_res_clock_frequency_hz)
        w.u16(msg.data_port or 0)
        w.raw(b"\1" if msg.is_multicast else b"\0")
        w.raw(socket.inet_aton(msg.multicast_group or "0.0.0.0"))  # raises on anything but a dotted quad
    w.raw(msg.extra)


# ------------------------------------------------------------------ frame of data
def encode_frame(w: Writer, f: FrameOfData, v: Version) -> None:
    sized = has_section_sizes(v)
    w.i32(f.frame_number)

    w.i32(len(f.marker_sets))
    mark = w.begin_section(sized)
    for ms in f.marker_sets:
        w.cstr(ms.name)
        w.i32(len(ms.markers_m))
        for p in ms.markers_m:
            w.vec3(p)
    w.end_section(mark)

    w.i32(len(f.unlabeled_markers_m))
    mark = w.begin_section(sized)
    for p in f.unlabeled_markers_m:
        w.vec3(p)
    w.end_section(mark)

    w.i32(len(f.rigid_bodies))
    mark = w.begin_section(sized)
    for body in f.rigid_bodies:
        _rigid_body(w, body, v)
    w.end_section(mark)

    if at_least(v, 2, 1):
        w.i32(len(f.skeletons))
        mark = w.begin_section(sized)
        for sk in f.skeletons:
            w.i32(sk.id)
            w.i32(len(sk.bones))
            for bone in sk.bones:
                _rigid_body(w, bone, v)
        w.end_section(mark)

    if at_least(v, 4, 1):
        w.i32(len(f.assets))
        mark = w.begin_section(sized)
        for asset in f.assets:
            w.i32(asset.id)
            w.i32(len(asset.rigid_bodies))
            for b in asset.rigid_bodies:
                w.i32(b.id)
                w.vec3(b.position_m)
                w.quat(b.orientation)
                w.f32(b.mean_error_m or 0.0)
                w.u16(b.params or 0)
            w.i32(len(asset.markers))
            for m in asset.markers:
                w.i32(m.id)
                w.vec3(m.position_m)
                w.f32(m.size_m)
                w.u16(m.params)
                w.f32(m.residual_m)
        w.end_section(mark)

    if at_least(v, 2, 3):
        w.i32(len(f.labeled_markers))
        mark = w.begin_section(sized)
        for labeled in f.labeled_markers:
            w.i32(labeled.id)
            w.vec3(labeled.position_m)
            w.f32(labeled.size_m)
            if at_least(v, 2, 6):
                w.u16(labeled.params or 0)
            if v[0] >= 3:
                w.f32(labeled.residual_m or 0.0)
        w.end_section(mark)

    if at_least(v, 2, 9):
        _analog(w, f.force_plates, sized)
    if at_least(v, 2, 11):
        _analog(w, f.devices, sized)
    _suffix(w, f, v)


def _rigid_body(w: Writer, b: RigidBodyData, v: Version) -> None:
    w.i32(b.id)
    w.vec3(b.position_m)
    w.quat(b.orientation)
    if v[0] < 3:
        markers = b.markers or []
        w.i32(len(markers))
        for m in markers:
            w.vec3(m.position_m)
        if v[0] >= 2:
            for m in markers:
                w.i32(m.id or 0)
            for m in markers:
                w.f32(m.size_m or 0.0)
    if v[0] >= 2:
        w.f32(b.mean_error_m or 0.0)
    if at_least(v, 2, 6):
        w.u16(b.params or 0)


def _analog(w: Writer, items: list[AnalogData], sized: bool) -> None:
    w.i32(len(items))
    mark = w.begin_section(sized)
    for item in items:
        w.i32(item.id)
        w.i32(len(item.channels))
        for channel in item.channels:
            w.i32(len(channel))
            w.f32s(channel)
    w.end_section(mark)


def _suffix(w: Writer, f: FrameOfData, v: Version) -> None:
    if v[0] < 3:
        w.f32(f.latency or 0.0)
    w.u32(f.timecode)
    w.u32(f.timecode_subframe)
    if at_least(v, 2, 7):
        w.f64(f.timestamp_s or 0.0)
    elif at_least(v, 2, 6):
        w.f32(f.timestamp_s or 0.0)
    if v[0] >= 3:
        w.u64(f.camera_mid_exposure_ticks or 0)
        w.u64(f.camera_data_received_ticks or 0)
        w.u64(f.transmit_ticks or 0)
    if at_least(v, 4, 1):
        w.u32(f.precision_timestamp_s or 0)
        w.u32(f.precision_timestamp_frac or 0)
    if at_least(v, 2, 6):
        w.u16(f.params or 0)
    w.i32(f.end_tag)


# ------------------------------------------------------------------ model definitions
def encode_modeldef(w: Writer, defs: ModelDefinitions, v: Version) -> None:
    sized = has_section_sizes(v)
    w.i32(len(defs.descriptions))
    for d in defs.descriptions:
        kind = d.type if isinstance(d, UnknownDescription) else d.TYPE
        w.i32(kind)
        mark = w.begin_section(sized)
        if isinstance(d, UnknownDescription):
            w.raw(d.body)
        else:
            _DESCRIPTION_ENCODERS[type(d)](w, d, v)
        w.end_section(mark)


def _marker_set_desc(w: Writer, d: MarkerSetDescription, v: Version) -> None:
    w.cstr(d.name)
    w.i32(len(d.marker_names))
    for name in d.marker_names:
        w.cstr(name)


def _rigid_body_desc(w: Writer, d: RigidBodyDescription, v: Version) -> None:
    if v[0] >= 2:
        w.cstr(d.name)
    w.i32(d.id)
    w.i32(d.parent_id)
    w.vec3(d.offset_m)
    if at_least(v, 4, 2):
        w.quat(d.rotation_offset or (0.0, 0.0, 0.0, 1.0))
    if v[0] >= 3:
        w.i32(len(d.markers))
        for m in d.markers:
            w.vec3(m.offset_m)
        for m in d.markers:
            w.i32(m.active_label)
        if v[0] >= 4:
            for m in d.markers:
                w.cstr(m.name or "")


def _skeleton_desc(w: Writer, d: SkeletonDescription, v: Version) -> None:
    w.cstr(d.name)
    w.i32(d.id)
    w.i32(len(d.bones))
    for bone in d.bones:
        _rigid_body_desc(w, bone, v)


def _force_plate_desc(w: Writer, d: ForcePlateDescription, v: Version) -> None:
    w.i32(d.id)
    w.cstr(d.serial)
    w.f32(d.width_m)
    w.f32(d.length_m)
    w.vec3(d.origin_m)
    for row in d.calibration:
        w.f32s(row)
    for corner in d.corners_m:
        w.vec3(corner)
    w.i32(d.plate_type)
    w.i32(d.channel_data_type)
    w.i32(len(d.channel_names))
    for name in d.channel_names:
        w.cstr(name)


def _device_desc(w: Writer, d: DeviceDescription, v: Version) -> None:
    w.i32(d.id)
    w.cstr(d.name)
    w.cstr(d.serial)
    w.i32(d.device_type)
    w.i32(d.channel_data_type)
    w.i32(len(d.channel_names))
    for name in d.channel_names:
        w.cstr(name)


def _camera_desc(w: Writer, d: CameraDescription, v: Version) -> None:
    w.cstr(d.name)
    w.vec3(d.position_m)
    w.quat(d.orientation)


def _asset_desc(w: Writer, d: AssetDescription, v: Version) -> None:
    w.cstr(d.name)
    w.i32(d.asset_type)
    w.i32(d.id)
    w.i32(len(d.rigid_bodies))
    for body in d.rigid_bodies:
        _rigid_body_desc(w, body, v)
    w.i32(len(d.markers))
    for m in d.markers:
        w.cstr(m.name)
        w.i32(m.id)
        w.vec3(m.position_m)
        w.f32(m.size_m)
        w.u16(m.params)


# Each encoder takes its own description type (the key).
_DESCRIPTION_ENCODERS: dict[type, Callable[[Writer, Any, Version], None]] = {
    MarkerSetDescription: _marker_set_desc,
    RigidBodyDescription: _rigid_body_desc,
    SkeletonDescription: _skeleton_desc,
    ForcePlateDescription: _force_plate_desc,
    DeviceDescription: _device_desc,
    CameraDescription: _camera_desc,
    AssetDescription: _asset_desc,
}
