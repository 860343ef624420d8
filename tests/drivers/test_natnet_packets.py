"""NatNet codec against real bytes: every fixture decodes with the right content, the recorded session
matches the official SampleClient's printout, real packets re-encode byte-for-byte, the 4.x layouts
(no public capture exists) are checked against hand-packed PacketClient.cpp layouts, and thousands of
mutated packets never escape ``decode_packet``."""

from __future__ import annotations

import json
import random
import re
import struct
from pathlib import Path

import pytest
from uartlab.drivers.natnet import DecodeStats, NatNetDecodeError, decode, decode_packet, encode
from uartlab.drivers.natnet.descriptions import (
    AssetDescription,
    AssetMarkerDescription,
    CameraDescription,
    DeviceDescription,
    ForcePlateDescription,
    MarkerSetDescription,
    ModelDefinitions,
    RigidBodyDescription,
    RigidBodyMarkerDescription,
    SkeletonDescription,
    UnknownDescription,
)
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
    MessageId,
    Request,
    Response,
    RigidBodyData,
    RigidBodyMarker,
    ServerInfo,
    SkeletonData,
    Unrecognized,
)

FIX = Path("/work/shared/fixtures/natnet")
MJE, ASTANIN = FIX / "mje-nz_python_natnet", FIX / "astanin_python-optirx"
V3, V210 = (3, 0, 0, 0), (2, 10, 0, 0)
ASTANIN_VERSIONS = {"1.5.0": (2, 5), "1.6b2": (2, 6), "1.7.2": (2, 7), "1.9.0": (2, 9)}


def _read(path: Path) -> bytes:
    return path.read_bytes()


def _session() -> list[dict]:
    return [json.loads(line) for line in (FIX / "derived/traffic_v3_udp_payloads.jsonl").open()]


def _all_fixture_packets() -> list[tuple[str, bytes, tuple]]:
    out = [(p.name, _read(p), V3 if "_v3" in p.name else V210) for p in sorted(MJE.glob("*.bin"))]
    for p in sorted(ASTANIN.glob("*.bin")):
        out.append((p.name, _read(p), ASTANIN_VERSIONS[p.name.split("-")[2]]))
    return out


# ------------------------------------------------------------------ every fixture file decodes
def _names(descs):
    return [(type(d).__name__, getattr(d, "name", None)) for d in descs]


def check_serverinfo_v3(m):
    assert isinstance(m, ServerInfo) and m.name == "Motive"
    assert (m.app_version, m.natnet_version) == ((2, 1, 0, 0), (3, 0, 0, 0))
    assert (m.high_res_clock_frequency_hz, m.data_port, m.is_multicast, m.multicast_group) == (
        3312787, 1511, True, "239.255.42.99")


def check_serverinfo_v2(m):
    assert isinstance(m, ServerInfo) and (m.name, m.app_version, m.natnet_version) == (
        "Motive", (1, 10, 0, 0), (2, 10, 0, 0))
    assert m.high_res_clock_frequency_hz is None and m.data_port is None  # a 2.x server has no clock info


def check_connect(version):
    def check(m):
        assert type(m) is Connect and (m.name, m.app_version, m.natnet_version) == ("NatNetLib", version, version)
        assert m.bitstream_version is None  # NatNetLib 2.10/3.0 send no connection options
    return check


def check_modeldef_v3(m):
    assert _names(m.descriptions) == [("RigidBodyDescription", "RaceQuad"), ("MarkerSetDescription", "RaceQuad"),
                                      ("MarkerSetDescription", "all")]
    body = m.rigid_bodies[0]
    assert (body.id, body.parent_id, len(body.markers)) == (2, -1, 5)
    assert all(mk.active_label == 0 and mk.name is None for mk in body.markers)
    assert [len(s.marker_names) for s in m.marker_sets] == [5, 5]


def check_modeldef_v3_2(m):
    assert [d.name for d in m.descriptions[:3]] == ["crossbow", "crossbow", "all"]
    assert (m.rigid_bodies[0].id, len(m.rigid_bodies[0].markers)) == (54, 7)
    assert sorted(c.name for c in m.cameras) == [f"Prime 13 #{n}" for n in range(28105, 28109)]


def check_modeldef_skeleton(m):
    (sk,) = m.skeletons
    assert (sk.name, sk.id, len(sk.bones)) == ("Skeleton 002", 3, 21)
    assert [(s.name, len(s.marker_names)) for s in m.marker_sets] == [("Skeleton 002", 37), ("all", 37)]


