"""The lateral bands' PIP wrap model: its closed form against the geometry it describes, its sampling onto the
kernels' patches, the parameter file that gives it, and a simulation that uses it."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq
from uartlab.app.cli.main import main
from uartlab.sim import Finger, FingerParams
from uartlab.sim import scenarios as sc
from uartlab.sim.errors import ParameterError
from uartlab.sim.lateral_band_wrap import ArmWrap
from uartlab.sim.names import PIP, RADIAL_BAND, SEGMENTS, ULNAR_BAND

D4, P4 = SEGMENTS.index("d4"), SEGMENTS.index("p4")   # the radial and ulnar lateral bands
ROM = (0.0, np.radians(100.0))
# An illustrative band (mm; not a measured UART value): the head's top 4.5 mm dorsal of the axis, its centre
# 5 mm proximal, the band held mid-shaft on the middle phalanx level with the head's top.
WRAP_MM = {"head_radius_mm": 3.5, "head_centre_mm": [-5.0, 1.0], "band_hold_mm": [15.0, 4.5]}
WRAP_TOML = "PIP_wrap = { head_radius_mm = 3.5, head_centre_mm = [-5.0, 1.0], band_hold_mm = [15.0, 4.5] }"


def wrap(radius_mm=3.5, centre_mm=(-5.0, 1.0), hold_mm=(15.0, 4.5), rom=ROM) -> ArmWrap:
    return ArmWrap(radius_mm * 1e-3, tuple(np.multiply(centre_mm, 1e-3)), tuple(np.multiply(hold_mm, 1e-3)), rom)


@pytest.fixture(scope="module")
def params():
    return FingerParams.uart()


@pytest.fixture(scope="module")
def wrapped(params):
    """The defaults with both lateral bands' PIP arms from the wrap (the ulnar band a smaller head)."""
    forms = {(RADIAL_BAND, "PIP"): wrap(rom=tuple(params.rom_rad[PIP])),
             (ULNAR_BAND, "PIP"): wrap(3.0, (-4.5, 1.5), rom=tuple(params.rom_rad[PIP]))}
    return params.replace(moment_arm_forms=forms)


def band_by_bisection_m(w: ArmWrap, theta: float) -> float:
    """The band's length found without the tangent formula: it leaves the head where its straight part to the
    hold point stops cutting into the head ((P - T) . (T - c) = 0, found by root finding), after the arc."""
    R, c, (hx, hy) = w.head_radius_m, np.array(w.head_centre_m), w.band_hold_m
    P = np.array([hx * np.cos(theta) + hy * np.sin(theta), -hx * np.sin(theta) + hy * np.cos(theta)])

    def T(beta):
        return c + R * np.array([np.sin(beta), np.cos(beta)])

    def outward(beta):
        return float((P - T(beta)) @ (T(beta) - c))

    grid = np.linspace(-0.5, np.pi, 400)
    k = next(i for i in range(len(grid) - 1) if outward(grid[i]) < 0 <= outward(grid[i + 1]))
    beta = brentq(outward, grid[k], grid[k + 1], xtol=1e-15)
    return R * beta + float(np.linalg.norm(P - T(beta)))


@pytest.mark.parametrize("w", [wrap(), wrap(3.0, (-4.5, 1.5)), wrap(2.0, (0.5, -0.5), (12.0, 1.0)),
                               wrap(6.0, (-3.0, -2.0), (20.0, 3.5))])
def test_the_closed_form_is_the_taut_band_over_its_head(w):
    """The length is the taut band's over its head, and the arm is minus its derivative (virtual work): the
    excursion the kernels integrate (r dtheta) is the band's own length change."""
    thetas = np.radians(np.linspace(0.0, 100.0, 21))
    st = w.state(thetas)
    for theta, length in zip(thetas, st.length_m, strict=True):
        assert length == pytest.approx(band_by_bisection_m(w, theta), abs=1e-12)
    h = 1e-6
    dL = (w.state(thetas + h).length_m - w.state(thetas - h).length_m) / (2 * h)
    np.testing.assert_allclose(st.arm_m, -dL, rtol=0, atol=1e-11)
    dr = (w.state(thetas + h).arm_m - w.state(thetas - h).arm_m) / (2 * h)
    np.testing.assert_allclose(st.slope_m, dr, rtol=0, atol=1e-9)


def test_a_head_centred_on_the_axis_is_a_constant_arm_and_an_offset_one_shrinks_and_turns_flexor():
    thetas = np.radians(np.linspace(0.0, 100.0, 51))
    centred = wrap(4.0, (0.0, 0.0), (15.0, 4.0)).state(thetas)
    np.testing.assert_allclose(centred.arm_m, -4e-3, rtol=0, atol=1e-15)
    st = wrap().state(thetas)
    assert st.arm_m[0] == pytest.approx(-4.5e-3, abs=1e-15)   # straight: the head's top, 1.0 + 3.5 mm dorsal
    assert np.all(np.diff(st.arm_m) > 0) and st.arm_m[-1] > 0   # shrinks, then flexes


