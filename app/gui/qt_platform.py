"""Can Qt open a window here? Asked before the QApplication exists, because Qt cannot be asked afterwards.

When Qt's platform plugin does not load (the xcb plugin needs libxcb-cursor.so.0 and other system
libraries that a minimal Debian/Ubuntu lacks) or there is no display, Qt prints several lines and
aborts the process (qFatal) from inside the QApplication constructor: nothing can be caught. So
`uartlab gui` first loads the plugin the way Qt would (``dlopen`` through ctypes: a missing library is
named in the error) and checks that there is a display, and says in one line what to install. This costs
a few milliseconds and imports nothing of Qt's Python modules. `uartlab doctor` probes the same question
the slow, thorough way (a QGuiApplication in a subprocess).
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from uartlab.errors import DeviceError

OFFSCREEN_HINT = "or run with QT_QPA_PLATFORM=offscreen for no window"
# Debian/Ubuntu packages whose names do not follow from the library's file name (see debian_package).
PACKAGES = {"libglib-2.0.so.0": "libglib2.0-0", "libgthread-2.0.so.0": "libglib2.0-0",
            "libgobject-2.0.so.0": "libglib2.0-0"}
_MISSING = re.compile(r"([\w.+-]+\.so(?:\.\d+)*): cannot open shared object file")


def xcb_wanted(environ: Mapping[str, str] = os.environ, platform: str = sys.platform) -> bool | None:
    """True when Qt would use its xcb (X11) plugin, None when Qt would find no display at all (Linux,
    nothing set), False otherwise (offscreen, wayland, another system's native plugin)."""
    asked = environ.get("QT_QPA_PLATFORM", "").strip()
    if asked:  # "xcb", "xcb:option", or Qt 6's fallback list "wayland;xcb": the first one is tried first
        return asked.split(";")[0].split(":")[0].strip() == "xcb"
    if not platform.startswith("linux"):
        return False
    wayland = bool(environ.get("WAYLAND_DISPLAY")) and environ.get("XDG_SESSION_TYPE") == "wayland"
    if wayland:
        return False
    return True if environ.get("DISPLAY") else None


def xcb_plugin(environ: Mapping[str, str] = os.environ) -> Path | None:
    """The xcb platform plugin Qt would load (PySide6's own, or QT_QPA_PLATFORM_PLUGIN_PATH's)."""
    folders = [Path(environ["QT_QPA_PLATFORM_PLUGIN_PATH"])] if environ.get("QT_QPA_PLATFORM_PLUGIN_PATH") else []
    spec = importlib.util.find_spec("PySide6")
    for location in (spec.submodule_search_locations or []) if spec else []:
        folders.append(Path(location) / "Qt" / "plugins" / "platforms")
    return next((f / "libqxcb.so" for f in folders if (f / "libqxcb.so").is_file()), None)


def load_library(path: str) -> str | None:
    """dlopen the library as Qt would: None when it loads, else the loader's error text."""
    try:
        ctypes.CDLL(path)
    except OSError as exc:
        return str(exc)
    return None


def debian_package(library: str) -> str:
    """The Debian/Ubuntu package that ships a library, by the distribution's naming rule: libxcb-cursor.so.0
    -> libxcb-cursor0, libX11.so.6 -> libx11-6 (a name ending in a digit gets a hyphen before the version)."""
    if library in PACKAGES:
        return PACKAGES[library]
    name, _, version = library.partition(".so")
    version = version.lstrip(".").split(".")[0]
    if not version:
        return name.lower()
    return f"{name}{'-' if name[-1].isdigit() else ''}{version}".lower()


def missing_libraries(path: str) -> list[str]:
    """Every library the loader cannot find for ``path`` (``ldd``'s "not found"; dlopen names only the
    first), in order, once each; [] without ldd."""
    ldd = shutil.which("ldd")
    if ldd is None:
        return []
    try:
        out = subprocess.run([ldd, path], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    found = [line.split("=>")[0].strip() for line in out.splitlines() if "=> not found" in line]
    return list(dict.fromkeys(found))


def missing_library_sentence(error: str, libraries: list[str] | None = None) -> str | None:
    """'the system library X is missing; install it with: sudo apt-get install P' for the library the error
    names (and any others in ``libraries``); None if the error names none."""
    found = _MISSING.search(error)
    if found is None:
        return None
    names = list(dict.fromkeys([found.group(1), *(libraries or [])]))
    packages = " ".join(dict.fromkeys(debian_package(n) for n in names))
    if len(names) == 1:
        return f"the system library {names[0]} is missing; install it with: sudo apt-get install {packages}"
    return f"the system libraries {', '.join(names)} are missing; install them with: sudo apt-get install {packages}"


def check(environ: Mapping[str, str] = os.environ) -> None:
    """Raise DeviceError (one line: what is missing and how to install it) if Qt would abort on start."""
    wanted = xcb_wanted(environ)
    if wanted is None:
        raise DeviceError("Qt cannot open a window: there is no display (neither DISPLAY nor WAYLAND_DISPLAY is "
                          f"set); run it in a desktop session ({OFFSCREEN_HINT})")
    if not wanted:
        return
    plugin = xcb_plugin(environ)
    if plugin is None:  # not a PySide6 we know the layout of: let Qt try
        return
    error = load_library(str(plugin))
    if error is None:
        return
    reason = (missing_library_sentence(error, missing_libraries(str(plugin)))
              or f"its X11 (xcb) platform plugin does not load ({error.strip()})")
    raise DeviceError(f"Qt cannot open a window: {reason} ({OFFSCREEN_HINT})")


def explain_import_error(exc: ImportError) -> Exception:
    """PySide6 itself failing to load for a missing system library (libEGL, libfontconfig ...), as one line;
    any other ImportError unchanged."""
    sentence = missing_library_sentence(str(exc))
    return DeviceError(f"Qt does not load: {sentence}") if sentence else exc
