"""rig.toml: the shipped twin config loads; every bad file is refused with file:line: key: reason."""

from __future__ import annotations

import re
import subprocess
import sys
from importlib import resources

import pytest
from uartlab.app.rig.config import TWIN_RIG, default_rig_config, load_rig_config
from uartlab.drivers.interfaces import ConfigError

DEFAULT = (resources.files("uartlab.app") / "data" / "twin_rig.toml").read_text(encoding="utf-8")


def test_the_default_config_is_all_twin_and_loads():
    cfg = default_rig_config()
    assert cfg.uses_twin and cfg.actuators.backend == cfg.daq.backend == cfg.mocap.backend == "twin"
    assert cfg.actuators.ids == (1, 2, 3, 4, 5, 6) and cfg.actuators.protocol == 2.0
    assert cfg.daq.rate_hz == 1000.0 and cfg.sea.calibrations is None and cfg.nano17.calibration_file is None
    assert [g.spool_radius_m for g in cfg.actuators.seas] == [0.020] * 6


def test_every_rig_option_takes_twin_for_the_shipped_twin_rig(tmp_path):
    """`uartlab gui --rig twin` and `uartlab calibrate ... --rig twin` name the twin rig so; `uartlab run`,
    `record` and `rig serve` take the same word (it once read a file called "twin" and failed)."""
    assert load_rig_config(TWIN_RIG) == default_rig_config()
    run = subprocess.run([sys.executable, "-m", "uartlab.app.cli", "run", "free_motion", "--rig", TWIN_RIG,
                          "--trial", "free/FDP", "--dry-run"], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "the suite is safe to run" in run.stdout


def test_per_tendon_geometry_calibrations_and_a_relative_cal_file(tmp_path):
    (tmp_path / "cal").mkdir()
    (tmp_path / "cal" / "FT1.cal").write_text("<x/>")
    sea = "\n".join(f"[sea.{t}]\nv0_V = 1.0\ngain_N_per_V = {7 + i}.0" for i, t in
                    enumerate(["FDP", "FDS", "ED", "DI", "PI", "LUM"]))
    text = (DEFAULT.replace('calibration = "from_twin"', "")
            .replace('calibration_file = "from_twin"', 'calibration_file = "cal/FT1.cal"')
            + "\n[actuators.ED]\ndirection = -1\nspool_radius_mm = 15.0\n" + sea)
    path = tmp_path / "rig.toml"
    path.write_text(text)
    cfg = load_rig_config(path)
    assert cfg.actuators.seas[2].direction == -1 and cfg.actuators.seas[2].spool_radius_m == 0.015
    assert cfg.actuators.seas[0].direction == 1
    assert [c.gain_N_per_V for c in cfg.sea.calibrations] == [7.0, 8.0, 9.0, 10.0, 11.0, 12.0]
    assert cfg.nano17.calibration_file == tmp_path / "cal" / "FT1.cal"


def _line(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


BAD = [  # (what to replace, with what, key, reason pattern, line marker)
    ("[twin]", "[twins]", "twins", "unknown section", "[twins]"),
    ('marker_set = "uart_finger"', 'marker_set = "uart_finger"\nmarkerset = "x"', "mocap.markerset", "unknown key",
     "markerset ="),
    ("baud = 1000000", 'baud = "fast"', "actuators.baud", "expected an integer, got str", "baud ="),
    ("rate_hz = 1000.0", "rate_hz = true", "daq.rate_hz", "expected a number, got bool", "rate_hz = true"),
    ("ids = [1, 2, 3, 4, 5, 6]", "ids = [1, 2, 3, 4, 5, 1]", "actuators.ids", r"duplicate servo IDs \[1\]", "ids ="),
    ("ids = [1, 2, 3, 4, 5, 6]", "ids = [1, 2, 3, 4, 5, 253]", "actuators.ids", "0..252", "ids ="),
    ("ids = [1, 2, 3, 4, 5, 6]", "ids = [1, 2, 3]", "actuators.ids", "expected 6 integer IDs", "ids ="),
    ('calibration_file = "from_twin"', 'calibration_file = "missing.cal"', "nano17.calibration_file",
     "no such file .*missing.cal", "calibration_file ="),
    ('[actuators]\nbackend = "twin"', '[actuators]\nbackend = "x"', "actuators.backend",
     r"unknown backend 'x' \(real, twin\)$", 'backend = "x"'),
    ('[daq]\nbackend = "twin"', '[daq]\nbackend = "simulated"', "daq.backend",
     r"unknown backend 'simulated' \(real, twin\)$", 'backend = "simulated"'),
    ('gauges = "ai8:13"', 'gauges = "ai12:17"', "daq.gauges", "ai16 does not exist", "gauges ="),
    ('reference = "ai6"', 'reference = "ai5"', "daq.reference", "ai5 is already used by daq.pots", "reference ="),
    ("protocol = 2.0", "protocol = 3.0", "actuators.protocol", "1.0 or 2.0", "protocol ="),
    ("protocol = 2.0", "protocol = nan", "actuators.protocol", "must be finite, got nan", "protocol ="),
    ('multicast = ""', 'multicast = "239.255.42"', "mocap.multicast", "not an IPv4 multicast group", "multicast ="),
    ('multicast = ""', 'multicast = "10.0.0.5"', "mocap.multicast", "not an IPv4 multicast group", "multicast ="),
    ('local = "127.0.0.1"', 'local = "motive-pc"', "mocap.local", "not an IPv4 address", "local ="),
    ('server = "127.0.0.1"', 'server = " "', "mocap.server", "empty", "server ="),
    ('pose = "Flex"', 'pose = "Fist"', "twin.pose", "unknown value 'Fist'", "pose ="),
    ("speed = 1.0", "speed = 0", "twin.speed", "> 0", "speed ="),
    ('pose = "Flex"', 'pose = "Flex"\nsurface_angle_deg = -270', "twin.surface_angle_deg", "within ±180 deg",
     "surface_angle_deg ="),
    ("speed = 1.0", "speed = 1e-300", "twin.speed", r"slower than a twin rig is run \(at least 0.01x\)", "speed ="),
    # values finite and positive that no rig can run with: each refused with what it may be
    ("poll_rate_hz = 200.0", "poll_rate_hz = 1e308", "actuators.poll_rate_hz", "at most 1000 Hz", "poll_rate_hz ="),
    ("poll_rate_hz = 200.0", "poll_rate_hz = 1", "actuators.poll_rate_hz",
     r"must be above 2 Hz \(a poll within each 500 ms of the Bus Watchdog\)", "poll_rate_hz ="),
    ("packet_timeout_ms = 200.0", "packet_timeout_ms = 1e308", "actuators.packet_timeout_ms",
     r"shorter than watchdog_ms \(500 ms\)", "packet_timeout_ms ="),
    ("spool_radius_mm = 20.0", "spool_radius_mm = 0.02", "actuators.spool_radius_mm", "within 1-100 mm",
     "spool_radius_mm ="),
    ("rate_hz = 1000.0", "rate_hz = 1e6", "daq.rate_hz", r"19230.8 Hz \(250 kS/s over 13 channels\)", "rate_hz = 1e6"),
    ("rate_hz = 1000.0", "rate_hz = 10", "daq.rate_hz", r"within 100 Hz \(a fresh force each control tick\)",
     "rate_hz = 10"),
    ("perturbation = 0.0", "perturbation = 5", "twin.perturbation", r"a fraction in \[0, 1\)", "perturbation ="),
    ("flush_interval_s = 1.0", "flush_interval_s = 1e-300", "recording.flush_interval_s", ">= 0.05 s",
     "flush_interval_s ="),
    ("speed = 1.0", "speed = 1e9", "twin.speed", r"faster than the twin rig keeps up with \(at most 20x\)", "speed ="),
    ("direction = 1 ", "direction = 0 ", "actuators.direction", r"\+1 or -1", "direction ="),
    ('[daq]\nbackend = "twin"', '[daq]\nbackend = "real"', "sea.calibration", "needs daq.backend = 'twin'",
     'calibration = "from_twin"'),
    ("daq_max_age_s = 1.0", "daq_max_age_s = -1", "interlocks.daq_max_age_s", "> 0", "daq_max_age_s ="),
    ("daq_max_age_s = 1.0", "daq_max_age = 1.0", "interlocks.daq_max_age", "unknown key", "daq_max_age ="),
]


@pytest.mark.parametrize(("old", "new", "key", "reason", "marker"), BAD, ids=[b[2] + ":" + b[3][:20] for b in BAD])
def test_a_bad_config_is_one_error_with_file_line_key_and_reason(tmp_path, old, new, key, reason, marker):
    assert old in DEFAULT, old
    text = DEFAULT.replace(old, new, 1)
    path = tmp_path / "rig.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_rig_config(path)
    message = str(err.value)
    assert re.match(rf"{re.escape(str(path))}:{_line(text, marker)}: {re.escape(key)}: .*{reason}", message), message


def test_unreadable_and_invalid_toml_name_the_file(tmp_path):
    with pytest.raises(ConfigError, match="nothing.toml: cannot read"):
        load_rig_config(tmp_path / "nothing.toml")
    (tmp_path / "rig.toml").write_text("[daq\n")
    with pytest.raises(ConfigError, match="rig.toml:1: not valid TOML"):
        load_rig_config(tmp_path / "rig.toml")


def test_interlock_limits_default_to_the_hardwares_and_the_twin_allows_for_a_busy_cpu(tmp_path):
    assert default_rig_config().interlocks.max_stream_age_s == {"actuators": 1.0, "daq": 1.0, "mocap": 1.0,
                                                                "joints": 1.0}
    start = DEFAULT.index("[interlocks]")
    path = tmp_path / "rig.toml"
    path.write_text(DEFAULT[:start] + "[interlocks]\nmocap_max_age_s = 0.1\n")
    assert load_rig_config(path).interlocks.max_stream_age_s == {"actuators": 0.25, "daq": 0.25, "mocap": 0.1,
                                                                 "joints": 0.5}
