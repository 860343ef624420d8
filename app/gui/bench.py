"""`uartlab bench gui`: the operator window's frame rate with every live plot fed at full rate, and its
memory after an hour of streaming against after a minute. (`--live`: the real window on a rig core during
a real trial, app/gui/bench_live.py.)

Frame rate: a feeder thread publishes synthetic records into a Hub in real time at the rig's rates
(USB-6210: 13 channels at ``--daq-rate`` per channel in 5 ms blocks, as the DAQ thread hands them over;
six MX-64s at 200 Hz; mocap and the joint angles at ``--mocap-rate``; the model and the runner at
100 Hz) and a tare, trial start or trip event every 1.5 s (the plots' markers), the window is attached
to that Hub like to a rig, and each frame does what the frame timer does (drain, ring buffers, setData)
and then paints the live view synchronously (``repaint``: offscreen, the raster engine really draws every
pixel). fps = frames / wall time.

Memory: the same window, fed synthetic records as fast as possible with advancing host times (the sample
values are reused: only the amount of data matters), drained and redrawn every simulated 100 ms; RSS is
read after one simulated minute and after ``--hours``. The buffers are allocated when a stream is first
seen, so the two should be equal.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import threading
import time

import numpy as np
from uartlab.processes import rss_mb

GOAL_FPS = 60.0
BLOCK_S = 0.005          # the DAQ thread's block length on the twin and the real driver
MEM_TOLERANCE_MB = 2.0   # allocator noise; growth beyond this is a leak
EVENT_PERIOD_S = 1.5     # a marked event (tare, trial start, trip) this often: about seven markers in view


def specs(daq_rate_hz: float, mocap_rate_hz: float):
    """The producers' own declarations, at the bench's rates: what the window really receives."""
    from uartlab.schema import actuators_spec, daq_spec, joints_spec, mocap_spec, model_spec, runner_spec

    markers = [f"m{i}" for i in range(12)]
    return [daq_spec(daq_rate_hz), actuators_spec(200.0), mocap_spec(markers, mocap_rate_hz),
            joints_spec(mocap_rate_hz), model_spec(100.0), runner_spec(100.0)]


class Synth:
    """Synthetic records: per channel a slow sine (its own offset, amplitude and phase) plus a little noise,
    computed from the absolute time so the curves are continuous. ``reuse=True`` computes one block per
    block size and reuses it (for the memory run: an hour of values would only cost time, not memory)."""

    def __init__(self, stream_specs, seed: int = 0, reuse: bool = False):
        self.specs = {s.name: s for s in stream_specs}
        self.rng = np.random.default_rng(seed)
        self.reuse = reuse
        self.cache: dict[tuple[str, int], dict[str, np.ndarray]] = {}

    def _values(self, name: str, t: np.ndarray) -> dict[str, np.ndarray]:
        spec = self.specs[name]
        data = {}
        for f in spec.fields:
            width = int(np.prod(f.shape)) if f.shape else 1
            k = np.arange(width)
            wave = (0.2 + 0.1 * k) * np.sin(2 * np.pi * 0.3 * t[:, None] + 0.9 * k) + 0.25 * k
            noise = 0.01 * self.rng.standard_normal(wave.shape)
            data[f.name] = (wave + noise).reshape((len(t), *f.shape)).astype(f.dtype)
        return data

    def record(self, name: str, t0: float, n: int):
        from uartlab.streams import Record

        t = t0 + np.arange(n) / (self.specs[name].nominal_rate_hz or 100.0)
        if not self.reuse:
            return Record(name, t, self._values(name, t))
        key = (name, n)
        if key not in self.cache:
            self.cache[key] = self._values(name, t - t0)
        return Record(name, t, self.cache[key])


def _marked_event(hub, k: int) -> None:
    """Every EVENT_PERIOD_S one of the events the plots mark (a tare, a trial start, a trip), so the frames
    measured draw a few markers as during a run."""
    from uartlab.schema import NANO17_TARED, EventKind

    kind, message = ((EventKind.OPERATOR, f"{NANO17_TARED}: bias [0 0 0 0 0 0] V"),
                     (EventKind.TRIAL, f"start 'bench/{k}' repeat 1/1"),
                     (EventKind.TRIP, "bench: a trip"))[k % 3]
    hub.event(kind, "bench", message)


def _feeder(hub, synth: Synth, rates: dict[str, float], stop: threading.Event) -> None:
    """Publish every stream in real time: each stream's due samples every BLOCK_S."""
    t_start = time.monotonic()
    sent = dict.fromkeys(rates, 0)
    events = 0
    while not stop.is_set():
        now = time.monotonic()
        for name, rate in rates.items():
            due = int((now - t_start) * rate) - sent[name]
            if due > 0:
                hub.publish(synth.record(name, t_start + sent[name] / rate, due))
                sent[name] += due
        if now - t_start >= events * EVENT_PERIOD_S:
            _marked_event(hub, events)
            events += 1
        stop.wait(BLOCK_S)


class PaintCounter:
    """Counts the paint events a widget really gets (what the operator would see as frames)."""

    def __init__(self, widget):
        from PySide6.QtCore import QEvent, QObject

        class Filter(QObject):
            def eventFilter(inner, obj, event):  # noqa: N802, N805 - Qt's name; inner is the filter
                if event.type() == QEvent.Type.Paint:
                    self.count += 1
                return False

        self.count = 0
        self.filter = Filter()
        widget.installEventFilter(self.filter)


