"""The errors uartlab raises, one root and a kind for each way things go wrong, and their exit codes.

Every layer raises these (the model, drivers, protocols, calibration, the application), so a caller
catches ``UartlabError`` for anything uartlab can say in one sentence. The message names what and where
(file, line, key, option, servo, channel); the command line prints it as one line and exits with the
kind's code (`EXIT_CODES`). This module imports nothing, so every layer may import it.
"""

from __future__ import annotations

# The exit statuses of the `uartlab` command (README, "Exit status").
EXIT_DONE = 0
EXIT_RUN_FAILED = 1       # a run ended in FAULT or ABORTED (an interlock tripped, the operator aborted)
EXIT_BAD_INPUT = 2        # a file, option or value the user gave cannot be used
EXIT_DEVICE_OR_IO = 3     # a device failed or is missing; a file or folder could not be read or written
EXIT_INTERNAL = 70        # a bug in uartlab (sysexits EX_SOFTWARE): `--debug` shows the traceback
EXIT_ESTOP = 130          # the E-stop (Ctrl-C): torque off, the file closed cleanly


class UartlabError(Exception):
    """Anything uartlab can explain in one sentence naming what and where."""


class ConfigError(UartlabError, ValueError):
    """A configuration (rig.toml, a suite, parameters, an option's value) is wrong before anything moves."""


class InputFileError(UartlabError, ValueError):
    """A file the user named is missing, unreadable, malformed or not the kind of file expected."""


class CalibrationError(UartlabError, ValueError):
    """A calibration that cannot be accepted or used: a procedure's bad data or failed fit (nothing is
    written to the store), or a calibration file that cannot be read (a store record, an ATI .cal file).

    The message names the procedure when there is one, then where, then the reason:
    "sea calibration, SEA FDP: too few load points (3; need at least 5)",
    "FT18766.cal, line 12: <Axis Name="Fy"> attribute 'values': 5 values, need 6".
    """

    def __init__(self, procedure: str | None, reason: str, where: str | None = None):
        self.procedure, self.reason, self.where = procedure, reason, where
        names = ([f"{procedure} calibration"] if procedure else []) + ([where] if where else [])
        super().__init__(f"{', '.join(names)}: {reason}" if names else reason)


class DeviceError(UartlabError, RuntimeError):
    """A device failed, is missing or answered wrongly; the driver has already made the servos safe."""


class OutputError(UartlabError, OSError):
    """A file or folder uartlab must write cannot be written (permission, full disk, a file in the way)."""


class RecordingError(OutputError):
    """The recording stopped (disk full, folder gone, file unusable); the message names the file."""


class InterlockError(UartlabError, RuntimeError):
    """An interlock tripped: motion stopped with the configured safe action, the reason recorded."""


class MissingExtraError(UartlabError, ImportError):
    """A command needs an optional part of uartlab that is not installed; the message names the pip line."""


# The one table from a kind of error to the command's exit status (README, "Exit status").
EXIT_CODES: dict[type[UartlabError], int] = {
    ConfigError: EXIT_BAD_INPUT,
    InputFileError: EXIT_BAD_INPUT,
    CalibrationError: EXIT_BAD_INPUT,
    DeviceError: EXIT_DEVICE_OR_IO,
    OutputError: EXIT_DEVICE_OR_IO,
    InterlockError: EXIT_RUN_FAILED,
    MissingExtraError: EXIT_DEVICE_OR_IO,
    UartlabError: EXIT_BAD_INPUT,
}


def exit_code(error: BaseException) -> int:
    """The exit status for an error: its nearest kind in `EXIT_CODES`; anything else is a bug."""
    for kind in type(error).__mro__:
        if kind in EXIT_CODES:
            return EXIT_CODES[kind]
    return EXIT_INTERNAL
