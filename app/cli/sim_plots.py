"""PNG figures of a simulated trial: joint angles, tendon tensions, fingertip force, and the pose."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from uartlab.app.palette import AXIS_COLOURS, JOINT_COLOURS, MODEL_COLOUR, NEUTRAL, TENDON_COLOURS
from uartlab.app.paper_frame import PLANES
from uartlab.sim import SimResult
from uartlab.sim.names import JOINTS, TENDONS


def plot_result(result: SimResult, path: str | Path, title: str = "") -> Path:
    import matplotlib

    matplotlib.use("Agg")  # files only: never needs a display
    import matplotlib.pyplot as plt

    path = Path(path)
    fig, axes = plt.subplots(2, 2, figsize=(12.5, 7.5), constrained_layout=True)
    t = result.t
    ax = axes[0, 0]
    for j, name in enumerate(JOINTS):
        ax.plot(t, result.theta_deg[:, j], color=JOINT_COLOURS[name], label=name)
    ax.set(xlabel="time [s]", ylabel="joint angle [deg]", title="joint angles (+ flexion / abduction)")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)  # off the curves

    ax = axes[0, 1]
    for i, name in enumerate(TENDONS):
        ax.plot(t, result.tensions_N[:, i], color=TENDON_COLOURS[name], label=name)
    ax.set(xlabel="time [s]", ylabel="tension [N]", title="input tendon tensions")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)  # off the curves

    ax = axes[1, 0]
    force = result.fingertip_force_N()
    for k, axis in enumerate("XYZ"):
        ax.plot(t, force[:, k], color=AXIS_COLOURS[axis], label=axis)
    ax.plot(t, np.linalg.norm(force, axis=1), "k--", label="|F|")
    ax.set(xlabel="time [s]", ylabel="force [N]", title="fingertip contact force (world frame)")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)  # off the curves

    ax = axes[1, 1]
    finger = result.finger
    side = PLANES[0]   # the paper's X-Y plane, where flexion shows (app/paper_frame.py)
    i, j = side.horizontal.index, side.vertical.index
    for k, colour, style, label in ((0, NEUTRAL, "-o", "start"), (-1, MODEL_COLOUR, "--o", "steady state")):
        pts = 1e3 * finger.joint_positions(result.x[k, 8:12])
        ax.plot(pts[:, i], pts[:, j], style, color=colour, label=label)
    if result.surface is not None:
        n = result.surface.normal
        along = np.array([n[2], 0.0, -n[0]])
        p = 1e3 * np.asarray(result.surface.point_m)
        seg = np.array([p - 40 * along, p + 40 * along])
        ax.plot(seg[:, i], seg[:, j], color="0.4", lw=3, label="surface")
    ax.set(xlabel=side.horizontal.label, ylabel=side.vertical.label, title=f"pose: {side.title}, MCP at origin")
    ax.set_aspect("equal", adjustable="datalim")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)  # off the curves
    fig.suptitle(title)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
