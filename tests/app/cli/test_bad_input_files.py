"""Every foreseeable bad file or path, through the real command line: one line on stderr naming what and where.

Each case builds its inputs in a fresh folder and runs ``uartlab ...`` in-process (``cli.main``); it asserts
the exit status (2: a file or path the user named cannot be used; 3: a folder uartlab must write cannot be
written), that stderr is exactly one line naming the file (and the line and key where the format has them),
and that no traceback and no "internal error" reached the user. Permission cases are made real for root
too: a path *under a regular file* cannot be read or created by anyone.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import h5py
import numpy as np
import pytest
from uartlab.app.cli import main as cli

BAD_INPUT, IO_FAILURE = 2, 3

GOOD_SUITE = """\
[suite]
name = "mine"
repeats = 1

[[trial]]
name = "free/FDP"
pose = "Flex"
pulls = [{ tendon = "FDP", amplitude_mm = 10.0, duration_s = 4.0 }]
"""

GOOD_RECORD = """\
schema = "uartlab.calibration/1"
kind = "sea"

[provenance]
operator = "ana"
rig = "twin"
method = "hanging weights"
created_utc = 2026-12-02T10:00:00Z

[values.FDP]
v0_V = 1.0
gain_N_per_V = 6.5
"""

NAMES_MISSING = '[current]\nsea = "sea/x.toml"\n'
CAL_GOOD_HEAD = ('<?xml version="1.0" encoding="utf-8"?>\n'
                 '<FTSensor Serial="FT1" BodyStyle="Nano17" Family="DAQ" NumGages="6" CalFileVersion="1.1">\n')


# ------------------------------------------------------------------ a real session, once per module
@pytest.fixture(scope="module")
def session(tmp_path_factory) -> Path:
    from uartlab.app.compare.synthetic import write_model_session
    from uartlab.sim import paper_trials

    path = tmp_path_factory.mktemp("session") / "session.h5"
    write_model_session(path, paper_trials()[:1], repeats=1)
    return path


# ------------------------------------------------------------------ helpers for the cases
def write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


def blocker(tmp: Path) -> Path:
    """A regular file: anything under it can be neither read nor created, not even by root."""
    return write(tmp / "file.txt", "a plain file\n")


def suite_file(tmp: Path, text: str | bytes) -> Path:
    return write(tmp / "suite.toml", text)


def store_rig(tmp: Path, records: dict[str, str | bytes], current: str | None = None) -> Path:
    """rig.toml naming a store whose files are ``records`` (relative path -> text), current.toml ``current``."""
    for rel, text in records.items():
        write(tmp / "store" / rel, text)
    if current is None:
        current = 'schema = "uartlab.calibration/1"\n[current]\n' + "".join(
            f'{rel.split("/")[0]} = "{rel}"\n' for rel in records)
    write(tmp / "store" / "current.toml", current)
    return write(tmp / "rig.toml", '[calibration]\nstore = "store"\n')


def cal_file(tmp: Path, text: str | bytes) -> Path:
    return write(tmp / "sensor.cal", text)


def session_input(tmp: Path, kind: str, session: Path) -> Path:
    """A file that is not a usable session: empty, truncated, random bytes, another program's HDF5, a
    session of a schema this uartlab does not read, a folder, missing, or under a regular file."""
    path = tmp / "in.h5"
    if kind == "empty":
        write(path, b"")
    elif kind == "truncated":
        data = session.read_bytes()
        write(path, data[: len(data) // 3])
    elif kind == "random":
        write(path, np.random.default_rng(1).bytes(4096))
    elif kind == "foreign":
        with h5py.File(path, "w") as f:
            f["temperature"] = np.arange(10.0)
            f.attrs["creator"] = "another program"
    elif kind == "folder":
        path.mkdir()
    elif kind == "under_file":
        path = blocker(tmp) / "in.h5"
    elif kind == "newer":  # a session file of a layout this uartlab does not read
        shutil.copy(session, path)
        with h5py.File(path, "r+") as f:
            f.attrs["schema"] = "uartlab.session/99"
    elif kind == "headless":  # a uartlab file whose streams group lost its datasets (edited by hand)
        shutil.copy(session, path)
        with h5py.File(path, "r+") as f:
            del f["trials/table"]
            f["trials/table"] = np.arange(3)
    elif kind in STREAM_EDITS:  # a stream's dataset replaced or deleted by another program
        shutil.copy(session, path)
        with h5py.File(path, "r+") as f:
            del f[STREAM_EDITS[kind]]
            if kind == "field_text":
                f[STREAM_EDITS[kind]] = "edited"
    return path


# kind -> the dataset it replaces with a text (field_text) or deletes
STREAM_EDITS = {"field_text": "/streams/daq/pot_V", "no_host_times": "/streams/joints/host_time_s"}
SESSION_KINDS = ("empty", "truncated", "random", "foreign", "newer", "folder", "missing", "under_file", "headless",
                 *STREAM_EDITS)


def session_cmd(command: str, path: Path, tmp: Path) -> list[str]:
    return {"verify": ["verify", str(path)],
            "replay": ["replay", str(path), "--speed", "max"],
            "compare": ["compare", str(path), "--out", str(tmp / "report"), "--no-figures"],
            "calibrate-model": ["calibrate", "model", "--session", str(path), "--dry-run"],
            "export": ["export", str(path), "--to", "csv", "-o", str(tmp / "csv")]}[command]


# ------------------------------------------------------------------ the table
# id -> (build(tmp, session) -> (argv, names to find on the line), exit status)
CASES = {
    # ---- suites: uartlab run SUITE --dry-run
    "suite-not-toml": (lambda t, s: (["run", str(suite_file(t, "[suite\nname = 'x'\n")), "--dry-run"],
                                     ["suite.toml:1:", "not valid TOML"]), BAD_INPUT),
    "suite-wrong-type": (lambda t, s: (["run", str(suite_file(t, GOOD_SUITE.replace("repeats = 1",
                                                                                  'repeats = "five"'))),
                                        "--dry-run"], ["suite.toml:3:", "suite.repeats"]), BAD_INPUT),
    "suite-pull-wrong-type": (lambda t, s: (["run", str(suite_file(t, GOOD_SUITE.replace("10.0", '"ten"'))),
                                             "--dry-run"], ["suite.toml:8:", "trial[0].pulls[0].amplitude_mm"]),
                              BAD_INPUT),
    "suite-missing-key": (lambda t, s: (["run", str(suite_file(t, GOOD_SUITE.replace('pose = "Flex"\n', ""))),
                                         "--dry-run"], ["suite.toml:5:", "trial[0].pose", "missing"]), BAD_INPUT),
    "suite-missing-table": (lambda t, s: (["run", str(suite_file(t, 'colour = "red"\n')), "--dry-run"],
                                          ["suite.toml", "colour", "[suite]"]), BAD_INPUT),
    "suite-unknown-key": (lambda t, s: (["run", str(suite_file(t, GOOD_SUITE.replace("repeats = 1",
                                                                                   "repeats = 1\ncolour = 2"))),
                                         "--dry-run"], ["suite.toml:4:", "suite.colour", "unknown key"]), BAD_INPUT),
    "suite-empty": (lambda t, s: (["run", str(suite_file(t, "")), "--dry-run"], ["suite.toml", "[suite]"]),
                    BAD_INPUT),
    "suite-binary": (lambda t, s: (["run", str(suite_file(t, b"\xff\xfe\x00garbage\x80" * 20)), "--dry-run"],
                                   ["suite.toml", "UTF-8"]), BAD_INPUT),
    "suite-folder": (lambda t, s: (["run", str((t / "suite.toml").mkdir() or t / "suite.toml"), "--dry-run"],
                                   ["suite.toml", "is a directory"]), BAD_INPUT),
    "suite-missing": (lambda t, s: (["run", str(t / "nothing.toml"), "--dry-run"],
                                    ["nothing.toml", "no such file"]), BAD_INPUT),
    "suite-mistyped-name": (lambda t, s: (["run", "free_motoin", "--dry-run"], ["free_motoin", "built-in"]),
                            BAD_INPUT),
    "suite-under-file": (lambda t, s: (["run", str(blocker(t) / "suite.toml"), "--dry-run"],
                                       ["file.txt/suite.toml", "not a directory"]), BAD_INPUT),
    # ---- rig.toml: run --dry-run --rig, record --rig
    "rig-not-toml": (lambda t, s: (["run", "free_motion", "--dry-run", "--rig",
                                    str(write(t / "rig.toml", "[twin]\nspeed = = 2\n"))],
                                   ["rig.toml:2:", "not valid TOML"]), BAD_INPUT),
    "rig-wrong-type": (lambda t, s: (["run", "free_motion", "--dry-run", "--rig",
                                      str(write(t / "rig.toml", '[twin]\nseed = 0\nspeed = "fast"\n'))],
                                     ["rig.toml:3:", "twin.speed"]), BAD_INPUT),
    "rig-unknown-key": (lambda t, s: (["run", "free_motion", "--dry-run", "--rig",
                                       str(write(t / "rig.toml", "[twin]\nsped = 2.0\n"))],
                                      ["rig.toml:2:", "twin.sped"]), BAD_INPUT),
    "rig-binary": (lambda t, s: (["run", "free_motion", "--dry-run", "--rig",
                                  str(write(t / "rig.toml", b"\x89PNG\r\n\x1a\n\xff\xff"))],
                                 ["rig.toml", "UTF-8"]), BAD_INPUT),
    "rig-folder": (lambda t, s: (["run", "free_motion", "--dry-run", "--rig", str(t)], [str(t), "directory"]),
                   BAD_INPUT),
    "rig-missing-record": (lambda t, s: (["record", "--seconds", "0.1", "--rig", str(t / "lab.toml")],
                                         ["lab.toml", "no such file"]), BAD_INPUT),
    "rig-bad-record": (lambda t, s: (["record", "--seconds", "0.1", "--rig",
                                      str(write(t / "rig.toml", '[daq]\nrate_hz = "fast"\n'))],
                                     ["rig.toml:2:", "daq.rate_hz"]), BAD_INPUT),
    # ---- model parameters: sim free-motion --params, compare --params
    "params-not-toml": (lambda t, s: (["sim", "free-motion", "--tendon", "FDP", "--params",
                                       str(write(t / "p.toml", "[tendons]\nx = [1, 2\n"))],
                                      ["p.toml:2:", "not valid TOML", "end of the file"]), BAD_INPUT),
    "params-wrong-type": (lambda t, s: _params_case(t, "stiffness_Nmm_per_rad = 0.0", 'stiffness_Nmm_per_rad = "x"',
                                                    "joints.MCP_AB.stiffness_Nmm_per_rad"), BAD_INPUT),
    "params-unknown-key": (lambda t, s: _params_case(t, "schema", 'colour = "red"\nschema', "colour", "unknown key"),
                           BAD_INPUT),
    "params-binary": (lambda t, s: (["sim", "paper", "--params", str(write(t / "p.toml", b"\x00\xff" * 64))],
                                    ["p.toml", "UTF-8"]), BAD_INPUT),
    "params-folder": (lambda t, s: (["sim", "export-urdf", "-o", str(t / "f.urdf"), "--params", str(t)],
                                    [str(t), "directory"]), BAD_INPUT),
    "params-missing": (lambda t, s: (["sim", "params", "--params", str(t / "none.toml")],
                                     ["none.toml", "no such file"]), BAD_INPUT),
    "compare-params-bad": (lambda t, s: (["compare", str(s), "--out", str(t / "r"), "--params",
                                          str(write(t / "p.toml", "= 1\n"))], ["p.toml:1:", "not valid TOML"]),
                           BAD_INPUT),
    "compare-params-b-bad": (lambda t, s: (["compare", str(s), "--out", str(t / "r"), "--params-b",
                                            str(write(t / "q.toml", 'schema = 3\n'))], ["q.toml:1:", "schema"]),
                             BAD_INPUT),
    "calibrate-model-params-bad": (lambda t, s: (["calibrate", "model", "--dry-run", "--session", str(s), "--params",
                                                 str(write(t / "q.toml", b"\xff\xfe"))], ["q.toml", "UTF-8"]),
                                  BAD_INPUT),
    "run-params-bad": (lambda t, s: (["run", "free_motion", "--out", str(t / "rec"), "--params",
                                      str(write(t / "p.toml", "a = [\n"))], ["p.toml:1:", "not valid TOML"]),
                       BAD_INPUT),
    "rig-cal-file-bad": (lambda t, s: (["run", "free_motion", "--dry-run", "--rig",
                                        str(write(t / "rig.toml",
                                                  f'[nano17]\ncalibration_file = "{cal_file(t, "<x")}"\n'))],
                                       ["sensor.cal", "line 1"]), BAD_INPUT),
    "rig-store-is-a-file": (lambda t, s: (["run", "free_motion", "--dry-run", "--rig",
                                           str(write(t / "rig.toml", f'[calibration]\nstore = "{blocker(t)}"\n'))],
                                          ["file.txt", "not a calibration store folder"]), BAD_INPUT),
    # ---- ATI .cal files: calibrate nano17 --cal
    "cal-not-xml": (lambda t, s: (["calibrate", "nano17", "--dry-run", "--cal", str(cal_file(t, "FT1 1 2 3\n"))],
                                  ["sensor.cal", "not an XML file"]), BAD_INPUT),
    "cal-truncated": (lambda t, s: (["calibrate", "nano17", "--dry-run", "--cal",
                                     str(cal_file(t, CAL_GOOD_HEAD + '<Calibration PartNumber="x"'))],
                                    ["sensor.cal", "line 3"]), BAD_INPUT),
    "cal-missing-elements": (lambda t, s: (["calibrate", "nano17", "--dry-run", "--cal",
                                            str(cal_file(t, CAL_GOOD_HEAD + "</FTSensor>\n"))],
                                           ["sensor.cal", "Calibration"]), BAD_INPUT),
    "cal-binary": (lambda t, s: (["calibrate", "nano17", "--dry-run", "--cal",
                                  str(cal_file(t, np.random.default_rng(2).bytes(512)))],
                                 ["sensor.cal", "not an XML file"]), BAD_INPUT),
    "cal-unknown-encoding": (lambda t, s: (["calibrate", "nano17", "--dry-run", "--cal",
                                           str(cal_file(t, '<?xml version="1.0" encoding="utfv8"?>\n<FTSensor>'))],
                                          ["sensor.cal", "line 1", "can decode", "utfv8"]), BAD_INPUT),
    "cal-empty": (lambda t, s: (["calibrate", "nano17", "--dry-run", "--cal", str(cal_file(t, ""))],
                                ["sensor.cal"]), BAD_INPUT),
    "cal-folder": (lambda t, s: (["calibrate", "nano17", "--dry-run", "--cal", str(t)], [str(t)]), BAD_INPUT),
    "cal-missing": (lambda t, s: (["calibrate", "nano17", "--dry-run", "--cal", str(t / "FT9.cal")],
                                  ["FT9.cal"]), BAD_INPUT),
    "cal-at-rig-bad": (lambda t, s: (["calibrate", "nano17", "--dry-run", "--rig", "twin", "--cal",
                                      str(cal_file(t, "<FTSensor>"))], ["sensor.cal"]), BAD_INPUT),
    # ---- the calibration store, as a run's pre-flight reads it (run --dry-run --rig rig.toml)
    "store-record-not-toml": (lambda t, s: (["run", "free_motion", "--dry-run", "--rig",
                                             str(store_rig(t, {"sea/a.toml": GOOD_RECORD + "[values.ED\n"}))],
                                            ["sea/a.toml:13:", "not valid TOML"]), BAD_INPUT),
    "store-record-no-values": (lambda t, s: (["run", "free_motion", "--dry-run", "--rig",
                                              str(store_rig(t, {"sea/a.toml": GOOD_RECORD.split("[values")[0]}))],
                                             ["sea/a.toml", "values", "missing"]), BAD_INPUT),
    "store-record-wrong-type": (lambda t, s: (["run", "free_motion", "--dry-run", "--rig",
                                               str(store_rig(t, {"sea/a.toml": GOOD_RECORD.replace(
                                                   "6.5", '"steep"')}))],
                                              ["sea/a.toml:12:", "values.FDP.gain_N_per_V", "number"]), BAD_INPUT),
    "store-record-missing-key": (lambda t, s: (["run", "free_motion", "--dry-run", "--rig",
                                                str(store_rig(t, {"sea/a.toml": GOOD_RECORD.replace(
                                                    "v0_V = 1.0\n", "")}))],
                                               ["sea/a.toml:", "values.FDP.v0_V", "missing"]), BAD_INPUT),
    "store-record-unknown-key": (lambda t, s: (["run", "free_motion", "--dry-run", "--rig",
                                                str(store_rig(t, {"sea/a.toml": GOOD_RECORD + "offset_V = 2.0\n"}))],
                                               ["sea/a.toml:13:", "values.FDP.offset_V", "unknown key"]), BAD_INPUT),
    "store-record-bad-date": (lambda t, s: (["run", "free_motion", "--dry-run", "--rig",
                                             str(store_rig(t, {"sea/a.toml": GOOD_RECORD.replace(
                                                 "2026-12-02T10:00:00Z", '"yesterday"')}))],
                                            ["sea/a.toml:8:", "provenance.created_utc"]), BAD_INPUT),
    "store-nano17-bias-short": (lambda t, s: (["run", "free_motion", "--dry-run", "--rig",
                                               str(store_rig(t, {"nano17/a.toml": GOOD_RECORD.replace(
                                                   'kind = "sea"', 'kind = "nano17"').split("[values")[0]
                                                   + "[values]\nbias_V = [0.1, 0.2]\n"}))],
                                              ["nano17/a.toml:11:", "values.bias_V", "6 numbers"]), BAD_INPUT),
    "store-mocap-marker-no-link": (lambda t, s: (["run", "free_motion", "--dry-run", "--rig",
                                                  str(store_rig(t, {"mocap/a.toml": GOOD_RECORD.replace(
                                                      'kind = "sea"', 'kind = "mocap"').split("[values")[0]
                                                      + "[values.markers.M1]\nlocal_mm = [1, 2, 3]\nweight = 1\n"}))],
                                                 ["mocap/a.toml:", "values.markers.M1.link", "missing"]), BAD_INPUT),
    "store-sea-partial": (lambda t, s: (["run", "free_motion", "--dry-run", "--rig",
                                         str(store_rig(t, {"sea/a.toml": GOOD_RECORD}))],
                                        ["sea/a.toml", "values.FDS", "missing"]), BAD_INPUT),
    "store-record-binary": (lambda t, s: (["run", "free_motion", "--dry-run", "--rig",
                                           str(store_rig(t, {"sea/a.toml": b"\x80\xff" * 99}))],
                                          ["sea/a.toml", "UTF-8"]), BAD_INPUT),
    "store-not-a-record": (lambda t, s: (["run", "free_motion", "--dry-run", "--rig",
                                          str(store_rig(t, {"sea/a.toml": 'title = "notes"\n'}))],
                                         ["sea/a.toml", "schema"]), BAD_INPUT),
    "store-current-not-toml": (lambda t, s: (["run", "free_motion", "--dry-run", "--rig",
                                              str(store_rig(t, {}, current="[current\n"))],
                                             ["current.toml:1:", "not valid TOML"]), BAD_INPUT),
    "store-current-names-missing-file": (lambda t, s: (["run", "free_motion", "--dry-run", "--rig",
                                                        str(store_rig(t, {}, current=NAMES_MISSING))],
                                                       ["sea/x.toml", "no such file"]), BAD_INPUT),
    "store-current-unknown-kind": (lambda t, s: (["run", "free_motion", "--dry-run", "--rig",
                                                  str(store_rig(t, {}, current='[current]\nseaa = "a.toml"\n'))],
                                                 ["current.toml:2:", "current.seaa"]), BAD_INPUT),
    "calibrate-store-current-bad": (lambda t, s: (["calibrate", "sea", "--store",
                                                   str(write(t / "st" / "current.toml", "[current\n").parent)],
                                                  ["current.toml:1:", "not valid TOML"]), BAD_INPUT),
    # ---- output paths, checked before any work
    "out-compare": (lambda t, s: (["compare", str(s), "--out", str(blocker(t) / "report")],
                                  ["--out", "file.txt/report"]), IO_FAILURE),
    "out-compare-is-file": (lambda t, s: (["compare", str(s), "--out", str(blocker(t))],
                                          ["--out", "file.txt", "is a file"]), IO_FAILURE),
    "out-sim-plot": (lambda t, s: (["sim", "free-motion", "--tendon", "FDP", "--plot", str(blocker(t) / "p.png")],
                                   ["--plot", "file.txt/p.png"]), IO_FAILURE),
    "out-sim-plot-folder": (lambda t, s: (["sim", "free-motion", "--tendon", "FDP", "--plot", str(t)],
                                          ["--plot", str(t), "is a folder"]), IO_FAILURE),
    "out-export-urdf": (lambda t, s: (["sim", "export-urdf", "-o", str(blocker(t) / "f.urdf")],
                                      ["-o", "file.txt/f.urdf"]), IO_FAILURE),
    "out-sim-params": (lambda t, s: (["sim", "params", "-o", str(blocker(t) / "sub" / "p.toml")],
                                     ["-o", "file.txt/sub/p.toml"]), IO_FAILURE),
    "out-sim-params-folder": (lambda t, s: (["sim", "params", "-o", str(t)], ["-o", str(t), "is a folder"]),
                              IO_FAILURE),
    "out-calibrate-store": (lambda t, s: (["calibrate", "sea", "--store", str(blocker(t) / "cal")],
                                          ["--store", "file.txt/cal"]), IO_FAILURE),
    "out-calibrate-store-is-file": (lambda t, s: (["calibrate", "servo-zero", "--store", str(blocker(t))],
                                                  ["--store", "file.txt", "is a file"]), IO_FAILURE),
    "out-record": (lambda t, s: (["record", "--seconds", "0.1", "--out", str(blocker(t) / "rec")],
                                 ["--out", "file.txt/rec"]), IO_FAILURE),
    "out-run": (lambda t, s: (["run", "free_motion", "--out", str(blocker(t) / "rec")], ["--out", "file.txt/rec"]),
                IO_FAILURE),
    "out-demo": (lambda t, s: (["demo", "--out", str(blocker(t))], ["--out", "file.txt", "is a file"]), IO_FAILURE),
    "out-bench-record": (lambda t, s: (["bench", "record", "--seconds", "0.1", "--dir", str(blocker(t) / "b")],
                                       ["--dir", "file.txt/b"]), IO_FAILURE),
}

for _command in ("verify", "replay", "compare", "calibrate-model", "export"):
    for _kind in SESSION_KINDS:
        def _build(t, s, command=_command, kind=_kind):
            path = t / "in.h5" if kind == "missing" else session_input(t, kind, s)
            where = {"headless": ["/trials/table"], **{k: [d] for k, d in STREAM_EDITS.items()}}
            return session_cmd(command, path, t), [str(path), *where.get(kind, [])]
        if _kind == "headless" and _command in ("verify", "replay"):
            continue  # their reader does not read the trials table: nothing to refuse
        if _kind in STREAM_EDITS and _command == "verify":
            continue  # a readable file with a problem: verify lists it (test_verify.py)
        CASES[f"session-{_command}-{_kind}"] = (_build, BAD_INPUT)


def _params_text(old: str, new: str) -> str:
    from uartlab.sim import FingerParams

    return FingerParams.uart().to_toml().replace(old, new, 1)


def _params_case(folder: Path, old: str, new: str, *said: str) -> tuple[list[str], list[str]]:
    """`sim free-motion --params` on the defaults' file with ``old`` made ``new``: the message names the file at
    the line of ``new`` and says ``said``."""
    text = _params_text(old, new)
    line = next(n for n, row in enumerate(text.splitlines(), 1) if new.splitlines()[0] in row)
    return (["sim", "free-motion", "--tendon", "FDP", "--params", str(write(folder / "p.toml", text))],
            [f"p.toml:{line}:", *said])


# ------------------------------------------------------------------ the test
@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_file_is_one_line(case, tmp_path, session, capsys, monkeypatch):
    build, status = CASES[case]
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)   # anything a command writes by default stays in the test's folder
    argv, names = build(work, session)
    capsys.readouterr()
    started = time.monotonic()
    code = cli.main(argv)
    elapsed = time.monotonic() - started
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert code == status, f"{argv}: exit {code}, stderr {err!r}"
    assert len(lines) == 1 and lines[0].strip(), f"{argv}: stderr is not one line: {err!r}"
    assert "Traceback" not in err and "internal error" not in err
    for name in names:
        assert name in lines[0], f"{name!r} not in {lines[0]!r}"
    assert elapsed < 30, f"{argv} took {elapsed:.1f} s before refusing"
    if argv[0] == "calibrate" and argv[1] != "model":  # refused before the procedure ran: nothing printed
        assert "calibration (" not in out


def test_case_count():
    assert len(CASES) >= 40


def test_calibrate_store_checked_before_the_procedure(tmp_path):
    """`calibrate sea --store` on an unusable folder fails at once: the procedure never starts."""
    import subprocess
    import sys

    blocked = blocker(tmp_path)
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "uartlab.app.cli", "calibrate", "sea", "--store",
                           str(blocked / "calibrations")], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert done.returncode == IO_FAILURE
    assert done.stdout == "" and done.stderr.count("\n") == 1
    assert done.stderr.startswith("uartlab calibrate sea: --store ") and "file.txt/calibrations" in done.stderr
    assert time.monotonic() - started < 60
