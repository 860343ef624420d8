"""Records, events and stream descriptors as ZeroMQ multipart messages: what the core and its clients say.

A record is ``[topic, header, host_time_s, field 1, ..., field k]``: ``topic`` the stream's name (what a SUB
socket filters on), ``header`` JSON ``{"kind": "record", "stream", "n", "fields": [[name, dtype, shape], ...]}``
in the order of the frames after it, ``host_time_s`` n float64s, and each field's raw bytes (n * shape of its
dtype, C order), sent without a copy. An event is ``[b"events", JSON {"kind": "event", "t", "event", "source",
"message"}]``. The receiver checks a record against the StreamSpec the core sent at attach (``spec_to_dict``,
built from uartlab.schema's own declarations) and refuses a mismatch with one line (``WireError``).
Everything here is light (numpy, json, the package root) so the client loads no rig.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict
from enum import StrEnum
from typing import Any

import numpy as np
from uartlab.errors import (
    ConfigError,
    DeviceError,
    InputFileError,
    InterlockError,
    OutputError,
    RecordingError,
    UartlabError,
)
from uartlab.schema import EVENTS, EventKind, FieldSpec, StreamSpec
from uartlab.streams import Event, Record

# The errors a reply can name (``"kind"``) for the client to raise again, so a CLI on a core exits as if the
# work ran in its own process; any other failure is "internal".
ERROR_KINDS: dict[str, type[Exception]] = {k.__name__: k for k in (
    ConfigError, InputFileError, DeviceError, OutputError, RecordingError, InterlockError, UartlabError)}


def error_kind(exc: BaseException) -> str:
    """The nearest kind of ``exc`` a client knows; ValueError is bad input, OSError a device or file."""
    for kind in type(exc).__mro__:
        if kind.__name__ in ERROR_KINDS:
            return kind.__name__
    if isinstance(exc, ValueError):
        return ConfigError.__name__
    if isinstance(exc, OSError):
        return OutputError.__name__
    return "internal"


class Kind(StrEnum):
    """The kinds of message header, the one declaration of them."""

    RECORD = "record"
    EVENT = "event"


class WireError(ValueError):
    """A message that does not match what the core declared: one line naming the stream and field."""


# ------------------------------------------------------------------ descriptors
def spec_to_dict(spec: StreamSpec) -> dict[str, Any]:
    return asdict(spec)


def spec_from_dict(d: dict[str, Any]) -> StreamSpec:
    fields = tuple(FieldSpec(**{**f, "shape": tuple(f["shape"])}) for f in d["fields"])
    return StreamSpec(d["name"], d["device"], fields, d.get("nominal_rate_hz"), d.get("device_clock"))


# ------------------------------------------------------------------ records and events
def encode(item: Record | Event, spec: StreamSpec | None = None) -> list[Any]:
    """The frames of a record (fields in ``spec``'s order and dtype when given) or an event."""
    if isinstance(item, Event):
        return [EVENTS.encode(), _event_json(item)]
    names = [f.name for f in spec.fields] if spec is not None else list(item.data)
    arrays = [np.ascontiguousarray(item.data[n], dtype=spec.field(n).dtype if spec is not None else None)
              for n in names]
    header = {"kind": Kind.RECORD, "stream": item.stream, "n": len(item),
              "fields": [[n, a.dtype.str, list(a.shape[1:])] for n, a in zip(names, arrays, strict=True)]}
    host = np.ascontiguousarray(item.host_time_s, dtype="<f8")
    return [item.stream.encode(), json.dumps(header).encode(), host.data, *(a.data for a in arrays)]


def _event_json(event: Event) -> bytes:
    return json.dumps({"kind": Kind.EVENT, "t": event.host_time_s, "event": str(event.kind),
                       "source": event.source, "message": event.message}).encode()


def decode(frames: Sequence[Any], specs: dict[str, StreamSpec]) -> Record | Event:
    """A Record or Event from its frames, checked against ``specs`` (stream name -> StreamSpec)."""
    if len(frames) < 2:
        raise WireError(f"a message of {len(frames)} frame(s): expected a topic and a header")
    header = _json(frames[1])
    kind = header.get("kind")
    if kind == Kind.EVENT:
        return Event(float(header["t"]), EventKind.read(header["event"]), header["source"], header["message"])
    if kind != Kind.RECORD:
        raise WireError(f"a message of kind {kind!r}: expected {Kind.RECORD!r} or {Kind.EVENT!r}")
    return _record(header, frames[2:], specs)


def record_frame_count(header_frame: Any) -> int:
    """How many frames a record has after its topic (its header, host time and one per field)."""
    return 2 + len(_json(header_frame)["fields"])


def _record(header: dict, frames: Sequence[Any], specs: dict[str, StreamSpec]) -> Record:
    stream, n = header["stream"], int(header["n"])
    spec = specs.get(stream)
    if spec is None:
        raise WireError(f"stream {stream!r}: not declared by the core (it declared {', '.join(sorted(specs))})")
    layout = _layout(spec, header["fields"])
    if len(frames) != 1 + len(layout):
        raise WireError(f"stream {stream}: {len(frames)} data frames, expected {1 + len(layout)}")
    host = np.frombuffer(_buffer(frames[0]), dtype="<f8")
    if host.shape != (n,):
        raise WireError(f"stream {stream}: host_time_s has {host.size} values, the header says {n}")
    data = {}
    for (name, dtype, shape, sample_bytes), frame in zip(layout, frames[1:], strict=True):
        buf = _buffer(frame)
        if len(buf) != n * sample_bytes:
            raise WireError(f"stream {stream}: field {name} has {len(buf)} bytes, expected {n * sample_bytes}")
        data[name] = np.frombuffer(buf, dtype=dtype).reshape((n, *shape))
    return Record(stream, host, data)


# A stream's fields as they came on the wire, checked against its declaration once per layout: a viewer
# decodes hundreds of messages a second, and building dtypes and shapes for each was most of the decode.
_Layout = tuple[tuple[str, np.dtype, tuple[int, ...], int], ...]
_LAYOUTS: dict[tuple[int, str], tuple[StreamSpec, _Layout]] = {}


def _layout(spec: StreamSpec, fields: list) -> _Layout:
    key = (id(spec), json.dumps(fields))
    known = _LAYOUTS.get(key)
    if known is not None and known[0] is spec:
        return known[1]
    if [f[0] for f in fields] != [f.name for f in spec.fields]:
        raise WireError(f"stream {spec.name}: fields {[f[0] for f in fields]} on the wire, the core declared "
                        f"{[f.name for f in spec.fields]}")
    layout = []
    for name, dtype, shape in fields:
        declared = spec.field(name)
        if np.dtype(dtype) != np.dtype(declared.dtype) or tuple(shape) != declared.shape:
            raise WireError(f"stream {spec.name}: field {name} is {np.dtype(dtype)} {tuple(shape)} on the wire, "
                            f"the core declared {np.dtype(declared.dtype)} {declared.shape}")
        layout.append((name, np.dtype(dtype), tuple(shape), math.prod(shape) * np.dtype(dtype).itemsize))
    if len(_LAYOUTS) > 1000:   # specs come and go (a core restarted): forget the old ones
        _LAYOUTS.clear()
    _LAYOUTS[key] = (spec, tuple(layout))
    return tuple(layout)


def _buffer(frame: Any) -> memoryview:
    return memoryview(frame.buffer if hasattr(frame, "buffer") else frame).cast("B")


def _json(frame: Any) -> dict:
    try:
        value = json.loads(bytes(_buffer(frame)))
    except (ValueError, UnicodeDecodeError) as exc:
        raise WireError(f"a message header that is not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise WireError("a message header that is not a JSON object")
    return value


# ------------------------------------------------------------------ requests and replies
def dumps(value: Any) -> bytes:
    return json.dumps(value, default=_default).encode()


def loads(frame: Any) -> dict:
    return _json(frame)


def _default(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON")
