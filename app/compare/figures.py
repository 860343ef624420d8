"""The paper's result figures as PNGs (matplotlib, Agg).

Fig. 13  steady-state poses, measured (mean over repeats) solid, simulated dashed (a second parameter set
         dotted); one figure per start pose (Flex: the free-motion trials; Hook, Curl: the contact trials),
         the start pose in grey, the trials named in the legend below. The paper's two panels, named as
         the paper names them (app/paper_frame.py; the window's pose view draws the same): X-Y (side view,
         flexion) and Z-Y (front view, abduction); paper X, Y, Z are world X, Z, Y. A trial is drawn in the
         colour of its last pulled tendon (the extensor-mechanism one in a contact trial), its flexor told
         by the marker. Every legend sits outside the axes.
Fig. 14  input tendon tensions over time: the actively pulled tendons on the top axis, the passive ones below.
Fig. 15  joint angles over time.
Fig. 16  fingertip contact force (world frame) over time, the repeats' SD as a band.
Figs. 14-16 are drawn for every trial (the paper shows one); time 0 is the actuation start.
Colours: app/palette.py, the same tendon, joint and axis colours as the window's live plots.
"""

from __future__ import annotations

import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from uartlab.app.compare.analysis import Comparison, TrialGroup  # noqa: E402
from uartlab.app.compare.tables import slug  # noqa: E402
from uartlab.app.palette import AXIS_COLOURS, JOINT_COLOURS, NEUTRAL, TENDON_COLOURS  # noqa: E402
from uartlab.app.paper_frame import PLANES  # noqa: E402
from uartlab.sim.names import JOINTS, TENDONS  # noqa: E402

SET_STYLES = ("--", ":")
DPI = 110
FLEXOR_MARKERS = ("o", "s", "^", "D")   # groups that share a colour, told apart by their first pulled tendon


def short_label(group: TrialGroup) -> str:
    return "+".join(group.pulled)


def outside_legend(ax) -> None:
    """The legend right of the axes, never on the curves (tight_layout makes room for it)."""
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)


def _polyline_mm(finger, theta_rad) -> np.ndarray:
    """Base, MCP, PIP, DIP, fingertip (5, 3) in mm."""
    return 1e3 * np.vstack([finger.frames(theta_rad)[1][0], finger.joint_positions(theta_rad)])


def _group_styles(groups: list[TrialGroup]) -> list[tuple[str, str]]:
    """(colour, marker) per group: the colour of its last pulled tendon, the marker of its first."""
    firsts = list(dict.fromkeys(g.pulled[0] for g in groups))
    return [(TENDON_COLOURS[g.pulled[-1]], FLEXOR_MARKERS[firsts.index(g.pulled[0]) % len(FLEXOR_MARKERS)])
            for g in groups]


def pose_figure(comparison: Comparison, pose: str, path: str) -> None:
    groups = [g for g in comparison.groups if g.pose == pose]
    finger = comparison.sets[0].finger
    fig, axes = plt.subplots(1, len(PLANES), figsize=(13, 6.2))
    styles = _group_styles(groups)
    start = np.mean([g.start.theta_rad for g in groups], axis=0)
    for ax, plane in zip(axes, PLANES, strict=True):
        i, j = plane.horizontal.index, plane.vertical.index
        p = _polyline_mm(finger, start)
        ax.plot(p[:, i], p[:, j], color=NEUTRAL, lw=2.5, marker="o", ms=3, label=f"{pose} (start)")
        for g, (color, marker) in zip(groups, styles, strict=True):
            p = _polyline_mm(finger, np.radians(g.steady_theta_deg.mean(axis=0)))
            # Named in the legend, not at the fingertip: the tips lie close together (in the front view
            # nearly on one line) and their labels would sit on each other.
            ax.plot(p[:, i], p[:, j], color=color, lw=1.8, marker=marker, ms=4, label=short_label(g))
            for pset, style in zip(comparison.sets, SET_STYLES, strict=False):
                ps = _polyline_mm(pset.finger, g.results[pset.label].sim.steady_theta_rad)
                ax.plot(ps[:, i], ps[:, j], color=color, lw=1.4, ls=style)
        ax.set_xlabel(plane.horizontal.label)
        ax.set_ylabel(plane.vertical.label)
        ax.set_title(plane.title, fontsize=11)
        ax.set_aspect("equal", adjustable="datalim")
        ax.grid(alpha=0.3)
    fig.suptitle(f"Steady-state poses from {pose}: {_legend_note(comparison)}", fontsize=11)
    # The legend below the panels: never on a bone, however many trials.
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 6), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.04 + 0.035 * ((len(labels) - 1) // 6), 1, 1))
    fig.savefig(path, dpi=DPI)
    plt.close(fig)


def _sim_lines(ax, comparison, group, attr, columns, colors, scale=None):
    for pset, style in zip(comparison.sets, SET_STYLES, strict=False):
        sim = group.results[pset.label].sim
        values = getattr(sim, attr)
        if values is None:
            continue
        values = scale(values) if scale else values
        for c, color in zip(columns, colors, strict=True):
            ax.plot(sim.t_s, values[:, c], color=color, ls=style, lw=1.3)


def _legend_note(comparison) -> str:
    return "measured mean (solid), " + ", ".join(
        f"simulated {p.label} ({'dashed' if s == '--' else 'dotted'})"
        for p, s in zip(comparison.sets, SET_STYLES, strict=False))


def tension_figure(comparison: Comparison, group: TrialGroup, path: str) -> None:
    fig, axes = plt.subplots(2, 1, figsize=(9, 6.5), sharex=True)
    active = [TENDONS.index(t) for t in group.pulled]
    passive = [i for i in range(6) if i not in active]
    measured = group.measured_mean["tendon_force_N"]
    for ax, cols, what in ((axes[0], active, "active"), (axes[1], passive, "passive")):
        colors = [TENDON_COLOURS[TENDONS[c]] for c in cols]
        for c, color in zip(cols, colors, strict=True):
            ax.plot(group.grid_s, measured[:, c], color=color, lw=1.8, label=TENDONS[c])
        _sim_lines(ax, comparison, group, "tensions_N", cols, colors)
        ax.set_ylabel(f"{what} tension [N]")
        outside_legend(ax)
        ax.grid(alpha=0.3)
    axes[1].set_xlabel("time from actuation start [s]")
    axes[0].set_title(f"{group.name}: input tendon tensions\n{_legend_note(comparison)}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)


def angle_figure(comparison: Comparison, group: TrialGroup, path: str) -> None:
    fig, ax = plt.subplots(figsize=(9, 4.8))
    colors = [JOINT_COLOURS[j] for j in JOINTS]
    measured = group.measured_mean["joint_angles_rad"]
    for j, color in enumerate(colors):
        ax.plot(group.grid_s, measured[:, j], color=color, lw=1.8, label=JOINTS[j])
    _sim_lines(ax, comparison, group, "theta_rad", range(4), colors, np.degrees)
    ax.set_xlabel("time from actuation start [s]")
    ax.set_ylabel("joint angle [deg] (+ flexion, + abduction)")
    ax.set_title(f"{group.name}: joint angles\n{_legend_note(comparison)}", fontsize=10)
    outside_legend(ax)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)


def force_figure(comparison: Comparison, group: TrialGroup, path: str) -> None:
    fig, ax = plt.subplots(figsize=(9, 4.8))
    colors = [AXIS_COLOURS[a] for a in "XYZ"]
    mean, sd = group.measured_mean["fingertip_force_N"], group.measured_sd["fingertip_force_N"]
    for a, color in enumerate(colors):
        ax.plot(group.grid_s, mean[:, a], color=color, lw=1.8, label="XYZ"[a])
        if np.isfinite(sd[:, a]).any():
            ax.fill_between(group.grid_s, mean[:, a] - sd[:, a], mean[:, a] + sd[:, a], color=color, alpha=0.2,
                            lw=0)
    _sim_lines(ax, comparison, group, "tip_force_N", range(3), colors)
    ax.set_xlabel("time from actuation start [s]")
    ax.set_ylabel("force on the fingertip [N]")
    ax.set_title(f"{group.name}: contact force, world frame (X distal, Y radial, Z dorsal)\n"
                 f"{_legend_note(comparison)}, SD band over {group.n} repeats", fontsize=10)
    outside_legend(ax)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)


