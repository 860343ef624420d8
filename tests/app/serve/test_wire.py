"""Records and events through the wire format: what goes in comes out, and a mismatch is one clear line."""

from __future__ import annotations

import numpy as np
import pytest
from uartlab.app.serve import wire
from uartlab.app.serve.client import error_from
from uartlab.drivers.interfaces import DeviceError
from uartlab.schema import EventKind, declared_specs, runner_spec
from uartlab.streams import Event, Record

SPECS = declared_specs()


def a_runner_record(n: int = 3) -> Record:
    spec = SPECS["runner"]
    rng = np.random.default_rng(0)
    data = {f.name: rng.normal(size=(n, *f.shape)).astype(f.dtype) for f in spec.fields}
    return Record("runner", np.arange(n, dtype=float) + 100.0, data)


def test_a_record_comes_back_as_it_went_and_checks_against_its_spec():
    record = a_runner_record()
    frames = wire.encode(record, SPECS["runner"])
    assert frames[0] == b"runner"
    back = wire.decode([bytes(f) for f in frames], SPECS)
    assert isinstance(back, Record) and back.stream == "runner"
    np.testing.assert_array_equal(back.host_time_s, record.host_time_s)
    for name, values in record.data.items():
        np.testing.assert_array_equal(back.data[name], values)
    back.validate(SPECS["runner"])


def test_an_event_comes_back_as_it_went():
    event = Event(12.5, EventKind.ESTOP, "operator", "stop (E-stop from kim@lab pid 1)")
    assert wire.decode(wire.encode(event), SPECS) == event


def test_the_spec_serialised_is_the_spec_declared():
    for spec in SPECS.values():
        assert wire.spec_from_dict(wire.spec_to_dict(spec)) == spec


def test_a_record_that_does_not_match_the_declared_stream_is_refused_in_one_line():
    frames = [bytes(f) for f in wire.encode(a_runner_record(), SPECS["runner"])]
    other = {**SPECS, "runner": runner_spec(50.0)}
    wire.decode(frames, other)                       # a rate is not a field: it still matches
    assert_refused(frames, {k: v for k, v in SPECS.items() if k != "runner"}, "stream 'runner': not declared")
    record = a_runner_record()
    record.data["phase"] = record.data["phase"].astype("f8")
    frames = [bytes(f) for f in wire.encode(record)]  # encoded without the spec: the wrong dtype goes out
    assert_refused(frames, SPECS, "stream runner: field phase is float64 () on the wire, the core declared int64 ()")
    frames = [bytes(f) for f in wire.encode(a_runner_record(), SPECS["runner"])]
    assert_refused([*frames[:-1], frames[-1][:-8]], SPECS, "stream runner: field stream_age_s has")


def assert_refused(frames, specs, text: str) -> None:
    with pytest.raises(wire.WireError) as info:
        wire.decode(frames, specs)
    assert text in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("raised, raised_again", [
    (DeviceError("servo 3", "no reply"), "DeviceError"),     # a driver's, a subclass of the kind
    (ValueError("--speed: must be > 0"), "ConfigError"),        # bad input, wherever it was met
    (PermissionError(13, "Permission denied", "recordings"), "OutputError"),   # an OSError: a device or file
    (KeyError("x"), None),                                      # a bug: said as one, not as the user's fault
])
def test_an_error_the_core_meets_is_raised_again_by_the_client_as_its_kind(raised, raised_again):
    kind = wire.error_kind(raised)
    again = error_from(kind, str(raised))
    if raised_again is None:
        assert kind == "internal" and type(again) is RuntimeError
    else:
        assert kind == raised_again and type(again).__name__ == raised_again and isinstance(again, Exception)
