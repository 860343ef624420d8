"""What a rig takes from rig.toml and the calibration store, in one place, so the drivers, a run's
pre-flight, the GUI and the live model agree on it.

Every stored value is checked as the store reads it (calibration/record_checks.py): numbers finite, SEA
fits physical (the same bounds as rig.toml's, ``drivers.sea.sea_problem``), the Nano17's tool transform and
tare six numbers each; a bad one is one error "STORE_FILE:LINE: values.KEY: reason" before any device uses it.

Precedence, per kind: rig.toml's own values, else the store's current calibration (``[calibration]
store``), else - on the twin only - the twin's true constants (what a perfect calibration would find).
A real rig without a calibration it needs gets no made-up one: the SEA forces refuse to open, the
joints stream is absent, and a run's pre-flight refuses with the sentence ``status`` gives.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from uartlab.app.rig import backends
from uartlab.app.rig.config import ConfigError, RigConfig
from uartlab.calibration.nano17 import cal_file_sha256
from uartlab.drivers.ati import FTCalibration
from uartlab.drivers.joint_angles import JointAngleEstimator
from uartlab.drivers.sea import SeaCalibration
from uartlab.sim import FingerParams
from uartlab.sim.names import TENDONS


class RigCalibrations:
    def __init__(self, config: RigConfig):
        self.config = config
        self.nano17_mismatch: str | None = None   # set by ft(): the store's tare is for another .cal file

    def stored(self, kind: str):
        """The store's current CalibrationRecord of ``kind`` (None without a store or without one)."""
        if self.config.calibration_store is None:
            return None
        from uartlab.calibration.store import CalibrationStore

        return CalibrationStore(self.config.calibration_store).current(kind)  # checked as it is read

    def check_files(self) -> None:
        """Read the files this config names now, before anything starts (a run and a dry run do): the
        store's current set and the Nano17's .cal file. A damaged one is one error naming the file (and
        line and key)."""
        if self.config.calibration_store is not None:
            from uartlab.calibration.store import CalibrationStore

            CalibrationStore(self.config.calibration_store).current_set()
            if self.config.sea.calibrations is None and self.stored("sea") is not None:
                self.sea()   # the store's SEA fits are the rig's: all six must be there
        n = self.config.nano17
        if n.calibration_file is not None and self.config.daq.gauges:
            FTCalibration.from_file(n.calibration_file, n.index)

    def status(self, uses_nano17: bool) -> tuple[list[str], list[str]]:
        """(missing, stale): one sentence each about the calibrations a run relies on. A twin brings its
        own constants; a store is only consulted when the config names one."""
        store_path = self.config.calibration_store
        if store_path is None:
            return [], []
        from uartlab.calibration.store import CalibrationStore

        kinds = tuple(k for k, used in (("sea", True), ("nano17", uses_nano17),
                                        ("mocap", not backends.MOCAP[self.config.mocap.backend].on_twin)) if used)
        notes = CalibrationStore(store_path).stale_warnings(kinds)
        missing = [n for n in notes if "no current calibration" in n]
        stale = [n for n in notes if n not in missing]
        if self.nano17_mismatch:
            missing.append(self.nano17_mismatch)
        return missing, stale

    def sea(self, twin_plant=None) -> list[SeaCalibration]:
        """rig.toml's own [sea.X] fits, else the store's current set, else the twin's constants."""
        if self.config.sea.calibrations is not None:
            return list(self.config.sea.calibrations)
        stored = self.stored("sea")
        if stored is not None:
            missing = [t for t in TENDONS if t not in stored.values]
            if missing:  # a fit of some tendons only (--tendons) cannot be the rig's whole set
                raise stored.error(f"values.{missing[0]}", f"missing: the rig needs a fit for every SEA "
                                                            f"(no {', '.join(missing)}); `uartlab calibrate sea`")
            return [SeaCalibration(**{k: float(v) for k, v in stored.values[t].items()}) for t in TENDONS]
        if twin_plant is None:
            raise ConfigError(f"{self.config.source}: sea: no SEA calibration: give [sea.<tendon>] fits or a "
                              "[calibration] store with a current `uartlab calibrate sea`")
        k = twin_plant.params.input_stiffness_N_per_m  # "from_twin": what a hanging-weight fit would find
        return [SeaCalibration.from_geometry(s.pot_zero_V, s.pot_volts_per_rad, k[i], s.spool_radius_m)
                for i, s in enumerate(twin_plant.config.seas)]

    def ft(self) -> FTCalibration:
        """The Nano17's .cal file with its tool transform (rig.toml's, else the store's, else none) and, when
        the store's current tare was taken with this very file, that tare as the starting bias (a run still
        tares again before anything moves; the stored one makes the wrench right from the first block)."""
        n = self.config.nano17
        if n.calibration_file is None:
            cal = backends.twin_ft_calibration()
        else:
            cal = FTCalibration.from_file(n.calibration_file, n.index)
        stored = self.stored("nano17")
        self.nano17_mismatch = None
        if stored is not None and stored.values.get("cal_sha256") not in ("", None, cal_file_sha256(cal.path)):
            self.nano17_mismatch = (f"nano17: the current tare ({stored.path}) was made with "
                                    f"{stored.values.get('cal_file')}, not this rig's {Path(cal.path).name}: "
                                    "`uartlab calibrate nano17` with this sensor's file")
            stored = None
        tool = n.tool_transform_mm_deg
        if tool is None:
            tool = tuple(stored.values.get("tool_transform_mm_deg", (0.0,) * 6)) if stored else (0.0,) * 6
        cal.set_units("N", "N-m")  # SI inside (README, Conventions)
        dx, dy, dz, rx, ry, rz = tool   # six numbers: rig.toml and the store's checks say so
        cal.set_tool_transform(dx, dy, dz, rx, ry, rz, dist_units="mm", angle_units="degrees")
        if stored is not None and "bias_V" in stored.values:
            cal.bias(np.asarray(stored.values["bias_V"], dtype=float))
        return cal

    def mocap_estimator(self, marker_names: list[str]) -> JointAngleEstimator | None:
        """A real mocap's joint estimator from the store's mocap calibration (base frame, marker offsets per
        bone), in the stream's marker order; None without one."""
        stored = self.stored("mocap")
        if stored is None:
            return None
        for key in ("markers", "world_from_motive"):
            if key not in stored.values:
                raise stored.error(f"values.{key}", "missing: not a mocap calibration the rig can use")
        from uartlab.calibration.mocap import markers_from_values
        from uartlab.sim import Finger

        by_name = {m.name: m for m in markers_from_values(stored.values)}
        missing = [n for n in marker_names if n not in by_name]
        if missing:
            raise ConfigError(f"{stored.path}: the mocap calibration has no marker {', '.join(missing)} that "
                              f"Motive streams (marker set {self.config.mocap.marker_set!r}); calibrate again")
        markers = [by_name[n] for n in marker_names]  # in the stream's column order
        return JointAngleEstimator(Finger(), markers, np.asarray(stored.values["world_from_motive"], dtype=float))

    def model_params(self, base: FingerParams | None = None) -> tuple[FingerParams, list[str]]:
        """The model's parameters for this rig: ``base`` (default the UART set) with the store's current
        moment arms and identified model values applied, and one line per calibration used."""
        params = base if base is not None else FingerParams.uart()
        if self.config.calibration_store is None:
            return params, []
        from uartlab.calibration.applied import MODEL_KINDS, params_with

        return params_with(params, {kind: self.stored(kind) for kind in MODEL_KINDS})  # stored(): checked
