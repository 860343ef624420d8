"""The calibration store: versioned, dated TOML files with provenance, a "current" set, staleness.

Layout (a plain folder a lab engineer can read, diff and back up):

    calibrations/
      current.toml                     which file of each kind the rig uses now
      sea/2026-12-02_1.toml            one file per accepted calibration, never overwritten
      sea/2026-12-02_2.toml
      mocap/2026-12-01_1.toml ...

Each file: ``schema``, ``kind``, ``[provenance]`` (who, when in UTC, rig, method, uartlab version, notes),
``[values]`` (what the rig or the model uses) and ``[residuals]`` (how well the fit did). A file is
written only after a procedure has succeeded (a failed procedure raises CalibrationError before this
module is reached), to a temporary name first and then renamed, so a crash never leaves half a file.

Staleness: each kind has an age limit (``MAX_AGE``, why in the comments); ``stale_warnings`` lists what
is missing or too old, for the rig to show before a run.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
import tomli_w
from uartlab.calibration.record_checks import check_values
from uartlab.errors import CalibrationError
from uartlab.sim.toml_lines import decode_error, line_of_key

SCHEMA = "uartlab.calibration/1"
CURRENT = "current.toml"
# How long each calibration is trusted (est.: lab practice for these devices; override per store call).
MAX_AGE: dict[str, dt.timedelta] = {
    "sea": dt.timedelta(days=30),         # pot gain and zero drift slowly; re-hang weights monthly
    "nano17": dt.timedelta(days=1),       # the tare drifts with temperature: at least once per day
    "servo_zero": dt.timedelta(days=1),   # tendons creep and knots settle: every day of experiments
    "mocap": dt.timedelta(days=1),        # a bumped camera or re-glued marker invalidates it
    "moment_arms": dt.timedelta(days=180),  # changes only when the finger is rebuilt
    "model": dt.timedelta(days=180),      # identified from trials; redo after a rebuild
}
KINDS = tuple(MAX_AGE)
_NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})_(\d+)\.toml$")


@dataclass
class Provenance:
    operator: str = ""
    rig: str = "twin"
    method: str = ""
    created_utc: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.UTC).replace(microsecond=0))
    software: str = ""
    notes: str = ""


@dataclass
class CalibrationRecord:
    """One stored calibration. ``values`` and ``residuals`` are TOML-able (numbers, strings, lists, tables)."""

    kind: str
    values: dict[str, Any]
    residuals: dict[str, Any] = field(default_factory=dict)
    provenance: Provenance = field(default_factory=Provenance)
    path: Path | None = None
    text: str = field(default="", repr=False, compare=False)   # the file's text as read (for error lines)

    def error(self, key: str, reason: str) -> CalibrationError:
        """A CalibrationError about this record's ``key``: ``store calibration, FILE:LINE: key: reason``."""
        return CalibrationError("store", f"{key}: {reason}", _where(self.path or Path("<record>"), self.text, key))

    def to_toml(self) -> str:
        p = self.provenance
        doc = {
            "schema": SCHEMA, "kind": self.kind,
            "provenance": {"operator": p.operator, "rig": p.rig, "method": p.method,
                           "created_utc": p.created_utc, "software": p.software or _version(), "notes": p.notes},
            "values": plain(self.values),
            "residuals": plain(self.residuals),
        }
        return tomli_w.dumps(doc)

    def age(self, now: dt.datetime | None = None) -> dt.timedelta:
        now = now or dt.datetime.now(dt.UTC)
        return now - self.provenance.created_utc


def plain(value: Any) -> Any:
    """numpy scalars and arrays -> floats and lists; drop None (TOML has no null); recurse into tables."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, np.ndarray):
        return plain(value.tolist())
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, np.bool_ | bool):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating | float):
        return float(value)
    return value


def read_record(path: str | Path) -> CalibrationRecord:
    """Load one calibration file; CalibrationError names the file and the key that is wrong."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise CalibrationError("store", f"not a calibration file: not UTF-8 text (byte {exc.start})",
                               str(path)) from None
    except OSError as exc:
        raise CalibrationError("store", f"cannot read: {(exc.strerror or str(exc)).lower()}", str(path)) from None
    return parse_record(text, path)


