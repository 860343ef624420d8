"""Series elastic actuator conversions: tendon space <-> servo ticks, and pot volts -> tendon force.

Callers (protocol runner, GUI, the bus driver's users) think in tendon excursion (m, + = reeled in) and
tendon tension (N); these two small dataclasses are the only place that knows about spools, ticks and
pots. Physics (device-notes section 6): excursion = r * spool angle; spring torque tau = k_t * dtheta and
tension F = tau / r, with k_t = k_tendon * r^2 for a spring whose tendon-side stiffness is k_tendon.
Everything is numpy-vectorised: pass scalars, (6,) arrays or (n, 6) blocks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from uartlab.drivers.mx64 import CENTER_TICKS, TICKS_PER_REV

# SEA fits: the pot spans 0-5 V over its travel, and no MX-64 can pull more than ~300 N through a 20 mm spool
# (6 N*m stall torque): above 1000 N/V, 5 V would read 5000 N and 1 mV of pot noise 1 N - a unit mistake, not
# a spring. Zero or negative reads every pull as no force (or a push): the force interlock would never trip.
MAX_SEA_GAIN_N_PER_V = 1000.0
# est.: below 1 N/V the pot's whole 0-5 V would read under 5 N, where the tendons carry tens of N: the force
# interlock (40 N by default) would never see a pull coming.
MIN_SEA_GAIN_N_PER_V = 1.0
DAQ_RANGE_V = 10.0            # the USB-6210's widest input range, +-10 V: a pot zero outside it cannot be read
NOMINAL_REFERENCE_V = 5.0  # the pots are fed from the 6210's +5 V terminal (device-notes section 4)


@dataclass
class SeaGeometry:
    """How one SEA's servo ticks map to tendon excursion.

    ``direction`` is +1 when increasing ticks reel the tendon in, -1 for a mirrored spool;
    ``zero_ticks`` is the Present Position at zero excursion (the MX-64's mid-range by default, which is
    also where the bus twin starts every servo).
    """

    spool_radius_m: float = 0.020      # the UART spools (drivers/twins/plant.py SeaConfig, est.)
    direction: int = +1
    zero_ticks: int = CENTER_TICKS
    ticks_per_rev: int = TICKS_PER_REV  # MX-64 encoder, 4096 pulses per output revolution

    def __post_init__(self) -> None:
        if self.direction not in (1, -1):
            raise ValueError(f"direction must be +1 or -1, got {self.direction}")
        if self.spool_radius_m <= 0:
            raise ValueError(f"spool_radius_m must be > 0, got {self.spool_radius_m}")

    @property
    def m_per_tick(self) -> float:
        return 2 * math.pi * self.spool_radius_m / self.ticks_per_rev

    def excursion_to_ticks(self, excursion_m: float | np.ndarray) -> np.ndarray:
        """Goal Position ticks (int64, rounded to the nearest tick) for a tendon excursion."""
        ticks = self.zero_ticks + self.direction * np.asarray(excursion_m, dtype=float) / self.m_per_tick
        return np.rint(ticks).astype(np.int64)

    def ticks_to_excursion(self, ticks: int | np.ndarray) -> np.ndarray:
        """Tendon excursion (m) for a Present Position."""
        return self.direction * (np.asarray(ticks, dtype=float) - self.zero_ticks) * self.m_per_tick

    def angular_to_tendon(self, spool_rad: float | np.ndarray) -> np.ndarray:
        """Tendon excursion (or velocity) for a spool angle (or angular velocity) in servo sign."""
        return self.direction * self.spool_radius_m * np.asarray(spool_rad, dtype=float)


@dataclass
class SeaCalibration:
    """Pot volts -> tendon tension: F = gain * dV + quadratic * dV^2, dV = V * reference_V / V_ref_sensed - v0.

    ``v0_V`` and ``gain_N_per_V`` come from a hanging-weight fit (device-notes section 6) or from
    ``from_geometry``. The pot is a ratiometric divider on the reference, so a drifting reference scales
    the wiper voltage; when the reference is sensed (the twin and the rig wire it to ai6) pass it as
    ``reference_volts`` and the reading is brought back to the ``reference_V`` it was calibrated at.
    The fields may be (6,) arrays to convert all six SEAs at once ((n, 6) volts broadcast).
    """

    v0_V: float | np.ndarray
    gain_N_per_V: float | np.ndarray
    stiffness_Nm_per_rad: float | np.ndarray | None = None  # effective k_t, for comparison with a datasheet
    spool_radius_m: float | np.ndarray | None = None
    reference_V: float = NOMINAL_REFERENCE_V
    quadratic_N_per_V2: float | np.ndarray = 0.0   # a `uartlab calibrate sea --degree 2` fit; 0: linear

    def force_N(self, volts: float | np.ndarray, reference_volts: float | np.ndarray | None = None) -> np.ndarray:
        """Tendon tension (N) for pot wiper volts, ratiometrically corrected when the reference is given."""
        v = np.asarray(volts, dtype=float)
        if reference_volts is not None:
            ref = np.asarray(reference_volts, dtype=float)
            if ref.ndim == 1 and v.ndim == 2 and ref.shape[0] == v.shape[0]:
                ref = ref[:, None]  # one reference sample per row of an (n, 6) block
            v = v * self.reference_V / ref
        dv = v - np.asarray(self.v0_V)
        return np.asarray(self.gain_N_per_V) * dv + np.asarray(self.quadratic_N_per_V2) * dv * dv

    @classmethod
    def from_geometry(cls, pot_zero_V: float | np.ndarray, pot_volts_per_rad: float | np.ndarray,
                      stiffness_N_per_m_at_tendon: float | np.ndarray,
                      spool_radius_m: float | np.ndarray) -> SeaCalibration:
        """From physical constants: the pot across the spring reads its angular deflection, the tendon-side
        stretch F / k over the spool radius, so V = V0 + pot_volts_per_rad * F / (k r); hence
        gain = k r / pot_volts_per_rad and the torsional stiffness k_t = k r^2.

        ``stiffness_N_per_m_at_tendon`` is the SEA spring seen at the tendon (the model's k_in, 300 N/m).
        """
        k, r = np.asarray(stiffness_N_per_m_at_tendon, float), np.asarray(spool_radius_m, float)
        gain = k * r / np.asarray(pot_volts_per_rad, float)
        return cls(v0_V=_scalar(pot_zero_V), gain_N_per_V=_scalar(gain), stiffness_Nm_per_rad=_scalar(k * r * r),
                   spool_radius_m=_scalar(r))


def _scalar(x: float | np.ndarray) -> float | np.ndarray:
    """Keep scalars as floats so a single SEA's calibration prints and compares simply."""
    a = np.asarray(x, dtype=float)
    return float(a) if a.ndim == 0 else a


def sea_problem(key: str, value: float) -> tuple[str, str] | None:
    """(key, reason) when an SEA fit's value is not physical (see MAX_SEA_GAIN_N_PER_V), else None: what rig.toml's
    fits and the calibration store's are checked with."""
    value = float(value)
    if key == "gain_N_per_V" and not MIN_SEA_GAIN_N_PER_V <= value <= MAX_SEA_GAIN_N_PER_V:
        return key, (f"must be within {MIN_SEA_GAIN_N_PER_V:g}-{MAX_SEA_GAIN_N_PER_V:g} N/V (a 0-5 V pot on an SEA "
                     f"that carries tens of N), got {value:g}")
    if key == "v0_V" and not -DAQ_RANGE_V <= value <= DAQ_RANGE_V:
        return key, f"must be within the DAQ's +-{DAQ_RANGE_V:g} V, got {value:g}"
    if key == "reference_V" and not 0.0 < value <= DAQ_RANGE_V:
        return key, f"must be > 0 and within the DAQ's {DAQ_RANGE_V:g} V (the pots' supply, 5 V), got {value:g}"
    return None


def sea_curve_problem(cal: SeaCalibration) -> tuple[str, str] | None:
    """("quadratic_N_per_V2", reason) when a fit's force does not rise as the pot turns, over the pot's whole
    0 V to reference_V: a force that falls with a harder pull hides it from the interlock."""
    for volts in (0.0, float(cal.reference_V)):
        slope = float(cal.gain_N_per_V) + 2.0 * float(cal.quadratic_N_per_V2) * (volts - float(cal.v0_V))
        if not slope > 0:
            return "quadratic_N_per_V2", (f"with {float(cal.quadratic_N_per_V2):g} the force falls as the pot "
                                          f"turns (at {volts:g} V), over the pot's 0-{float(cal.reference_V):g} V")
    return None
