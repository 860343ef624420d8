"""Where a command writes: checked before the work starts, so an unusable folder is one line at once.

Every writing command calls ``writable_folder`` (a folder it writes into: ``--out``, ``--store``,
``--dir``) or ``writable_file`` (one file: ``-o``, ``--plot``) before it starts anything slow — a
calibration procedure, a rig, a comparison — instead of failing at the end (a folder that is a file, a
parent that is a file, permission denied, a read-only disk). The folder is created when missing; the
check writes and removes a temporary file in it, because ``os.access`` says yes to root on a read-only
mount. The error is an ``OutputError`` (exit status 3) naming the option and the path.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from uartlab.errors import OutputError


def writable_folder(path: str | os.PathLike, option: str = "--out", create: bool = True) -> Path:
    """``path`` as a folder uartlab can write into, created if needed; OutputError naming ``option`` if not.
    ``create=False``: only checked (the nearest existing folder on the way must take a new entry), for a
    command that writes nothing unless its work succeeds."""
    folder = Path(path)
    problem = _folder_problem(folder, create)
    if problem:
        raise OutputError(f"{option} {folder}: {problem}")
    return folder


def writable_file(path: str | os.PathLike, option: str = "-o") -> Path:
    """``path`` as a file uartlab can write (its folder created if needed); OutputError naming ``option``
    and the file when the path is a folder or its folder cannot be written."""
    file = Path(path)
    if file.is_dir():
        raise OutputError(f"{option} {file}: is a folder, not a file")
    folder = file.parent
    problem = _folder_problem(folder)
    if problem:
        raise OutputError(f"{option} {file}: cannot write the file: its folder {folder} {problem}")
    if file.exists() and not os.access(file, os.W_OK):
        raise OutputError(f"{option} {file}: the file is not writable")
    return file


def _folder_problem(folder: Path, create: bool = True) -> str | None:
    """Why nothing can be written into ``folder`` (created if missing and ``create``), or None."""
    if create:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except FileExistsError:
            return "is a file, not a folder"
        except OSError as exc:
            return f"cannot be created: {_reason(exc)}"
    existing = next((p for p in (folder, *folder.parents) if p.exists() or p.is_symlink()), Path("."))
    if not existing.is_dir():
        return "is a file, not a folder" if existing == folder else f"cannot be created: {existing} is a file"
    try:
        with tempfile.TemporaryFile(dir=existing, prefix=".uartlab-write-check-"):
            pass
    except OSError as exc:
        return f"cannot be written: {_reason(exc)}" if existing == folder else \
            f"cannot be created in {existing}: {_reason(exc)}"
    return None


def _reason(exc: OSError) -> str:
    """The OS's reason in words: 'not a directory' (a parent is a file), 'permission denied' ..."""
    reason = (exc.strerror or str(exc)).lower()
    if isinstance(exc, NotADirectoryError):
        return f"{reason} (a part of the path is a file)"
    return reason
