"""rig.toml: which device is real and which is a twin, and how each is wired and calibrated.

    config = load_rig_config("rig.toml")      # ConfigError "rig.toml:12: daq.pots: ai16 does not exist ..."
    config = default_rig_config()             # the shipped all-twin rig (app/data/twin_rig.toml)

Everything is checked here, before any device is opened, so a bad file never moves a servo: unknown
sections and keys, wrong types, duplicate or out-of-range servo IDs, backends not in their family's
table (app/rig/backends.py), channels the USB-6210 does not have, calibration files that do not exist.
Each problem raises one ``ConfigError`` "FILE:LINE: KEY: reason" (the line from ``uartlab.sim.toml_lines``).
The file's own comments (app/data/twin_rig.toml) document every key; defaults here equal that file.
"""

from __future__ import annotations

import ipaddress
import math
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import overload

from uartlab.app.rig import backends
from uartlab.drivers.interfaces import ConfigError
from uartlab.drivers.mx64 import CENTER_TICKS
from uartlab.drivers.mx64_bus import WATCHDOG_MS
from uartlab.drivers.sea import SeaCalibration, SeaGeometry, sea_problem
from uartlab.drivers.usb6210 import parse_channels
from uartlab.names import MAX_SURFACE_ANGLE_DEG
from uartlab.protocols.interlocks import DEFAULT_MAX_STREAM_AGE_S as PROTOCOL_MAX_STREAM_AGE_S
from uartlab.protocols.limits import Ceilings, Limits
from uartlab.schema import DEFAULT_CONTROL_RATE_HZ
from uartlab.sim.names import POSES, TENDONS
from uartlab.sim.toml_lines import line_of_key, not_toml

FROM_TWIN = "from_twin"       # calibration taken from the twin's own constants (twin backends only)
MAX_DXL_ID = 252              # 253 is reserved, 254 is broadcast (Dynamixel Protocol 2.0)
DEFAULT_FILE = "twin_rig.toml"
TWIN_RIG = "twin"             # what every --rig takes for the shipped twin rig (no file of that name is read)


@dataclass(frozen=True)
class ActuatorsConfig:
    backend: str = "twin"
    port: str = ""                    # serial port (real); ignored for the twin, which makes its own pty
    protocol: float = 2.0
    ids: tuple[int, ...] = (1, 2, 3, 4, 5, 6)   # tendon order FDP FDS ED DI PI LUM
    baud: int = 1_000_000
    poll_rate_hz: float = 200.0       # the MX-64 driver's design rate (drivers/mx64_bus.py WATCHDOG_MS)
    seas: tuple[SeaGeometry, ...] = field(default_factory=lambda: tuple(SeaGeometry() for _ in TENDONS))
    watchdog_ms: float = WATCHDOG_MS  # Bus Watchdog: servos stop when the host is silent this long
    packet_timeout_ms: float = 0.0    # floor under the SDK's ~34 ms reply timeout; 0 = the SDK's own


@dataclass(frozen=True)
class DaqConfig:
    backend: str = "twin"
    device: str = "Dev1"
    grpc_address: str = ""            # real: "" = local NI-DAQmx, "host:port" = NI gRPC Device Server
    pots: str = "ai0:5"
    reference: str = "ai6"
    gauges: str = "ai8:13"
    rate_hz: float = 1000.0


@dataclass(frozen=True)
class SeaConfig:
    calibrations: tuple[SeaCalibration, ...] | None = None   # None: from the twin's constants


@dataclass(frozen=True)
class Nano17Config:
    calibration_file: Path | None = None    # None: the twin's synthetic file
    index: int = 1
    # dx dy dz (mm), rx ry rz (deg), ATI's order; None: the calibration store's (`calibrate nano17 --tool`), else 0
    tool_transform_mm_deg: tuple[float, ...] | None = None


@dataclass(frozen=True)
class MocapConfig:
    backend: str = "twin"
    server: str = "127.0.0.1"
    command_port: int = 1510          # NatNet's defaults
    data_port: int = 1511
    multicast: str | None = None
    local: str = "127.0.0.1"
    marker_set: str = "uart_finger"


