"""`uartlab bench live`: what running the model beside the rig costs per control tick, against the tick period.

Phase 1 (side by side): the paper's trials (free motion FDP, contact Hook FDP+ED) as runner ticks at 100 and
200 Hz (app/run/feed.py), handed tick by tick, alternately, to the live model and to an empty consumer (takes
the tick, publishes a one-sample record: the cost of being a hub consumer at all). Each call is timed with
perf_counter in the calling thread. Reported per rate: median, p99 and max per tick for both, the trial start
(measured start state + stepper) on its own, and the margin = tick period / live model time (goal: p99 >= 20x).
Phase 2 (real time): the contact trial published by a paced "control loop" thread at the rate while the live
model runs on its own thread, as on the rig: its largest lag behind the newest tick, behind episodes, dropped
ticks, and the longest publish() call of the control loop.
"""

from __future__ import annotations

import argparse
import json
import math
import threading
import time

import numpy as np
from uartlab.app.run.feed import simulated_trial
from uartlab.app.run.live_model import LiveModel
from uartlab.hub import Hub, Subscription
from uartlab.pacing import FixedRate
from uartlab.schema import MODEL, RUNNER, runner_spec
from uartlab.sim import Finger
from uartlab.sim.scenarios import contact_trial, free_motion_trial
from uartlab.streams import FieldSpec, Record, StreamSpec

GOAL_MARGIN = 20.0   # the tick period over the model's time per tick
RATES_HZ = (100.0, 200.0)
EMPTY_SPEC = StreamSpec("empty", "bench", (FieldSpec("trial_index", "i8", (), "", "echo of the tick"),))


class EmptyConsumer:
    """The baseline: a hub consumer that does nothing with a tick but answer it with a one-sample record."""

    def __init__(self, hub: Hub):
        self.hub = hub
        hub.register(EMPTY_SPEC)

    def process(self, items) -> None:
        for r in items:
            if isinstance(r, Record) and r.stream == RUNNER.stream:
                for k in range(len(r)):
                    self.hub.publish(Record.single("empty", float(r.host_time_s[k]),
                                                   trial_index=r.data[RUNNER.trial_index][k]))


def _hub() -> tuple[Hub, Subscription]:
    hub = Hub()
    hub.register(runner_spec())
    return hub, hub.subscribe("recorder", maxsize=1_000_000)  # one deep subscriber, as the recorder is


def _stats(seconds: list[float], period_s: float) -> dict:
    a = np.asarray(seconds)
    out = {"n": int(a.size), "median_us": float(np.median(a) * 1e6), "p99_us": float(np.percentile(a, 99) * 1e6),
           "max_us": float(a.max() * 1e6)}
    out |= {f"margin_{k}": period_s / (out[f"{k}_us"] * 1e-6) for k in ("median", "p99", "max")}
    return out


def side_by_side(finger: Finger, rate_hz: float, repeats: int) -> dict:
    trials = [free_motion_trial("FDP"), contact_trial("Hook", "FDP", "ED")]
    runs = [simulated_trial(finger, trial, rate_hz=rate_hz, trial_index=i, t0_s=10.0 * i)
            for i, trial in enumerate(trials)]
    hub_l, sub_l = _hub()
    hub_e, sub_e = _hub()
    live = LiveModel(hub_l, finger, trials, control_rate_hz=rate_hz, behind_s=np.inf)
    empty = EmptyConsumer(hub_e)
    # CPU time of the calling thread is the consumer's cost; wall time adds whatever else the machine ran.
    cpu: dict[str, list[float]] = {"live": [], "start": [], "empty": []}
    wall: dict[str, list[float]] = {"live": [], "start": [], "empty": []}
    for _ in range(repeats):
        for run in runs:
            for record in run.records:
                started = live.stats.trials
                w0, c0 = time.perf_counter(), time.thread_time()
                live.process([record])
                w1, c1 = time.perf_counter(), time.thread_time()
                empty.process([record])
                w2, c2 = time.perf_counter(), time.thread_time()
                kind = "start" if live.stats.trials > started else "live"
                cpu[kind].append(c1 - c0)
                wall[kind].append(w1 - w0)
                cpu["empty"].append(c2 - c1)
                wall["empty"].append(w2 - w1)
            sub_l.drain()
            sub_e.drain()
    period = 1.0 / rate_hz
    return {"rate_hz": rate_hz, "period_ms": 1e3 * period,
            "cpu": {"live": _stats(cpu["live"] + cpu["start"], period), "live_steps_only": _stats(cpu["live"], period),
                    "trial_start": _stats(cpu["start"], period), "empty": _stats(cpu["empty"], period)},
            "wall": {"live": _stats(wall["live"] + wall["start"], period), "empty": _stats(wall["empty"], period)}}


