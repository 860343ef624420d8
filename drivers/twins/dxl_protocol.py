"""Dynamixel Protocol 1.0 and 2.0 on the wire: framing, CRC-16, checksum, byte stuffing, parameter layouts.

Pure functions over bytes, for the bus twin (device side) and usable by a driver (host side). References:
ROBOTIS e-manual docs/en/dxl/protocol2.md, protocol1.md and docs/en/dxl/crc.md; the packet layouts match
dynamixel_sdk 4.1.0 (protocol1_packet_handler.py, protocol2_packet_handler.py, group_bulk_read.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from uartlab.drivers.mx64 import INST_STATUS

HEADER_P2 = b"\xff\xff\xfd\x00"
HEADER_P1 = b"\xff\xff"
MAX_LENGTH_P2 = 1024   # dynamixel_sdk's TX/RXPACKET_MAX_LEN: nothing longer is ever sent
MAX_LENGTH_P1 = 250    # the SDK's Protocol 1.0 packet limit (the LEN byte itself tops out at 255)


class MalformedPacket(ValueError):
    """The parameters do not fit the instruction's layout."""


@dataclass(frozen=True)
class Packet:
    dxl_id: int
    instruction: int
    params: bytes
    intact: bool  # CRC (2.0) or checksum (1.0) matched


def _make_crc_table() -> list[int]:
    # CRC-16/BUYPASS: poly 0x8005, init 0, no reflection; this yields the e-manual's (and the SDK's) table.
    table = []
    for i in range(256):
        crc = i << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x8005) if crc & 0x8000 else crc << 1
        table.append(crc & 0xFFFF)
    return table


_CRC_TABLE = _make_crc_table()


def crc16(data: bytes | bytearray, crc: int = 0) -> int:
    for byte in data:
        crc = ((crc << 8) ^ _CRC_TABLE[((crc >> 8) ^ byte) & 0xFF]) & 0xFFFF
    return crc


def stuff(body: bytes) -> bytes:
    """Insert 0xFD after every FF FF FD so no header can appear inside a packet (2.0, instruction..params).

    The two bytes before ``body`` in a packet are LEN_L LEN_H, which can be FF FF: the pattern search
    starts at the body, as the SDK's addStuffing does, so a leading FD is not preceded by a match.
    """
    out = bytearray()
    for byte in body:
        out.append(byte)
        if byte == 0xFD and len(out) >= 3 and out[-3] == 0xFF and out[-2] == 0xFF:
            out.append(0xFD)
    return bytes(out)


def unstuff(body: bytes) -> bytes:
    out = bytearray()
    i = 0
    while i < len(body):
        out.append(body[i])
        if body[i] == 0xFD and len(out) >= 3 and out[-3] == 0xFF and out[-2] == 0xFF \
                and i + 1 < len(body) and body[i + 1] == 0xFD:
            i += 1  # skip the stuffed copy
        i += 1
    return bytes(out)


def encode_p2(dxl_id: int, instruction: int, params: bytes = b"") -> bytes:
    """A whole Protocol 2.0 packet (instruction, or status with instruction 0x55 and ERR first in params)."""
    body = stuff(bytes([instruction]) + bytes(params))
    length = len(body) + 2
    head = HEADER_P2 + bytes([dxl_id, length & 0xFF, length >> 8]) + body
    crc = crc16(head)
    return head + bytes([crc & 0xFF, crc >> 8])


def encode_status_p2(dxl_id: int, error: int, params: bytes = b"") -> bytes:
    return encode_p2(dxl_id, INST_STATUS, bytes([error]) + bytes(params))


def checksum_p1(data: bytes | bytearray) -> int:
    """~(ID + LEN + INST/ERR + params) & 0xFF, over everything after the two header bytes."""
    return ~sum(data) & 0xFF


def encode_p1(dxl_id: int, instruction_or_error: int, params: bytes = b"") -> bytes:
    body = bytes([dxl_id, len(params) + 2, instruction_or_error]) + bytes(params)
    return HEADER_P1 + body + bytes([checksum_p1(body)])


def encode_status_p1(dxl_id: int, error: int, params: bytes = b"") -> bytes:
    return encode_p1(dxl_id, error, params)


def encode_status(protocol: float, dxl_id: int, error: int, params: bytes = b"") -> bytes:
    return encode_status_p1(dxl_id, error, params) if protocol == 1.0 else encode_status_p2(dxl_id, error, params)


def split_packet(buf: bytes | bytearray, protocol: float) -> tuple[Packet | None, int]:
    """Find the first packet in ``buf``.

    Returns (packet, consumed): ``packet`` is None when no complete packet is there yet; ``consumed`` bytes
    at the front can be dropped (garbage before a header, a header with an impossible length, or the packet
    itself). A packet with a bad CRC/checksum is returned whole with ``intact=False``: the firmware reads
    LEN bytes before it checks, so it skips the same span.
    """
    return _split_p1(buf) if protocol == 1.0 else _split_p2(buf)