@dataclass(frozen=True)
class TwinConfig:
    speed: float = 1.0
    seed: int = 0
    perturbation: float = 0.0
    pose: str = "Flex"
    surface_angle_deg: float | None = None


@dataclass(frozen=True)
class RecordingConfig:
    folder: Path = Path("recordings")   # relative: to the working directory at record time
    flush_interval_s: float = 1.0


# How long each stream may go quiet before a run trips (s): the protocol's defaults (see there why 0.25 s),
# and the joints (IK of each mocap frame) 0.5 s: bones untracked that long are lost.
DEFAULT_MAX_STREAM_AGE_S = {**PROTOCOL_MAX_STREAM_AGE_S, "joints": 0.5}
# Sanity bounds at load. A stream age below one tick of the control loop trips on every tick; above a few
# seconds a dead stream goes unnoticed for most of a 4 s pull.
MIN_STREAM_AGE_S = 1.0 / DEFAULT_CONTROL_RATE_HZ
MAX_STREAM_AGE_S = 5.0
# Measured on the 2-core machine: a free-motion pull at 20x settles as at 1x (0.8 s, 0.7 s at 10x); at 50x
# the loop and the twin's devices fall behind (settle 2.5 s, other angles); at 200x the devices do not start.
MAX_TWIN_SPEED = 20.0
# est.: slower is a typo (a 4 s pull would take 400 s); 0.02x was seen to run, pretension to ACTUATE in 25 s.
MIN_TWIN_SPEED = 0.01


def twin_speed_problem(speed: float) -> str | None:
    """Why a twin cannot run at ``speed`` (protocol seconds per wall second), or None."""
    if not (math.isfinite(speed) and speed > 0):
        return f"must be > 0, got {speed:g}"
    if speed < MIN_TWIN_SPEED:
        return f"{speed:g} is slower than a twin rig is run (at least {MIN_TWIN_SPEED:g}x)"
    if speed > MAX_TWIN_SPEED:
        return f"{speed:g} is faster than the twin rig keeps up with (at most {MAX_TWIN_SPEED:g}x)"
    return None


# The recorder flushes at least this often: longer puts more of a session at risk in a crash. More often than
# the minimum, each flush rewriting every dataset's partial last chunk costs more than the rig's data.
MAX_FLUSH_INTERVAL_S = 5.0
MIN_FLUSH_INTERVAL_S = 0.05
# The USB-6210 samples 250 kS/s aggregate through one multiplexed ADC (shared/device-notes.md); the control
# loop acts on a fresh tendon force each tick, so slower than its rate a tick acts on an old one.
USB6210_AGGREGATE_S_PER_S = 250_000.0
MIN_DAQ_RATE_HZ = DEFAULT_CONTROL_RATE_HZ
# est.: a sync read of six MX-64s at 1 Mbaud takes ~1.3 ms, so above 1 kHz the bus is full; below what the
# Bus Watchdog allows between packets (1000 / watchdog_ms) the servos stop between two polls.
MAX_POLL_RATE_HZ = 1000.0
# est.: the UART's spools are 20 mm; outside this a value is a slip of units (m, cm), not a spool.
SPOOL_RADIUS_RANGE_MM = (1.0, 100.0)
# [limits] may not exceed what the hardware can do at all (a typo guard, not a recommendation): 300 N is the
# MX-64's 6 N*m stall torque through a 20 mm spool; 70 N the largest Nano17 calibration's rated Fz (SI-50-0.5);
# 60 mm the calibration procedures' own travel limit (app/procedures/probe.py MAX_TRAVEL_M).
MAX_CEILING = {"max_tendon_force_N": 300.0, "max_fingertip_force_N": 70.0, "max_excursion_mm": 60.0}


@dataclass(frozen=True)
class InterlocksConfig:
    max_stream_age_s: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_MAX_STREAM_AGE_S))


