"""What the window says about a problem: the driver's or the interlock's sentence, said in the operator's
words, with the next step, and on the twin rig as the twin's.

The sentences the rig core sends are written for the record (file, log, CLI): exact, with register names and
numbers. At the rig an operator needs what happened to which part of the rig and what to do now. Each rule
below recognises one kind of sentence; what no rule knows is shown as it came. The original stays in the Log
tab and in the tooltip.

    for_operator("stream daq is stale: last sample 1.01 s ago (limit 1 s)", twin=False)
    -> Said("the DAQ (USB-6210) sent nothing for 1.01 s (limit 1 s)",
            "check the DAQ's USB cable, then Disconnect and Connect")
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from uartlab.drivers.mx64_bus import HW_ERROR_NAMES
from uartlab.processes import HOW_IT_ENDED_PATTERN

# The rig's parts as an operator names them, by the stream each one feeds.
PARTS = {"actuators": "the servos", "daq": "the DAQ (USB-6210)", "mocap": "the motion capture (Motive)",
         "joints": "the joint angles (from the motion capture)"}
CHECK = {"actuators": "the servo bus cable (U2D2) and the servos' power supply",
         "daq": "the DAQ's USB cable", "mocap": "that Motive is running and streaming on the network",
         "joints": "that Motive sees every marker on the finger"}


@dataclass(frozen=True)
class Said:
    text: str
    next_step: str


@dataclass(frozen=True)
class Seat:
    """Where the operator sits: a twin rig or the hardware; a rig core this window started, or one started
    outside it (whose twin rig only a restart of that `uartlab rig serve` brings back)."""

    twin: bool = False
    own_core: bool = True

    @property
    def new_twin_rig(self) -> str:
        return ("Disconnect and Connect to start a new twin rig" if self.own_core else
                "restart `uartlab rig serve` where it was started (it runs the twin rig), then Disconnect and Connect")


def _stale(m: re.Match, seat: Seat) -> Said:
    stream = m["stream"]
    part = PARTS.get(stream, f"the {stream} stream")
    text = f"{part} sent nothing for {m['age']} s (limit {m['limit']} s)"
    if seat.twin:
        return Said(f"{text}, on the twin rig", "the twin rig fell behind (is the computer busy?): "
                                                "Acknowledge / reset, then Start again")
    return Said(text, f"check {CHECK.get(stream, 'its cable')}, then Disconnect and Connect")


def _no_data(m: re.Match, seat: Seat) -> Said:
    stream = m["stream"]
    part = PARTS.get(stream, f"the {stream} stream")
    age = "" if m["age"] == "inf" else f" for {m['age']} s"
    text = f"{part} {'of the twin rig ' if seat.twin else ''}sent nothing{age}"
    return Said(text, f"the twin rig stopped answering: {seat.new_twin_rig}" if seat.twin else
                f"check {CHECK.get(stream, 'its cable')}, then Disconnect and Connect")


def _hardware_error(m: re.Match, seat: Seat) -> Said:
    names = ([name for bit, name in HW_ERROR_NAMES.items() if int(m["code"], 16) & bit] if m["code"] else
             [n.strip() for n in m["names"].split(",")]) or [f"error 0x{m['code']}"]
    if seat.twin:
        return Said(f"servo {m['servo']} of the twin rig shut itself down: {' and '.join(names)}",
                    f"a twin servo stays shut down until its twin rig restarts: {seat.new_twin_rig}")
    text = f"servo {m['servo']} shut itself down: {' and '.join(names)}"
    return Said(text, f"let servo {m['servo']} cool and check that its tendon runs free, then switch the servo "
                      "power off and on (a hardware error stays until the servo is power-cycled)")


def _no_reply(m: re.Match, seat: Seat) -> Said:
    servo = m["servo"]
    if seat.twin:
        return Said(f"servo {servo} of the twin rig does not answer",
                    f"the twin rig stopped answering: {seat.new_twin_rig}")
    return Said(f"servo {servo} does not answer", "check the servo bus cable (U2D2) and the servos' power supply, "
                                                  "then Disconnect and Connect")


def _watchdog(m: re.Match, seat: Seat) -> Said:
    if m["silent_ms"] is not None and float(m["silent_ms"]) < float(m["ms"]):
        # this computer kept talking: the servos (or, on a twin rig, the twin's own process) missed it
        device = "the twin rig's servos" if seat.twin else "the servos"
        return Said(f"{device} stopped on their own: their watchdog let go after {m['ms']} ms, though this computer "
                    f"paused at most {m['silent_ms']} ms (they hold where they were)",
                    "the twin rig runs on this computer's CPU: keep other heavy work off it, then Acknowledge / "
                    "reset and Start again" if seat.twin else
                    "check the servo bus cable (U2D2) and its USB port, then Acknowledge / reset and Start again")
    paused = f" (it paused {m['silent_ms']} ms)" if m["silent_ms"] is not None else ""
    return Said(f"the servos stopped on their own: this computer was silent for more than {m['ms']} ms{paused} and "
                "their watchdog let go (they hold where they were)",
                "Acknowledge / reset, then Start again; keep other heavy work off the rig computer")


def _twin_ended(m: re.Match, seat: Seat) -> Said:
    return Said(f"the twin rig's process {m['how']}: its servos, DAQ and motion capture are gone",
                seat.new_twin_rig)


def _core_ended(m: re.Match, seat: Seat) -> Said:
    return Said(f"the rig core {m['how']}: the servos' Bus Watchdog stops them (torque on, holding); a run or "
                "recording it had going keeps what was flushed", "Disconnect and Connect to start a new rig core")


def _other_core_ended(m: re.Match, seat: Seat) -> Said:
    return Said("the rig core has exited: the servos' Bus Watchdog stops them (torque on, holding); a run or "
                "recording it had going keeps what was flushed", "start `uartlab rig serve` again, or Disconnect "
                                                                  "and Connect for a rig core of this window's own")


RULES: tuple[tuple[re.Pattern, Callable[[re.Match, Seat], Said]], ...] = (
    (re.compile(rf"the rig core this window started \(pid \d+\) (?P<how>{HOW_IT_ENDED_PATTERN})"), _core_ended),
    (re.compile(r"the rig core \(pid \d+\) has exited"), _other_core_ended),
    # before the devices' own sentences: whatever a device then said, the twin it talked to had gone
    (re.compile(rf"\(the twin process \(pid \d+\) (?P<how>{HOW_IT_ENDED_PATTERN})\)"), _twin_ended),
    (re.compile(r"stream (?P<stream>\w+) is stale: last sample (?P<age>[\d.]+) s ago \(limit (?P<limit>[\d.]+) s\)"),
     _stale),
    (re.compile(r"no (?P<stream>\w+) data for (?P<age>[\d.]+|inf) s"), _no_data),
    (re.compile(r"servo (?P<servo>\w+) reports hardware error 0x(?P<code>[0-9A-Fa-f]+)(?P<names>)"), _hardware_error),
    (re.compile(r"MX-64 ID \d+ \((?P<servo>\w+)\): hardware error (?P<code>)(?P<names>[^:;]+): shut down"),
     _hardware_error),
    (re.compile(r"MX-64 ID (?P<servo>\d+ \(\w+\)): no reply to .* after \d+ tries"), _no_reply),
    (re.compile(r"bus watchdog tripped \(host silent > (?P<ms>[\d.]+) ms"
                r"(?:; this host's longest silence on the bus in the last [\d.]+ s: (?P<silent_ms>\d+) ms)?\)"),
     _watchdog),
)


def for_operator(text: str, twin: bool = False, own_core: bool = True) -> Said | None:
    """The operator's sentence for a core's problem sentence, or None when no rule knows it. ``own_core``:
    the window started the rig core (False: one started outside it)."""
    seat = Seat(twin, own_core)
    for pattern, say in RULES:
        m = pattern.search(text)
        if m is not None:
            return say(m, seat)
    return None


def steady_sentence(message: str) -> str:
    """A runner ``steady`` event's JSON (app/run/state.py ``SteadyState.to_dict``) as one line for the log."""
    d = json.loads(message)
    angles = ", ".join(f"{j} {v:.1f}°" for j, v in d["joint_angles_deg"].items())
    tensions = ", ".join(f"{t} {v:.2f}" for t, v in d["tendon_force_N"].items())
    settle = "" if d.get("settle_time_s") is None else f" after {d['settle_time_s']:.2f} s"
    return f"{d['trial']} repeat {d['repeat']}: {d['outcome']}{settle} — {angles}; tensions [N] {tensions}"


LOSS_WORDS = ("drop", "lost", "not_sent", "refused")   # the live model's counters of what it lost


def drops_sentence(message: str) -> str | None:
    """A ``drops`` event's JSON counts as one line, or None when nothing was lost (routine: the file has it).
    The hub's and the recorder's counts are per stream; the live model's name what each counter counts."""
    counts = json.loads(message)
    if not isinstance(counts, dict):
        return None
    named = any(any(word in k for word in LOSS_WORDS) for k in counts)
    lost = {k: v for k, v in counts.items() if isinstance(v, int) and not isinstance(v, bool) and v > 0
            and (not named or any(word in k for word in LOSS_WORDS))}
    if not lost:
        return None
    return "samples lost: " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in lost.items())
