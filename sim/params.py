"""FingerParams: every number the finger model needs, in SI, loaded from and saved to TOML.

The TOML files carry units in their key names (``a_mm``, ``em_stiffness_N_per_mm``) and are converted
here, once; everything downstream is SI (m, kg, s, N, N·m, rad). The shipped defaults
(``data/uart.toml``) give every value its provenance in a comment.
"""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import tomli_w
from uartlab.sim.errors import ParameterError
from uartlab.sim.lateral_band_wrap import KEYS as WRAP_KEYS
from uartlab.sim.lateral_band_wrap import WRAP_ARMS, ArmWrap
from uartlab.sim.moment_arm_forms import KEY_SUFFIXES, MAX_DEGREE, MCP_AXES, ArmForm, ArmSurface, ArmTable
from uartlab.sim.names import BONES, GROUP_JOINTS, JOINTS, MOMENT_ARM_GROUPS, TENDONS
from uartlab.sim.toml_commented import commented_toml
from uartlab.sim.toml_lines import decode_error, line_of_key

SCHEMA = "uartlab.finger-params/1"
DEFAULTS_SOURCE = "the shipped defaults (sim/data/uart.toml)"   # how reports name FingerParams.uart()
MM = 1e-3
N_PER_MM = 1e3
# No quantity of a finger model comes near this in any unit of the file; above it the unit conversions to
# SI (x1e3) overflow to inf and the model runs on nonsense.
MAX_MAGNITUDE = 1e100
N_COEFFS = 3  # the polynomial form of a moment arm is quadratic in the joint angle


@dataclass(frozen=True)
class ContactParams:
    """Fingertip contact law, eqs. 19-23 (``a`` gives N for |dZ| in mm, as the paper fits it)."""

    a_N: float
    b: float
    Kx_N_per_m: float
    Ky_N_per_m: float
    mu_x: float
    mu_y: float
    pad_radius_m: float


