"""A session file with damaged bytes (a bad sector, a copy gone wrong): `uartlab verify` finds every damaged
chunk by its checksum and names its rows; replay and export say which dataset in one line; compare goes on
with the trials it can read; `verify --repair` copies every whole sample."""

from __future__ import annotations

import shutil
from pathlib import Path

import h5py
import numpy as np
import pytest
from conftest import damage_chunk
from uartlab.app.cli.main import main
from uartlab.app.compare.measured import load_trials
from uartlab.app.compare.synthetic import write_model_session
from uartlab.app.record.player import SessionFile
from uartlab.app.record.repair import default_out
from uartlab.schema import ACTUATORS, DAQ, JOINTS_IK
from uartlab.sim.scenarios import contact_trial, free_motion_trial
from uartlab.streams import HOST_TIME

TRIALS = [free_motion_trial("FDP"), contact_trial("Curl", "FDP", "ED")]
ANGLES = f"/streams/{JOINTS_IK.stream}/{JOINTS_IK.angles_rad}"
POTS = f"/streams/{DAQ.stream}/{DAQ.pot_V}"
EXCURSION = f"/streams/{ACTUATORS.stream}/{ACTUATORS.excursion_m}"          # a float: NaN in a repaired copy
HARDWARE_ERROR = f"/streams/{ACTUATORS.stream}/{ACTUATORS.hardware_error}"  # a count: no NaN for it


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("integrity") / "written.h5"
    write_model_session(path, TRIALS, repeats=2, seed=1)
    return str(path)


@pytest.fixture
def session(written, tmp_path) -> str:
    path = tmp_path / "session.h5"
    shutil.copy(written, path)
    return str(path)


def test_verify_names_every_damaged_chunk_by_its_rows(session, capsys):
    assert main(["verify", session]) == 0
    capsys.readouterr()
    start, stop = damage_chunk(session, ANGLES, 1100)
    first, last = damage_chunk(session, POTS, 10)
    assert main(["verify", session]) == 1        # readable, with problems
    out = capsys.readouterr().out
    assert f"problem: {ANGLES}: rows {start}-{stop - 1} damaged (a chunk fails its checksum" in out
    assert f"problem: {POTS}: rows {first}-{last - 1} damaged (a chunk fails its checksum" in out
    assert out.count("problem:") == 2


@pytest.mark.parametrize("command", [["export", "--to", "csv"], ["replay", "--speed", "max"]])
def test_reading_a_damaged_chunk_is_one_line_naming_the_file_and_dataset(session, command, tmp_path, capsys):
    damage_chunk(session, ANGLES, 0)
    args = [command[0], session, *command[1:]] + (["-o", str(tmp_path / "csv")] if command[0] == "export" else [])
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"uartlab {command[0]}: {session}: {ANGLES} rows 0-")
    assert "damaged (a chunk fails its checksum or decompression" in err[0] and "uartlab verify --repair" in err[0]


def test_compare_goes_on_without_the_trials_whose_rows_are_damaged(session):
    with SessionFile(session) as clean:
        spans = {t["index"]: clean.rows_between(JOINTS_IK.stream, t["start_host_time_s"], t["stop_host_time_s"])
                 for t in clean.trials()}
    start, stop = damage_chunk(session, ANGLES, 1100)
    hit = {i for i, (a, b) in spans.items() if a < stop and start < b}
    assert hit and hit != set(spans)              # the test's damage spares some trials
    trials, skipped = load_trials(session)
    assert sorted(t.index for t in trials) == sorted(set(spans) - hit)
    assert sorted(int(label.split("#")[1].split()[0]) for label, _ in skipped) == sorted(hit)
    assert all(why.startswith(f"{ANGLES} rows ") and "damaged" in why for _, why in skipped)


def test_repair_keeps_every_whole_sample_nan_where_a_value_was_lost(session, capsys):
    nan_start, nan_stop = damage_chunk(session, EXCURSION, 700)   # a float: NaN in the copy
    lost_start, n = damage_chunk(session, HARDWARE_ERROR, 1400)     # a count: those samples go
    with SessionFile(session) as s:
        assert n == s.length(ACTUATORS.stream) and nan_stop <= lost_start   # the last chunk; another before it
    assert main(["verify", "--repair", session]) == 0
    said = capsys.readouterr().out
    copy = str(default_out(session))
    assert (f"actuators: {n - lost_start} samples dropped ({lost_start} kept, ~{(n - lost_start) / 100:.3f} s at "
            f"100 Hz lost), excursion_m NaN in {nan_stop - nan_start} rows (a chunk fails its checksum") in said
    assert main(["verify", copy]) == 0
    with h5py.File(session, "r") as original, h5py.File(copy, "r") as f:
        actuators, before = f[f"/streams/{ACTUATORS.stream}"], original[f"/streams/{ACTUATORS.stream}"]
        assert actuators[HOST_TIME].shape == (lost_start,)
        np.testing.assert_array_equal(actuators[HOST_TIME][:], before[HOST_TIME][:lost_start])
        excursion = actuators[ACTUATORS.excursion_m][:]
        assert np.isnan(excursion[nan_start:nan_stop]).all()
        np.testing.assert_array_equal(excursion[:nan_start], before[ACTUATORS.excursion_m][:nan_start])
        np.testing.assert_array_equal(excursion[nan_stop:], before[ACTUATORS.excursion_m][nan_stop:lost_start])
        assert actuators[ACTUATORS.excursion_m].fletcher32          # stored as the writer stores it
        for stream in (DAQ.stream, JOINTS_IK.stream):                     # the other streams are whole
            np.testing.assert_array_equal(f[f"/streams/{stream}/{HOST_TIME}"][:],
                                          original[f"/streams/{stream}/{HOST_TIME}"][:])


def test_a_truncated_copy_is_said_truncated_with_how_much_is_there(session, capsys):
    whole = Path(session).read_bytes()
    Path(session).write_bytes(whole[:len(whole) // 2])
    assert main(["verify", session]) == 2
    assert capsys.readouterr().err.strip() == (
        f"uartlab verify: {session}: truncated: {len(whole) // 2:,} of its {len(whole):,} bytes are there "
        "(an interrupted copy or download?); HDF5 cannot open it")


def test_in_a_file_still_being_written_damage_counts_after_its_retries(session):
    """Read as a live file (SWMR) is, a chunk that fails is read again (a rewrite under the read passes) and
    still counts as damage when it keeps failing."""
    from uartlab.app.record.integrity import unreadable_rows

    start, stop = damage_chunk(session, ANGLES, 1100)
    with h5py.File(session, "r", swmr=True) as f:
        assert f.swmr_mode and unreadable_rows(f[ANGLES]) == [(start, stop)]
