"""OptiTrack's own NatNet SDK Python sample (tests/vendor/natnet/PythonClient/, byte-for-byte NatNet SDK 4.3)
against the Motive twin, and the replies Motive gives to what other clients send.

The sample runs unmodified in its own interpreter and is driven as a user drives it, through its prompts on
stdin: unicast, client 127.0.0.1, the server's address, "d" (data stream; in unicast Motive sends the frames
to the command socket, which the command thread parses). The twin listens on Motive's own ports 1510/1511,
which the sample hard-codes, at an address of its own in 127.0.0.0/8 so it shares them with nobody.
Two things of the sample's own decide how it is driven: its "c" mode sleeps 1 s after every datagram, so at
100 frames/s a reply waits minutes behind the frames; and its quit joins a data thread blocked in recvfrom on
a unicast socket nothing is ever sent to, which a close() from another thread does not wake on Linux (it
does on Windows), so after "shutdown called" the harness ends it.
"""

from __future__ import annotations

import os
import random
import re
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from uartlab.drivers.natnet import packets as nn
from uartlab.drivers.natnet.decode import decode_packet
from uartlab.drivers.natnet.encode import encode
from uartlab.drivers.twins.motive import MotiveTwin
from uartlab.drivers.twins.plant import Plant, PlantClock, PlantConfig
from uartlab.drivers.twins.rig import NATNET_COMMAND_PORT, NATNET_DATA_PORT

SAMPLE = Path(__file__).parents[2] / "vendor" / "natnet" / "PythonClient"
FIXTURES = Path("/work/shared/fixtures/natnet")  # the team's real Motive captures (as test_natnet_packets.py)
RUN_TIMEOUT_S = 60.0


@pytest.fixture
def motive():
    plant = Plant(PlantConfig())
    clock = PlantClock(plant).start()
    for _ in range(20):  # an address of its own on the loopback network: 1510/1511 are free there
        host = f"127.{random.randint(1, 254)}.{random.randint(1, 254)}.{random.randint(2, 254)}"
        try:
            twin = MotiveTwin(plant, address=host, command_port=NATNET_COMMAND_PORT,
                              data_port=NATNET_DATA_PORT).start()
            break
        except OSError:
            continue
    else:
        pytest.fail("no free loopback address for the Motive twin")
    yield twin
    twin.stop()
    clock.stop()


class Sample:
    """PythonSample.py in its own interpreter; what it prints is collected as it comes."""

    def __init__(self):
        self.proc = subprocess.Popen([sys.executable, "PythonSample.py"], cwd=SAMPLE, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     env={**os.environ, "PYTHONUNBUFFERED": "1"})
        self._lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._deadline = time.monotonic() + RUN_TIMEOUT_S

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in iter(self.proc.stdout.readline, b""):
            self._lines.append(line.decode(errors="replace"))

    @property
    def output(self) -> str:
        return "".join(self._lines)

    def type(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text.encode())
        self.proc.stdin.flush()

    def wait_for(self, pattern: str, after: int = 0) -> re.Match:
        while (m := re.compile(pattern).search(self.output, after)) is None:
            assert self.proc.poll() is None or self._reader.is_alive(), f"ended before {pattern!r}:\n{self.tail()}"
            assert time.monotonic() < self._deadline, f"never printed {pattern!r}:\n{self.tail()}"
            time.sleep(0.02)
        return m

    def tail(self, lines: int = 80) -> str:
        return "".join(line for line in self._lines if not line.startswith(" "))[-6000:] + \
            "".join(self._lines[-lines:])

    def quit(self) -> str:
        """'q', then the end of the process (see the module docstring for why the harness ends it)."""
        self.type("q\n")
        self.wait_for(r"shutdown called")
        time.sleep(0.5)
        self.proc.kill()
        self.proc.wait()
        self._reader.join(timeout=5)
        return self.output


def frame_numbers(text: str) -> list[int]:
    return [int(n) for n in re.findall(r"^MoCap Frame: (\d+)$", text, re.M)]


@pytest.mark.slow   # ~15 s: the sample sleeps 1 s after most commands
def test_natnet_sdk_sample_streams_the_twins_finger_and_every_command_round_trip_succeeds(motive):
    s = Sample()
    try:
        s.type(f"1\n127.0.0.1\n{motive.address}\nd\n")   # unicast, client, server, data stream
        end = s.wait_for(r"Enter command").end()
        # Its start: CONNECT with the 4.2 bitstream it asks for, SERVERINFO, then the "Bitstream" query of
        # print_configuration (the reply that used to end its command thread).
        config = s.output
        assert "Application Name Motive" in config, s.tail()
        assert re.search(r"NatNetVersion  4 1 0 0\n  NatNet Bitstream Requested\n    NatNetVersion  4 1 0 0",
                         config), s.tail()
        for command, answer in (("c\n", r"Can Change Bitstream Version = true"),
                                ("s\n", r"Data Descriptions:"),
                                ("p\n", r"Command: TimelineStop - return_code: \d+"),
                                ("r\n", r"Command: TimelinePlay - return_code: \d+"),
                                ("o\n", r"Command: SetPlaybackCurrentFrame,0 - return_code: \d+"),
                                ("w\n", r"Command: SetPlaybackCurrentFrame,100 - return_code: \d+"),
                                ("4\n", r"Bitstream version at 4\.2|Could not change bitstream"),
                                ("c\n", r"Connection Configuration:")):
            s.type(command)
            end = s.wait_for(answer, end).end()
            end = s.wait_for(r"Ready\.\.\.", end).end()
        last_command_at = len(s.output)
        # The command thread parses the unicast frames: frames still arriving prove it outlived every reply.
        s.wait_for(r"(?m)^MoCap Frame: \d+$(?s:.*)^MoCap Frame: \d+$", last_command_at)
        out = s.quit()
    finally:
        if s.proc.poll() is None:
            s.proc.kill()
    assert "Traceback" not in out and "Exception in thread" not in out, s.tail()
    numbers = frame_numbers(out)
    assert len(numbers) > 20 and numbers == sorted(numbers), numbers[:50]
    # The frame printout is the twin's finger: marker set, 4 bones as tracked rigid bodies 1..4, 12 markers.
    assert "Model Name : uart_finger" in out and "Marker Count : 12" in out
    assert re.search(r"Rigid Body Count:\s+4", out)
    ids = [int(i) for i in re.findall(r"^\s+ID\s+:\s+(\d+)$", out, re.M)]
    assert set(ids[:4]) == {1, 2, 3, 4}, ids[:8]
    assert "Tracking Valid: True" in out and "Tracking Valid: False" not in out


