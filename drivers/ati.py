"""ATI DAQ F/T calibration (.cal XML) and the voltage-to-wrench transform, equal to ATI's C library.

This reimplements, in numpy, what the ATI DAQ F/T C Library v1.0.6 (``ftconfig.c``, ``ftrt.c``; MIT)
does with a calibration file:

1. basic matrix ``B[i][j] = Axis_i.values[j] / Axis_i.scale`` (the ``Axis`` rows, not ``UserAxis``);
2. ``TTM(xform)``: a 6x6 tool-transform matrix, rotation ``R(Rx, Ry, Rz)`` on both the force and torque
   blocks and the lever arm ``R·D`` with ``d = (Dx, Dy, Dz)·TorqueConv/(ForceConv·DistConv)``, always
   built in the calibration file's own force/torque units;
3. working matrix ``W = TTM(user) · TTM(BasicTransform) · B``, then the force rows scaled by
   ``ForceConv(out)/ForceConv(file)`` and the torque rows by ``TorqueConv(out)/TorqueConv(file)``;
4. ``Bias(v)`` stores ``v``; ``ConvertToFT(v) = W · (v − bias)``, with the gauges first passed through
   ``(G + bs·(T − T0)) / (1 − gs·(T − T0))`` when software temperature compensation is on.

The C library computes in float32; this module computes in float64, so results agree with it to float32
precision (about 1e-7 relative), not bit for bit. Unlike the C library, which silently leaves empty
strings, zeros or garbage when the file is malformed, every problem with the file raises one
``CalibrationError`` naming the file, line, element and attribute.
"""

from __future__ import annotations

import os
from pathlib import Path
from xml.etree import ElementTree as ET
from xml.parsers import expat

import numpy as np
from uartlab.errors import CalibrationError

AXIS_NAMES = ("Fx", "Fy", "Fz", "Tx", "Ty", "Tz")
NUM_GAUGES = 6
PI = 3.14159265358979  # the C library's PI (ftconfig.h), so rotations match it digit for digit

# Conversion tables of ftconfig.c, relative to lb, in-lb and in (the same literals, so ratios match).
FORCE_CONV = {"lb": 1.0, "lbf": 1.0, "klb": 0.001, "klbf": 0.001, "N": 4.44822161526, "kN": 0.00444822161526,
              "kg": 0.45359237, "g": 453.59237}
TORQUE_CONV = {"in-lb": 1.0, "in-lbf": 1.0, "lb-in": 1.0, "lbf-in": 1.0,
               "ft-lb": 0.08333333333, "lb-ft": 0.08333333333, "ft-lbf": 0.08333333333, "lbf-ft": 0.08333333333,
               "N-m": 0.112984829028, "Nm": 0.112984829028, "N-mm": 112.984829028, "Nmm": 112.984829028,
               "kg-cm": 1.1521246198, "kgcm": 1.1521246198, "kN-m": 0.000112984829028, "kNm": 0.000112984829028}
DIST_CONV = {"in": 1.0, "m": 0.0254, "cm": 2.54, "mm": 25.4, "ft": 0.08333333333}
ANGLE_CONV = {"deg": 1.0, "degrees": 1.0, "degree": 1.0, "rad": PI / 180, "radians": PI / 180, "radian": PI / 180}

# Gauges within this many volts of an output rail count as saturated. ATI's DAQ manual (9620-05, 7.2.1)
# says any gauge at or beyond the output range makes *all six* axes invalid; 0.1 V covers the last DAQ
# codes below the rail and the amplifier's own headroom.
DEFAULT_RAIL_MARGIN_V = 0.1


# A .cal file's matrix must tell the six axes apart. Its condition number with each axis row normalised to unit
# length does not depend on the file's units (the raw one does: N-mm rows are 1000x N-m rows); real files are
# about 1 (1.08 for the real ATI Delta FT18766 the tests embed, 1.05 for the twin's Nano17; raw: 46 and 6.1),
# so 1e4 is generous, and a singular matrix (two axes alike, a row of zeros) is far above it.
MAX_CONDITION = 1e4


def matrix_condition(matrix: np.ndarray) -> float:
    """The condition number of ``matrix`` with each row scaled to unit length (inf when a row is zero)."""
    norms = np.linalg.norm(matrix, axis=1)
    if not np.all(norms > 0):
        return float("inf")
    return float(np.linalg.cond(matrix / norms[:, None]))


