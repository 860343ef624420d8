"""The Motive twin and the NatNet client together over loopback: handshake, model definitions, frames at
the camera rate carrying the plant's forward kinematics, requests, staleness, malformed datagrams,
bitstream versions and multicast."""

from __future__ import annotations

import socket
import struct
import time
from dataclasses import replace

import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from uartlab.drivers.natnet import decode, encode
from uartlab.drivers.natnet.client import NatNetClient, NatNetError
from uartlab.drivers.natnet.packets import (
    MARKER_OCCLUDED,
    Connect,
    EchoRequest,
    EchoResponse,
    MessageId,
    ServerInfo,
)
from uartlab.drivers.twins.motive import BONES, MARKER_SET, MotiveTwin, quaternions_xyzw
from uartlab.drivers.twins.plant import Plant, PlantConfig

RATE_HZ = 100.0  # PlantConfig default: Flex V100:R2


@pytest.fixture(scope="module")
def plant() -> Plant:
    """No clock: the plant holds still unless a test moves it, so every frame can be checked exactly."""
    return Plant(PlantConfig())


@pytest.fixture
def twin(plant):
    with MotiveTwin(plant) as motive:
        yield motive


@pytest.fixture
def client(twin):
    with NatNetClient(command_port=twin.command_port, stale_after_s=0.15) as c:
        yield c


def _frames(client: NatNetClient, n: int, timeout_s: float = 2.0):
    out = []
    deadline = time.monotonic() + timeout_s
    while len(out) < n and time.monotonic() < deadline:
        rx = client.get_frame(0.2)
        if rx is not None:
            out.append(rx)
    assert len(out) == n, f"got {len(out)} of {n} frames; stats {client.stats}"
    return out


def _assert_matches_plant(frame, plant: Plant) -> None:
    poses = plant.bone_poses()
    assert [b.id for b in frame.rigid_bodies] == [1, 2, 3, 4]
    for body, (_, position, rotation) in zip(frame.rigid_bodies, poses, strict=True):
        assert body.tracking_valid
        np.testing.assert_allclose(body.position_m, position, atol=1e-6)
        np.testing.assert_allclose(Rotation.from_quat(body.orientation).as_matrix(), rotation, atol=1e-6)
        assert np.linalg.norm(body.orientation) == pytest.approx(1.0, abs=1e-6)
    assert frame.timestamp_s == plant.time_s


def test_handshake_server_info_and_model_definitions(twin, client, plant):
    info = client.server_info
    assert (info.name, info.app_version, info.natnet_version) == ("Motive", (3, 1, 0, 0), (4, 1, 0, 0))
    assert (info.data_port, info.is_multicast, info.high_res_clock_frequency_hz) == (twin.data_port, False, 10**7)
    assert client.version == (4, 1, 0, 0) and twin.clients == [client.data_address]
    defs = client.request_model_definitions()
    assert [(b.name, b.id) for b in defs.rigid_bodies] == list(zip(BONES, (1, 2, 3, 4), strict=True))
    (markers,) = defs.marker_sets
    assert markers.name == MARKER_SET and markers.marker_names == [m.name for m in plant.markers]
    # each body's marker offsets put its markers where the plant's are (to within the marker noise)
    frame = _frames(client, 1)[0].frame
    by_id = {m.id: np.array(m.position_m) for m in frame.labeled_markers}
    for body, rb in zip(defs.rigid_bodies, frame.rigid_bodies, strict=True):
        assert [mk.name for mk in body.markers] == [n for n in markers.marker_names if n.startswith(
            {"metacarpal": "MC", "proximal": "PP", "middle": "MP", "distal": "DP"}[body.name])]
        R = Rotation.from_quat(rb.orientation).as_matrix()
        for k, mk in enumerate(body.markers, start=1):
            expected = np.array(rb.position_m) + R @ np.array(mk.offset_m)
            np.testing.assert_allclose(by_id[body.id << 16 | k], expected, atol=5 * plant.config.marker_noise_m)


