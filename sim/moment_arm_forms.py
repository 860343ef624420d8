"""Moment arms beyond a polynomial in one angle: a polynomial surface over both MCP angles, and a
tabulated grid (CSV, with units) smoothly interpolated - the forms a lab's own characterization gives.

The paper's UART calibration (its Ref. 39, the ACT group's method) fits every MCP moment arm as a
function of both MCP angles, and a moment-arm procedure gives r on a grid of joint angles. Both end up
here as the same thing: tensor-product cubic patches over one or two joint angles,

    r(u, v) = sum_k sum_l c[k, l] (u - u_i)^k (v - v_j)^l        on the cell u_i <= u < u_i+1, v_j <= v < v_j+1

- a **surface** ``c[k][l]`` (m per rad^(k+l), k, l <= 3) over (MCP_AB, MCP_FE) is one patch over all angles;
- a **table** is interpolated by a not-a-knot cubic spline (1-D over the joint's own angle) or bicubic
  spline (2-D over MCP_AB x MCP_FE, a full rectangular grid); each cell's patch is the spline's own
  bicubic piece, built from the spline's value and derivatives at the cell's corners (bicubic Hermite
  reproduces a bicubic exactly). Outside the grid the arm stays at its edge value: a table says nothing
  there, and a constant is the least surprising continuation.

The compiled kernels read the patches (sim/arm_patches.py) from the model's flat parameter array
(sim/compiled.py packs them, sim/bondgraph.py evaluates them); the polynomial form keeps its own faster path.
The lateral bands' PIP arm may also be given by a planar wrap model (sim/lateral_band_wrap.py), which is
sampled onto the same patches.

Table CSV files: an optional block of ``#`` comment lines (provenance), a header naming the columns with
their units, then one row per grid point:

    # FDP over PIP, ACT sweep 2026-11-30
    PIP_deg,r_mm
    0,9.1
    ...

2-D: ``MCP_AB_deg,MCP_FE_deg,r_mm``, every combination of the listed angles once. Angles in ``_deg`` or
``_rad``, the arm in ``_mm`` or ``_m``.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from uartlab.sim.arm_patches import Patches, hermite
from uartlab.sim.errors import ParameterError
from uartlab.sim.lateral_band_wrap import ArmWrap
from uartlab.sim.names import JOINTS, MCP_AB, MCP_FE

if TYPE_CHECKING:
    from uartlab.sim.params import FingerParams

KEY_SUFFIXES = ("mm", "surface_mm", "table", "wrap")   # a moment arm's keys in a parameter file: <JOINT>_<suffix>
MAX_DEGREE = 3                         # a surface's degree in each angle; a patch is 4 x 4
ANGLE_UNITS = {"deg": np.pi / 180.0, "rad": 1.0}
ARM_UNITS = {"mm": 1e-3, "m": 1.0}
MCP_AXES = (JOINTS[MCP_AB], JOINTS[MCP_FE])   # a surface's and a 2-D table's angles, in this order
MIN_NODES = 2


@dataclass(frozen=True, eq=False)
class ArmSurface:
    """r = sum c[k][l] MCP_AB^k MCP_FE^l (angles in rad), for an arm about an MCP axis."""

    coeffs_m: np.ndarray       # (k <= 4, l <= 4)

    def scaled(self, factor: float) -> ArmSurface:
        return ArmSurface(self.coeffs_m * factor)

    def patches(self) -> Patches:
        c = np.zeros((4, 4))
        k, l_ = self.coeffs_m.shape
        c[:k, :l_] = self.coeffs_m
        return Patches(tuple(JOINTS.index(a) for a in MCP_AXES), np.zeros(2), np.zeros(2), c[None, None], clamp=False)


@dataclass(frozen=True, eq=False)
class ArmTable:
    """r on a grid of joint angles, from a CSV file (``file`` as the parameter file names it)."""

    axes: tuple[str, ...]      # ("PIP",) or ("MCP_AB", "MCP_FE")
    nodes_rad: tuple[np.ndarray, ...]
    values_m: np.ndarray       # (len(nodes_rad[0]),) or (len(u), len(v))
    file: str = ""
    comment: str = ""          # the file's # lines, kept when the table is written again

    def scaled(self, factor: float) -> ArmTable:
        return replace(self, values_m=self.values_m * factor)

    def patches(self) -> Patches:
        return self._patches

    @cached_property
    def _patches(self) -> Patches:   # the splines once per table (a query per pose would rebuild them)
        axes = tuple(JOINTS.index(a) for a in self.axes)
        if len(self.axes) == 1:
            from scipy.interpolate import CubicSpline, make_interp_spline

            u, r = self.nodes_rad[0], self.values_m
            spline = CubicSpline(u, r) if len(u) > 2 else make_interp_spline(u, r, k=len(u) - 1)
            coeffs = np.zeros((len(u) - 1, 1, 4, 4))
            for i in range(len(u) - 1):   # the cell's own cubic from its ends' values and slopes (Hermite)
                ends = np.array([[spline(u[i])], [spline(u[i + 1])], [spline(u[i], 1)], [spline(u[i + 1], 1)]])
                coeffs[i, 0, :, :1] = hermite(u[i + 1] - u[i]) @ ends
            return Patches(axes, u, np.array([0.0, 1.0]), coeffs, clamp=True)
        from scipy.interpolate import RectBivariateSpline

        u, v = self.nodes_rad
        spline = RectBivariateSpline(u, v, self.values_m, kx=min(3, len(u) - 1), ky=min(3, len(v) - 1), s=0)
        coeffs = np.zeros((len(u) - 1, len(v) - 1, 4, 4))
        for i in range(len(u) - 1):
            for j in range(len(v) - 1):
                F = np.empty((4, 4))   # rows: f at u_i, u_i+1, d/du at both; columns the same in v
                for a, (uu, du) in enumerate(((u[i], 0), (u[i + 1], 0), (u[i], 1), (u[i + 1], 1))):
                    for b, (vv, dv) in enumerate(((v[j], 0), (v[j + 1], 0), (v[j], 1), (v[j + 1], 1))):
                        F[a, b] = spline(uu, vv, dx=du, dy=dv)[0, 0]
                coeffs[i, j] = hermite(u[i + 1] - u[i]) @ F @ hermite(v[j + 1] - v[j]).T
        return Patches(axes, u, v, coeffs, clamp=True)

    # ------------------------------------------------------------ CSV
    @classmethod
    def read_csv(cls, path: Path, written_as: str, joint: str, key: str) -> ArmTable:
        """Read and check a table file; any problem is one line naming the file, its line and what is wrong."""
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise ParameterError(key, f"cannot read the table {written_as!r}: {reason.lower()}") from None
        return cls.from_csv_text(text, str(path), written_as, joint)

    @classmethod
    def from_csv_text(cls, text: str, src: str, written_as: str, joint: str) -> ArmTable:
        """A table from a CSV file's text (``src``: where it came from, for the messages)."""
        lines = text.splitlines()
        comment = [ln for ln in lines if ln.startswith("#")]
        rows = [(n, ln) for n, ln in enumerate(lines, start=1) if ln.strip() and not ln.startswith("#")]
        if not rows:
            raise ParameterError("", "no header: expected e.g. PIP_deg,r_mm", source=src)
        head_line, head = rows[0]
        names = [h.strip() for h in next(csv.reader([head]))]
        want = MCP_AXES if joint in MCP_AXES and len(names) == 3 else (joint,)
        if len(names) != len(want) + 1:
            raise ParameterError("", f"header {head!r}: expected {', '.join(f'{a}_deg' for a in want)}, r_mm",
                                 source=src, line=head_line)
        scales = []
        for name, axis in zip(names[:-1], want, strict=True):
            unit = name.removeprefix(f"{axis}_")
            if not name.startswith(f"{axis}_") or unit not in ANGLE_UNITS:
                raise ParameterError("", f"column {name!r}: expected {axis}_deg or {axis}_rad",
                                     source=src, line=head_line)
            scales.append(ANGLE_UNITS[unit])
        r_unit = names[-1].removeprefix("r_")
        if not names[-1].startswith("r_") or r_unit not in ARM_UNITS:
            raise ParameterError("", f"column {names[-1]!r}: expected r_mm or r_m", source=src, line=head_line)
        values = np.empty((len(rows) - 1, len(names)))
        for k, (n, ln) in enumerate(rows[1:]):
            cells = next(csv.reader([ln]))
            if len(cells) != len(names):
                raise ParameterError("", f"expected {len(names)} values, got {len(cells)}", source=src, line=n)
            for c, cell in enumerate(cells):
                try:
                    values[k, c] = float(cell)
                except ValueError:
                    raise ParameterError("", f"{names[c]}: not a number: {cell.strip()!r}", source=src,
                                         line=n) from None
                if not np.isfinite(values[k, c]):
                    raise ParameterError("", f"{names[c]}: must be finite, got {cell.strip()}", source=src, line=n)
        angles = values[:, :-1] * np.asarray(scales)
        r = values[:, -1] * ARM_UNITS[r_unit]
        nodes = tuple(np.unique(angles[:, a]) for a in range(len(want)))
        for a, axis_nodes in enumerate(nodes):
            if len(axis_nodes) < MIN_NODES:
                raise ParameterError("", f"{names[a]}: needs at least {MIN_NODES} distinct angles, got "
                                         f"{len(axis_nodes)}", source=src)
        grid = np.full(tuple(len(x) for x in nodes), np.nan)
        idx = tuple(np.searchsorted(nodes[a], angles[:, a]) for a in range(len(want)))
        for k, (n, _) in enumerate(rows[1:]):
            at = tuple(int(i[k]) for i in idx)
            if np.isfinite(grid[at]):
                raise ParameterError("", "this grid point is given twice", source=src, line=n)
            grid[at] = r[k]
        if np.isnan(grid).any():
            missing = np.argwhere(np.isnan(grid))[0]
            where = ", ".join(f"{names[a]} {nodes[a][missing[a]] / scales[a]:g}" for a in range(len(want)))
            raise ParameterError("", f"the grid is not complete: no row for {where}", source=src)
        return cls(want, nodes, grid, file=written_as, comment="\n".join(comment))

    def csv_text(self) -> str:
        """The table as a CSV file reads: degrees and millimetres, its comment lines first."""
        out = io.StringIO()
        if self.comment:
            out.write(self.comment + "\n")
        out.write(",".join([*(f"{a}_deg" for a in self.axes), "r_mm"]) + "\n")
        grid = np.meshgrid(*self.nodes_rad, indexing="ij")
        for point in zip(*(g.ravel() for g in grid), self.values_m.ravel(), strict=True):
            *angles, r = point
            out.write(",".join([*(f"{np.degrees(a):.10g}" for a in angles), f"{r * 1e3:.10g}"]) + "\n")
        return out.getvalue()