@dataclass(frozen=True)
class RigConfig:
    source: str = "<defaults>"
    actuators: ActuatorsConfig = field(default_factory=ActuatorsConfig)
    daq: DaqConfig = field(default_factory=DaqConfig)
    sea: SeaConfig = field(default_factory=SeaConfig)
    nano17: Nano17Config = field(default_factory=Nano17Config)
    mocap: MocapConfig = field(default_factory=MocapConfig)
    twin: TwinConfig = field(default_factory=TwinConfig)
    recording: RecordingConfig = field(default_factory=RecordingConfig)
    calibration_store: Path | None = None   # [calibration] store: the folder of `uartlab calibrate` results
    interlocks: InterlocksConfig = field(default_factory=InterlocksConfig)
    ceilings: Ceilings = field(default_factory=Ceilings)   # [limits]: suites and procedures only tighten them
    text: str = field(default="", repr=False)   # the rig.toml text it was read from, embedded in session files

    @property
    def uses_twin(self) -> bool:
        """Some device is on the twin rig (app/rig/backends.py)."""
        return backends.any_on_twin(self)


# ------------------------------------------------------------------ reading helpers
class _File:
    def __init__(self, name: str, text: str):
        self.name, self.text = name, text

    def error(self, key: str, reason: str) -> ConfigError:
        line = line_of_key(self.text, key)
        return ConfigError(f"{self.name}:{line}: {key}: {reason}" if line else f"{self.name}: {key}: {reason}")


class _Table:
    """One TOML table; typed getters record which keys were read so leftovers are reported as unknown."""

    def __init__(self, file: _File, prefix: str, data: dict):
        self.file, self.prefix, self.data = file, prefix, data
        self.used: set[str] = set()

    def key(self, name: str) -> str:
        return f"{self.prefix}.{name}" if self.prefix else name

    def error(self, name: str, reason: str) -> ConfigError:
        return self.file.error(self.key(name), reason)

    def get(self, name: str, types: tuple[type, ...], default, what: str):
        self.used.add(name)
        if name not in self.data:
            return default
        value = self.data[name]
        # TOML booleans are Python ints: a bool is only accepted where a bool is asked for.
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            raise self.error(name, f"expected {what}, got {type(value).__name__} {value!r}")
        return value

    def string(self, name: str, default: str) -> str:
        return self.get(name, (str,), default, "a string")

    @overload
    def number(self, name: str, default: float, positive: bool = False, lo: float | None = None) -> float: ...
    @overload
    def number(self, name: str, default: None, positive: bool = False,
               lo: float | None = None) -> float | None: ...

    def number(self, name: str, default: float | None, positive: bool = False,
               lo: float | None = None) -> float | None:
        """The key's number, checked; ``default`` when it is absent (None: the caller's "not given")."""
        value = self.get(name, (int, float), default, "a number")
        if value is None:
            return None
        value = float(value)
        if not math.isfinite(value) or (positive and value <= 0) or (lo is not None and value < lo):
            bound = " and > 0" if positive else f" and >= {lo:g}" if lo is not None else ""
            raise self.error(name, f"must be finite{bound}, got {value:g}")
        return value

    def required_number(self, name: str, positive: bool = False, lo: float | None = None) -> float:
        """The key's number, checked; the key must be there."""
        value = self.number(name, None, positive, lo)
        if value is None:
            raise self.error(name, "missing")
        return value

    def integer(self, name: str, default: int, lo: int, hi: int) -> int:
        value = self.get(name, (int,), default, "an integer")
        if not lo <= value <= hi:
            raise self.error(name, f"must be in {lo}..{hi}, got {value}")
        return value

    def choice(self, name: str, default: str, options: tuple[str, ...]) -> str:
        value = self.string(name, default)
        if value not in options:
            raise self.error(name, f"unknown value {value!r}; expected one of {', '.join(options)}")
        return value

    def backend(self, family: str) -> str:
        """This section's ``backend``: a name in its family's table (app/rig/backends.py), default the twin."""
        value = self.string("backend", "twin")
        if value not in backends.FAMILIES[family]:
            raise self.error("backend", f"unknown backend {value!r} ({', '.join(backends.names(family))})")
        return value

    def table(self, name: str) -> _Table:
        self.used.add(name)
        value = self.data.get(name, {})
        if not isinstance(value, dict):
            raise self.error(name, f"expected a table [{self.key(name)}], got {type(value).__name__}")
        return _Table(self.file, self.key(name), value)

    def done(self, sub_tables: tuple[str, ...] = ()) -> None:
        for name in self.data:
            if name not in self.used and name not in sub_tables:
                raise self.error(name, "unknown " + ("section" if isinstance(self.data[name], dict) else "key"))


