"""The rig core: one process owns the devices, the control loop, the interlocks and the recorder; clients
attach over ZeroMQ (docs/architecture.md, "The rig core").

    core = RigCore(config, base=None, keys_dir=None).start()   # binds, starts the Rig, then the servers
    core.wait()        # until a client's "shutdown" or close()
    core.close("why")  # a run going is aborted (its safe action), its file closed, the rig stopped

Threads beside the rig's own (device streams, the engine's control loop, the recorder), none of which the
loop waits for: the publisher (hub -> XPUB, bounded and drop-oldest/at the high-water mark), the history
(last ~30 s for a client attached mid-run), the command server (ROUTER), the E-stop server (its own
ROUTER), the model ingest (PULL). The run itself is app/serve/runs.py's; the requests the command server
answers are ``ops()`` here, one method each.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import asdict
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import zmq
from uartlab.app.rig.config import RigConfig
from uartlab.app.rig.rig import Rig
from uartlab.app.run.run import estop_rig
from uartlab.app.serve import keys, wire
from uartlab.app.serve.command_server import CommandServer, Op, Reply
from uartlab.app.serve.endpoints import (
    Endpoints,
    claim,
    core_holder,
    endpoints_for,
    ipc_paths,
    is_core,
    refuse_unguarded,
)
from uartlab.app.serve.estop_server import EstopServer, estop_reason
from uartlab.app.serve.history import History
from uartlab.app.serve.ingest import Ingest
from uartlab.app.serve.model_supervisor import ModelProcessHost
from uartlab.app.serve.publisher import Publisher
from uartlab.app.serve.runs import RunRequest, RunSlot
from uartlab.drivers.interfaces import DeviceError
from uartlab.schema import EventKind

if TYPE_CHECKING:
    from uartlab.app.record.session import RecordingSession
    from zmq.auth.thread import ThreadAuthenticator

log = logging.getLogger(__name__)

PROBE_S = 0.3      # est.: a core on this machine answers a hello in a few ms; this is generous


class RigCore:
    def __init__(self, config: RigConfig, base: str | None = None, keys_dir: Path | None = None):
        self.config = config
        self.ends: Endpoints = endpoints_for(base)
        refuse_unguarded(self.ends.base, keys_dir is not None)
        self.keys = keys.load_server_keys(keys_dir) if keys_dir is not None else None
        self.rig: Rig | None = None
        self.runs: RunSlot | None = None
        self.model_host: ModelProcessHost | None = None
        self.recording: RecordingSession | None = None   # a RecordingSession an operator started (not a run's own)
        self.moving: str | None = None        # an operator's move on the engine
        self.last_move: str = ""
        self.estop_reason: str | None = None
        self.started_s = time.monotonic()
        self._context = zmq.Context()
        self._auth: ThreadAuthenticator | None = None
        self._parts: list[Any] = []
        self._stopped = threading.Event()
        self._closed = False
        self._lock = threading.Lock()
        self._lock_file: IO[str] | None = None   # the base's lock while this core serves it (ipc)

    # ------------------------------------------------------------ life
    def start(self) -> RigCore:
        try:
            self._claim()
            self._refuse_if_answered()
            sockets = self._bind()
            self.rig = Rig(self.config).start()
            # A run's live model runs in a process of its own, warmed while the core waits for the run.
            self.model_host = ModelProcessHost(self.rig.hub, self.ends.base)
            self.runs = RunSlot(self.rig, self.model_host)
            history = History(self.rig.hub).start()
            self.history = history
            self._parts = [Publisher(self.rig.hub, sockets["data"]).start(), history,
                           Ingest(sockets["ingest"], self.rig.hub).start(),
                           EstopServer(sockets["estop"], self.estop).start(),
                           CommandServer(sockets["command"], self.ops(), self.rig.hub).start()]
        except BaseException:
            self.close("the core failed to start")
            raise
        self.rig.hub.event(EventKind.OPERATOR, "core", f"rig core serving at {self.ends.base} (pid {os.getpid()})")
        return self

    def _claim(self) -> None:
        """The base's lock (ipc), held until the core stops: a second core on the same base, or a calibration
        procedure holding the rig's devices there, leaves at once."""
        try:
            self._lock_file = claim(self.ends, core_holder(os.getpid()))
        except ValueError as exc:
            said = f"another {exc}" if is_core(str(exc)) else f"{exc}, with the rig's devices: let it end"
            raise DeviceError("rig core", said) from None

    def _refuse_if_answered(self) -> None:
        """Two cores on one address would fight over the socket files; the second one says so and leaves."""
        from uartlab.app.serve.client import CoreClient, NoCoreError

        try:
            with CoreClient(self.ends.base, timeout_s=PROBE_S, subscribe=False, keys_dir=None) as other:
                pid = other.hello.get("pid")
        except (NoCoreError, zmq.ZMQError, ValueError):
            return
        raise DeviceError("rig core", f"another core (pid {pid}) already serves {self.ends.base}")

    def _bind(self) -> dict[str, zmq.Socket]:
        kinds = {"data": zmq.XPUB, "command": zmq.ROUTER, "estop": zmq.ROUTER, "ingest": zmq.PULL}
        if self.keys is not None:
            self._auth = keys.start_authenticator(self._context, self.keys)
        sockets: dict[str, zmq.Socket] = {}
        for name, kind in kinds.items():
            socket = self._context.socket(kind)
            if self.keys is not None:
                keys.make_server(socket, self.keys)
            address = getattr(self.ends, name)
            try:
                socket.bind(address)
            except zmq.ZMQError as exc:
                socket.close(linger=0)
                for s in sockets.values():
                    s.close(linger=0)
                raise DeviceError("rig core", f"cannot listen at {address}: {exc}") from None
            sockets[name] = socket
        return sockets

    def wait(self, timeout_s: float | None = None) -> bool:
        """True once a client asked the core to shut down (or it was closed)."""
        return self._stopped.wait(timeout_s)

    def close(self, why: str = "the core was stopped") -> None:
        """A run going aborted (its safe action, its file closed), a recording closed, the rig stopped
        (torque off, devices closed), then the sockets. Safe to call twice."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        if self.model_host is not None:   # first: a run's model closing below must not start another
            self.model_host.close()
        try:
            if self.runs is not None:
                self.runs.close(why)
            if self.recording is not None:
                self._close_recording()
        finally:
            for part in reversed(self._parts):
                part.close()
            if self.rig is not None:
                self.rig.stop()
            if self._auth is not None:   # its own thread and sockets: stopped before the context goes
                self._auth.stop()
            self._context.destroy(linger=0)  # the sockets' threads are joined; closes any never handed over
            if self._lock_file is not None:    # only the core that served here removes its socket files
                for path in ipc_paths(self.ends):
                    path.unlink(missing_ok=True)
                self._lock_file.close()
                self._lock_file = None
            self._stopped.set()

    # ------------------------------------------------------------ the E-stop (its own thread)
    def estop(self, reason: str, who: str) -> dict:
        """Torque off now, latched, ``reason`` and who sent it recorded: the run's E-stop if one is going,
        else the rig's (an operator's move on the engine included). Returns ``{"acted_s", "recorded_in",
        "received_s"}``: how long until torque was off, the session file that holds the E-stop's event, or None
        (a run whose file had closed, no recording open), asked only once torque is off, and when (this
        machine's monotonic s) the request reached the core."""
        started = time.monotonic()
        text = estop_reason(reason, who)
        self.estop_reason = text
        rig = self._rig
        off_s = self.runs.estop(text) if self.runs is not None else None
        if off_s is None:
            off_s = estop_rig(rig, text)
        acted_s = off_s - started   # until torque was off: a tick's trial set-up may delay only the latch
        event = next((e for e in reversed(rig.hub.recent_events()) if e.kind == EventKind.ESTOP and e.message == text),
                     None)
        run = self.runs.run if self.runs is not None else None
        held = [s for s in (self.recording, run.session if run is not None else None)
                if s is not None and event is not None and s.holds(event)]
        if not held:
            log.warning("E-stop with no session file open to record it: %s", text)
        return {"acted_s": acted_s, "recorded_in": str(held[0].path) if held else None, "received_s": started}

    @property
    def _rig(self) -> Rig:
        if self.rig is None:
            raise DeviceError("rig", "the core has no rig started")
        return self.rig

    # ------------------------------------------------------------ requests
    def ops(self) -> dict[str, Op]:
        """What the command server answers: name -> handler(args, who). Watching ops are open to viewers."""
        return {
            "hello": Op(self._hello, commands=False),
            "snapshot": Op(self._snapshot, commands=False),
            "status": Op(lambda args, who: self.status(), commands=False),
            # the hello without attaching: a look from `uartlab rig status`, not a client to record
            "describe": Op(lambda args, who: self._description(), commands=False),
            "run": Op(self._run),
            "pause": Op(lambda args, who: self._slot.pause()),
            "resume": Op(lambda args, who: self._slot.resume()),
            "confirm": Op(lambda args, who: self._slot.confirm()),
            "abort": Op(lambda args, who: self._slot.abort(str(args.get("why") or f"abort from {who}"))),
            "reset": Op(self._reset),
            "record_start": Op(self._record_start),
            "record_stop": Op(lambda args, who: self._close_recording()),
            "tare": Op(self._tare),
            "move": Op(self._move),
            "shutdown": Op(self._shutdown),
        }

    @property
    def _slot(self) -> RunSlot:
        if self.runs is None:
            raise DeviceError("rig", "the core has no rig started")
        return self.runs

    def _hello(self, args: dict, who: str) -> dict:
        self._rig.hub.event(EventKind.OPERATOR, "core", f"client attached: {who}")
        return self._description()

    def _description(self) -> dict:
        from uartlab.app.record.session import rig_texts

        rig = self._rig
        config_text, _ = rig_texts(rig)
        specs = [wire.spec_to_dict(s) for s in rig.hub.specs.values()]
        return {"pid": os.getpid(), "base": self.ends.base, "specs": specs,
                "config_text": config_text, "config_source": str(rig.config.source),
                "time_scale": rig.time_scale, "twin_control": rig.twin_control, "status": self.status()}

    def _snapshot(self, args: dict, who: str) -> Reply:
        """The description, and the last ~30 s of every stream and the recent events, as history frames."""
        records, events = self.history.snapshot()
        frames: list[Any] = []
        specs = self._rig.hub.specs
        for record in records:
            frames += wire.encode(record, specs.get(record.stream))[1:]   # the topic is in the header
        result = self._description()
        result["history_records"] = len(records)
        result["events"] = [{"t": e.host_time_s, "event": str(e.kind), "source": e.source, "message": e.message}
                            for e in events]
        return Reply(result, frames)

    def status(self) -> dict:
        rig = self._rig
        engine = rig.engine
        health = rig.health()
        return {"run": self._slot.status(), "recording": getattr(self.recording, "path", None),
                "moving": self.moving, "last_move": self.last_move, "estop": self.estop_reason,
                "engine": engine.describe() if engine is not None else None,
                "health": {name: h.state for name, h in health.items()},
                "devices": {name: asdict(h) for name, h in health.items()},   # the window's Rig panel
                "session": self._session_status(), "has_start": self._slot.start_m is not None,
                "uptime_s": time.monotonic() - self.started_s}

    def _session_status(self) -> dict | None:
        """The open session file (the operator's recording, else the run's own), as the window's Recording
        panel shows it: path, seconds recorded, samples flushed per stream, what this file lost (the hub's drops
        from its recorder's queue, the file writer's own)."""
        run = self._slot.run
        session = self.recording or (run.session if run is not None and self._slot.busy else None)
        if session is None:
            return None
        rec = session.recorder
        spans = list(rec.flushed_span_s.values())
        elapsed_s = max(s[1] for s in spans) - min(s[0] for s in spans) if spans else 0.0
        return {"path": str(session.path), "elapsed_s": elapsed_s, "samples": dict(rec.flushed),
                "drops": {"recorder": session.hub_drops(), "file writer": dict(rec.dropped)}}

    def _run(self, args: dict, who: str) -> dict:
        request = RunRequest.from_args(args)
        if not request.operator:
            request.operator = who
        number = self._slot.submit(request, session=self.recording, who=who)
        return {"id": number}

    def _reset(self, args: dict, who: str) -> None:
        self._slot.reset()
        self.estop_reason = None

    def _record_start(self, args: dict, who: str) -> dict:
        from uartlab.app.record.session import RecordingSession, session_path

        if self.recording is not None:
            raise DeviceError("rig", f"already recording into {self.recording.path}")
        folder = Path(args.get("folder") or self._rig.config.recording.folder)
        folder.mkdir(parents=True, exist_ok=True)
        self.recording = RecordingSession(self._rig, session_path(folder, args.get("label")),
                                          operator=str(args.get("operator") or who), notes=str(args.get("notes", "")))
        return {"path": self.recording.path, "warnings": list(self.recording.warnings)}

    def _close_recording(self) -> dict | None:
        session, self.recording = self.recording, None
        if session is None:
            raise DeviceError("rig", "not recording")
        if self.runs is not None and self.runs.busy and self.runs.run is not None \
                and self.runs.run.session is session:
            self.recording = session
            raise DeviceError("rig", "the run going writes into this recording; abort it first")
        summary = session.close()
        return {"path": session.path, "summary": summary}

    def _tare(self, args: dict, who: str) -> dict:
        if not self._rig.has_nano17:
            raise DeviceError("rig", "no Nano17 on this rig")
        busy = self.moving is not None or self._slot.busy or self._rig.engine is not None
        if busy and not self._slot.awaiting_setup:
            # A bias taken under load hides that load from the fingertip force limit for the rest of the run.
            # A run waiting for a person to set the finger up may be tared: before the finger is placed.
            raise DeviceError("rig", f"the Nano17 is tared unloaded, not while the servos are busy "
                                     f"({self.moving or self._slot.state}); tare once it is over")
        return {"tared": bool(self._rig.tare_nano17(wait_s=1.0))}

    def _move(self, args: dict, who: str) -> dict:
        """An operator's move on the engine, as the window has them: "release tendons", "return to start",
        "jog" (tendon, step_m). Runs on a worker; ``status()`` says when it is over and what it did."""
        from uartlab.app.run.procedure import jog, release_tendons, return_to_start

        what = str(args.get("what", ""))
        if what not in ("release tendons", "return to start", "jog"):
            raise ValueError(f"move: {what!r}; expected release tendons, return to start or jog")
        rig = self._rig
        if self.moving is not None or self._slot.busy or rig.engine is not None:
            raise DeviceError("rig", f"the servos are busy ({self.moving or self._slot.state}); wait for it to end")
        if self.estop_reason is not None:
            raise DeviceError("rig", f"E-stop latched ({self.estop_reason}); reset first")
        start = self._slot.start_m
        if what == "return to start" and start is None:
            raise ValueError("return to start: no run has started yet")
        start_m: Any = start

        def work() -> None:
            try:
                if what == "release tendons":
                    self.last_move = release_tendons(rig)
                elif what == "jog":
                    self.last_move = jog(rig, str(args["tendon"]), float(args["step_m"]))
                else:
                    self.last_move = return_to_start(rig, start_m)
            except Exception as exc:  # noqa: BLE001 - the status says it
                self.last_move = f"{what} failed: {exc}"
            finally:
                self.moving = None

        self.moving = what
        threading.Thread(target=work, name="core-move", daemon=True).start()
        return {"moving": what}

    def _shutdown(self, args: dict, who: str) -> None:
        """``after_run``: a run going completes first (a window that started this core and lets go of it)."""
        why = f"shutdown requested by {who}"

        def work() -> None:
            if args.get("after_run"):
                while self.runs is not None and self.runs.busy:
                    time.sleep(0.2)
            self.close(why)

        threading.Thread(target=work, name="core-shutdown", daemon=True).start()