# ------------------------------------------------------------------ replies, byte for byte as Motive's
def _ask(motive: MotiveTwin, datagram: bytes) -> bytes:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(2.0)
        sock.sendto(datagram, (motive.address, motive.command_port))
        return sock.recvfrom(65536)[0]


def _request(command: str, count_header: bool = False) -> bytes:
    payload = command.encode() + b"\0"
    return struct.pack("<HH", nn.MessageId.REQUEST, len(payload) + (4 if count_header else 0)) + payload


@pytest.mark.parametrize("count_header", [False, True], ids=["spec", "natnet2-counts-header"])
def test_requests_are_answered_whether_or_not_the_length_counts_the_header(motive, count_header):
    """NatNet 2.x clients that put the datagram's whole length in nDataBytes get Motive's usual answers."""
    frame_rate = _ask(motive, _request("FrameRate", count_header))
    assert frame_rate == struct.pack("<HHf", nn.MessageId.RESPONSE, 4, motive.rate_hz)
    bitstream = _ask(motive, _request("Bitstream", count_header))
    assert bitstream == struct.pack("<HH", nn.MessageId.RESPONSE, 17) + b"Bitstream,4.1.0.0"
    header = struct.pack("<HH", nn.MessageId.CONNECT, 264 + (4 if count_header else 0))
    info = _ask(motive, header + b"NatNetLib".ljust(256, b"\0") + bytes([2, 10, 0, 0, 2, 10, 0, 0]))
    assert decode_packet(info).MESSAGE_ID == nn.MessageId.SERVERINFO and len(info) == 283


@pytest.mark.parametrize("message_id", [nn.MessageId.CONNECT, nn.MessageId.REQUEST_MODELDEF],
                         ids=["ping", "modeldef"])
def test_a_bare_header_whose_length_counts_itself_is_answered(motive, message_id):
    """The PyPI natnetclient pings and asks for the model definitions with the 4-byte datagram (id, 4), and its
    constructor waits for both answers: Motive gives the ones it gives (id, 0)."""
    def answer(datagram: bytes) -> bytes:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            sock.settimeout(2.0)
            sock.sendto(datagram, (motive.address, motive.command_port))
            while (reply := sock.recvfrom(65536)[0])[:2] == struct.pack("<H", nn.MessageId.FRAMEOFDATA):
                pass   # a connected client's frames may come first
            return reply

    counted = answer(struct.pack("<HH", message_id, 4))
    assert counted[:2] == struct.pack("<H", message_id + 1)   # SERVERINFO / MODELDEF
    assert counted == answer(struct.pack("<HH", message_id, 0))
    assert motive.malformed_requests == 0


def test_unrecognized_request_gets_motives_264_byte_sender(motive):
    """The real capture: "TestRequest" -> message 100 with a 264-byte sSender named NatNetLib."""
    real = bytes.fromhex(next(line for line in (FIXTURES / "derived" / "traffic_v3_udp_payloads.jsonl")
                              .read_text().splitlines() if '"msg_id": 100' in line).split('"payload_hex": "')[1][:8])
    reply = _ask(motive, _request("TestRequest"))
    assert reply[:4] == real[:4] == struct.pack("<HH", 100, 264)
    assert reply[4:4 + 10] == b"NatNetLib\0" and reply[4 + 256:] == bytes([4, 1, 0, 0, 4, 1, 0, 0])


def test_server_info_has_motives_layout(motive):
    """SERVERINFO from a NatNet >= 3 server is the 279-byte payload of the real capture: sSender, clock
    frequency, data port, multicast flag and group."""
    real = (FIXTURES / "mje-nz_python_natnet" / "serverinfo_packet_v3.bin").read_bytes()
    ours = _ask(motive, encode(nn.Connect()))
    assert len(ours) == len(real) == 283 and ours[:4] == real[:4]
    assert ours[4:11] == real[4:11] == b"Motive\0"
    data_port, multicast = struct.unpack_from("<HB", ours, 4 + 264 + 8)
    assert (data_port, multicast) == (motive.data_port, 0)
