"""calibration/executors.py run_tasks: results in the tasks' order, the longest tasks started first."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from uartlab.calibration.executors import run_tasks


def test_the_longest_tasks_start_first_and_the_results_keep_the_tasks_order():
    started: list[int] = []
    lock = threading.Lock()

    def work(task: int) -> int:
        with lock:
            started.append(task)
        return task * task

    tasks = [1, 5, 2, 4, 3]
    done = []
    with ThreadPoolExecutor(1) as ex:   # one worker: the start order is the submission order
        out = run_tasks(work, tasks, ex, done=lambda: done.append(1), cost=float)
    assert out == [1, 25, 4, 16, 9]
    assert started == [5, 4, 3, 2, 1]
    assert len(done) == len(tasks)


def test_without_a_cost_the_tasks_start_in_their_order():
    started: list[int] = []
    with ThreadPoolExecutor(1) as ex:
        out = run_tasks(lambda t: started.append(t) or -t, [3, 1, 2], ex)
    assert out == [-3, -1, -2] and started == [3, 1, 2]
