"""The report's figures from a real `uartlab compare` of a session recorded on the twin rig (tests/conftest.py
`twin_session_file`): every tendon, joint and force axis in its one colour (app/palette.py, as the window's
live plots), Fig. 13 in the paper's planes with the paper's axis names (app/paper_frame.py, as the window's
pose view), and no text or legend on another text or on the curves."""

from __future__ import annotations

import itertools

import matplotlib
import pytest
from conftest import TWIN_SESSION_CONTACT, TWIN_SESSION_FREE
from uartlab.app.cli.main import main
from uartlab.app.palette import AXIS_COLOURS, JOINT_COLOURS, NEUTRAL, TENDON_COLOURS
from uartlab.app.paper_frame import PLANES

pytestmark = [pytest.mark.realtime, pytest.mark.slow]


def _figure_facts(fig) -> dict:
    """What an operator sees of a figure: each axes' title, labels, curves' colours; and every text's box."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    axes = []
    boxes = []   # (what, box in pixels)
    if fig._suptitle is not None:
        boxes.append(("suptitle", fig._suptitle.get_window_extent(renderer)))
    for k, ax in enumerate(fig.axes):
        axes.append({"title": ax.get_title(), "xlabel": ax.get_xlabel(), "ylabel": ax.get_ylabel(),
                     "lines": [(ln.get_label(), matplotlib.colors.to_hex(ln.get_color())) for ln in ax.get_lines()],
                     "data_box": ax.get_window_extent(renderer)})
        if ax.get_title():
            boxes.append((f"axes {k} title", ax.title.get_window_extent(renderer)))
        boxes.append((f"axes {k} x axis", ax.xaxis.get_tightbbox(renderer)))
        boxes.append((f"axes {k} y axis", ax.yaxis.get_tightbbox(renderer)))
        if ax.get_legend() is not None:
            boxes.append((f"axes {k} legend", ax.get_legend().get_window_extent(renderer)))
    for k, legend in enumerate(fig.legends):
        boxes.append((f"figure legend {k}", legend.get_window_extent(renderer)))
    return {"axes": axes, "boxes": [(what, box) for what, box in boxes if box is not None]}   # None: nothing drawn


@pytest.fixture(scope="module")
def report(twin_session_file, tmp_path_factory):
    """`uartlab compare` of the twin session, each figure's facts read as the command saves it."""
    from matplotlib.figure import Figure

    out = tmp_path_factory.mktemp("report")
    saved: dict[str, dict] = {}
    real = Figure.savefig

    def spy(self, fname, *args, **kwargs):
        saved[str(fname).split("/figures/")[-1]] = _figure_facts(self)
        return real(self, fname, *args, **kwargs)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Figure, "savefig", spy)
        # drawn here, in this process, where the spy sees them (by default each core's process draws some)
        assert main(["compare", str(twin_session_file), "--out", str(out), "--workers", "1", "-q"]) == 0
    return saved


def _slug(name: str) -> str:
    from uartlab.app.compare.figures import slug

    return slug(name)


def test_tendons_joints_and_axes_are_drawn_in_their_colours(report):
    contact = _slug(TWIN_SESSION_CONTACT)
    tensions = report[f"fig14_tensions_{contact}.png"]["axes"]
    drawn = {label: colour for ax in tensions for label, colour in ax["lines"] if not label.startswith("_")}
    assert set(drawn) == set(TENDON_COLOURS)   # FDP and ED pulled on top, the other four below
    for tendon, colour in TENDON_COLOURS.items():
        assert drawn[tendon] == colour.lower(), tendon
    (angles,) = report[f"fig15_angles_{contact}.png"]["axes"]
    assert {label: c for label, c in angles["lines"] if not label.startswith("_")} == {
        j: c.lower() for j, c in JOINT_COLOURS.items()}
    (forces,) = report[f"fig16_forces_{contact}.png"]["axes"]
    assert {label: c for label, c in forces["lines"] if not label.startswith("_")} == {
        a: c.lower() for a, c in AXIS_COLOURS.items()}
    # the simulated curves (dashed, unlabelled) take the measured ones' colours: one colour per tendon
    assert {c for label, c in tensions[0]["lines"]} == {TENDON_COLOURS["FDP"].lower(), TENDON_COLOURS["ED"].lower()}


@pytest.mark.parametrize("pose, trial, colour_of", [("Flex", TWIN_SESSION_FREE, "FDP"),
                                                     ("Curl", TWIN_SESSION_CONTACT, "ED")])
def test_fig13_draws_the_papers_planes_with_the_papers_names(report, pose, trial, colour_of):
    fig = report[f"fig13_poses_{pose}.png"]
    assert [ax["title"] for ax in fig["axes"]] == [p.title for p in PLANES]
    assert [(ax["xlabel"], ax["ylabel"]) for ax in fig["axes"]] == [
        ("X distal [mm]", "Y dorsal (world Z) [mm]"), ("Z radial (world Y) [mm]", "Y dorsal (world Z) [mm]")]
    label = trial.split("/")[-1].split("@")[0]   # the trial's pulled tendons, as the legend names it
    for ax in fig["axes"]:
        lines = dict(ax["lines"])
        assert lines[f"{pose} (start)"] == NEUTRAL.lower()
        assert lines[label] == TENDON_COLOURS[colour_of].lower()   # a contact trial: its EM tendon's colour


def test_no_text_or_legend_overlaps_another(report):
    """Titles, axis labels with their tick labels and legends of every figure: no two boxes overlap, and
    no legend lies on an axes' data area."""
    assert len(report) >= 6
    for name, fig in report.items():
        boxes = fig["boxes"]
        for (a, box_a), (b, box_b) in itertools.combinations(boxes, 2):
            if a.split(" ")[:2] == b.split(" ")[:2] and {a.split(" ")[-2], b.split(" ")[-2]} == {"x", "y"}:
                continue   # an axes' own x and y axes meet at its corner
            assert not box_a.overlaps(box_b), f"{name}: {a} overlaps {b}"
        for what, box in boxes:
            if "legend" in what:
                for k, ax in enumerate(fig["axes"]):
                    assert not box.overlaps(ax["data_box"]), f"{name}: {what} lies on the data of axes {k}"
