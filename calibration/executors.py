"""Where identification and sweeps run their simulations: any concurrent.futures.Executor.

    with executor_for(None) as ex: ...                     # local processes (the default)
    with executor_for("tcp://10.0.0.5:8786") as ex: ...    # a dask.distributed cluster

Each task is one simulation (a few ms of numba): the workers import uartlab.sim once and then load the
compiled kernels from the on-disk kernel cache (sim/kernel_cache.py, per user), so a worker
never recompiles. ``warm_worker`` runs once per worker to pay that load up front rather than inside the
first Jacobian.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor

from .errors import CalibrationError


def warm_worker() -> int:
    """Import the model and run one tiny simulation, so the kernels are loaded from numba's cache."""
    from uartlab.sim import Finger, FingerParams

    finger = Finger(FingerParams.uart())
    finger.simulate(finger.initial_state([0, 30, 45, 30], 0.3), [], t_max=0.01, stop_at_steady=False)
    return os.getpid()


@contextlib.contextmanager
def executor_for(scheduler: str | None = None, workers: int | None = None) -> Iterator[Executor]:
    """A local ProcessPoolExecutor, "threads" for in-process threads (tests, one-core machines), or a
    dask.distributed Client's executor for a scheduler address ``tcp://host:port``."""
    if scheduler in (None, "", "processes"):
        n = workers or max(1, min(4, os.cpu_count() or 1))
        with ProcessPoolExecutor(n, initializer=warm_worker) as ex:
            yield ex
        return
    if scheduler == "threads":
        with ThreadPoolExecutor(workers or 2) as ex:
            yield ex
        return
    if not scheduler.startswith(("tcp://", "tls://", "inproc://", "ucx://")):
        raise CalibrationError("model", f"--scheduler must be a dask address like tcp://host:8786, got {scheduler!r}")
    try:
        from dask.distributed import Client
    except ImportError:
        raise CalibrationError("model", "a dask scheduler was given but dask.distributed is not installed "
                                        "(pip install 'dask[distributed]')") from None
    try:
        client = Client(scheduler, timeout="10s")
    except OSError as exc:
        raise CalibrationError("model", f"cannot reach the dask scheduler at {scheduler}: {exc}") from None
    try:
        client.run(warm_worker)
        yield client.get_executor()
    finally:
        client.close()