def test_a_similar_finger_has_the_arm_times_its_scale():
    thetas = np.radians(np.linspace(0.0, 100.0, 11))
    np.testing.assert_allclose(wrap().scaled(1.5).state(thetas).arm_m, 1.5 * wrap().state(thetas).arm_m,
                               rtol=1e-12, atol=0)


def test_the_kernels_evaluate_the_closed_form_within_a_hundredth_of_a_nanometre(wrapped):
    """Both bands, the compiled right-hand side's arms against the closed form at 2000 angles across the range
    (between the 1-deg nodes and on them), and held at the edge value outside it."""
    finger = Finger(wrapped)
    forms = wrapped.moment_arm_forms
    lo, hi = wrapped.rom_rad[PIP]
    worst = 0.0
    for theta in np.linspace(lo, hi, 2000):
        q = np.array([0.1, 0.3, theta, 0.2])
        arms = finger.moment_arms(q)
        for seg, group in ((D4, RADIAL_BAND), (P4, ULNAR_BAND)):
            exact = float(forms[group, "PIP"].state(theta).arm_m)
            worst = max(worst, abs(arms[seg, PIP] - exact))
            assert wrapped.moment_arm(group, "PIP", q) == pytest.approx(arms[seg, PIP], abs=1e-15)
    assert worst < 1e-11
    past = finger.moment_arms(np.array([0.0, 0.0, hi + 0.2, 0.0]))[D4, PIP]
    assert past == pytest.approx(float(forms[RADIAL_BAND, "PIP"].state(hi).arm_m), abs=1e-15)


def test_the_excursion_the_kernels_integrate_is_the_bands_length_change(wrapped):
    """sum r dtheta over the kernels' arm, from straight to full flexion: the closed form's L(0) - L(theta)."""
    finger = Finger(wrapped)
    lo, hi = wrapped.rom_rad[PIP]
    thetas = np.linspace(lo, hi, 4001)
    arms = np.array([finger.moment_arms(np.array([0.0, 0.0, t, 0.0]))[D4, PIP] for t in thetas])
    integral = float(np.sum(0.5 * (arms[1:] + arms[:-1]) * np.diff(thetas)))
    L = wrapped.moment_arm_forms[RADIAL_BAND, "PIP"].state(np.array([lo, hi])).length_m
    assert integral == pytest.approx(L[0] - L[1], abs=1e-9)


def test_a_free_motion_pull_with_wrapped_bands_runs_and_the_bands_matter(params, wrapped):
    for tendon in ("ED", "FDP"):
        plain, banded = (sc.run_trial(Finger(p), sc.free_motion_trial(tendon)) for p in (params, wrapped))
        final = banded.final.theta_deg
        assert np.all(np.isfinite(banded.x)) and banded.t[-1] > 4.0
        lo, hi = np.degrees(params.rom_rad).T
        assert np.all(final >= lo - 1e-9) and np.all(final <= hi + 1e-9)
        if tendon == "FDP":   # the PIP flexes, where the bands' arm is no longer the default's -4.5 mm
            assert np.max(np.abs(final - plain.final.theta_deg)) > 0.05


def lab_file(params, entry: str = WRAP_TOML, group: str = RADIAL_BAND) -> str:
    """The defaults as a lab's file, the band's PIP polynomial replaced by ``entry`` with a comment."""
    text = params.to_toml()
    head = f"[moment_arms.{group}]"
    start = text.index(head)
    line = next(ln for ln in text[start:].splitlines() if ln.startswith("PIP_mm ="))
    return text.replace(line, f"{entry}  # our UART's head, calipers 2026-12", 1)


def test_a_file_with_a_wrap_is_read_and_written_back_exactly_with_its_comments(params, tmp_path):
    text = lab_file(params)
    path, out = tmp_path / "lab.toml", tmp_path / "again.toml"
    path.write_text(text)
    read = FingerParams.from_toml(path)
    w = read.moment_arm_forms[RADIAL_BAND, "PIP"]
    assert isinstance(w, ArmWrap) and w.head_radius_m == pytest.approx(3.5e-3) and w.range_rad == ROM
    assert main(["sim", "params", "--params", str(path), "-o", str(out)]) == 0
    assert out.read_text() == text
    # a changed wrap is written in place, inline, its old value in the comment
    bigger = read.replace(moment_arm_forms={**read.moment_arm_forms, (RADIAL_BAND, "PIP"): w.scaled(2.0)})
    line = next(ln for ln in bigger.to_toml().splitlines() if ln.startswith("PIP_wrap"))
    assert line.startswith("PIP_wrap = {head_radius_mm = 7.0, head_centre_mm = [-10.0, 2.0], band_hold_mm = "
                           "[30.0, 9.0]}") and line.endswith("# was " + WRAP_TOML.removeprefix("PIP_wrap = ")
                                                             + ": our UART's head, calipers 2026-12")
    assert FingerParams.from_toml_text(bigger.to_toml()).moment_arm_forms[RADIAL_BAND, "PIP"].head_radius_m == \
        pytest.approx(7e-3)


