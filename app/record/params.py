"""The model parameters a session was recorded with: the shipped defaults with the moment arms and model
values that were calibrated then (the session file embeds the store's current set). `uartlab compare` and
`uartlab calibrate model --session` start from them when not given parameters.
"""

from __future__ import annotations

from collections.abc import Sequence

from uartlab.app.record.player import SessionFile
from uartlab.calibration.applied import MODEL_KINDS, params_with
from uartlab.calibration.store import CalibrationRecord, parse_record
from uartlab.sim import FingerParams
from uartlab.sim.params import DEFAULTS_SOURCE


def recorded_params(sessions: Sequence[str]) -> tuple[str, str, FingerParams]:
    """(label, source, params) of the model calibrations the sessions were recorded with. Sessions recorded
    under different ones are not one parameter set: a ValueError asking for the parameters instead."""
    records = _model_records(sessions)
    if not records:
        return "defaults", DEFAULTS_SOURCE, FingerParams.uart()
    params, said = params_with(None, records)
    return "calibrated", "the shipped defaults with " + "; ".join(said), params


def recorded_model_params(sessions: list[str], base: FingerParams | None = None) -> tuple[FingerParams, list[str]]:
    """``base`` (default the UART set) with the model calibrations the sessions were recorded with; their
    sources (what ``RigLike.model_params`` says of a replayed session)."""
    return params_with(base, _model_records(sessions))


def _model_records(sessions: Sequence[str]) -> dict[str, CalibrationRecord | None]:
    """kind -> the model calibration record the sessions embed (ValueError if they embed different ones)."""
    used: dict[str, tuple[str, str]] = {}      # kind -> (text, first session that had it)
    records: dict[str, CalibrationRecord | None] = {}
    for path in sessions:
        with SessionFile(path) as f:
            texts = f.calibration_texts
        for name, text in texts.items():
            if not name.startswith("calibrations/"):   # the store's files; the rest is what the drivers used
                continue
            record = parse_record(text, f"{path}:/config/calibration/{name}")
            if record.kind not in MODEL_KINDS:
                continue
            first = used.setdefault(record.kind, (text, path))
            if first[0] != text:
                raise ValueError(f"{path} was recorded with another {record.kind} calibration than {first[1]}; "
                                 "use them separately, or give the parameters (--params)")
            records.setdefault(record.kind, record)
    return records
