"""Where a rig core listens: one base address, and the four endpoints derived from it.

    ends = endpoints_for(None)            # $UARTLAB_CORE, else ipc:// in the user's runtime folder
    ends.data, ends.command, ends.estop, ends.ingest
    endpoints_for("tcp://127.0.0.1:5650")    # data 5650, command 5651, E-stop 5652, model ingest 5653

A base is ``ipc://FOLDER/NAME`` (the endpoints are ``FOLDER/NAME.data`` ...) or ``tcp://HOST:PORT`` (the
endpoints are four consecutive ports). The default is ipc in ``platformdirs.user_runtime_dir("uartlab")``
(``/run/user/UID/uartlab`` on Linux), created 0700, so only the user who started the core reaches it.
``is_local`` says whether a base is reachable only from this machine (ipc, loopback): anything else needs
CurveZMQ keys (app/serve/keys.py).
"""

from __future__ import annotations

import ipaddress
import os
import sys
from dataclasses import dataclass
from pathlib import Path

ENV = "UARTLAB_CORE"
DEFAULT_NAME = "core"
KINDS = ("data", "command", "estop", "ingest")   # the order of the tcp ports after the base port
IPC_PATH_MAX = 107 if sys.platform.startswith("linux") else 103   # a Unix socket's path (sun_path), bytes


@dataclass(frozen=True)
class Endpoints:
    base: str
    data: str      # XPUB: every stream and event a client subscribes to
    command: str   # ROUTER: hello, snapshot, status, runs, recording, moves
    estop: str     # ROUTER: the E-stop only, on its own thread
    ingest: str    # PULL: `model` records from the live-model process


def runtime_folder() -> Path:
    """The per-user folder for ipc sockets, created 0700 (an existing one is tightened)."""
    import warnings

    import platformdirs

    with warnings.catch_warnings():  # no XDG_RUNTIME_DIR (a container, a cron job): /tmp/runtime-UID, made 0700 here
        warnings.simplefilter("ignore")
        folder = Path(platformdirs.user_runtime_dir("uartlab", appauthor=False))
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(folder, 0o700)
    return folder


def default_base() -> str:
    return os.environ.get(ENV, "").strip() or f"ipc://{runtime_folder() / DEFAULT_NAME}"


def endpoints_for(base: str | None) -> Endpoints:
    """The endpoints of ``base`` (None: $UARTLAB_CORE or the default); ValueError naming a bad address."""
    base = (base or default_base()).strip()
    if base.startswith("ipc://"):
        path = base[len("ipc://"):]
        if not path:
            raise ValueError(f"core address {base!r}: ipc:// needs a path")
        longest = max(len(os.fsencode(f"{path}.{kind}")) for kind in KINDS)
        if longest > IPC_PATH_MAX:
            raise ValueError(f"core address {base!r}: its socket paths reach {longest} bytes, over the "
                             f"{IPC_PATH_MAX} this OS allows; choose a shorter path (or tcp://127.0.0.1:PORT)")
        return Endpoints(base, *(f"ipc://{path}.{kind}" for kind in KINDS))
    if base.startswith("tcp://"):
        host, _, port = base[len("tcp://"):].rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) <= 65535 - len(KINDS):
            raise ValueError(f"core address {base!r}: expected tcp://HOST:PORT with PORT in 1..{65535 - len(KINDS)}")
        return Endpoints(base, *(f"tcp://{host}:{int(port) + i}" for i in range(len(KINDS))))
    raise ValueError(f"core address {base!r}: expected ipc://PATH or tcp://HOST:PORT")


def is_local(base: str) -> bool:
    """ipc, or tcp on a loopback address: reachable from this machine only."""
    if base.startswith("ipc://"):
        return True
    host = base[len("tcp://"):].rpartition(":")[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False   # a host name or "*": may be reached from elsewhere


def lock_path(ends: Endpoints) -> Path | None:
    """The file an ipc core holds locked while it serves (tcp: None, the ports themselves are exclusive). A
    second core on the same base would otherwise bind over the first one's socket files; whether a core is
    there is then known from the lock, not from how fast a busy core answers a hello."""
    if not ends.base.startswith("ipc://"):
        return None
    return Path(ends.base[len("ipc://"):] + ".lock")


UNNAMED_HOLDER = "a process (pid unknown)"   # a lock whose holder wrote nothing yet


def core_holder(pid: int) -> str:
    """What a core writes into its address's lock; anything else there is a procedure holding the rig."""
    return f"core (pid {pid})"


def is_core(held_by: str) -> bool:
    return held_by.startswith("core (pid ")


def holder(base: str | None) -> str | None:
    """Who holds ``base``'s lock now, as it wrote itself there ("core (pid N)", or a calibration procedure at
    the rig); None when nobody does (or tcp, where only an answer tells)."""
    import fcntl

    path = lock_path(endpoints_for(base))
    if path is None or not path.exists():
        return None
    try:
        with open(path, "rb") as f:
            try:
                fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return f.read().decode("utf-8", "replace").strip() or UNNAMED_HOLDER
    except OSError:
        return None
    return None


def claim(ends: Endpoints, who: str):
    """``ends``' lock (ipc), written with ``who`` ("core (pid N)"), held until the returned file is closed;
    None for tcp (its ports are exclusive). A second claimant leaves at once, whatever the load, without
    touching the first one's socket files: ValueError naming who holds it."""
    import fcntl

    path = lock_path(ends)
    if path is None:
        return None
    f = open(path, "a+")  # noqa: SIM115 - held open (locked) for the claimant's life
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        f.seek(0)
        held_by = f.read().strip() or UNNAMED_HOLDER
        f.close()
        raise ValueError(f"{held_by} already serves {ends.base}") from None
    f.seek(0)
    f.truncate()
    f.write(who)
    f.flush()
    return f


def ipc_path(endpoint: str) -> Path | None:
    """The socket file of an ipc endpoint (None for tcp)."""
    return Path(endpoint[len("ipc://"):]) if endpoint.startswith("ipc://") else None


def ipc_paths(ends: Endpoints) -> list[Path]:
    """The socket files of an ipc core (removed when it stops; empty for tcp)."""
    return [p for e in (ends.data, ends.command, ends.estop, ends.ingest) if (p := ipc_path(e)) is not None]


def refuse_unguarded(base: str, has_keys: bool) -> None:
    """ValueError when ``base`` is reachable from other machines and no CurveZMQ keys guard it."""
    if not is_local(base) and not has_keys:
        raise ValueError(f"--core {base}: reachable from other machines; give --keys DIR (CurveZMQ keys: who may "
                         "attach, who may command) or bind ipc:// or 127.0.0.1")
