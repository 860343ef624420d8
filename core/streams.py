"""What flows through the application: self-describing streams of timestamped records.

Every stream (actuators, DAQ, mocap, joints, runner, model) is described once by a ``StreamSpec`` declared
in uartlab.schema — its fields with dtype, per-sample shape, units, frame and a description — and emits
``Record`` blocks: n samples of every field, the first axis being time. Every record carries the host
monotonic time of each sample (``host_time_s``) and, where the device has one, its own clock as an
ordinary field (DAQ sample index, NatNet frame number and timestamp, Dynamixel Realtime Tick). The hub
hands records to consumers; the recorder writes one HDF5 dataset per field; replay reads them back into
the same records. Bluesky's descriptor/event documents are the model.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from uartlab.schema import HOST_TIME, EventKind, FieldSpec, StreamSpec

__all__ = ["HOST_TIME", "Event", "EventKind", "FieldSpec", "Record", "StreamSpec"]


@dataclass
class Record:
    """n samples of one stream: ``host_time_s`` (n,) and each field (n, *shape)."""

    stream: str
    host_time_s: np.ndarray
    data: dict[str, np.ndarray] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.host_time_s.shape[0])

    def validate(self, spec: StreamSpec) -> None:
        """Raise ValueError naming the stream and field if the record does not match its descriptor."""
        n = len(self)
        if self.host_time_s.ndim != 1:
            raise ValueError(f"stream {spec.name}: host_time_s must be 1-D, got shape {self.host_time_s.shape}")
        missing = {f.name for f in spec.fields} - set(self.data)
        extra = set(self.data) - {f.name for f in spec.fields}
        if missing or extra:
            raise ValueError(f"stream {spec.name}: missing fields {sorted(missing)}, unknown fields {sorted(extra)}")
        for f in spec.fields:
            arr = np.asarray(self.data[f.name])
            if arr.shape != (n, *f.shape):
                raise ValueError(f"stream {spec.name}: field {f.name} has shape {arr.shape}, "
                                 f"expected {(n, *f.shape)}")

    @staticmethod
    def single(stream: str, host_time_s: float, **values) -> Record:
        """A one-sample record from scalars/arrays (adds the leading time axis)."""
        return Record(stream, np.array([host_time_s], dtype=float),
                      {k: np.asarray(v)[None, ...] for k, v in values.items()})

    def since(self, host_time_s: float) -> Record:
        """The samples at or after ``host_time_s`` (this record itself when all are)."""
        keep = self.host_time_s >= host_time_s
        if keep.all():
            return self
        return Record(self.stream, self.host_time_s[keep], {k: np.asarray(v)[keep] for k, v in self.data.items()})

    @staticmethod
    def concatenate(records: list[Record]) -> Record:
        if not records:
            raise ValueError("nothing to concatenate")
        keys = records[0].data.keys()
        return Record(records[0].stream, np.concatenate([r.host_time_s for r in records]),
                      {k: np.concatenate([np.asarray(r.data[k]) for r in records]) for k in keys})


@dataclass(frozen=True)
class Event:
    """Something that happened: phase change, fault, operator action. Goes into the file's events table."""

    host_time_s: float
    kind: EventKind | str           # a plain str only for an unknown kind read from a file (EventKind.read)
    source: str                     # who says so: "runner", "actuators", "daq", "operator" ...
    message: str
    # From a session file played back (app/record/player.py): shown and logged as it happened, acted on by
    # nothing (no interlock, latch or fault handling); never written to a file.
    replayed: bool = False
