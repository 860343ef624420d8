"""The calibration store: versioned files, the current set, staleness, session texts."""

import datetime as dt

import numpy as np
import pytest
from uartlab.app.cli.main import main
from uartlab.calibration.store import CalibrationRecord, CalibrationStore, Provenance, current_calibration_texts
from uartlab.errors import CalibrationError
from uartlab.sim import FingerParams


def _record(kind="sea", when=None, gain=6.5):
    prov = Provenance(operator="ana", rig="twin", method="hanging weights",
                      created_utc=when or dt.datetime(2026, 12, 2, 10, 0, tzinfo=dt.UTC))
    return CalibrationRecord(kind, {"FDP": {"v0_V": 1.0, "gain_N_per_V": gain}}, {"FDP": {"rms_N": 0.01}}, prov)


def test_round_trip_versions_and_current(tmp_path):
    store = CalibrationStore(tmp_path)
    first = store.save(_record(gain=6.5))
    second = store.save(_record(gain=6.6))
    assert first.name == "2026-12-02_1.toml" and second.name == "2026-12-02_2.toml"
    assert first.read_text() != second.read_text()  # never overwritten
    current = store.current("sea")
    assert current.values["FDP"]["gain_N_per_V"] == 6.6
    assert current.provenance.operator == "ana" and current.provenance.method == "hanging weights"
    assert current.residuals["FDP"]["rms_N"] == 0.01
    assert [p.name for p in store.history("sea")] == ["2026-12-02_1.toml", "2026-12-02_2.toml"]
    store.set_current("sea", first)  # roll back to the older one
    assert store.current("sea").values["FDP"]["gain_N_per_V"] == 6.5


def test_staleness_warns_missing_and_old(tmp_path):
    store = CalibrationStore(tmp_path)
    store.save(_record("sea", dt.datetime(2026, 10, 1, tzinfo=dt.UTC)))
    store.save(_record("mocap", dt.datetime(2026, 12, 2, 9, 0, tzinfo=dt.UTC)))
    now = dt.datetime(2026, 12, 2, 12, 0, tzinfo=dt.UTC)
    warnings = store.stale_warnings(("sea", "mocap", "nano17"), now=now)
    assert any(w.startswith("sea:") and "62.5 days old" in w for w in warnings)
    assert any(w.startswith("nano17:") and "no current calibration" in w for w in warnings)
    assert not any(w.startswith("mocap:") for w in warnings)
    assert store.stale_warnings(("sea",), now=now, max_age={"sea": dt.timedelta(days=90)}) == []


def test_session_texts_embed_the_current_set(tmp_path):
    store = CalibrationStore(tmp_path)
    path = store.save(_record())
    texts = current_calibration_texts(tmp_path)
    assert texts == {"calibrations/sea/2026-12-02_1.toml": path.read_text()}
    assert current_calibration_texts(tmp_path / "absent") == {}


def test_bad_file_is_one_clear_error(tmp_path):
    bad = tmp_path / "sea" / "2026-12-02_1.toml"
    bad.parent.mkdir()
    bad.write_text('schema = "uartlab.calibration/1"\nkind = "sea"\n')
    with pytest.raises(CalibrationError, match=r"2026-12-02_1.toml: provenance.created_utc"):
        CalibrationStore(tmp_path).set_current("sea", bad)


@pytest.mark.parametrize("pointer", ["../outside.toml", "/etc/passwd", "sea/../../outside.toml"])
def test_current_entries_resolve_inside_the_store(tmp_path, pointer):
    store_root = tmp_path / "store"
    store = CalibrationStore(store_root)
    store.save(_record())
    (tmp_path / "outside.toml").write_text(_record(gain=99.0).to_toml())
    (store_root / "current.toml").write_text(f'schema = "uartlab.calibration/1"\n[current]\nsea = "{pointer}"\n')
    with pytest.raises(CalibrationError, match=r"current.toml:3: current.sea: .* is outside the store"):
        store.current("sea")
    with pytest.raises(CalibrationError, match="outside the store"):
        current_calibration_texts(store_root)


