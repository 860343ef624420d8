"""The IK per-frame bench (app/bench/ik.py): both solvers timed on the same frames, and they agree."""

from __future__ import annotations

import pytest
from uartlab.app.bench.ik import measure_ik


def test_both_solvers_are_timed_on_the_same_frames_and_agree():
    m = measure_ik(20)
    assert m["ik_frames"] == 20
    assert m["ik_new_us_per_frame"] > 0 and m["ik_scipy_us_per_frame"] > 0
    assert m["ik_max_angle_difference_rad"] < 1e-6


def test_too_few_frames_is_refused():
    with pytest.raises(ValueError, match="at least 2 frames, got 1"):
        measure_ik(1)
