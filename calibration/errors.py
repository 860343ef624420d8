"""CalibrationError: bad calibration data or a fit that failed, as one sentence naming what and where."""

from __future__ import annotations

from uartlab import errors


class CalibrationError(errors.CalibrationError):
    """A calibration that cannot be accepted. The message names the procedure and, where there is one,
    the tendon, joint, SEA or file: "sea calibration, FDP: too few load points (3; need at least 5)".

    Nothing is written to the calibration store when a procedure raises this.
    """

    def __init__(self, procedure: str, reason: str, where: str | None = None):
        self.procedure, self.reason, self.where = procedure, reason, where
        prefix = f"{procedure} calibration" + (f", {where}" if where else "")
        super().__init__(f"{prefix}: {reason}")
