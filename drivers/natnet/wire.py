"""Little-endian reading and writing with bounds checks: every failure names the datagram offset and
the field, so a bad packet produces one clear ``NatNetDecodeError`` instead of a struct.error."""

from __future__ import annotations

import struct
from typing import NoReturn

from uartlab.drivers.natnet.packets import MAX_NAME_LENGTH, NatNetDecodeError

_I16, _U16, _I32, _U32, _U64 = (struct.Struct(f) for f in ("<h", "<H", "<i", "<I", "<Q"))
_F32, _F64, _VEC3, _QUAT = (struct.Struct(f) for f in ("<f", "<d", "<3f", "<4f"))
# Strings are bytes on the wire (Motive writes ASCII/UTF-8); surrogateescape keeps any byte round-trippable.
_ENC = ("utf-8", "surrogateescape")


class Reader:
    """Reads fields from ``data[pos:end]``; ``ctx`` (e.g. "rigid_bodies[2]") prefixes field names in errors."""

    __slots__ = ("data", "pos", "end", "message_id", "ctx")

    def __init__(self, data: bytes, pos: int, end: int, message_id: int | None = None):
        self.data, self.pos, self.end, self.message_id, self.ctx = data, pos, end, message_id, ""

    def fail(self, reason: str, field: str, offset: int | None = None) -> NoReturn:
        name = f"{self.ctx}.{field}" if self.ctx else field
        raise NatNetDecodeError(reason, self.pos if offset is None else offset, name, self.message_id)

    @property
    def remaining(self) -> int:
        return self.end - self.pos

    def _take(self, n: int, field: str) -> int:
        at = self.pos
        if at + n > self.end:
            self.fail(f"truncated: {field} needs {n} bytes, {self.end - at} left", field)
        self.pos = at + n
        return at

    def _unpack(self, s: struct.Struct, field: str):
        return s.unpack_from(self.data, self._take(s.size, field))

    def i16(self, field: str) -> int:
        return self._unpack(_I16, field)[0]

    def u16(self, field: str) -> int:
        return self._unpack(_U16, field)[0]

    def i32(self, field: str) -> int:
        return self._unpack(_I32, field)[0]

    def u32(self, field: str) -> int:
        return self._unpack(_U32, field)[0]

    def u64(self, field: str) -> int:
        return self._unpack(_U64, field)[0]

    def f32(self, field: str) -> float:
        return self._unpack(_F32, field)[0]

    def f64(self, field: str) -> float:
        return self._unpack(_F64, field)[0]

    def vec3(self, field: str) -> tuple[float, float, float]:
        return self._unpack(_VEC3, field)

    def quat(self, field: str) -> tuple[float, float, float, float]:
        return self._unpack(_QUAT, field)

    def raw(self, n: int, field: str) -> bytes:
        at = self._take(n, field)
        return bytes(self.data[at:at + n])

    def version(self, field: str) -> tuple[int, int, int, int]:
        return tuple(self.raw(4, field))  # type: ignore[return-value]

    def f32s(self, n: int, field: str) -> list[float]:
        return list(struct.unpack_from(f"<{n}f", self.data, self._take(4 * n, field)))

    def vec3s(self, n: int, field: str) -> list[tuple[float, float, float]]:
        at = self._take(12 * n, field)
        return list(_VEC3.iter_unpack(self.data[at:at + 12 * n]))

    def count(self, field: str, item_min_bytes: int) -> int:
        """An i32 count, rejected if negative or if that many items cannot fit in what is left, so a
        corrupted count fails here (naming the count) rather than as a vague truncation later."""
        at = self.pos
        n = self.i32(field)
        if n < 0:
            self.fail(f"negative count {n}", field, at)
        if n * item_min_bytes > self.end - self.pos:
            self.fail(f"count {n} needs at least {n * item_min_bytes} bytes, {self.end - self.pos} left", field, at)
        return n

    def cstr(self, field: str) -> str:
        at = self.pos
        nul = self.data.find(b"\0", at, self.end)
        if nul < 0:
            self.fail("string has no NUL terminator before the end of the packet", field)
        self.pos = nul + 1
        return bytes(self.data[at:nul]).decode(*_ENC)

    def fixed_name(self, field: str) -> tuple[str, bytes]:
        """sSender's char[256]: the name, and any non-zero bytes after its NUL (real Motive leaves junk)."""
        blob = self.raw(MAX_NAME_LENGTH, field)
        name, _, rest = blob.partition(b"\0")
        return name.decode(*_ENC), rest.rstrip(b"\0")

    def section_size(self, field: str, enabled: bool) -> int | None:
        """NatNet >= 4.1: the i32 byte count of the section that follows (None before 4.1)."""
        if not enabled:
            return None
        at = self.pos
        n = self.i32(field)
        if n < 0 or n > self.end - self.pos:
            self.fail(f"section size {n} does not fit in the {self.end - self.pos} bytes left", field, at)
        return n

    def check_section(self, start: int, size: int | None, field: str) -> None:
        if size is not None and self.pos - start != size:
            self.fail(f"section declares {size} bytes but its contents take {self.pos - start}", field, start - 4)


class Writer:
    __slots__ = ("buf",)

    def __init__(self) -> None:
        self.buf = bytearray()

    def i16(self, v: int) -> None:
        self.buf += _I16.pack(v)

    def u16(self, v: int) -> None:
        self.buf += _U16.pack(v)

    def i32(self, v: int) -> None:
        self.buf += _I32.pack(v)

    def u32(self, v: int) -> None:
        self.buf += _U32.pack(v)

    def u64(self, v: int) -> None:
        self.buf += _U64.pack(v)

    def f32(self, v: float) -> None:
        self.buf += _F32.pack(v)

    def f64(self, v: float) -> None:
        self.buf += _F64.pack(v)

    def vec3(self, v) -> None:
        self.buf += _VEC3.pack(*v)

    def quat(self, v) -> None:
        self.buf += _QUAT.pack(*v)

    def f32s(self, values) -> None:
        self.buf += struct.pack(f"<{len(values)}f", *values)

    def raw(self, b: bytes) -> None:
        self.buf += b

    def cstr(self, s: str) -> None:
        self.buf += s.encode(*_ENC) + b"\0"

    def fixed_name(self, name: str, padding: bytes = b"") -> None:
        blob = (name.encode(*_ENC) + b"\0" + padding)[:MAX_NAME_LENGTH]
        self.buf += blob.ljust(MAX_NAME_LENGTH, b"\0")

    def version(self, v) -> None:
        self.buf += bytes(v)

    def begin_section(self, enabled: bool) -> int | None:
        """Reserve the NatNet 4.1 byte count; ``end_section`` fills it in."""
        if not enabled:
            return None
        self.buf += b"\0\0\0\0"
        return len(self.buf)

    def end_section(self, mark: int | None) -> None:
        if mark is not None:
            self.buf[mark - 4:mark] = _I32.pack(len(self.buf) - mark)
