"""The optional parts of uartlab (pyproject's extras) and the one-line answer when a command needs a missing one.

The core (the model, session files, compare, replay, the calibration fits) needs none of them. Commands
that start the rig or its twins need ``[rig]``; the window needs ``[gui]``. Those commands call
``require(...)`` first, so a missing extra ends as one line naming the ``pip install`` that fixes it
(`MissingExtraError`, exit status 3), before anything is started. Finding a module's spec does not import
it: this check costs a few file-system look-ups.
"""

from __future__ import annotations

import importlib.util
import json
from importlib import metadata
from urllib.parse import unquote

from uartlab.errors import MissingExtraError

# extra: (what it is for, in words; the top-level modules that must be importable, as pyproject installs them).
EXTRAS: dict[str, tuple[str, tuple[str, ...]]] = {
    "rig": ("the rig's drivers (also used by the twin rig)", ("dynamixel_sdk", "serial", "nidaqmx", "grpc", "nptdms")),
    "gui": ("the window's libraries", ("PySide6", "pyqtgraph")),
    "analysis": ("the global sensitivity analysis's library", ("SALib",)),
}


def missing_modules(extra: str) -> list[str]:
    """The extra's top-level modules that cannot be found (none: the extra is installed)."""
    return [name for name in EXTRAS[extra][1] if not _found(name)]


def installed() -> dict[str, bool]:
    """Each extra: whether all its modules can be found (`uartlab doctor` reports this)."""
    return {extra: not missing_modules(extra) for extra in EXTRAS}


def require(*extras: str) -> None:
    """Raise MissingExtraError, naming the pip line, unless every one of ``extras`` is installed."""
    for extra in extras:
        absent = missing_modules(extra)
        if absent:
            what = EXTRAS[extra][0]
            raise MissingExtraError(f"needs {what}, which are not installed (no module {', '.join(absent)}); "
                                    f"install them with: {pip_line(extra)}")


def pip_line(extra: str) -> str:
    """``pip install 'uartlab[extra]'``, or for an install from a folder (a checkout) that folder's path."""
    source = _source_folder()
    if source is not None:
        folder, editable = source
        return f"pip install {'-e ' if editable else ''}'{folder}[{extra}]'"
    return f"pip install 'uartlab[{extra}]'"


def _found(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a package that is blocked or broken counts as missing
        return False


def _source_folder() -> tuple[str, bool] | None:
    """(folder, editable) when uartlab was installed from a local folder (PEP 610 direct_url.json)."""
    try:
        text = metadata.distribution("uartlab").read_text("direct_url.json")
        info = json.loads(text) if text else {}
    except Exception:  # noqa: BLE001 - no metadata (running from a source tree) or unreadable: the generic line
        return None
    url = info.get("url", "")
    if not url.startswith("file://") or "dir_info" not in info:
        return None
    return unquote(url.removeprefix("file://")), bool(info["dir_info"].get("editable"))
