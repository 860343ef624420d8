"""OptiTrackMocap against the Motive twin on loopback with the real plant, the IK on what it streams, and
the zero-lag filtering before differentiation (drivers/mocap.py, drivers/joint_angles.py)."""

from __future__ import annotations

import socket
import time

import numpy as np
import pytest
from scipy import signal
from uartlab.drivers.interfaces import ConfigError, DeviceError, MocapSample
from uartlab.drivers.joint_angles import (
    JointAngleEstimator,
    as_transform,
    joint_velocities,
    lowpass_zero_lag,
    mounting_inverse,
)
from uartlab.drivers.mocap import OptiTrackMocap, marker_id_map
from uartlab.drivers.twins.motive import BONES, MotiveTwin
from uartlab.drivers.twins.plant import Plant, PlantConfig

RATE_HZ = 100.0  # PlantConfig.mocap_rate_hz default (Flex V100:R2)


def _rig(config: PlantConfig, **mocap_kwargs):
    """A still plant (no clock: every frame shows the same pose), its twin, a connected mocap, an estimator."""
    plant = Plant(config)
    twin = MotiveTwin(plant).start()
    mocap = OptiTrackMocap(command_port=twin.command_port, **mocap_kwargs)
    mocap.connect()
    estimator = JointAngleEstimator.from_mounting(plant.finger, plant.markers, plant.config.motive_from_world,
                                                  plant.config.motive_origin_m)
    return plant, twin, mocap, estimator


@pytest.fixture
def clean():
    plant, twin, mocap, estimator = _rig(PlantConfig(marker_noise_m=0.0))
    yield plant, twin, mocap, estimator
    mocap.close()
    twin.stop()


def _wait_sample(mocap: OptiTrackMocap, timeout_s: float = 2.0) -> MocapSample:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            sample = mocap.latest()
        except DeviceError:  # a loaded CI host may starve the twin for > stale_after_s: keep waiting
            sample = None
        if sample is not None:
            return sample
        time.sleep(0.005)
    raise AssertionError(f"no sample within {timeout_s} s; stats {mocap.stats}")


def _samples(mocap: OptiTrackMocap, n: int) -> list[MocapSample]:
    mocap.client.drain()
    out = []
    for sample in mocap.samples(timeout_s=1.0):
        out.append(sample)
        if len(out) == n:
            return out
    raise AssertionError(f"got {len(out)} of {n} samples; stats {mocap.stats}")


# ------------------------------------------------------------------ the stream
def test_connect_maps_markers_in_our_order(clean):
    plant, twin, mocap, _ = clean
    assert mocap.marker_names == [m.name for m in plant.markers]
    assert mocap.marker_ids == twin.marker_ids  # body id << 16 | k, k counted per body from 1
    assert mocap.rate_hz == pytest.approx(RATE_HZ)
    assert sorted(mocap.body_names.values()) == sorted(BONES)


def test_latest_markers_and_rigid_bodies_match_the_plant(clean):
    plant, _, mocap, _ = clean
    sample = _wait_sample(mocap)
    assert sample.markers_m.shape == (len(plant.markers), 3)
    np.testing.assert_allclose(sample.markers_m, plant.mocap_markers(), atol=1e-6)  # f32 on the wire
    assert sample.device_time_s == pytest.approx(plant.time_s) and sample.frame_number >= 0
    assert 0 <= time.monotonic() - sample.host_time_s < 1.0
    assert list(sample.rigid_bodies) == list(BONES)
    for (name, position, _rotation), (pos, quat) in zip(plant.bone_poses(), sample.rigid_bodies.values(),
                                                        strict=True):
        np.testing.assert_allclose(pos, position, atol=1e-6, err_msg=name)
        assert np.linalg.norm(quat) == pytest.approx(1.0, abs=1e-6)
    first, second = mocap.latest(), mocap.latest()
    if first.frame_number == second.frame_number:  # polled within one frame: converted once
        assert first is second
    assert mocap.frame_gaps == 0 and mocap.malformed == 0 and not mocap.is_stale


def test_ik_on_streamed_markers_gives_the_plant_angles(clean):
    plant, _, mocap, estimator = clean
    frame = estimator.estimate(_wait_sample(mocap).markers_m)
    np.testing.assert_allclose(frame.angles_rad, plant.state()[8:12], atol=1e-4)
    assert frame.well_posed and np.nanmax(frame.residuals_m) < 1e-5 and frame.rms_m < 1e-5


