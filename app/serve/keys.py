"""CurveZMQ for a core reached from another machine: who may attach, and who may command.

A core bound anywhere but ipc or loopback needs ``--keys DIR`` (app/serve/endpoints.py ``is_local``):

    DIR/server.key_secret          the core's key pair (zmq.auth.create_certificates(DIR, "server"))
    DIR/operators/NAME.key         public keys that may command
    DIR/viewers/NAME.key           public keys that may only watch: data, snapshot, status - and the E-stop

A client's ``--keys DIR`` holds its own pair ``client.key_secret`` and the core's public ``server.key``.
Every socket of the core is a CURVE server; ZeroMQ's ZAP handler (``zmq.auth``) admits the keys of both
folders and names each connection ``operator:NAME`` or ``viewer:NAME``, which every message then carries
(its ``User-Id``): the command server refuses a viewer's command and records who sent each one. Stopping
is always allowed: a viewer's E-stop is acted on, as the red button on the rig is anyone's to press.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import zmq
import zmq.auth
from zmq.auth.thread import ThreadAuthenticator

SERVER_SECRET = "server.key_secret"
SERVER_PUBLIC = "server.key"
CLIENT_SECRET = "client.key_secret"
ROLES = ("operators", "viewers")
OPERATOR, VIEWER = "operator", "viewer"


@dataclass(frozen=True)
class ServerKeys:
    public: bytes
    secret: bytes
    who: dict[bytes, str]        # z85 public key -> "operator:NAME" / "viewer:NAME"


def load_server_keys(folder: Path) -> ServerKeys:
    """The core's key pair and its clients' public keys; ValueError naming the missing file."""
    folder = Path(folder)
    public, secret = _pair(folder / SERVER_SECRET, "--keys")
    who: dict[bytes, str] = {}
    for role in ROLES:
        sub = folder / role
        if not sub.is_dir():
            continue
        for key_file in sorted(sub.glob("*.key")):
            key, _ = zmq.auth.load_certificate(key_file)
            who[key] = f"{role[:-1]}:{key_file.stem}"
    if not any(w.startswith(OPERATOR) for w in who.values()):
        raise ValueError(f"--keys {folder}: no operator key in {folder / 'operators'} (NAME.key files): "
                         "nobody could command this core")
    return ServerKeys(public, secret, who)


def load_client_keys(folder: Path) -> tuple[bytes, bytes, bytes]:
    """(client public, client secret, server public) from a client's --keys folder."""
    folder = Path(folder)
    public, secret = _pair(folder / CLIENT_SECRET, "--keys")
    if not (folder / SERVER_PUBLIC).is_file():
        raise ValueError(f"--keys {folder}: no {SERVER_PUBLIC} (the core's public key)")
    server, _ = zmq.auth.load_certificate(folder / SERVER_PUBLIC)
    return public, secret, server


def _pair(path: Path, option: str) -> tuple[bytes, bytes]:
    if not path.is_file():
        raise ValueError(f"{option}: {path} not found (make it with zmq.auth.create_certificates)")
    public, secret = zmq.auth.load_certificate(path)
    if secret is None:
        raise ValueError(f"{option}: {path} holds no secret key")
    return public, secret


class _Authenticator(ThreadAuthenticator):
    """ZAP: admits the keys of operators/ and viewers/, and names the connection after the key's file."""

    def __init__(self, context: zmq.Context, keys: ServerKeys):
        super().__init__(context)
        self._who = keys.who

    def curve_user_id(self, client_public_key: bytes) -> str:
        return self._who.get(zmq.utils.z85.encode(client_public_key), "unknown")


def start_authenticator(context: zmq.Context, keys: ServerKeys) -> ThreadAuthenticator:
    auth = _Authenticator(context, keys)
    auth.start()
    auth.certs["*"] = dict.fromkeys(keys.who, True)
    return auth


def make_server(socket: zmq.Socket, keys: ServerKeys) -> None:
    socket.curve_secretkey = keys.secret
    socket.curve_publickey = keys.public
    socket.curve_server = True


def make_client(socket: zmq.Socket, keys: tuple[bytes, bytes, bytes]) -> None:
    public, secret, server = keys
    socket.curve_publickey, socket.curve_secretkey, socket.curve_serverkey = public, secret, server


def user_of(frame: zmq.Frame) -> str | None:
    """The ``operator:NAME`` / ``viewer:NAME`` of a message that came through CURVE, else None."""
    try:
        user = frame.get("User-Id")
    except zmq.ZMQError:
        return None
    return user if isinstance(user, str) and user and user != "anonymous" else None


def may_command(user: str | None) -> bool:
    """Without keys (ipc, loopback) everyone who reaches the socket may; with keys, operators only."""
    return user is None or user.startswith(OPERATOR + ":")
