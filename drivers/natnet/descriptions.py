"""NAT_MODELDEF as data: the descriptions Motive sends for what it streams (PacketClient.cpp
``UnpackDescription``; type ids 0..6). Offsets and positions are in metres in Motive's frame."""

from __future__ import annotations

from dataclasses import dataclass, field

Vec3 = tuple[float, float, float]
Quat = tuple[float, float, float, float]  # qx, qy, qz, qw


class DescriptionType:
    MARKER_SET, RIGID_BODY, SKELETON, FORCE_PLATE, DEVICE, CAMERA, ASSET = range(7)


@dataclass(slots=True)
class MarkerSetDescription:
    TYPE = DescriptionType.MARKER_SET
    name: str
    marker_names: list[str] = field(default_factory=list)


@dataclass(slots=True)
class RigidBodyMarkerDescription:
    offset_m: Vec3
    active_label: int = 0       # required active-marker label; 0 for passive markers
    name: str | None = None     # >= 4.0


@dataclass(slots=True)
class RigidBodyDescription:
    TYPE = DescriptionType.RIGID_BODY
    name: str                   # >= 2.0 (NatNet 1.x bodies have no name: "")
    id: int
    parent_id: int = -1
    offset_m: Vec3 = (0.0, 0.0, 0.0)
    rotation_offset: Quat | None = None  # >= 4.2
    markers: list[RigidBodyMarkerDescription] = field(default_factory=list)  # >= 3.0


@dataclass(slots=True)
class SkeletonDescription:
    TYPE = DescriptionType.SKELETON
    name: str
    id: int
    bones: list[RigidBodyDescription] = field(default_factory=list)


@dataclass(slots=True)
class ForcePlateDescription:
    TYPE = DescriptionType.FORCE_PLATE
    id: int
    serial: str
    width_m: float
    length_m: float
    origin_m: Vec3
    calibration: list[list[float]]   # 12 x 12
    corners_m: list[Vec3]            # 4
    plate_type: int
    channel_data_type: int
    channel_names: list[str] = field(default_factory=list)


@dataclass(slots=True)
class DeviceDescription:
    TYPE = DescriptionType.DEVICE
    id: int
    name: str
    serial: str
    device_type: int
    channel_data_type: int
    channel_names: list[str] = field(default_factory=list)


@dataclass(slots=True)
class CameraDescription:
    TYPE = DescriptionType.CAMERA
    name: str
    position_m: Vec3
    orientation: Quat


@dataclass(slots=True)
class AssetMarkerDescription:
    name: str
    id: int
    position_m: Vec3
    size_m: float
    params: int


@dataclass(slots=True)
class AssetDescription:
    TYPE = DescriptionType.ASSET
    name: str
    asset_type: int
    id: int
    rigid_bodies: list[RigidBodyDescription] = field(default_factory=list)
    markers: list[AssetMarkerDescription] = field(default_factory=list)


@dataclass(slots=True)
class UnknownDescription:
    """A type this decoder does not know, skipped by its byte count (only possible from NatNet 4.1)."""

    type: int
    body: bytes


Description = (MarkerSetDescription | RigidBodyDescription | SkeletonDescription | ForcePlateDescription
               | DeviceDescription | CameraDescription | AssetDescription | UnknownDescription)


@dataclass(slots=True)
class ModelDefinitions:
    """NAT_MODELDEF: the descriptions in the order sent (the order matters for exact re-encoding)."""

    MESSAGE_ID = 5
    descriptions: list[Description] = field(default_factory=list)

    def _of(self, kind: type) -> list:
        return [d for d in self.descriptions if isinstance(d, kind)]

    @property
    def marker_sets(self) -> list[MarkerSetDescription]:
        return self._of(MarkerSetDescription)

    @property
    def rigid_bodies(self) -> list[RigidBodyDescription]:
        return self._of(RigidBodyDescription)

    @property
    def skeletons(self) -> list[SkeletonDescription]:
        return self._of(SkeletonDescription)

    @property
    def force_plates(self) -> list[ForcePlateDescription]:
        return self._of(ForcePlateDescription)

    @property
    def devices(self) -> list[DeviceDescription]:
        return self._of(DeviceDescription)

    @property
    def cameras(self) -> list[CameraDescription]:
        return self._of(CameraDescription)

    @property
    def assets(self) -> list[AssetDescription]:
        return self._of(AssetDescription)

    def rigid_body_by_name(self, name: str) -> RigidBodyDescription | None:
        return next((b for b in self.rigid_bodies if b.name == name), None)
