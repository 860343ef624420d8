"""The six tendon colours stay apart for colour-blind operators, and every plot draws a tendon, a joint or a
force axis in its one colour (app/palette.py). The window's live plots are held to it in
tests/app/gui/test_gui_plots.py, the compare report's figures in tests/app/compare/test_figures.py.

The check: each colour through a dichromat simulation matrix (Machado, Oliveira & Fernandes 2009, "A
physiologically-based model for simulation of color vision deficiency", IEEE TVCG 15(6):1291-1298, severity
1.0: protanopia, deuteranopia, tritanopia; applied to linear sRGB), then to CIELAB; every pair must differ by
more than MIN_DELTA_E (CIE76). A delta E of about 2.3 is just noticeable; 12 is two lines told apart at a
glance. The palette it replaced (Okabe-Ito's first six) passed this too but put orange beside vermillion and
sky blue beside blue, which operators mixed up on thin lines: normal vision must see them further apart.
"""

from __future__ import annotations

import itertools

import matplotlib
import numpy as np
import pytest
from uartlab.app import palette
from uartlab.app.cli.main import main
from uartlab.names import JOINTS, TENDONS

matplotlib.use("Agg")

MACHADO_2009 = {
    "protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
    "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]],
    "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]],
}
MIN_DELTA_E = 12.0
MIN_DELTA_E_NORMAL = 30.0


def linear_rgb(hex_colour: str) -> np.ndarray:
    c = np.array([int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)]) / 255.0
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def lab(rgb_linear: np.ndarray) -> np.ndarray:
    """CIELAB (D65) of a linear sRGB colour."""
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ np.clip(
        rgb_linear, 0.0, 1.0)
    xyz = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def closest_pair(colours: dict[str, str], matrix=None) -> tuple[float, str, str]:
    m = np.eye(3) if matrix is None else np.asarray(matrix)
    labs = {name: lab(m @ linear_rgb(c)) for name, c in colours.items()}
    return min((float(np.linalg.norm(labs[a] - labs[b])), a, b) for a, b in itertools.combinations(labs, 2))


def test_six_distinct_tendon_colours_for_normal_and_colour_blind_vision():
    assert list(palette.TENDON_COLOURS) == list(TENDONS)
    assert len(set(palette.TENDON_COLOURS.values())) == 6
    d, a, b = closest_pair(palette.TENDON_COLOURS)
    assert d > MIN_DELTA_E_NORMAL, f"{a} and {b} differ by only {d:.1f}"
    for deficiency, matrix in MACHADO_2009.items():
        d, a, b = closest_pair(palette.TENDON_COLOURS, matrix)
        assert d > MIN_DELTA_E, f"{deficiency}: {a} and {b} differ by only {d:.1f}"


def test_the_check_catches_colours_a_colour_blind_operator_would_confuse():
    """Red and green of equal lightness: apart in normal vision, one colour under deuteranopia."""
    red_green = {"red": "#D55E00", "green": "#5E8F00"}
    assert closest_pair(red_green)[0] > MIN_DELTA_E
    assert closest_pair(red_green, MACHADO_2009["deuteranopia"])[0] < MIN_DELTA_E


def test_the_old_okabe_ito_six_fail_in_normal_vision():
    old = dict(zip(TENDONS, ("#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00"), strict=True))
    assert closest_pair(old)[0] < MIN_DELTA_E_NORMAL


def test_colour_by_name_covers_tendons_joints_and_axes():
    assert [palette.colour(t) for t in TENDONS] == list(palette.SERIES)
    assert [palette.colour(j) for j in JOINTS] == list(palette.SERIES[:4])
    assert [palette.colour(a) for a in "XYZ"] == list(palette.SERIES[:3])
    with pytest.raises(KeyError):
        palette.colour("thumb")


@pytest.fixture
def saved_figures(monkeypatch):
    """Every matplotlib figure as it is saved: (path, figure), read before the command closes it."""
    from matplotlib.figure import Figure

    saved = []
    real = Figure.savefig

    def spy(self, fname, *args, **kwargs):
        saved.append((str(fname), {ax.get_title(): {line.get_label(): matplotlib.colors.to_hex(line.get_color())
                                                     for line in ax.get_lines()} for ax in self.axes}))
        return real(self, fname, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", spy)
    return saved


def test_sim_plot_draws_tendons_joints_and_axes_in_their_colours(tmp_path, saved_figures):
    out = tmp_path / "fdp.png"
    assert main(["sim", "free-motion", "--tendon", "FDP", "--plot", str(out), "-q"]) == 0
    assert out.stat().st_size > 0
    ((path, axes),) = saved_figures
    assert path == str(out)
    lines = {label: c for ax in axes.values() for label, c in ax.items()}
    for name in (*TENDONS, *JOINTS):
        assert lines[name] == palette.colour(name).lower(), name
    for a in "XYZ":
        assert lines[a] == palette.AXIS_COLOURS[a].lower()
    pose = next(title for title in axes if title.startswith("pose"))
    assert "X-Y plane" in pose