def check_modeldef_v2(m):
    assert [type(d).__name__ for d in m.descriptions] == ["RigidBodyDescription", "MarkerSetDescription",
                                                          "SkeletonDescription", "MarkerSetDescription",
                                                          "MarkerSetDescription"]
    assert (m.rigid_bodies[0].name, m.rigid_bodies[0].id, m.rigid_bodies[0].markers) == ("RigidBody 1", 1, [])
    assert (m.skeletons[0].name, m.skeletons[0].id, len(m.skeletons[0].bones)) == ("Karlie", 4, 21)
    assert [len(s.marker_names) for s in m.marker_sets] == [3, 37, 40]


def check_frame_v3(f):
    assert f.frame_number == 162734 and f.marker_sets == [] and len(f.unlabeled_markers_m) == 5
    (body,) = f.rigid_bodies
    assert body.id == 2 and body.tracking_valid and body.params == 1 and body.markers is None
    assert body.position_m == pytest.approx((0.1744, 1.4471, -0.7343), abs=1e-4)
    assert body.orientation == pytest.approx((-0.0546, 0.5099, 0.0437, -0.8574), abs=1e-4)
    assert body.mean_error_m == pytest.approx(5.15e-4, abs=1e-6)
    assert f.skeletons == [] and f.force_plates == [] and f.devices == []
    assert [(m.model_id, m.marker_id, m.params) for m in f.labeled_markers] == (
        [(2, k, 0x0A) for k in range(1, 6)] + [(0, 50007, 0x12)])
    assert (f.timecode, f.timecode_subframe, f.params, f.latency) == (0, 0, 0, None)
    assert f.timestamp_s == pytest.approx(1356.1167, abs=1e-4)
    assert (f.camera_mid_exposure_ticks, f.camera_data_received_ticks, f.transmit_ticks) == (
        1416497730518, 1416497745808, 1416497748722)


def check_frame_occluded(f):
    assert f.frame_number == 269007 and [(s.name, len(s.markers_m)) for s in f.marker_sets] == [
        ("FakeTree", 5), ("all", 5)]
    assert f.unlabeled_markers_m == [] and [b.id for b in f.rigid_bodies] == [7]
    assert [(m.model_id, m.marker_id, m.occluded) for m in f.labeled_markers] == [
        (7, 2, True), (7, 3, False), (7, 4, False), (7, 5, False)]
    assert f.labeled_markers[0].params == 0x0B
    # Motive still sends the occluded marker, at the position its solver filled in (= the marker set's)
    assert f.labeled_markers[0].position_m == f.marker_sets[0].markers_m[1]
    assert f.timestamp_s == pytest.approx(8966.9, abs=1e-3)


def check_frame_v2(f):
    assert f.frame_number == 109238
    assert [(s.name, len(s.markers_m)) for s in f.marker_sets] == [("RigidBody 1", 3), ("Karlie", 37), ("all", 40)]
    assert len(f.unlabeled_markers_m) == 4 and len(f.labeled_markers) == 44 and f.force_plates == []
    (body,) = f.rigid_bodies
    assert (body.id, body.params, body.tracking_valid, len(body.markers)) == (1, 0, False, 3)
    (sk,) = f.skeletons
    assert sk.id == 4 and len(sk.bones) == 21 and {b.id >> 16 for b in sk.bones} == {4}  # bone id = skel << 16 | n
    assert all(b.markers == [] for b in sk.bones)  # 2.x bones carry (empty) marker lists, which PacketClient 4.3 forgot
    assert f.latency == pytest.approx(1.249, abs=1e-3) and f.timestamp_s == pytest.approx(910.317, abs=1e-3)


