"""The step runner on its own: motion as typed steps, one command per tick, under latching interlocks."""

from __future__ import annotations

import math

import numpy as np
import pytest
from uartlab.protocols.interlocks import InterlockLimits, Interlocks, Observation
from uartlab.protocols.runner import Action, Phase
from uartlab.protocols.steps import Hold, Move, StepRunner, WaitUntilStill

TICK_S = 0.01


def runner(**kw) -> StepRunner:
    limits = InterlockLimits(40.0, np.full(6, 0.06), {}, 15.0)
    return StepRunner("test", Interlocks(limits), **kw)


def obs(excursion_m=None, force_N=0.0, moving=False) -> Observation:
    x = np.zeros(6) if excursion_m is None else np.asarray(excursion_m, float)
    return Observation(np.full(6, force_N), x, servos_moving=np.full(6, moving))


def ticks(r: StepRunner, n: int, t0: float, o: Observation | None = None):
    cmds = [r.tick(t0 + k * TICK_S, o or obs()) for k in range(n)]
    return t0 + n * TICK_S, cmds


def armed() -> StepRunner:
    r = runner()
    r.arm(0.0)
    r.tick(0.0, obs())
    assert r.phase is Phase.PROCEDURE
    return r


def test_a_move_ramps_at_its_speed_and_ends_exactly_on_its_goal():
    r = armed()
    ticket = r.submit(Move((0.01, 0, 0, 0, 0, 0), speed_m_per_s=0.02))
    t, cmds = ticks(r, 60, TICK_S)
    steps = np.diff([c.excursion_m[0] for c in cmds if c.action is Action.MOVE])
    assert steps.max() <= 0.02 * TICK_S + 1e-12                      # never faster than asked
    assert ticket.done and ticket.error is None and cmds[-1].excursion_m[0] == 0.01


def test_hold_lasts_its_protocol_seconds_and_wait_until_still_needs_the_servos_there():
    r = armed()
    hold = r.submit(Hold(0.1))
    t, _ = ticks(r, 5, TICK_S)
    assert not hold.done
    t, _ = ticks(r, 10, t)
    assert hold.done
    still = r.submit(WaitUntilStill(within_m=1e-3, timeout_s=0.2))
    t, _ = ticks(r, 5, t, obs(moving=True))
    assert not still.done
    t, _ = ticks(r, 5, t, obs(moving=False))
    assert still.done and still.error is None
    late = r.submit(WaitUntilStill(timeout_s=0.05))
    t, _ = ticks(r, 10, t, obs(excursion_m=[0.01, 0, 0, 0, 0, 0]))   # stuck 10 mm off
    assert late.done and "did not reach their goals" in late.error


def test_a_trip_fails_the_step_and_every_later_one_at_once_and_holds():
    r = armed()
    ticket = r.submit(Move((0.02, 0, 0, 0, 0, 0)))
    t, _ = ticks(r, 5, TICK_S)
    t, cmds = ticks(r, 1, t, obs(force_N=50.0))
    assert r.phase is Phase.FAULT and ticket.done and "over the limit 40 N" in ticket.error
    assert cmds[0].action is Action.HOLD
    after = r.submit(Hold(1.0))
    assert after.done and after.error.startswith("stopped: ")        # refused at once, nothing to wait for


def test_release_pays_out_only_and_is_not_stopped_by_a_tension_over_the_limit():
    limits = InterlockLimits(math.inf, np.full(6, 0.06), {}, 15.0, forces_required=False)
    r = StepRunner("release tendons", Interlocks(limits), pay_out_only=True)
    r.arm(0.0)
    r.tick(0.0, obs(force_N=55.0))
    refused = r.submit(Move((0.001, 0, 0, 0, 0, 0)))
    assert refused.done and "only pays tendons out" in refused.error
    ok = r.submit(Move((-0.005, 0, 0, 0, 0, 0)))
    ticks(r, 40, TICK_S, obs(force_N=55.0))
    assert ok.done and ok.error is None and r.phase is Phase.PROCEDURE


@pytest.mark.parametrize("goal", [(0.0,) * 5, (0, 0, 0, 0, 0, math.nan)])
def test_a_move_must_name_six_finite_goals(goal):
    with pytest.raises(ValueError, match="six finite excursions"):
        Move(goal)


def test_the_estop_turns_torque_off_whatever_the_safe_action():
    r = armed()
    ticket = r.submit(Move((0.01, 0, 0, 0, 0, 0)))
    r.estop(0.05, "operator E-stop")
    _, cmds = ticks(r, 3, 0.05)
    assert ticket.done and all(c.action is Action.TORQUE_OFF for c in cmds)
