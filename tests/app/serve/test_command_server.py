"""The core's command socket: a request that stalls the core leaves the core's log saying where."""

from __future__ import annotations

import threading

import pytest

zmq = pytest.importorskip("zmq")

from uartlab.app.serve import command_server, wire  # noqa: E402
from uartlab.app.serve.command_server import CommandServer, Op  # noqa: E402
from uartlab.hub import Hub  # noqa: E402


def test_a_request_that_stalls_writes_every_threads_stack_to_the_log(tmp_path, monkeypatch, capfd, caplog):
    monkeypatch.setattr(command_server, "SLOW_REQUEST_S", 0.2)
    held = threading.Event()

    def stuck_on_a_lock(args: dict, who: str) -> str:
        held.wait(1.0)          # what a handler waiting on a busy control loop's lock looks like
        return "late"

    context = zmq.Context()
    router = context.socket(zmq.ROUTER)
    router.bind(f"ipc://{tmp_path / 'commands'}")
    server = CommandServer(router, {"status": Op(stuck_on_a_lock, commands=False)}, Hub()).start()
    dealer = context.socket(zmq.DEALER)
    dealer.connect(f"ipc://{tmp_path / 'commands'}")
    try:
        dealer.send(wire.dumps({"op": "status", "id": 1, "who": "test", "args": {}}))
        assert dealer.poll(5000), "no answer"
        reply = wire.loads(dealer.recv_multipart()[0])
        assert reply == {"id": 1, "ok": True, "result": "late"}
    finally:
        server.close()
        dealer.close(linger=0)
        context.term()
    err = capfd.readouterr().err
    assert "Thread" in err and "stuck_on_a_lock" in err            # the stalled thread, at the line it waits on
    assert any(r.getMessage().startswith("a request took 1.") for r in caplog.records)   # 1 s and a bit
