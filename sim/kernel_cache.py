"""Where sim/ keeps its compiled kernels: a per-user folder, keyed by the kernels' sources.

    <root>/kernels/py311-numba0.68.1-<hash>/     one folder per key: numba's .nbi/.nbc files, and `warm`

<root> is ``$UARTLAB_CACHE_DIR`` when set (tests, CI, lab machines with a shared or scratch disk), else
``platformdirs.user_cache_dir("uartlab")`` (~/.cache/uartlab on Linux). Nothing is ever written inside
the installed package. Deleting the folder is always safe: the next run compiles again.

The key hashes the Python, numba and numpy versions and the *kernel sources*: every sim/ module that
decorates with jit.py's ``kernel``/``inline_kernel`` (helpers are inlined across modules) and every sim/
module those import, transitively (numba freezes module-level constants - state offsets, index tables -
into the machine code). An edit to any of them gives a new folder, so every kernel recompiles; an edit
elsewhere in sim/ (scenarios, finger, ik ...) keeps the cache. The most recently used folders are kept,
older ones removed when a new one is filled.

Why not numba's own ``cache=True``: it writes into ``__pycache__`` beside the sources (site-packages,
where pip cannot remove it, and a leftover ``uartlab/sim/__pycache__`` later shadows an editable install
as an empty namespace package), and it checks only the stamp of the cached function's own file, so an
edit to a helper inlined from another file never recompiled. Why per dispatcher (``cached``), not
``NUMBA_CACHE_DIR``/``numba.config.CACHE_DIR`` or an entry in ``CacheImpl._locator_classes``: those are
process-wide and would move or shadow other libraries' caches, and neither sees a cache miss, which is
where "compiling now" is known. ``cached`` does what ``Dispatcher.enable_caching()`` does, with our class.

The first compile under a key (no ``warm`` marker yet) logs one WARNING on the ``uartlab.sim`` logger
(stderr when logging is not configured; ``uartlab -q`` hides it); a warm cache says nothing. A kernel first
needed by a later run under a warm key (e.g. the stepper after only free-motion runs) is logged at INFO.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import os
import re
import shutil
import sys
from pathlib import Path

import numba
import numpy as np
from numba.core.caching import CompileResultCacheImpl, FunctionCache, _CacheLocator
from numba.core.dispatcher import Dispatcher
from platformdirs import user_cache_dir

ENV_VAR = "UARTLAB_CACHE_DIR"
COMPILE_MESSAGE = "uartlab: compiling the model once (about a minute); later runs start at once"
MARKER = "warm"
KEEP_FOLDERS = 8  # a few checkouts or venvs side by side keep theirs; a folder holds 1-2 MB

log = logging.getLogger("uartlab.sim")
SIM_DIR = Path(__file__).resolve().parent


def cache_root() -> Path:
    """The folder for everything uartlab caches: $UARTLAB_CACHE_DIR, else the per-user cache folder."""
    override = os.environ.get(ENV_VAR)
    return Path(override).expanduser() if override else Path(user_cache_dir("uartlab", appauthor=False))


# `from .x import ...`, `from uartlab.sim.x import ...`, `from . import x, y` (a regex, not ast: 30x faster,
# and a false match, e.g. in a docstring, only adds a file to the key)
_SIM_IMPORT = re.compile(rb"^[ \t]*from[ \t]+(?:\.|uartlab\.sim\.)(\w*)(?:\.\w+)*[ \t]+import[ \t]+([\w, \t]*)", re.M)


def _sim_imports(source: bytes) -> set[str]:
    """Names of the sim/ modules a sim/ module imports (anywhere in the file)."""
    names: set[str] = set()
    for module, what in _SIM_IMPORT.findall(source):
        names.update([module.decode()] if module else [w.strip().decode() for w in what.split(b",")])
    return names


def kernel_sources(sim_dir: Path = SIM_DIR) -> dict[str, bytes]:
    """{file name: contents} of the kernel sources: the modules importing jit.py, jit.py, and every sim/
    module they import, transitively."""
    sources = {p.stem: p.read_bytes() for p in sim_dir.glob("*.py")}
    imports = {name: _sim_imports(src) for name, src in sources.items()}
    todo = ["jit", *(name for name, deps in imports.items() if "jit" in deps)]
    closure: set[str] = set()
    while todo:
        name = todo.pop()
        if name in sources and name not in closure:
            closure.add(name)
            todo.extend(imports[name])
    return {f"{name}.py": sources[name] for name in sorted(closure)}


def cache_key(sim_dir: Path = SIM_DIR) -> str:
    """The folder name for the kernels of these sources on this Python, numba and numpy."""
    h = hashlib.sha256()
    h.update(f"{sys.implementation.cache_tag} {sys.version} numba {numba.__version__} numpy {np.__version__}"
             .encode())
    for name, source in kernel_sources(sim_dir).items():
        h.update(b"\0%s\0%d\0" % (name.encode(), len(source)))
        h.update(source)
    v = sys.version_info
    return f"py{v.major}{v.minor}-numba{numba.__version__}-{h.hexdigest()[:16]}"


@functools.cache
def kernel_dir() -> Path:
    """This process's kernel folder (the root and the key are read once, when the first kernel is decorated)."""
    folder = cache_root() / "kernels" / cache_key()
    with contextlib.suppress(OSError):  # no marker yet: the first kernel saved writes it
        os.utime(folder / MARKER)  # this key was used now (see _prune)
    return folder


