"""`uartlab run` / `uartlab demo` as an operator uses them: the twin rig, a file, a summary, an exit status."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import short_suite_toml
from uartlab.app.cli.main import main
from uartlab.app.record.player import SessionFile
from uartlab.app.rig.config import parse_rig_config

pytestmark = pytest.mark.realtime

SUITE = short_suite_toml()


def twin_rig_with_a_store(tmp_path: Path) -> Path:
    """The twin rig.toml with a calibration store: SEA fits, a Nano17 tare, an identified Coulomb coefficient."""
    from importlib import resources

    from uartlab.app.procedures.on_twin import run_nano17, run_sea
    from uartlab.calibration.store import CalibrationRecord, CalibrationStore

    store = CalibrationStore(tmp_path / "calibrations")
    values, residuals, _, _ = run_sea(seed=0, perturbation=0.0)   # the twin rig's own plant
    store.save(CalibrationRecord("sea", values, residuals))
    values, residuals, _, _ = run_nano17(seed=0)
    store.save(CalibrationRecord("nano17", values, residuals))
    store.save(CalibrationRecord("model", {"fitted": {"coulomb": 0.02}}, {}))
    text = (resources.files("uartlab.app") / "data" / "twin_rig.toml").read_text(encoding="utf-8")
    rig = tmp_path / "rig.toml"
    rig.write_text(text.replace('store = ""', 'store = "calibrations"'), encoding="utf-8")
    return rig


def test_a_suite_runs_on_the_twin_recorded_with_a_summary(tmp_path, capsys, monkeypatch):
    suite = tmp_path / "short.toml"
    suite.write_text(SUITE, encoding="utf-8")
    rig = twin_rig_with_a_store(tmp_path)
    argv = ["run", str(suite), "--rig", str(rig), "--out", str(tmp_path), "--speed", "2", "--operator", "ci"]
    monkeypatch.setattr(sys, "argv", ["uartlab", *argv])   # as typed: the file keeps it, not the core's
    monkeypatch.setenv("UARTLAB_CONFIG_DIR", str(tmp_path / "operator"))
    assert main(argv) == 0
    out = capsys.readouterr().out
    core_log = (tmp_path / "operator" / "rig-core.log").read_text()   # the core started for the run said ...
    assert f"--for-pid {os.getpid()}" in core_log and "uartlab rig core serving at" in core_log
    assert core_log.rstrip().endswith("uartlab rig core stopped.")     # ... all it had to say, to its end
    assert "suite 'short'" in out and ": DONE" in out and "1 of 1 trials run" in out
    row = next(line for line in out.splitlines() if line.startswith("ED "))
    assert "settled" in row
    (path,) = tmp_path.glob("session_*_short.h5")
    assert f"session file: {path}" in out
    with SessionFile(path) as f:
        assert f.complete and f.protocol_texts() == {"short.toml": SUITE}
        assert f.metadata["command_line"] == shlex.join(["uartlab", *argv])
        assert parse_rig_config(f.config_text, "embedded").twin.speed == 2.0   # --speed, written into its TOML
        assert [(t["name"], t["outcome"]) for t in f.trials()] == [("ED", "settled")]
        assert f.length("model") > 0                      # the live model ran beside it ...
        said = [e.message for e in f.events() if e.kind == "calibration"]
        assert any("live model uses model (coulomb)" in m for m in said), said  # ... with the store's values
    assert_compare_takes_the_sessions_calibrations(path, tmp_path)


def assert_compare_takes_the_sessions_calibrations(path: Path, tmp_path: Path) -> None:
    """`uartlab compare` without --params re-simulates with what the live model ran with: the calibrations
    embedded in the file; two sessions recorded under different ones are not one parameter set."""
    import shutil

    import h5py
    from uartlab.app.compare.measured import CompareError
    from uartlab.app.compare.sessions import load_param_sets
    from uartlab.calibration import model_fit

    (calibrated,) = load_param_sets(None, None, [str(path)])
    assert calibrated.label == "calibrated" and "model (coulomb)" in calibrated.source
    assert model_fit.get_param(calibrated.finger.params, "coulomb") == pytest.approx(0.02)
    other = tmp_path / "other.h5"
    shutil.copy(path, other)
    with h5py.File(other, "r+") as f:
        group = f["config/calibration/calibrations/model"]
        (name,) = list(group)
        text = group[name][()].decode("utf-8").replace("coulomb = 0.02", "coulomb = 0.03")
        del group[name]
        group[name] = text
    with pytest.raises(CompareError, match=f"{other} was recorded with another model calibration"):
        load_param_sets(None, None, [str(path), str(other)])


def test_bad_input_is_one_line_and_nothing_moves(tmp_path, capsys):
    assert main(["run", "free_motion", "--trial", "free/XYZ", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "no trial named 'free/XYZ'" in err and "Traceback" not in err
    bad = tmp_path / "bad.toml"
    bad.write_text(SUITE.replace('"ED"', '"EDX"', 1).replace('tendon = "ED"', 'tendon = "EDX"'), encoding="utf-8")
    assert main(["run", str(bad), "--out", str(tmp_path)]) == 2
    assert "bad.toml:" in capsys.readouterr().err
    assert not list(tmp_path.glob("*.h5"))


def run_until_actuate(tmp_path: Path) -> tuple[subprocess.Popen, list[str]]:
    """`uartlab run` in its own process (a core started for it), read until the first pull is under way."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "UARTLAB_CORE": f"ipc://{tmp_path}/core"}
    cmd = [sys.executable, "-m", "uartlab.app.cli", "run", "free_motion", "--repeats", "1", "--out", str(tmp_path)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    lines: list[str] = []
    deadline = time.monotonic() + 120
    for line in proc.stdout:                      # the log lines of a non-TTY run, one per runner event
        lines.append(line)
        if "ACTUATE" in line or time.monotonic() > deadline:
            break
    time.sleep(0.5)                               # mid-pull
    return proc, lines


def _core_under(pid: int) -> int:
    """The `uartlab rig serve` that `uartlab run` (pid) started for itself."""
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            if b"serve" in Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0"):
                return int(child)
    raise AssertionError(f"no rig core under `uartlab run` ({pid})")


@pytest.mark.slow
def test_the_core_a_run_started_killed_mid_trial_is_said_at_once_with_the_file_it_leaves(tmp_path):
    proc, lines = run_until_actuate(tmp_path)
    core = _core_under(proc.pid)
    os.kill(core, signal.SIGKILL)
    killed = time.monotonic()
    out, _ = proc.communicate(timeout=60)
    text = "".join(lines) + out
    assert proc.returncode == 3, text
    assert time.monotonic() - killed < 8.0, text    # not after a request's whole timeout (10 s) of silence
    (path,) = Path(tmp_path).glob("session_*.h5")
    said = out.strip().splitlines()[-1]
    assert said == (f"uartlab run: the rig core this run started (pid {core}) was killed by SIGKILL mid-run: the "
                    f"servos' Bus Watchdog stops them, torque on, holding; {path} keeps what was flushed "
                    "(`uartlab verify` it)"), text


@pytest.mark.slow
def test_a_core_started_elsewhere_that_exits_mid_trial_is_said_at_once(tmp_path):
    from uartlab.app.serve.client import core_answers

    address = f"ipc://{tmp_path}/core"   # where run_until_actuate's `uartlab run` looks: it attaches, starts none
    core = subprocess.Popen([sys.executable, "-m", "uartlab.app.cli", "rig", "serve", "--core", address],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not core_answers(address):
            assert core.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        proc, lines = run_until_actuate(tmp_path)
        core.kill()
        core.wait()                      # reaped, as the shell that started it would
        killed = time.monotonic()
        out, _ = proc.communicate(timeout=60)
    finally:
        if core.poll() is None:
            core.kill()
            core.wait()
    text = "".join(lines) + out
    assert proc.returncode == 3 and time.monotonic() - killed < 8.0, text
    said = out.strip().splitlines()[-1]
    assert said.startswith(f"uartlab run: the rig core (pid {core.pid}) has exited mid-run: the servos' Bus "
                           "Watchdog stops them, torque on, holding; "), text


@pytest.mark.slow
def test_ctrl_c_aborts_to_the_safe_action_and_closes_the_file(tmp_path):
    proc, lines = run_until_actuate(tmp_path)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=120)
    text = "".join(lines) + out
    assert proc.returncode == 1, text
    assert "operator abort: Ctrl-C at the console" in text and ": ABORTED" in text
    (path,) = Path(tmp_path).glob("session_*.h5")
    with SessionFile(path) as f:
        assert f.complete
        assert f.trials()[-1]["outcome"].startswith("aborted: ")
        assert "estop" not in [e.kind for e in f.events()]
        # The safe action is hold: after the abort the runner keeps commanding where the servos are.
        runner = f.read("runner")
        t_abort = next(e.host_time_s for e in f.events() if "ABORTED" in e.message)
        after = runner.data["command_m"][runner.host_time_s > t_abort]
        assert after.size and not np.isnan(after).any()


def _running(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, exited and not yet reaped by whoever adopted it, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.slow
@pytest.mark.parametrize("ending", [signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_sigterm_or_sighup_aborts_like_ctrl_c_and_stops_the_core_it_started(tmp_path, ending):
    """`timeout`, a kill or a closed terminal: the run ends with its safe action, its file closed, and the
    core started for it stops too (left running, it held the default address with the run going on)."""
    proc, lines = run_until_actuate(tmp_path)
    core = _core_under(proc.pid)
    proc.send_signal(ending)
    out, _ = proc.communicate(timeout=120)
    text = "".join(lines) + out
    assert proc.returncode == 1, text
    assert f"operator abort: uartlab run got {ending.name}: the run stops with its safe action" in text
    assert ": ABORTED" in text and "E-stop" not in text
    assert not _running(core), text
    (path,) = Path(tmp_path).glob("session_*.h5")
    with SessionFile(path) as f:
        assert f.complete
        assert f.trials()[-1]["outcome"] == f"aborted: operator abort: uartlab run got {ending.name}"


@pytest.mark.slow
def test_a_run_killed_outright_leaves_no_core_behind_and_a_clean_file(tmp_path):
    """kill -9 of `uartlab run`: the core it started aborts the run with its safe action, closes the file
    saying why, and stops, instead of running on at the address for good."""
    proc, lines = run_until_actuate(tmp_path)
    core = _core_under(proc.pid)
    proc.kill()
    proc.communicate(timeout=10)
    deadline = time.monotonic() + 60
    while _running(core) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _running(core), "".join(lines)
    (path,) = Path(tmp_path).glob("session_*.h5")
    with SessionFile(path) as f:
        assert f.complete
        assert f.trials()[-1]["outcome"] == (f"aborted: the client this core was started for (pid {proc.pid}) "
                                             "has ended")


@pytest.mark.slow
def test_a_second_ctrl_c_is_the_estop_torque_off_and_a_clean_file(tmp_path):
    proc, lines = run_until_actuate(tmp_path)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.03)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=120)
    text = "".join(lines) + out
    assert proc.returncode == 130, text
    assert "E-stop: Ctrl-C at the console: torque off" in text, text
    (path,) = Path(tmp_path).glob("session_*.h5")
    after_the_file = "after the run's file had closed: the E-stop is not in it" in text
    with SessionFile(path) as f:
        assert f.complete
        events = f.events()
        outcome = f.trials()[-1]["outcome"]
        # The abort the first Ctrl-C asked for may have ended the run, and closed its file, before the E-stop
        # came: the E-stop is still acted on (torque off, latched), the run keeps its outcome, "aborted", and
        # the console says the file does not hold it. Whenever the console does not say so, the file holds it.
        assert outcome.startswith(("E-stopped: ", "aborted: ")), outcome
        assert ("estop" in [e.kind for e in events]) != after_the_file, text
        if outcome.startswith("E-stopped: "):
            assert ": FAULT" in text and "trip" in [e.kind for e in events]
            # After the E-stop the runner commanded nothing (NaN): torque off, no motion command follows.
            runner = f.read("runner")
            t_stop = next(e.host_time_s for e in events if e.kind == "estop")
            after = runner.data["command_m"][runner.host_time_s > t_stop]
            assert after.size and (after != after).all()
