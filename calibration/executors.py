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
import re
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor, as_completed

from uartlab.errors import CalibrationError

CONNECT_TIMEOUT_S = 10.0   # a scheduler that does not answer within this is reported, not waited for
WORKERS_TIMEOUT_S = 10.0   # a scheduler without workers: tasks would wait forever


def warm_worker() -> int:
    """Import the model and run one tiny simulation, so the kernels are loaded from numba's cache."""
    from uartlab.sim import Finger, FingerParams

    finger = Finger(FingerParams.uart())
    finger.simulate(finger.initial_state([0, 30, 45, 30], 0.3), [], t_max=0.01, stop_at_steady=False)
    return os.getpid()


def run_tasks(fn: Callable, tasks: list, executor: Executor | None, done: Callable[[], object] | None = None,
              cost: Callable[[object], float] | None = None) -> list:
    """``fn`` of every task, results in the tasks' order; ``done()`` after each one completes (on an executor, in
    the order they finish). Without an executor, here one after another. ``cost``: a task's expected run time
    (any unit): submitted longest first, so a short task, not a long one, is what ends a batch late (a batch
    of a few unequal simulations on two workers finished a long one alone otherwise)."""
    if executor is None:
        out = []
        for task in tasks:
            out.append(fn(task))
            if done is not None:
                done()
        return out
    order = sorted(range(len(tasks)), key=lambda i: -cost(tasks[i])) if cost is not None else range(len(tasks))
    futures: dict[int, Future] = {i: executor.submit(fn, tasks[i]) for i in order}
    for _ in as_completed(futures.values()):
        if done is not None:
            done()
    return [futures[i].result() for i in range(len(tasks))]


@contextlib.contextmanager
def executor_for(scheduler: str | None = None, workers: int | None = None) -> Iterator[Executor]:
    """A local ProcessPoolExecutor, "threads" for in-process threads (tests, one-core machines), or a
    dask.distributed Client's executor for a scheduler address ``tcp://host:port``."""
    if not scheduler or scheduler == "processes":
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
        client = Client(scheduler, timeout=f"{CONNECT_TIMEOUT_S:g}s")
    except OSError as exc:   # refused, unresolvable, timed out (TimeoutError is an OSError)
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise CalibrationError("model", f"cannot reach the dask scheduler at {scheduler} within "
                                        f"{CONNECT_TIMEOUT_S:g} s ({reason})") from None
    try:
        _check_workers(client, scheduler)
        yield client.get_executor()
    finally:
        client.close()


def _check_workers(client, scheduler: str) -> None:
    """At least one worker, and every worker can import uartlab; otherwise one sentence naming the address
    (without workers, tasks would wait forever; a worker without uartlab fails every task)."""
    try:
        client.wait_for_workers(1, timeout=WORKERS_TIMEOUT_S)
    except TimeoutError:
        raise CalibrationError("model", f"the dask scheduler at {scheduler} has no workers (none joined within "
                                        f"{WORKERS_TIMEOUT_S:g} s): start some with `dask worker {scheduler}`"
                               ) from None
    try:
        client.run(warm_worker)
    except Exception as exc:  # noqa: BLE001 - dask re-raises a worker's ImportError as itself or as a plain
        # Exception('ModuleNotFoundError("No module named ...")') when the scheduler relays it
        text = str(exc)
        if not isinstance(exc, ImportError) and "ModuleNotFound" not in text and "ImportError" not in text:
            raise
        found = re.search(r"No module named '([^']+)'", text)
        missing = getattr(exc, "name", None) or (found.group(1) if found else "uartlab")
        reason = " ".join(text.split())
        if missing.split(".")[0] == "uartlab":
            raise CalibrationError("model", f"the dask workers at {scheduler} cannot import uartlab ({reason}): "
                                            "install uartlab on every worker") from None
        raise CalibrationError("model", f"the dask workers at {scheduler} cannot import {missing} ({reason}): "
                                        "install uartlab with its dependencies on every worker") from None
