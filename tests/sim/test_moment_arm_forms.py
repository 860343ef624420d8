"""Moment arms as a lab supplies them: a surface over both MCP angles and tabulated grids (CSV, with units),
read from the parameter file, evaluated by the compiled kernels, written back beside the file."""

from __future__ import annotations

import numpy as np
import pytest
from uartlab.sim import Finger, FingerParams
from uartlab.sim import scenarios as sc
from uartlab.sim.errors import ParameterError
from uartlab.sim.moment_arm_forms import ArmSurface, ArmTable
from uartlab.sim.names import GROUP_JOINTS, JOINTS, SEGMENTS

FDP = SEGMENTS.index("FDP")
ED = SEGMENTS.index("ED")
# A surface as a characterization fits one (mm, rad): flexion arm growing with flexion, shrinking with abduction.
SURFACE_MM = [[9.0, 1.5, -0.4], [0.3, -0.2, 0.0], [-1.0, 0.0, 0.0]]


@pytest.fixture(scope="module")
def params():
    return FingerParams.uart()


def poses(n: int, seed: int = 0) -> np.ndarray:
    """Poses well inside the default ROM (none on a table's node, where a derivative has two sides)."""
    rng = np.random.default_rng(seed)
    return np.radians(rng.uniform([-15, -5, 5, 5], [15, 75, 95, 75], size=(n, 4)))


def mcp_table(fn) -> ArmTable:
    """``fn(ab, fe)`` (rad -> m) every 5 deg of abduction and 10 deg of flexion."""
    ab, fe = np.radians(np.arange(-20, 21, 5.0)), np.radians(np.arange(-10, 91, 10.0))
    values = np.array([[fn(a, f) for f in fe] for a in ab])
    return ArmTable(("MCP_AB", "MCP_FE"), (ab, fe), values, file="arms/mcp.csv")


def test_a_surface_is_evaluated_by_the_kernels_as_written(params):
    surface = ArmSurface(np.array(SURFACE_MM) * 1e-3)
    finger = Finger(params.replace(moment_arm_forms={("FDP", "MCP_FE"): surface}))
    c = np.array(SURFACE_MM) * 1e-3
    for q in poses(20):
        want = sum(c[k, l] * q[0] ** k * q[1] ** l for k in range(3) for l in range(3))
        assert finger.moment_arms(q)[FDP, 1] == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("form", ["surface", "table"])
def test_the_derivative_of_a_2d_form_matches_finite_differences_of_the_kernels(params, form):
    """The patches' analytic gradient (what a fit or a stiffness term uses) against central differences
    of the arm the compiled kernels compute."""
    if form == "surface":
        arm = ArmSurface(np.array(SURFACE_MM) * 1e-3)
    else:
        arm = mcp_table(lambda a, f: 1e-3 * (9.0 + 2.0 * np.sin(f) - 1.5 * a * a + 0.5 * a * f))
    finger = Finger(params.replace(moment_arm_forms={("FDP", "MCP_FE"): arm}))
    patches, h = arm.patches(), 1e-6
    for q in poses(20, seed=1):
        r, grad = patches(q)
        assert finger.moment_arms(q)[FDP, 1] == pytest.approx(r, rel=1e-12)
        for j in (0, 1):
            dq = np.zeros(4)
            dq[j] = h
            fd = (finger.moment_arms(q + dq)[FDP, 1] - finger.moment_arms(q - dq)[FDP, 1]) / (2 * h)
            assert fd == pytest.approx(grad[j], rel=1e-5, abs=1e-9), (JOINTS[j], q)
        assert grad[2] == grad[3] == 0.0


def test_a_2d_table_interpolates_smoothly_between_its_nodes(params):
    """Sampled every 5 x 10 deg from a smooth arm, the bicubic spline is within 1 um of it between the nodes
    and exact on them; outside the grid it holds the edge value."""
    def truth(a, f):
        return 1e-3 * (9.0 + 2.0 * np.sin(f) - 1.5 * a * a + 0.5 * a * f)

    table = mcp_table(truth)
    finger = Finger(params.replace(moment_arm_forms={("ED", "MCP_FE"): table}))
    for q in poses(50, seed=2):
        assert finger.moment_arms(q)[ED, 1] == pytest.approx(truth(q[0], q[1]), abs=1e-6)
    node = np.radians([10.0, 30.0, 0, 0])
    assert finger.moment_arms(node)[ED, 1] == pytest.approx(truth(*node[:2]), abs=1e-15)
    beyond = np.radians([10.0, 120.0, 0, 0])
    assert finger.moment_arms(beyond)[ED, 1] == pytest.approx(truth(node[0], np.radians(90.0)), abs=1e-15)