def test_cli_writes_on_success_and_nothing_on_failure(tmp_path, capsys):
    assert main(["calibrate", "nano17", "--store", str(tmp_path), "--operator", "ana"]) == 0
    assert "written" in capsys.readouterr().out
    assert CalibrationStore(tmp_path).current("nano17").provenance.operator == "ana"
    assert main(["calibrate", "mocap", "--store", str(tmp_path), "--dry-run"]) == 0
    assert not (tmp_path / "mocap").exists()
    assert main(["calibrate", "nano17", "--store", str(tmp_path), "--cal", str(tmp_path / "missing.cal")]) == 2
    assert "nano17 calibration" in capsys.readouterr().err
    assert len(CalibrationStore(tmp_path).history("nano17")) == 1


def test_tabulated_moment_arms_from_the_cli_reach_a_parameter_file_and_the_model(tmp_path, capsys):
    """`calibrate moment-arms --form table` on the twin stores its tables; `sim params --store -o` writes the
    calibrated set with each table as CSV beside it; the model read from that file has the stored curves."""
    store, out = tmp_path / "store", tmp_path / "lab" / "finger.toml"
    assert main(["calibrate", "moment-arms", "--form", "table", "--store", str(store), "--operator", "ana"]) == 0
    record = CalibrationStore(store).current("moment_arms")
    stored = record.values["moment_arms"]["FDS"]["PIP_table"]
    assert set(stored) == {"PIP_deg", "r_mm"} and len(stored["PIP_deg"]) >= 4
    capsys.readouterr()
    assert main(["sim", "params", "--store", str(store), "-o", str(out)]) == 0
    assert "moment_arms/FDS_PIP.csv" in capsys.readouterr().out
    csv_lines = (out.parent / "moment_arms" / "FDS_PIP.csv").read_text().splitlines()
    assert csv_lines[1] == "PIP_deg,r_mm" and len(csv_lines) == 2 + len(stored["PIP_deg"])
    params = FingerParams.from_toml(out)
    for deg, r_mm in zip(stored["PIP_deg"], stored["r_mm"], strict=True):   # on its nodes the spline is the data
        assert params.moment_arm("FDS", "PIP", np.radians([0.0, 30.0, deg, 20.0])) == pytest.approx(r_mm * 1e-3,
                                                                                                  rel=1e-9)
    assert main(["sim", "free-motion", "--params", str(out), "--tendon", "FDS"]) == 0


def test_a_stored_lateral_band_wrap_replaces_the_bands_pip_polynomial(tmp_path):
    """A moment_arms record may carry a band's PIP wrap (fitted elsewhere): the store applies it through the
    model's reader, the band's polynomial gone, and a bad one is the reader's one line naming the record."""
    from uartlab.calibration.applied import calibrated_params
    from uartlab.sim.lateral_band_wrap import ArmWrap
    from uartlab.sim.params import ParameterError

    wrap = {"head_radius_mm": 3.0, "head_centre_mm": [-2.0, 1.5], "band_hold_mm": [15.0, 4.5]}
    store = CalibrationStore(tmp_path)
    store.save(CalibrationRecord("moment_arms", {"moment_arms": {"ulnar_lateral_band": {"PIP_wrap": wrap}}}, {}))
    params, sources = calibrated_params(store)
    form = params.moment_arm_forms["ulnar_lateral_band", "PIP"]
    assert isinstance(form, ArmWrap) and form.head_radius_m == pytest.approx(3e-3)
    assert params.moment_arm("ulnar_lateral_band", "PIP", np.zeros(4)) == pytest.approx(-4.5e-3, abs=1e-12)
    assert "PIP_mm" not in params.to_toml().split("[moment_arms.ulnar_lateral_band]")[1].split("[")[0]
    store.save(CalibrationRecord("moment_arms", {"moment_arms": {"ulnar_lateral_band": {
        "PIP_wrap": {**wrap, "head_radius_mm": -1.0}}}}, {}))
    with pytest.raises(ParameterError, match=r"moment_arms\.ulnar_lateral_band\.PIP_wrap\.head_radius_mm: must be "
                                             r"> 0, got -1$") as err:
        calibrated_params(store)
    assert str(err.value).startswith(str(store.current("moment_arms").path))
