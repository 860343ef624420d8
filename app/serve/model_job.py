"""What the live model process is given: the model's parameters with their sources, the trials it will see,
the rig's time scale and the control rate. One JSON document, written by the core on the process's stdin
(``--job FILE`` reads it from a file), checked field by field on arrival:

    {"format": "uartlab live model job", "version": 2,
     "params_toml": "...",                       # sim/params.py's TOML (FingerParams.to_toml), checked on load
     "params_tables": {"moment_arms/FDP_PIP.csv": "PIP_deg,r_mm\n..."},   # the moment-arm tables it names
     "params_sources": ["the shipped defaults (sim/data/uart.toml)", ...],
     "trials": [{"name": "free/FDP", "surface_angle_deg": null}, ...],   # the runner's plan, by trial index
     "time_scale": 4.0,                          # model seconds per host second (rig.time_scale)
     "control_rate_hz": 100.0}

    job = ModelJob.for_run(params, sources, suite, rig.time_scale, engine_rate_hz)
    text = job.to_json();  ModelJob.from_json(text, "<stdin>") == job
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from uartlab.app.run.residuals import plan_of
from uartlab.errors import ConfigError
from uartlab.sim import FingerParams

FORMAT = "uartlab live model job"
VERSION = 2


@dataclass(frozen=True)
class PlannedTrial:
    """One entry of the runner's plan, as much of it as the live model uses."""

    name: str
    surface_angle_deg: float | None   # None: free motion


@dataclass(frozen=True)
class ModelJob:
    params: FingerParams
    params_sources: tuple[str, ...]
    trials: tuple[PlannedTrial, ...]
    time_scale: float
    control_rate_hz: float

    @classmethod
    def for_run(cls, params: FingerParams, sources, suite, time_scale: float, control_rate_hz: float) -> ModelJob:
        """The job of a suite's run: every repeat of every trial in the runner's order (``plan_of``)."""

        plan = tuple(PlannedTrial(str(t.name), None if t.surface_angle_deg is None else float(t.surface_angle_deg))
                     for t in plan_of(suite))
        return cls(params, tuple(str(s) for s in sources), plan, float(time_scale), float(control_rate_hz))

    def to_json(self) -> str:
        return json.dumps({"format": FORMAT, "version": VERSION, "params_toml": self.params.to_toml(),
                           "params_tables": self.params.table_texts(), "params_sources": list(self.params_sources),
                           "trials": [{"name": t.name, "surface_angle_deg": t.surface_angle_deg} for t in self.trials],
                           "time_scale": self.time_scale, "control_rate_hz": self.control_rate_hz})

    @classmethod
    def from_json(cls, text: str, source: str) -> ModelJob:
        """Parse and check; a ConfigError naming ``source`` and the field for anything wrong."""
        def bad(what: str) -> ConfigError:
            return ConfigError(f"{source}: {what}")

        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise bad(f"not a live model job: not JSON ({exc.msg} at line {exc.lineno})") from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise bad(f'not a live model job (expected "format": "{FORMAT}")')
        if doc.get("version") != VERSION:
            raise bad(f"live model job version {doc.get('version')!r}, this uartlab reads version {VERSION}")
        unknown = set(doc) - {"format", "version", "params_toml", "params_tables", "params_sources", "trials",
                              "time_scale", "control_rate_hz"}
        if unknown:
            raise bad(f"unknown fields {sorted(unknown)}")
        params_toml = _field(doc, "params_toml", str, bad)
        tables = _field(doc, "params_tables", dict, bad)   # the moment-arm tables it names: file -> CSV text
        if not all(isinstance(v, str) for v in tables.values()):
            raise bad("params_tables: expected CSV texts by file name")
        # a ParameterError names the key (or the table's line)
        params = FingerParams.from_toml_text(params_toml, f"{source}: params_toml", tables=tables)
        sources = _field(doc, "params_sources", list, bad)
        if not all(isinstance(s, str) for s in sources):
            raise bad("params_sources: expected a list of strings")
        trials = []
        for i, entry in enumerate(_field(doc, "trials", list, bad)):
            if not isinstance(entry, dict) or set(entry) != {"name", "surface_angle_deg"} \
                    or not isinstance(entry["name"], str):
                raise bad(f"trials[{i}]: expected {{\"name\": str, \"surface_angle_deg\": number or null}}")
            angle = entry["surface_angle_deg"]
            if angle is not None and not _finite_number(angle):
                raise bad(f"trials[{i}].surface_angle_deg: expected a finite number or null, got {angle!r}")
            trials.append(PlannedTrial(entry["name"], None if angle is None else float(angle)))
        rates = {}
        for key in ("time_scale", "control_rate_hz"):
            value = doc.get(key)
            if not isinstance(value, int | float) or not _finite_number(value) or value <= 0:
                raise bad(f"{key}: expected a number > 0, got {value!r}")
            rates[key] = float(value)
        return cls(params, tuple(sources), tuple(trials), rates["time_scale"], rates["control_rate_hz"])


def _field(doc: dict, key: str, kind: type, bad) -> Any:
    value = doc.get(key)
    if not isinstance(value, kind):
        raise bad(f"{key}: expected {kind.__name__}, got {type(value).__name__}")
    return value


def _finite_number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
