"""The one place that says how sim/ compiles its kernels.

``error_model="numpy"`` lets divisions return inf/nan instead of raising: the raise paths would keep
numba from pruning reference counts, which cost more than the arithmetic in these small kernels.
Helpers called inside the right-hand side are inlined for the same reason (every call would
otherwise touch the reference count of each array in the Model and Work tuples).
"""

from __future__ import annotations

from numba import njit

kernel = njit(cache=True, error_model="numpy")
inline_kernel = njit(cache=True, error_model="numpy", inline="always")