def test_a_wrap_added_to_the_defaults_is_written_inline_and_read_back(params):
    text = params.replace(moment_arm_forms={(ULNAR_BAND, "PIP"): wrap()}).to_toml()
    assert "PIP_wrap = {head_radius_mm = 3.5, head_centre_mm = [-5.0, 1.0], band_hold_mm = [15.0, 4.5]}" in text
    back = FingerParams.from_toml_text(text)
    assert back.to_toml() == text and set(back.moment_arm_forms) == {(ULNAR_BAND, "PIP")}


def test_perturbing_a_wrapped_set_scales_the_wrap(wrapped):
    p = wrapped.perturbed(0.1, seed=3)
    w, w0 = p.moment_arm_forms[RADIAL_BAND, "PIP"], wrapped.moment_arm_forms[RADIAL_BAND, "PIP"]
    factor = w.head_radius_m / w0.head_radius_m
    assert factor != 1.0 and 0.9 <= factor <= 1.1
    np.testing.assert_allclose(w.band_hold_m, np.multiply(w0.band_hold_m, factor), rtol=1e-12)


@pytest.mark.parametrize("entry, key, reason", [
    (WRAP_TOML.replace("head_radius_mm = 3.5", "head_radius_mm = -3.5"), "PIP_wrap.head_radius_mm",
     "must be > 0, got -3.5"),
    (WRAP_TOML.replace("[-5.0, 1.0]", "[-5.0]"), "PIP_wrap.head_centre_mm", "must have 2 values, got 1"),
    (WRAP_TOML.replace("band_hold_mm", "hold_mm"), "PIP_wrap.hold_mm",
     "unknown key; expected one of band_hold_mm, head_centre_mm, head_radius_mm"),
    (WRAP_TOML.replace(", band_hold_mm = [15.0, 4.5]", ""), "PIP_wrap.band_hold_mm", "missing"),
    ("PIP_wrap = 3.5", "PIP_wrap",
     "must be a table: { head_radius_mm = R, head_centre_mm = [x, y], band_hold_mm = [x, y] }"),
    (WRAP_TOML.replace("[15.0, 4.5]", "[15.0, 6.0]"), "PIP_wrap",
     "the band leaves the head at PIP 0 deg (its hold point lies dorsal of the head's tangent, 4.26 deg short of "
     "the top): a band that wraps the head needs band_hold_mm no higher than the head's top at PIP 0 deg"),
    (WRAP_TOML.replace("[15.0, 4.5]", "[-2.0, 2.0]"), "PIP_wrap",
     "the band's hold point comes inside the head at PIP 0 deg (3.162 mm from its centre, radius 3.5 mm): move "
     "band_hold_mm out or shrink the head"),
])
def test_a_bad_wrap_is_one_line_naming_file_line_and_key(params, entry, key, reason):
    text = lab_file(params, entry)
    with pytest.raises(ParameterError) as err:
        FingerParams.from_toml_text(text, source="lab.toml")
    line = text.splitlines().index(next(ln for ln in text.splitlines() if ln.startswith("PIP_wrap"))) + 1
    assert str(err.value) == f"lab.toml:{line}: moment_arms.{RADIAL_BAND}.{key}: {reason}"


def test_only_the_lateral_bands_pip_arm_takes_a_wrap(params):
    text = params.to_toml()
    start = text.index("[moment_arms.central_slip]")
    line = next(ln for ln in text[start:].splitlines() if ln.startswith("PIP_mm ="))
    with pytest.raises(ParameterError, match=r"moment_arms\.central_slip\.PIP_wrap: unknown key; expected one of "
                                             r"PIP_mm, PIP_table, PIP_times_cos_MCP_FE$"):
        FingerParams.from_toml_text(text.replace(line, WRAP_TOML, 1))
    both = lab_file(params, WRAP_TOML + "\nPIP_mm = [-4.5]")
    with pytest.raises(ParameterError, match=r"give one of PIP_mm, PIP_table, PIP_wrap, only one$"):
        FingerParams.from_toml_text(both)
