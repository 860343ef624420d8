"""Progress on stderr (app/cli/progress.py), log files beside sessions and calibrations (app/record/logs.py), -v/-q.

The CLI runs as a subprocess where the console's logging matters (`logging.basicConfig` is a no-op under
pytest's own handlers), so -q and -v are seen as an operator sees them. Kept cheap: one free-motion trial,
one repeat; `uartlab record --seconds 1` on the twin; the in-process SEA calibration.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
from conftest import short_suite_toml
from uartlab.app.cli import progress
from uartlab.app.cli.main import main
from uartlab.app.record import logs
from uartlab.streams import Event


def uartlab(*args: str, env: dict | None = None, cwd=None) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k != progress.ENV} | (env or {})
    return subprocess.run([sys.executable, "-m", "uartlab.app.cli", *args], capture_output=True, text=True,
                          env=environ, cwd=cwd, timeout=120)


@pytest.fixture(scope="module")
def one_trial_session(tmp_path_factory):
    from uartlab.app.compare.synthetic import write_model_session
    from uartlab.sim import FingerParams, paper_trials

    path = tmp_path_factory.mktemp("progress") / "one.h5"
    write_model_session(path, paper_trials()[:1], FingerParams.uart(), repeats=1)
    return path


# ------------------------------------------------------------------ -q / -v / forced progress
def test_compare_quiet_says_nothing_on_stderr_even_with_progress_forced(one_trial_session, tmp_path):
    proc = uartlab("compare", str(one_trial_session), "--out", str(tmp_path / "q"), "--no-figures", "-q",
                   env={progress.ENV: "1"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert "report:" in proc.stdout  # the result itself is still printed


def test_compare_verbose_logs_what_was_done_and_a_pipe_gets_no_bar(one_trial_session, tmp_path):
    proc = uartlab("compare", str(one_trial_session), "--out", str(tmp_path / "v"), "-v")
    assert proc.returncode == 0, proc.stderr
    assert "compare: re-simulating: 1 of 1 trial in" in proc.stderr
    assert "compare: drawing figures: 3 of 3 figures in" in proc.stderr
    assert "%|" not in proc.stderr  # stderr is not a terminal: no bar


def test_a_terminal_gets_the_bar_without_asking(one_trial_session, tmp_path):
    pty = pytest.importorskip("pty")
    import fcntl
    import struct
    import termios

    master, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))  # a new pty is 0 columns wide
    environ = {k: v for k, v in os.environ.items() if k != progress.ENV}
    proc = subprocess.Popen([sys.executable, "-m", "uartlab.app.cli", "compare", str(one_trial_session), "--out",
                             str(tmp_path / "t")], stdout=subprocess.PIPE, stderr=terminal, env=environ)
    os.close(terminal)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the terminal's other end closed: the process is done
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    assert proc.wait(timeout=60) == 0
    text = seen.decode(errors="replace")
    assert "compare: re-simulating" in text and "1/1" in text
    # the figures' bar with its total (its last update may be erased with the bar before it is drawn)
    assert "compare: drawing figures" in text and "/3 [" in text, text[-400:]
    assert "1 of 1 trial in" not in text  # the INFO line needs -v (default: warnings only)


def test_shown_follows_the_level_and_the_environment(monkeypatch):
    root = logging.getLogger()
    monkeypatch.setattr(root, "level", logging.WARNING)
    monkeypatch.delenv(progress.ENV, raising=False)
    assert progress.shown() is None                   # tqdm decides: a terminal or not
    monkeypatch.setenv(progress.ENV, "1")
    assert progress.shown() is True
    monkeypatch.setattr(root, "level", logging.ERROR)  # -q
    assert progress.shown() is False
    monkeypatch.setattr(root, "level", logging.INFO)
    monkeypatch.setenv(progress.ENV, "0")
    assert progress.shown() is False


def test_the_callback_counts_and_may_change_its_total(monkeypatch, capsys):
    monkeypatch.setenv(progress.ENV, "1")
    monkeypatch.setattr(logging.getLogger(), "level", logging.WARNING)
    with progress.progress("work", unit="step") as tick:
        assert tick.visible
        tick(1, 4)
        tick(4, 4)
    err = capsys.readouterr().err
    assert "work" in err and "4/4" in err


# ------------------------------------------------------------------ model fit: completed simulations
def _fake_task(task):
    import numpy as np
    return np.zeros(3)


def _fit_tasks(n: int) -> list:
    """Tasks shaped as the fit makes them (params, names, values, recordings): their cost is the seconds the
    recordings span."""
    import numpy as np
    from uartlab.calibration.model_fit import TrialRecording

    fields = {f.name: None for f in dataclasses.fields(TrialRecording)}
    return [(None, (), [], [dataclasses.replace(TrialRecording(**fields), t_s=np.arange(k + 2.0))])
            for k in range(n)]


def test_a_model_fit_batch_counts_completed_futures(monkeypatch):
    from uartlab.calibration import model_fit

    monkeypatch.setattr(model_fit, "_residual_task", _fake_task)
    seen, count = [], [0]
    with ThreadPoolExecutor(2) as ex:
        out = model_fit._run_batch(_fit_tasks(5), ex, count, lambda d, t: seen.append((d, t)))
        out += model_fit._run_batch(_fit_tasks(3), None, count, lambda d, t: seen.append((d, t)))
    assert len(out) == 8 and count[0] == 8
    assert seen == [(i, None) for i in range(1, 9)]


def test_a_model_fit_batch_on_dask_counts_completed_futures(monkeypatch):
    distributed = pytest.importorskip("dask.distributed")
    from uartlab.calibration import model_fit

    monkeypatch.setattr(model_fit, "_residual_task", _fake_task)  # in-process workers see the patch
    seen, count = [], [0]
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None) as client:
        out = model_fit._run_batch(_fit_tasks(4), client.get_executor(), count, lambda d, t: seen.append(d))
    assert len(out) == 4 and seen == [1, 2, 3, 4]


# ------------------------------------------------------------------ log files
@pytest.mark.slow
def test_record_writes_a_log_beside_the_session(tmp_path):
    proc = uartlab("record", "--seconds", "1", "--out", str(tmp_path / "rec"))
    assert proc.returncode == 0, proc.stderr
    (h5,) = (tmp_path / "rec").glob("session_*.h5")
    log = h5.with_suffix(".log")
    text = log.read_text(encoding="utf-8")
    assert h5.name in text and "recording session" in text and "closed" in text
    assert "rig started from" in text
    assert " INFO uartlab.app.record.session: " in text            # timestamps, levels and logger names
    assert "INFO" not in proc.stderr                         # the console stays at its level


def test_calibrate_writes_a_log_beside_its_record(tmp_path, capsys):
    store = tmp_path / "calibrations"
    assert main(["calibrate", "sea", "--store", str(store)]) == 0
    out = capsys.readouterr().out
    (record,) = (store / "sea").glob("*.toml")
    text = record.with_suffix(".log").read_text(encoding="utf-8")
    assert "uartlab calibrate sea" in text
    assert "calibrate sea: 6 of 6 tendons" in text              # the progress summary
    for line in out.splitlines():                              # every printed line
        assert line.strip() in text
    assert f"written {record}" in text


def test_a_dry_run_writes_no_log(tmp_path):
    store = tmp_path / "calibrations"
    assert main(["calibrate", "sea", "--store", str(store), "--dry-run"]) == 0
    assert not store.exists() or not list(store.rglob("*.log"))


def test_log_file_lets_info_in_and_leaves_the_console_as_it_was(tmp_path):
    root = logging.getLogger()
    console = logging.StreamHandler(sys.stderr)
    root.addHandler(console)
    level = root.level
    root.setLevel(logging.WARNING)
    try:
        with logs.log_file(tmp_path / "a.log"):
            assert console.level == logging.WARNING and root.level == logging.INFO
            logging.getLogger("uartlab.test").info("hello")
            logging.getLogger("uartlab.test").debug("not this")
            with logs.log_file(None) as inner:
                logging.getLogger("uartlab.test").info("nested")
                inner.note("printed line")
            assert "nested" in inner.text() and "printed line" in inner.text()
        assert console.level == logging.NOTSET and root.level == logging.WARNING
    finally:
        root.removeHandler(console)
        root.setLevel(level)
    text = (tmp_path / "a.log").read_text(encoding="utf-8")
    assert "INFO uartlab.test: hello" in text and "nested" in text
    assert "not this" not in text and "printed line" not in text
    with pytest.raises(KeyboardInterrupt), logs.log_file(tmp_path / "b.log"):
        raise KeyboardInterrupt
    assert "stopped by KeyboardInterrupt" in (tmp_path / "b.log").read_text(encoding="utf-8")


def test_clock_sync_updates_are_debug_and_faults_warnings(caplog):
    assert logs.event_level("clock") == logging.DEBUG
    assert logs.event_level("trip") == logging.WARNING and logs.event_level("fault") == logging.WARNING
    assert logs.event_level("trial") == logging.INFO
    with caplog.at_level(logging.DEBUG, logger="uartlab.events"):
        logs.log_event(Event(0.0, "clock", "daq", "host - device = 0.1 s"))
    assert caplog.records[-1].levelno == logging.DEBUG


def test_a_gui_recording_keeps_its_log_until_closed_with_the_rig_events(tmp_path):
    """RecordingSession(log=True), as the GUI's recording dock and protocol runs create it: the run's events at
    their levels (clock-sync updates are debug: not in the file), no rig needed."""
    from conftest import ScriptedRig
    from uartlab.app.record.session import RecordingSession

    rig = ScriptedRig()
    path = tmp_path / "session_gui.h5"
    session = RecordingSession(rig, path, operator="kim", log=True)
    rig.hub.event("trial", "runner", "start 'free/FDP' repeat 1/1")
    rig.hub.event("clock", "daq", "USB-6210: host - device = 0.000100 s")
    rig.hub.event("trip", "interlocks", "tendon force over the limit")
    session.close()
    logging.getLogger("uartlab.test").warning("after the close")
    text = path.with_suffix(".log").read_text(encoding="utf-8")
    assert "session_gui.h5" in text and "operator 'kim'" in text
    assert "INFO uartlab.events: trial [runner] start 'free/FDP'" in text
    assert "WARNING uartlab.events: trip [interlocks]" in text
    assert "host - device" not in text and "after the close" not in text


def test_replay_shows_the_seconds_played_when_forced_and_q_keeps_only_the_summary(one_trial_session, capsys,
                                                                                   monkeypatch):
    monkeypatch.setenv(progress.ENV, "1")
    monkeypatch.setattr(logging.getLogger(), "level", logging.WARNING)
    assert main(["replay", str(one_trial_session), "--speed", "max"]) == 0
    err = capsys.readouterr().err
    assert f"replay {one_trial_session}" in err and "100%|" in err  # every second of the file played
    quiet = uartlab("replay", str(one_trial_session), "--speed", "max", "-q", env={progress.ENV: "1"})
    assert quiet.returncode == 0 and quiet.stderr == ""
    assert "done in" in quiet.stdout and "t=" not in quiet.stdout


def test_replay_logs_the_files_events_at_their_levels_marked_replayed(twin_session_file):
    """A twin run's own file: its trials, phases and steady states come back as the live run logged them."""
    from uartlab.app.record.player import SessionFile

    with SessionFile(twin_session_file) as f:
        recorded = [e for e in f.events() if logs.event_level(e.kind) >= logging.INFO]
    assert any(e.kind == "trial" for e in recorded)
    proc = uartlab("replay", str(twin_session_file), "--speed", "max", "-v")
    assert proc.returncode == 0, proc.stderr
    said = [line for line in proc.stderr.splitlines() if line.startswith("replayed ")]
    assert said == [f"replayed {e.kind} [{e.source}] {e.message}" for e in recorded]
    plain = uartlab("replay", str(twin_session_file), "--speed", "max")   # warnings only: none in this run
    assert plain.returncode == 0 and "replayed " not in plain.stderr


SHORT_SUITE = short_suite_toml()


@pytest.mark.realtime
def test_a_quiet_run_logs_its_trials_beside_the_session(tmp_path):
    suite = tmp_path / "short.toml"
    suite.write_text(SHORT_SUITE, encoding="utf-8")
    proc = uartlab("run", str(suite), "--out", str(tmp_path), "--speed", "4", "--no-live-model", "-q")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == "" and "[" not in proc.stdout.splitlines()[0]  # -q: no progress lines, the summary
    (h5,) = tmp_path.glob("session_*_short.h5")
    text = h5.with_suffix(".log").read_text(encoding="utf-8")
    assert f"uartlab run short: session {h5.name}" in text and "rig started from" in text
    assert "trial [runner] start 'ED' repeat 1/1" in text and "run ended DONE: 1 of 1 trials run" in text