class _KeyedLocator(_CacheLocator):
    """Every kernel of sim/ in kernel_dir(). The folder already stands for all the kernel sources, so the
    per-file stamp numba would check adds nothing: the stamp is the key."""

    def __init__(self, py_func, py_file):
        self._lineno = py_func.__code__.co_firstlineno

    def get_cache_path(self) -> str:
        return str(kernel_dir())

    def get_source_stamp(self) -> str:
        return kernel_dir().name

    def get_disambiguator(self) -> str:
        return str(self._lineno)

    @classmethod
    def from_function(cls, py_func, py_file):
        self = cls(py_func, py_file)
        try:
            self.ensure_cache_path()
        except OSError:
            return None  # numba then raises "no locator available": cached() falls back to no cache
        return self


class _KernelCacheImpl(CompileResultCacheImpl):
    _locator_classes = [_KeyedLocator]


_state = {"announced": False, "marked": False}


class _KernelCache(FunctionCache):
    """numba's per-function cache in kernel_dir(), which says once when it has to compile."""

    _impl_class = _KernelCacheImpl

    def load_overload(self, sig, target_context):
        cres = super().load_overload(sig, target_context)
        if cres is None and self._enabled and not _state["announced"]:
            _state["announced"] = True  # the dispatcher compiles under numba's global lock: no race here
            if (kernel_dir() / MARKER).exists():
                log.info("uartlab: compiling model kernels not in %s yet", kernel_dir())
            else:
                log.warning(COMPILE_MESSAGE)
        return cres

    def save_overload(self, sig, data):
        super().save_overload(sig, data)
        if not _state["marked"]:
            _state["marked"] = True
            _mark_warm(kernel_dir())


def _mark_warm(folder: Path) -> None:
    """The first kernel compiled and saved under this key: later runs are warm. Old keys' folders go."""
    try:
        (folder / MARKER).write_text(f"uartlab kernels for {folder.name}\n")
        _prune(folder.parent, keep=KEEP_FOLDERS)
    except OSError as exc:
        log.debug("kernel cache: %s", exc)


def _prune(kernels: Path, keep: int) -> None:
    """Remove all but the ``keep`` most recently used key folders (used: the marker's time, refreshed at
    each start; a folder still compiling has no marker yet and counts by its own time)."""
    def last_used(folder: Path) -> float:
        return max((p.stat().st_mtime for p in (folder / MARKER, folder) if p.exists()), default=0.0)

    folders = sorted((f for f in kernels.glob("py*-numba*-*") if f.is_dir()), key=last_used, reverse=True)
    for old in folders[keep:]:
        shutil.rmtree(old, ignore_errors=True)


def cached(dispatcher):
    """Give a numba dispatcher the keyed per-user cache (what ``enable_caching()`` does with numba's own)."""
    if not isinstance(dispatcher, Dispatcher):  # NUMBA_DISABLE_JIT=1: a plain Python function
        return dispatcher
    try:
        # numba's private cache slot (enable_caching() sets it); numba's class does not declare it
        dispatcher._cache = _KernelCache(dispatcher.py_func)  # type: ignore[attr-defined]
    except (OSError, RuntimeError):
        if not _state.get("unwritable"):
            _state["unwritable"] = True
            log.warning("uartlab: cannot write the kernel cache in %s (set %s to a writable folder); "
                        "the model compiles in every run", kernel_dir(), ENV_VAR)
    return dispatcher