MJE_EXPECTED = {
    "serverinfo_packet_v3.bin": (MessageId.SERVERINFO, check_serverinfo_v3),
    "serverinfo_packet_v2.bin": (MessageId.SERVERINFO, check_serverinfo_v2),
    "connect_packet_v3.bin": (MessageId.CONNECT, check_connect((3, 0, 0, 0))),
    "connect_packet_v2.bin": (MessageId.CONNECT, check_connect((2, 10, 0, 0))),
    "discovery_packet_v3.bin": (MessageId.DISCOVERY, lambda m: isinstance(m, Discovery) and m.name == "NatNetLib"),
    "requestmodeldef_packet_v3.bin": (MessageId.REQUEST_MODELDEF, lambda m: isinstance(m, Empty)),
    "requestmodeldef_packet_v2.bin": (MessageId.REQUEST_MODELDEF, lambda m: isinstance(m, Empty)),
    "modeldef_packet_v3.bin": (MessageId.MODELDEF, check_modeldef_v3),
    "modeldef_packet_v3_2.bin": (MessageId.MODELDEF, check_modeldef_v3_2),
    "modeldef_packet_skeleton_v3.bin": (MessageId.MODELDEF, check_modeldef_skeleton),
    "modeldef_packet_v2.bin": (MessageId.MODELDEF, check_modeldef_v2),
    "mocapframe_packet_v3.bin": (MessageId.FRAMEOFDATA, check_frame_v3),
    "mocapframe_packet_occluded_v3.bin": (MessageId.FRAMEOFDATA, check_frame_occluded),
    "mocapframe_packet_v2.bin": (MessageId.FRAMEOFDATA, check_frame_v2),
    "echorequest_packet_v3.bin": (MessageId.ECHOREQUEST, lambda m: m == EchoRequest(278554190)),
    "echoresponse_packet_v3.bin": (MessageId.ECHORESPONSE, lambda m: m == EchoResponse(278554190, 1416498545924)),
}


def test_the_fixture_table_covers_every_file():
    assert set(MJE_EXPECTED) == {p.name for p in MJE.glob("*.bin")}


@pytest.mark.parametrize("name", sorted(MJE_EXPECTED))
def test_mje_fixture_decodes(name):
    message_id, check = MJE_EXPECTED[name]
    msg = decode(_read(MJE / name), V3 if "_v3" in name else V210)
    assert message_id == msg.MESSAGE_ID
    assert check(msg) is not False


@pytest.mark.parametrize("motive", sorted(ASTANIN_VERSIONS))
def test_astanin_fixtures_decode(motive):
    major, minor = ASTANIN_VERSIONS[motive]
    info = decode(_read(ASTANIN / f"frame-motive-{motive}-000.bin"))
    assert isinstance(info, ServerInfo) and info.natnet_version == (major, minor, 0, 0)
    frames = [decode(_read(ASTANIN / f"frame-motive-{motive}-00{k}.bin"), info.natnet_version) for k in (1, 2)]
    assert frames[1].frame_number == frames[0].frame_number + 1
    for f in frames:
        assert [len(s.markers_m) for s in f.marker_sets] == [3, 3] and f.marker_sets[1].name == "all"
        assert len(f.rigid_bodies) == 1 and len(f.labeled_markers) == 3 and f.skeletons == []
        body = f.rigid_bodies[0]
        assert [m.id for m in body.markers] == [1, 2, 3]  # 2.x rigid bodies carry their markers
        assert (f.timestamp_s is None) == (minor < 6)      # 2.5 frames end latency, timecode, eod
        assert (f.params is None) == (minor < 6) and (body.params is None) == (minor < 6)
        assert (f.force_plates == []) and (minor >= 9 or f.force_plates == [])
    if minor >= 7:  # f64 timestamps: consecutive 120 Hz frames
        assert frames[1].timestamp_s - frames[0].timestamp_s == pytest.approx(1 / 120, abs=1e-6)


# ------------------------------------------------------------------ the recorded session
def _pcapng_udp_payloads(path: Path) -> list[bytes]:
    """UDP payloads of an Ethernet/IPv4 pcapng, in capture order (Enhanced Packet Blocks, little-endian)."""
    data, pos, out = path.read_bytes(), 0, []
    while pos < len(data):
        block_type, block_len = struct.unpack_from("<II", data, pos)
        if block_type == 6:
            captured = struct.unpack_from("<I", data, pos + 20)[0]
            frame = data[pos + 28:pos + 28 + captured]
            if struct.unpack_from("!H", frame, 12)[0] == 0x0800 and frame[23] == 17:  # IPv4, UDP
                udp = frame[14 + (frame[14] & 15) * 4:]
                out.append(udp[8:struct.unpack_from("!H", udp, 4)[0]])
        pos += block_len
    return out


def test_derived_session_is_the_pcap():
    """The JSONL copy used below is byte-identical to the capture itself (the ground truth)."""
    assert _pcapng_udp_payloads(MJE / "raw/traffic.pcapng") == [bytes.fromhex(r["payload_hex"]) for r in _session()]


