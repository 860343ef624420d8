"""The rig's streams ("actuators", "daq", "mocap"), declared once with their units (app/rig.py produces them).

Here, apart from the drivers, so what reads or writes these streams without a rig (session files written
from the model, compare, the GUI benchmark) loads without the [rig] extra.
"""

from __future__ import annotations

from uartlab.sim.names import TENDONS

from .streams import FieldSpec, StreamSpec

SIX = (len(TENDONS),)


def actuators_spec(rate_hz: float) -> StreamSpec:
    return StreamSpec("actuators", "MX-64 bus", (
        FieldSpec("excursion_m", "f8", SIX, "m", "tendon excursion from each SEA's zero, + = reeled in"),
        FieldSpec("velocity_m_per_s", "f8", SIX, "m/s", "tendon velocity"),
        FieldSpec("current_A", "f8", SIX, "A", "motor current, + = pulling the tendon in"),
        FieldSpec("moving", "?", SIX, "", "the servo's Moving flag"),
        FieldSpec("hardware_error", "i8", SIX, "", "Hardware Error Status byte"),
        FieldSpec("device_tick_ms", "i8", SIX, "ms", "Realtime Tick of each servo (wraps at 32768); -1: none"),
    ), rate_hz, "device_tick_ms")


def daq_spec(rate_hz: float) -> StreamSpec:
    return StreamSpec("daq", "USB-6210", (
        FieldSpec("sample_index", "i8", (), "", "sample-clock index since the task started"),
        FieldSpec("read_host_time_s", "f8", (), "s", "host time the sample's block was read (raw, for re-fits)"),
        FieldSpec("pot_V", "f8", SIX, "V", "SEA pot wipers, tendon order"),
        FieldSpec("reference_V", "f8", (), "V", "the pots' +5 V reference; NaN if not wired"),
        FieldSpec("gauge_V", "f8", (6,), "V", "Nano17 gauges; NaN if not wired"),
        FieldSpec("tendon_force_N", "f8", SIX, "N", "SEA tension from the pots (SeaCalibration)"),
        FieldSpec("wrench", "f8", (6,), "N, N·m", "Nano17 [Fx Fy Fz Tx Ty Tz] since the last tare"),
    ), rate_hz, "sample_index")


def mocap_spec(marker_names: list[str], rate_hz: float | None) -> StreamSpec:
    return StreamSpec("mocap", "OptiTrack", (
        FieldSpec("frame_number", "i8", (), "", "Motive frame number"),
        FieldSpec("motive_time_s", "f8", (), "s", "Motive's frame timestamp (s since Motive started)"),
        FieldSpec("mid_exposure_ticks", "i8", (), "", "camera mid-exposure, Motive's HR clock; -1: none"),
        FieldSpec("markers_m", "f8", (len(marker_names), 3), "m",
                  "labelled markers in order " + " ".join(marker_names) + "; NaN when occluded"),
    ), rate_hz, "motive_time_s")
