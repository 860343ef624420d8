"""The one place that says how sim/ compiles its kernels.

``error_model="numpy"`` lets divisions return inf/nan instead of raising: the raise paths would keep
numba from pruning reference counts, which cost more than the arithmetic in these small kernels.
Helpers called inside the right-hand side are inlined for the same reason (every call would
otherwise touch the reference count of each array in the Model and Work tuples).

Every kernel is cached on disk in a per-user folder keyed by all kernel sources (kernel_cache.py),
not with numba's ``cache=True`` (which writes beside the sources and misses edits to inlined helpers).
"""

from __future__ import annotations

from numba import njit
from uartlab.sim.kernel_cache import cached


def kernel(fn):
    return cached(njit(error_model="numpy")(fn))


def inline_kernel(fn):
    return cached(njit(error_model="numpy", inline="always")(fn))
