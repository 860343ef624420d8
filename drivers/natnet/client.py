"""NatNet client for Motive (and the Motive twin): unicast by default, multicast on request.

    with NatNetClient("192.168.0.106") as client:        # connect: CONNECT -> SERVERINFO
        print(client.server_info.natnet_version, client.frame_rate_hz())
        for rx in client.frames(timeout_s=1.0):          # ReceivedFrame(frame, host_time_s)
            ...

Why it is built this way (shared/device-notes.md, "OptiTrack NatNet", sections 3-5):
- One receive thread that never dies on bad data: every datagram goes through ``decode_packet``, a
  malformed or truncated one is counted in ``stats.malformed`` and the stream goes on (the PyPI clients'
  threads die silently on the first bad frame).
- Unicast: Motive sends replies *and frames* to the address the CONNECT came from, so one command
  socket receives everything; a KEEPALIVE every ``keepalive_s`` keeps the subscription alive.
- Multicast: frames arrive on group:data_port, joined on the ``local`` interface explicitly (multi-NIC
  hosts join the wrong one otherwise); commands still go unicast to the command port.
- Only the configured server is listened to: a datagram from any other host on the Motive network (another
  Motive, a stray sender, a spoofer) is dropped and counted in ``stats.foreign``, never decoded into joint
  angles.
- Frames go into a bounded queue that drops the *oldest* when full (a blocking queue is what makes other
  clients lag by hundreds of ms), and ``latest()`` always has the newest.
- Frame-number gaps are counted (SO_RCVBUF may be refused or too small; we ask for ``rcvbuf_bytes``
  and record what the kernel granted); "stale" means no frame for more than ``stale_after_s``.
"""

from __future__ import annotations

import collections
import logging
import queue
import select
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

from uartlab.drivers.natnet.decode import DecodeStats, decode_packet
from uartlab.drivers.natnet.encode import encode
from uartlab.drivers.natnet.packets import (
    NATNET_DEFAULT_COMMAND_PORT,
    NATNET_DEFAULT_DATA_PORT,
    Connect,
    DecodeError,
    Empty,
    FrameOfData,
    MessageId,
    ModelDefinitions,
    Request,
    Response,
    ServerInfo,
    Unrecognized,
    Version,
    as_version,
)
from uartlab.errors import DeviceError

log = logging.getLogger(__name__)
CLIENT_NATNET_VERSION = (4, 1, 0, 0)   # the newest layout this package reads and writes
RECV_BYTES = 65536                      # one whole UDP datagram whatever its size


class NatNetError(DeviceError):
    """The server did not answer, refused, or the client was used wrongly; names the server."""


@dataclass
class ClientStats:
    frames: int = 0             # frames decoded and queued
    gaps: int = 0               # frame numbers skipped by the stream (sum over all jumps)
    gap_events: int = 0         # how many jumps
    out_of_order: int = 0       # frame number not above the previous one (duplicate, reorder, restart)
    malformed: int = 0          # datagrams that did not decode
    last_error: str | None = None
    dropped: int = 0            # frames discarded from a full queue (the consumer is too slow)
    foreign: int = 0            # datagrams from a host other than the configured server: dropped unread
    no_version: int = 0         # frames that arrived before the stream version was known
    other: int = 0              # messages nobody waited for
    stale_events: int = 0       # transitions from receiving to stale
    rcvbuf_bytes: int = 0       # receive buffer the kernel granted


@dataclass(slots=True)
class ReceivedFrame:
    frame: FrameOfData
    host_time_s: float          # time.monotonic() when the datagram was taken off the socket


