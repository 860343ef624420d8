"""The command's error contract: one line per failure with its kind's exit status; --debug shows the rest."""

from __future__ import annotations

import pytest
from uartlab import errors
from uartlab.app.cli import sim as sim_commands
from uartlab.app.cli.main import main


def test_every_kind_has_its_exit_status():
    assert errors.exit_code(errors.ConfigError("x")) == errors.EXIT_BAD_INPUT == 2
    assert errors.exit_code(errors.InputFileError("x")) == 2
    assert errors.exit_code(errors.CalibrationError("sea", "x")) == 2
    assert errors.exit_code(errors.DeviceError("x")) == errors.EXIT_DEVICE_OR_IO == 3
    assert errors.exit_code(errors.RecordingError("x")) == 3
    assert errors.exit_code(errors.MissingExtraError("x")) == 3
    assert errors.exit_code(errors.InterlockError("x")) == errors.EXIT_RUN_FAILED == 1
    assert errors.exit_code(ZeroDivisionError()) == errors.EXIT_INTERNAL == 70


def test_the_package_kinds_are_the_layers_own_errors():
    """Every layer raises into the one hierarchy: a caller catches UartlabError for all of them."""
    from uartlab.drivers.interfaces import ConfigError, DeviceError
    from uartlab.errors import CalibrationError
    from uartlab.protocols.interlocks import InterlockTrip
    from uartlab.sim.errors import ParameterError, SimulationDiverged

    for kind in (CalibrationError, ConfigError, DeviceError, InterlockTrip, ParameterError, SimulationDiverged):
        assert issubclass(kind, errors.UartlabError), kind


def _a_bug(*_args, **_kwargs):
    return 1 / 0


def test_a_bug_is_one_line_exit_70_and_debug_shows_the_traceback(monkeypatch, capsys):
    monkeypatch.setattr(sim_commands, "_finger", _a_bug)
    assert main(["sim", "paper"]) == errors.EXIT_INTERNAL
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("uartlab sim paper: internal error (ZeroDivisionError") and "--debug" in err
    with pytest.raises(ZeroDivisionError):
        main(["sim", "paper", "--debug"])


def test_verbosity_options_work_before_and_after_the_subcommand(capsys):
    for argv in (["-q", "sim", "params"], ["sim", "params", "-q"], ["sim", "params", "-vv"]):
        assert main(argv) == 0
        assert "input_stiffness_N_per_mm" in capsys.readouterr().out


def test_version_is_the_packages(capsys):
    import uartlab

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"uartlab {uartlab.__version__}"
