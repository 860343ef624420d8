"""Start-up: `uartlab --version`, `--help` and every subcommand's `--help` load nothing heavy.

What is asserted is which modules are imported after the parser is built and the help printed, not wall
time (a loaded CI machine makes timings flaky; `uartlab bench cli` measures those, goal <= 0.5 s).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from uartlab.app.bench.startup import commands
from uartlab.app.cli.main import build_parser

HEAVY = ("numpy", "numba", "scipy", "h5py", "matplotlib", "PySide6", "pyqtgraph", "grpc", "nidaqmx",
         "dynamixel_sdk", "serial")

# Runs each argument list through the real entry point in one fresh interpreter (argparse exits after
# --help/--version; the exit is caught), then prints what of HEAVY got imported.
_PROBE = """
import json, sys
from uartlab.app.cli.main import main
heavy = {heavy!r}
out = {{}}
for argv in {argvs!r}:
    try:
        main(argv)
    except SystemExit as exc:
        assert exc.code in (0, None), (argv, exc.code)
    out[" ".join(argv)] = sorted(m for m in heavy if m in sys.modules)
print("RESULT " + json.dumps(out))
"""


def _imported_after(argvs: list[list[str]]) -> dict[str, list[str]]:
    code = _PROBE.format(heavy=HEAVY, argvs=argvs)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    line = next(t for t in proc.stdout.splitlines() if t.startswith("RESULT "))
    return json.loads(line.removeprefix("RESULT "))


def test_version_and_help_import_nothing_heavy():
    result = _imported_after([["--version"], ["--help"]])
    assert result == {"--version": [], "--help": []}


def test_every_subcommands_help_imports_nothing_heavy():
    argvs = commands(build_parser())[2:]
    assert ["sim", "free-motion", "--help"] in argvs and ["calibrate", "model", "--help"] in argvs
    assert ["bench", "gui", "--help"] in argvs and ["bench", "cli", "--help"] in argvs
    result = _imported_after(argvs)
    assert {cmd: mods for cmd, mods in result.items() if mods} == {}
    assert len(result) == len(argvs)


def test_the_console_script_answers_version():
    proc = subprocess.run([sys.executable, "-m", "uartlab.app.cli", "--version"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith("uartlab ")


@pytest.mark.parametrize("name", ["TENDONS", "JOINTS", "POSES"])
def test_names_from_uartlab_sim_do_not_load_the_model(name):
    code = (f"import sys\nfrom uartlab.sim import {name}\nfrom uartlab.sim.names import FLEXORS\n"
            "import uartlab.app.compare\n"
            "print(sorted(m for m in ('numba', 'numpy', 'scipy', 'h5py') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_lazy_names_are_the_real_objects():
    import uartlab.sim as sim
    from uartlab.sim.finger import Finger
    from uartlab.sim.scenarios import contact

    assert sim.Finger is Finger and sim.contact is contact
    assert set(sim.__all__) <= set(dir(sim))
    with pytest.raises(AttributeError):
        _ = sim.no_such_name


def test_bench_cli_lists_every_command_and_the_bare_interpreter(monkeypatch, capsys):
    from uartlab.app.bench import startup as bench_cli

    seen = []
    monkeypatch.setattr(bench_cli, "time_once", lambda argv: seen.append(argv) or 0.1)
    result = bench_cli.measure(2)
    assert result["rows"][0]["command"] == bench_cli.BARE and result["ok"]
    labels = [r["command"] for r in result["rows"]]
    assert "uartlab --version" in labels and "uartlab bench cli --help" in labels
    assert len(seen) == 2 * len(labels)
    assert all(r["ratio_to_bare"] == pytest.approx(1.0) for r in result["rows"])


def test_bench_cli_prints_a_row_per_command_and_the_goal(monkeypatch, capsys):
    import argparse

    from uartlab.app.bench import startup as bench_cli

    monkeypatch.setattr(bench_cli, "time_once", lambda argv: 0.9 if "--version" in argv else 0.05)
    assert bench_cli.main(argparse.Namespace(repeats=1, json=False)) == 1  # --version over the goal
    out = capsys.readouterr().out
    assert "python -c pass" in out and "goal <= 0.5 s" in out and "OVER the 0.5 s goal" in out
    assert bench_cli.main(argparse.Namespace(repeats=1, json=True)) == 1
    result = json.loads(capsys.readouterr().out)
    assert result["slowest"] == "uartlab --version" and result["goal_s"] == 0.5 and not result["ok"]
