"""A ZeroMQ socket served by a thread of its own: each message taken as it comes, until closed.

The core's command, E-stop and model-ingest sockets are each one of these, so that none waits on another:
a long request, a flooding model process or a stuck client holds up its own thread only. ZeroMQ sockets
are not thread-safe, so the socket lives and closes on its thread.
"""

from __future__ import annotations

import logging
import threading

import zmq

log = logging.getLogger(__name__)


class SocketThread:
    """Subclasses say what one message does (``take``); ``poll_ms`` is how often the stop flag is looked at."""

    def __init__(self, socket: zmq.Socket, name: str, poll_ms: int):
        self.socket = socket
        socket.setsockopt(zmq.LINGER, 0)
        self._poll_ms = poll_ms
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self):
        self._thread.start()
        return self

    def take(self, frames: list[zmq.Frame]) -> None:
        raise NotImplementedError

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                if self.socket.poll(self._poll_ms):
                    self.take(self.socket.recv_multipart(copy=False))
        except zmq.ZMQError as exc:   # the context terminated under it: the core is stopping
            log.debug("%s: %s", self._thread.name, exc)
        finally:
            self.socket.close(linger=0)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
