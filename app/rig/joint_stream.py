"""The `joints` stream: the finger's joint angles from the mocap markers, live, on their own thread.

The runner's settle rule, the live model's initial state and the GUI's pose view all need joint angles,
and Motive sends markers. The IK (drivers/joint_angles.py) costs ~3 ms a frame, a third of a core at
100 Hz — too slow for the mocap thread (which must never fall behind the network) and for the control
loop. So it runs here, a hub consumer like the recorder, on the NEWEST frame: when frames come faster
than ``max_rate_hz`` (a twin at N x speed) the older ones are skipped and counted, never queued up, so
the angles are never stale by more than one solve (20 ms at the default 50 Hz). Every frame's markers
are in the session file anyway; offline analysis re-solves all of them.

The published speed is the slope of a least-squares line through the last ``speed_window_s`` of angles
(``WindowSlope``): a derivative that averages the IK noise down instead of amplifying it.
"""

from __future__ import annotations

import logging
import threading
from collections import deque

import numpy as np
from uartlab.drivers.joint_angles import JointAngleEstimator
from uartlab.hub import Hub
from uartlab.pacing import FixedRate
from uartlab.schema import JOINT_SPEED_WINDOW_S, JOINTS_IK, MOCAP
from uartlab.sim.names import JOINTS
from uartlab.streams import EventKind, Record

log = logging.getLogger(__name__)
# est.: 50 solves/s is 50 points in the settle rule's 1 s window and smooth for a person's eye, at half
# the CPU of solving every 100 Hz frame (~3 ms each) - CPU the device threads in this process need.
DEFAULT_MAX_RATE_HZ = 50.0
DEFAULT_SPEED_WINDOW_S = JOINT_SPEED_WINDOW_S  # declared with the `joints` stream (its speed_rad_s field)


class WindowSlope:
    """Slope (per second) of a least-squares line through the samples of the last ``window_s``."""

    def __init__(self, window_s: float, width: int = len(JOINTS)):
        self.window_s = window_s
        self._t: deque[float] = deque()
        self._y: deque[np.ndarray] = deque()
        self.width = width

    def clear(self) -> None:
        self._t.clear()
        self._y.clear()

    def add(self, t_s: float, y: np.ndarray) -> None:
        self._t.append(t_s)
        self._y.append(np.asarray(y, dtype=float))
        while self._t and self._t[0] < t_s - self.window_s:
            self._t.popleft()
            self._y.popleft()

    @property
    def span_s(self) -> float:
        return self._t[-1] - self._t[0] if len(self._t) > 1 else 0.0

    def slope(self) -> np.ndarray:
        """(width,) per second; NaN until there are two samples (unknown is not "still")."""
        if len(self._t) < 2:
            return np.full(self.width, np.nan)
        t = np.fromiter(self._t, float)
        t -= t.mean()
        y = np.array(self._y)
        denom = float(t @ t)
        if denom == 0.0:
            return np.full(self.width, np.nan)
        return (t @ (y - y.mean(axis=0))) / denom


class JointStream:
    """Solve the newest mocap frame, publish it as `joints`; ``skipped`` counts frames not solved."""

    def __init__(self, hub: Hub, estimator: JointAngleEstimator, max_rate_hz: float = DEFAULT_MAX_RATE_HZ):
        self.hub, self.estimator, self.max_rate_hz = hub, estimator, max_rate_hz
        self.solved = self.skipped = self.failed = 0
        self.last_error = ""
        self._slope = WindowSlope(DEFAULT_SPEED_WINDOW_S)
        self._stop = threading.Event()
        self._sub = hub.subscribe("joints-ik", {MOCAP.stream}, maxsize=1024)
        self._thread = threading.Thread(target=self._run, name="joints-ik", daemon=True)

    def start(self) -> JointStream:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._sub.close()
        if self._thread.is_alive():
            self._thread.join(timeout=3)

    def _run(self) -> None:
        pace = FixedRate(1.0 / self.max_rate_hz, sleep=self._stop.wait)
        while not self._stop.is_set():
            first = self._sub.get(timeout_s=0.2)
            if first is None:
                continue
            # A mocap-only subscription: Records, never Events.
            records = [item for item in (first, *self._sub.drain()) if isinstance(item, Record)]
            if not records:
                continue
            self.skipped += sum(len(r) for r in records) - 1
            newest = records[-1]
            self._solve(newest, len(newest) - 1)
            # Pace the solves so a fast stream (a twin at N x) cannot take a whole core from the rig.
            pace.wait()

    def _solve(self, record: Record, i: int) -> None:
        markers = record.data[MOCAP.markers_m][i]
        try:
            frame = self.estimator.estimate(markers)
        except ValueError as exc:  # too few markers for any fit: say so once per kind, keep going
            self.failed += 1
            if str(exc) != self.last_error:
                self.last_error = str(exc)
                self.hub.event(EventKind.DEVICE, JOINTS_IK.stream,
                                       f"IK failed on frame {record.data[MOCAP.frame_number][i]}: {exc}")
            return
        t = float(record.host_time_s[i])
        self._slope.add(t, frame.angles_rad)
        speed = self._slope.slope()
        self.solved += 1
        self.hub.publish(Record.single(JOINTS_IK.stream, t, frame_number=int(record.data[MOCAP.frame_number][i]),
                                       angles_rad=frame.angles_rad, speed_rad_s=np.nan_to_num(speed),
                                       rms_residual_m=frame.rms_m, well_posed=frame.well_posed))