class NatNetClient:
    def __init__(self, server: str = "127.0.0.1", command_port: int = NATNET_DEFAULT_COMMAND_PORT,
                 data_port: int = NATNET_DEFAULT_DATA_PORT, local: str = "127.0.0.1", multicast: str | None = None,
                 version: tuple[int, ...] | None = None, *, name: str = "uartlab", keepalive_s: float = 1.0,
                 stale_after_s: float = 0.5, queue_size: int = 256, rcvbuf_bytes: int = 64 * 1024):
        self.server, self.command_port, self.data_port = server, command_port, data_port
        self.local, self.multicast, self.name = local, multicast, name
        self.requested_version = as_version(version) if version is not None else None
        self.keepalive_s, self.stale_after_s, self.rcvbuf_bytes = keepalive_s, stale_after_s, rcvbuf_bytes
        self.version: Version | None = self.requested_version   # the stream version frames are decoded with
        self.server_info: ServerInfo | None = None
        self.model: ModelDefinitions | None = None
        self.stats = ClientStats()
        self._decode_stats = DecodeStats()
        self._frames: collections.deque[ReceivedFrame] = collections.deque(maxlen=queue_size)
        self._latest: ReceivedFrame | None = None
        self._cond = threading.Condition()
        self._replies: queue.Queue = queue.Queue()
        self._request_lock = threading.Lock()
        self._got_info, self._got_model = threading.Event(), threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._cmd: socket.socket | None = None
        self._data: socket.socket | None = None
        self._server_ip: str | None = None      # resolved at connect; the only source accepted
        self._last_number: int | None = None
        self._stale = False
        self._started_s = 0.0

    @property
    def _where(self) -> str:
        return f"Motive at {self.server}:{self.command_port}"

    # ------------------------------------------------------------ lifecycle
    def connect(self, timeout_s: float = 2.0) -> ServerInfo:
        """Open the sockets, start receiving, and shake hands; raises NatNetError if nobody answers."""
        if self._thread is not None:
            raise NatNetError(f"{self._where}: already connected")
        try:
            self._server_ip = socket.gethostbyname(self.server)
        except OSError as e:
            raise NatNetError(f"{self._where}: cannot resolve the server's address ({e})") from None
        self._open_sockets()
        self._stop.clear()
        self._started_s = time.monotonic()
        self._thread = threading.Thread(target=self._receive_loop, name="natnet-receive", daemon=True)
        self._thread.start()
        hello = Connect(self.name, (0, 1, 0, 0), CLIENT_NATNET_VERSION, subscribed_data_only=False,
                        bitstream_version=self.requested_version or (0, 0, 0, 0))
        deadline = time.monotonic() + timeout_s
        while not self._got_info.is_set():
            self._send(encode(hello))
            if self._got_info.wait(min(0.5, max(0.0, deadline - time.monotonic()))):
                break
            if time.monotonic() >= deadline:
                self.close()
                raise NatNetError(f"{self._where} did not answer NAT_CONNECT within {timeout_s} s "
                                  "(is streaming enabled in Motive, and is the command port right?)")
        info = self.server_info
        assert info is not None
        if self.requested_version is None:
            self.version = info.natnet_version
        elif self.requested_version != info.natnet_version:
            if info.natnet_version[0] >= 4 and not self.multicast:  # Motive 3: unicast clients may choose
                self.set_bitstream_version(self.requested_version, timeout_s)
            else:
                log.warning("%s streams NatNet %s and cannot change it; decoding as %s, as asked", self._where,
                            ".".join(map(str, info.natnet_version)), ".".join(map(str, self.requested_version)))
        if info.is_multicast is not None and bool(info.is_multicast) != bool(self.multicast):
            log.warning("%s streams %s but this client is %s: expect no frames", self._where,
                        f"multicast to {info.multicast_group}" if info.is_multicast else "unicast",
                        f"joined to {self.multicast}" if self.multicast else "unicast")
        return info

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            if self._cmd is not None and not self.multicast:
                self._send(encode(Empty(MessageId.DISCONNECT)))
            self._thread.join(timeout=2)
        self._thread = None
        for s in (self._cmd, self._data):
            if s is not None:
                s.close()
        self._cmd = self._data = None
        with self._cond:
            self._cond.notify_all()

    def __enter__(self) -> NatNetClient:
        self.connect()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def data_address(self) -> tuple[str, int]:
        """Where frames arrive: the command socket (unicast) or the joined data socket (multicast)."""
        sock = self._data if self.multicast else self._cmd
        if sock is None:
            raise NatNetError(f"{self._where}: not connected")
        return sock.getsockname()

    # ------------------------------------------------------------ requests
    def request(self, command: str, timeout_s: float = 1.0) -> Response:
        """Send a NAT_REQUEST and wait for its NAT_RESPONSE (NatNet has no request ids: one at a time)."""
        with self._request_lock:
            while not self._replies.empty():  # a late answer to an earlier, timed-out request
                self._replies.get_nowait()
            self._send(encode(Request(command)))
            try:
                reply = self._replies.get(timeout=timeout_s)
            except queue.Empty:
                raise NatNetError(f"{self._where}: no response to request {command!r} within {timeout_s} s") from None
        if isinstance(reply, Unrecognized):
            raise NatNetError(f"{self._where}: request {command!r} not recognised")
        return reply

    def frame_rate_hz(self, timeout_s: float = 1.0) -> float:
        return self.request("FrameRate", timeout_s).as_float()

    def set_bitstream_version(self, version: tuple[int, ...], timeout_s: float = 1.0) -> None:
        """Ask for another stream layout (Motive 3 / NatNet >= 4, unicast only)."""
        v = as_version(version)
        code = self.request(f"Bitstream,{v[0]}.{v[1]}", timeout_s).as_int()
        if code != 0:
            raise NatNetError(f"{self._where} refused bitstream version {v[0]}.{v[1]} (response {code})")
        self.version = v

    def request_model_definitions(self, timeout_s: float = 1.0) -> ModelDefinitions:
        self._got_model.clear()
        self._send(encode(Empty(MessageId.REQUEST_MODELDEF)))
        if not self._got_model.wait(timeout_s):
            raise NatNetError(f"{self._where}: no model definitions within {timeout_s} s ({self.stats.last_error})")
        assert self.model is not None
        return self.model

    # ------------------------------------------------------------ frames
    def get_frame(self, timeout_s: float | None = None) -> ReceivedFrame | None:
        """The oldest queued frame, waiting up to timeout_s; None on timeout or after close()."""
        with self._cond:
            if not self._cond.wait_for(lambda: self._frames or self._stop.is_set(), timeout_s):
                return None
            return self._frames.popleft() if self._frames else None

    def frames(self, timeout_s: float | None = None) -> Iterator[ReceivedFrame]:
        """Queued frames in order; ends after close() or when no frame comes within timeout_s."""
        while (rx := self.get_frame(timeout_s)) is not None:
            yield rx

    def latest(self) -> ReceivedFrame | None:
        return self._latest

    def drain(self) -> int:
        """Discard queued frames (e.g. after a set-up step); returns how many."""
        with self._cond:
            n = len(self._frames)
            self._frames.clear()
            return n

    @property
    def seconds_since_last_frame(self) -> float:
        last = self._latest.host_time_s if self._latest else self._started_s
        return time.monotonic() - last

    @property
    def is_stale(self) -> bool:
        return self.seconds_since_last_frame > self.stale_after_s

    # ------------------------------------------------------------ sockets and the receive thread
    def _open_sockets(self) -> None:
        try:
            self._cmd = self._make_socket((self.local, 0))
            if self.multicast:
                data = self._make_socket(None)
                data.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # Motive/other clients may share it
                data.bind(("", self.data_port))
                data.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
                                socket.inet_aton(self.multicast) + socket.inet_aton(self.local))
                self._data = data
        except OSError as e:
            self.close()
            what = f"join {self.multicast}:{self.data_port} on {self.local}" if self.multicast else f"bind {self.local}"
            raise NatNetError(f"{self._where}: cannot {what}: {e}") from e

    def _make_socket(self, bind_to) -> socket.socket:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, self.rcvbuf_bytes)
        granted = s.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)
        self.stats.rcvbuf_bytes = max(self.stats.rcvbuf_bytes, granted)
        if granted < self.rcvbuf_bytes:
            log.warning("%s: asked for a %d B receive buffer, got %d B: watch stats.gaps", self._where,
                        self.rcvbuf_bytes, granted)
        if bind_to is not None:
            s.bind(bind_to)
        return s

    def _send(self, packet: bytes) -> None:
        if self._cmd is None:
            raise NatNetError(f"{self._where}: not connected (call connect() first)")
        try:
            self._cmd.sendto(packet, (self.server, self.command_port))
        except OSError as e:  # e.g. ECONNREFUSED from an earlier ICMP: the next keep-alive tries again
            self.stats.last_error = f"send to {self._where} failed: {e}"

    def _receive_loop(self) -> None:
        socks = [s for s in (self._cmd, self._data) if s is not None]
        next_keepalive = time.monotonic() + self.keepalive_s
        while not self._stop.is_set():
            try:
                ready, _, _ = select.select(socks, [], [], 0.05)
            except (OSError, ValueError):  # closed by close()
                break
            for sock in ready:
                try:
                    data, (sender_ip, *_) = sock.recvfrom(RECV_BYTES)
                except OSError:  # ICMP port-unreachable surfaces here on Linux: not fatal
                    continue
                if sender_ip != self._server_ip:
                    self.stats.foreign += 1
                    continue
                self._on_datagram(data, time.monotonic())
            now = time.monotonic()
            if not self.multicast and now >= next_keepalive and self._got_info.is_set():
                self._send(encode(Empty(MessageId.KEEPALIVE)))
                next_keepalive = now + self.keepalive_s
            stale = self.is_stale
            if stale and not self._stale:
                self.stats.stale_events += 1
            self._stale = stale

    def _on_datagram(self, data: bytes, host_time_s: float) -> None:
        if self.version is None and data[:2] == b"\x07\x00":  # a frame before SERVERINFO told us the layout
            self.stats.no_version += 1
            return
        msg = decode_packet(data, self.version, self._decode_stats)
        if isinstance(msg, DecodeError):
            self.stats.malformed += 1
            self.stats.last_error = str(msg)
        elif isinstance(msg, FrameOfData):
            self._on_frame(msg, host_time_s)
        elif isinstance(msg, ServerInfo):
            self.server_info = msg
            self._got_info.set()
        elif isinstance(msg, ModelDefinitions):
            self.model = msg
            self._got_model.set()
        elif isinstance(msg, Response) or (isinstance(msg, Unrecognized)
                                           and msg.message_id == MessageId.UNRECOGNIZED_REQUEST):
            self._replies.put(msg)
        else:
            self.stats.other += 1

    def _on_frame(self, frame: FrameOfData, host_time_s: float) -> None:
        n, last = frame.frame_number, self._last_number
        if last is not None:
            if n > last + 1:
                self.stats.gaps += n - last - 1
                self.stats.gap_events += 1
            elif n <= last:
                self.stats.out_of_order += 1
        self._last_number = n  # follow a restart (Motive playback looping) instead of flagging every frame
        rx = ReceivedFrame(frame, host_time_s)
        with self._cond:
            if len(self._frames) == self._frames.maxlen:
                self.stats.dropped += 1
            self._frames.append(rx)
            self._latest = rx
            self.stats.frames += 1
            self._cond.notify_all()