@dataclass(frozen=True)
class FingerParams:
    """All model parameters, SI. Arrays are indexed in the orders of :mod:`uartlab.sim.names`."""

    a_m: np.ndarray                    # (4,) D-H link lengths
    d_m: np.ndarray                    # (4,) D-H offsets
    alpha_rad: np.ndarray              # (4,) D-H twists
    theta_offset_rad: np.ndarray       # (4,) D-H angle offsets
    dh_sign: np.ndarray                # (4,) anatomical angle = sign * (D-H angle - offset)
    world_from_base: np.ndarray        # (3, 3) rotation of the D-H base frame in the world frame
    gravity_m_per_s2: np.ndarray       # (3,) in the world frame
    joint_stiffness_Nm_per_rad: np.ndarray  # (4,) K_j
    joint_damping_Nms_per_rad: np.ndarray   # (4,) b_j
    rom_rad: np.ndarray                # (4, 2) [min, max]
    input_stiffness_N_per_m: np.ndarray     # (6,) k_T of the input tendons (the SEA springs)
    em_stiffness_N_per_m: np.ndarray        # (11,) k_T of the EM segments
    em_mass_kg: np.ndarray             # (6,) EM junction masses
    coulomb_coefficient_m: float       # mu_c of eq. 15
    contact: ContactParams
    interaction_point_m: np.ndarray    # (3,) pad centre in the distal D-H frame
    bone_mass_kg: np.ndarray           # (3,) proximal, middle, distal
    bone_com_m: np.ndarray             # (3, 3) COM from the bone's proximal joint, bone axes
    bone_inertia_kgm2: np.ndarray      # (3, 3) principal inertia about the COM [axial, transverse, transverse]
    moment_arm_coeffs: np.ndarray      # (9 groups, 4 joints, 3) polynomial coefficients, m / m/rad / m/rad^2
    moment_arm_cos_fe: np.ndarray      # (9, 4) bool: multiply by cos(theta_MCP_FE)
    stick_time_s: float = 0.004
    # (group, joint) -> a surface over both MCP angles, a tabulated grid or a lateral band's PIP wrap, in
    # place of the polynomial
    moment_arm_forms: dict[tuple[str, str], ArmForm] = field(default_factory=dict)
    source: str = field(default="<defaults>", compare=False)
    # The TOML text this set was read from (or derived from by ``replace``): ``to_toml`` writes into it,
    # keeping its provenance comments.
    template: str = field(default="", compare=False, repr=False)

    # ---------------------------------------------------------------- construction
    @classmethod
    def uart(cls) -> FingerParams:
        """The UART finger: paper Tables 2-3 plus the documented defaults of ``data/uart.toml``."""
        text = resources.files("uartlab.sim").joinpath("data/uart.toml").read_text()
        return cls.from_toml_text(text, source="uart.toml")

    @classmethod
    def from_toml(cls, path: str | Path) -> FingerParams:
        """Read a parameter file; the moment-arm tables it names are read relative to its folder."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise ParameterError("", f"not a parameter file: not UTF-8 text (byte {exc.start})",
                                 source=str(path)) from None
        except OSError as exc:
            raise ParameterError("", f"cannot read: {(exc.strerror or str(exc)).lower()}",
                                 source=str(path)) from None
        return cls.from_toml_text(text, source=str(path), folder=path.parent)

    @classmethod
    def from_toml_text(cls, text: str, source: str = "<text>", template: str | None = None,
                       folder: str | Path = ".", tables: dict[str, ArmTable | str] | None = None) -> FingerParams:
        """Parse and validate ``text``; ``template`` (default: ``text``) is what ``to_toml`` writes into.
        Moment-arm tables are read from ``folder``, or taken from ``tables`` (file name as written -> the
        table, or its CSV text: ``table_texts``)."""
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            line, reason = decode_error(exc, text)
            raise ParameterError("", f"not valid TOML: {reason}", source=source, line=line) from None
        return _Reader(doc, text, source, text if template is None else template, Path(folder),
                       tables or {}).build()

    def to_toml(self, path: str | Path | None = None) -> str:
        """Serialise with unit-suffixed keys into the text this set was read from, its comments kept (a
        changed value's comment says what it replaced); write to ``path`` if given, with every moment-arm
        table it names beside it (at the relative path it names). Round-trips exactly."""
        doc = _to_doc(self)
        text = commented_toml(self.template, doc) if self.template else tomli_w.dumps(doc)
        if path is not None:
            path = Path(path)
            folder = path.parent.resolve()
            tables = self.arm_tables.values()
            for form in tables:   # nothing is written outside the chosen file's folder
                if not (folder / form.file).resolve().is_relative_to(folder):
                    raise ParameterError("", f"the moment-arm table {form.file!r} is outside this file's folder: "
                                             "name it by a path inside it", source=str(path))
            for form in tables:
                table_path = folder / form.file
                table_path.parent.mkdir(parents=True, exist_ok=True)
                table_path.write_text(form.csv_text())
            path.write_text(text)
        return text

    @property
    def arm_tables(self) -> dict[str, ArmTable]:
        """The moment-arm tables this set names, by their file name as the parameter file writes it."""
        return {f.file: f for f in self.moment_arm_forms.values() if isinstance(f, ArmTable)}

    def table_texts(self) -> dict[str, str]:
        """Each moment-arm table this set names, as the CSV text of its file (file name as written -> text):
        with ``to_toml()``, everything needed to rebuild the set elsewhere (``from_toml_text(..., tables=)``)."""
        return {name: table.csv_text() for name, table in self.arm_tables.items()}

    def replace(self, **changes: Any) -> FingerParams:
        """A copy with some fields changed (dataclasses.replace, validated again)."""
        new = dataclasses.replace(self, **changes)
        return FingerParams.from_toml_text(tomli_w.dumps(_to_doc(new)), source=self.source, template=self.template,
                                           tables=dict(new.arm_tables))

    def perturbed(self, fraction: float, seed: int) -> FingerParams:
        """A seeded random variation: every stiffness, mass, friction, contact and moment-arm value
        scaled by an independent factor uniform in [1 - fraction, 1 + fraction]."""
        rng = np.random.default_rng(seed)

        def scale(x):
            x = np.asarray(x, dtype=float)
            return x * rng.uniform(1 - fraction, 1 + fraction, size=x.shape)

        c = self.contact
        return self.replace(
            input_stiffness_N_per_m=scale(self.input_stiffness_N_per_m),
            em_stiffness_N_per_m=scale(self.em_stiffness_N_per_m),
            joint_damping_Nms_per_rad=scale(self.joint_damping_Nms_per_rad),
            coulomb_coefficient_m=float(scale(self.coulomb_coefficient_m)),
            bone_mass_kg=scale(self.bone_mass_kg),
            moment_arm_coeffs=scale(self.moment_arm_coeffs),
            moment_arm_forms={k: f.scaled(float(scale(1.0))) for k, f in self.moment_arm_forms.items()},
            contact=ContactParams(
                a_N=float(scale(c.a_N)), b=c.b, Kx_N_per_m=float(scale(c.Kx_N_per_m)),
                Ky_N_per_m=float(scale(c.Ky_N_per_m)), mu_x=float(scale(c.mu_x)),
                mu_y=float(scale(c.mu_y)), pad_radius_m=c.pad_radius_m,
            ),
        )

    # ---------------------------------------------------------------- queries
    def moment_arm(self, group: str, joint: str, theta: np.ndarray) -> float:
        """Moment arm (m) of a tendon or EM group about a joint at anatomical angles ``theta`` (rad)."""
        form = self.moment_arm_forms.get((group, joint))
        if form is not None:
            return form.patches()(np.asarray(theta, dtype=float))[0]
        g, j = MOMENT_ARM_GROUPS.index(group), JOINTS.index(joint)
        c = self.moment_arm_coeffs[g, j]
        x = theta[j]
        r = c[0] + c[1] * x + c[2] * x * x
        if self.moment_arm_cos_fe[g, j]:
            r *= np.cos(theta[1])
        return float(r)


# -------------------------------------------------------------------- TOML reading
class _Reader:
    """Walks a parsed TOML document, converting units and refusing bad values with file:line: key."""

    def __init__(self, doc: dict, text: str, source: str, template: str, folder: Path,
                 tables: dict[str, ArmTable | str]):
        self.doc, self.text, self.source, self.template = doc, text, source, template
        self.folder, self.tables = folder, tables

    def fail(self, key: str, reason: str):
        parts = key.split(".")   # a key inside an inline table has no line of its own: the table's line
        line = next((n for k in range(len(parts), 0, -1) if (n := line_of_key(self.text, ".".join(parts[:k])))),
                    None)
        raise ParameterError(key, reason, source=self.source, line=line)

    def get(self, key: str, default: Any = ...):
        node: Any = self.doc
        for part in key.split("."):
            if not isinstance(node, dict) or part not in node:
                if default is ...:
                    self.fail(key, "missing")
                return default
            node = node[part]
        return node

    def number(self, key: str, lo: float | None = None, hi: float | None = None, *, strict_lo=False,
               default: Any = ...) -> float:
        value = self.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.fail(key, f"must be a number, got {value!r}")
        value = float(value)
        if not abs(value) <= MAX_MAGNITUDE:
            self.fail(key, f"must be finite, within ±{MAX_MAGNITUDE:g}, got {value:g}")
        if lo is not None and (value < lo or (strict_lo and value == lo)):
            self.fail(key, f"must be {'>' if strict_lo else '>='} {lo:g}, got {value:g}")
        if hi is not None and value > hi:
            self.fail(key, f"must be <= {hi:g}, got {value:g}")
        return value

    def vector(self, key: str, n: int | None = None, default: Any = ...) -> np.ndarray:
        value = self.get(key, default)
        if not isinstance(value, list) or not all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in value
        ):
            self.fail(key, f"must be a list of numbers, got {value!r}")
        if n is not None and len(value) != n:
            self.fail(key, f"must have {n} values, got {len(value)}")
        arr = np.asarray(value, dtype=float)
        if not np.all(np.abs(arr) <= MAX_MAGNITUDE):
            self.fail(key, f"must be finite, within ±{MAX_MAGNITUDE:g}, got {value!r}")
        return arr

    def check_keys(self, table: str, allowed: set[str]):
        node = self.get(table, {}) if table else self.doc   # "": the top level
        if not isinstance(node, dict):
            self.fail(table, "must be a table")
        for k in node:
            if k not in allowed:
                self.fail(f"{table}.{k}" if table else k, f"unknown key; expected one of {', '.join(sorted(allowed))}")

    def build(self) -> FingerParams:
        schema = self.get("schema", SCHEMA)
        if schema != SCHEMA:
            self.fail("schema", f"expected {SCHEMA!r}, got {schema!r}")
        self.check_keys("", {"schema", "kinematics", "joints", "tendons", "contact", "bones",
                             "moment_arms", "numerics"})
        kin = "kinematics"
        self.check_keys(kin, {"a_mm", "d_mm", "alpha_deg", "theta_offset_deg", "dh_sign",
                              "world_from_base_rpy_deg", "gravity_m_per_s2"})
        a = self.vector(f"{kin}.a_mm", 4) * MM
        if np.any(a < 0):
            self.fail(f"{kin}.a_mm", "link lengths must be >= 0")
        sign = self.vector(f"{kin}.dh_sign", 4)
        if not np.all(np.isin(sign, (-1.0, 1.0))):
            self.fail(f"{kin}.dh_sign", "each sign must be +1 or -1")
        rpy = np.radians(self.vector(f"{kin}.world_from_base_rpy_deg", 3))

        stiff, damp, rom = np.zeros(4), np.zeros(4), np.zeros((4, 2))
        self.check_keys("joints", set(JOINTS))
        for j, name in enumerate(JOINTS):
            key = f"joints.{name}"
            self.check_keys(key, {"stiffness_Nmm_per_rad", "damping_Nmms_per_rad", "rom_deg"})
            stiff[j] = self.number(f"{key}.stiffness_Nmm_per_rad", 0.0) * MM
            damp[j] = self.number(f"{key}.damping_Nmms_per_rad", 0.0) * MM
            lo, hi = np.radians(self.vector(f"{key}.rom_deg", 2))
            if lo >= hi:
                self.fail(f"{key}.rom_deg", f"ROM min must be < max, got [{np.degrees(lo):g}, "
                                            f"{np.degrees(hi):g}] deg")
            rom[j] = lo, hi

        ten = "tendons"
        self.check_keys(ten, {"input_stiffness_N_per_mm", "em_stiffness_N_per_mm", "em_mass_kg",
                              "coulomb_coefficient_mm"})
        k_in = self._per_tendon(f"{ten}.input_stiffness_N_per_mm") * N_PER_MM
        k_em = self._scalar_or_list(f"{ten}.em_stiffness_N_per_mm", 11) * N_PER_MM  # e2 ... p4
        m_em = self._scalar_or_list(f"{ten}.em_mass_kg", 6)  # e1 d1 p1 L1 ed2 ep2
        mu_c = self.number(f"{ten}.coulomb_coefficient_mm", 0.0) * MM

        con = "contact"
        self.check_keys(con, {"a_N", "b", "Kx_N_per_mm", "Ky_N_per_mm", "mu_x", "mu_y", "pad_radius_mm",
                              "interaction_point_mm"})
        contact = ContactParams(
            a_N=self.number(f"{con}.a_N", 0.0, strict_lo=True),
            b=self.number(f"{con}.b", 0.0, strict_lo=True),
            Kx_N_per_m=self.number(f"{con}.Kx_N_per_mm", 0.0, strict_lo=True) * N_PER_MM,
            Ky_N_per_m=self.number(f"{con}.Ky_N_per_mm", 0.0, strict_lo=True) * N_PER_MM,
            mu_x=self.number(f"{con}.mu_x", 0.0),
            mu_y=self.number(f"{con}.mu_y", 0.0),
            pad_radius_m=self.number(f"{con}.pad_radius_mm", 0.0) * MM,
        )
        ip = self.vector(f"{con}.interaction_point_mm", 3) * MM

        mass, com, inertia = np.zeros(3), np.zeros((3, 3)), np.zeros((3, 3))
        self.check_keys("bones", set(BONES))
        for i, bone in enumerate(BONES):
            key = f"bones.{bone}"
            self.check_keys(key, {"mass_g", "com_from_proximal_joint_mm", "inertia_kgm2"})
            mass[i] = self.number(f"{key}.mass_g", 0.0) * 1e-3
            com[i] = self.vector(f"{key}.com_from_proximal_joint_mm", 3) * MM
            inertia[i] = self.vector(f"{key}.inertia_kgm2", 3)
            if np.any(inertia[i] < 0):
                self.fail(f"{key}.inertia_kgm2", "principal inertias must be >= 0")

        coeffs, cos_fe, forms = self._moment_arms(rom)
        stick = self.number("numerics.stick_time_s", 0.0, strict_lo=True, default=0.004)
        return FingerParams(
            a_m=a, d_m=self.vector(f"{kin}.d_mm", 4) * MM,
            alpha_rad=np.radians(self.vector(f"{kin}.alpha_deg", 4)),
            theta_offset_rad=np.radians(self.vector(f"{kin}.theta_offset_deg", 4)),
            dh_sign=sign, world_from_base=_rpy_matrix(rpy),
            gravity_m_per_s2=self.vector(f"{kin}.gravity_m_per_s2", 3),
            joint_stiffness_Nm_per_rad=stiff, joint_damping_Nms_per_rad=damp, rom_rad=rom,
            input_stiffness_N_per_m=k_in, em_stiffness_N_per_m=k_em, em_mass_kg=m_em,
            coulomb_coefficient_m=mu_c, contact=contact, interaction_point_m=ip,
            bone_mass_kg=mass, bone_com_m=com, bone_inertia_kgm2=inertia,
            moment_arm_coeffs=coeffs, moment_arm_cos_fe=cos_fe, stick_time_s=stick, source=self.source,
            template=self.template, moment_arm_forms=forms,
        )

    def _scalar_or_list(self, key: str, n: int) -> np.ndarray:
        """One positive value for all n elements, or a list of n positive values."""
        value = self.get(key)
        out = self.vector(key, n) if isinstance(value, list) else np.full(n, self.number(key))
        if np.any(out <= 0):
            self.fail(key, f"must be > 0, got {out.tolist()}")
        return out

    def _per_tendon(self, key: str) -> np.ndarray:
        """A scalar for all six tendons, a list of six, or a table by tendon name."""
        value = self.get(key)
        if isinstance(value, dict):
            for name in value:
                if name not in TENDONS:
                    self.fail(f"{key}.{name}", f"unknown tendon; expected one of {', '.join(TENDONS)}")
            out = np.array([self.number(f"{key}.{t}", 0.0, strict_lo=True) for t in TENDONS])
        elif isinstance(value, list):
            out = self.vector(key, 6)
        else:
            out = np.full(6, self.number(key))
        if np.any(out <= 0):
            self.fail(key, f"stiffness must be > 0, got {out.tolist()}")
        return out

    def _moment_arms(self, rom: np.ndarray) -> tuple[np.ndarray, np.ndarray, dict[tuple[str, str], ArmForm]]:
        """Per group and crossed joint one form: ``<joint>_mm`` (a polynomial in the joint's own angle, optionally
        ``<joint>_times_cos_MCP_FE``), ``<joint>_surface_mm`` (MCP joints: over both MCP angles),
        ``<joint>_table`` (a CSV grid, sim/moment_arm_forms.py) or ``PIP_wrap`` (the lateral bands: a planar
        wrap over the proximal phalanx's head, sim/lateral_band_wrap.py)."""
        forms: dict[tuple[str, str], ArmForm] = {}
        coeffs = np.zeros((len(MOMENT_ARM_GROUPS), 4, N_COEFFS))
        cos_fe = np.zeros((len(MOMENT_ARM_GROUPS), 4), dtype=bool)
        table = self.get("moment_arms")
        if not isinstance(table, dict):
            self.fail("moment_arms", "must be a table")
        for group in table:
            if group not in MOMENT_ARM_GROUPS:
                self.fail(f"moment_arms.{group}",
                          f"unknown tendon or EM group; expected one of {', '.join(MOMENT_ARM_GROUPS)}")
        for g, group in enumerate(MOMENT_ARM_GROUPS):
            crossed = GROUP_JOINTS[group]
            allowed = {f"{j}_{form}" for j in crossed for form in ("mm", "times_cos_MCP_FE", "table")}
            allowed |= {f"{j}_surface_mm" for j in crossed if j in MCP_AXES}
            allowed |= {f"{j}_wrap" for j in crossed if (group, j) in WRAP_ARMS}
            self.check_keys(f"moment_arms.{group}", allowed)
            for joint in crossed:
                j = JOINTS.index(joint)
                base = f"moment_arms.{group}.{joint}"
                given = [f"{base}_{suffix}" for suffix in KEY_SUFFIXES
                         if self.get(f"{base}_{suffix}", None) is not None]
                if len(given) != 1:
                    choices = [f"{joint}_mm", f"{joint}_table"] + ([f"{joint}_surface_mm"] if joint in MCP_AXES else [])
                    choices += [f"{joint}_wrap"] if (group, joint) in WRAP_ARMS else []
                    self.fail(given[1] if given else f"{base}_mm",
                              f"give one of {', '.join(choices)}" + (", only one" if given else ""))
                if given[0] != f"{base}_mm":
                    if self.get(f"{base}_times_cos_MCP_FE", False):
                        self.fail(f"{base}_times_cos_MCP_FE", "applies to the polynomial form (_mm) only")
                    forms[group, joint] = (self._surface(given[0]) if given[0].endswith("_surface_mm")
                                           else self._wrap(given[0], rom[j]) if given[0].endswith("_wrap")
                                           else self._table(given[0], joint))
                    continue
                key = f"{base}_mm"
                c = self.vector(key)
                if not 1 <= len(c) <= N_COEFFS:
                    self.fail(key, f"give 1 to {N_COEFFS} polynomial coefficients, got {len(c)}")
                coeffs[g, j, : len(c)] = c * MM
                flag = self.get(f"moment_arms.{group}.{joint}_times_cos_MCP_FE", False)
                if not isinstance(flag, bool):
                    self.fail(f"moment_arms.{group}.{joint}_times_cos_MCP_FE", "must be true or false")
                cos_fe[g, j] = flag
        return coeffs, cos_fe, forms

    def _surface(self, key: str) -> ArmSurface:
        rows = self.get(key)
        if (not isinstance(rows, list) or not rows or not all(isinstance(r, list) and r for r in rows)
                or len({len(r) for r in rows}) != 1):
            self.fail(key, "must be a list of equal-length lists of numbers: c[k][l] multiplies MCP_AB^k MCP_FE^l")
        if len(rows) > (MAX_DEGREE + 1) or len(rows[0]) > (MAX_DEGREE + 1):
            self.fail(key, f"at most {MAX_DEGREE + 1} x {MAX_DEGREE + 1} coefficients (cubic in each angle)")
        flat = [v for r in rows for v in r]
        if not all(isinstance(v, int | float) and not isinstance(v, bool) and np.isfinite(v) for v in flat):
            self.fail(key, "every coefficient must be a finite number")
        return ArmSurface(np.asarray(rows, dtype=float) * MM)

    def _wrap(self, key: str, rom_rad: np.ndarray) -> ArmWrap:
        if not isinstance(self.get(key), dict):
            self.fail(key, "must be a table: { head_radius_mm = R, head_centre_mm = [x, y], band_hold_mm = [x, y] }")
        self.check_keys(key, set(WRAP_KEYS))
        wrap = ArmWrap(self.number(f"{key}.head_radius_mm", 0.0, strict_lo=True) * MM,
                       tuple(self.vector(f"{key}.head_centre_mm", 2) * MM),
                       tuple(self.vector(f"{key}.band_hold_mm", 2) * MM), (float(rom_rad[0]), float(rom_rad[1])))
        problem = wrap.problem()
        if problem:
            self.fail(key, problem)
        return wrap

    def _table(self, key: str, joint: str) -> ArmTable:
        name = self.get(key)
        if not isinstance(name, str) or not name:
            self.fail(key, f"must be the path of a CSV file (relative to this file), got {name!r}")
        given = self.tables.get(name)
        if isinstance(given, ArmTable):
            return given
        try:
            if isinstance(given, str):
                return ArmTable.from_csv_text(given, f"{self.source}: {name}", name, joint)
            return ArmTable.read_csv(self.folder / name, name, joint, key)
        except ParameterError as exc:
            if exc.source:           # a problem inside the table: the table's own file and line
                raise
            self.fail(key, exc.reason)
            raise


# -------------------------------------------------------------------- TOML writing
def _to_doc(p: FingerParams) -> dict:
    def lst(x, scale=1.0):
        return [float(v) / scale for v in np.asarray(x).ravel()]

    c = p.contact
    doc: dict[str, Any] = {
        "schema": SCHEMA,
        "kinematics": {
            "a_mm": lst(p.a_m, MM), "d_mm": lst(p.d_m, MM),
            "alpha_deg": lst(np.degrees(p.alpha_rad)),
            "theta_offset_deg": lst(np.degrees(p.theta_offset_rad)),
            "dh_sign": lst(p.dh_sign),
            "world_from_base_rpy_deg": lst(np.degrees(_matrix_rpy(p.world_from_base))),
            "gravity_m_per_s2": lst(p.gravity_m_per_s2),
        },
        "joints": {
            name: {
                "stiffness_Nmm_per_rad": float(p.joint_stiffness_Nm_per_rad[j]) / MM,
                "damping_Nmms_per_rad": float(p.joint_damping_Nms_per_rad[j]) / MM,
                "rom_deg": lst(np.degrees(p.rom_rad[j])),
            }
            for j, name in enumerate(JOINTS)
        },
        "tendons": {
            "input_stiffness_N_per_mm": {t: float(p.input_stiffness_N_per_m[i]) / N_PER_MM
                                         for i, t in enumerate(TENDONS)},
            "em_stiffness_N_per_mm": _compact(p.em_stiffness_N_per_m / N_PER_MM),
            "em_mass_kg": _compact(p.em_mass_kg),
            "coulomb_coefficient_mm": p.coulomb_coefficient_m / MM,
        },
        "contact": {
            "a_N": c.a_N, "b": c.b, "Kx_N_per_mm": c.Kx_N_per_m / N_PER_MM,
            "Ky_N_per_mm": c.Ky_N_per_m / N_PER_MM, "mu_x": c.mu_x, "mu_y": c.mu_y,
            "pad_radius_mm": c.pad_radius_m / MM, "interaction_point_mm": lst(p.interaction_point_m, MM),
        },
        "bones": {
            bone: {
                "mass_g": float(p.bone_mass_kg[i]) * 1e3,
                "com_from_proximal_joint_mm": lst(p.bone_com_m[i], MM),
                "inertia_kgm2": lst(p.bone_inertia_kgm2[i]),
            }
            for i, bone in enumerate(BONES)
        },
        "moment_arms": {},
        "numerics": {"stick_time_s": p.stick_time_s},
    }
    for g, group in enumerate(MOMENT_ARM_GROUPS):
        entry: dict[str, Any] = {}
        for joint in GROUP_JOINTS[group]:
            j = JOINTS.index(joint)
            form = p.moment_arm_forms.get((group, joint))
            if isinstance(form, ArmTable):
                entry[f"{joint}_table"] = form.file
                continue
            if isinstance(form, ArmSurface):
                entry[f"{joint}_surface_mm"] = [lst(row, MM) for row in form.coeffs_m]
                continue
            if isinstance(form, ArmWrap):
                entry[f"{joint}_wrap"] = {"head_radius_mm": form.head_radius_m / MM,
                                          "head_centre_mm": lst(form.head_centre_m, MM),
                                          "band_hold_mm": lst(form.band_hold_m, MM)}
                continue
            entry[f"{joint}_mm"] = _polynomial(lst(p.moment_arm_coeffs[g, j], MM))
            if p.moment_arm_cos_fe[g, j]:
                entry[f"{joint}_times_cos_MCP_FE"] = True
        doc["moment_arms"][group] = entry
    return doc


def _polynomial(coeffs: list[float]) -> list[float]:
    """Coefficients without their trailing zero terms (at least the constant), as the files write them."""
    while len(coeffs) > 1 and coeffs[-1] == 0.0:
        coeffs = coeffs[:-1]
    return coeffs


def _compact(values: np.ndarray) -> float | list[float]:
    """A single number when all elements agree, else the list."""
    return float(values[0]) if np.ptp(values) == 0 else [float(v) for v in values]


def _rpy_matrix(rpy: np.ndarray) -> np.ndarray:
    """R = Rz(yaw) Ry(pitch) Rx(roll)."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return np.array([
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ])


def _matrix_rpy(R: np.ndarray) -> np.ndarray:
    pitch = np.arcsin(-np.clip(R[2, 0], -1.0, 1.0))
    roll = np.arctan2(R[2, 1], R[2, 2])
    yaw = np.arctan2(R[1, 0], R[0, 0])
    return np.array([roll, pitch, yaw])
