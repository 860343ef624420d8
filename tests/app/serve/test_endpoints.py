"""Where a core listens: one base address, four endpoints, and which addresses need keys."""

from __future__ import annotations

import os
import stat

import pytest
from uartlab.app.serve import endpoints


def test_the_four_endpoints_come_from_one_base():
    ends = endpoints.endpoints_for("tcp://127.0.0.1:5650")
    assert (ends.data, ends.command, ends.estop, ends.ingest) == (
        "tcp://127.0.0.1:5650", "tcp://127.0.0.1:5651", "tcp://127.0.0.1:5652", "tcp://127.0.0.1:5653")
    ends = endpoints.endpoints_for("ipc:///tmp/x/core")
    assert ends.estop == "ipc:///tmp/x/core.estop"


def test_the_default_is_ipc_in_a_private_runtime_folder_unless_the_environment_says(monkeypatch):
    monkeypatch.delenv(endpoints.ENV, raising=False)
    base = endpoints.default_base()
    assert base.startswith("ipc://")
    folder = endpoints.runtime_folder()
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    monkeypatch.setenv(endpoints.ENV, "tcp://127.0.0.1:6000")
    assert endpoints.endpoints_for(None).base == "tcp://127.0.0.1:6000"


@pytest.mark.parametrize("bad", ["udp://x:1", "tcp://127.0.0.1", "tcp://127.0.0.1:70000", "ipc://"])
def test_a_bad_address_is_one_line_naming_it(bad):
    with pytest.raises(ValueError, match="core address"):
        endpoints.endpoints_for(bad)


def test_only_ipc_and_loopback_are_local():
    assert endpoints.is_local("ipc:///tmp/core") and endpoints.is_local("tcp://127.0.0.1:1")
    assert endpoints.is_local("tcp://localhost:1") and endpoints.is_local("tcp://[::1]:1")
    assert not endpoints.is_local("tcp://0.0.0.0:1") and not endpoints.is_local("tcp://*:1")
    assert not endpoints.is_local("tcp://192.168.1.5:1")


def test_an_ipc_path_longer_than_a_socket_path_may_be_is_refused_in_one_line():
    long_folder = "/tmp/" + "x" * 120
    with pytest.raises(ValueError) as refused:
        endpoints.endpoints_for(f"ipc://{long_folder}/core")
    said = str(refused.value)
    assert said.startswith(f"core address 'ipc://{long_folder}/core': its socket paths reach 138 bytes, over the ")
    assert "choose a shorter path" in said and "\n" not in said
    at_the_limit = "/tmp/" + "x" * (endpoints.IPC_PATH_MAX - len("/tmp/") - len("/c.command")) + "/c"
    endpoints.endpoints_for(f"ipc://{at_the_limit}")