def test_every_form_on_shared_and_own_grids_is_its_own_patches_value(params):
    """The kernels find a pose's cell once per grid and evaluate every arm on it: with tables on one grid
    (the MCP arms of three tendons), a table on a grid of its own, unequal steps (a search) and a surface
    (no grid) in one model, each arm is what its own patches give, and the polynomial arms are untouched."""
    from uartlab.sim.moment_arm_forms import tabulate

    forms = {k: v for k, v in tabulate(params).items() if k[0] in ("FDP", "FDS", "ED") and k[1].startswith("MCP")}
    forms["DI", "MCP_FE"] = mcp_table(lambda a, f: 1e-3 * (6.0 + np.cos(f) + a))
    pip = np.radians([0.0, 7.0, 20.0, 45.0, 60.0, 100.0])   # unequal steps
    forms["FDP", "PIP"] = ArmTable(("PIP",), (pip,), 1e-3 * (7.0 + np.sin(pip)), file="arms/fdp_pip.csv")
    forms["LUM", "MCP_FE"] = ArmSurface(np.array(SURFACE_MM) * 1e-3)
    finger, polynomial = Finger(params.replace(moment_arm_forms=forms)), Finger(params)
    for q in poses(30, seed=3):
        arms, plain = finger.moment_arms(q), polynomial.moment_arms(q)
        for (group, joint), form in forms.items():
            assert arms[SEGMENTS.index(group), JOINTS.index(joint)] == pytest.approx(form.patches()(q)[0],
                                                                                     rel=1e-12), (group, joint)
        for s, seg in enumerate(SEGMENTS):
            for j, joint in enumerate(JOINTS):
                if (seg, joint) not in forms and plain[s, j] != 0.0:
                    assert arms[s, j] == plain[s, j], (seg, joint)


def test_tables_sampled_from_the_defaults_simulate_the_defaults(params):
    """Every polynomial moment arm replaced by its own samples every 10 deg over the joint's range (the MCP
    arms on 2-D grids): the spline reproduces a quadratic and is within 0.1 um of a quadratic times
    cos(MCP_FE), so the trials settle where the polynomial model does."""
    forms = tabulate_all(params)
    assert len(forms) == sum(len(joints) for joints in GROUP_JOINTS.values())
    tabled = Finger(params.replace(moment_arm_forms=forms))
    plain = Finger(params)
    for q in poses(10, seed=3):
        assert np.allclose(tabled.moment_arms(q), plain.moment_arms(q), rtol=0, atol=1e-7)
    for trial in (sc.free_motion_trial("FDP"), sc.free_motion_trial("ED")):
        a, b = sc.run_trial(plain, trial), sc.run_trial(tabled, trial)
        assert np.allclose(a.final.theta_deg, b.final.theta_deg, atol=0.01)


def tabulate_all(params: FingerParams) -> dict:
    from uartlab.sim.moment_arm_forms import tabulate

    return tabulate(params, step_deg=10.0)


def test_the_forms_round_trip_through_the_parameter_file_and_its_tables(params, tmp_path):
    forms = {("FDP", "MCP_FE"): ArmSurface(np.array(SURFACE_MM) * 1e-3),
             ("ED", "MCP_FE"): mcp_table(lambda a, f: 1e-3 * (9.0 + 2.0 * np.sin(f))),
             ("FDS", "PIP"): ArmTable(("PIP",), (np.radians([0.0, 30, 60, 90, 110]),),
                                      1e-3 * np.array([8.0, 9.0, 9.5, 9.2, 8.8]), file="arms/fds_pip.csv",
                                      comment="# FDS over PIP, a test's own numbers")}
    written = params.replace(moment_arm_forms=forms)
    out = tmp_path / "lab" / "params.toml"
    out.parent.mkdir()
    text = written.to_toml(out)
    assert 'PIP_table = "arms/fds_pip.csv"' in text and "MCP_FE_surface_mm = [" in text
    assert (out.parent / "arms" / "fds_pip.csv").read_text().splitlines()[:3] == [
        "# FDS over PIP, a test's own numbers", "PIP_deg,r_mm", "0,8"]
    back = FingerParams.from_toml(out)
    assert back.to_toml() == text
    a, b = Finger(written), Finger(back)
    for q in poses(10, seed=4):
        assert np.allclose(a.moment_arms(q), b.moment_arms(q), rtol=1e-9, atol=0)  # the CSV keeps 10 digits


BASE_TABLE = "PIP_deg,r_mm\n0,8\n45,9\n90,9.5\n"


