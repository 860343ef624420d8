"""What the model uses of the calibration store: the finger's parameters with the calibrated moment arms
and the identified model values written over a base set (the UART defaults unless given).

The two kinds compose in a fixed order, whatever order they were made in: the moment arms are geometry
(per tendon and joint, only the curves the sweep fitted), the model values are the friction, damping and
contact numbers ``calibrate model`` fitted (only the ones it was asked to fit). Both are read back
through the model's own TOML reader, so a stored value the model cannot take is one ParameterError
naming the store file and key.
"""

from __future__ import annotations

import tomllib

import tomli_w
from uartlab.calibration.model_fit import set_params
from uartlab.calibration.moment_arms import stored_table
from uartlab.calibration.store import CalibrationRecord, CalibrationStore
from uartlab.sim import FingerParams
from uartlab.sim.moment_arm_forms import KEY_SUFFIXES, ArmTable

MODEL_KINDS = ("moment_arms", "model")   # the calibration kinds that are model parameters


def calibrated_params(store: CalibrationStore, base: FingerParams | None = None) -> tuple[FingerParams, list[str]]:
    """(params, sources): ``base`` with the store's current moment_arms and model records applied, and one
    line per record used (its kind and file), for the run's log and the session's events."""
    return params_with(base, {kind: store.current(kind) for kind in MODEL_KINDS})


def params_with(base: FingerParams | None, records: dict[str, CalibrationRecord | None]) -> tuple[FingerParams,
                                                                                                  list[str]]:
    """``base`` (default the UART set) with the given moment_arms and model records applied (either may be
    absent or None); the sources as ``calibrated_params`` says them."""
    params = base if base is not None else FingerParams.uart()
    sources: list[str] = []
    arms = records.get("moment_arms")
    if arms is not None:
        params = with_stored_moment_arms(params, arms)
        sources.append(f"moment_arms from {arms.path}")
    model = records.get("model")
    if model is not None:
        fitted = {name: float(v) for name, v in model.values.get("fitted", {}).items()}
        params = set_params(params, fitted)
        sources.append(f"model ({', '.join(sorted(fitted))}) from {model.path}")
    return params, sources


def with_stored_moment_arms(params: FingerParams, record: CalibrationRecord) -> FingerParams:
    """``params`` with each stored tendon's fitted joint curves written in; other curves stay. A stored table
    becomes the model's table form, named ``moment_arms/<tendon>_<joint>.csv`` (written beside the parameters
    when they are saved)."""
    doc = tomllib.loads(params.to_toml())
    tables: dict[str, ArmTable | str] = dict(params.arm_tables)
    for tendon, curves in record.values.get("moment_arms", {}).items():
        entry = doc["moment_arms"].setdefault(tendon, {})
        # the curves first (each clears its joint's old form and cosine flag), then the flags the fit set
        for key, value in sorted(curves.items(), key=lambda kv: _joint_and_form(kv[0])[1] not in KEY_SUFFIXES):
            joint, form = _joint_and_form(key)
            if form in KEY_SUFFIXES:   # the stored curve replaces whatever form the joint had, and its cosine
                for other in (*KEY_SUFFIXES, "times_cos_MCP_FE"):
                    entry.pop(f"{joint}_{other}", None)
            if form == "table" and isinstance(value, dict):
                table = stored_table(tendon, joint, value)
                tables[table.file] = table
                value = table.file
            entry[key] = value
    return FingerParams.from_toml_text(tomli_w.dumps(doc), source=str(record.path), tables=tables)


def _joint_and_form(key: str) -> tuple[str, str]:
    for form in sorted(KEY_SUFFIXES, key=len, reverse=True):
        if key.endswith(f"_{form}"):
            return key.removesuffix(f"_{form}"), form
    return key, ""
