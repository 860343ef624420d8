"""The comparison on disk and on screen: CSV of every table, transient curves per trial, an HTML report that
links the figures, and a text summary in the paper's layout ("MAE (SD)")."""

from __future__ import annotations

import csv
import html
import math
import os
import time

import numpy as np
from uartlab.app import paper_frame
from uartlab.app.compare import measured, resim
from uartlab.app.compare.analysis import Comparison
from uartlab.app.compare.figures import write_figures
from uartlab.app.compare.tables import PAPER_JOINTS, Table, all_tables, digits_for, slug, transient_columns
from uartlab.sim.names import JOINTS


def _cell(value, digits: int = 2) -> str:
    if isinstance(value, float | np.floating):
        return "" if math.isnan(value) else f"{value:.{digits}f}"
    return html.escape(str(value))


def _csv_value(value):
    if isinstance(value, float | np.floating):
        return "" if math.isnan(value) else f"{float(value):.6g}"
    return value


def write_csv(table: Table, path: str) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(table.header)
        for row in table.rows:
            w.writerow([_csv_value(v) for v in row])


def write_report(c: Comparison, out_dir: str, figures: bool = True, on_figure=None,
                 workers: int | None = None) -> dict:
    """Write CSVs, transient curves, figures and report.html into out_dir; returns what was written.
    ``on_figure(done, total)``: called after each figure is drawn; ``workers``: processes drawing them."""
    os.makedirs(os.path.join(out_dir, "transients"), exist_ok=True)
    tables = all_tables(c)
    for t in tables:
        write_csv(t, os.path.join(out_dir, f"{t.key}.csv"))
    for g in c.groups:
        header, values = transient_columns(c, g)
        write_csv(Table("", "", header, values.tolist()), os.path.join(out_dir, "transients", f"{slug(g.name)}.csv"))
    figs = write_figures(c, out_dir, on_figure, workers) if figures else {}
    path = os.path.join(out_dir, "report.html")
    with open(path, "w", encoding="utf-8") as f:
        f.write(_html(c, tables, figs))
    return {"html": path, "tables": [f"{t.key}.csv" for t in tables], "figures": figs}


def all_notes(c: Comparison) -> list[tuple[str, str]]:
    """(where, what) for every note of a measured repeat or a simulation, each once."""
    notes = [(r.label, n) for g in c.groups for r in g.repeats for n in r.notes]
    notes += [(f"{g.name} with parameters {p.label}", n) for g in c.groups for p in c.sets
              for n in g.results[p.label].sim.notes]
    return list(dict.fromkeys(notes))


def _table_html(t: Table) -> str:
    digits = [digits_for(h) for h in t.header]
    head = "".join(f"<th>{html.escape(h)}</th>" for h in t.header)
    body = "".join("<tr>" + "".join(f"<td>{_cell(v, d)}</td>" for v, d in zip(row, digits, strict=True)) + "</tr>"
                   for row in t.rows)
    note = f"<p class='note'>{html.escape(t.note)}</p>" if t.note else ""
    return (f"<h2 id='{t.key}'>{html.escape(t.title)}</h2>\n<p><a href='{t.key}.csv'>{t.key}.csv</a></p>\n"
            f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{note}\n")


CSS = """body{font-family:sans-serif;margin:2em;max-width:110em} table{border-collapse:collapse;font-size:12px}
td,th{border:1px solid #bbb;padding:2px 6px;text-align:right} th{background:#eee} td:first-child{text-align:left}
img{max-width:100%;border:1px solid #ddd;margin:4px} .note{color:#555;font-size:12px} h3{margin-top:1.5em}"""


def _html(c: Comparison, tables: list[Table], figs: dict) -> str:
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>uartlab compare</title><style>{CSS}"
             "</style></head><body>",
             "<h1>Model vs experiment (the paper's Results, Tables 4-6, Figs. 13-16)</h1>",
             f"<p>Generated {html.escape(time.strftime('%Y-%m-%d %H:%M:%S'))}.</p><h2>Sessions</h2><ul>"]
    parts += [f"<li>{html.escape(s)}</li>" for s in c.sessions]
    parts.append("</ul><h2>Parameter sets</h2><ul>")
    parts += [f"<li><b>{html.escape(p.label)}</b>: {html.escape(p.source)}</li>" for p in c.sets]
    parts.append("</ul>")
    parts.append(
        "<h2>Method</h2><ul>"
        f"<li>Initial state: joint angles, SEA tensions and fingertip force averaged over the "
        f"{measured.INITIAL_WINDOW_S:g} s before actuation (and over the repeats for Tables 4-6); EM segments "
        "balanced at the junctions; velocities zero; the surface at the fingertip, pressed in by the deflection "
        "that gives the measured normal force under each parameter set's contact law.</li>"
        "<li>Inputs: the recorded tendon excursions (averaged over the repeats for Tables 4-6). Steady state: "
        "all joint speeds below 0.1 deg/s (simulation), the trial's end (measurement; averaged over its last "
        f"{measured.STEADY_WINDOW_S:g} s). A model still moving {resim.SETTLE_TIMEOUT_S:g} s after the inputs "
        "stop is marked unsettled.</li>"
        "<li>SD: sample SD (n - 1) over the repeats of the measured steady values. Because Tables 4-6 compare "
        "every repeat with ONE simulation from the average start, scatter between repeats enters the error: "
        "even a perfect model shows an MAE of about the SD there. The per-repeat table (each repeat from its own "
        "start) separates model error from scatter.</li>"
        "<li>Forces: the force the surface applies to the fingertip, in the world frame (X distal, Y radial, "
        "Z dorsal), from the Nano17 wrench by F = -R_surface(angle) F_sensor (the sensor's axes along the "
        "surface frame).</li></ul>")
    if c.skipped:
        parts.append("<h2>Trials not compared</h2><ul>")
        parts += [f"<li>{html.escape(label)}: {html.escape(why)}</li>" for label, why in c.skipped]
        parts.append("</ul>")
    notes = all_notes(c)
    if notes:
        parts.append("<h2>Notes</h2><ul>")
        parts += [f"<li>{html.escape(where)}: {html.escape(what)}</li>" for where, what in notes]
        parts.append("</ul>")
    parts += [_table_html(t) for t in tables]
    if figs:
        parts.append("<h2>Fig. 13: steady-state poses</h2>")
        parts.append("<p>In the paper's planes and axis names (its Fig. 12 frame): X-Y is the side view, where "
                     "flexion shows, Z-Y the front view, where abduction shows; paper X is world X (distal), "
                     "paper Y is world Z (dorsal), paper Z is world Y (radial). The window's pose view draws the "
                     "same two planes.</p>")
        parts += [f"<img src='{html.escape(p)}' alt='{html.escape(p)}'>" for p in figs.get("poses", [])]
        parts.append("<h2>Figs. 14-16: transients per trial</h2>")
        for g in c.groups:
            parts.append(f"<h3>{html.escape(g.name)} ({g.n} repeats) — "
                         f"<a href='transients/{slug(g.name)}.csv'>curves CSV</a></h3>")
            parts += [f"<img src='{html.escape(p)}' alt='{html.escape(p)}' width='32%'>" for p in figs.get(g.name, [])]
    parts.append("</body></html>\n")
    return "\n".join(parts)


