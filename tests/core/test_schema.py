"""The stream schema's contract: every field any module names is declared, and producers emit exactly it.

(a) Static: the package's source is parsed (ast) and every place a stream field is named by a string
literal in the usual patterns is checked against uartlab.schema:
  ``X.data["f"]``, ``d["f"]`` where ``d = X.data``           field f of some stream
  ``tape.field("s", "f")``, ``spec.field("f")``              (s, f) / field f
  ``probe.fresh("s", ("f", "g"), ...)``                       (s, f), (s, g)
  ``Channel("s", "f")``                                       (s, f)
  ``"s.f"`` string constants (compare's signal sources)       (s, f) for a declared stream s
  ``Record.single("s", t, f=...)``, ``Record("s", t, {"f": ...})``  (s, f) - what producers build
  ``file.read("s", ...)``, ``rows_between("s", ...)``, ``.streams["s"]``, ``subscribe(_, {"s"})``  stream s
  ``DAQ.f`` on the schema's StreamNames                        (s, f)
A stream declared outside the schema (``StreamSpec("s", ...)`` literal) must be in LOCAL_STREAMS.
(b) Runtime: a short twin rig run and a simulated trial through the live model produce records whose
fields, dtypes and shapes are exactly the declared ones.
"""

from __future__ import annotations

import ast
import time
from pathlib import Path

import numpy as np
import pytest
from uartlab import schema
from uartlab.schema import STREAMS, StreamNames

ROOT = Path(__file__).resolve().parents[2]
PACKAGE_DIRS = ("app", "calibration", "drivers", "protocols", "sim", "core", "examples")
DECLARED: dict[str, set[str]] = {s: set(n.fields) for s, n in STREAMS.items()}
ALL_FIELDS = set().union(*DECLARED.values())
# Streams a module declares for itself, never recorded with a rig's: (file, stream) -> fields.
LOCAL_STREAMS = {("app/bench/live.py", "empty"): {"trial_index"}}
NAMES_OBJECTS = {n for n, v in vars(schema).items() if isinstance(v, StreamNames)}
NAMES_METHODS = {"stream", "fields", "ref"}
STREAM_CONSTANTS = {"MODEL_STREAM", "RUNNER_STREAM", "EVENTS"}
NOT_SIGNALS = {"toml", "h5", "json", "py", "log", "csv", "html", "png", "svg", "txt", "cal", "md", "tmp", "lock"}


def _str(node) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _is_data(node) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "data"


def scan(source: str, where: str = "<snippet>") -> list[tuple[str | None, str | None, str]]:
    """(stream or None, field or None, "file:line") for every stream/field the source names by literal."""
    tree = ast.parse(source)
    out: list[tuple[str | None, str | None, str]] = []

    def add(stream, field, node):
        out.append((stream, field, f"{where}:{node.lineno}"))

    # names bound to a record's data (d = item.data; d, name = item.data, item.stream)
    data_names: set[str] = set()
    schema_names: dict[str, str] = {}  # local name -> StreamNames object name in uartlab.schema
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                pairs = ([(target, node.value)] if isinstance(target, ast.Name) else
                         list(zip(target.elts, node.value.elts, strict=False))
                         if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple) else [])
                for t, v in pairs:
                    if isinstance(t, ast.Name) and _is_data(v):
                        data_names.add(t.id)
        if isinstance(node, ast.ImportFrom) and node.module == "uartlab.schema":
            for alias in node.names:
                if alias.name in NAMES_OBJECTS:
                    schema_names[alias.asname or alias.name] = alias.name

    def stream_of(node) -> str | None:
        """A stream named by literal, by the schema's constant (RUNNER_STREAM) or StreamNames (DAQ.stream)."""
        if _str(node) is not None:
            return _str(node)
        if isinstance(node, ast.Name) and node.id in STREAM_CONSTANTS:
            return getattr(schema, node.id)
        if isinstance(node, ast.Attribute) and node.attr == "stream" and isinstance(node.value, ast.Name) \
                and node.value.id in schema_names:
            return getattr(schema, schema_names[node.value.id]).stream
        return None

    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript):
            key = _str(node.slice)
            if key is not None:
                v = node.value
                if _is_data(v) or (isinstance(v, ast.Name) and v.id in data_names):
                    add(None, key, node)
                elif isinstance(v, ast.Attribute) and v.attr == "streams":
                    add(key, None, node)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id in schema_names and node.attr not in NAMES_METHODS:
            add(getattr(schema, schema_names[node.value.id]).stream, node.attr, node)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            head, dot, tail = node.value.partition(".")
            if dot and head in DECLARED and tail.isidentifier() and tail not in NOT_SIGNALS:
                add(head, tail, node)
        elif isinstance(node, ast.Call):
            f, args = node.func, node.args
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            s0 = stream_of(args[0]) if args else None
            if name == "field" and isinstance(f, ast.Attribute):
                if len(args) == 2 and s0 is not None and _str(args[1]) is not None:
                    add(s0, _str(args[1]), node)
                elif len(args) == 1 and s0 is not None:
                    add(None, s0, node)
            elif name == "fresh" and len(args) >= 2 and s0 is not None and isinstance(args[1], ast.Tuple):
                for e in args[1].elts:
                    if _str(e) is not None:
                        add(s0, _str(e), node)
            elif name == "Channel" and len(args) == 2 and s0 is not None and _str(args[1]) is not None:
                add(s0, _str(args[1]), node)
            elif name == "single" and isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) \
                    and f.value.id == "Record" and s0 is not None:
                for kw in node.keywords:
                    if kw.arg is not None:
                        add(s0, kw.arg, node)
            elif name == "Record" and s0 is not None:
                add(s0, None, node)
                if len(args) >= 3 and isinstance(args[2], ast.Dict):
                    for k in args[2].keys:
                        if _str(k) is not None:
                            add(s0, _str(k), node)
            elif name in ("read", "rows_between", "length") and s0 is not None and isinstance(f, ast.Attribute):
                add(s0, None, node)
            elif name == "subscribe" and len(args) >= 2 and isinstance(args[1], ast.Set):
                for e in args[1].elts:
                    if _str(e) is not None:
                        add(_str(e), None, node)
    return out