def test_recorded_session_decodes_message_by_message():
    rows = _session()
    assert len(rows) == 550
    msgs = [decode(bytes.fromhex(r["payload_hex"]), V3) for r in rows]
    assert [int(m.MESSAGE_ID) for m in msgs] == [r["msg_id"] for r in rows]
    frames = [m for m in msgs if isinstance(m, FrameOfData)]
    assert [f.frame_number for f in frames] == list(range(162734, 163252))  # 518 contiguous frames
    replies = {}
    for row, msg in zip(rows, msgs, strict=True):
        if isinstance(msg, Request):
            pending = msg.command.split(",")[0]
        elif isinstance(msg, Response | Unrecognized) and row["msg_id"] in (3, 100):
            replies[pending] = msg
    assert replies["FrameRate"].as_float() == 120.0
    assert replies["AnalogSamplesPerMocapFrame"].as_int() == 0
    assert replies["TestRequest"].MESSAGE_ID == MessageId.UNRECOGNIZED_REQUEST


def _parse_sample_client(text: str) -> dict[int, dict]:
    """The official NatNet 3.0 SampleClient's printout, frame by frame. Other threads' lines are interleaved
    mid-frame in the capture, so unknown lines are skipped rather than ending the frame."""
    frames, cur, rb = {}, None, None
    num = r"(-?\d+\.\d+)"
    for line in text.splitlines():
        if m := re.match(r"FrameID : (\d+)", line):
            cur = frames[int(m[1])] = {"other": [], "bodies": [], "labeled": []}
        elif cur is None:
            continue
        elif m := re.match(rf"Timestamp : {num}", line):
            cur["timestamp"] = float(m[1])
        elif m := re.match(rf"Software latency : {num}", line):
            cur["software_ms"] = float(m[1])
        elif m := re.match(rf"System latency : {num}", line):
            cur["system_ms"] = float(m[1])
        elif m := re.match(r"Timecode : (\S+)", line):
            cur["timecode"] = m[1]
        elif m := re.match(r"Other Markers \[Count=(\d+)\]", line):
            cur["n_other"] = int(m[1])
        elif m := re.match(rf"Other Marker \d+ : {num}\t{num}\t{num}", line):
            cur["other"].append(tuple(map(float, m.groups())))
        elif m := re.match(r"Rigid Body \[ID=(\d+)\s+Error=(\S+)\s+Valid=(\d)\]", line):
            rb = {"id": int(m[1]), "error": float(m[2]), "valid": int(m[3])}
            cur["bodies"].append(rb)
        elif rb is not None and re.match(rf"\t{num}\t", line):
            rb["pose"] = tuple(float(v) for v in line.split())
        elif m := re.match(r"Labeled Markers \[Count=(\d+)\]", line):
            cur["n_labeled"] = int(m[1])
        elif m := re.match(r"Labeled Marker \[ModelID=(\d+), MarkerID=(\d+), Occluded=(\d), PCSolved=(\d), "
                           rf"ModelSolved=(\d)\] \[size={num}\] \[pos={num},{num},{num}\]", line):
            cur["labeled"].append(tuple(int(v) for v in m.groups()[:5]) + tuple(float(v) for v in m.groups()[5:]))
    return frames


def test_recorded_frames_match_the_official_sample_client_printout():
    printed = _parse_sample_client((MJE / "raw/SampleClient_output.txt").read_text())
    assert len(printed) == 251 and min(printed) == 162734 and max(printed) == 162984
    info = decode(bytes.fromhex(_session()[1]["payload_hex"]))
    frames = {f.frame_number: f for f in (decode(bytes.fromhex(r["payload_hex"]), V3) for r in _session()
                                          if r["msg_id"] == 7)}
    tol = 0.005 + 1e-6  # the printout has 2 decimals
    hz = info.high_res_clock_frequency_hz
    for number, p in printed.items():
        f = frames[number]
        assert f.timestamp_s == pytest.approx(p["timestamp"], abs=tol)
        assert (f.transmit_ticks - f.camera_data_received_ticks) / hz * 1e3 == pytest.approx(p["software_ms"], abs=tol)
        assert (f.transmit_ticks - f.camera_mid_exposure_ticks) / hz * 1e3 == pytest.approx(p["system_ms"], abs=tol)
        assert p["timecode"] == "{:02d}:{:02d}:{:02d}:{:02d}.{}".format(*f.timecode_hmsf, f.timecode_subframe)
        assert p["n_other"] == len(f.unlabeled_markers_m) == len(p["other"])
        for got, want in zip(f.unlabeled_markers_m, p["other"], strict=True):
            assert got == pytest.approx(want, abs=tol)
        assert [b["id"] for b in p["bodies"]] == [b.id for b in f.rigid_bodies]
        for got, want in zip(f.rigid_bodies, p["bodies"], strict=True):
            assert got.tracking_valid == bool(want["valid"])
            assert got.mean_error_m == pytest.approx(want["error"], abs=tol)
            assert got.position_m + got.orientation == pytest.approx(want["pose"], abs=tol)
        assert p["n_labeled"] == len(f.labeled_markers) == len(p["labeled"])
        for got, want in zip(f.labeled_markers, p["labeled"], strict=True):
            flags = (got.model_id, got.marker_id, got.occluded, got.point_cloud_solved, got.model_solved)
            assert flags == want[:5]
            assert (got.size_m, *got.position_m) == pytest.approx(want[5:], abs=tol)


