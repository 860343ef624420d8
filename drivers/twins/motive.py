"""Motive twin: a NatNet server on UDP that streams the plant's finger as OptiTrack Motive would.

    with MotiveTwin(plant) as motive:            # ephemeral ports on 127.0.0.1, NatNet 4.1, unicast
        client = NatNetClient(command_port=motive.command_port)

Behaviour and its sources (shared/device-notes.md, "OptiTrack NatNet"; the real captures in fixtures/natnet):
- CONNECT/DISCOVERY -> SERVERINFO, REQUEST_MODELDEF -> MODELDEF, ECHOREQUEST -> ECHORESPONSE, KEEPALIVE,
  REQUEST strings ("FrameRate" -> f32, "Bitstream,4.1" ...); replies go to the sender, as Motive's do.
- Frames at plant.config.mocap_rate_hz x ``time_scale``: unicast to every client that connected (and
  keeps talking), or - with a multicast group - to group:data_port only (Motive does one or the other).
- One rigid body per bone (ids 1..4), a marker set "uart_finger"; marker ids are body id << 16 | n, as
  Motive numbers rigid-body markers. An occluded marker (NaN from the plant) is still sent, flagged
  occluded, at its last seen position (as mocapframe_packet_occluded_v3.bin: occluded bit, filled-in
  position); a bone with fewer than ``min_markers`` visible is untracked: params 0, error 0, last pose
  (as the 2.10 capture's untracked body). Unicast clients of a NatNet >= 4 twin may choose their stream
  version (CONNECT options or "Bitstream,x.y"), like Motive 3.
"""

from __future__ import annotations

import math
import socket
import struct
import threading
import time
from dataclasses import dataclass

import numpy as np
from uartlab.drivers.natnet import packets as nn
from uartlab.drivers.natnet.decode import decode_packet
from uartlab.drivers.natnet.descriptions import MarkerSetDescription, RigidBodyDescription, RigidBodyMarkerDescription
from uartlab.drivers.natnet.encode import encode
from uartlab.drivers.natnet.packets import FrameOfData, MessageId, Response, Version
from uartlab.pacing import FixedRate
from uartlab.sim.ik import marker_positions

BONES = ("metacarpal", "proximal", "middle", "distal")   # rigid body ids 1..4, plant.bone_poses() order
BONE_OF_LINK = {0: 0, 2: 1, 3: 2, 4: 3}                   # sim.ik marker link -> bone index
MARKER_SET = "uart_finger"
HR_CLOCK_HZ = 10_000_000       # est.: QueryPerformanceFrequency on Windows 10+ (the real Motive 2.1 box: 3312787)
SYSTEM_LATENCY_S = 0.0055      # mid-exposure -> transmit, the real capture's "System latency" (SampleClient)
SOFTWARE_LATENCY_S = 0.0009    # data received -> transmit, its "Software latency"
MARKER_SIZE_M = 0.0064         # est.: 6.4 mm (1/4") markers, the usual size on a finger-scale rig
CLIENT_TIMEOUT_S = 10.0        # est.: Motive's timeout is undocumented; real clients keep-alive every <= 2 s
VISIBLE_PARAMS = nn.MARKER_POINT_CLOUD_SOLVED | nn.MARKER_HAS_MODEL   # 0x0A, as the real capture's body markers
OCCLUDED_PARAMS = nn.MARKER_OCCLUDED | nn.MARKER_HAS_MODEL
MOTIVE_FOR_NATNET = {2: (1, 10, 0, 0), 3: (2, 1, 0, 0), 4: (3, 1, 0, 0)}  # app version Motive reports


def counted_without_header(data: bytes) -> bytes:
    """A request as the NatNet spec frames it. Some NatNet 2.x clients count the 4-byte header in nDataBytes
    (nDataBytes == the datagram's length); Motive answers them all the same, so the twin reads the payload
    as what follows the header. That includes a bare header saying 4: the PyPI natnetclient's ping and
    model-definition request (00 00 04 00, 04 00 04 00), which its constructor waits on."""
    if len(data) >= 4 and struct.unpack_from("<H", data, 2)[0] == len(data):
        return data[:2] + struct.pack("<H", len(data) - 4) + data[4:]
    return data