def undeclared(found, where_file: str = "") -> list[str]:
    """What the schema does not declare among scan()'s findings."""
    bad = []
    for stream, field, at in found:
        local = LOCAL_STREAMS.get((where_file, stream))
        if stream is not None and local is not None:
            ok = field is None or field in local
        elif stream is None:
            ok = field in ALL_FIELDS
        elif stream not in DECLARED and stream != schema.EVENTS:
            ok = False
        else:
            ok = field is None or field in DECLARED.get(stream, ())
        if not ok:
            bad.append(f"{at}: {stream or '?'}.{field or ''}")
    return bad


def _sources():
    for d in PACKAGE_DIRS:
        for path in sorted((ROOT / d).rglob("*.py")):
            yield path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8")


def test_every_field_a_module_names_is_declared_by_the_schema():
    bad, seen = [], 0
    for rel, text in _sources():
        found = scan(text, rel)
        seen += len(found)
        bad += undeclared(found, rel)
    assert seen > 100, "the scanner found almost nothing: are the patterns still the code's?"
    assert not bad, "named but not declared in uartlab.schema:\n" + "\n".join(bad)


def test_streams_are_declared_only_in_the_schema():
    local = []
    for rel, text in _sources():
        if rel == "core/schema.py":
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "StreamSpec" and node.args \
                    and _str(node.args[0]) is not None and (rel, _str(node.args[0])) not in LOCAL_STREAMS:
                local.append(f"{rel}:{node.lineno}: {_str(node.args[0])}")
    assert not local, "streams declared outside uartlab.schema:\n" + "\n".join(local)


SNIPPET = '''
from uartlab.schema import DAQ
def update(item, tape, probe, session):
    d = item.data
    a = d["tendon_forse_N"]                       # misspelt
    b = item.data["wrench"]
    t, q = tape.field("joints", "angle_rad")      # misspelt
    v = probe.fresh("daq", ("gauge_V", "gauges_V"), 0.1)
    c = Channel("model", "joint_angles_rad")
    src = "daq.wrenchh"
    session.read("dqa", 0, 10)
    Record.single("runner", 0.0, phase=1, trial_indx=2)
    Record.single(MODEL_STREAM, 0.0, lag_s=0.1)
    Record.single(DAQ.stream, 0.0, wrench=0.1)
    x = DAQ.tendon_force_N, DAQ.wrensh
'''


