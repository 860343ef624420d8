"""The rig's E-stop address served by a process that has the rig's devices without a rig core: a calibration
procedure at the rig (`uartlab calibrate … --rig`) in a terminal of its own.

    with EstopPoint(act, "calibration procedure 'sea' at the rig", say):   # act(reason, who) -> reply fields
        ...   # the procedure: `uartlab estop` from any terminal reaches it

It takes the core's lock on the address (app/serve/endpoints.py ``claim``: a core cannot start there while the
procedure has the devices, and the procedure does not serve where a core already does) and binds the core's
E-stop socket alone (app/serve/estop_server.py, on its own thread), so `uartlab estop` and the window's E-stop
reach whatever moves the rig. Where it cannot (a core serves the address; an address other machines reach,
which would need keys) it says so once and the procedure's own keys stay its E-stop.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import zmq
from uartlab.app.serve.endpoints import claim, endpoints_for, ipc_path, is_local
from uartlab.app.serve.estop_server import EstopServer


class EstopPoint:
    def __init__(self, act: Callable[[str, str], dict], what: str, say: Callable[[str], None],
                 base: str | None = None):
        self.act, self.say = act, say
        self.holder = f"{what} (pid {os.getpid()})"   # in the address's lock, and in each acknowledgement
        self.ends = endpoints_for(base)
        self._context: zmq.Context | None = None
        self._server: EstopServer | None = None
        self._lock = None

    def __enter__(self) -> EstopPoint:
        base = self.ends.base
        if not is_local(base):
            self.say(f"`uartlab estop` does not reach this procedure: {base} is reachable from other machines")
            return self
        try:
            self._lock = claim(self.ends, self.holder)
        except ValueError as exc:
            self.say(f"`uartlab estop` does not reach this procedure: {exc}")
            return self
        self._context = zmq.Context()
        socket = self._context.socket(zmq.ROUTER)
        try:
            socket.bind(self.ends.estop)
        except zmq.ZMQError as exc:
            socket.close(linger=0)
            self.say(f"`uartlab estop` does not reach this procedure: {self.ends.estop}: {exc}")
            self.__exit__()
            return self
        self._server = EstopServer(socket, self._acted).start()
        self.say(f"`uartlab estop` from any terminal reaches this procedure ({base})")
        return self

    def _acted(self, reason: str, who: str) -> dict:
        return {**self.act(reason, who), "holder": self.holder}

    def __exit__(self, *exc) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        if self._context is not None:
            self._context.destroy(linger=0)
            self._context = None
        if self._lock is not None:
            socket_file = ipc_path(self.ends.estop)
            if socket_file is not None:
                socket_file.unlink(missing_ok=True)
            self._lock.close()
            self._lock = None