def real_time(finger: Finger, rate_hz: float) -> dict:
    trial = contact_trial("Hook", "FDP", "ED")
    run = simulated_trial(finger, trial, rate_hz=rate_hz)
    hub, sub = _hub()
    live = LiveModel(hub, finger, [trial], control_rate_hz=rate_hz).start()
    publish_s: list[float] = []

    def control_loop() -> None:
        pace = FixedRate(1.0 / rate_hz, max_late_s=math.inf)  # every record is published, late ones at once
        for k, r in enumerate(run.records):
            if k:
                pace.wait()
            record = Record(r.stream, np.array([time.monotonic()]), r.data)
            t0 = time.perf_counter()
            hub.publish(record)
            publish_s.append(time.perf_counter() - t0)

    loop = threading.Thread(target=control_loop, name="bench-control-loop")
    loop.start()
    loop.join()
    stats = live.close()
    lags = [float(v) for item in sub.drain() if isinstance(item, Record) and item.stream == MODEL.stream
            for v in item.data[MODEL.lag_s]]
    return {"rate_hz": rate_hz, "ticks": len(run.records), "model_samples": stats.steps,
            "max_lag_ms": 1e3 * max(lags, default=float("nan")), "behind_episodes": stats.behind_episodes,
            "merged": stats.merged, "dropped": stats.dropped, "publish_max_us": 1e6 * max(publish_s)}


def main(args: argparse.Namespace) -> int:
    repeats = int(getattr(args, "repeats", 3))
    finger = Finger()
    warm = simulated_trial(finger, contact_trial("Hook", "FDP", "ED"), rate_hz=100.0)  # compiled kernels loaded
    LiveModel(Hub(), finger, behind_s=np.inf).process(warm.records[:20])
    rates = [float(r) for r in getattr(args, "rates", None) or RATES_HZ]
    side = [side_by_side(finger, r, repeats) for r in rates]
    real = [] if getattr(args, "no_real_time", False) else [real_time(finger, r) for r in rates]
    ok = all(s["cpu"]["live"]["margin_p99"] >= GOAL_MARGIN for s in side) and \
        all(r["behind_episodes"] == 0 and r["dropped"] == 0 for r in real)
    if getattr(args, "json", False):
        out = {"side_by_side": side, "real_time": real, "goal": {"margin_p99_min": GOAL_MARGIN}, "ok": ok}
        print(json.dumps(out, indent=2))
        return 0 if ok else 1
    print("live model overhead per control tick, side by side with an empty hub consumer "
          f"(free FDP + contact Hook FDP+ED, x{repeats}); CPU time of the consumer's thread, wall time in brackets:")
    for s in side:
        c, w = s["cpu"], s["wall"]
        print(f"  {s['rate_hz']:.0f} Hz (tick {s['period_ms']:.1f} ms), {c['live']['n']} ticks:")
        for label, key in (("live model    ", "live"), ("empty consumer", "empty")):
            print(f"    {label} median {c[key]['median_us']:6.1f} us  p99 {c[key]['p99_us']:7.1f} us  max "
                  f"{c[key]['max_us']:7.1f} us   (wall: {w[key]['median_us']:.1f} / {w[key]['p99_us']:.1f} / "
                  f"{w[key]['max_us']:.0f} us)")
        st = c["trial_start"]
        print(f"    of which trial starts (measured start state + stepper): median {st['median_us']:.0f} us, max "
              f"{st['max_us']:.0f} us; steps alone p99 {c['live_steps_only']['p99_us']:.1f} us")
        lv = c["live"]
        print(f"    margin (tick period / live model CPU): median {lv['margin_median']:.0f}x, p99 "
              f"{lv['margin_p99']:.0f}x, max {lv['margin_max']:.0f}x  (goal p99 >= {GOAL_MARGIN:.0f}x); wall p99 "
              f"{w['live']['margin_p99']:.0f}x")
    for r in real:
        print(f"  real time at {r['rate_hz']:.0f} Hz (model on its own thread, {r['ticks']} ticks paced): max lag "
              f"{r['max_lag_ms']:.2f} ms, behind {r['behind_episodes']}x, dropped {r['dropped']}, merged "
              f"{r['merged']}; control loop publish() max {r['publish_max_us']:.0f} us")
    print("OK" if ok else "GOAL MISSED")
    return 0 if ok else 1
