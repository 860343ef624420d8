"""What each kind's ``[values]`` must look like, checked whenever a calibration file is read.

A store file is plain TOML that people open, diff and sometimes edit; a value of the wrong type must be
refused where the file is read, naming the file, line and key (``values.FDP.gain_N_per_V: must be a
number``), not fail later inside a driver. Only the keys the rig and the model read are checked, and only
their types and shapes: a kind's consumer says what it needs that is missing (``RigCalibrations``), and
keys nobody reads are left alone.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NoReturn

from uartlab.drivers.sea import NOMINAL_REFERENCE_V, SeaCalibration, sea_curve_problem, sea_problem
from uartlab.sim.names import TENDONS

Fail = Callable[[str, str], NoReturn]   # (dotted key, reason) -> raises, naming the file and line

# SeaCalibration's fields: RigCalibrations builds it from the table as keyword arguments.
SEA_REQUIRED = ("v0_V", "gain_N_per_V")
SEA_KEYS = (*SEA_REQUIRED, "quadratic_N_per_V2", "reference_V", "stiffness_Nm_per_rad", "spool_radius_m")


def check_values(kind: str, values: dict[str, Any], fail: Fail) -> None:
    """Raise through ``fail`` at the first value of ``kind`` the rig or the model could not use."""
    {"sea": _sea, "servo_zero": _servo_zero, "nano17": _nano17, "mocap": _mocap,
     "moment_arms": _moment_arms, "model": _model}[kind](values, fail)


def _sea(values: dict, fail: Fail) -> None:
    for tendon, table in values.items():
        key = f"values.{tendon}"
        if tendon not in TENDONS:
            fail(key, f"unknown tendon; expected one of {', '.join(TENDONS)}")
        _table(table, key, fail)
        for name in table:
            if name not in SEA_KEYS:
                fail(f"{key}.{name}", f"unknown key; expected one of {', '.join(SEA_KEYS)}")
        for name in SEA_REQUIRED:
            if name not in table:
                fail(f"{key}.{name}", "missing")
        for name, value in table.items():
            _number(value, f"{key}.{name}", fail)
            if problem := sea_problem(name, value):
                fail(f"{key}.{problem[0]}", problem[1])
        fit = SeaCalibration(table["v0_V"], table["gain_N_per_V"],
                             reference_V=table.get("reference_V", NOMINAL_REFERENCE_V),
                             quadratic_N_per_V2=table.get("quadratic_N_per_V2", 0.0))
        if problem := sea_curve_problem(fit):
            fail(f"{key}.{problem[0]}", problem[1])


def _servo_zero(values: dict, fail: Fail) -> None:
    for tendon, table in values.items():
        _table(table, f"values.{tendon}", fail)
        for name, value in table.items():
            _number(value, f"values.{tendon}.{name}", fail)


def _nano17(values: dict, fail: Fail) -> None:
    for name in ("cal_file", "cal_sha256", "serial"):
        if name in values and not isinstance(values[name], str):
            fail(f"values.{name}", f"must be a string, got {values[name]!r}")
    for name in ("tool_transform_mm_deg", "bias_V"):
        if name in values:
            _numbers(values[name], f"values.{name}", 6, fail)


def _mocap(values: dict, fail: Fail) -> None:
    if "world_from_motive" in values:
        rows = values["world_from_motive"]
        if not isinstance(rows, list) or len(rows) != 4:
            fail("values.world_from_motive", f"must be a 4x4 matrix (4 rows of 4 numbers), got {rows!r}")
        for i, row in enumerate(rows):
            _numbers(row, f"values.world_from_motive[{i}]", 4, fail)
    if "pose_deg" in values:
        _numbers(values["pose_deg"], "values.pose_deg", None, fail)
    markers = values.get("markers", {})
    _table(markers, "values.markers", fail)
    for name, marker in markers.items():
        key = f"values.markers.{name}"
        _table(marker, key, fail)
        for field, check in (("link", lambda v, k: _integer(v, k, fail)),
                             ("local_mm", lambda v, k: _numbers(v, k, 3, fail)),
                             ("weight", lambda v, k: _number(v, k, fail))):
            if field not in marker:
                fail(f"{key}.{field}", "missing")
            check(marker[field], f"{key}.{field}")


def _moment_arms(values: dict, fail: Fail) -> None:
    arms = values.get("moment_arms", {})
    _table(arms, "values.moment_arms", fail)
    for tendon, curves in arms.items():
        _table(curves, f"values.moment_arms.{tendon}", fail)   # the model's own reader checks the curves


def _model(values: dict, fail: Fail) -> None:
    for name in ("fitted", "start", "not_determined"):
        table = values.get(name, {})
        _table(table, f"values.{name}", fail)
        for param, value in table.items():
            _number(value, f"values.{name}.{param}", fail)
    if "params_toml" in values and not isinstance(values["params_toml"], str):
        fail("values.params_toml", "must be a string (the parameter file's text)")


# ------------------------------------------------------------------ the types
def _table(value: Any, key: str, fail: Fail) -> None:
    if not isinstance(value, dict):
        fail(key, f"must be a table, got {value!r}")


def _number(value: Any, key: str, fail: Fail) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        fail(key, f"must be a finite number, got {value!r}")


def _integer(value: Any, key: str, fail: Fail) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        fail(key, f"must be a whole number, got {value!r}")


def _numbers(value: Any, key: str, count: int | None, fail: Fail) -> None:
    if not isinstance(value, list) or (count is not None and len(value) != count):
        fail(key, f"must be a list of {count or 'some'} numbers, got {value!r}")
    for i, v in enumerate(value):
        _number(v, f"{key}[{i}]", fail)