def test_frames_at_the_camera_rate_carry_the_plants_kinematics(client, plant):
    got = _frames(client, 40)
    numbers = [rx.frame.frame_number for rx in got]
    assert numbers == list(range(numbers[0], numbers[0] + 40))
    rate = (len(got) - 1) / (got[-1].host_time_s - got[0].host_time_s)
    assert rate == pytest.approx(RATE_HZ, rel=0.15)
    for rx in got:
        _assert_matches_plant(rx.frame, plant)
        f = rx.frame
        assert len(f.labeled_markers) == len(plant.markers) and not any(m.occluded for m in f.labeled_markers)
        assert f.marker_sets[0].name == MARKER_SET and len(f.unlabeled_markers_m) == len(plant.markers)
        assert all(0 < b.mean_error_m < 5 * plant.config.marker_noise_m for b in f.rigid_bodies)
        assert f.transmit_ticks > f.camera_data_received_ticks > f.camera_mid_exposure_ticks
    assert client.stats.gaps == client.stats.malformed == client.stats.out_of_order == 0


def test_bone_orientations_are_the_rotations_quaternions_with_qw_not_negative():
    """Every branch of the matrix-to-quaternion conversion, half-turns included, against scipy's."""
    half_turns = [Rotation.from_rotvec(np.pi * axis).as_matrix() for axis in np.eye(3)]
    matrices = [*Rotation.random(500, random_state=3).as_matrix(), *half_turns, np.eye(3)]
    got = np.array(quaternions_xyzw(matrices))
    want = Rotation.from_matrix(np.stack(matrices)).as_quat()
    want *= np.where(want[:, 3:] < 0, -1.0, 1.0)
    assert (got[:, 3] >= 0).all()
    assert np.minimum(abs(got - want).max(axis=1), abs(got + want).max(axis=1)).max() < 1e-12  # qw = 0: either sign


def test_frames_follow_the_plant_when_it_moves(client, plant):
    _frames(client, 2)
    plant.set_torque(0, True)                              # pull FDP: the finger flexes
    plant.set_goal_angle(0, plant.servo_state(0).angle_rad + 0.3)
    before = plant.bone_poses()[3][1].copy()
    plant.advance(0.2)
    assert np.linalg.norm(plant.bone_poses()[3][1] - before) > 1e-3
    deadline = time.monotonic() + 2.0
    while (rx := client.get_frame(0.5)) is not None and rx.frame.timestamp_s != plant.time_s:
        assert time.monotonic() < deadline
    _assert_matches_plant(rx.frame, plant)


def test_requests_real_clients_send(client):
    assert client.frame_rate_hz() == RATE_HZ                 # the camera rate, as a float (real capture: 120.0)
    assert client.request("AnalogSamplesPerMocapFrame").as_int() == 0
    assert client.request("CurrentMode").as_int() == 0       # Live
    assert client.request("Bitstream").text == "Bitstream,4.1.0.0"
    for command in ("TimelinePlay", "TimelineStop", "SetPlaybackTakeName,trial_01", "SetPlaybackCurrentFrame,0"):
        assert client.request(command).as_int() == 0
    with pytest.raises(NatNetError, match="not recognised"):
        client.request("TestRequest")                        # Motive answers this one with 100, too
    assert client.request("StartRecording").as_int() == 0
    # the recording bit, once the frames queued before the request (more of them on a loaded machine) are past
    deadline = time.monotonic() + 5.0
    while not _frames(client, 1)[0].frame.params & 1:
        assert time.monotonic() < deadline, "no frame with the recording bit within 5 s of StartRecording"
    assert all(rx.frame.params & 1 for rx in _frames(client, 3))
    client.request("StopRecording")


def test_bitstream_30_on_a_41_twin(twin):
    with NatNetClient(command_port=twin.command_port, version=(3, 0)) as c:
        assert c.server_info.natnet_version == (4, 1, 0, 0) and c.version == (3, 0, 0, 0)
        assert c.request("Bitstream").text == "Bitstream,3.0.0.0"
        f = _frames(c, 3)[-1].frame
        assert f.precision_timestamp_s is None and f.rigid_bodies[0].tracking_valid and c.stats.malformed == 0
        c.set_bitstream_version((4, 1))
        time.sleep(0.05)
        c.drain()
        assert _frames(c, 2)[-1].frame.precision_timestamp_s == 0
        with pytest.raises(NatNetError, match="refused"):
            c.set_bitstream_version((5, 0))                  # newer than the server speaks