# ------------------------------------------------------------------ sections
def _actuators(t: _Table) -> ActuatorsConfig:
    backend = t.backend("actuators")
    port = t.string("port", "")
    if not backends.ACTUATORS[backend].on_twin and not port:
        raise t.error("port", "a real MX-64 bus needs its serial port, e.g. '/dev/ttyUSB0'")
    protocol = t.number("protocol", 2.0)
    if protocol not in (1.0, 2.0):
        raise t.error("protocol", f"Dynamixel Protocol 1.0 or 2.0, got {protocol:g}")
    ids = t.get("ids", (list,), [1, 2, 3, 4, 5, 6], "a list of 6 servo IDs")
    if len(ids) != len(TENDONS) or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
        raise t.error("ids", f"expected {len(TENDONS)} integer IDs ({' '.join(TENDONS)}), got {ids!r}")
    if bad := [i for i in ids if not 0 <= i <= MAX_DXL_ID]:
        raise t.error("ids", f"IDs must be 0..{MAX_DXL_ID}, got {bad}")
    if dupes := sorted({i for i in ids if ids.count(i) > 1}):
        raise t.error("ids", f"duplicate servo IDs {dupes}")
    baud = t.integer("baud", 1_000_000, 9600, 4_500_000)  # the MX-64's range of baud rates
    poll = t.number("poll_rate_hz", 200.0, positive=True)
    # The MX-64's Bus Watchdog register counts 20 ms units, 1..127.
    watchdog = t.number("watchdog_ms", WATCHDOG_MS, positive=True)
    if not 20.0 <= watchdog <= 127 * 20.0:
        raise t.error("watchdog_ms", f"the Bus Watchdog spans 20..2540 ms, got {watchdog:g}")
    if not 1000.0 / watchdog < poll <= MAX_POLL_RATE_HZ:
        raise t.error("poll_rate_hz", f"must be above {1000.0 / watchdog:g} Hz (a poll within each {watchdog:g} ms "
                                      f"of the Bus Watchdog) and at most {MAX_POLL_RATE_HZ:g} Hz (a full bus), "
                                      f"got {poll:g}")
    packet_timeout = t.number("packet_timeout_ms", 0.0, lo=0.0)
    if packet_timeout >= watchdog:
        raise t.error("packet_timeout_ms", f"must be shorter than watchdog_ms ({watchdog:g} ms): the servos would stop "
                                           f"while the host waits for one reply, got {packet_timeout:g}")
    radius_mm = _spool_radius_mm(t, 20.0)
    direction = t.integer("direction", 1, -1, 1)
    if direction == 0:
        raise t.error("direction", "must be +1 or -1 (-1: a mirrored spool)")
    zero = t.integer("zero_ticks", CENTER_TICKS, -(2**31), 2**31 - 1)
    seas = []
    for tendon in TENDONS:
        sub = t.table(tendon) if tendon in t.data else _Table(t.file, t.key(tendon), {})
        d = sub.integer("direction", direction, -1, 1)
        if d == 0:
            raise sub.error("direction", "must be +1 or -1 (-1: a mirrored spool)")
        seas.append(SeaGeometry(spool_radius_m=_spool_radius_mm(sub, radius_mm) * 1e-3,
                                direction=d, zero_ticks=sub.integer("zero_ticks", zero, -(2**31), 2**31 - 1)))
        sub.done()
    t.done()
    return ActuatorsConfig(backend, port, protocol, tuple(ids), baud, poll, tuple(seas), watchdog, packet_timeout)


