"""The rig.toml a session embeds reads back as the rig that ran: the file's own text when nothing changed it,
the command line's [twin] changes written in otherwise (`uartlab run --speed 3`, `demo` at 4x)."""

from __future__ import annotations

from dataclasses import replace

from uartlab.app.rig.config import RigConfig, default_rig_config, parse_rig_config
from uartlab.app.rig.config_text import effective_config_text


def test_unchanged_config_is_its_file_text():
    config = default_rig_config()
    assert effective_config_text(config) == config.text


def test_a_changed_twin_is_written_in_and_the_rest_keeps_its_comments():
    config = default_rig_config()
    ran = replace(config, twin=replace(config.twin, speed=3.0, seed=7, surface_angle_deg=30.0))
    text = effective_config_text(ran)
    assert parse_rig_config(text, config.source) == replace(ran, text=text)
    assert text.startswith("# twin_rig.toml, with what this rig ran written in:\n#   [twin] as this rig ran it "
                           "(speed = 3.0, seed = 7, surface_angle_deg = 30.0)\n")
    assert "rate_hz = 1000.0            # per channel; the Nano17 needs >= 1 kHz" in text


def test_a_config_built_in_code_is_toml_not_a_python_repr():
    text = effective_config_text(RigConfig())
    assert not text.startswith("RigConfig(")
    assert parse_rig_config(text, "embedded.toml").twin == RigConfig().twin
