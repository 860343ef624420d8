"""A rig core started for a client: its output kept in the operator's uartlab folder, its failure one line."""

from __future__ import annotations

import tempfile

import pytest
from uartlab.app.serve import spawn
from uartlab.errors import ConfigError


def start_on_a_missing_rig(tmp_path) -> tuple[str, object]:
    missing = tmp_path / "no-such-rig.toml"
    child = spawn.start_core(f"ipc://{tmp_path}/core", rig=missing)
    with pytest.raises(ConfigError) as failed:
        spawn.wait_until_answers(child, f"ipc://{tmp_path}/core", timeout_s=60)
    return str(failed.value), child


def test_a_core_that_does_not_start_is_one_line_and_its_log_keeps_it(tmp_path, monkeypatch):
    monkeypatch.setenv("UARTLAB_CONFIG_DIR", str(tmp_path / "operator"))
    log = tmp_path / "operator" / spawn.LOG_NAME
    log.parent.mkdir()
    log.write_bytes(b"x" * (spawn.LOG_KEEP_BYTES + 1))               # a log grown past its size
    said, child = start_on_a_missing_rig(tmp_path)
    assert said.startswith("the rig core did not start: ") and "no-such-rig.toml" in said and "\n" not in said
    assert child.log_path == log and log.with_name(log.name + ".1").stat().st_size > spawn.LOG_KEEP_BYTES
    text = log.read_text()
    assert text.startswith(spawn.LOG_HEADER) and "rig serve --core" in text and "no-such-rig.toml" in text


def test_an_unwritable_uartlab_folder_moves_the_log_to_the_temporary_folder(tmp_path, monkeypatch):
    in_the_way = tmp_path / "operator"
    in_the_way.write_text("a file where the folder would be")
    monkeypatch.setenv("UARTLAB_CONFIG_DIR", str(in_the_way))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    said, child = start_on_a_missing_rig(tmp_path)           # the run's failure is still the core's own line
    assert "no-such-rig.toml" in said
    assert child.log_path.parent == tmp_path / "tmp" and "no-such-rig.toml" in child.log_path.read_text()