def _spool_radius_mm(t: _Table, default: float) -> float:
    radius_mm = t.number("spool_radius_mm", default, positive=True)
    lo, hi = SPOOL_RADIUS_RANGE_MM
    if not lo <= radius_mm <= hi:
        raise t.error("spool_radius_mm", f"must be within {lo:g}-{hi:g} mm (the UART's are 20), got {radius_mm:g}")
    return radius_mm


def _daq(t: _Table) -> DaqConfig:
    backend = t.backend("daq")
    cfg = DaqConfig(backend, t.string("device", "Dev1"), t.string("grpc_address", ""), t.string("pots", "ai0:5"),
                    t.string("reference", "ai6"), t.string("gauges", "ai8:13"),
                    t.number("rate_hz", 1000.0, positive=True))
    seen: dict[int, str] = {}
    for key in ("pots", "reference", "gauges"):
        try:
            channels = parse_channels(getattr(cfg, key), key)
        except ConfigError as exc:
            raise t.error(key, str(exc).removeprefix(f"{key}: ")) from None
        for k in channels:
            if k in seen:
                raise t.error(key, f"ai{k} is already used by daq.{seen[k]}")
            seen[k] = key
        expected = {"pots": len(TENDONS), "reference": 1, "gauges": 6}[key]
        if channels and len(channels) != expected:
            raise t.error(key, f"expected {expected} channel(s) or none, got {len(channels)}")
    if not cfg.pots:
        raise t.error("pots", "the six SEA pots are needed for the tendon forces")
    fastest_hz = USB6210_AGGREGATE_S_PER_S / len(seen)
    if not MIN_DAQ_RATE_HZ <= cfg.rate_hz <= fastest_hz:
        raise t.error("rate_hz", f"must be within {MIN_DAQ_RATE_HZ:g} Hz (a fresh force each control tick) and "
                                 f"{fastest_hz:g} Hz (250 kS/s over {len(seen)} channels), got {cfg.rate_hz:g}")
    t.done()
    return cfg


def _sea(t: _Table, daq: DaqConfig) -> SeaConfig:
    if "calibration" in t.data or not any(n in t.data for n in TENDONS):
        value = t.string("calibration", FROM_TWIN)
        if value != FROM_TWIN:
            raise t.error("calibration", f"only {FROM_TWIN!r}; otherwise give [sea.FDP] ... tables")
        if not backends.DAQ[daq.backend].on_twin:
            raise t.error("calibration", f"{FROM_TWIN!r} needs daq.backend = 'twin'; give [sea.FDP] ... from a "
                                         "hanging-weight fit for the real pots")
        t.done()
        return SeaConfig(None)
    cals = []
    for tendon in TENDONS:
        if tendon not in t.data:
            raise t.error(tendon, "missing: every tendon needs v0_V and gain_N_per_V")
        sub = t.table(tendon)
        for name in ("v0_V", "gain_N_per_V"):
            if name not in sub.data:
                raise sub.error(name, "missing")
        v0_V, gain_N_per_V = sub.required_number("v0_V"), sub.required_number("gain_N_per_V")
        cals.append(SeaCalibration(v0_V=v0_V, gain_N_per_V=gain_N_per_V))
        if problem := sea_problem("v0_V", v0_V) or sea_problem("gain_N_per_V", gain_N_per_V):
            raise sub.error(*problem)
        sub.done()
    t.done()
    return SeaConfig(tuple(cals))


def _nano17(t: _Table, base: Path | None, daq: DaqConfig) -> Nano17Config:
    value = t.string("calibration_file", FROM_TWIN)
    path = None
    if value == FROM_TWIN:
        if not backends.DAQ[daq.backend].on_twin and daq.gauges:
            raise t.error("calibration_file", f"{FROM_TWIN!r} needs daq.backend = 'twin'; give the sensor's .cal file")
    else:
        path = Path(value).expanduser()
        if not path.is_absolute() and base is not None:
            path = base / path  # relative to rig.toml, so a rig folder can be moved as a whole
        if not path.is_file():
            raise t.error("calibration_file", f"no such file {str(path)!r}")
    index = t.integer("index", 1, 1, 99)
    tool = t.get("tool_transform_mm_deg", (list,), None, "a list [dx dy dz (mm), rx ry rz (deg)]")
    if tool is not None and (len(tool) != 6 or not all(isinstance(v, int | float) and not isinstance(v, bool)
                                                        for v in tool)):
        raise t.error("tool_transform_mm_deg", f"expected 6 numbers [dx dy dz rx ry rz], got {tool!r}")
    t.done()
    return Nano17Config(path, index, None if tool is None else tuple(float(v) for v in tool))


