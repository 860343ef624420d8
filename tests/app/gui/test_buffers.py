"""The GUI's ring buffers: fixed memory, newest data in order, peaks kept through decimation."""

from __future__ import annotations

import numpy as np
from uartlab.app.gui.buffers import Channel, LiveData, Ring
from uartlab.schema import DAQ, daq_spec
from uartlab.streams import Record


def test_undecimated_ring_keeps_the_newest_samples_in_order_across_wraps():
    ring = Ring(2, rate_hz=50.0, window_s=1.0, bins_per_s=60.0)
    assert ring.factor == 1
    t = np.arange(1000) / 50.0
    y = np.stack([t, -t], axis=1)
    for i in range(0, 1000, 7):  # odd block size: wraps land mid-block
        ring.extend(t[i:i + 7], y[i:i + 7])
    tv, yv = ring.view()
    assert tv.size == ring.capacity
    np.testing.assert_array_equal(tv, t[-ring.capacity:])
    np.testing.assert_array_equal(yv[1], -t[-ring.capacity:])


def test_decimation_keeps_a_one_sample_spike_and_the_window():
    rate = 19200.0
    ring = Ring(1, rate_hz=rate, window_s=10.0, bins_per_s=60.0)
    assert ring.factor == 320
    n = int(12 * rate)
    t = np.arange(n) / rate
    y = np.zeros(n)
    y[n - 12345] = 7.5          # one sample, well inside the last 10 s
    for i in range(0, n, 96):   # 5 ms DAQ blocks
        ring.extend(t[i:i + 96], y[i:i + 96, None])
    tv, yv = ring.view()
    assert yv.max() == 7.5
    assert tv[-1] >= t[-1] - 320 / rate and tv[0] <= t[-1] - 10.0  # the whole window is there
    assert np.all(np.diff(tv) >= 0)
    assert tv.size <= ring.capacity <= 2 * 60 * 10 * 1.25 + 16


def test_a_stream_faster_than_it_declares_keeps_the_whole_window():
    """A twin rig at 3x delivers its 1 kHz DAQ at 3 kHz of host time: the plot still holds its 10 s (it held
    the last 4.2 s, and a window attached to a 3x core drew less than the window it shows)."""
    spec = daq_spec(1000.0)
    data = LiveData([Channel(DAQ.stream, DAQ.tendon_force_N)], window_s=10.0)
    data.set_specs({spec.name: spec})
    rate_hz = 3 * 1000.0
    for k in range(12 * 200):   # 12 s of 5 ms blocks
        t = k * 0.005 + np.arange(15) / rate_hz
        data.add(Record(spec.name, t, {f.name: np.zeros((15, *f.shape), f.dtype) for f in spec.fields}))
    tv, _ = data.get(DAQ.stream, DAQ.tendon_force_N).view()
    assert tv[-1] - tv[0] >= 10.0
    ring = data.get(DAQ.stream, DAQ.tendon_force_N)
    before = ring.nbytes
    for k in range(12 * 200, 24 * 200):   # and then its memory is fixed again
        t = k * 0.005 + np.arange(15) / rate_hz
        data.add(Record(spec.name, t, {f.name: np.zeros((15, *f.shape), f.dtype) for f in spec.fields}))
    assert ring.nbytes == before
    # binned 3x coarser from then on: a window is about the points the declared rate gives, not 3x as many
    assert ring.view()[0].size <= 2 * Ring(6, rate_hz=1000.0, window_s=10.0).capacity


def test_memory_is_fixed_however_long_it_streams():
    ring = Ring(6, rate_hz=1000.0)
    before = ring.nbytes
    block = np.ones((1000, 6))
    for k in range(600):  # ten minutes
        ring.extend(k + np.arange(1000) / 1000.0, block)
    assert ring.nbytes == before


