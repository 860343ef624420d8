"""Every field the window draws is a field its producer declares: the rig's streams, the runner's and the
live model's. A GUI that names a field nobody publishes draws nothing and says nothing."""

from __future__ import annotations

import pytest

pytest.importorskip("pyqtgraph")

from uartlab.app.gui import live_plots  # noqa: E402
from uartlab.app.gui.bench import specs as bench_specs  # noqa: E402
from uartlab.schema import declared_specs  # noqa: E402

PRODUCED = declared_specs()


@pytest.mark.parametrize("channel", live_plots.channels(), ids=lambda c: f"{c.stream}.{c.field}")
def test_each_drawn_channel_is_declared_by_its_producer(channel):
    assert channel.stream in PRODUCED, f"no producer declares stream {channel.stream!r}"
    spec = PRODUCED[channel.stream].field(channel.field)  # KeyError names the missing field
    assert spec.dtype.startswith("f"), f"{channel.stream}.{channel.field} is not a measured quantity"


def test_the_model_is_drawn_beside_what_it_predicts():
    """Each model curve has the measured quantity's shape and units: the dashed line is comparable."""
    for plot in live_plots.PLOTS:
        if plot.model is None or plot.model.stream != "model":
            continue
        measured = PRODUCED[plot.measured.stream].field(plot.measured.field)
        model = PRODUCED[plot.model.stream].field(plot.model.field)
        width = len(plot.measured.columns) if plot.measured.columns else measured.shape[0]
        assert (width,) == model.shape and measured.units == model.units, plot.key


def test_the_gui_bench_publishes_the_producers_declarations():
    """The frame-rate bench feeds the window what the producers declare (mocap: its own marker names)."""
    bench = {s.name: s.fields for s in bench_specs(1000.0, 100.0) if s.name != "mocap"}
    assert bench == {name: s.fields for name, s in PRODUCED.items() if name != "mocap"}
