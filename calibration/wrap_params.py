"""The lateral bands' PIP wrap (sim/lateral_band_wrap.py) as parameters `calibrate model` fits.

The ACT sweep cannot give this arm: a lateral band reaches the input tendons' paths only through the extensor
mechanism's spring network, whose segments go slack for part of every sweep (on the twin 2-21 % of the
samples each), so no linear regression separates it. The recorded trials can: the band's PIP arm sets where
the PIP settles under the EM tendons and the flexors, and the model fit re-simulates each trial (slack and
all) with the geometry being tried. The two bands are fitted as one geometry (the UART's are alike), from
a parameter file that gives both a ``PIP_wrap`` as the start; the band's hold point is a caliper
measurement and stays as given.

Like every model-fit parameter these are a start value times a positive factor (calibration/model_fit.py),
so a start of 0 cannot move and is refused.
"""

from __future__ import annotations

import dataclasses

from uartlab.errors import CalibrationError
from uartlab.sim import FingerParams
from uartlab.sim.lateral_band_wrap import WRAP_ARMS, ArmWrap

# name -> (what it is, in the file's words): metres in the fit and the store
WRAP_PARAMETERS = {"band_head_radius": "head_radius_mm", "band_head_x": "head_centre_mm[0]",
                   "band_head_y": "head_centre_mm[1]"}


def band_wrap(params: FingerParams) -> ArmWrap:
    """The lateral bands' one PIP wrap, or a CalibrationError saying why there is none to fit."""
    forms = [params.moment_arm_forms.get(arm) for arm in sorted(WRAP_ARMS)]
    if not all(isinstance(f, ArmWrap) for f in forms):
        raise CalibrationError("model", "the lateral bands' PIP arms are not wrap forms: start from a parameter "
                                        "file that gives both bands a PIP_wrap (docs/model.md)")
    first, second = forms
    assert isinstance(first, ArmWrap) and isinstance(second, ArmWrap)
    if (first.head_radius_m, first.head_centre_m, first.band_hold_m) != (
            second.head_radius_m, second.head_centre_m, second.band_hold_m):
        raise CalibrationError("model", "the two lateral bands' PIP_wrap differ; the fit takes them as one "
                                        "geometry: give both the same start")
    return first


def get_wrap_param(params: FingerParams, name: str) -> float:
    w = band_wrap(params)
    value = {"band_head_radius": w.head_radius_m, "band_head_x": w.head_centre_m[0],
             "band_head_y": w.head_centre_m[1]}[name]
    if value == 0.0:
        raise CalibrationError("model", f"{name} ({WRAP_PARAMETERS[name]}) starts at 0, which the fit cannot "
                                        "scale: give it a nonzero start")
    return float(value)


def with_wrap_params(params: FingerParams, values: dict[str, float]) -> FingerParams:
    """``params`` with the given wrap parameters in both bands; a geometry the band cannot wrap is an error."""
    given = {n: v for n, v in values.items() if n in WRAP_PARAMETERS}
    if not given:
        return params
    w = band_wrap(params)
    x, y = w.head_centre_m
    new = dataclasses.replace(w, head_radius_m=given.get("band_head_radius", w.head_radius_m),
                              head_centre_m=(given.get("band_head_x", x), given.get("band_head_y", y)))
    problem = new.problem()
    if problem:
        raise CalibrationError("model", f"lateral-band wrap {given}: {problem}")
    return dataclasses.replace(params, moment_arm_forms={**params.moment_arm_forms, **dict.fromkeys(WRAP_ARMS, new)})