def text_summary(c: Comparison) -> str:
    """Tables 4-6 as text, each cell 'MAE (SD)' (two parameter sets: 'A / B (SD)')."""
    labels = [p.label for p in c.sets]
    lines = [f"{len(c.groups)} trials ({sum(g.n for g in c.groups)} repeats) from {len(c.sessions)} session(s); "
             f"parameters: " + ", ".join(f"{p.label} = {p.source}" for p in c.sets)]
    for kind, title in (("free", "Table 4  free motion"), ("contact", "Table 5  surface contact")):
        groups = [g for g in c.groups if g.kind == kind]
        if not groups:
            continue
        lines += ["", f"{title}: mean absolute steady-state joint angle error, deg (SD)",
                  f"{'trial':<34}{'n':>3}" + "".join(f"{j:>22}" for j in PAPER_JOINTS)]
        for g in groups:
            cells = []
            for j in PAPER_JOINTS:
                jj = JOINTS.index(j)
                mae = " / ".join(f"{g.results[lab].joint_mae_deg[jj]:.2f}" for lab in labels)
                cells.append(f"{mae} ({_sd(g.joint_sd_deg[jj])})")
            flag = "" if all(g.results[lab].sim.settled for lab in labels) else " *unsettled"
            lines.append(f"{g.name:<34}{g.n:>3}" + "".join(f"{s:>22}" for s in cells) + flag)
    forces = [g for g in c.groups if g.has_force]
    if forces:
        lines += ["", "Table 6  contact force: F_exp - F_sim, N, mean (SD) along the paper's axes; |F| err %; "
                      "direction err deg",
                  f"{'trial':<34}" + "".join(f"{a.named:>26}" for a in paper_frame.AXES)
                  + f"{'|F| err %':>16}{'phi err deg':>16}"]
        for g in forces:
            fs = [g.results[lab].contact_force() for lab in labels]
            cells = [" / ".join(f"{f['mean_N'][a.index]:.3f}" for f in fs) + f" ({_sd(fs[0]['sd_N'][a.index], 3)})"
                     for a in paper_frame.AXES]
            mag = " / ".join(f"{f['magnitude_pct']:.1f}" for f in fs)
            ang = " / ".join(f"{f['direction_deg']:.1f}" for f in fs)
            lines.append(f"{g.name:<34}" + "".join(f"{s:>26}" for s in cells) + f"{mag:>16}{ang:>16}")
    lines.append("")
    for kind, what in (("free", "free motion"), ("contact", "surface contact")):
        for lab in labels:
            s = c.summary(kind, lab)
            if not s:
                continue
            mae = ", ".join(f"{j} {s['joint_mae_deg'][JOINTS.index(j)]:.2f}"
                            for j in PAPER_JOINTS)
            extra = ""
            if "magnitude_pct" in s:
                extra = f"; |F| err {s['magnitude_pct']:.1f} %, direction err {s['direction_deg']:.1f} deg"
            lines.append(f"across {s['n_trials']} {what} trials ({lab}): MAE deg {mae}{extra}")
    for label, why in c.skipped:
        lines.append(f"skipped {label}: {why}")
    for where, what in all_notes(c):
        lines.append(f"note: {where}: {what}")
    return "\n".join(lines)


def _sd(value: float, digits: int = 2) -> str:
    return "-" if not np.isfinite(value) else f"{value:.{digits}f}"
