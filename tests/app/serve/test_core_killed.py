"""The core killed with SIGKILL: nothing turns torque off, the servos' Bus Watchdog stops them (torque stays
on, holding), and the session file written so far reads. The twin runs as its own process (`uartlab twin
up`), the core on a rig.toml of real backends pointed at it, so the twin outlives the core as a servo does."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from importlib import resources
from pathlib import Path

import pytest
from test_core import start_core
from uartlab.app.record.player import SessionFile
from uartlab.app.serve.client import CoreClient
from uartlab.drivers import mx64
from uartlab.sim.names import TENDONS

pytestmark = [pytest.mark.realtime, pytest.mark.slow]

CLI = [sys.executable, "-m", "uartlab.app.cli"]
SEA_V0_V, SEA_GAIN_N_PER_V = 1.0, 7.12    # the twin's pots (what `calibrate sea` finds on it, seed 0)


def start_twin(log: Path) -> tuple[subprocess.Popen, dict[str, str]]:
    proc = subprocess.Popen([*CLI, "twin", "up", "--ephemeral-ports"], stdout=subprocess.PIPE,
                            stderr=open(log, "w"), text=True, start_new_session=True)  # noqa: SIM115
    text = ""
    for line in proc.stdout:
        text += line
        if line.startswith("Ctrl-C to stop"):
            break
    where = {"pty": re.search(r"(/dev/pts/\d+)", text).group(1),
             "grpc": re.search(r"NI-DAQmx gRPC\)\s+(\S+)", text).group(1),
             "command": re.search(r"command (\d+)", text).group(1),
             "data": re.search(r"data (\d+)", text).group(1)}
    return proc, where


def real_rig_toml(folder: Path, where: dict[str, str]) -> Path:
    """rig.toml with every backend real, pointed at the twin process's endpoints."""
    text = (resources.files("uartlab.app") / "data" / "twin_rig.toml").read_text(encoding="utf-8")
    cal = resources.files("uartlab.drivers.twins") / "data" / "twin_nano17.cal"
    (folder / "twin_nano17.cal").write_bytes(cal.read_bytes())
    text = text.replace('backend = "twin"            # "twin" | "real"\nport = ""',
                        f'backend = "real"\nport = "{where["pty"]}"')
    # The twin process shares a busy 2-core machine with the core and the tests: a reply may be scheduled late
    # (waited for longer than the 500 ms Bus Watchdog, the servos would stop first: rig.toml refuses that).
    text = text.replace("packet_timeout_ms = 200.0", "packet_timeout_ms = 450.0")
    text = text.replace('[daq]\nbackend = "twin"', '[daq]\nbackend = "real"')
    text = text.replace('grpc_address = ""', f'grpc_address = "{where["grpc"]}"')
    text = text.replace('[mocap]\nbackend = "twin"', '[mocap]\nbackend = "real"')
    text = text.replace("command_port = 1510", f"command_port = {where['command']}")
    text = text.replace("data_port = 1511", f"data_port = {where['data']}")
    text = text.replace('calibration_file = "from_twin"', 'calibration_file = "twin_nano17.cal"')
    seas = "".join(f"[sea.{t}]\nv0_V = {SEA_V0_V}\ngain_N_per_V = {SEA_GAIN_N_PER_V}\n" for t in TENDONS)
    text = re.sub(r'\[sea\]\ncalibration = "from_twin"[^\n]*\n', lambda _: seas, text, count=1)
    path = folder / "rig.toml"
    path.write_text(text, encoding="utf-8")
    return path


def read_servos(port: str) -> list[tuple[int, int]]:
    """(Torque Enable, Bus Watchdog) of each servo, read over the bus with ROBOTIS's own SDK (retried: the twin
    shares a busy machine's CPU and may answer after the SDK's ~34 ms timeout)."""
    import dynamixel_sdk as sdk

    handler, packet = sdk.PortHandler(port), sdk.PacketHandler(2.0)
    assert handler.openPort() and handler.setBaudRate(1_000_000)

    def read(servo_id: int, item: str) -> int:
        for _ in range(20):
            value, result, _ = packet.read1ByteTxRx(handler, servo_id, mx64.CONTROL_TABLE_P2[item].address)
            if result == sdk.COMM_SUCCESS:
                return value
            time.sleep(0.05)
        raise AssertionError(f"servo {servo_id}: {item} not read: {packet.getTxRxResult(result)}")

    try:
        return [(read(i, "Torque Enable"), read(i, "Bus Watchdog")) for i in range(1, 7)]
    finally:
        handler.closePort()


def test_the_core_killed_leaves_the_servos_to_their_watchdog_and_a_readable_file(tmp_path):
    twin, where = start_twin(tmp_path / "twin.log")
    try:
        base = f"ipc://{tmp_path}/core"
        core = start_core(base, "--rig", str(real_rig_toml(tmp_path, where)), log=tmp_path / "serve.log",
                          speed=None)   # real backends: 1x
        try:
            with CoreClient(base, subscribe=False) as client:
                deadline = time.monotonic() + 60
                while set(client.status()["health"].values()) != {"streaming"} and time.monotonic() < deadline:
                    time.sleep(0.2)                        # the twin's devices, reached over their protocols
                path = client.request("record_start", folder=str(tmp_path))["path"]
                client.request("move", what="jog", tendon="ED", step_m=0.001)   # torque on, holding after it
                deadline = time.monotonic() + 60
                while client.status()["moving"] and time.monotonic() < deadline:
                    time.sleep(0.1)
                assert "failed" not in client.status()["last_move"], client.status()
                time.sleep(1.5)                            # a flush of the file (rig.toml: every 1 s)
        finally:
            os.kill(core.pid, signal.SIGKILL)
            core.wait(30)
        time.sleep(1.0)                                    # twice the Bus Watchdog's 500 ms
        servos = read_servos(where["pty"])
        assert all(torque == 1 for torque, _ in servos), servos                       # still holding
        assert all(watchdog == mx64.BUS_WATCHDOG_ERROR for _, watchdog in servos), servos   # tripped
        with SessionFile(path) as f:
            assert not f.complete and f.length("actuators") > 0 and f.length("runner") > 0
        proc = subprocess.run([*CLI, "verify", path], capture_output=True, text=True, timeout=120)
        assert "Traceback" not in proc.stderr and path in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    finally:
        twin.send_signal(signal.SIGINT)
        try:
            twin.wait(30)
        except subprocess.TimeoutExpired:
            twin.kill()