def test_natnet_30_twin_is_detected_from_server_info(plant):
    with MotiveTwin(plant, natnet_version=(3, 0, 0, 0)) as twin, NatNetClient(command_port=twin.command_port) as c:
        assert c.server_info.app_version == (2, 1, 0, 0) and c.version == (3, 0, 0, 0)
        _assert_matches_plant(_frames(c, 2)[-1].frame, plant)
        assert c.request("Bitstream,4.1").as_int() != 0      # Motive 2.x cannot change its stream


def test_natnet_2_bodies_carry_their_markers_as_motive_sends_them(plant):
    """A NatNet 2.x frame lists each body's markers in the body - the labeled ones' positions, ids within the
    body, sizes - as the Motive 1.7, 1.9 and 2.10 captures do; 3.0 moved them to the model definitions."""
    twin = MotiveTwin(plant, natnet_version=(2, 10, 0, 0))   # not started: one frame, built and encoded
    frame = twin.build_frame()
    data = encode(frame, twin.natnet_version)
    for body in frame.rigid_bodies:
        labeled = [m for m in frame.labeled_markers if m.model_id == body.id]
        n = len(labeled)
        expected = (struct.pack("<i3f4fi", body.id, *body.position_m, *body.orientation, n)
                    + b"".join(struct.pack("<3f", *m.position_m) for m in labeled)
                    + struct.pack(f"<{n}i{n}ffh", *(m.marker_id for m in labeled), *(m.size_m for m in labeled),
                                  body.mean_error_m, body.params))
        assert n == 3 and expected in data
    bare = replace(frame, rigid_bodies=[replace(b, markers=None) for b in frame.rigid_bodies])
    assert all(encode(frame, v) == encode(bare, v) for v in ((3, 0), (4, 1)))  # the 3.0+ streams are as before


def test_time_scale_multiplies_the_frame_rate(plant):
    with MotiveTwin(plant, time_scale=2.0) as twin, NatNetClient(command_port=twin.command_port) as c:
        got = _frames(c, 40)
        rate = (len(got) - 1) / (got[-1].host_time_s - got[0].host_time_s)
        assert rate == pytest.approx(2 * RATE_HZ, rel=0.2)
        assert c.frame_rate_hz() == RATE_HZ                  # the cameras' rate is unchanged


def test_a_stream_that_stops_is_stale_and_the_gap_is_counted(twin, client):
    _frames(client, 3)
    assert not client.is_stale
    events, gaps = client.stats.stale_events, client.stats.gaps
    twin.pause()
    time.sleep(0.35)
    assert client.is_stale and client.seconds_since_last_frame > 0.3
    assert client.stats.stale_events == events + 1
    client.drain()
    twin.resume()
    _frames(client, 1)
    assert not client.is_stale
    assert client.stats.gaps - gaps >= 20  # the cameras kept counting: ~35 frames never arrived


def test_malformed_datagrams_are_counted_and_the_stream_goes_on(client):
    _frames(client, 2)
    good = encode(client.latest().frame, client.version)
    bad = [b"", b"\x07", good[:40], good[:4] + good[4:60], struct.pack("<HH", 7, 60) + good[4:64],
           b"\xff" * 300, good[:-1] + b"\x01\x02", good.replace(b"uart_finger", b"uart_finger\x7f", 1)]
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as attacker:
        for datagram in bad:
            attacker.sendto(datagram, client.data_address)
    time.sleep(0.1)
    before = client.latest().frame.frame_number
    client.drain()
    after = [rx.frame.frame_number for rx in _frames(client, 5)]
    assert after == list(range(before + 1, before + 6))     # the stream went on, nothing lost
    assert client.stats.malformed == len(bad) - 1            # the empty datagram is read as nothing at all
    assert "at byte" in client.stats.last_error


def test_frames_from_any_host_but_the_server_are_dropped_unread(client):
    """Another host on the Motive network (here 127.0.0.2, the server being 127.0.0.1) sends a well-formed
    frame with other marker positions: it must never reach the joint angles."""
    _frames(client, 2)
    forged = client.latest().frame
    forged.frame_number += 10_000
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as stranger:
        stranger.bind(("127.0.0.2", 0))
        for _ in range(3):
            stranger.sendto(encode(forged, client.version), client.data_address)
    deadline = time.monotonic() + 2.0
    while client.stats.foreign < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert client.stats.foreign == 3
    client.drain()
    assert all(rx.frame.frame_number < forged.frame_number for rx in _frames(client, 3))
    assert client.stats.malformed == 0