# ------------------------------------------------------------------ byte-for-byte re-encoding
@pytest.mark.parametrize("name,data,version", _all_fixture_packets(), ids=lambda x: x if isinstance(x, str) else "")
def test_fixture_reencodes_byte_for_byte(name, data, version):
    assert encode(decode(data, version), version) == data


def test_recorded_session_reencodes_byte_for_byte():
    for row in _session():
        data = bytes.fromhex(row["payload_hex"])
        assert encode(decode(data, V3), V3) == data, row["index"]


# ------------------------------------------------------------------ 4.x (and 2.x) layouts, independently
def _hdr(message_id: int, body: bytes) -> bytes:
    return struct.pack("<HH", message_id, len(body)) + body


def _sized(count: int, body: bytes) -> bytes:
    """NatNet 4.1 section: i32 count, i32 byte count of what follows (PacketClient ``UnpackDataSize``)."""
    return struct.pack("<ii", count, len(body)) + body


RB_41 = struct.pack("<i3f4ffh", 3, 0.5, 0.25, -1.0, 0.0, 0.0, 0.0, 1.0, 0.001, 1)   # id pos quat err params


def test_hand_packed_natnet_41_frame_decodes():
    """Every section of a 4.1 frame packed by hand from PacketClient.cpp 4.3, not by our encoder."""
    body = struct.pack("<i", 42)
    body += _sized(1, b"ms\0" + struct.pack("<i3f", 1, 1.0, 2.0, 3.0))
    body += _sized(1, struct.pack("<3f", 4.0, 5.0, 6.0))
    body += _sized(1, RB_41)
    body += _sized(1, struct.pack("<ii", 5, 1) + RB_41)                                   # skeleton: id, bones
    asset_marker = struct.pack("<i3ffhf", 7, 0.5, 0.5, 0.5, 0.02, 0x0A, 0.0005)
    body += _sized(1, struct.pack("<ii", 9, 1) + RB_41 + struct.pack("<i", 1) + asset_marker)
    body += _sized(1, struct.pack("<i3ffhf", 2 << 16 | 1, 0.1, 0.2, 0.3, 0.02, 0x0B, 0.00025))
    body += _sized(1, struct.pack("<iii2f", 1, 1, 2, 10.0, 11.0))                        # force plate
    body += _sized(0, b"")                                                               # devices
    body += struct.pack("<IIdQQQIIhi", 0x01020304, 5, 12.5, 100, 200, 300, 1700000000, 2**31, 1, 0)
    f = decode(_hdr(7, body), (4, 1))
    assert f.frame_number == 42 and f.marker_sets == [MarkerSetData("ms", [(1.0, 2.0, 3.0)])]
    assert f.unlabeled_markers_m == [(4.0, 5.0, 6.0)]
    assert f.rigid_bodies == [RigidBodyData(3, (0.5, 0.25, -1.0), (0.0, 0.0, 0.0, 1.0), pytest.approx(0.001), 1)]
    assert f.skeletons[0].id == 5 and f.skeletons[0].bones == f.rigid_bodies
    assert f.assets[0].id == 9 and f.assets[0].rigid_bodies == f.rigid_bodies
    assert f.assets[0].markers[0].params == 0x0A and f.assets[0].markers[0].id == 7
    (m,) = f.labeled_markers
    assert (m.model_id, m.marker_id, m.occluded, m.residual_m) == (2, 1, True, pytest.approx(0.00025))
    assert f.force_plates == [AnalogData(1, [[10.0, 11.0]])] and f.devices == []
    assert f.timecode_hmsf == (1, 2, 3, 4) and f.timecode_subframe == 5 and f.timestamp_s == 12.5
    assert (f.camera_mid_exposure_ticks, f.camera_data_received_ticks, f.transmit_ticks) == (100, 200, 300)
    assert (f.precision_timestamp_s, f.precision_timestamp_frac, f.params) == (1700000000, 2**31, 1)
    assert encode(f, (4, 1)) == _hdr(7, body)


