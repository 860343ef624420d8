"""Every table of the comparison as plain rows: Tables 4-6 of the paper plus per-repeat errors, transient
RMS errors and the summary across trials. Columns carry their unit; a second parameter set adds its own
columns beside the first (A vs B on the same measurements)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from uartlab.app import paper_frame
from uartlab.app.compare.analysis import Comparison, TrialGroup, simulated_force_N
from uartlab.sim.names import JOINTS, TENDONS

PAPER_JOINTS = ("DIP", "PIP", "MCP_FE", "MCP_AB")   # the column order of Tables 4 and 5
J = [JOINTS.index(j) for j in PAPER_JOINTS]
AXES = "XYZ"
# The paper's tables: CSV file stem -> what the window calls it
PAPER_TABLES = {"table4_free_motion": "Table 4. Free motion: steady-state joint angle error",
                "table5_surface_contact": "Table 5. Surface contact: steady-state joint angle error",
                "table6_contact_force": "Table 6. Surface contact: steady-state fingertip force error"}
MEASURED, SIMULATED = "measured mean", "simulated"   # the kinds of a transient curve column
_TRANSIENT = re.compile(r"^(?P<name>\S+) (?P<kind>measured mean|measured SD|simulated (?P<label>.+)) "
                        r"\[(?P<unit>[^]]*)\]$")


def slug(name: str) -> str:
    """A trial's name as a file name (its transients CSV, its figures)."""
    return re.sub(r"[^A-Za-z0-9.+-]+", "_", name).strip("_")


def digits_for(column: str) -> int:
    """Decimals a table shows for a column: forces to the mN, angles and percentages to the hundredth."""
    return 3 if "[N]" in column else 2


def transient_column(column: str) -> tuple[str, str, str, str] | None:
    """(curve name, MEASURED | "measured SD" | SIMULATED, parameter set label or "", unit) of a transients CSV
    column as ``transient_columns`` names it; None for the time column."""
    m = _TRANSIENT.match(column)
    if m is None:
        return None
    kind = SIMULATED if m["label"] else m["kind"]
    return m["name"], kind, m["label"] or "", m["unit"]


@dataclass
class Table:
    key: str          # file stem of its CSV
    title: str
    header: list[str]
    rows: list[list]  # str, int, float (NaN = not available)
    note: str = ""


def _trial_columns(g: TrialGroup) -> list[object]:
    if g.kind == "free":
        return [g.name, "+".join(g.pulled), g.n]
    return [g.name, g.pose, g.flexor or "", g.surface_angle_deg, g.em or "", g.n]


def _trial_header(kind: str) -> list[str]:
    if kind == "free":
        return ["trial", "tendon", "repeats"]
    return ["trial", "pose", "flexor", "surface_angle_deg", "EM", "repeats"]


def joint_table(c: Comparison, kind: str) -> Table | None:
    groups = [g for g in c.groups if g.kind == kind]
    if not groups:
        return None
    labels = [p.label for p in c.sets]
    header = _trial_header(kind)
    for joint in PAPER_JOINTS:
        header += [f"{joint} MAE {lab} [deg]" for lab in labels] + [f"{joint} SD [deg]"]
    header += [f"settled {lab}" for lab in labels]
    rows = []
    for g in groups:
        row = _trial_columns(g)
        for j in J:
            row += [g.results[lab].joint_mae_deg[j] for lab in labels] + [g.joint_sd_deg[j]]
        rows.append(row + ["yes" if g.results[lab].sim.settled else "no" for lab in labels])
    total: list[object] = ["all trials", *[""] * (len(_trial_header(kind)) - 2), sum(g.n for g in groups)]
    for j in J:
        total += [float(np.mean([g.results[lab].joint_mae_deg[j] for g in groups])) for lab in labels] + [np.nan]
    rows.append(total + [""] * len(labels))
    number, what = ("4", "free motion") if kind == "free" else ("5", "surface contact")
    return Table(f"table{number}_{'free_motion' if kind == 'free' else 'surface_contact'}",
                 f"Table {number}. Steady-state {what} pose comparison: mean absolute steady-state joint angle "
                 "error, deg (SD of the measured steady angles over the repeats)", header, rows,
                 "One simulation per trial from the repeats' average initial state and recorded excursions, "
                 "against each repeat's measured steady angles. Last row: mean over the trials.")


def force_table(c: Comparison) -> Table | None:
    groups = [g for g in c.groups if g.kind == "contact" and g.has_force]
    if not groups:
        return None
    labels = [p.label for p in c.sets]
    header = _trial_header("contact")
    for axis in paper_frame.AXES:
        header += [f"{axis.named} mean {lab} [N]" for lab in labels] + [f"{axis.named} SD [N]"]
    header += [f"|F| err {lab} [%]" for lab in labels] + [f"phi err {lab} [deg]" for lab in labels]
    header += [f"F_exp world {a} [N]" for a in AXES]
    header += [f"F_sim world {a} {lab} [N]" for lab in labels for a in AXES]
    rows = []
    for g in groups:
        row = _trial_columns(g)
        forces = [g.results[lab].contact_force() for lab in labels]
        for a in (axis.index for axis in paper_frame.AXES):
            row += [f["mean_N"][a] for f in forces] + [forces[0]["sd_N"][a]]
        row += [f["magnitude_pct"] for f in forces] + [f["direction_deg"] for f in forces]
        row += list(forces[0]["average_exp_N"])
        row += [v for lab in labels for v in simulated_force_N(g.results[lab].sim)]
        rows.append(row)
    total: list[object] = ["all trials", *[""] * (len(_trial_header("contact")) - 2), sum(g.n for g in groups)]
    total += [np.nan] * (3 * (len(labels) + 1))
    total += [float(np.nanmean([g.results[lab].contact_force()["magnitude_pct"] for g in groups])) for lab in labels]
    total += [float(np.nanmean([g.results[lab].contact_force()["direction_deg"] for g in groups])) for lab in labels]
    rows.append(total + [np.nan] * (3 + 3 * len(labels)))
    return Table("table6_contact_force",
                 "Table 6. Steady-state contact force comparison: F_exp - F_sim, N, mean (SD) over the repeats; "
                 "force vector errors against the average measured force",
                 header, rows,
                 "Force on the fingertip from the surface. Per-axis errors along the paper's axes (its Fig. 12 "
                 "global frame, as its Table 6): X distal, Y dorsal (our world Z), Z radial (our world Y); the "
                 "force vectors in our world frame: X distal, Y radial, Z dorsal. "
                 "|F| err = |(||F_exp|| - ||F_sim||) / ||F_exp|||; phi err = arccos(F_sim . F_exp / "
                 "(||F_exp|| ||F_sim||)) (the paper's footnotes b and c). Last row: mean over the trials.")