def _mocap(t: _Table) -> MocapConfig:
    server = t.string("server", "127.0.0.1")
    if not server.strip():
        raise t.error("server", "empty: give the Motive PC's address or host name")
    multicast = t.string("multicast", "")
    if multicast and not _ipv4(multicast, multicast=True):
        raise t.error("multicast", f"{multicast!r} is not an IPv4 multicast group (224.0.0.0-239.255.255.255, "
                                   "Motive's default 239.255.42.99), or \"\" for unicast")
    local = t.string("local", "127.0.0.1")
    if not _ipv4(local):   # the socket joins the group on this interface: an address, not a name
        raise t.error("local", f"{local!r} is not an IPv4 address (this PC's on the Motive network)")
    cfg = MocapConfig(t.backend("mocap"), server,
                      t.integer("command_port", 1510, 1, 65535), t.integer("data_port", 1511, 1, 65535),
                      multicast or None, local, t.string("marker_set", "uart_finger"))
    t.done()
    return cfg


def _ipv4(text: str, multicast: bool = False) -> bool:
    try:
        address = ipaddress.IPv4Address(text)
    except ValueError:
        return False
    return address.is_multicast or not multicast


def _twin(t: _Table) -> TwinConfig:
    speed = t.number("speed", 1.0, positive=True)
    if (problem := twin_speed_problem(speed)) is not None:
        raise t.error("speed", problem)
    angle = t.number("surface_angle_deg", None)
    if angle is not None and abs(angle) > MAX_SURFACE_ANGLE_DEG:
        raise t.error("surface_angle_deg", f"must be within ±{MAX_SURFACE_ANGLE_DEG:g} deg, got {angle:g}")
    cfg = TwinConfig(speed, t.integer("seed", 0, 0, 2**32 - 1),
                     _perturbation(t), t.choice("pose", "Flex", POSES), angle)
    t.done()
    return cfg


def _perturbation(t: _Table) -> float:
    value = t.number("perturbation", 0.0, lo=0.0)
    if value >= 1.0:   # as --perturbation: a spread of 1 or more makes stiffnesses and masses <= 0
        raise t.error("perturbation", f"must be a fraction in [0, 1), got {value:g}")
    return value


def _recording(t: _Table) -> RecordingConfig:
    cfg = RecordingConfig(Path(t.string("folder", "recordings")).expanduser(),
                          t.number("flush_interval_s", 1.0, positive=True))
    if cfg.flush_interval_s > MAX_FLUSH_INTERVAL_S:
        raise t.error("flush_interval_s", f"must be <= {MAX_FLUSH_INTERVAL_S:g} s (a crash loses up to this much), "
                                          f"got {cfg.flush_interval_s:g}")
    if cfg.flush_interval_s < MIN_FLUSH_INTERVAL_S:
        raise t.error("flush_interval_s", f"must be >= {MIN_FLUSH_INTERVAL_S:g} s (each flush rewrites every "
                                          f"dataset's last chunk), got {cfg.flush_interval_s:g}")
    # Whether it is writable is found when recording starts; a path through a file never will be.
    blocker = next((p for p in (cfg.folder, *cfg.folder.parents) if p.exists() and not p.is_dir()), None)
    if blocker is not None:
        raise t.error("folder", f"{str(cfg.folder)!r} cannot be a folder: {str(blocker)!r} is a file")
    t.done()
    return cfg


def _calibration(t: _Table, base: Path | None) -> Path | None:
    store = t.string("store", "")
    t.done()
    if not store:
        return None
    path = Path(store).expanduser()
    return path if path.is_absolute() or base is None else base / path


