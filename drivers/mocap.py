"""OptiTrack motion capture (Motive over NatNet) behind the ``Mocap`` interface.

    with OptiTrackMocap("192.168.0.106") as mocap:      # connect: server info, frame rate, model definitions
        sample = mocap.latest()                         # MocapSample, markers (n, 3) in our marker order

Marker order and the id mapping rule
------------------------------------
Our marker order is ``marker_names`` if given, else the names of the marker set ``marker_set``
("uart_finger", what the Motive twin and the lab's Motive project stream) in the order Motive lists them.
NatNet labels each marker of a frame only by an id, ``model_id << 16 | marker_id``. Motive numbers a
rigid body's markers ``body.id << 16 | k`` with k = 1, 2, ... in the order of that body's marker
descriptions, and NatNet >= 4.0 gives each description a name. So, per name:

1. an explicit ``marker_ids[name]`` wins (for layouts the rule below does not cover: an asset's markers,
   NatNet < 4.0 bodies without marker names, a relabelled take);
2. else the rigid-body marker description of that name gives ``body.id << 16 | (k + 1)``;
3. else connect() raises ConfigError naming the markers it could not map.

What a sample holds, and the staleness rule
-------------------------------------------
- A marker flagged occluded by Motive (Motive still sends it, at its last seen position) or absent from
  the frame is NaN: a filled-in position would look like a measurement to the IK.
- Rigid bodies by name; a body Motive does not track in this frame is NaN (pos and quat) for the same reason.
- ``mid_exposure_ticks``: the cameras' mid-exposure on Motive's high-resolution clock (NatNet >= 3.0), else None.
- ``latest()`` returns None until the first frame, as long as the stream is not stale; once no frame
  has arrived for more than ``stale_after_s`` (since the last frame, or since connect when none came)
  it raises ``DeviceError("OptiTrack", "no frame for N ms ...")`` rather than hand back an old pose.
  It recovers by itself when frames come back; ``stats`` keeps the gaps, stale events and malformed counts.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import numpy as np
from uartlab.drivers.interfaces import ConfigError, DeviceError, MocapSample
from uartlab.drivers.natnet.client import ClientStats, NatNetClient, NatNetError, ReceivedFrame
from uartlab.drivers.natnet.descriptions import ModelDefinitions
from uartlab.drivers.natnet.packets import NATNET_DEFAULT_COMMAND_PORT, NATNET_DEFAULT_DATA_PORT

DEVICE = "OptiTrack"
MARKER_SET = "uart_finger"   # the marker set of the lab's Motive project (and of drivers.twins.motive)
# 100 ms = 10 frames at the Flex V100:R2's 100 Hz: longer than any jitter seen on a quiet link, short
# enough that the live model and the interlocks stop trusting the pose within a tenth of a second.
STALE_AFTER_S = 0.1


def marker_id_map(model: ModelDefinitions, names: Sequence[str],
                  explicit: Mapping[str, int] | None = None) -> dict[str, int]:
    """NatNet labelled-marker id of every name, by the rule in the module docstring; ConfigError if any is missing."""
    by_name: dict[str, int] = {}
    for body in model.rigid_bodies:
        for k, marker in enumerate(body.markers):
            if marker.name:
                by_name.setdefault(marker.name, body.id << 16 | (k + 1))
    by_name.update(explicit or {})
    missing = [n for n in names if n not in by_name]
    if missing:
        known = sorted(by_name)
        raise ConfigError(f"{DEVICE}: no NatNet id for markers {missing}: not named in any rigid body's "
                          f"model definition ({known or 'none named'}); give them in marker_ids")
    ids = {n: by_name[n] for n in names}
    dupes = sorted({n for n in names if list(ids.values()).count(ids[n]) > 1})
    if dupes:
        raise ConfigError(f"{DEVICE}: markers {dupes} map to the same NatNet id; check marker_ids")
    return ids


class OptiTrackMocap:
    """The ``Mocap`` interface over a NatNetClient; see the module docstring for the mapping and staleness rules."""

    def __init__(self, server: str = "127.0.0.1", command_port: int = NATNET_DEFAULT_COMMAND_PORT,
                 data_port: int = NATNET_DEFAULT_DATA_PORT, multicast: str | None = None, *,
                 marker_names: Sequence[str] | None = None, marker_ids: Mapping[str, int] | None = None,
                 marker_set: str = MARKER_SET, stale_after_s: float = STALE_AFTER_S,
                 local: str = "127.0.0.1", connect_timeout_s: float = 2.0):
        if stale_after_s <= 0:
            raise ConfigError(f"{DEVICE}: stale_after_s must be > 0, got {stale_after_s}")
        self.client = NatNetClient(server, command_port, data_port, local, multicast, stale_after_s=stale_after_s)
        self.marker_set, self.stale_after_s, self.connect_timeout_s = marker_set, stale_after_s, connect_timeout_s
        self._wanted_names = list(marker_names) if marker_names is not None else None
        self._explicit_ids = dict(marker_ids or {})
        self.marker_names: list[str] = []
        self.marker_ids: list[int] = []
        self.body_names: dict[int, str] = {}
        self.rate_hz: float | None = None     # Motive's frame rate, for filters downstream (None if not answered)
        self._index: dict[int, int] = {}
        self._cached: tuple[ReceivedFrame, MocapSample] | None = None

    # ------------------------------------------------------------ lifecycle
    def connect(self) -> None:
        """Shake hands, read the frame rate and model definitions, and build the marker mapping."""
        try:
            self.client.connect(self.connect_timeout_s)
            model = self.client.request_model_definitions(self.connect_timeout_s)
        except NatNetError as e:
            self.client.close()
            raise DeviceError(DEVICE, str(e)) from e
        try:
            self._map(model)
        except ConfigError:
            self.client.close()
            raise
        try:
            self.rate_hz = self.client.frame_rate_hz(self.connect_timeout_s)
        except NatNetError:  # old servers may not answer "FrameRate"; nothing here depends on it
            self.rate_hz = None

    def _map(self, model: ModelDefinitions) -> None:
        names = self._wanted_names
        if names is None:
            sets = [s for s in model.marker_sets if s.name == self.marker_set]
            if not sets:
                raise ConfigError(f"{DEVICE}: Motive streams no marker set {self.marker_set!r} "
                                  f"(has {[s.name for s in model.marker_sets]}); give marker_names")
            names = sets[0].marker_names
        ids = marker_id_map(model, names, self._explicit_ids)
        self.marker_names, self.marker_ids = list(names), [ids[n] for n in names]
        self._index = {marker_id: i for i, marker_id in enumerate(self.marker_ids)}
        self.body_names = {b.id: b.name for b in model.rigid_bodies}

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> OptiTrackMocap:
        self.connect()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------ samples
    def latest(self) -> MocapSample | None:
        """The newest frame as a sample; None before the first frame; DeviceError once the stream is stale."""
        if self.client.is_stale:
            ms = 1e3 * self.client.seconds_since_last_frame
            raise DeviceError(DEVICE, f"no frame for {ms:.0f} ms (stale after {1e3 * self.stale_after_s:.0f} ms): "
                                      f"is Motive streaming to this host, and is the network up?")
        rx = self.client.latest()
        if rx is None:
            return None
        cached = self._cached
        if cached is not None and cached[0] is rx:  # polled faster than the frame rate: convert once per frame
            return cached[1]
        sample = self.to_sample(rx)
        self._cached = (rx, sample)
        return sample

    def frames(self, timeout_s: float | None = 1.0) -> Iterator[ReceivedFrame]:
        """Every queued frame as received (``to_sample`` makes it a sample; the raw frame also has the camera
        mid-exposure ticks); ends when none comes in timeout_s."""
        return self.client.frames(timeout_s)

    def samples(self, timeout_s: float | None = 1.0) -> Iterator[MocapSample]:
        """Every queued frame in order (for recorders and IK over a trajectory); ends when none comes in timeout_s."""
        for rx in self.frames(timeout_s):
            yield self.to_sample(rx)

    def to_sample(self, rx: ReceivedFrame) -> MocapSample:
        """One received frame -> MocapSample in our marker order (NaN for occluded or absent markers)."""
        frame = rx.frame
        markers = np.full((len(self.marker_ids), 3), np.nan)
        for m in frame.labeled_markers:
            i = self._index.get(m.id)
            if i is not None and not m.occluded:
                markers[i] = m.position_m
        bodies: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for b in frame.rigid_bodies:
            name = self.body_names.get(b.id, f"rigid_body_{b.id}")  # a body added after connect keeps its id
            if b.tracking_valid:
                bodies[name] = (np.array(b.position_m), np.array(b.orientation))
            else:
                bodies[name] = (np.full(3, np.nan), np.full(4, np.nan))
        device_time_s = frame.timestamp_s if frame.timestamp_s is not None else float("nan")
        return MocapSample(rx.host_time_s, frame.frame_number, float(device_time_s), markers, bodies,
                           frame.camera_mid_exposure_ticks)

    # ------------------------------------------------------------ health
    @property
    def is_stale(self) -> bool:
        return self.client.is_stale

    @property
    def stats(self) -> ClientStats:
        """The client's counters: frames, gaps (frames skipped), gap_events, malformed, dropped, stale_events ..."""
        return self.client.stats

    @property
    def frame_gaps(self) -> int:
        return self.client.stats.gaps

    @property
    def malformed(self) -> int:
        return self.client.stats.malformed
