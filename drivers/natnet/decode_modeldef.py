"""NAT_MODELDEF payload -> ``ModelDefinitions`` (PacketClient.cpp ``UnpackDescription`` and the
per-type ``Unpack*Description`` functions; the per-description byte count exists from NatNet 4.1 only,
as the Python samples read it - PacketClient 4.x reads it unconditionally because it only talks 4.1+)."""

from __future__ import annotations

from collections.abc import Callable

from uartlab.drivers.natnet.descriptions import (
    AssetDescription,
    AssetMarkerDescription,
    CameraDescription,
    Description,
    DescriptionType,
    DeviceDescription,
    ForcePlateDescription,
    MarkerSetDescription,
    ModelDefinitions,
    RigidBodyDescription,
    RigidBodyMarkerDescription,
    SkeletonDescription,
    UnknownDescription,
)
from uartlab.drivers.natnet.packets import Version, at_least, has_section_sizes
from uartlab.drivers.natnet.wire import Reader


def decode_modeldef(r: Reader, v: Version) -> ModelDefinitions:
    sized = has_section_sizes(v)
    defs = ModelDefinitions()
    for i in range(r.count("descriptions.count", 8 if sized else 4)):
        r.ctx = f"descriptions[{i}]"
        kind = r.i32("type")
        size = r.section_size("bytes", sized)
        start = r.pos
        decoder = _DECODERS.get(kind)
        if decoder is None:
            if size is None:  # nothing says where the next description starts
                r.fail(f"unknown description type {kind}; before NatNet 4.1 the rest cannot be parsed", "type",
                       start - 4)
            defs.descriptions.append(UnknownDescription(kind, r.raw(size, "body")))
        else:
            if kind in (DescriptionType.FORCE_PLATE, DescriptionType.DEVICE) and v[0] < 3:
                r.fail(f"description type {kind} before NatNet 3.0 has no documented layout", "type", start - 4)
            defs.descriptions.append(decoder(r, v))
        r.ctx = f"descriptions[{i}]"
        r.check_section(start, size, "bytes")
    if r.remaining:
        r.ctx = ""
        r.fail(f"{r.remaining} unexpected bytes after the last description (wrong stream version?)", "end")
    return defs


def _marker_set(r: Reader, v: Version) -> MarkerSetDescription:
    name = r.cstr("name")
    return MarkerSetDescription(name, [r.cstr(f"marker_names[{j}]") for j in range(r.count("markers.count", 1))])


def _rigid_body(r: Reader, v: Version) -> RigidBodyDescription:
    name = r.cstr("name") if v[0] >= 2 else ""
    body = RigidBodyDescription(name, r.i32("id"), r.i32("parent_id"), r.vec3("offset"))
    if at_least(v, 4, 2):
        body.rotation_offset = r.quat("rotation_offset")
    if v[0] >= 3:
        # All offsets, then all active labels, then (4.0+) all names - three parallel arrays.
        n = r.count("markers.count", 16)
        offsets = r.vec3s(n, "markers.offset")
        labels = [r.i32(f"markers[{j}].active_label") for j in range(n)]
        names = [r.cstr(f"markers[{j}].name") for j in range(n)] if v[0] >= 4 else [None] * n
        body.markers = [RigidBodyMarkerDescription(o, lab, nm)
                        for o, lab, nm in zip(offsets, labels, names, strict=True)]
    return body


def _skeleton(r: Reader, v: Version) -> SkeletonDescription:
    ctx = r.ctx
    skeleton = SkeletonDescription(r.cstr("name"), r.i32("id"))
    for j in range(r.count("bones.count", 20)):
        r.ctx = f"{ctx}.bones[{j}]"
        skeleton.bones.append(_rigid_body(r, v))
    return skeleton


def _force_plate(r: Reader, v: Version) -> ForcePlateDescription:
    plate_id, serial = r.i32("id"), r.cstr("serial")
    width, length, origin = r.f32("width"), r.f32("length"), r.vec3("origin")
    calibration = [r.f32s(12, f"calibration[{row}]") for row in range(12)]
    corners = r.vec3s(4, "corners")
    plate_type, data_type = r.i32("plate_type"), r.i32("channel_data_type")
    names = [r.cstr(f"channel_names[{c}]") for c in range(r.count("channels.count", 1))]
    return ForcePlateDescription(plate_id, serial, width, length, origin, calibration, corners, plate_type,
                                 data_type, names)


def _device(r: Reader, v: Version) -> DeviceDescription:
    device_id, name, serial = r.i32("id"), r.cstr("name"), r.cstr("serial")
    device_type, data_type = r.i32("device_type"), r.i32("channel_data_type")
    names = [r.cstr(f"channel_names[{c}]") for c in range(r.count("channels.count", 1))]
    return DeviceDescription(device_id, name, serial, device_type, data_type, names)


def _camera(r: Reader, v: Version) -> CameraDescription:
    return CameraDescription(r.cstr("name"), r.vec3("position"), r.quat("orientation"))


def _asset(r: Reader, v: Version) -> AssetDescription:
    ctx = r.ctx
    asset = AssetDescription(r.cstr("name"), r.i32("asset_type"), r.i32("id"))
    for j in range(r.count("rigid_bodies.count", 20)):
        r.ctx = f"{ctx}.rigid_bodies[{j}]"
        asset.rigid_bodies.append(_rigid_body(r, v))
    r.ctx = ctx
    for j in range(r.count("markers.count", 23)):
        r.ctx = f"{ctx}.markers[{j}]"
        asset.markers.append(AssetMarkerDescription(r.cstr("name"), r.i32("id"), r.vec3("position"),
                                                    r.f32("size"), r.u16("params")))
    return asset


_DECODERS: dict[int, Callable[[Reader, Version], Description]] = {
    DescriptionType.MARKER_SET: _marker_set,
    DescriptionType.RIGID_BODY: _rigid_body,
    DescriptionType.SKELETON: _skeleton,
    DescriptionType.FORCE_PLATE: _force_plate,
    DescriptionType.DEVICE: _device,
    DescriptionType.CAMERA: _camera,
    DescriptionType.ASSET: _asset,
}
