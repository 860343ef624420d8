"""``RigLike``: exactly what the engine, the recording session, the procedures and the GUI use of a rig.

    def run(rig: RigLike): rig.hub.subscribe(...); rig.actuators.command(x); rig.nano17_saturated(volts)

Three rigs satisfy it: the live ``Rig`` (app/rig/rig.py), the replayed session with null actuators
(``ReplayedRig``, app/run/replayed_rig.py: ``uartlab run SUITE --replay FILE``) and the tests' scripted rig
(tests/conftest.py). Consumers name a rig's facts through these members, never through its drivers
(``rig.nano17_saturated(gauge_V)``, not the Nano17 driver's calibration). tests/app/run/test_rig_like.py
checks that every member exists, of the right kind, on each rig.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

if TYPE_CHECKING:
    from uartlab.app.rig.clock_sync import ClockSync
    from uartlab.app.rig.config import RigConfig
    from uartlab.app.run.engine import Engine
    from uartlab.app.run.procedure import ProcedureRun
    from uartlab.drivers.interfaces import ActuatorSample
    from uartlab.hub import Hub
    from uartlab.sim import FingerParams


@dataclass
class DeviceHealth:
    """What a rig says of one stream's device (``RigLike.health()``)."""

    device: str
    state: str                  # "starting", "streaming", "silent" (nothing for a while, still listening),
                                # "failed", "stopped"
    rate_hz: float              # samples per second over the last second
    samples: int
    errors: int
    last_error: str
    last_sample_age_s: float    # inf before the first sample


class RigActuators(Protocol):
    """The six servos as the engine, the procedures and the GUI's E-stop command them (tendon space)."""

    def enable(self) -> None:
        """Torque on, holding where they are."""

    def command(self, excursion_m: np.ndarray) -> None:
        """One goal per tendon (6,), m, + = reeled in."""

    def read(self) -> ActuatorSample:
        """The servos now."""

    def stop(self, torque_off: bool = True) -> None:
        """Stop moving; optionally drop torque."""

    def torque_off(self) -> None:
        """Torque off on all six at once (the E-stop)."""


class RigLike(Protocol):
    """A rig as its users see it: streams in a hub, servos to command, and what it knows about itself."""

    config: RigConfig
    """rig.toml as loaded: the limits' ceilings, [interlocks], [recording], the devices' settings."""
    hub: Hub
    """Every stream and event of the rig (registered specs, subscriptions)."""
    engine: Engine | None
    """The one control loop moving the servos now (app/run/engine.py sets and clears it)."""

    @property
    def actuators(self) -> RigActuators | None:
        """The servos (None before the rig started)."""

    @property
    def time_scale(self) -> float:
        """Protocol seconds per host second: the twin's speed on an all-twin rig, 1 wherever hardware is."""

    @property
    def has_nano17(self) -> bool:
        """The Nano17's gauges are wired: there is a fingertip wrench (and a tare)."""

    @property
    def has_sea_forces(self) -> bool:
        """Tendon forces are measured (an SEA calibration is loaded)."""

    @property
    def has_joint_angles(self) -> bool:
        """The rig streams joint angles (the `joints` stream)."""

    @property
    def marker_names(self) -> tuple[str, ...]:
        """The labelled mocap markers, in the order the mocap stream carries them."""

    @property
    def places_finger_itself(self) -> bool:
        """The finger is set up by software (the twin), not by a person."""

    @property
    def twin_plant(self):
        """The twin's physics plant (None elsewhere): true values for tests and calibrations' truth columns."""

    def nano17_saturated(self, gauge_V: np.ndarray) -> np.ndarray:
        """Which gauge readings (n, 6) V are at an output rail (bool, same shape): the Nano17's saturation."""

    def stream_age_limits_s(self) -> dict[str, float]:
        """Stream -> the longest host-seconds gap the interlocks allow (rig.toml [interlocks]), for the
        streams this rig has."""

    def health(self) -> dict[str, DeviceHealth]:
        """Per stream: its device's state, rate, counts and last error."""

    def clock_sync(self) -> dict[str, ClockSync]:
        """Per stream: the device clock's estimate against host time (for the session file)."""

    def calibration_status(self) -> tuple[list[str], list[str]]:
        """(missing, stale): one sentence each about the calibrations a run relies on."""

    def model_params(self, base: FingerParams | None = None) -> tuple[FingerParams, list[str]]:
        """The model's parameters with the rig's calibrated moment arms and model values; their sources."""

    def tare_nano17(self, wait_s: float = 0.0) -> bool:
        """Bias the Nano17 with the next DAQ block (unloaded); with ``wait_s``, whether it was done in time."""

    def place_finger(self, pose: str, surface_angle_deg: float | None) -> bool:
        """Set up a trial's pose and surface; False: a person has to."""

    def motion(self, name: str, **limits) -> ProcedureRun:
        """The engine for a procedure's moves, started (app/run/procedure.py)."""

    def stop(self) -> None:
        """Stop streaming and moving; torque off; safe to call twice."""
