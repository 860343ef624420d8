"""The linters are part of the test suite (they come with the [test] extra), so a finding fails CI: ruff, the
import contracts of pyproject's [tool.importlinter] (DESIGN.md's layers) and mypy ([tool.mypy]).

lint-imports and mypy find a package's modules on the file system, and pyproject's package-dir maps several
folders (core/ is `uartlab`, app/ is `uartlab.app` ...) that the editable install joins only at import time.
So both read a tree of links laid out as installed, in .cache/lint/ (git ignores it), with mypy's cache beside
it: a second run checks only what changed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
LINT_DIR = ROOT / ".cache" / "lint"


def _tool(name: str) -> str:
    beside_python = Path(sys.executable).with_name(name)
    found = str(beside_python) if beside_python.exists() else shutil.which(name)
    assert found, f"{name} is not installed: pip install -e '.[test]'"
    return found


def installed_tree() -> Path:
    """A folder holding `uartlab/` as pip installs it, of links into this checkout (pyproject's package-dir)."""
    package_dirs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    tree = LINT_DIR / "tree"
    shutil.rmtree(tree, ignore_errors=True)
    for package, folder in sorted(package_dirs.items()):   # parents before children
        target = tree.joinpath(*package.split("."))
        if "." not in package:   # the package root: its modules side by side with the mapped subpackages
            target.mkdir(parents=True)
            for entry in (ROOT / folder).iterdir():
                if entry.suffix == ".py":
                    (target / entry.name).symlink_to(entry)
        else:
            target.symlink_to(ROOT / folder, target_is_directory=True)
    return tree


@pytest.fixture(scope="module")
def tree() -> Path:
    return installed_tree()


def _in_checkout(report: str, tree: Path) -> str:
    """The report with the tree's paths turned into the checkout's (core/hub.py, not .cache/lint/tree/...)."""
    def real(match: re.Match) -> str:
        return os.path.relpath(os.path.realpath(ROOT / match.group(0)), ROOT)
    tree_in_report = f"(?:{re.escape(str(tree))}|{re.escape(str(tree.relative_to(ROOT)))})"
    return re.sub(tree_in_report + r"/[\w./]+\.py", real, report)


def test_ruff_is_clean():
    proc = subprocess.run([_tool("ruff"), "check", "."], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_import_layers(tree):
    env = {**os.environ, "PYTHONPATH": str(tree)}
    proc = subprocess.run([_tool("lint-imports"), "--no-cache"], cwd=ROOT, env=env, capture_output=True, text=True)
    print(proc.stdout + proc.stderr)   # the whole report, shown when the test fails
    assert proc.returncode == 0 and "0 broken" in proc.stdout, "import contracts broken (report above)"


@pytest.mark.compute
@pytest.mark.slow   # ~45 s with a cold cache (the first run in a checkout), ~2 s after
@pytest.mark.timeout(900)   # a cold cache on a loaded machine
def test_types(tree):
    env = {**os.environ, "MYPYPATH": str(tree)}
    proc = subprocess.run([_tool("mypy"), "-p", "uartlab", "--cache-dir", str(LINT_DIR / "mypy")],
                          cwd=ROOT, env=env, capture_output=True, text=True)
    print(_in_checkout(proc.stdout + proc.stderr, tree))   # every finding, shown when the test fails
    assert proc.returncode == 0, "mypy found type errors (report above)"
