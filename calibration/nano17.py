"""Nano17: choose the ATI .cal file and tool transform, then tare (bias) the unloaded sensor.

At the rig (docs/calibration.md): pick the .cal file whose serial matches the transducer, give the tool
transform from the sensor's calibrated frame to the surface frame the rig reports in (mm, degrees), make
sure nothing touches the fingertip plate, and record a second of gauge volts. The mean is the tare; the
spread says whether the sensor was really unloaded and quiet. Conversions reuse drivers/ati.py (ATI's
own library, in numpy).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from uartlab.drivers.ati import AXIS_NAMES, FTCalibration
from uartlab.errors import CalibrationError

MIN_SAMPLES = 50
# est.: the Nano17 SI-12-0.12 resolves ~3 mN; ten times that in the tare's spread means something
# touched the plate or the cable was moving.
MAX_TARE_STD_N = 0.03
MAX_TARE_STD_NMM = 0.5


@dataclass
class Nano17Calibration:
    cal_file: str
    cal_sha256: str
    serial: str
    tool_transform: tuple[float, ...]   # dx dy dz (mm), rx ry rz (deg), ATI's SetToolTransform
    bias_V: np.ndarray                  # (6,) the tare
    noise_std: np.ndarray               # (6,) std of the tared wrench during the tare (N, N·mm)
    n_samples: int

    def apply(self, cal: FTCalibration) -> FTCalibration:
        cal.set_units("N", "N-mm")
        dx, dy, dz, rx, ry, rz = self.tool_transform
        cal.set_tool_transform(dx, dy, dz, rx, ry, rz, dist_units="mm", angle_units="degrees")
        cal.bias(self.bias_V)
        return cal


def load_cal(path: str | Path, index: int = 1) -> FTCalibration:
    """The .cal file, with ATI's errors turned into ours (naming the file)."""
    try:
        return FTCalibration.from_file(path, index)
    except (OSError, ValueError) as exc:  # drivers/ati.py's errors name the file (and line) already
        named = str(exc).startswith(str(path))
        raise CalibrationError("nano17", str(exc), None if named else str(path)) from None


def tare(cal: FTCalibration, gauge_volts: np.ndarray, cal_file: str | Path, tool_transform=(0, 0, 0, 0, 0, 0)
         ) -> Nano17Calibration:
    """Tare from (n, 6) unloaded gauge volts with the chosen tool transform. Raises CalibrationError when
    there are too few samples, a gauge is saturated, or the sensor was not quiet (loaded or touched)."""
    V = np.asarray(gauge_volts, float)
    if V.ndim != 2 or V.shape[1] != 6:
        raise CalibrationError("nano17", f"tare needs (n, 6) gauge volts, got shape {V.shape}")
    if V.shape[0] < MIN_SAMPLES:
        raise CalibrationError("nano17", f"too few tare samples ({V.shape[0]}; need at least {MIN_SAMPLES})")
    tool = tuple(float(v) for v in tool_transform)
    if len(tool) != 6 or not np.all(np.isfinite(tool)):
        raise CalibrationError("nano17", f"tool transform needs dx dy dz rx ry rz (6 finite numbers), got {tool}")
    cal.set_units("N", "N-mm")
    cal.set_tool_transform(*tool, dist_units="mm", angle_units="degrees")
    saturated = cal.saturated(V).any(axis=0)
    if saturated.any():
        raise CalibrationError("nano17", f"gauge(s) {np.flatnonzero(saturated).tolist()} at the output rail during "
                                         "the tare: check the cable and the interface box")
    bias = V.mean(axis=0)
    cal.bias(bias)
    std = cal.wrench(V).std(axis=0)
    limits = np.array([MAX_TARE_STD_N] * 3 + [MAX_TARE_STD_NMM] * 3)
    noisy = std > limits
    if noisy.any():
        worst = int(np.argmax(std / limits))
        raise CalibrationError("nano17", f"the sensor was not quiet during the tare ({AXIS_NAMES[worst]} std "
                                         f"{std[worst]:.3g}, limit {limits[worst]:g}): is something touching it?")
    path = Path(str(cal_file))
    return Nano17Calibration(path.name, cal_file_sha256(path), str(getattr(cal, "serial", "")), tool, bias, std,
                             V.shape[0])


def cal_file_sha256(path: str | Path) -> str:
    """The .cal file's SHA-256, which ties a tare to the sensor it was made with ("" when it cannot be read:
    then nothing is compared)."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return ""


def collect_tare_on_plant(plant, samples: int = 500) -> np.ndarray:
    """(n, 6) gauge volts from the twin's ai8-13 (the plant must be out of contact for a tare)."""
    return plant.analog_block(samples)[:, 8:14]


def record_values(c: Nano17Calibration) -> tuple[dict, dict]:
    values = {"cal_file": c.cal_file, "cal_sha256": c.cal_sha256, "serial": c.serial,
              "tool_transform_mm_deg": list(c.tool_transform), "bias_V": c.bias_V}
    residuals = {"tare_std": {a: float(s) for a, s in zip(AXIS_NAMES, c.noise_std, strict=True)},
                 "units": "N, N-mm", "n_samples": c.n_samples}
    return values, residuals
