"""The simulated Nano17: its synthetic calibration file and the gauge voltages it outputs.

``generate_twin_cal`` below is the generator of ``drivers/twins/data/twin_nano17.cal``; the first test
checks that the shipped file is byte for byte what it produces, so the file stays reproducible. To
regenerate it: ``python -c "import tests.test_twin_nano17 as t; t.write_twin_cal()"`` from the repo root.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import numpy as np
import pytest
from uartlab.drivers.twins.nano17 import Nano17Model

SEED = 17
RATED = np.array([12.0, 12.0, 17.0, 120.0, 120.0, 120.0])  # SI-12-0.12: N, N, N, N·mm, N·mm, N·mm
DZ_MM = 6.096  # BasicTransform of the Nano17 files seen (origin 0.24 in above the gauge plane)


def _ati_values(row: np.ndarray) -> str:
    # ATI's own layout: 5 decimals, a sign slot for positives, right-aligned in 9, space-separated,
    # with a trailing space (as in FT18766.cal: " 120.12303  -4.79486 ...").
    return " ".join(f"{v: .5f}".rjust(9) for v in row) + " "


def generate_twin_cal() -> bytes:
    """A synthetic Nano17 SI-12-0.12 calibration in ATI's CalFileVersion 1.1 layout.

    The basic matrix (sensor frame, N/V and N·mm/V) has the structure of a real Nano17: three beams at
    120 deg, gauges 0, 2, 4 carry Fz, Tx, Ty and gauges 1, 3, 5 carry Fx, Fy, Tz, with magnitudes like
    those of published SI-12-0.12 matrices, 3 % gain spread and 1.2 % cross-talk (seeded). ``Axis`` rows
    are that matrix times a per-axis scale, as ATI stores them; ``UserAxis`` rows are the matrix moved
    through the BasicTransform (Tx += Dz·Fy, Ty -= Dz·Fx with N, N·mm, mm) and rounded, as ATI writes them.
    """
    rng = np.random.default_rng(SEED)
    s60 = np.sin(np.radians(60.0))
    ideal = np.zeros((6, 6))
    ideal[0, [1, 3, 5]] = 2.1 * np.array([0.0, -s60, s60])
    ideal[1, [1, 3, 5]] = 2.1 * np.array([1.0, -0.5, -0.5])
    ideal[2, [0, 2, 4]] = 1.9
    ideal[3, [0, 2, 4]] = 12.4 * np.array([0.0, s60, -s60])
    ideal[4, [0, 2, 4]] = 12.4 * np.array([-1.0, 0.5, 0.5])
    ideal[5, [1, 3, 5]] = 8.0
    row_max = np.abs(ideal).max(axis=1, keepdims=True)
    basic = ideal * (1 + 0.03 * rng.standard_normal((6, 6))) + (ideal == 0) * 0.012 * row_max * rng.standard_normal(
        (6, 6))
    # Fx/Fy and Tx/Ty share a scale, as in ATI's files; the scales put the largest Axis value of each
    # group somewhere in 20-45, like the real files.
    peak = np.abs(basic).max(axis=1)
    target = rng.uniform([30, 20, 30, 20], [45, 25, 45, 25])
    scale = np.array([target[0] / peak[:2].max()] * 2 + [target[1] / peak[2]] + [target[2] / peak[3:5].max()] * 2
                     + [target[3] / peak[5]])
    scale = np.array([float(f"{s:.15g}") for s in scale])
    axis = np.round(basic * scale[:, None], 5)
    b = axis / scale[:, None]  # what a reader of the file gets back
    user = b.copy()
    user[3] += DZ_MM * b[1]
    user[4] -= DZ_MM * b[0]
    user = np.round(user, 5)
    names, lines = ("Fx", "Fy", "Fz", "Tx", "Ty", "Tz"), []
    lines += ['<?xml version="1.0" encoding="utf-8"?>',
              "<!-- SYNTHETIC calibration file for the uartlab simulated twin of an ATI Nano17 SI-12-0.12. -->",
              "<!-- It belongs to no real sensor: never use it with real hardware. -->",
              "<!-- Made by tests/drivers/twins/test_twin_nano17.py::generate_twin_cal "
              f"(numpy default_rng seed {SEED}) -->",
              "<!-- in the layout of ATI DAQ F/T calibration files, CalFileVersion 1.1. -->",
              '<FTSensor  Serial="SIM-NANO17" BodyStyle="Nano17" Family="DAQ" NumGages="6" CalFileVersion="1.1">',
              '\t<Calibration  PartNumber="SI-12-0.12" CalDate="1/1/2025" ForceUnits="N" TorqueUnits="N-mm" '
              'DistUnits="mm" OutputMode="Ground Referenced Differential" OutputRange="20" HWTempComp="True" '
              'GainMultiplier="1" CableLossDetection="False" OutputBipolar="True">']
    for i, name in enumerate(names):
        lines.append(f'\t\t<Axis Name="{name}" values="{_ati_values(axis[i])}" max="{RATED[i]:g}" '
                     f'scale="{scale[i]:.15g}"/>')
    lines.append(f'\t\t<BasicTransform Dx="0" Dy="0" Dz="{DZ_MM:g}" Rx="0" Ry="0" Rz="0"/>')
    for i, name in enumerate(names):
        lines.append(f'\t\t<UserAxis Name="{name}" values="{_ati_values(user[i])}" max="{RATED[i]:g}"/>')
    lines += ["\t</Calibration>", "</FTSensor>", "", ""]
    return "\r\n".join(lines).encode("utf-8")  # ATI's files use CRLF


def _shipped() -> Path:
    return Path(str(resources.files("uartlab.drivers.twins") / "data" / "twin_nano17.cal"))


def write_twin_cal() -> None:
    _shipped().write_bytes(generate_twin_cal())


def test_shipped_twin_file_is_what_the_generator_makes():
    assert _shipped().read_bytes() == generate_twin_cal()
    assert b"SYNTHETIC" in _shipped().read_bytes()


def test_twin_file_reads_as_a_nano17_si_12():
    cal = Nano17Model().calibration
    assert (cal.serial, cal.body_style, cal.part_number) == ("SIM-NANO17", "Nano17", "SI-12-0.12")
    assert (cal.force_units, cal.torque_units, cal.file_dist_units) == ("N", "N-mm", "mm")
    np.testing.assert_array_equal(cal.max_loads, RATED)
    assert (cal.output_range_V, cal.output_bipolar, cal.output_rails_V) == (20.0, True, (-10.0, 10.0))
    assert cal.hw_temp_comp and not cal.temp_comp_available
    assert np.linalg.cond(cal.working_matrix / np.abs(cal.working_matrix).max(axis=1, keepdims=True)) < 5
    # UserAxis is the rounded TTM(basic)·B, as in ATI's files (half a unit in the 5th decimal, plus the
    # Axis rounding carried through the scale).
    np.testing.assert_allclose(cal.user_axis, cal.working_matrix, rtol=0, atol=1e-5)


# Reference from ATI's own C library on the shipped twin file (so ATI's reader accepts the synthetic file
# and reads it the same): ATI DAQ F/T C Library v1.0.6 (the copy in atiiaftt 0.1.1,
# github shayden--/atiiaftt@09f35ac, ATIDAQ_c_lib/ATIDAQ/*.c), built in /tmp with
# gcc 12.2 -O0; createCalibration(twin_nano17.cal, 1), no tool transform, file units N and N-mm,
# Bias(TWIN_C_BIAS), ConvertToFT(TWIN_C_READING), printed with %.9e.
TWIN_C_BIAS = [0.1873, -0.0921, 0.2436, -0.1588, 0.0512, -0.2274, 0.0]
TWIN_C_READING = [2.5, -1.25, 3.75, 0.5, -2.0, 1.125, 0.0]
TWIN_C_FT = [1.18268526e+00, -4.40625143e+00, 6.86479521e+00, 3.33072434e+01, -2.75185204e+01, 6.53918695e+00]


def test_twin_file_converts_like_atis_library():
    cal = Nano17Model().calibration
    cal.bias(TWIN_C_BIAS)
    np.testing.assert_allclose(cal.wrench(TWIN_C_READING), TWIN_C_FT, rtol=1e-6, atol=1e-5)


def test_gauge_volts_round_trip_through_the_calibration():
    twin = Nano17Model()
    cal = twin.calibration
    unloaded = twin.gauge_volts(np.zeros(6))
    np.testing.assert_array_equal(unloaded, twin.bias_volts)
    assert np.abs(twin.bias_volts).max() > 0.05  # offsets big enough that forgetting to tare shows
    assert np.abs(cal.wrench(unloaded)).max() > 0.1
    cal.bias(unloaded)
    rng = np.random.default_rng(3)
    # Inside the rated range: every axis at once up to half its rating, each axis alone at full rating,
    # and full-rating combinations whose loads sum to the rating (sum |w_i| / rated_i = 1).
    box = rng.uniform(-0.5, 0.5, (300, 6)) * RATED
    single = np.vstack([np.diag(RATED), -np.diag(RATED)])
    mix = rng.standard_normal((300, 6))
    mix = mix / np.abs(mix).sum(axis=1, keepdims=True) * RATED
    for wrenches in (box, single, mix):
        volts = np.array([twin.gauge_volts(w) for w in wrenches])
        assert not cal.saturated(volts).any()
        back = cal.wrench(volts)
        np.testing.assert_allclose(back, wrenches, rtol=1e-9, atol=1e-12 * RATED.max())
        assert not cal.overloaded(back).any()


def test_large_loads_clip_at_the_rails_and_are_flagged():
    twin = Nano17Model()
    cal = twin.calibration
    cal.bias(twin.gauge_volts(np.zeros(6)))
    w = np.array([0.0, 0.0, -90.0, 0.0, 0.0, 0.0])  # 5x the rated Fz: gauges 0, 2, 4 go past -10 V
    volts = twin.gauge_volts(w)
    assert np.abs(volts).max() == 10.0
    flags = cal.saturated(volts)
    np.testing.assert_array_equal(flags, [True, False, True, False, True, False])
    assert cal.overloaded(cal.wrench(volts))[2]
    # Just below the rails is not saturated; within the margin (or at the DAQ's last code) is.
    assert not cal.saturated(np.full(6, 9.8)).any()
    assert cal.saturated(np.full(6, 10.0 - 2 * 10.0 / 65536)).all()
    assert cal.saturated(np.full(6, -10.0)).all()


def test_gauge_volts_is_vectorised_and_checks_its_input():
    twin = Nano17Model()
    w = np.array([[1.0, -2.0, 3.0, 10.0, -20.0, 30.0], [0.0, 0.0, -5.0, 0.0, 0.0, 0.0]])
    np.testing.assert_allclose(twin.gauge_volts(w), [twin.gauge_volts(w[0]), twin.gauge_volts(w[1])], atol=1e-14)
    with pytest.raises(ValueError):
        twin.gauge_volts(np.zeros(5))


def test_configuring_the_calibration_does_not_change_the_twin():
    twin = Nano17Model()
    w = np.array([1.0, -2.0, 3.0, 10.0, -20.0, 30.0])
    before = twin.gauge_volts(w)
    assert twin.calibration is twin.calibration
    twin.calibration.set_units("lb", "in-lb")
    twin.calibration.set_tool_transform(0, 0, 10, 0, 0, 90)
    np.testing.assert_array_equal(twin.gauge_volts(w), before)