def quaternions_xyzw(rotations: list[np.ndarray]) -> list[tuple[float, float, float, float]]:
    """Rotation matrices -> unit quaternions in NatNet's order (qx, qy, qz, qw), with qw >= 0.

    Direct (the largest of 4qw², 4qx², 4qy², 4qz² picks the well-conditioned formula): a frame's four bones
    cost microseconds here, where scipy's Rotation spends ~120 us of the stream thread's time per frame."""
    quats = []
    for (m00, m01, m02), (m10, m11, m12), (m20, m21, m22) in np.asarray(rotations, dtype=float).tolist():
        four_sq = (1 + m00 - m11 - m22, 1 - m00 + m11 - m22, 1 - m00 - m11 + m22, 1 + m00 + m11 + m22)
        k = max(range(4), key=four_sq.__getitem__)
        s = 0.5 / math.sqrt(four_sq[k])
        if k == 0:
            q = (0.25 / s, (m01 + m10) * s, (m02 + m20) * s, (m21 - m12) * s)
        elif k == 1:
            q = ((m01 + m10) * s, 0.25 / s, (m12 + m21) * s, (m02 - m20) * s)
        elif k == 2:
            q = ((m02 + m20) * s, (m12 + m21) * s, 0.25 / s, (m10 - m01) * s)
        else:
            q = ((m21 - m12) * s, (m02 - m20) * s, (m10 - m01) * s, 0.25 / s)
        sign = math.copysign(1.0, q[3]) / math.hypot(*q)
        quats.append((q[0] * sign, q[1] * sign, q[2] * sign, q[3] * sign))
    return quats


@dataclass
class _Client:
    address: tuple[str, int]
    version: Version
    last_seen_s: float


def _xyz(v) -> nn.Vec3:
    """A point as NatNet's packets carry it: three floats."""
    return float(v[0]), float(v[1]), float(v[2])