def parse_record(text: str, path: str | Path) -> CalibrationRecord:
    """One calibration file's text (from the store, or as a session file embedded it); ``path`` names it.
    Every problem is a CalibrationError ``store calibration, FILE:LINE: key: reason``."""
    path = Path(path)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _not_toml(path, exc, text) from None

    def fail(key: str, reason: str) -> NoReturn:
        raise CalibrationError("store", f"{key}: {reason}", _where(path, text, key))

    if doc.get("schema") != SCHEMA:
        fail("schema", f"expected {SCHEMA!r}, got {doc.get('schema')!r}" if "schema" in doc else
             f"missing (expected {SCHEMA!r}): not a uartlab calibration file")
    kind = doc.get("kind")
    if kind not in KINDS:
        fail("kind", f"expected one of {', '.join(KINDS)}, got {kind!r}")
    prov = doc.get("provenance", {})
    if not isinstance(prov, dict):
        fail("provenance", f"must be a table, got {prov!r}")
    created = prov.get("created_utc")
    if not isinstance(created, dt.datetime):
        fail("provenance.created_utc", "missing or not a date-time")
    if created.tzinfo is None:
        created = created.replace(tzinfo=dt.UTC)
    provenance = Provenance(str(prov.get("operator", "")), str(prov.get("rig", "")), str(prov.get("method", "")),
                            created, str(prov.get("software", "")), str(prov.get("notes", "")))
    values = doc.get("values")
    if not isinstance(values, dict):
        fail("values", "missing table" if values is None else f"must be a table, got {values!r}")
    residuals = doc.get("residuals", {})
    if not isinstance(residuals, dict):
        fail("residuals", f"must be a table, got {residuals!r}")
    check_values(kind, values, fail)
    return CalibrationRecord(kind, values, residuals, provenance, path, text)


def _where(path: Path, text: str, key: str) -> str:
    """``FILE:LINE`` of a key, ``FILE`` when the line is not known."""
    line = line_of_key(text, key.split("[", 1)[0])
    return f"{path}:{line}" if line else str(path)


def _not_toml(path: Path, exc: ValueError, text: str) -> CalibrationError:
    line, reason = decode_error(exc, text)
    return CalibrationError("store", f"not valid TOML: {reason}", f"{path}:{line}" if line else str(path))