ArmForm = ArmSurface | ArmTable | ArmWrap


def table_file(group: str, joint: str) -> str:
    """Where a table of ``group``'s arm about ``joint`` goes, relative to its parameter file."""
    return f"moment_arms/{group}_{joint}.csv"


def tabulate(params: FingerParams, step_deg: float = 10.0) -> dict[tuple[str, str], ArmForm]:
    """Every moment arm of ``params`` as a table sampled every ``step_deg`` over its joints' ranges (the MCP
    arms over both MCP angles): a start for a lab's own tables, and what `uartlab bench sim` times."""
    from uartlab.sim.names import GROUP_JOINTS, MOMENT_ARM_GROUPS

    def nodes(joint: str) -> np.ndarray:
        lo, hi = params.rom_rad[JOINTS.index(joint)]
        n = max(MIN_NODES, int(np.ceil((hi - lo) / np.radians(step_deg))) + 1)
        return np.linspace(lo, hi, n)

    forms: dict[tuple[str, str], ArmForm] = {}
    for group in MOMENT_ARM_GROUPS:
        for joint in GROUP_JOINTS[group]:
            axes = MCP_AXES if joint in MCP_AXES else (joint,)
            grid = tuple(nodes(a) for a in axes)
            values = np.empty(tuple(len(g) for g in grid))
            theta = np.zeros(len(JOINTS))
            for index in np.ndindex(values.shape):
                for a, i in zip(axes, index, strict=True):
                    theta[JOINTS.index(a)] = grid[axes.index(a)][i]
                values[index] = params.moment_arm(group, joint, theta)
            forms[group, joint] = ArmTable(axes, grid, values, file=table_file(group, joint),
                                           comment=f"# {group} about {joint}, sampled every {step_deg:g} deg "
                                                   f"from {params.source}")
    return forms
