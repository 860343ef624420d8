"""Every stream uartlab records, declared once: each field's dtype, shape, units, frame and meaning.

Streams: ``actuators`` ``daq`` ``mocap`` (the rig, app/rig/rig.py), ``joints`` (mocap IK, app/rig/joint_stream.py),
``runner`` (one row per control tick, app/run/engine.py), ``model`` (the live model, app/run/live_model.py), and the
``events`` pseudo-stream (its kinds: ``EventKind``). Each field names what its columns are (``labels``: tendons,
joints, axes, markers), one unit (or one per column, ``column_units``: the wrench) and, for integer codes and
flags, what each value means (``codes``); the recorder writes them as attributes beside the data.
Producers build their records from these declarations
(``daq_spec(rate)`` ...); consumers name fields through them: ``DAQ.tendon_force_N`` is the string
``"tendon_force_N"`` and a misspelt name is an AttributeError, ``DAQ.ref("wrench")`` is ``"daq.wrench"``.
tests/core/test_schema.py fails when any module names a field by string literal that no declaration has.

Why here, at the package root next to ``uartlab.errors`` and beside the Record, Event and Hub that carry
the streams: every room names fields through these declarations (the rig, the recorder and the player, the
engine, the live model, the window, the calibration procedures' probe, compare), and every layer may import
the package root (docs/architecture.md). This module imports only
dataclasses, enum and ``uartlab.names`` (tuples of strings, no numerics), so importing the schema loads no
layer. The runner's ``Phase`` is declared here too: the runner stream records a phase as its index.

``FieldSpec``/``StreamSpec`` (the descriptor classes) and ``EventKind`` live here too; core/streams.py
re-exports them beside ``Record`` and ``Event``. The file layout and names are those of every file already recorded
(docs/session-file.md); ``frame`` is written as an HDF5 attribute only where a field has one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from uartlab.names import JOINTS, TENDONS

HOST_TIME = "host_time_s"
EVENTS = "events"                 # the pseudo-stream Events travel under (core/hub.py)

# Frames, for fields that have one.
FRAME_NANO17 = "Nano17 sensor"
FRAME_WORLD = "world (X distal, Y radial, Z dorsal)"
FRAME_MOTIVE = "Motive"
FRAME_ANATOMICAL = "anatomical"


# How an OPERATOR event from the DAQ begins when the Nano17 was tared (app/rig/rig.py): what compare looks
# for before a contact trial and the live plots mark on the time axis.
NANO17_TARED = "Nano17 tared"


class EventKind(StrEnum):
    """What an Event is about. The value is the text the session file's events table and the logs keep
    (docs/session-file.md), so producers and consumers use the members and the file format stays text."""

    PHASE = "phase"                # the runner changed phase
    TRIAL = "trial"                # a trial started or stopped
    STEADY = "steady"              # RECORD: the steady state the rig measured (JSON)
    FAULT = "fault"                # a device, a stream or the recorder failed
    TRIP = "trip"                  # an interlock latched FAULT
    ESTOP = "estop"                # the E-stop: torque off
    OPERATOR = "operator"          # what the operator did (or the twin for them): a placed finger, a tare
    DEVICE = "device"              # a device started, went quiet or came back
    CLOCK = "clock"                # a host - device clock offset and drift estimate
    OVERFLOW = "overflow"          # samples lost at the device (the DAQ's buffer)
    DROP = "drop"                  # a hub subscriber fell behind: its oldest items were dropped
    DROPS = "drops"                # the session's drop counts, written when it closes (JSON)
    WARNING = "warning"            # something to look at that stops nothing (the recording's free space)
    CALIBRATION = "calibration"    # the calibrations in use, a stale one, a procedure's progress
    MODEL = "model"                # the live model's news
    UNMODELLED = "unmodelled"      # trials measured that the live model made no samples for (JSON)

    @classmethod
    def read(cls, text: str) -> EventKind | str:
        """The kind of an event read back from a file: its member, or for a kind this version does not
        know (a newer uartlab's) the text itself, so the file still reads and the event matches no member."""
        try:
            return cls(text)
        except ValueError:
            return text


SIX = (len(TENDONS),)
FOUR = (len(JOINTS),)
XYZ = ("x", "y", "z")
WRENCH_COLUMNS = ("Fx", "Fy", "Fz", "Tx", "Ty", "Tz")
WRENCH_UNITS = ("N", "N", "N", "N*m", "N*m", "N*m")   # ASCII: h5dump prints UTF-8 as octal escapes
WRENCH_UNITS_TEXT = "N (Fx Fy Fz), N*m (Tx Ty Tz)"   # its units attribute; column_units has one per column
NANO17_GAUGES = ("SG0", "SG1", "SG2", "SG3", "SG4", "SG5")   # ATI's gauge names, in the .cal file's order
DIMENSIONLESS = "1"   # the units of counts, indices, flags and codes (UDUNITS' and CF's word for none)
BOOL_CODES = ("false", "true")   # a flag is stored as uint8 0/1 (MATLAB reads an HDF5 bool as 'FALSE'/'TRUE' text)
JOINT_SPEED_WINDOW_S = 0.25  # est.: long enough to average IK noise, short against a 4 s pull (joints.speed_rad_s)


@dataclass(frozen=True)
class FieldSpec:
    name: str
    dtype: str                      # numpy dtype string: "f8", "i8", "u1", "?" ...
    shape: tuple[int, ...] = ()     # per-sample shape, e.g. (6,) for six tendons
    units: str = DIMENSIONLESS      # "N", "m", "rad", "V", "s"; "1" for counts, indices, flags and codes
    description: str = ""
    frame: str = ""                 # the coordinate frame of a vector/angle field; "" when it has none
    labels: tuple[tuple[str, ...], ...] = ()  # one name per element of each sample axis: ((FDP ... LUM),)
    column_units: tuple[str, ...] = ()        # a unit per element of the last axis, where they differ (wrench)
    codes: tuple[str, ...] = ()     # an integer code's meaning: codes[value] (phase, flags); () when not coded

    def __post_init__(self):
        # tuples whatever came in (a descriptor off the wire arrives as JSON lists)
        object.__setattr__(self, "shape", tuple(int(n) for n in self.shape))
        object.__setattr__(self, "labels", tuple(tuple(str(x) for x in axis) for axis in self.labels))
        object.__setattr__(self, "column_units", tuple(str(u) for u in self.column_units))
        object.__setattr__(self, "codes", tuple(str(c) for c in self.codes))
        if self.dtype == "?" and not self.codes:
            object.__setattr__(self, "codes", BOOL_CODES)
        if self.labels and tuple(len(axis) for axis in self.labels) != self.shape:
            raise ValueError(f"field {self.name}: labels {self.labels} do not match its shape {self.shape}")
        if self.column_units and (not self.shape or len(self.column_units) != self.shape[-1]):
            raise ValueError(f"field {self.name}: column_units {self.column_units} do not match its shape {self.shape}")

    @property
    def stored_dtype(self) -> str:
        """The dtype in the session file: a flag as uint8 0/1 (its codes say so), everything else as declared."""
        return "u1" if self.dtype == "?" else self.dtype

    def columns(self) -> tuple[str, ...]:
        """The name of every value of one sample, in C order: ``("FDP", ... "LUM")``, ``("m1.x", "m1.y", ...)``;
        positions ("0", "1" ...) where the axes are not labelled, () for a scalar."""
        if not self.shape:
            return ()
        axes = self.labels or tuple(tuple(str(i) for i in range(n)) for n in self.shape)
        names: list[str] = [""]
        for axis in axes:
            names = [f"{head}.{x}" if head else x for head in names for x in axis]
        return tuple(names)

    def units_of_columns(self) -> tuple[str, ...]:
        """The unit of every value of ``columns()``."""
        if not self.column_units:
            return (self.units,) * len(self.columns())
        return tuple(self.column_units) * (len(self.columns()) // len(self.column_units))


@dataclass(frozen=True)
class StreamSpec:
    """A stream's descriptor: its name, what device it comes from, its fields (host time is implied)."""

    name: str                       # "actuators", "daq", "mocap", "model", "interlocks" ...
    device: str                     # "MX-64 bus", "USB-6210 Dev1", "OptiTrack", "twin" ...
    fields: tuple[FieldSpec, ...]
    nominal_rate_hz: float | None = None
    device_clock: str | None = None  # the field that is the device's own clock, if any

    def __post_init__(self):
        names = [f.name for f in self.fields]
        if HOST_TIME in names or len(set(names)) != len(names):
            raise ValueError(f"stream {self.name}: field names must be unique and not {HOST_TIME!r}: {names}")
        if self.device_clock is not None and self.device_clock not in names:
            raise ValueError(f"stream {self.name}: device clock {self.device_clock!r} is not one of its fields")

    def field(self, name: str) -> FieldSpec:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(f"stream {self.name} has no field {name!r}")


# --------------------------------------------------------------------------- the rig

def actuators_spec(rate_hz: float) -> StreamSpec:
    return StreamSpec("actuators", "MX-64 bus", (
        FieldSpec("excursion_m", "f8", SIX, "m", "tendon excursion from each SEA's zero, + = reeled in",
                  labels=(TENDONS,)),
        FieldSpec("velocity_m_per_s", "f8", SIX, "m/s", "tendon velocity", labels=(TENDONS,)),
        FieldSpec("current_A", "f8", SIX, "A", "motor current, + = pulling the tendon in", labels=(TENDONS,)),
        FieldSpec("moving", "?", SIX, DIMENSIONLESS, "the servo's Moving flag (1 = moving)", labels=(TENDONS,)),
        FieldSpec("hardware_error", "i8", SIX, DIMENSIONLESS, "Hardware Error Status byte (bit flags; 0 = none)",
                  labels=(TENDONS,)),
        FieldSpec("device_tick_ms", "i8", SIX, "ms", "Realtime Tick of each servo (wraps at 32768); -1: none",
                  labels=(TENDONS,)),
    ), rate_hz, "device_tick_ms")


def daq_spec(rate_hz: float) -> StreamSpec:
    # Volts and what is derived from them in float32: the ADC has 16 bits, float32 keeps 24 (0.6 uV at 10 V
    # against a 320 uV step), and the stream is nine tenths of a session's bytes.
    return StreamSpec("daq", "USB-6210", (
        FieldSpec("sample_index", "i8", (), DIMENSIONLESS, "sample-clock index since the task started"),
        FieldSpec("read_host_time_s", "f8", (), "s", "host time the sample's block was read (raw, for re-fits)"),
        FieldSpec("pot_V", "f4", SIX, "V", "SEA pot wipers, tendon order", labels=(TENDONS,)),
        FieldSpec("reference_V", "f4", (), "V", "the pots' +5 V reference; NaN if not wired"),
        FieldSpec("gauge_V", "f4", (6,), "V", "Nano17 gauges; NaN if not wired", labels=(NANO17_GAUGES,)),
        FieldSpec("tendon_force_N", "f4", SIX, "N", "SEA tension from the pots (SeaCalibration)", labels=(TENDONS,)),
        FieldSpec("wrench", "f4", (6,), WRENCH_UNITS_TEXT, "Nano17 [Fx Fy Fz Tx Ty Tz] since the last tare",
                  FRAME_NANO17, labels=(WRENCH_COLUMNS,), column_units=WRENCH_UNITS),
    ), rate_hz, "sample_index")


def mocap_spec(marker_names: list[str], rate_hz: float | None) -> StreamSpec:
    # Markers in float32: what Motive sends (NatNet), so nothing is lost.
    return StreamSpec("mocap", "OptiTrack", (
        FieldSpec("frame_number", "i8", (), DIMENSIONLESS, "Motive frame number"),
        FieldSpec("motive_time_s", "f8", (), "s", "Motive's frame timestamp (s since Motive started)"),
        FieldSpec("mid_exposure_ticks", "i8", (), DIMENSIONLESS, "camera mid-exposure, Motive's HR clock; -1: none"),
        FieldSpec("markers_m", "f4", (len(marker_names), 3), "m",
                  "labelled markers in order " + " ".join(marker_names) + "; NaN when occluded", FRAME_MOTIVE,
                  labels=(tuple(marker_names), XYZ)),
    ), rate_hz, "motive_time_s")


def joints_spec(rate_hz: float | None) -> StreamSpec:
    return StreamSpec("joints", "mocap IK", (
        FieldSpec("frame_number", "i8", (), DIMENSIONLESS, "the Motive frame these angles were solved from"),
        FieldSpec("angles_rad", "f8", FOUR, "rad", "joint angles " + " ".join(JOINTS) + ", anatomical (+ flexion)",
                  FRAME_ANATOMICAL, labels=(JOINTS,)),
        FieldSpec("speed_rad_s", "f8", FOUR, "rad/s",
                  f"least-squares slope of the angles over the last {JOINT_SPEED_WINDOW_S:g} s", FRAME_ANATOMICAL,
                  labels=(JOINTS,)),
        FieldSpec("rms_residual_m", "f8", (), "m", "RMS marker residual of the IK fit"),
        FieldSpec("well_posed", "?", (), DIMENSIONLESS, "every moving bone had enough markers (1 = yes)"),
    ), rate_hz, "frame_number")


# --------------------------------------------------------------------------- the runner and the model

RUNNER_STREAM = "runner"
NAME_BYTES = 128   # a suite's or a trial's name, at most, in UTF-8: what the session file's trials table holds
MODEL_STREAM = "model"
MODEL_SOURCE = "live model"   # the source of every event about the live model, in whichever process it runs
DEFAULT_CONTROL_RATE_HZ = 100.0  # paper: quasi-static 4 s pulls; 100 Hz is 400 set-points per sigmoid
WATCHED_STREAMS = ("actuators", "daq", "mocap", "joints")   # whose ages the runner stream records


class Phase(StrEnum):
    """Where the protocol runner is (protocols/runner.py runs it). The value is the name the status, the
    summaries and the logs show; the runner stream records a phase as its index in PHASES, so a new phase
    goes last and recorded files keep their meaning."""

    SAFE = "SAFE"
    ARMED = "ARMED"
    PRETENSION = "PRETENSION"
    ACTUATE = "ACTUATE"
    SETTLE = "SETTLE"
    RECORD = "RECORD"
    RETURN = "RETURN"
    DONE = "DONE"
    PAUSED = "PAUSED"
    ABORTED = "ABORTED"
    FAULT = "FAULT"
    PROCEDURE = "PROCEDURE"    # a procedure's steps (protocols/steps.py)


PHASES: tuple[Phase, ...] = tuple(Phase)  # the recorded `phase` field (runner, model streams) indexes this


class Outcome(StrEnum):
    """How a started trial ended: the word its outcome (a trial's ``outcome`` in the status and the session
    file) starts with. A trip or an E-stop adds its reason after a colon: ``"tripped: tendon FDP 41.2 N over
    the 40 N limit"``; ``outcome_of(text)`` reads the word back."""

    SETTLED = "settled"
    SETTLE_TIMEOUT = "settle timeout"
    INTERRUPTED = "interrupted by pause"    # run again on resume
    ABORTED = "aborted"
    TRIPPED = "tripped"                      # an interlock or a device fault, with the safe action
    ESTOPPED = "E-stopped"

    def because(self, reason: str) -> str:
        return f"{self.value}: {reason}"


def outcome_of(text: str) -> Outcome | None:
    """The Outcome an outcome text starts with (None: a word this version does not know)."""
    word = text.split(":", 1)[0].strip()
    return Outcome(word) if word in Outcome._value2member_map_ else None


def _runner_fields(phase_names: tuple[str, ...]) -> tuple[FieldSpec, ...]:
    return (
        FieldSpec("phase", "i8", (), DIMENSIONLESS, "runner phase (enum_names[phase])", codes=phase_names),
        FieldSpec("trial_index", "i8", (), DIMENSIONLESS, "0-based index into the run's trial plan; -1 outside trials"),
        FieldSpec("command_m", "f8", SIX, "m", "excursion commanded this tick (NaN: none sent, or torque off)",
                  labels=(TENDONS,)),
        FieldSpec("excursion_m", "f8", SIX, "m", "measured excursion the tick saw", labels=(TENDONS,)),
        FieldSpec("tendon_force_N", "f8", SIX, "N", "SEA tension the tick saw (10 ms mean)", labels=(TENDONS,)),
        FieldSpec("joint_angles_rad", "f8", FOUR, "rad", "newest IK joint angles the tick saw", FRAME_ANATOMICAL,
                  labels=(JOINTS,)),
        FieldSpec("joint_speed_rad_s", "f8", FOUR, "rad/s", "settle-rule speed: slope over the suite's window_s",
                  FRAME_ANATOMICAL, labels=(JOINTS,)),
        FieldSpec("wrench", "f8", (6,), WRENCH_UNITS_TEXT, "Nano17 [Fx Fy Fz Tx Ty Tz] the tick saw (10 ms mean)",
                  FRAME_NANO17, labels=(WRENCH_COLUMNS,), column_units=WRENCH_UNITS),
        FieldSpec("fingertip_force_N", "f8", (), "N", "|F| of the Nano17"),
        FieldSpec("hardware_error", "i8", SIX, DIMENSIONLESS, "MX-64 Hardware Error Status bytes the tick saw",
                  labels=(TENDONS,)),
        FieldSpec("stream_age_s", "f8", (len(WATCHED_STREAMS),), "s",
                  "age of the newest sample of " + " ".join(WATCHED_STREAMS) + " at the tick (inf: none yet)",
                  labels=(WATCHED_STREAMS,)),
    )


def runner_spec(rate_hz: float | None = DEFAULT_CONTROL_RATE_HZ) -> StreamSpec:
    return StreamSpec(RUNNER_STREAM, "protocol runner", _runner_fields(PHASES), rate_hz, None)


MODEL_FIELDS = (
    FieldSpec("phase", "i8", (), DIMENSIONLESS, "runner phase of the tick (enum_names[phase])", codes=PHASES),
    FieldSpec("trial_index", "i8", (), DIMENSIONLESS, "runner trial index the prediction belongs to"),
    FieldSpec("joint_angles_rad", "f8", FOUR, "rad", "predicted joint angles MCP_AB MCP_FE PIP DIP (+ flexion)",
              FRAME_ANATOMICAL, labels=(JOINTS,)),
    FieldSpec("tendon_force_N", "f8", SIX, "N", "predicted input tendon tensions FDP FDS ED DI PI LUM",
              labels=(TENDONS,)),
    FieldSpec("fingertip_force_N", "f8", (3,), "N", "predicted contact force on the fingertip, world X Y Z",
              FRAME_WORLD, labels=(XYZ,)),
    FieldSpec("measured_fingertip_force_N", "f8", (3,), "N",
              "measured force on the fingertip, world X Y Z (Nano17 force through the surface frame)", FRAME_WORLD,
              labels=(XYZ,)),
    FieldSpec("residual_joint_angles_rad", "f8", FOUR, "rad", "measured - model joint angles", FRAME_ANATOMICAL,
              labels=(JOINTS,)),
    FieldSpec("residual_tendon_force_N", "f8", SIX, "N", "measured - model input tendon tensions", labels=(TENDONS,)),
    FieldSpec("residual_fingertip_force_N", "f8", (3,), "N", "measured - model fingertip force", FRAME_WORLD,
              labels=(XYZ,)),
    FieldSpec("lag_s", "f8", (), "s", "how far this tick is behind the newest tick the model had received"),
    FieldSpec("ticks_merged", "i8", (), DIMENSIONLESS, "control ticks this step covers: 1, more when catching up"),
    FieldSpec("step_s", "f8", (), "s", "wall time the model took for this tick"),
)


def model_spec(control_rate_hz: float = DEFAULT_CONTROL_RATE_HZ) -> StreamSpec:
    return StreamSpec(MODEL_STREAM, "bond-graph model (live)", MODEL_FIELDS, control_rate_hz)


# --------------------------------------------------------------------------- naming fields

class StreamNames:
    """The names of one stream and its fields: ``DAQ.stream == "daq"``, ``DAQ.wrench == "wrench"``,
    ``DAQ.ref("wrench") == "daq.wrench"``. A field the stream does not declare is an AttributeError."""

    __slots__ = ("stream", "fields")

    def __init__(self, stream: str, fields: tuple[FieldSpec, ...]):
        self.stream = stream
        self.fields: tuple[str, ...] = tuple(f.name for f in fields)

    def __getattr__(self, name: str) -> str:  # only called for names that are not slots
        if name in self.fields:
            return name
        raise AttributeError(f"stream {self.stream!r} declares no field {name!r} (uartlab.schema); "
                             f"it has {', '.join(self.fields)}")

    def ref(self, field: str) -> str:
        """``"stream.field"``, the way compare names a signal's source."""
        return f"{self.stream}.{getattr(self, field)}"

    def __repr__(self) -> str:
        return f"StreamNames({self.stream!r}, {self.fields})"


ACTUATORS = StreamNames("actuators", actuators_spec(1.0).fields)
DAQ = StreamNames("daq", daq_spec(1.0).fields)
MOCAP = StreamNames("mocap", mocap_spec([], None).fields)
JOINTS_IK = StreamNames("joints", joints_spec(None).fields)   # not JOINTS: that is uartlab.names' joint order
RUNNER = StreamNames(RUNNER_STREAM, _runner_fields(()))
MODEL = StreamNames(MODEL_STREAM, MODEL_FIELDS)
STREAMS: dict[str, StreamNames] = {s.stream: s for s in (ACTUATORS, DAQ, MOCAP, JOINTS_IK, RUNNER, MODEL)}


def declared_specs(marker_names: Sequence[str] = ("m0",), rate_hz: float = 100.0) -> dict[str, StreamSpec]:
    """One spec of every declared stream (at one rate), for tests and benches that need them all."""
    return {s.name: s for s in (actuators_spec(rate_hz), daq_spec(rate_hz), mocap_spec(list(marker_names), rate_hz),
                                joints_spec(rate_hz), runner_spec(rate_hz), model_spec(rate_hz))}