@pytest.mark.parametrize("minor", [1, 2])
def test_hand_packed_natnet_4x_modeldef_decodes(minor):
    """4.1 adds a byte count per description, 4.2 a rotation offset per rigid body (PacketClient 4.3)."""
    rb = b"bone\0" + struct.pack("<ii3f", 3, -1, 0.0, 0.0, 0.0)
    rb += struct.pack("<4f", 0.0, 0.0, 0.0, 1.0) if minor >= 2 else b""
    rb += struct.pack("<i3fi", 1, 0.01, 0.02, 0.03, 0) + b"m1\0"                        # offsets, labels, names
    ms = b"set\0" + struct.pack("<i", 1) + b"m1\0"
    body = struct.pack("<i", 2) + struct.pack("<ii", 1, len(rb)) + rb + struct.pack("<ii", 0, len(ms)) + ms
    defs = decode(_hdr(5, body), (4, minor))
    (b,) = defs.rigid_bodies
    assert (b.name, b.id, b.parent_id) == ("bone", 3, -1)
    assert b.rotation_offset == ((0.0, 0.0, 0.0, 1.0) if minor >= 2 else None)
    assert b.markers == [RigidBodyMarkerDescription(pytest.approx((0.01, 0.02, 0.03)), 0, "m1")]
    assert defs.marker_sets == [MarkerSetDescription("set", ["m1"])]
    assert encode(defs, (4, minor)) == _hdr(5, body)


def _full_frame() -> FrameOfData:
    """Every field set, with values exact in float32 so any version round-trips exactly."""
    rb = RigidBodyData(3, (0.5, 0.25, -1.0), (0.0, 0.5, 0.5, 0.5), 0.125, 1,
                       [RigidBodyMarker((1.0, 2.0, 3.0), 1, 0.0625)])
    return FrameOfData(
        7, [MarkerSetData("a", [(1.0, 2.0, 3.0)]), MarkerSetData("all", [])], [(0.5, 0.5, 0.5)], [rb],
        [SkeletonData(4, [rb])],
        [AssetData(9, [RigidBodyData(1, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0), 0.25, 1)],
                   [AssetMarkerData(2, (1.0, 1.0, 1.0), 0.5, 0x0A, 0.25)])],
        [LabeledMarker(3 << 16 | 1, (0.25, 0.5, 0.75), 0.0625, 0x0B, 0.125)],
        [AnalogData(1, [[1.0, 2.0], [3.0]])], [AnalogData(2, [[4.0]])],
        latency=1.5, timecode=0x01020304, timecode_subframe=2, timestamp_s=12.5, camera_mid_exposure_ticks=10,
        camera_data_received_ticks=20, transmit_ticks=30, precision_timestamp_s=40, precision_timestamp_frac=50,
        params=2)


VERSIONS = [(2, 5), (2, 6), (2, 7), (2, 9), (2, 10), (2, 11), (3, 0), (3, 1), (4, 0), (4, 1), (4, 2), (4, 3)]


@pytest.mark.parametrize("version", VERSIONS, ids=lambda v: f"{v[0]}.{v[1]}")
def test_every_version_writes_and_reads_its_own_fields(version):
    full, (major, minor) = _full_frame(), version
    data = encode(full, version)
    f = decode(data, version)
    assert encode(f, version) == data
    at = (major, minor).__ge__
    assert (f.frame_number, f.marker_sets, f.unlabeled_markers_m) == (7, full.marker_sets, [(0.5, 0.5, 0.5)])
    body = f.rigid_bodies[0]
    assert (body.id, body.position_m, body.orientation) == (3, (0.5, 0.25, -1.0), (0.0, 0.5, 0.5, 0.5))
    assert body.markers == (full.rigid_bodies[0].markers if major < 3 else None)
    assert body.params == (1 if at((2, 6)) else None)
    assert [s.id for s in f.skeletons] == ([4] if at((2, 1)) else [])
    assert all(s.bones == [body] for s in f.skeletons)  # bones are rigid bodies, version for version
    assert f.assets == (full.assets if at((4, 1)) else [])
    m = f.labeled_markers[0]
    assert (m.params, m.residual_m) == ((0x0B if at((2, 6)) else None), (0.125 if major >= 3 else None))
    assert f.force_plates == (full.force_plates if at((2, 9)) else [])
    assert f.devices == (full.devices if at((2, 11)) else [])
    assert f.latency == (1.5 if major < 3 else None)
    assert f.timestamp_s == (12.5 if at((2, 6)) else None)
    assert f.transmit_ticks == (30 if major >= 3 else None)
    assert f.precision_timestamp_s == (40 if at((4, 1)) else None)