def _file_error(path: str | os.PathLike, why: str, element: str | None = None, attribute: str | None = None,
               line: int | None = None) -> CalibrationError:
    """The CalibrationError for a .cal file, naming where the problem is (file, line, element, attribute)."""
    where = str(path) + (f", line {line}" if line else "")
    what = (f" <{element}>" if element else "") + (f" attribute '{attribute}'" if attribute else "")
    return CalibrationError(None, why, f"{where}:{what}" if what else where)


def ttm(tt: np.ndarray, dist_units: str, angle_units: str, force_units: str, torque_units: str) -> np.ndarray:
    """ATI's TTM(): the 6x6 matrix that moves a wrench (force_units, torque_units) to a frame displaced by
    tt[:3] (dist_units) and rotated by tt[3:] (angle_units), exactly as ftconfig.c builds it."""
    dc = TORQUE_CONV[torque_units] / (FORCE_CONV[force_units] * DIST_CONV[dist_units])
    rx, ry, rz = PI / 180 * np.asarray(tt[3:], float) / ANGLE_CONV[angle_units]
    sx, sy, sz, cx, cy, cz = np.sin(rx), np.sin(ry), np.sin(rz), np.cos(rx), np.cos(ry), np.cos(rz)
    dx, dy, dz = np.asarray(tt[:3], float) * dc
    R = np.array([[cy * cz, sx * sy * cz + cx * sz, sx * sz - cx * sy * cz],
                  [-cy * sz, -sx * sy * sz + cx * cz, sx * cz + cx * sy * sz],
                  [sy, -sx * cy, cx * cy]])
    # T' = R (T - d x F): ftconfig.c writes the lower-left block out term by term; it equals R @ D.
    D = np.array([[0.0, dz, -dy], [-dz, 0.0, dx], [dy, -dx, 0.0]])
    out = np.zeros((6, 6))
    out[:3, :3] = out[3:, 3:] = R
    out[3:, :3] = R @ D
    return out


class _Xml:
    """An ElementTree built with expat so every element remembers its line (ET's own parser forgets it)."""

    def __init__(self, path: Path):
        self.path = path
        self.lines: dict[int, int] = {}   # id of an element -> its line in the file
        builder, parser = ET.TreeBuilder(), expat.ParserCreate()

        def start(tag: str, attrs: dict[str, str]) -> None:
            self.lines[id(builder.start(tag, attrs))] = parser.CurrentLineNumber

        parser.StartElementHandler, parser.EndElementHandler = start, builder.end
        try:
            with open(path, "rb") as f:
                parser.ParseFile(f)
            self.root = builder.close()
        except OSError as exc:
            raise _file_error(path, f"cannot read the file ({exc.strerror or exc})") from exc
        except expat.ExpatError as exc:  # raised from None: the parser's traceback says nothing useful
            raise _file_error(path, f"not an XML file ({exc})", line=exc.lineno) from None
        except (LookupError, ValueError) as exc:   # the <?xml encoding="..."?> names one expat cannot read
            raise _file_error(path, f"not an XML file this reader can decode ({exc})", line=1) from None

    def error(self, el: ET.Element, why: str, attribute: str | None = None) -> CalibrationError:
        tag = el.tag if "Name" not in el.attrib else f'{el.tag} Name="{el.attrib["Name"]}"'
        return _file_error(self.path, why, tag, attribute, self.lines.get(id(el)))

    def attr(self, el: ET.Element, name: str, default: str | None = None, table: dict | None = None) -> str:
        # Like ftconfig.c's ReadAttribute, an empty attribute counts as absent.
        value = el.attrib.get(name, "").strip() or default
        if value is None:
            raise self.error(el, "missing required attribute", name)
        if table is not None and value not in table:
            raise self.error(el, f"unknown unit {value!r} (known: {', '.join(table)})", name)
        return value

    def number(self, el: ET.Element, name: str, default: str | None = None) -> float:
        text = self.attr(el, name, default)
        try:
            return float(text)
        except ValueError:
            raise self.error(el, f"{text!r} is not a number", name) from None

    def numbers(self, el: ET.Element, name: str, count: int) -> np.ndarray:
        words = self.attr(el, name).split()
        if len(words) != count:
            raise self.error(el, f"has {len(words)} values, expected one per gauge ({count})", name)
        try:
            return np.array([float(w) for w in words])
        except ValueError:
            raise self.error(el, f"{' '.join(words)!r} are not all numbers", name) from None

    def flag(self, el: ET.Element, name: str, default: str) -> bool:
        text = self.attr(el, name, default)
        if text.lower() not in ("true", "false"):
            raise self.error(el, f"{text!r} is not True or False", name)
        return text.lower() == "true"