class MotiveTwin:
    def __init__(self, plant, address: str = "127.0.0.1", command_port: int = 0, data_port: int = 0,
                 multicast_group: str | None = None, natnet_version: tuple[int, ...] = (4, 1, 0, 0),
                 time_scale: float = 1.0, min_markers: int = 3, client_timeout_s: float = CLIENT_TIMEOUT_S):
        if time_scale <= 0:
            raise ValueError(f"MotiveTwin time_scale must be > 0, got {time_scale}")
        self.plant, self.address, self.multicast_group = plant, address, multicast_group
        self.natnet_version = nn.as_version(natnet_version)
        self.time_scale, self.min_markers, self.client_timeout_s = time_scale, min_markers, client_timeout_s
        self.rate_hz = float(plant.config.mocap_rate_hz)
        self._ports = (command_port, data_port)
        self._clients: dict[tuple[str, int], _Client] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._streaming = threading.Event()
        self._streaming.set()
        self._threads: list[threading.Thread] = []
        self._cmd: socket.socket | None = None
        self._data: socket.socket | None = None
        self.frame_number = 0
        self.frames_sent = 0            # frames built and handed to the network (any number of clients)
        self.malformed_requests = 0
        self.send_errors = 0
        self.edit_mode, self.recording, self.take_name = False, False, ""
        self._layout()
        self._last_frame: FrameOfData | None = None

    # ------------------------------------------------------------ lifecycle
    def start(self) -> MotiveTwin:
        cmd = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        data = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            cmd.bind((self.address, self._ports[0]))
            # SO_REUSEADDR: a multicast client on this host binds the same data port (as beside real Motive).
            data.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            data.bind((self.address, self._ports[1]))
            if self.multicast_group:
                data.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(self.address))
                data.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
                data.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 1)
        except OSError as e:
            cmd.close()
            data.close()
            raise OSError(f"Motive twin: cannot open NatNet sockets on {self.address} "
                          f"(ports {self._ports[0]}/{self._ports[1]}): {e}") from e
        cmd.settimeout(0.2)
        self._cmd, self._data = cmd, data
        self._stop.clear()
        self._threads = [threading.Thread(target=self._command_loop, name="motive-commands", daemon=True),
                         threading.Thread(target=self._stream_loop, name="motive-stream", daemon=True)]
        for t in self._threads:
            t.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(timeout=2)
        self._threads = []
        for s in (self._cmd, self._data):
            if s is not None:
                s.close()
        self._cmd = self._data = None

    def __enter__(self) -> MotiveTwin:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def command_port(self) -> int:
        return self._cmd.getsockname()[1] if self._cmd else self._ports[0]

    @property
    def data_port(self) -> int:
        return self._data.getsockname()[1] if self._data else self._ports[1]

    @property
    def clients(self) -> list[tuple[str, int]]:
        with self._lock:
            return list(self._clients)

    def pause(self) -> None:
        """Stop sending frames (the cameras keep counting): a network outage as the client sees it."""
        self._streaming.clear()

    def resume(self) -> None:
        self._streaming.set()

    # ------------------------------------------------------------ what Motive knows and sends
    def _layout(self) -> None:
        """Markers per bone and their offsets in the bone's body frame, from the plant's marker model
        at the start pose (noise-free), so MODELDEF and the per-frame marker error agree with the plant."""
        plant = self.plant
        with plant.lock:
            world = marker_positions(plant.finger, plant.state()[8:12], plant.markers)
            poses = plant.bone_poses()
        points = plant.to_motive(world)
        bad = [m.name for m in plant.markers if m.link not in BONE_OF_LINK]
        if bad:
            raise ValueError(f"Motive twin: markers {bad} are on no bone (links {sorted(BONE_OF_LINK)} only)")
        self.marker_names = [m.name for m in plant.markers]
        self.marker_bone = [BONE_OF_LINK[m.link] for m in plant.markers]
        self.marker_ids, self.marker_offsets_m = [], []
        counts = [0] * len(BONES)
        for i, bone in enumerate(self.marker_bone):
            counts[bone] += 1
            self.marker_ids.append((bone + 1) << 16 | counts[bone])
            _, p, R = poses[bone]
            self.marker_offsets_m.append(R.T @ (points[i] - p))
        self._last_points = points.copy()
        self._last_poses = list(zip([p.copy() for _, p, _ in poses], quaternions_xyzw([R for *_, R in poses]),
                                    strict=True))

    def model_definitions(self) -> nn.ModelDefinitions:
        defs = nn.ModelDefinitions([MarkerSetDescription(MARKER_SET, list(self.marker_names))])
        for b, name in enumerate(BONES):
            markers = [RigidBodyMarkerDescription(_xyz(self.marker_offsets_m[i]), 0,
                                                  self.marker_names[i])
                       for i, bone in enumerate(self.marker_bone) if bone == b]
            defs.descriptions.append(RigidBodyDescription(name, b + 1, -1, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0),
                                                          markers))
        return defs

    def build_frame(self) -> FrameOfData:
        """Sample the plant (pose and markers from one instant) into the next frame."""
        plant = self.plant
        with plant.lock:
            t_s = plant.time_s
            poses = plant.bone_poses()
            points = plant.mocap_markers()
        visible = ~np.isnan(points).any(axis=1)
        self._last_points[visible] = points[visible]
        frame = FrameOfData(self.frame_number, timestamp_s=float(t_s))
        errors: list[list[float]] = [[] for _ in BONES]
        for i, bone in enumerate(self.marker_bone):
            residual = 0.0
            if visible[i]:
                _, p, R = poses[bone]
                residual = float(np.linalg.norm(points[i] - (p + R @ self.marker_offsets_m[i])))
                errors[bone].append(residual)
            position = _xyz(self._last_points[i])
            frame.labeled_markers.append(nn.LabeledMarker(self.marker_ids[i], position, MARKER_SIZE_M,
                                                       VISIBLE_PARAMS if visible[i] else OCCLUDED_PARAMS, residual))
        frame.marker_sets.append(nn.MarkerSetData(MARKER_SET, [m.position_m for m in frame.labeled_markers]))
        frame.unlabeled_markers_m = [_xyz(p) for p in points[visible]]
        # NatNet 2.x bodies carry their markers: the labeled ones' positions and sizes, numbered within the body
        # (the 1.7, 1.9 and 2.10 captures); encode() leaves them out of 3.0+ streams.
        body_markers: list[list[nn.RigidBodyMarker]] = [[] for _ in BONES]
        for m in frame.labeled_markers:
            body_markers[m.model_id - 1].append(nn.RigidBodyMarker(m.position_m, m.marker_id, m.size_m))
        quats = quaternions_xyzw([R for *_, R in poses])
        for b, (_, p, _) in enumerate(poses):
            if len(errors[b]) >= self.min_markers:
                self._last_poses[b] = (p.copy(), quats[b])
                body = nn.RigidBodyData(b + 1, _xyz(p), self._last_poses[b][1],
                                     float(np.mean(errors[b])), nn.RIGID_BODY_TRACKING_VALID, body_markers[b])
            else:
                last_p, last_q = self._last_poses[b]
                body = nn.RigidBodyData(b + 1, _xyz(last_p), last_q, 0.0, 0, body_markers[b])
            frame.rigid_bodies.append(body)
        transmit = self._ticks()
        frame.camera_mid_exposure_ticks = transmit - int(SYSTEM_LATENCY_S * HR_CLOCK_HZ)
        frame.camera_data_received_ticks = transmit - int(SOFTWARE_LATENCY_S * HR_CLOCK_HZ)
        frame.transmit_ticks = transmit
        frame.params = nn.FRAME_RECORDING if self.recording else 0
        self.frame_number += 1
        return frame

    @staticmethod
    def _ticks() -> int:
        return time.perf_counter_ns() * HR_CLOCK_HZ // 1_000_000_000

    def server_info(self) -> nn.ServerInfo:
        v = self.natnet_version
        info = nn.ServerInfo("Motive", MOTIVE_FOR_NATNET.get(v[0], (3, 1, 0, 0)), v)
        if v[0] >= 3:  # sSender_Server's clock and connection info exist from NatNet 3.0
            info.high_res_clock_frequency_hz = HR_CLOCK_HZ
            info.data_port = self.data_port
            info.is_multicast = bool(self.multicast_group)
            info.multicast_group = self.multicast_group or nn.NATNET_DEFAULT_MULTICAST_GROUP
        return info

    # ------------------------------------------------------------ streaming
    def _stream_loop(self) -> None:
        # Late frames go out back to back; suspended or starved for a second: resync, numbering the frames skipped.
        pace = FixedRate(1.0 / (self.rate_hz * self.time_scale), max_late_s=1.0, sleep=self._stop.wait)
        while not self._stop.is_set():
            frame = self.build_frame()
            self._last_frame = frame
            if self._streaming.is_set():
                self._send_frame(frame)
            self.frame_number += pace.wait().missed

    def _send_frame(self, frame: FrameOfData) -> None:
        if self.multicast_group:
            self._sendto(self._data, encode(frame, self.natnet_version), (self.multicast_group, self.data_port))
        else:
            self._expire_clients()
            by_version: dict[Version, bytes] = {}
            with self._lock:
                clients = list(self._clients.values())
            for client in clients:
                packet = by_version.get(client.version)
                if packet is None:  # encode once per stream version, not once per client
                    packet = by_version[client.version] = encode(frame, client.version)
                self._sendto(self._data, packet, client.address)
        self.frames_sent += 1

    def _sendto(self, sock, packet: bytes, address) -> None:
        try:
            sock.sendto(packet, address)
        except OSError:  # e.g. ECONNREFUSED after a client vanished: Motive keeps going, so do we
            self.send_errors += 1

    def _expire_clients(self) -> None:
        cutoff = time.monotonic() - self.client_timeout_s
        with self._lock:
            for address in [a for a, c in self._clients.items() if c.last_seen_s < cutoff]:
                del self._clients[address]

    # ------------------------------------------------------------ commands
    def _command_loop(self) -> None:
        sock = self._cmd
        if sock is None:   # stopped before the thread began
            return
        while not self._stop.is_set():
            try:
                data, address = sock.recvfrom(65536)
            except TimeoutError:
                continue
            except OSError:  # closed by stop() (the loop ends), or a transient ICMP error on some platforms
                continue
            msg = decode_packet(counted_without_header(data), self.natnet_version)
            if isinstance(msg, nn.DecodeError):
                self.malformed_requests += 1
                continue
            reply = self._handle(msg, address)
            if reply is not None:
                self._sendto(self._cmd, reply, address)

    def _handle(self, msg, address) -> bytes | None:
        with self._lock:
            client = self._clients.get(address)
            if client is not None:
                client.last_seen_s = time.monotonic()
        mid = msg.MESSAGE_ID
        if mid in (MessageId.CONNECT, MessageId.DISCOVERY):
            if mid == MessageId.CONNECT:
                self._connect(msg, address)
            return encode(self.server_info())
        if mid == MessageId.REQUEST_MODELDEF:
            return encode(self.model_definitions(), self._version_for(address))
        if mid == MessageId.REQUEST_FRAMEOFDATA:  # the latest frame, if the stream has produced one yet
            frame = self._last_frame
            return encode(frame, self._version_for(address)) if frame is not None else None
        if mid == MessageId.ECHOREQUEST:
            return encode(nn.EchoResponse(msg.client_time, self._ticks()))
        if mid == MessageId.REQUEST:
            return self._request(msg.command, address)
        if mid in (MessageId.DISCONNECT, MessageId.DISCONNECTBYTIMEOUT):
            with self._lock:
                self._clients.pop(address, None)
        return None  # KEEPALIVE and anything else: nothing to say

    def _connect(self, msg: nn.Connect, address) -> None:
        wanted = msg.bitstream_version  # (0,0,0,0) or absent: the server's own version
        version = wanted if wanted is not None and any(wanted) and self._can_change_bitstream(wanted) else None
        with self._lock:
            self._clients[address] = _Client(address, self.natnet_version if version is None else version,
                                             time.monotonic())

    def _version_for(self, address) -> Version:
        with self._lock:
            client = self._clients.get(address)
        return client.version if client else self.natnet_version

    def _can_change_bitstream(self, wanted) -> bool:
        """Motive 3 (NatNet >= 4) lets unicast clients pick any stream version it can write, up to its own."""
        return (self.natnet_version[0] >= 4 and not self.multicast_group
                and nn.at_least(self.natnet_version, *wanted[:2]) and nn.at_least(tuple(wanted), 2, 5))

    def _request(self, command: str, address) -> bytes:
        name, _, arg = command.partition(",")
        key = name.strip().lower()  # Motive matches command names case-insensitively
        answers = {"framerate": struct.pack("<f", self.rate_hz),
                   "analogsamplespermocapframe": struct.pack("<i", 0),  # no analog devices (real 2.1 server: 0)
                   "unitstomillimeters": struct.pack("<f", 1000.0),
                   "currentmode": struct.pack("<i", 1 if self.edit_mode else 0)}  # 0 Live, 1 Edit
        if key in answers:
            return encode(Response(answers[key]))
        if key == "bitstream":
            return self._bitstream(arg.strip(), address)
        if key in ("livemode", "editmode"):
            self.edit_mode = key == "editmode"
            self.resume()
        elif key in ("timelineplay", "timelinestop"):
            if self.edit_mode:  # in Live mode the cameras stream regardless, as in Motive
                (self.resume if key == "timelineplay" else self.pause)()
        elif key in ("setplaybacktakename", "setrecordtakename", "setcurrentsession"):
            self.take_name = arg
        elif key in ("startrecording", "stoprecording"):
            self.recording = key == "startrecording"
        elif key not in ("setplaybackstartframe", "setplaybackstopframe", "setplaybackcurrentframe",
                         "setplaybacklooping"):  # those are accepted: the twin has no take to play back
            return self._unrecognized()
        return encode(Response(struct.pack("<i", 0)))

    def _unrecognized(self) -> bytes:
        """NAT_UNRECOGNIZED_REQUEST as Motive sends it: an sSender of its NatNet library (the real capture:
        264 B, name "NatNetLib", both versions its NatNet version)."""
        sender = encode(nn.ServerInfo("NatNetLib", self.natnet_version, self.natnet_version))[4:]
        return encode(nn.Unrecognized(MessageId.UNRECOGNIZED_REQUEST, sender))

    def _bitstream(self, arg: str, address) -> bytes:
        if not arg:  # the query form: answer with the client's current stream version
            v = self._version_for(address)
            # No NUL: the SDK's Python client (4.1-4.3) int()s every field after the comma up to the end of
            # the datagram, so a terminator would end its command thread ("0\x00"); PacketClient.cpp reads
            # nDataBytes of text and takes either.
            return encode(Response(f"Bitstream,{v[0]}.{v[1]}.{v[2]}.{v[3]}".encode()))
        try:
            wanted = nn.as_version(arg)
        except ValueError:
            wanted = None
        with self._lock:
            client = self._clients.get(address)
            ok = False
            if client is not None and wanted is not None and self._can_change_bitstream(wanted):
                client.version, ok = wanted, True
        return encode(Response(struct.pack("<i", 0 if ok else 1)))  # 0 done, non-zero refused (PacketClient)