def repeat_table(c: Comparison) -> Table:
    labels = [p.label for p in c.sets]
    header = ["session", "trial index", "trial", "repeat", "duration [s]"]
    for lab in labels:
        header += [f"{j} err {lab} [deg]" for j in PAPER_JOINTS]
        header += [f"F {a} err {lab} [N]" for a in AXES] + [f"|F| err {lab} [%]", f"phi err {lab} [deg]"]
        header += [f"settled {lab}"]
    rows = []
    from uartlab.app.compare import metrics

    for g in c.groups:
        for k, r in enumerate(g.repeats):
            row = [r.session, r.index, r.name, r.repeat, r.duration_s]
            for lab in labels:
                res = g.results[lab]
                row += [res.repeat_theta_err_deg[k, j] for j in J]
                if res.repeat_force_err_N is not None and g.steady_force_N is not None:
                    f_exp, f_sim = g.steady_force_N[k], simulated_force_N(res.repeat_sims[k])
                    row += list(res.repeat_force_err_N[k])
                    row += [100 * metrics.magnitude_error(f_exp, f_sim), metrics.direction_error_deg(f_exp, f_sim)]
                else:
                    row += [np.nan] * 5
                row += ["yes" if res.repeat_sims[k].settled else "no"]
            rows.append(row)
    return Table("per_repeat", "Every recorded repeat against its own re-simulation (signed errors, measured - "
                 "simulated)", header, rows,
                 "Each repeat simulated from its own measured initial state with its own recorded excursions.")


def rmse_table(c: Comparison) -> Table:
    header = ["trial", "parameters"] + [f"{j} RMSE [deg]" for j in PAPER_JOINTS]
    header += [f"{t} RMSE [N]" for t in TENDONS] + [f"F {a} RMSE [N]" for a in AXES]
    rows = []
    for g in c.groups:
        for p in c.sets:
            r = g.results[p.label]
            force = list(r.rmse_force_N) if r.rmse_force_N is not None else [np.nan] * 3
            rows.append([g.name, p.label, *[r.rmse_theta_deg[j] for j in J], *r.rmse_tension_N, *force])
    return Table("transient_rmse", "Transient agreement: RMS difference between the repeats' mean curve and the "
                 "simulation, from actuation start to the measured steady state", header, rows)


def summary_table(c: Comparison) -> Table:
    header = ["trials", "parameters", "count"] + [f"{j} MAE [deg]" for j in PAPER_JOINTS]
    header += ["|F| err [%]", "phi err [deg]"]
    rows = []
    for kind, what in (("free", "free motion"), ("contact", "surface contact")):
        for p in c.sets:
            s = c.summary(kind, p.label)
            if s:
                rows.append([what, p.label, s["n_trials"], *[s["joint_mae_deg"][j] for j in J],
                             s.get("magnitude_pct", np.nan), s.get("direction_deg", np.nan)])
    return Table("summary", "Across all trials (the paper's Results text: mean absolute error per joint, "
                 "average force magnitude and direction error)", header, rows)


def all_tables(c: Comparison) -> list[Table]:
    tables = [joint_table(c, "free"), joint_table(c, "contact"), force_table(c), summary_table(c),
              rmse_table(c), repeat_table(c)]
    return [t for t in tables if t is not None]


def transient_columns(c: Comparison, g: TrialGroup) -> tuple[list[str], np.ndarray]:
    """The curves of Figs. 14-16 for one trial on its time grid: header and (n, k) values."""
    header, cols = ["t [s]"], [g.grid_s]
    series = (("joint_angles_rad", "theta_rad", JOINTS, "deg", np.degrees),
              ("tendon_force_N", "tensions_N", TENDONS, "N", None),
              ("fingertip_force_N", "tip_force_N", tuple(f"F{a}" for a in AXES), "N", None))
    for q, attr, names, unit, scale in series:
        if q not in g.measured_mean:
            continue
        for i, name in enumerate(names):
            header += [f"{name} {MEASURED} [{unit}]", f"{name} measured SD [{unit}]"]
            cols += [g.measured_mean[q][:, i], g.measured_sd[q][:, i]]
            for p in c.sets:
                sim = g.results[p.label].sim
                values = getattr(sim, attr)
                if values is None:
                    continue
                v = sim.on_grid(g.grid_s, scale(values) if scale else values)
                header.append(f"{name} {SIMULATED} {p.label} [{unit}]")
                cols.append(v[:, i])
    return header, np.column_stack(cols)