class FTCalibration:
    """One ``<Calibration>`` of an ATI DAQ F/T .cal file, configured like the C library's Calibration.

    Use ``from_file``; then optionally ``set_units``, ``set_tool_transform``, ``bias``; then ``wrench``.
    Gauge inputs are volts, shape (6,) or (n, 6); a 7th column (the thermistor channel ATI's samples carry)
    is accepted and only used with software temperature compensation.
    """

    def __init__(self, xml: _Xml, index: int):
        root = xml.root
        if root.tag != "FTSensor":
            raise xml.error(root, "not an ATI calibration file (the root element must be <FTSensor>)")
        self.path, self.index = xml.path, index
        self.serial, self.body_style = xml.attr(root, "Serial"), xml.attr(root, "BodyStyle")
        self.family = xml.attr(root, "Family")
        gauges = xml.attr(root, "NumGages")
        if gauges != str(NUM_GAUGES):
            raise xml.error(root, f"NumGages={gauges!r}: only {NUM_GAUGES}-gauge 6-axis transducers are supported",
                            "NumGages")
        calibrations = list(root.iter("Calibration"))  # ftconfig.c: getElementsByTagName, 1-based index
        if not 1 <= index <= len(calibrations):
            raise _file_error(xml.path, f"calibration index {index} out of range: the file has "
                             f"{len(calibrations)} <Calibration> element(s), numbered from 1",
                             "Calibration", line=xml.lines.get(id(root)))
        cal = calibrations[index - 1]
        self.part_number, self.cal_date = xml.attr(cal, "PartNumber"), xml.attr(cal, "CalDate")
        self.file_force_units = xml.attr(cal, "ForceUnits", table=FORCE_CONV)
        self.file_torque_units = xml.attr(cal, "TorqueUnits", table=TORQUE_CONV)
        self.file_dist_units = xml.attr(cal, "DistUnits", table=DIST_CONV)
        self.file_angle_units = xml.attr(cal, "AngleUnits", "degrees", table=ANGLE_CONV)
        # Not used by ATI's C library: kept for saturation checks and for the record. Defaults are what
        # every DAQ F/T file seen carries (+-10 V bipolar outputs, unity gain, hardware temp comp).
        self.output_range_V = xml.number(cal, "OutputRange", "20")
        self.output_bipolar = xml.flag(cal, "OutputBipolar", "True")
        self.gain_multiplier = xml.number(cal, "GainMultiplier", "1")
        self.hw_temp_comp = xml.flag(cal, "HWTempComp", "False")
        self.output_mode = cal.attrib.get("OutputMode", "")

        axes = list(cal.iter("Axis"))
        if [a.attrib.get("Name") for a in axes] != list(AXIS_NAMES):
            raise xml.error(cal, f"needs six <Axis> rows named {', '.join(AXIS_NAMES)} in that order, found "
                                 f"{[a.attrib.get('Name') for a in axes]}")
        self.basic_matrix = np.empty((6, NUM_GAUGES))
        self.max_loads_file_units = np.empty(6)
        for i, axis in enumerate(axes):
            scale = xml.number(axis, "scale", "1")
            if scale == 0:
                raise xml.error(axis, "scale is 0", "scale")
            self.basic_matrix[i] = xml.numbers(axis, "values", NUM_GAUGES) / scale
            if not np.all(np.isfinite(self.basic_matrix[i])):
                raise xml.error(axis, f"the {AXIS_NAMES[i]} row of the calibration matrix is not finite: "
                                      f"{self.basic_matrix[i].tolist()}", "values")
            self.max_loads_file_units[i] = xml.number(axis, "max", "0")
        condition = matrix_condition(self.basic_matrix)
        if not condition < MAX_CONDITION:
            raise xml.error(cal, f"the calibration matrix is singular or nearly so (condition number {condition:.3g} "
                                 f"with each axis row normalised, at most {MAX_CONDITION:g}; a real sensor's is "
                                 "about 1): the six axes would not be told apart")
        self.basic_transform = np.zeros(6)  # a file without <BasicTransform> has none, as in ftconfig.c
        for bt in cal.findall("BasicTransform"):
            self.basic_transform = np.array([xml.number(bt, k, "0") for k in ("Dx", "Dy", "Dz", "Rx", "Ry", "Rz")])
        user_axes = list(cal.iter("UserAxis"))  # CalFileVersion 1.1 only; ATI's library never reads it
        self.user_axis: np.ndarray | None = None
        if user_axes:
            if [a.attrib.get("Name") for a in user_axes] != list(AXIS_NAMES):
                raise xml.error(cal, f"needs six <UserAxis> rows named {', '.join(AXIS_NAMES)} in that order")
            self.user_axis = np.array([xml.numbers(a, "values", NUM_GAUGES) for a in user_axes])

        # Optional software temperature compensation (sensors sold before ~2003; HWTempComp files have none).
        self.bias_slopes, self.gain_slopes, self.thermistor_V = np.zeros(NUM_GAUGES), np.zeros(NUM_GAUGES), 0.0
        self.temp_comp_available = False
        for el in cal:
            if el.tag in ("BiasSlope", "GainSlope"):
                slopes = xml.numbers(el, "values", NUM_GAUGES)
                if el.tag == "BiasSlope":
                    self.bias_slopes = slopes
                else:
                    self.gain_slopes = slopes
                self.temp_comp_available = True
            elif el.tag == "Thermistor":
                self.thermistor_V = xml.number(el, "value")

        # ResetDefaults(): file units, no user transform, zero bias, temp comp on when available.
        self.force_units, self.torque_units = self.file_force_units, self.file_torque_units
        self.tool_transform, self.tool_dist_units = np.zeros(6), self.file_dist_units
        self.tool_angle_units = self.file_angle_units
        self.temp_comp = self.temp_comp_available
        self._bias_V = np.zeros(NUM_GAUGES)
        self._tc_bias_V: np.ndarray | None = np.zeros(NUM_GAUGES)  # ResetDefaults zeroes TCbias_vector too
        self._update()

    @classmethod
    def from_file(cls, path: str | os.PathLike, index: int = 1) -> FTCalibration:
        """Load calibration number ``index`` (1-based, like createCalibration) of an ATI .cal file."""
        return cls(_Xml(Path(path)), index)

    # ------------------------------------------------------------ configuration (each recomputes W)
    def set_tool_transform(self, dx: float, dy: float, dz: float, rx: float, ry: float, rz: float,
                           dist_units: str = "mm", angle_units: str = "degrees") -> None:
        """ATI's SetToolTransform: report the wrench in a frame moved by (dx, dy, dz) and rotated by
        (rx, ry, rz) (applied as ATI's R(rx, ry, rz)) from the sensor's calibrated frame."""
        _check_unit(dist_units, DIST_CONV, "distance")
        _check_unit(angle_units, ANGLE_CONV, "angle")
        self.tool_transform = np.array([dx, dy, dz, rx, ry, rz], float)
        self.tool_dist_units, self.tool_angle_units = dist_units, angle_units
        self._update()

    def set_units(self, force: str = "N", torque: str = "N-mm") -> None:
        """ATI's SetForceUnits + SetTorqueUnits: the units ``wrench`` and ``max_loads`` report in."""
        _check_unit(force, FORCE_CONV, "force")
        _check_unit(torque, TORQUE_CONV, "torque")
        self.force_units, self.torque_units = force, torque
        self._update()

    def set_temp_comp(self, enabled: bool) -> None:
        """ATI's SetTempComp: software temperature compensation (needs BiasSlope/GainSlope in the file)."""
        if enabled and not self.temp_comp_available:
            raise ValueError(f"{self.path}: this calibration has no software temperature compensation data")
        self.temp_comp = bool(enabled)

    def _update(self) -> None:
        units = (self.file_force_units, self.file_torque_units)
        self._basic_ttm = ttm(self.basic_transform, self.file_dist_units, self.file_angle_units, *units)
        self._user_ttm = ttm(self.tool_transform, self.tool_dist_units, self.tool_angle_units, *units)
        f = FORCE_CONV[self.force_units] / FORCE_CONV[self.file_force_units]
        t = TORQUE_CONV[self.torque_units] / TORQUE_CONV[self.file_torque_units]
        self._row_conv = np.array([f, f, f, t, t, t])
        self._W = self._row_conv[:, None] * (self._user_ttm @ self._basic_ttm @ self.basic_matrix)

    # ------------------------------------------------------------ properties
    @property
    def working_matrix(self) -> np.ndarray:
        """The 6x6 matrix from biased gauge volts to [Fx Fy Fz Tx Ty Tz] in the configured units and frame."""
        return self._W.copy()

    @property
    def max_loads(self) -> np.ndarray:
        """Rated loads (the Axis ``max``) in the configured output units; they refer to the sensor's own
        axes, whatever the tool transform. 0 where the file gives none."""
        return self.max_loads_file_units * self._row_conv

    @property
    def bias_volts(self) -> np.ndarray:
        """The stored tare (6 gauge volts)."""
        return self._bias_V.copy()

    @property
    def output_rails_V(self) -> tuple[float, float]:
        """Lowest and highest gauge voltage the interface box can output."""
        if self.output_bipolar:
            return -self.output_range_V / 2, self.output_range_V / 2
        return 0.0, self.output_range_V

    # ------------------------------------------------------------ run time
    def bias(self, volts: np.ndarray) -> None:
        """ATI's Bias: store one unloaded reading (6 gauge volts, or 7 with the thermistor) as the tare."""
        v = self._channels(volts)
        if v.ndim != 1:
            raise ValueError(f"bias takes one reading of {NUM_GAUGES} gauge volts, got shape {v.shape}")
        self._bias_V = v[:NUM_GAUGES].copy()
        # ftrt.c's RTBias also stores the temperature-compensated tare, which needs the thermistor channel.
        with_thermistor = v.size == NUM_GAUGES + 1
        self._tc_bias_V = self._temp_comp(v[:NUM_GAUGES], v[NUM_GAUGES]) if with_thermistor else None

    def wrench(self, volts: np.ndarray) -> np.ndarray:
        """ATI's ConvertToFT: gauge volts (6,) or (n, 6) -> [Fx Fy Fz Tx Ty Tz] (6,) or (n, 6) in the
        configured units and tool frame."""
        v = self._channels(volts)
        if self.temp_comp:
            if v.shape[-1] != NUM_GAUGES + 1 or self._tc_bias_V is None:
                raise ValueError("software temperature compensation is on: pass 7 channels (6 gauges and the "
                                 "thermistor) to bias() and wrench(), or call set_temp_comp(False)")
            # Like ftrt.c: the compensated reading minus the compensated tare.
            g = self._temp_comp(v[..., :NUM_GAUGES], v[..., NUM_GAUGES:]) - self._tc_bias_V
        else:
            g = v[..., :NUM_GAUGES] - self._bias_V
        return g @ self._W.T

    def _temp_comp(self, gauges_V: np.ndarray, thermistor_V: np.ndarray) -> np.ndarray:
        dt = thermistor_V - self.thermistor_V
        return (gauges_V + self.bias_slopes * dt) / (1 - self.gain_slopes * dt)

    def saturated(self, volts: np.ndarray, margin_V: float = DEFAULT_RAIL_MARGIN_V) -> np.ndarray:
        """Per-gauge bool, (6,) or (n, 6): the raw gauge voltage is within ``margin_V`` of (or beyond) an
        output rail. Any saturated gauge makes the whole wrench of that sample invalid."""
        v = self._channels(volts)[..., :NUM_GAUGES]
        low, high = self.output_rails_V
        return (v <= low + margin_V) | (v >= high - margin_V)

    def overloaded(self, wrench: np.ndarray) -> np.ndarray:
        """Per-axis bool, (6,) or (n, 6): a wrench from ``wrench()`` exceeds the rated load of that axis.
        The wrench is first taken back through the tool transform to the sensor's own axes (the ratings
        refer to those), so the flags mean the same with or without a tool transform."""
        w = np.asarray(wrench, float)
        if w.shape[-1] != 6:
            raise ValueError(f"a wrench has 6 components [Fx Fy Fz Tx Ty Tz], got shape {w.shape}")
        sensor = np.linalg.solve(self._user_ttm, (w / self._row_conv).T).T
        return (self.max_loads_file_units > 0) & (np.abs(sensor) > self.max_loads_file_units)

    def _channels(self, volts: np.ndarray) -> np.ndarray:
        v = np.asarray(volts, float)
        if v.ndim not in (1, 2) or v.shape[-1] not in (NUM_GAUGES, NUM_GAUGES + 1):
            raise ValueError(f"expected gauge volts of shape (6,) or (n, 6) (7 with the thermistor), got {v.shape}")
        return v

    def __repr__(self) -> str:
        return (f"FTCalibration({self.serial} {self.body_style} {self.part_number}, {self.path.name}#{self.index}, "
                f"{self.force_units}/{self.torque_units})")


def _check_unit(unit: str, table: dict[str, float], kind: str) -> None:
    if unit not in table:
        raise ValueError(f"unknown {kind} unit {unit!r}; ATI's library knows {', '.join(table)}")