def _all_descriptions() -> ModelDefinitions:
    rb = RigidBodyDescription("rb", 1, -1, (0.0, 0.5, 0.0), (0.0, 0.0, 0.0, 1.0),
                              [RigidBodyMarkerDescription((0.25, 0.0, 0.0), 0, "m1")])
    return ModelDefinitions([
        MarkerSetDescription("set", ["m1", "m2"]), rb, SkeletonDescription("sk", 2, [rb]),
        ForcePlateDescription(3, "FP-1", 0.5, 0.75, (0.0, 0.0, 0.0), [[float(i)] * 12 for i in range(12)],
                              [(0.0, 0.0, 0.0)] * 4, 1, 2, ["Fx", "Fy"]),
        DeviceDescription(4, "daq", "SN1", 1, 2, ["ai0"]),
        CameraDescription("cam", (1.0, 2.0, 3.0), (0.0, 0.0, 0.0, 1.0)),
        AssetDescription("asset", 1, 5, [rb], [AssetMarkerDescription("am", 1, (0.0, 0.0, 0.0), 0.5, 1)]),
    ])


@pytest.mark.parametrize("version", [(3, 0), (4, 0), (4, 1), (4, 2)], ids=lambda v: f"{v[0]}.{v[1]}")
def test_every_description_type_round_trips(version):
    defs = _all_descriptions()
    data = encode(defs, version)
    back = decode(data, version)
    assert encode(back, version) == data
    assert [type(d) for d in back.descriptions] == [type(d) for d in defs.descriptions]
    assert back.force_plates == defs.force_plates and back.devices == defs.devices and back.cameras == defs.cameras
    body = back.rigid_bodies[0]
    assert body.rotation_offset == ((0.0, 0.0, 0.0, 1.0) if version >= (4, 2) else None)
    assert body.markers[0].name == ("m1" if version >= (4, 0) else None)


def test_unknown_description_type_is_skipped_from_41_and_stops_before():
    rb = encode(ModelDefinitions([RigidBodyDescription("rb", 1)]), (4, 1))[4:]
    body = struct.pack("<i", 2) + struct.pack("<ii", 99, 3) + b"xyz" + rb[4:]
    defs = decode(_hdr(5, body), (4, 1))
    assert defs.descriptions[0] == UnknownDescription(99, b"xyz") and defs.rigid_bodies[0].name == "rb"
    assert encode(defs, (4, 1)) == _hdr(5, body)
    with pytest.raises(NatNetDecodeError, match="unknown description type 99") as e:
        decode(_hdr(5, struct.pack("<ii", 1, 99)), (3, 0))
    assert (e.value.offset, e.value.field) == (8, "descriptions[0].type")


def test_connect_variants_real_clients_send():
    python_sdk = bytearray(270)                       # NatNetClient.py 4.3: "Ping", options at 264, + NUL
    python_sdk[0:4], python_sdk[265:269] = b"Ping", bytes((4, 2, 0, 0))
    m = decode(_hdr(0, bytes(python_sdk) + b"\0"))
    assert (m.name, m.subscribed_data_only, m.bitstream_version, m.extra) == ("Ping", False, (4, 2, 0, 0), b"\0\0")
    assert encode(m) == _hdr(0, bytes(python_sdk) + b"\0")
    for short in (b"", b"Ping\0"):                    # PacketClient 4.3 sends nothing, PyPI natnet "Ping"
        m = decode(_hdr(0, short))
        assert m.short_payload == short and encode(m) == _hdr(0, short)
    keepalive = decode(b"\x0a\x00\x00\x00\x00")        # natnetsdk: 5 bytes, nDataBytes 0
    assert keepalive == Empty(MessageId.KEEPALIVE)


def test_request_and_response_forms():
    assert decode(_hdr(2, b"Bitstream,4.1\0")) == Request("Bitstream,4.1")
    assert Response(struct.pack("<f", 120.0)).as_float() == 120.0
    assert Response(b"Bitstream,4.1.0.0\0").text == "Bitstream,4.1.0.0"