def measure_fps(window, app, hub, synth, rates, seconds: float) -> dict:
    """Frames as the window's frame timer makes them (drain, setData), painted the way Qt paints: only
    what changed, when the event loop runs. Counted by the paint events of the plots' viewport."""
    stop = threading.Event()
    feeder = threading.Thread(target=_feeder, args=(hub, synth, rates, stop), daemon=True)
    feeder.start()
    counter = PaintCounter(window.plots.layout_widget.viewport())
    try:
        t_end = time.monotonic() + 1.0  # warm up: the first second fills the buffers
        while time.monotonic() < t_end:
            window.on_frame()
            app.processEvents()
        frames, points, t0, paints0 = 0, 0, time.monotonic(), counter.count
        while time.monotonic() - t0 < seconds:
            window.drain()
            points = window.plots.refresh(window.data)
            if frames % 3 == 0:
                window.pose.refresh(window.data)
            app.processEvents()  # Qt paints the changed regions here
            frames += 1
        wall = time.monotonic() - t0
        frames = counter.count - paints0
    finally:
        stop.set()
        feeder.join()
    return {"fps": frames / wall, "frames": frames, "seconds": wall, "points_per_frame": points,
            "gui_queue_drops": sum(window.sub.dropped.values()) if window.sub else 0}


def measure_memory(window, hub, synth, rates, hours: float) -> dict:
    """Simulated streaming as fast as possible; RSS after one simulated minute and after ``hours``."""
    chunk_s = 0.1
    t = 1000.0
    out = {}
    total = hours * 3600.0
    wall0 = time.monotonic()
    sim_s, k = 0.0, 0
    while sim_s < total - 1e-9:
        for name, rate in rates.items():
            n = int(round(rate * (k + 1) * chunk_s)) - int(round(rate * k * chunk_s))
            if n:
                hub.publish(synth.record(name, t + sim_s, n))
        window.drain()
        if k % 10 == 0:  # one redraw per simulated second: setData allocations are part of the cycle
            window.plots.refresh(window.data)
        k += 1
        sim_s = k * chunk_s
        for key, mark in (("after_1_min_mb", min(60.0, total)), ("after_end_mb", total)):
            if key not in out and sim_s >= mark - 1e-9:
                gc.collect()
                out[key] = rss_mb()
    out["simulated_hours"] = hours
    out["wall_s"] = time.monotonic() - wall0
    out["growth_mb"] = out["after_end_mb"] - out["after_1_min_mb"]
    out["ring_buffers_mb"] = window.data.nbytes / 1e6
    return out


def _measure(window, stream_specs, fn) -> dict:
    """One measurement on a fresh window attached to a hub of the rig's streams; the window closed after."""
    from uartlab.app.gui.app import close_for_good
    from uartlab.hub import Hub

    window.frame_timer.stop()  # the benchmark drives the frames itself
    window.status_timer.stop()
    window.resize(1600, 1000)
    window.show()
    hub = Hub()
    for spec in stream_specs:
        hub.register(spec)
    window.attach(hub, "benchmark")
    try:
        return fn(window, hub)
    finally:
        close_for_good(window)  # saves its settings (into the scratch folder) while that is there


def main(args: argparse.Namespace) -> int:
    if getattr(args, "live", False):
        from uartlab.app.gui import bench_live

        return bench_live.main(args)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from uartlab.app.gui.app import qt_app
    from uartlab.app.gui.qt_platform import check

    check()  # QT_QPA_PLATFORM=xcb to watch it: Qt would abort without its system libraries
    app = qt_app()
    from uartlab.app.gui.main_window import MainWindow
    from uartlab.app.gui.settings import scratch_settings

    stream_specs = specs(args.daq_rate, args.mocap_rate)
    rates = {s.name: s.nominal_rate_hz for s in stream_specs}
    synth = Synth(stream_specs)
    reused = Synth(stream_specs, reuse=True)
    results: dict = {"daq_rate_hz": args.daq_rate, "daq_channels": 13, "servo_rate_hz": 200.0,
                     "mocap_rate_hz": args.mocap_rate, "window_s": 10.0}
    for label, fn in (("frame_rate", lambda w, h: measure_fps(w, app, h, synth, rates, args.seconds)),
                      ("memory", lambda w, h: measure_memory(w, h, reused, rates, args.hours))):
        with scratch_settings() as settings:  # the operator's settings stay untouched
            results[label] = _measure(MainWindow(settings), stream_specs, fn)
    fr, mem = results["frame_rate"], results["memory"]
    results["fps_ok"] = fr["fps"] >= GOAL_FPS
    results["memory_ok"] = abs(mem["growth_mb"]) <= MEM_TOLERANCE_MB
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print(f"live view, 1600x1000 window, every plot fed at full rate (DAQ 13 ch x {args.daq_rate:g} Hz, "
              f"servos 200 Hz, mocap/joints {args.mocap_rate:g} Hz, model and runner 100 Hz), 10 s window:")
        print(f"  {fr['fps']:.1f} fps over {fr['seconds']:.1f} s ({fr['points_per_frame']} points per frame, "
              f"GUI queue drops {fr['gui_queue_drops']})  goal >= {GOAL_FPS:g}: "
              f"{'ok' if results['fps_ok'] else 'MISSED'}")
        print(f"memory: RSS {mem['after_1_min_mb']:.1f} MB after 1 simulated minute, {mem['after_end_mb']:.1f} MB "
              f"after {mem['simulated_hours']:g} h (growth {mem['growth_mb']:+.2f} MB; ring buffers "
              f"{mem['ring_buffers_mb']:.1f} MB; {mem['wall_s']:.0f} s wall)  goal: no growth: "
              f"{'ok' if results['memory_ok'] else 'GREW'}")
    return 0 if results["fps_ok"] and results["memory_ok"] and math.isfinite(fr["fps"]) else 1
