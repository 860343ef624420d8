"""The colours of every plot uartlab draws: the window's live plots and pose view (pyqtgraph), the compare
report's figures and `uartlab sim --plot` (matplotlib). Hex strings only, so both toolkits take them as they
are and nothing here loads Qt or matplotlib.

Series colours are Paul Tol's "bright" qualitative scheme (P. Tol, "Colour Schemes", SRON technical note
SRON/EPS/TN/09-002, https://personal.sron.nl/~pault/#sec:qualitative), made to stay apart for colour-blind
readers and readable on the window's dark background and the report's white one alike. Its six hues are the
six tendons; joints and force axes take them in the same order (each plot has its own legend).
tests/app/test_palette.py holds the six apart under simulated protanopia, deuteranopia and tritanopia.
"""

from __future__ import annotations

from uartlab.names import JOINTS, TENDONS

# Tol "bright": blue, red, green, yellow, cyan, purple (its grey is the neutral below).
SERIES = ("#4477AA", "#EE6677", "#228833", "#CCBB44", "#66CCEE", "#AA3377")
NEUTRAL = "#BBBBBB"         # Tol bright's grey: a start pose, a trial start, what is neither measured nor model

TENDON_COLOURS: dict[str, str] = dict(zip(TENDONS, SERIES, strict=True))
JOINT_COLOURS: dict[str, str] = dict(zip(JOINTS, SERIES, strict=False))
AXIS_COLOURS: dict[str, str] = dict(zip("XYZ", SERIES, strict=False))    # the force on the fingertip, world X Y Z

# The pose view's one finger, measured against the model (the compare figures colour by trial instead).
MEASURED_COLOUR = SERIES[4]
MODEL_COLOUR = SERIES[3]

# The window's plots: light on dark.
PLOT_BACKGROUND = "#101418"
PLOT_FOREGROUND = "#D0D4D8"


def mix(top: str, under: str, alpha: float) -> str:
    """``top`` at opacity ``alpha`` over ``under``, as one opaque colour."""
    a, b = (tuple(int(c[i:i + 2], 16) for i in (1, 3, 5)) for c in (top, under))
    return "#" + "".join(f"{round(alpha * x + (1 - alpha) * y):02X}" for x, y in zip(a, b, strict=True))


# The live plots' faint grid of seconds: white at 16 % over the background, mixed here so that the line is
# opaque. Qt's raster engine blends a translucent line pixel by pixel: during `bench gui --live` a plot's
# translucent grid took 0.36 ms to draw, the opaque one 0.06 ms.
GRID_COLOUR = mix("#FFFFFF", PLOT_BACKGROUND, 0.16)

# Markers on the time axis (app/gui/event_markers.py): the tare, a trial's start, a trip, E-stop or fault.
TARE_COLOUR = "#DDDDDD"
TRIAL_COLOUR = NEUTRAL
TRIP_COLOUR = "#FF4040"     # the alarm: brighter than any series colour, and labelled


def colour(name: str) -> str:
    """The colour of a tendon, a joint or a force axis, by its name ("FDP", "PIP", "X")."""
    for table in (TENDON_COLOURS, JOINT_COLOURS, AXIS_COLOURS):
        if name in table:
            return table[name]
    raise KeyError(f"no colour declared for {name!r}")
