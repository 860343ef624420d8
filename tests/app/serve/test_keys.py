"""A core reached over the network: CurveZMQ keys decide who may attach and who may command; stopping is
anyone's. Real keys (zmq.auth), a real `uartlab rig serve` on tcp loopback, real clients."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import zmq.auth
from test_core import patient_twin_rig, start_core, stop_core
from uartlab.app.serve.client import CoreClient, CoreRequestError, NoCoreError

pytestmark = [pytest.mark.realtime, pytest.mark.slow]

CLI = [sys.executable, "-m", "uartlab.app.cli"]


def free_base() -> str:
    """tcp://127.0.0.1:PORT with PORT .. PORT+3 free."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port > 65000:
            continue
        try:
            held = []
            for p in range(port, port + 4):
                s = socket.socket()
                held.append(s)
                s.bind(("127.0.0.1", p))
            return f"tcp://127.0.0.1:{port}"
        except OSError:
            continue
        finally:
            for s in held:
                s.close()
    raise RuntimeError("no four free consecutive ports")


def make_keys(folder: Path) -> tuple[Path, Path, Path]:
    """The core's folder (server pair, operators/, viewers/) and one client folder per role."""
    core = folder / "core"
    for sub in ("operators", "viewers"):
        (core / sub).mkdir(parents=True)
    zmq.auth.create_certificates(core, "server")
    clients = []
    for role, name in (("operators", "kim"), ("viewers", "lee")):
        client = folder / name
        client.mkdir()
        public, _ = zmq.auth.create_certificates(client, "client")
        shutil.copy(public, core / role / f"{name}.key")
        shutil.copy(core / "server.key", client / "server.key")
        clients.append(client)
    return core, clients[0], clients[1]


@pytest.fixture(scope="module")
def keyed_core(tmp_path_factory):
    folder = tmp_path_factory.mktemp("keys")
    core_keys, operator, viewer = make_keys(folder)
    base = free_base()
    proc = start_core(base, "--keys", str(core_keys), "--rig", str(patient_twin_rig(folder)),
                      log=folder / "serve.log", keys_dir=operator)
    yield base, operator, viewer, folder
    assert stop_core(proc) == 0, (folder / "serve.log").read_text()


def test_a_viewer_watches_but_cannot_command_and_an_operator_can(keyed_core):
    base, operator, viewer, _ = keyed_core
    with CoreClient(base, keys_dir=viewer, streams={"daq"}) as lee:
        assert lee.status()["run"]["state"] == "idle"
        sub = lee.hub.subscribe("viewer", {"daq"})
        time.sleep(0.5)
        assert sub.drain(), "a viewer gets the data"
        with pytest.raises(CoreRequestError, match=r"^tare: refused: viewer:lee may watch this core but not command"):
            lee.request("tare")
    with CoreClient(base, keys_dir=operator, subscribe=False) as kim:
        assert kim.request("tare") == {"tared": True}


def test_every_command_is_recorded_with_the_key_that_sent_it(keyed_core, tmp_path):
    base, operator, _, _ = keyed_core
    with CoreClient(base, keys_dir=operator, subscribe=False) as kim:
        kim.request("record_start", folder=str(tmp_path))
        kim.request("tare")
        path = kim.request("record_stop")["path"]
    from uartlab.app.record.player import SessionFile

    with SessionFile(path) as f:
        said = [e.message for e in f.events() if e.kind == "operator"]
    assert any(m.startswith("operator:kim: tare") for m in said), said


def test_a_viewer_may_press_the_estop(keyed_core):
    base, _, viewer, _ = keyed_core
    proc = subprocess.run([*CLI, "estop", "--core", base, "--keys", str(viewer), "viewer", "stop"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "E-stop acknowledged" in proc.stdout, proc.stderr
    with CoreClient(base, keys_dir=viewer, subscribe=False) as lee:
        assert lee.status()["estop"] == "viewer stop (E-stop from viewer:lee)"


def test_a_client_without_a_known_key_gets_nothing(keyed_core, tmp_path):
    base, _, _, _ = keyed_core
    with pytest.raises(NoCoreError):
        CoreClient(base, subscribe=False)                      # no keys at all
    stranger = tmp_path / "stranger"
    stranger.mkdir()
    zmq.auth.create_certificates(stranger, "client")
    shutil.copy(keyed_core[1] / "server.key", stranger / "server.key")
    with pytest.raises(NoCoreError):
        CoreClient(base, subscribe=False, keys_dir=stranger)   # a key the core does not know


def test_listening_beyond_this_machine_needs_keys(tmp_path):
    proc = subprocess.run([*CLI, "rig", "serve", "--core", "tcp://0.0.0.0:5650"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2 and "give --keys DIR" in proc.stderr and "Traceback" not in proc.stderr