def _interlocks(t: _Table) -> InterlocksConfig:
    ages = {stream: t.number(f"{stream}_max_age_s", default, positive=True)
            for stream, default in DEFAULT_MAX_STREAM_AGE_S.items()}
    for stream, age in ages.items():
        if not MIN_STREAM_AGE_S <= age <= MAX_STREAM_AGE_S:
            raise t.error(f"{stream}_max_age_s", f"must be between one control tick ({MIN_STREAM_AGE_S:g} s) and "
                                                 f"{MAX_STREAM_AGE_S:g} s, got {age:g}")
    t.done()
    return InterlocksConfig(ages)


def _limits(t: _Table) -> Ceilings:
    """[limits]: the rig's hard limits; suites and procedures may only tighten them (protocols/limits.py)."""
    default = Limits()
    excursion = t.get("max_excursion_mm", (int, float, dict), None, "a number or a table { FDP = 20.0, ... }")
    per_tendon = dict(default.max_excursion_mm)
    if isinstance(excursion, dict):
        sub = t.table("max_excursion_mm")
        try:
            per_tendon = {tendon: sub.number(tendon, default.max_excursion_mm[tendon], positive=True)
                          for tendon in TENDONS}
            sub.done()
        except ConfigError as exc:  # an inline table { FDP = ... }: its keys have the line of max_excursion_mm
            line = line_of_key(t.file.text, t.key("max_excursion_mm"))
            raise ConfigError(str(exc).replace(f"{t.file.name}: ", f"{t.file.name}:{line}: ", 1)
                              if line and str(exc).startswith(f"{t.file.name}: ") else str(exc)) from None
    elif excursion is not None:
        per_tendon = dict.fromkeys(TENDONS, t.required_number("max_excursion_mm", positive=True))
    limits = Limits(per_tendon, t.number("max_tendon_force_N", default.max_tendon_force_N, positive=True),
                    t.number("max_fingertip_force_N", default.max_fingertip_force_N, positive=True))
    values = {"max_tendon_force_N": limits.max_tendon_force_N, "max_fingertip_force_N": limits.max_fingertip_force_N,
              "max_excursion_mm": max(per_tendon.values())}
    for key, value in values.items():
        if value > MAX_CEILING[key]:
            raise t.error(key, f"must be <= {MAX_CEILING[key]:g} (what the hardware can do at all), got {value:g}")
    t.done()
    return Ceilings(limits, f"{t.file.name} [limits]")


# ------------------------------------------------------------------ entry points
def parse_rig_config(text: str, name: str = "rig.toml", base: Path | None = None) -> RigConfig:
    """Validate rig.toml text; ``name`` goes into messages, ``base`` resolves relative file paths."""
    file = _File(name, text)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(not_toml(name, exc, text)) from None
    root = _Table(file, "", data)
    actuators = _actuators(root.table("actuators"))
    daq = _daq(root.table("daq"))
    config = RigConfig(name, actuators, daq, _sea(root.table("sea"), daq), _nano17(root.table("nano17"), base, daq),
                       _mocap(root.table("mocap")), _twin(root.table("twin")), _recording(root.table("recording")),
                       _calibration(root.table("calibration"), base), _interlocks(root.table("interlocks")),
                       _limits(root.table("limits")), text)
    root.done()
    return config


def load_rig_config(path: str | Path) -> RigConfig:
    """The rig file at ``path``; TWIN_RIG: the shipped twin rig."""
    if str(path) == TWIN_RIG:
        return default_rig_config()
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not a rig configuration: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the rig configuration: "
                          f"{(exc.strerror or str(exc)).lower()}") from None
    return parse_rig_config(text, str(path), path.resolve().parent)


def default_rig_config() -> RigConfig:
    """The shipped all-twin rig: runs anywhere, no hardware."""
    ref = resources.files("uartlab.app") / "data" / DEFAULT_FILE
    return parse_rig_config(ref.read_text(encoding="utf-8"), DEFAULT_FILE, None)