def test_noisy_markers_give_angles_within_a_degree_after_the_6hz_filter():
    plant, twin, mocap, estimator = _rig(PlantConfig(marker_noise_m=0.2e-3, seed=3))
    try:
        samples = _samples(mocap, 100)
    finally:
        mocap.close()
        twin.stop()
    Q, E = estimator.estimate_trajectory(np.stack([s.markers_m for s in samples]))
    q_true_deg = np.degrees(plant.state()[8:12])
    raw_rms_deg = np.sqrt(np.mean((np.degrees(Q) - q_true_deg) ** 2, axis=0))
    # Per frame the short distal bone's angle scatters ~0.75 deg (1 sigma) at 0.2 mm noise, so single
    # frames pass 1 deg now and then; the seed's 6 Hz low-pass is what brings every frame within a degree.
    assert raw_rms_deg.max() < 1.2 and raw_rms_deg[:2].max() < 0.3
    filtered_deg = np.degrees(lowpass_zero_lag(Q, RATE_HZ)) - q_true_deg
    assert np.abs(filtered_deg[10:-10]).max() < 1.0  # the ends see reflected noise only: left out
    assert np.sqrt(np.mean(filtered_deg ** 2)) < 0.5
    assert np.nanmedian(E) == pytest.approx(0.2e-3, rel=0.6)  # residuals at the noise level, not 0


def test_dropouts_are_nan_and_still_solved():
    plant, twin, mocap, estimator = _rig(PlantConfig(marker_noise_m=0.0, marker_dropout=0.2, seed=5))
    try:
        samples = _samples(mocap, 40)
    finally:
        mocap.close()
        twin.stop()
    q_true = plant.state()[8:12]
    solved = 0
    for sample in samples:
        missing = np.isnan(sample.markers_m).any(axis=1)
        assert np.isnan(sample.markers_m[missing]).all()  # occluded: NaN, never the filled-in last position
        for b, (name, (position, quat)) in enumerate(sample.rigid_bodies.items()):
            # the twin tracks a bone only with all 3 of its markers seen (min_markers=3); untracked is NaN
            tracked = not missing[np.array(twin.marker_bone) == b].any()
            assert np.isfinite(position).all() == tracked and np.isfinite(quat).all() == tracked, name
        if not estimator.well_posed(estimator.to_world(sample.markers_m)):
            continue
        frame = estimator.estimate(sample.markers_m)
        np.testing.assert_allclose(frame.angles_rad, q_true, atol=1e-4)
        assert np.isnan(frame.residuals_m[missing]).all() and np.nanmax(frame.residuals_m) < 1e-5
        solved += missing.any()
    assert solved >= 5, "too few frames with a dropout were solved to mean anything"


def test_stream_stops_then_stale_and_gaps_after_resume(clean):
    _, twin, mocap, _ = clean
    _wait_sample(mocap)
    twin.pause()
    time.sleep(0.25)  # > stale_after_s = 0.1
    assert mocap.is_stale
    with pytest.raises(DeviceError, match=r"OptiTrack: no frame for \d+ ms"):
        mocap.latest()
    twin.resume()
    deadline = time.monotonic() + 2.0
    while mocap.is_stale and time.monotonic() < deadline:
        time.sleep(0.01)
    assert isinstance(mocap.latest(), MocapSample)
    # the twin's cameras kept counting while paused: the jump in frame numbers is counted, not hidden
    assert mocap.frame_gaps >= 10 and mocap.stats.gap_events >= 1 and mocap.stats.stale_events >= 1


def test_malformed_datagrams_are_counted_and_the_stream_goes_on(clean):
    _, _, mocap, _ = clean
    _wait_sample(mocap)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.sendto(b"\x07\x00\xff\x00garbage", mocap.client.data_address)  # a FRAMEOFDATA header, bad body
    deadline = time.monotonic() + 1.0
    while mocap.malformed == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert mocap.malformed == 1 and mocap.stats.last_error
    before = mocap.stats.frames
    time.sleep(0.05)
    assert mocap.stats.frames > before and isinstance(mocap.latest(), MocapSample)


def test_latest_is_none_before_the_first_frame_and_connect_errors_are_typed(clean):
    plant, twin, _, _ = clean
    twin.pause()
    time.sleep(0.05)
    with OptiTrackMocap(command_port=twin.command_port, stale_after_s=0.5) as late:
        assert late.latest() is None  # connected, nothing yet, not stale yet
    with pytest.raises(ConfigError, match="nowhere"):
        OptiTrackMocap(command_port=twin.command_port, marker_names=["nowhere"]).connect()
    with pytest.raises(ConfigError, match="marker set 'hand'"):
        OptiTrackMocap(command_port=twin.command_port, marker_set="hand").connect()
    unused = MotiveTwin(plant).start()
    port = unused.command_port
    unused.stop()  # a port nobody answers on
    with pytest.raises(DeviceError, match="OptiTrack: .*did not answer"):
        OptiTrackMocap(command_port=port, connect_timeout_s=0.3).connect()


