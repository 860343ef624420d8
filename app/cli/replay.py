"""`uartlab replay FILE [--speed N|max] [--loop]`: play a session file through the stream interfaces.

Prints a live summary per stream (samples replayed, rate in recorded samples per wall second) about
once a second - or, on a terminal, a progress bar of the file's seconds played on stderr - and a final
line per stream; Ctrl-C stops. The file's events are logged at their recorded time and their kind's level,
as the live rig logs them (a trip or E-stop as a warning; trials and steady states with -v), marked replayed.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import sys
import time
from typing import TYPE_CHECKING

from uartlab.app.cli.progress import progress

if TYPE_CHECKING:
    from uartlab.app.record.player import ReplayRig


def add_parser(sub) -> None:
    from uartlab.app.cli.types import speed_or_max

    replay = sub.add_parser("replay", help="play a recorded session back through the live stream interfaces")
    replay.add_argument("file", help="session .h5 file")
    replay.add_argument("--speed", type=speed_or_max, default=1.0,
                        help="1 = real time, N = N times faster, max = as fast as possible")
    replay.add_argument("--loop", action="store_true", help="start again at the end")
    replay.add_argument("--json", action="store_true", help="print the summary as JSON")
    replay.set_defaults(run=main)


def parse_speed(text: str | float) -> float | str:
    """'max' or a positive factor of real time."""
    if str(text).lower() == "max":
        return "max"
    speed = float(text)
    if not speed > 0:
        raise ValueError(f"--speed must be a positive factor or 'max', got {text!r}")
    return speed


def main(args: argparse.Namespace) -> int:
    speed = parse_speed(getattr(args, "speed", 1.0))
    from uartlab.app.record.logs import log_event
    from uartlab.app.record.player import ReplayRig
    from uartlab.streams import Event

    rig = ReplayRig(args.file, speed=speed, loop=bool(getattr(args, "loop", False)))
    as_json = bool(getattr(args, "json", False))
    t_first, t_last = rig.file.time_span_s()
    if math.isnan(t_first):   # a session that ended before its first sample
        rig.file.close()
        print(json.dumps({"file": str(args.file), "wall_s": 0.0, "replayed": dict.fromkeys(rig.specs, 0)}) if as_json
              else f"{args.file}: {len(rig.specs)} streams, no sample recorded: nothing to replay")
        return 0
    if not as_json:
        print(f"{args.file}: {len(rig.specs)} streams, {t_last - t_first:.2f} s recorded, "
              f"{'complete' if rig.file.complete else 'NOT closed cleanly'}, speed {speed}")
    wall0 = last_print = last_tick = time.monotonic()
    span_s = max(t_last - t_first, 1e-9)
    quiet = logging.getLogger().getEffectiveLevel() > logging.WARNING  # -q: the final lines only
    ended = "done in"
    try:
        with progress(f"replay {args.file}", total=math.ceil(span_s), unit="s") as played:
            for item in rig.items():
                if isinstance(item, Event):
                    log_event(item)
                    continue
                now = time.monotonic()
                if now - last_tick >= 0.2:  # the file's seconds played (--loop: of this pass)
                    last_tick = now
                    played(int((rig.position_s - t_first) % (span_s + 1e-9)))
                if not (as_json or quiet or played.visible) and now - last_print >= 1.0:
                    last_print = now
                    _print_status(rig, now - wall0)
            played(math.ceil(span_s))
    except KeyboardInterrupt:
        ended = "interrupted after"
    except BaseException:
        ended = "stopped by the error below after"   # the error's own line follows, on stderr
        raise
    finally:
        wall_s = time.monotonic() - wall0
        if as_json:
            print(json.dumps({"file": str(args.file), "wall_s": wall_s, "replayed": rig.replayed,
                              "rate_per_s": {k: v / wall_s for k, v in rig.replayed.items()}}))
        else:
            _print_status(rig, wall_s, ended)
        rig.file.close()
    return 0


def _print_status(rig: ReplayRig, wall_s: float, ended: str | None = None) -> None:
    """Samples replayed so far: while playing (at the file's time), or as it ``ended`` ("done in" ...)."""
    parts = [f"{name} {n} ({n / max(wall_s, 1e-9):.0f}/s)" for name, n in rig.replayed.items()]
    prefix = f"t={rig.position_s:.2f} s " if ended is None else f"{ended} {wall_s:.2f} s: "
    print(prefix + ", ".join(parts), file=sys.stdout, flush=True)