class CalibrationStore:
    """A folder of calibration files (see the module docstring)."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    # ------------------------------------------------------------ writing
    def save(self, record: CalibrationRecord, make_current: bool = True) -> Path:
        """Write ``record`` as the next version of its kind for its date; make it current. Returns the path."""
        if record.kind not in KINDS:
            raise CalibrationError("store", f"unknown kind {record.kind!r}; expected one of {', '.join(KINDS)}")
        folder = self.root / record.kind
        folder.mkdir(parents=True, exist_ok=True)
        date = record.provenance.created_utc.date().isoformat()
        n = 1 + max((int(m[2]) for f in folder.iterdir() if (m := _NAME.match(f.name)) and m[1] == date),
                    default=0)
        path = folder / f"{date}_{n}.toml"
        _atomic_write(path, record.to_toml())
        record.path = path
        if make_current:
            self.set_current(record.kind, path)
        return path

    def set_current(self, kind: str, path: str | Path) -> None:
        """Point the current set's ``kind`` at ``path`` (a file of that kind inside this store)."""
        path = Path(path)
        rec = read_record(path)
        if rec.kind != kind:
            raise CalibrationError("store", f"{path.name} is a {rec.kind} calibration, not {kind}", str(path))
        current = self._current_map()
        current[kind] = path.resolve().relative_to(self.root.resolve()).as_posix()
        _atomic_write(self.root / CURRENT, tomli_w.dumps({"schema": SCHEMA, "current": current}))

    # ------------------------------------------------------------ reading
    def _current_map(self) -> dict[str, str]:
        path = self.root / CURRENT
        if self.root.exists() and not self.root.is_dir():
            raise CalibrationError("store", "is a file, not a calibration store folder", str(self.root))
        if not path.exists():
            return {}
        try:
            text = path.read_text(encoding="utf-8")
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise _not_toml(path, exc, text) from None
        except UnicodeDecodeError as exc:
            raise CalibrationError("store", f"not UTF-8 text (byte {exc.start})", str(path)) from None
        except OSError as exc:
            raise CalibrationError("store", f"cannot read: {(exc.strerror or str(exc)).lower()}", str(path)) from None
        current = doc.get("current", {})
        if not isinstance(current, dict) or not all(isinstance(v, str) for v in current.values()):
            raise CalibrationError("store", "current: must be a table of kind = \"file\"",
                                   _where(path, text, "current"))
        root = self.root.resolve()
        for kind, rel in current.items():
            if kind not in KINDS:
                raise CalibrationError("store", f"current.{kind}: unknown kind; expected one of {', '.join(KINDS)}",
                                       _where(path, text, f"current.{kind}"))
            # The pointer file is data anyone may edit or copy in: it may only name files of this store.
            if Path(rel).is_absolute() or not (root / rel).resolve().is_relative_to(root):
                raise CalibrationError("store", f"current.{kind}: {rel!r} is outside the store {self.root}",
                                       _where(path, text, f"current.{kind}"))
        return dict(current)

    def current_files(self) -> dict[str, str]:
        """kind -> file (relative to the store) of the current set, as current.toml says; {} for a new store."""
        return dict(self._current_map())

    def current(self, kind: str) -> CalibrationRecord | None:
        rel = self._current_map().get(kind)
        return read_record(self.root / rel) if rel else None

    def current_set(self) -> dict[str, CalibrationRecord]:
        return {kind: read_record(self.root / rel) for kind, rel in self._current_map().items()}

    def history(self, kind: str) -> list[Path]:
        """Every stored version of ``kind``, oldest first."""
        folder = self.root / kind
        if not folder.is_dir():
            return []
        files = [(m[1], int(m[2]), f) for f in folder.iterdir() if (m := _NAME.match(f.name))]
        return [f for _, _, f in sorted(files)]

    def current_texts(self) -> dict[str, str]:
        """{"<kind>/<file>": text} of the current set, verbatim, for a session file to embed."""
        return {f"calibrations/{rel}": (self.root / rel).read_text(encoding="utf-8")
                for rel in self._current_map().values()}

    def stale_warnings(self, kinds: tuple[str, ...] = KINDS, now: dt.datetime | None = None,
                       max_age: dict[str, dt.timedelta] | None = None) -> list[str]:
        """One sentence per calibration the rig should not trust: missing from the current set, or older
        than its kind's age limit."""
        limits = {**MAX_AGE, **(max_age or {})}
        now = now or dt.datetime.now(dt.UTC)
        current = self._current_map()
        warnings = []
        for kind in kinds:
            if kind not in current:
                warnings.append(f"{kind}: no current calibration in {self.root}")
                continue
            rec = read_record(self.root / current[kind])
            age = rec.age(now)
            if age > limits[kind]:
                warnings.append(f"{kind}: {current[kind]} is {_days(age)} old (limit {_days(limits[kind])}); "
                                f"run `uartlab calibrate {kind.replace('_', '-')}`")
        return warnings


def current_calibration_texts(root: str | Path | None) -> dict[str, str]:
    """What the session file embeds: the current set's texts ({} when there is no store)."""
    if root is None or not Path(root).is_dir():
        return {}
    return CalibrationStore(root).current_texts()


def _days(delta: dt.timedelta) -> str:
    days = delta.total_seconds() / 86400
    return f"{days:.1f} days" if days >= 1 else f"{delta.total_seconds() / 3600:.1f} h"


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _version() -> str:
    try:
        from importlib.metadata import version

        return f"uartlab {version('uartlab')}"
    except Exception:  # noqa: BLE001 - provenance only; an uninstalled checkout still calibrates
        return "uartlab"