# ------------------------------------------------------------------ errors: one clear message, where and what
def test_truncation_names_offset_and_field():
    frame = _read(MJE / "mocapframe_packet_v3.bin")
    with pytest.raises(NatNetDecodeError, match="header says 332 payload bytes") as e:
        decode(frame[:100], V3)
    assert (e.value.offset, e.value.field, e.value.message_id) == (2, "nDataBytes", 7)
    cut = _hdr(7, frame[4:100])
    with pytest.raises(NatNetDecodeError) as e:
        decode(cut, V3)
    assert e.value.offset <= 100 and e.value.field.startswith("rigid_bodies")
    assert f"at byte {e.value.offset} (field {e.value.field})" in str(e.value)


def test_wrong_version_and_missing_version_are_errors_not_crashes():
    frame = _read(MJE / "mocapframe_packet_v3.bin")
    for version in [(4, 1), (2, 5), (2, 10)]:
        with pytest.raises(NatNetDecodeError):
            decode(frame, version)
    with pytest.raises(NatNetDecodeError, match="version is unknown"):
        decode(frame)


def test_implausible_count_is_named():
    frame = bytearray(_read(MJE / "mocapframe_packet_v3.bin"))
    frame[12:16] = struct.pack("<i", 10**6)            # the unlabeled-marker count
    with pytest.raises(NatNetDecodeError, match="count 1000000 needs at least 12000000 bytes") as e:
        decode(bytes(frame), V3)
    assert (e.value.offset, e.value.field) == (12, "unlabeled_markers.count")


def test_section_size_mismatch_is_reported():
    data = bytearray(encode(_full_frame(), (4, 1)))
    data[12:16] = struct.pack("<i", struct.unpack_from("<i", data, 12)[0] + 1)  # marker set byte count
    with pytest.raises(NatNetDecodeError, match="section declares"):
        decode(bytes(data), (4, 1))


# ------------------------------------------------------------------ fuzz: mutated real packets never escape
def _mutate(rng: random.Random, data: bytes) -> bytes:
    b = bytearray(data)
    kind = rng.randrange(6)
    if kind == 0:                                       # truncated datagram, header untouched
        return bytes(b[:rng.randrange(len(b))])
    if kind == 1 and len(b) > 4:                        # truncated, header fixed to match: fails deep inside
        cut = rng.randrange(4, len(b))
        return struct.pack("<HH", b[0] | b[1] << 8, cut - 4) + bytes(b[4:cut])
    if kind == 2:                                       # flipped bytes
        for _ in range(rng.randint(1, 8)):
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
    elif kind == 3 and len(b) >= 8:                     # a field overwritten with a random i32 (counts, sizes)
        at = rng.randrange(4, len(b) - 3)
        b[at:at + 4] = struct.pack("<i", rng.choice([-1, 0, 1, 2**31 - 1, -(2**31), rng.randrange(-1000, 1000)]))
    elif kind == 4 and len(b) > 4:                      # bytes inserted or removed, header kept consistent
        at = rng.randrange(4, len(b))
        b[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 6))) if rng.random() < 0.5 else b""
        if rng.random() < 0.5:
            del b[at:at + rng.randint(1, 6)]
        b[2:4] = struct.pack("<H", min(len(b) - 4, 65535))
    elif kind == 5:                                     # garbage
        return bytes(rng.randrange(256) for _ in range(rng.randrange(0, 64)))
    return bytes(b)


def test_fuzzed_packets_never_raise_and_are_counted():
    rng = random.Random(20261202)
    seeds = [(data, version) for _, data, version in _all_fixture_packets()]
    seeds += [(bytes.fromhex(r["payload_hex"]), V3) for r in _session()[:40]]
    seeds += [(encode(_full_frame(), v), v) for v in [(4, 1), (4, 2), (2, 11)]]
    seeds += [(encode(_all_descriptions(), v), v) for v in [(4, 1), (4, 2), (3, 0)]]
    stats, errors, n = DecodeStats(), 0, 6000
    for _ in range(n):
        data, version = rng.choice(seeds)
        result = decode_packet(_mutate(rng, data), rng.choice([version, version, V3, (4, 1), None]), stats)
        if isinstance(result, DecodeError):
            errors += 1
            assert "decoder failure" not in str(result), str(result)  # only typed, located errors
            assert result.error.offset >= 0 and result.error.field
    assert stats.packets == n and stats.errors == errors
    assert 0.3 * n < errors < n  # most mutations break a packet; some (flips in floats) decode fine