def test_live_data_takes_wanted_columns_and_clears_on_a_jump_back():
    spec = daq_spec(100.0)   # the real declaration: the window keeps wrench columns, not the pots

    def block(t0: float, w: np.ndarray) -> Record:
        data = {f.name: np.zeros((10, *f.shape), f.dtype) for f in spec.fields}
        return Record(DAQ.stream, t0 + np.arange(10) / 100.0, {**data, DAQ.wrench: w})

    data = LiveData([Channel(DAQ.stream, DAQ.wrench, (0, 1, 2))])
    data.set_specs({DAQ.stream: spec})
    w = np.arange(60.0).reshape(10, 6)
    data.add(block(100.0, w))
    ring = data.get(DAQ.stream, DAQ.wrench)
    assert ring.width == 3 and data.get(DAQ.stream, DAQ.pot_V) is None
    np.testing.assert_array_equal(data.latest(DAQ.stream, DAQ.wrench), w[-1, :3])
    data.add(block(50.0, w))  # a seek back
    t, _ = ring.view()
    assert t.min() >= 50 and t.max() < 51 and data.now_s < 51


def test_a_gap_in_a_stream_breaks_its_curve_instead_of_joining_it():
    """The live model stops between trials: the last point of one trial and the first of the next are not
    joined by a line across the plot (a NaN between them, which the curves skip)."""
    ring = Ring(1, rate_hz=100.0, window_s=10.0)
    first, second = np.arange(0, 1, 0.01), np.arange(3, 4, 0.01)     # 2 s without samples
    ring.extend(first, first[:, None])
    ring.extend(second, second[:, None])
    t, y = ring.view()
    breaks = np.flatnonzero(np.isnan(y[0]))
    assert breaks.size == 1 and t[breaks[0] - 1] < 1 < 3 <= t[breaks[0] + 1]
    steady = Ring(1, rate_hz=100.0, window_s=10.0)                    # no gap: no break
    steady.extend(first, first[:, None])
    steady.extend(first + 1, first[:, None])
    assert not np.isnan(steady.view()[1]).any()


def test_a_frames_records_taken_at_once_draw_what_they_draw_one_by_one():
    """The window takes in each frame's records as one block per stream: the rings hold exactly what
    record-by-record ingestion gives, a gap between two records of the batch still breaks the curve, and a
    seek back inside the batch still clears what came before it."""
    spec = daq_spec(1000.0)
    chans = [Channel(DAQ.stream, DAQ.tendon_force_N), Channel(DAQ.stream, DAQ.wrench, (0, 1, 2))]
    rng = np.random.default_rng(7)

    def block(t0: float) -> Record:
        data = {f.name: rng.normal(size=(10, *f.shape)).astype(f.dtype) for f in spec.fields}
        return Record(DAQ.stream, t0 + np.arange(10) / 1000.0, data)

    starts = [1.0 + 0.01 * k for k in range(300)] + [5.0 + 0.01 * k for k in range(50)]   # 1.5 s without data
    records = [block(t0) for t0 in starts]
    one_by_one, batched = LiveData(chans), LiveData(chans)
    for data in (one_by_one, batched):
        data.set_specs({DAQ.stream: spec})
    for r in records:
        one_by_one.add(r)
    for k in range(0, len(records), 37):   # frames of 37 records: the gap falls inside one
        batched.add_all(records[k:k + 37])
    for chan in chans:
        t1, y1 = one_by_one.get(chan.stream, chan.field).view()
        t2, y2 = batched.get(chan.stream, chan.field).view()
        np.testing.assert_array_equal(t1, t2)
        np.testing.assert_array_equal(y1, y2)
        assert np.isnan(y2).any()                      # the break across the gap
    assert batched.now_s == one_by_one.now_s and batched.samples == one_by_one.samples

    batched.add_all([block(9.0), block(2.0), block(2.01)])   # a seek back to 2 s within one frame
    t, _ = batched.get(DAQ.stream, DAQ.tendon_force_N).view()
    assert t.min() >= 2.0 and t.max() < 2.1