def test_the_scanner_catches_a_misspelt_field():
    bad = undeclared(scan(SNIPPET))
    assert sorted(b.split(": ", 1)[1] for b in bad) == sorted([
        "?.tendon_forse_N", "joints.angle_rad", "daq.gauges_V", "daq.wrenchh", "dqa.", "runner.trial_indx",
        "daq.wrensh"])
    ok = scan(SNIPPET.replace("session.read(\"dqa\"", "session.read(\"daq\""))
    assert ("daq", None) in {(s, f) for s, f, _ in ok}


def test_stream_names_are_the_declared_names_and_refuse_others():
    assert schema.DAQ.tendon_force_N == "tendon_force_N" and schema.DAQ.ref("wrench") == "daq.wrench"
    assert schema.JOINTS_IK.stream == "joints"
    assert schema.RUNNER.fields == tuple(f.name for f in schema.runner_spec().fields)
    with pytest.raises(AttributeError, match="daq.*wrensh"):
        _ = schema.DAQ.wrensh
    specs = schema.declared_specs()
    assert set(specs) == set(STREAMS)
    for name, spec in specs.items():
        assert STREAMS[name].fields == tuple(f.name for f in spec.fields)
    assert specs["daq"].field("wrench").frame == schema.FRAME_NANO17
    assert specs["model"].field("fingertip_force_N").frame.startswith("world")


# ---------------------------------------------------------------------- (b) runtime: what the producers emit

def _check(records, specs) -> set[str]:
    seen = set()
    for r in records:
        spec = specs[r.stream]
        assert set(r.data) == {f.name for f in spec.fields}, r.stream
        for f in spec.fields:
            a = np.asarray(r.data[f.name])
            assert a.shape == (len(r), *f.shape), (r.stream, f.name, a.shape)
            assert np.dtype(a.dtype).kind == np.dtype(f.dtype).kind, (r.stream, f.name, a.dtype, f.dtype)
        seen.add(r.stream)
    return seen


@pytest.mark.realtime
def test_the_twin_rig_emits_exactly_the_declared_fields():
    from uartlab.app.rig.config import default_rig_config
    from uartlab.app.rig.rig import Rig
    from uartlab.streams import Record

    with Rig(default_rig_config()) as rig, \
            rig.hub.subscribe("schema-test", {"actuators", "daq", "mocap", "joints"}, 1_000_000) as sub:
        time.sleep(1.2)
        records = [r for r in sub.drain() if isinstance(r, Record)]
        specs = {s: rig.hub.specs[s] for s in ("actuators", "daq", "mocap", "joints")}
    assert _check(records, specs) >= {"actuators", "daq", "mocap"}
    for name, spec in specs.items():   # the rig registers the schema's declarations, nothing of its own
        assert [f.name for f in spec.fields] == list(STREAMS[name].fields)


def test_the_runner_and_the_live_model_emit_exactly_the_declared_fields(finger):
    from uartlab.app.run.feed import simulated_trial
    from uartlab.app.run.live_model import LiveModel
    from uartlab.hub import Hub
    from uartlab.sim.scenarios import contact_trial
    from uartlab.streams import Record

    trial = contact_trial("Hook", "FDP", "ED")
    run = simulated_trial(finger, trial)
    hub = Hub()
    hub.register(schema.runner_spec())
    specs = {"runner": schema.runner_spec(), "model": LiveModel.register(hub)}
    out = hub.subscribe("witness", {"model"}, maxsize=1_000_000)
    live = LiveModel(hub, finger, [trial])
    live.process(run.records)
    model = [r for r in out.drain() if isinstance(r, Record)]
    assert model and _check(run.records, specs) == {"runner"} and _check(model, specs) == {"model"}


def test_the_recorder_writes_a_fields_frame_and_replay_reads_files_without_one(tmp_path):
    import h5py
    from uartlab.app.record.player import SessionFile
    from uartlab.app.record.writer import SessionRecorder

    path = tmp_path / "s.h5"
    with SessionRecorder(path, {"operator": "test"}) as rec:
        rec.add_stream(schema.daq_spec(1000.0))
    with h5py.File(path, "r") as f:
        assert f["streams/daq/wrench"].attrs["frame"] == schema.FRAME_NANO17
        assert "frame" not in f["streams/daq/pot_V"].attrs          # no frame, no attribute: as before
    with SessionFile(path) as f:
        assert f.streams["daq"] == schema.daq_spec(1000.0)
    with h5py.File(path, "r+") as f:                                # a file written before frames
        del f["streams/daq/wrench"].attrs["frame"]
    with SessionFile(path) as f:
        assert f.streams["daq"].field("wrench").frame == ""
