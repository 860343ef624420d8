"""Missing extras and missing system libraries: one line saying what to install, exit status 3, no traceback;
and the core (model, compare, replay, calibration fits) imports and runs without the extras."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from uartlab.app.cli import extras
from uartlab.app.gui import qt_platform
from uartlab.errors import EXIT_DEVICE_OR_IO, DeviceError, MissingExtraError

RIG_MODULES = ("dynamixel_sdk", "serial", "nidaqmx", "grpc")
GUI_MODULES = ("PySide6", "pyqtgraph")

# Runs the command line with some top-level modules made unimportable (None in sys.modules: `import`
# raises ModuleNotFoundError and importlib.util.find_spec answers None, as for a package not installed).
_BLOCKED_CLI = """
import sys
for name in {blocked!r}:
    sys.modules[name] = None
from uartlab.app.cli.main import main
sys.exit(main({argv!r}))
"""


def run_blocked(blocked, *argv: str, timeout: float = 120) -> subprocess.CompletedProcess:
    code = _BLOCKED_CLI.format(blocked=tuple(blocked), argv=list(argv))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)


def assert_one_line_pip_hint(proc: subprocess.CompletedProcess, extra: str) -> None:
    assert proc.returncode == EXIT_DEVICE_OR_IO, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "pip install" in lines[0] and f"[{extra}]'" in lines[0], lines[0]


@pytest.mark.parametrize("argv", [["gui"], ["gui", "--replay", "x.h5"], ["bench", "gui"]])
def test_window_commands_without_the_gui_extra(argv):
    proc = run_blocked(GUI_MODULES, *argv)
    assert_one_line_pip_hint(proc, "gui")
    assert proc.stderr.startswith(f"uartlab {' '.join(a for a in argv[:2] if not a.startswith('-'))}: needs")
    assert "window's libraries" in proc.stderr


@pytest.mark.parametrize("argv", [["run", "free_motion"], ["demo"], ["record", "--seconds", "1"], ["twin", "up"],
                                  ["calibrate", "sea", "--rig", "twin"], ["bench", "bus"],
                                  ["gui", "--rig", "twin"]])
def test_rig_commands_without_the_rig_extra(argv):
    proc = run_blocked(("nidaqmx",), *argv)
    assert_one_line_pip_hint(proc, "rig")
    assert "no module nidaqmx" in proc.stderr


def test_the_global_sensitivity_without_salib_names_the_pip_line():
    proc = run_blocked(("SALib",), "sim", "sensitivity", "--method", "sobol")
    assert_one_line_pip_hint(proc, "analysis")


def test_the_pip_line_names_the_extra():
    line = extras.pip_line("gui")
    assert line.startswith("pip install ") and line.endswith("[gui]'")


def test_require_names_every_missing_module(monkeypatch):
    monkeypatch.setitem(sys.modules, "serial", None)
    monkeypatch.setitem(sys.modules, "grpc", None)
    with pytest.raises(MissingExtraError, match=r"no module serial, grpc.*pip install .*\[rig\]'"):
        extras.require("gui", "rig")
    assert extras.installed() == {"rig": False, "gui": True, "analysis": True}


# The core, with every extra's modules blocked: the model, compare (all of it), replay, verify, the
# calibration fits and the twin plant they use, and the command modules of core commands.
CORE_MODULES = [
    "uartlab.sim", "uartlab.sim.finger", "uartlab.sim.scenarios", "uartlab.sim.urdf", "uartlab.sim.ik",
    "uartlab.app.compare", "uartlab.app.compare.measured", "uartlab.app.compare.resim",
    "uartlab.app.compare.metrics", "uartlab.app.compare.analysis", "uartlab.app.compare.tables",
    "uartlab.app.compare.figures", "uartlab.app.compare.report", "uartlab.app.compare.synthetic",
    "uartlab.app.cli.compare", "uartlab.app.compare.sessions", "uartlab.app.record.player",
    "uartlab.app.cli.replay", "uartlab.app.cli.verify", "uartlab.app.record.verify", "uartlab.app.cli.gui",
    "uartlab.app.cli.bench",
    "uartlab.app.record.writer", "uartlab.app.record.params", "uartlab.app.procedures.from_sessions",
    "uartlab.calibration.model_fit", "uartlab.app.procedures.on_twin", "uartlab.calibration.store",
    "uartlab.calibration.executors", "uartlab.protocols.dry_run", "uartlab.protocols.suite",
    "uartlab.app.cli.calibrate", "uartlab.app.cli.sim", "uartlab.app.cli.run", "uartlab.app.cli.record",
    "uartlab.app.cli.twin", "uartlab.app.bench.sim", "uartlab.app.bench.record", "uartlab.app.bench.live",
    "uartlab.app.bench.startup", "uartlab.app.cli.doctor", "uartlab.app.cli.extras", "uartlab.schema",
    "uartlab.calibration.sensitivity", "uartlab.app.cli.sim_sensitivity", "uartlab.app.bench.compare",
]


def test_the_core_imports_without_the_extras():
    code = ("import importlib, sys\n"
            f"for name in {RIG_MODULES + GUI_MODULES!r}:\n    sys.modules[name] = None\n"
            f"for module in {CORE_MODULES!r}:\n    importlib.import_module(module)\n"
            "import uartlab.sim\nassert uartlab.sim.Finger and uartlab.sim.FingerParams\n"
            f"print(sorted(m for m in {RIG_MODULES + GUI_MODULES!r} if sys.modules.get(m) is not None))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_a_core_command_runs_without_the_extras(tmp_path):
    out = tmp_path / "p.toml"
    proc = run_blocked(RIG_MODULES + GUI_MODULES, "sim", "params", "-o", str(out), timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "tendons" in out.read_text()


# ------------------------------------------------------------------ Qt's platform plugin and its libraries
_FAKE_MISSING = """
import sys
from uartlab.app.gui import qt_platform
qt_platform.load_library = lambda path: "libxcb-cursor.so.0: cannot open shared object file: No such file or directory"
qt_platform.missing_libraries = lambda path: []
from uartlab.app.cli.main import main
sys.exit(main({argv!r}))
"""


@pytest.mark.parametrize("argv", [["gui"], ["bench", "gui"]])
def test_a_missing_qt_system_library_is_one_line_naming_the_package(argv):
    env = dict(os.environ, QT_QPA_PLATFORM="xcb", DISPLAY=":99")
    proc = subprocess.run([sys.executable, "-c", _FAKE_MISSING.format(argv=argv)], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == EXIT_DEVICE_OR_IO, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert ("Qt cannot open a window: the system library libxcb-cursor.so.0 is missing; install it with: "
            "sudo apt-get install libxcb-cursor0 (or run with QT_QPA_PLATFORM=offscreen for no window)") in lines[0]


def test_the_probe_names_every_missing_library(monkeypatch):
    monkeypatch.setattr(qt_platform, "load_library", lambda path: "libxcb-icccm.so.4: cannot open shared object "
                        "file: No such file or directory")
    monkeypatch.setattr(qt_platform, "missing_libraries", lambda path: ["libxcb-icccm.so.4", "libxcb-keysyms.so.1"])
    with pytest.raises(DeviceError, match=r"libraries libxcb-icccm.so.4, libxcb-keysyms.so.1 are missing; install "
                       r"them with: sudo apt-get install libxcb-icccm4 libxcb-keysyms1"):
        qt_platform.check({"QT_QPA_PLATFORM": "xcb"})


def test_the_probe_leaves_other_platforms_to_qt(monkeypatch):
    monkeypatch.setattr(qt_platform, "load_library", lambda path: pytest.fail("probed"))
    for environ in ({"QT_QPA_PLATFORM": "offscreen"}, {"QT_QPA_PLATFORM": "wayland;xcb"},
                    {"WAYLAND_DISPLAY": "wayland-0", "XDG_SESSION_TYPE": "wayland", "DISPLAY": ":0"}):
        qt_platform.check(environ)
    assert qt_platform.xcb_wanted({}, platform="darwin") is False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="X11/Wayland displays are a Linux matter")
def test_no_display_is_one_line_not_an_abort():
    with pytest.raises(DeviceError, match="no display.*QT_QPA_PLATFORM=offscreen"):
        qt_platform.check({})


@pytest.mark.parametrize(("library", "package"), [
    ("libxcb-cursor.so.0", "libxcb-cursor0"), ("libxkbcommon-x11.so.0", "libxkbcommon-x11-0"),
    ("libX11-xcb.so.1", "libx11-xcb1"), ("libEGL.so.1", "libegl1"), ("libdbus-1.so.3", "libdbus-1-3"),
    ("libglib-2.0.so.0", "libglib2.0-0"), ("libxcb-render-util.so.0", "libxcb-render-util0")])
def test_debian_package_names(library, package):
    assert qt_platform.debian_package(library) == package


def test_pyside_failing_to_load_a_library_is_one_line():
    error = qt_platform.explain_import_error(ImportError("libEGL.so.1: cannot open shared object file: No such file"))
    assert isinstance(error, DeviceError)
    assert str(error) == ("Qt does not load: the system library libEGL.so.1 is missing; install it with: "
                          "sudo apt-get install libegl1")
    other = ImportError("something else")
    assert qt_platform.explain_import_error(other) is other


def test_doctor_reports_the_extras(monkeypatch):
    from uartlab.app.cli import doctor

    monkeypatch.setitem(sys.modules, "grpc", None)
    report = doctor._extras()
    assert report["gui"]["installed"] and report["gui"]["install"] is None
    assert not report["rig"]["installed"] and report["rig"]["missing_modules"] == ["grpc"]
    text = doctor.render({"extras": report})
    assert re.search(r"\[rig\] +missing  no module grpc: pip install ", text) and re.search(r"\[gui\] +OK", text)


def test_doctor_names_the_missing_qt_library_not_qts_guess(monkeypatch):
    from uartlab.app.cli import doctor

    monkeypatch.setenv("QT_QPA_PLATFORM", "xcb")
    qt_says = 'qt.qpa.plugin: Could not load the Qt platform plugin "xcb" in "" even though it was found.'
    monkeypatch.setattr(doctor.subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(
        a, -6, stdout="imported\n", stderr=qt_says))
    monkeypatch.setattr(qt_platform, "xcb_plugin", lambda environ=None: "libqxcb.so")
    monkeypatch.setattr(qt_platform, "load_library", lambda path: "libxcb-icccm.so.4: cannot open shared object file")
    monkeypatch.setattr(qt_platform, "missing_libraries", lambda path: ["libxcb-icccm.so.4"])
    qt = doctor._qt()
    assert qt["imports"] and not qt["app_starts"]
    assert "libxcb-icccm.so.4 is missing; install it with: sudo apt-get install libxcb-icccm4" in qt["error"]