def figure_count(comparison: Comparison) -> int:
    """How many PNGs write_figures draws: one per pose, two or three per trial group."""
    poses = len(dict.fromkeys(g.pose for g in comparison.groups))
    return poses + sum(3 if g.has_force else 2 for g in comparison.groups)


def write_figures(comparison: Comparison, out_dir: str, on_progress=None,
                  workers: int | None = None) -> dict[str, list[str]]:
    """Every figure into out_dir/figures; returns {"poses": [...], <group name>: [...]} relative paths.
    ``on_progress(done, total)``: called after each figure is drawn. Drawn on ``workers`` processes (default:
    one per core): matplotlib holds the GIL, and drawing is three quarters of a comparison's time on one core."""
    os.makedirs(os.path.join(out_dir, "figures"), exist_ok=True)
    jobs: list[tuple[str, str | int, str]] = []   # (what, pose name or group index, path relative to out_dir)
    for pose in dict.fromkeys(g.pose for g in comparison.groups):
        jobs.append(("poses", pose, f"figures/fig13_poses_{slug(pose)}.png"))
    made = {"poses": [rel for *_, rel in jobs]}
    for i, g in enumerate(comparison.groups):
        s = slug(g.name)
        mine = [("tensions", i, f"figures/fig14_tensions_{s}.png"), ("angles", i, f"figures/fig15_angles_{s}.png")]
        if g.has_force:
            mine.append(("forces", i, f"figures/fig16_forces_{s}.png"))
        jobs += mine
        made[g.name] = [rel for *_, rel in mine]
    for done, _ in enumerate(_drawn(comparison, out_dir, jobs, workers), 1):
        if on_progress is not None:
            on_progress(done, len(jobs))
    return made


_DRAW = {"tensions": lambda c, i, path: tension_figure(c, c.groups[i], path),
         "angles": lambda c, i, path: angle_figure(c, c.groups[i], path),
         "forces": lambda c, i, path: force_figure(c, c.groups[i], path),
         "poses": pose_figure}
_shared: Comparison | None = None   # a drawing process's comparison, inherited when it was forked


def _share(comparison: Comparison) -> None:
    global _shared
    _shared = comparison


def _draw(out_dir: str, job: tuple[str, str | int, str]) -> str:
    assert _shared is not None, "a figure process without its comparison"
    what, key, rel = job
    _DRAW[what](_shared, key, os.path.join(out_dir, rel))
    return rel


def _drawn(comparison: Comparison, out_dir: str, jobs: list, workers: int | None):
    """Draw every job, yielding as each is done: in forked processes that inherit the comparison (nothing to
    pickle: it holds compiled models), or here where the OS cannot fork or one worker is asked for."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    workers = min(workers or os.cpu_count() or 1, len(jobs))
    if workers <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        _share(comparison)
        for job in jobs:
            yield _draw(out_dir, job)
        return
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"), initializer=_share,
                             initargs=(comparison,)) as pool:
        for future in as_completed([pool.submit(_draw, out_dir, job) for job in jobs]):
            yield future.result()
