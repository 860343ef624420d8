"""Progress of long work on stderr: a tqdm bar when stderr is a terminal, nothing otherwise.

    with progress("compare", total=len(trials), unit="trial") as on_progress:
        compare(..., on_progress=on_progress)          # the library calls on_progress(done, total)

Library code (calibration/, app/compare/) takes a callback ``on_progress(done, total)`` (``total`` None
when not known ahead, e.g. a model fit's simulations) and knows nothing of tqdm; the CLI makes the
callback here. Shown when stderr is a terminal (tqdm's ``disable=None``) and the log level lets warnings
through, so ``-q`` hides it; a pipe or a log file gets no bar. ``UARTLAB_PROGRESS=1`` shows it on any
stream (plain lines at most every few seconds), ``UARTLAB_PROGRESS=0`` never. For a parent process (the
window runs `uartlab compare --progress`), ``with lines():`` switches to one machine-readable line on stderr at
every step and update instead of a bar: ``progress: <step>: <done>/<total>`` (``?`` for an unknown total),
read back by ``parse_line``. When the work ends, one
INFO line says what was done and how long it took (``-v`` shows it; session and calibration logs keep it).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

ENV = "UARTLAB_PROGRESS"
LINE_PREFIX = "progress: "
_machine = {"lines": False}
OnProgress = Callable[[int, "int | None"], None]
log = logging.getLogger(__name__)


@contextlib.contextmanager
def lines(on: bool = True) -> Iterator[None]:
    """In the block (``on``), progress is machine-readable lines on stderr (see the module docstring), never a
    bar."""
    before, _machine["lines"] = _machine["lines"], on
    try:
        yield
    finally:
        _machine["lines"] = before


def step(desc: str, done: int = 0, total: int | None = None) -> None:
    """A step of the work (with how far it is), as a line in ``lines()`` mode; nothing otherwise."""
    if _machine["lines"]:
        print(f"{LINE_PREFIX}{desc}: {done}/{'?' if total is None else total}", file=sys.stderr, flush=True)


def parse_line(line: str) -> tuple[str, int, int | None] | None:
    """(step, done, total) of a ``progress: <step>: <done>/<total>`` line; None for any other line."""
    if not line.startswith(LINE_PREFIX):
        return None
    desc, _, count = line[len(LINE_PREFIX):].rpartition(": ")
    done, _, total = count.partition("/")
    try:
        return desc, int(done), None if total.strip() == "?" else int(total)
    except ValueError:
        return None


def shown() -> bool | None:
    """True: always; False: never (-q, or UARTLAB_PROGRESS=0); None: when stderr is a terminal."""
    env = os.environ.get(ENV, "").strip().lower()
    if env in ("0", "no", "off", "false") or logging.getLogger().getEffectiveLevel() > logging.WARNING:
        return False
    if env in ("1", "yes", "on", "true"):
        return True
    return None


class Bar:
    """One bar's ``on_progress(done, total=None)`` (a new ``total`` replaces the old); ``visible`` says whether
    the bar is drawn (a caller may then print less)."""

    def __init__(self, bar: Any, total: int | None, desc: str = ""):   # bar: a tqdm bar (tqdm ships no types)
        self._bar = bar
        self.desc = desc
        self.done = 0
        self.total = total
        self.visible = not bar.disable

    def __call__(self, done: int, new_total: int | None = None) -> None:
        if new_total is not None and new_total != self.total:
            self.total = self._bar.total = new_total
            self._bar.bar_format = None  # tqdm's bar, now that there is a total
        self.done = done
        self._bar.update(done - self._bar.n if not self._bar.disable else 0)
        step(self.desc, done, self.total)


@contextlib.contextmanager
def progress(desc: str, total: int | None = None, unit: str = "it") -> Iterator[Bar]:
    """A bar for the block; yields its ``on_progress(done, total=None)``, a `Bar`."""
    from tqdm import tqdm

    show = False if _machine["lines"] else shown()
    forced = show is True and not _isatty(sys.stderr)
    bar = tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, disable=None if show is None else not show,
               leave=forced, dynamic_ncols=True, mininterval=5.0 if forced else 0.1, ascii=forced or None,
               bar_format=None if total is not None else "{desc}: {n_fmt} {unit}s [{elapsed}]")
    on_progress = Bar(bar, total, desc)
    step(desc, 0, total)
    started = time.monotonic()
    try:
        yield on_progress
    finally:
        bar.close()
    if on_progress.total == 0:  # nothing to do (e.g. compare --no-figures): nothing to say
        return
    of = f" of {on_progress.total}" if on_progress.total is not None else ""
    units = unit if on_progress.done == 1 else unit + "s"
    log.info("%s: %s%s %s in %.1f s", desc, on_progress.done, of, units, time.monotonic() - started)


def write(line: str) -> None:
    """A line on stderr that does not tear an open bar (tqdm clears it, writes, draws it again)."""
    from tqdm import tqdm

    tqdm.write(line, file=sys.stderr)


def _isatty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