def _split_p2(buf: bytes | bytearray) -> tuple[Packet | None, int]:
    idx = bytes(buf).find(HEADER_P2)
    if idx < 0:
        # Keep a tail that may be the start of a header still arriving.
        keep = next((k for k in (3, 2, 1) if bytes(buf[-k:]) == HEADER_P2[:k]), 0)
        return None, len(buf) - keep
    if idx > 0:
        return None, idx
    if len(buf) < 7:
        return None, 0
    length = buf[5] | buf[6] << 8
    if length < 3 or length > MAX_LENGTH_P2 or buf[4] in (0xFD, 0xFF):
        return None, 1  # not a real header: resynchronise on the next one
    total = 7 + length
    if len(buf) < total:
        return None, 0
    raw = bytes(buf[:total])
    intact = crc16(raw[:-2]) == (raw[-2] | raw[-1] << 8)
    body = unstuff(raw[7:-2]) if intact else raw[7:-2]
    return Packet(raw[4], body[0], body[1:], intact), total


def _split_p1(buf: bytes | bytearray) -> tuple[Packet | None, int]:
    idx = bytes(buf).find(HEADER_P1)
    if idx < 0:
        return None, len(buf) - (1 if buf[-1:] == b"\xff" else 0)
    if idx > 0:
        return None, idx
    if len(buf) < 4:
        return None, 0
    if buf[2] == 0xFF:
        return None, 1  # FF FF FF: the header starts one byte later
    length = buf[3]
    if length < 2 or length > MAX_LENGTH_P1:
        return None, 1
    total = 4 + length
    if len(buf) < total:
        return None, 0
    raw = bytes(buf[:total])
    intact = checksum_p1(raw[2:-1]) == raw[-1]
    return Packet(raw[2], raw[4], raw[5:-1], intact), total


# ------------------------------------------------------------------ instruction parameters
def _u16(b: bytes, i: int) -> int:
    return b[i] | b[i + 1] << 8


def decode_read(params: bytes, protocol: float) -> tuple[int, int]:
    """(address, length) of a Read."""
    if protocol == 1.0:
        if len(params) != 2:
            raise MalformedPacket("read takes address and length")
        return params[0], params[1]
    if len(params) != 4:
        raise MalformedPacket("read takes address and length (2 bytes each)")
    return _u16(params, 0), _u16(params, 2)


def decode_write(params: bytes, protocol: float) -> tuple[int, bytes]:
    """(address, data) of a Write or Reg Write."""
    n = 1 if protocol == 1.0 else 2
    if len(params) <= n:
        raise MalformedPacket("write needs an address and at least one data byte")
    address = params[0] if protocol == 1.0 else _u16(params, 0)
    return address, bytes(params[n:])


def decode_sync_read(params: bytes) -> tuple[int, int, list[int]]:
    """(address, length, ids) of a Protocol 2.0 Sync Read."""
    if len(params) < 5:
        raise MalformedPacket("sync read needs address, length and at least one ID")
    return _u16(params, 0), _u16(params, 2), list(params[4:])


def decode_sync_write(params: bytes, protocol: float) -> tuple[int, dict[int, bytes]]:
    """(address, {id: data}) of a Sync Write."""
    if protocol == 1.0:
        head, address, length = 2, params[0] if params else 0, params[1] if len(params) > 1 else 0
    else:
        head = 4
        address, length = (_u16(params, 0), _u16(params, 2)) if len(params) >= 4 else (0, 0)
    block = length + 1
    if len(params) <= head or length == 0 or (len(params) - head) % block:
        raise MalformedPacket("sync write blocks do not match the data length")
    blocks: dict[int, bytes] = {}
    for i in range(head, len(params), block):
        blocks.setdefault(params[i], bytes(params[i + 1:i + block]))
    return address, blocks


def decode_bulk_read(params: bytes, protocol: float) -> list[tuple[int, int, int]]:
    """[(id, address, length)] of a Bulk Read, in the order the servos answer.

    1.0 (mx-64 firmware): 0x00, then [length, id, address] per servo; 2.0: [id, addr_L, addr_H, len_L, len_H].
    A repeated ID is served once, for its first entry (protocol1.md).
    """
    entries: list[tuple[int, int, int]] = []
    if protocol == 1.0:
        if len(params) < 4 or (len(params) - 1) % 3:
            raise MalformedPacket("bulk read takes 0x00 then [length, id, address] triples")
        triples = ((params[i + 1], params[i + 2], params[i]) for i in range(1, len(params), 3))
    else:
        if not params or len(params) % 5:
            raise MalformedPacket("bulk read takes [id, address, length] blocks of 5 bytes")
        triples = ((params[i], _u16(params, i + 1), _u16(params, i + 3)) for i in range(0, len(params), 5))
    seen = set()
    for dxl_id, address, length in triples:
        if dxl_id not in seen:
            seen.add(dxl_id)
            entries.append((dxl_id, address, length))
    return entries


def decode_bulk_write(params: bytes) -> list[tuple[int, int, bytes]]:
    """[(id, address, data)] of a Protocol 2.0 Bulk Write."""
    entries, i = [], 0
    while i < len(params):
        if i + 5 > len(params):
            raise MalformedPacket("bulk write block header is cut short")
        dxl_id, address, length = params[i], _u16(params, i + 1), _u16(params, i + 3)
        if length == 0 or i + 5 + length > len(params):
            raise MalformedPacket("bulk write block data is cut short")
        entries.append((dxl_id, address, bytes(params[i + 5:i + 5 + length])))
        i += 5 + length
    return entries