@pytest.mark.parametrize("csv, line, reason", [
    ("PIP_deg,r_mm\n0,8\n45,x\n90,9.5\n", 3, "r_mm: not a number: 'x'"),
    ("PIP_deg,r_mm\n0,8\n45,9\n45,9.1\n", 4, "this grid point is given twice"),
    ("PIP_grad,r_mm\n0,8\n45,9\n", 1, "column 'PIP_grad': expected PIP_deg or PIP_rad"),
    ("# provenance\nPIP_deg,r_in\n0,8\n45,9\n", 2, "column 'r_in': expected r_mm or r_m"),
    ("PIP_deg,r_mm\n0,8,1\n", 2, "expected 2 values, got 3"),
    ("PIP_deg,r_mm\n0,8\n", None, "PIP_deg: needs at least 2 distinct angles, got 1"),
    ("PIP_deg,r_mm\n0,nan\n45,9\n", 2, "r_mm: must be finite, got nan"),
])
def test_a_bad_table_is_one_line_naming_its_file_and_line(params, tmp_path, csv, line, reason):
    (tmp_path / "fds.csv").write_text(csv)
    path = write_params_with(params, tmp_path, 'PIP_table = "fds.csv"')
    with pytest.raises(ParameterError) as err:
        FingerParams.from_toml(path)
    where = f"{tmp_path / 'fds.csv'}:{line}: " if line else f"{tmp_path / 'fds.csv'}: "
    assert str(err.value) == where + reason


def test_an_incomplete_2d_grid_names_the_missing_point(params, tmp_path):
    (tmp_path / "mcp.csv").write_text("MCP_AB_deg,MCP_FE_deg,r_mm\n-10,0,9\n-10,45,9.5\n10,0,9.1\n")
    path = write_params_with(params, tmp_path, 'MCP_FE_table = "mcp.csv"', joint="MCP_FE", group="ED")
    with pytest.raises(ParameterError, match=r"mcp.csv: the grid is not complete: no row for MCP_AB_deg 10, "
                                             r"MCP_FE_deg 45$"):
        FingerParams.from_toml(path)


@pytest.mark.parametrize("entry, reason", [
    ('PIP_table = "nowhere.csv"', "cannot read the table 'nowhere.csv': no such file or directory"),
    ('PIP_table = 3', "must be the path of a CSV file (relative to this file), got 3"),
])
def test_a_table_entry_that_cannot_be_read_names_the_parameter_files_line(params, tmp_path, entry, reason):
    path = write_params_with(params, tmp_path, entry)
    with pytest.raises(ParameterError) as err:
        FingerParams.from_toml(path)
    line = path.read_text().splitlines().index(entry) + 1
    assert str(err.value) == f"{path}:{line}: moment_arms.FDS.PIP_table: {reason}"


def test_two_forms_for_one_arm_or_a_cosine_on_a_table_are_refused(params, tmp_path):
    (tmp_path / "fds.csv").write_text(BASE_TABLE)
    text = params.to_toml()
    both = text.replace("[moment_arms.FDS]\n", '[moment_arms.FDS]\nPIP_table = "fds.csv"\n', 1)
    (tmp_path / "both.toml").write_text(both)
    with pytest.raises(ParameterError, match=r"moment_arms.FDS.PIP_table: give one of PIP_mm, PIP_table, only one$"):
        FingerParams.from_toml(tmp_path / "both.toml")
    # DI's abduction arm is a polynomial times cos(MCP_FE) in the defaults: a surface in its place, flag kept
    cos = _drop_key(text, "DI", "MCP_AB_mm").replace("[moment_arms.DI]\n",
                                                     "[moment_arms.DI]\nMCP_AB_surface_mm = [[9.0]]\n", 1)
    (tmp_path / "cos.toml").write_text(cos)
    with pytest.raises(ParameterError, match=r"moment_arms.DI.MCP_AB_times_cos_MCP_FE: applies to the polynomial "
                                             r"form \(_mm\) only"):
        FingerParams.from_toml(tmp_path / "cos.toml")


def write_params_with(params, folder, entry: str, joint: str = "PIP", group: str = "FDS"):
    """The defaults with one moment arm given as ``entry`` instead of its polynomial."""
    text = _drop_key(params.to_toml(), group, f"{joint}_mm")
    text = text.replace(f"[moment_arms.{group}]\n", f"[moment_arms.{group}]\n{entry}\n", 1)
    path = folder / "params.toml"
    path.write_text(text)
    return path


def _section(text: str, group: str) -> str:
    start = text.index(f"[moment_arms.{group}]\n")
    end = text.find("\n[", start + 1)
    return text[start:end if end > 0 else None]


def _drop_key(text: str, group: str, key: str) -> str:
    section = _section(text, group)
    kept = "\n".join(ln for ln in section.splitlines() if not ln.startswith(f"{key} ="))
    return text.replace(section, kept, 1)


@pytest.mark.parametrize("name", ["../shared/fds.csv", "/tmp/elsewhere/fds.csv"])
def test_writing_never_puts_a_table_outside_the_chosen_folder(params, tmp_path, name):
    table = ArmTable(("PIP",), (np.radians([0.0, 45.0, 90.0]),), 1e-3 * np.array([8.0, 9.0, 9.5]), file=name)
    out = tmp_path / "lab" / "params.toml"
    out.parent.mkdir()
    with pytest.raises(ParameterError, match=r"params.toml: the moment-arm table .* is outside this file's folder"):
        params.replace(moment_arm_forms={("FDS", "PIP"): table}).to_toml(out)
    assert list(tmp_path.rglob("*.csv")) == [] and not out.exists()
