"""sim/kernel_cache.py: compiled kernels live in a per-user folder keyed by every kernel source.

The slow tests run a copy of the package in subprocesses against a temporary cache root, compiling one
small kernel (``contact_into`` in bondgraph.py, which inlines ``point_in_frame`` from kinematics.py) twice.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from uartlab.sim import kernel_cache
from uartlab.sim.kernel_cache import COMPILE_MESSAGE, ENV_VAR, MARKER, cache_key, cache_root, kernel_sources

ROOT = Path(__file__).resolve().parents[2]

# One cheap kernel: the interaction point of the fingertip for a made-up pose (no frames_into compile).
PROBE = """
import json
import numpy as np
from uartlab.sim import FingerParams, bondgraph
from uartlab.sim.compiled import compile_model, no_surface
R = np.tile(np.eye(3), (5, 1, 1))
o = np.arange(15.0).reshape(5, 3) * 1e-2
sc = np.zeros(bondgraph.W_SIZE)
bondgraph.contact_into(compile_model(FingerParams.uart()), no_surface(), np.zeros(4), R, o, sc)
print(json.dumps({"point": sc[bondgraph.W_IP:bondgraph.W_IP + 3].tolist(), "module": bondgraph.__file__}))
"""


def copy_package(dest: Path) -> Path:
    """A minimal importable ``uartlab`` (root + sim/) under dest, laid out as installed; returns its sim/."""
    pkg = dest / "uartlab"
    pkg.mkdir(parents=True)
    for name in ("__init__.py", "_version.py", "errors.py"):
        shutil.copy2(ROOT / "core" / name, pkg / name)   # core/ is installed as the package root uartlab
    shutil.copytree(ROOT / "sim", pkg / "sim", ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    return pkg / "sim"


def run_probe(pkg_parent: Path, cache: Path) -> tuple[dict, str, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "PYTHON"))}
    env.update(PYTHONPATH=str(pkg_parent), PYTHONDONTWRITEBYTECODE="1", **{ENV_VAR: str(cache)})
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", PROBE], cwd=pkg_parent, env=env, capture_output=True, text=True,
                          timeout=240)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1]), proc.stderr, time.perf_counter() - t0


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Cold run, warm run, then the inlined helper edited in kinematics.py and a third run; one cache root."""
    tmp = tmp_path_factory.mktemp("kernel_cache")
    pkg_parent, cache = tmp / "pkg", tmp / "cache"
    sim = copy_package(pkg_parent)
    out = {"sim": sim, "cache": cache}
    out["cold"] = run_probe(pkg_parent, cache)
    out["files_after_cold"] = sorted(p.relative_to(pkg_parent) for p in pkg_parent.rglob("*") if p.is_file())
    out["warm"] = run_probe(pkg_parent, cache)
    kinematics = sim / "kinematics.py"
    src, n = re.subn(r"(\n\s+out\[r\] = )(o\[frame, r\])", r"\g<1>3.0 * \2", kinematics.read_text())
    assert n == 1, "point_in_frame changed: update the edit this test makes"
    kinematics.write_text(src)
    out["edited"] = run_probe(pkg_parent, cache)
    return out


@pytest.mark.slow
@pytest.mark.compute
def test_compile_message_on_a_cold_cache_only(runs):
    (cold, cold_err, cold_s), (warm, warm_err, warm_s) = runs["cold"], runs["warm"]
    assert Path(cold["module"]).is_relative_to(runs["sim"])  # the copy ran, not the installed package
    assert cold_err.count(COMPILE_MESSAGE) == 1, cold_err
    assert COMPILE_MESSAGE not in warm_err and warm_err.strip() == "", warm_err
    assert warm["point"] == cold["point"]
    print(f"cold {cold_s:.1f} s, warm {warm_s:.1f} s")


@pytest.mark.slow
@pytest.mark.compute
def test_editing_a_helper_inlined_from_another_file_recompiles(runs):
    cold, (edited, edited_err, _) = runs["cold"][0], runs["edited"]
    assert edited["point"] != cold["point"]  # numba's own cache=True returned the old point here
    assert COMPILE_MESSAGE in edited_err  # a new key: a new folder, compiled again
    assert len(list((runs["cache"] / "kernels").iterdir())) == 2


@pytest.mark.slow
@pytest.mark.compute
def test_no_file_is_written_inside_the_package(runs):
    assert not [p for p in runs["files_after_cold"] if p.suffix in (".nbi", ".nbc") or "__pycache__" in p.parts]
    folders = list((runs["cache"] / "kernels").iterdir())
    assert folders and all((f / MARKER).exists() and any(f.glob("bondgraph.contact_into-*.nbc")) for f in folders)


def test_cache_root_is_the_env_override_else_the_user_cache(monkeypatch, tmp_path):
    monkeypatch.setenv(ENV_VAR, str(tmp_path))
    assert cache_root() == tmp_path
    monkeypatch.delenv(ENV_VAR)
    from platformdirs import user_cache_dir
    assert cache_root() == Path(user_cache_dir("uartlab", appauthor=False))
    assert not kernel_cache.kernel_dir().is_relative_to(ROOT)  # in this run too (a test may set the override)


def test_kernel_sources_are_the_jitted_modules_and_what_they_import():
    names = set(kernel_sources())
    assert {"bondgraph.py", "kinematics.py", "dynamics.py", "inputs.py", "integrators.py", "jit.py"} <= names
    assert {"state.py", "compiled.py", "names.py"} <= names  # their constants are frozen into the kernels
    assert not names & {"scenarios.py", "finger.py", "ik.py", "urdf.py", "__init__.py"}


def test_key_changes_with_any_kernel_source_only(tmp_path):
    sim = copy_package(tmp_path)
    key = cache_key(sim)
    assert cache_key(sim) == key and key.startswith(f"py{sys.version_info.major}{sys.version_info.minor}-numba")
    with (sim / "scenarios.py").open("a") as f:
        f.write("\n# not a kernel source\n")
    assert cache_key(sim) == key
    for name in ("state.py", "dynamics.py"):
        with (sim / name).open("a") as f:
            f.write("\n# edited\n")
        assert cache_key(sim) != key
        key = cache_key(sim)


def test_prune_keeps_the_most_recently_used_folders(tmp_path):
    for i in range(5):
        folder = tmp_path / f"py311-numba0.1-{i:016x}"
        folder.mkdir()
        (folder / MARKER).write_text("")
        os.utime(folder / MARKER, (1000.0 + i, 1000.0 + i))
        os.utime(folder, (1000.0 + i, 1000.0 + i))
    (tmp_path / "not-ours").mkdir()
    kernel_cache._prune(tmp_path, keep=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["not-ours", "py311-numba0.1-0000000000000003",
                                                          "py311-numba0.1-0000000000000004"]


def test_an_unwritable_cache_root_warns_once_and_the_model_still_imports(tmp_path):
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")
    env = {**os.environ, ENV_VAR: str(not_a_folder)}
    code = "import uartlab.sim.bondgraph as b; print(type(b.rhs._cache).__name__)"
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "NullCache", proc.stderr
    assert proc.stderr.count("cannot write the kernel cache") == 1 and ENV_VAR in proc.stderr
