"""Sensor conversions of an ``AnalogBlock``: SEA pots -> tendon forces (N), Nano17 gauges -> wrench.

The block's channel names say which column is which (``usb6210``: ``pot0..``, ``pot_ref``,
``gauge0..``), so the same conversions work on live blocks and on blocks replayed from a file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np
from uartlab.drivers.ati import FTCalibration
from uartlab.drivers.interfaces import AnalogBlock
from uartlab.drivers.usb6210 import GAUGE_NAME, POT_NAME, REFERENCE_NAME

if TYPE_CHECKING:
    from uartlab.drivers.sea import SeaCalibration


class _ForceCalibration(Protocol):
    def force_N(self, volts: np.ndarray, reference_volts: np.ndarray | None = None) -> np.ndarray: ...


def _columns(block: AnalogBlock, names: Sequence[str], what: str) -> list[int]:
    try:
        return [block.channel_names.index(name) for name in names]
    except ValueError:
        missing = [name for name in names if name not in block.channel_names]
        raise ValueError(f"{what}: the block has no channel {', '.join(missing)} "
                         f"(it has {', '.join(block.channel_names)})") from None


class SeaForces:
    """Six (or any number of) SEA pot channels -> tendon forces, one SeaCalibration per pot.

    When the block carries the pot reference (``pot_ref``), each calibration gets it per sample, so a
    drifting +5 V supply does not read as force (pots are ratiometric: V = Vref * angle / span)."""

    def __init__(self, calibrations: Sequence[SeaCalibration | _ForceCalibration],
                 pot_names: Sequence[str] | None = None, reference_name: str | None = REFERENCE_NAME):
        self.calibrations = list(calibrations)
        self.pot_names = tuple(pot_names) if pot_names is not None else \
            tuple(POT_NAME.format(i) for i in range(len(self.calibrations)))
        if len(self.pot_names) != len(self.calibrations):
            raise ValueError(f"{len(self.calibrations)} calibrations for {len(self.pot_names)} pot channels")
        self.reference_name = reference_name

    def forces(self, block: AnalogBlock) -> np.ndarray:
        """(n, pots) tendon forces in N, in the calibrations' order (FDP FDS ED DI PI LUM on the rig)."""
        columns = _columns(block, self.pot_names, "SeaForces")
        reference = None
        if self.reference_name is not None and self.reference_name in block.channel_names:
            reference = block.volts[:, block.channel_names.index(self.reference_name)]
        out = np.empty((block.volts.shape[0], len(columns)))
        for j, (col, cal) in enumerate(zip(columns, self.calibrations, strict=True)):
            out[:, j] = cal.force_N(block.volts[:, col], reference_volts=reference)
        return out


@dataclass(slots=True)
class WrenchBlock:
    """A block of Nano17 readings; a sample is ``valid`` when no gauge saturated and no axis overloaded."""

    wrench: np.ndarray       # (n, 6) [Fx Fy Fz Tx Ty Tz] in the calibration's units (N, N·mm by default)
    saturated: np.ndarray    # (n,) bool: some gauge at an output rail, so all six axes are invalid (ATI)
    overloaded: np.ndarray   # (n,) bool: some axis beyond its rated load
    valid: np.ndarray        # (n,) bool


class Nano17:
    """The Nano17's six gauge channels -> wrench through ATI's calibration (``FTCalibration``)."""

    def __init__(self, cal: FTCalibration, gauge_names: Sequence[str] | None = None):
        self.cal = cal
        self.gauge_names = tuple(gauge_names) if gauge_names is not None else \
            tuple(GAUGE_NAME.format(i) for i in range(6))
        if len(self.gauge_names) != 6:
            raise ValueError(f"the Nano17 has 6 gauges, got {len(self.gauge_names)} channel names")

    def gauge_volts(self, block: AnalogBlock) -> np.ndarray:
        return block.volts[:, _columns(block, self.gauge_names, "Nano17")]

    def tare(self, block: AnalogBlock) -> np.ndarray:
        """Bias with the block's mean gauge volts (unloaded sensor; the mean beats the gauge noise down by
        sqrt(n)). Returns the stored bias (V)."""
        volts = self.gauge_volts(block)
        if volts.shape[0] == 0:
            raise ValueError("Nano17.tare: the block is empty")
        self.cal.bias(volts.mean(axis=0))
        return self.cal.bias_volts

    def wrench(self, block: AnalogBlock) -> np.ndarray:
        """(n, 6) wrench relative to the tare."""
        return self.cal.wrench(self.gauge_volts(block))

    def convert(self, block: AnalogBlock) -> WrenchBlock:
        volts = self.gauge_volts(block)
        wrench = self.cal.wrench(volts)
        saturated = np.any(self.cal.saturated(volts), axis=1)
        overloaded = np.any(self.cal.overloaded(wrench), axis=1)
        return WrenchBlock(wrench, saturated, overloaded, ~(saturated | overloaded))