def test_explicit_marker_ids_override_the_rule(clean):
    _, twin, _, _ = clean
    model = twin.model_definitions()
    names = twin.marker_names[:2]
    ids = marker_id_map(model, names, {names[0]: twin.marker_ids[1], names[1]: twin.marker_ids[0]})
    assert ids == {names[0]: twin.marker_ids[1], names[1]: twin.marker_ids[0]}
    with pytest.raises(ConfigError, match="same NatNet id"):
        marker_id_map(model, names, {names[0]: twin.marker_ids[1]})


# ------------------------------------------------------------------ transforms
def test_mounting_inverse_and_transform_forms(clean):
    plant, _, _, estimator = clean
    world = np.random.default_rng(0).normal(size=(5, 3))
    np.testing.assert_allclose(estimator.to_world(plant.to_motive(world)), world, atol=1e-12)
    T = mounting_inverse(plant.config.motive_from_world, plant.config.motive_origin_m)
    np.testing.assert_allclose(as_transform((T[:3, :3], T[:3, 3])), T)
    np.testing.assert_allclose(as_transform(None), np.eye(4))
    with pytest.raises(ValueError, match="4x4"):
        as_transform(np.eye(3))


# ------------------------------------------------------------------ filtering
FS_HZ = 100.0


def _peak_offsets_s(x: np.ndarray, t: np.ndarray, f_hz: float) -> np.ndarray:
    """Time of each full cycle's maximum (parabola through the top three samples) minus the true sine's peak."""
    offsets = []
    for k in range(1, int(t[-1] * f_hz) - 1):  # whole cycles away from the ends
        true_peak_s = (k + 0.25) / f_hz
        window = np.flatnonzero(np.abs(t - true_peak_s) < 0.4 / f_hz)
        i = window[np.argmax(x[window])]
        y0, y1, y2 = x[i - 1:i + 2]
        offsets.append(t[i] + 0.5 * (y0 - y2) / (y0 - 2 * y1 + y2) * (t[1] - t[0]) - true_peak_s)
    return np.array(offsets)


def test_lowpass_has_no_phase_lag_and_removes_noise():
    t = np.arange(0, 20.0, 1 / FS_HZ)  # 18 whole cycles: each peak moves with the noise, their mean does not
    clean = np.sin(2 * np.pi * 1.0 * t)
    noisy = clean + np.random.default_rng(1).normal(0, 0.1, t.size)
    smooth = lowpass_zero_lag(noisy, FS_HZ, cutoff_hz=6.0)
    # zero lag: on average the peaks stay where the sine's are, to within a sample
    assert abs(_peak_offsets_s(smooth, t, 1.0).mean()) < 1 / FS_HZ
    # the same Butterworth run one way only lags by tens of ms: the check above can tell the difference
    causal = signal.sosfilt(signal.butter(4, 6.0, fs=FS_HZ, output="sos"), noisy)
    assert _peak_offsets_s(causal, t, 1.0).mean() > 0.03
    # white noise keeps only the share of it below the cut-off: std x sqrt(6 / 50) ~ 0.35
    inner = slice(50, -50)
    assert np.std(smooth[inner] - clean[inner]) < 0.4 * np.std(noisy[inner] - clean[inner])


def test_lowpass_refuses_bad_input():
    with pytest.raises(ValueError, match="more than 15 samples"):
        lowpass_zero_lag(np.zeros(10), FS_HZ)
    with pytest.raises(ValueError, match="cutoff_hz"):
        lowpass_zero_lag(np.zeros(100), FS_HZ, cutoff_hz=60.0)
    with pytest.raises(ValueError, match="non-finite"):
        lowpass_zero_lag(np.r_[np.zeros(50), np.nan, np.zeros(50)], FS_HZ)
    with pytest.raises(ValueError, match=r"shape \(T, 4\)"):
        joint_velocities(np.zeros((100, 3)), FS_HZ)


def test_velocity_of_a_filtered_ramp_is_its_slope():
    t = np.arange(0, 2.0, 1 / FS_HZ)
    slopes_rad_s = np.array([0.1, -0.5, 1.0, 2.0])
    Q = 0.2 + t[:, None] * slopes_rad_s
    noisy = Q + np.random.default_rng(2).normal(0, np.radians(0.2), Q.shape)
    np.testing.assert_allclose(joint_velocities(Q, FS_HZ), np.broadcast_to(slopes_rad_s, Q.shape), atol=1e-9)
    # with noise: the filtered derivative stays near the slope where the raw one is swamped
    filtered_error = np.abs(joint_velocities(noisy, FS_HZ)[20:-20] - slopes_rad_s).max()
    raw_error = np.abs(np.gradient(noisy, 1 / FS_HZ, axis=0)[20:-20] - slopes_rad_s).max()
    assert filtered_error < 0.1 < raw_error