def test_keepalive_holds_the_subscription_and_silence_drops_it(plant):
    with MotiveTwin(plant, client_timeout_s=0.6) as twin, \
            NatNetClient(command_port=twin.command_port, keepalive_s=0.1) as c, \
            socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as raw:
        raw.settimeout(1.0)
        raw.bind(("127.0.0.1", 0))
        raw.sendto(encode(Connect("raw", (1, 0, 0, 0), (3, 0, 0, 0))), ("127.0.0.1", twin.command_port))
        assert isinstance(decode(raw.recv(65536)), ServerInfo)
        raw.sendto(encode(EchoRequest(1234)), ("127.0.0.1", twin.command_port))
        while (echo := decode(raw.recv(65536), (3, 0))).MESSAGE_ID == MessageId.FRAMEOFDATA:
            pass
        assert isinstance(echo, EchoResponse) and echo.client_time == 1234
        assert len(twin.clients) == 2
        time.sleep(1.0)                                      # the raw client says nothing more
        assert twin.clients == [c.data_address] and not c.is_stale


def _loopback_multicast_works(group: str) -> str | None:
    """None if a datagram sent to the group on 127.0.0.1 comes back to a joined socket, else why not."""
    rx, tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM), socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        with rx, tx:
            rx.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            rx.bind(("", 0))
            rx.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
                          socket.inet_aton(group) + socket.inet_aton("127.0.0.1"))
            rx.settimeout(0.5)
            tx.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton("127.0.0.1"))
            tx.sendto(b"probe", (group, rx.getsockname()[1]))
            return None if rx.recv(16) == b"probe" else "probe came back garbled"
    except OSError as e:
        return f"multicast on the loopback interface is not available here: {e}"


def test_multicast_stream(plant):
    group = "239.255.42.99"
    reason = _loopback_multicast_works(group)
    if reason:
        pytest.skip(reason)
    with MotiveTwin(plant, multicast_group=group) as twin, \
            NatNetClient(command_port=twin.command_port, data_port=twin.data_port, multicast=group) as c:
        assert c.server_info.is_multicast and c.server_info.multicast_group == group
        assert len(twin.clients) == 1                        # connected for commands; frames go to the group
        got = _frames(c, 10)
        numbers = [rx.frame.frame_number for rx in got]
        assert numbers == list(range(numbers[0], numbers[0] + 10))
        _assert_matches_plant(got[-1].frame, plant)
        assert c.frame_rate_hz() == RATE_HZ
        with pytest.raises(NatNetError, match="refused"):
            c.set_bitstream_version((3, 0))                  # only unicast clients may choose


def test_occluded_markers_are_flagged_and_untracked_bones_say_so():
    plant = Plant(PlantConfig(marker_dropout=0.3, seed=3))
    with MotiveTwin(plant) as twin, NatNetClient(command_port=twin.command_port) as c:
        frames = [rx.frame for rx in _frames(c, 20)]
    occluded = [m for f in frames for m in f.labeled_markers if m.occluded]
    assert occluded and all(m.params == MARKER_OCCLUDED | 0x08 and m.residual_m == 0 for m in occluded)
    for f in frames:
        for body in f.rigid_bodies:
            visible = sum(1 for m in f.labeled_markers if m.model_id == body.id and not m.occluded)
            assert body.tracking_valid == (visible >= 3)
            assert (body.mean_error_m == 0) == (not body.tracking_valid)
        assert len(f.unlabeled_markers_m) == sum(not m.occluded for m in f.labeled_markers)


def test_connect_fails_clearly_without_a_server():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as silent:
        silent.bind(("127.0.0.1", 0))                       # a port that swallows datagrams and never answers
        c = NatNetClient(command_port=silent.getsockname()[1])
        with pytest.raises(NatNetError, match=r"did not answer NAT_CONNECT within 0.3 s"):
            c.connect(timeout_s=0.3)
