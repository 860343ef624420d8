"""The docs name only what exists: every repository path in README.md and docs/*.md, every file and folder of
the README's tour (its indented tree, joined into paths) and every `uartlab.module` named there is in this
checkout. So the tour cannot drift from the tree unnoticed."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PACKAGE_DIRS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
# Paths are checked when they start in one of the checkout's own top folders; others are the user's
# (recordings/, calibrations/ ...), HDF5 paths (/streams/...) or units (N/mm).
TOP_FOLDERS = {*PACKAGE_DIRS.values(), "docs", "tests", "examples", ".ci"}

PATH_TOKEN = re.compile(r"[\w.*<>/-]*/[\w.*<>/-]*")
DOTTED = re.compile(r"\buartlab(?:\.[A-Za-z_]\w*)+(?![\w/])")
TOUR_ENTRY = re.compile(r"^( *)(\S+)")


def named_paths(text: str) -> set[str]:
    """Repository paths named anywhere in the text (``app/rig/rig.py``, ``docs/``), placeholders left out."""
    found = set()
    for token in PATH_TOKEN.findall(text):
        token = token.strip("*.,;:")
        if any(c in token for c in "*<>") or token.startswith("/"):
            continue
        if token.split("/")[0] in TOP_FOLDERS:
            found.add(token)
    return found


def tour_paths(readme: str) -> list[str]:
    """Every entry of the tour's tree as a path: a name indented under ``folder/`` is ``folder/name``."""
    section = readme.split("\n## Tour\n", 1)[1]
    block = section.split("```", 2)[1]
    stack: list[str] = []  # the folders the current line is nested in
    paths = []
    for line in block.splitlines()[1:]:
        m = TOUR_ENTRY.match(line)
        if m is None:
            continue
        indent, name = len(m.group(1)), m.group(2)
        # An entry sits at two spaces per level, at most one level below the last folder; deeper lines
        # continue the description above them.
        if indent % 2 or indent // 2 > len(stack) or not ("." in name or name.endswith("/")):
            continue
        del stack[indent // 2:]
        path = "".join(stack) + name
        paths.append(path)
        if name.endswith("/"):
            stack.append(name)
    return paths


def _defines(module_text: str, name: str) -> bool:
    return re.search(rf"^(?:class|def)\s+{name}\b|^{name}\s*[:=]|^(?:from|import)\s.*\b{name}\b",
                     module_text, re.M) is not None


def dotted_problem(dotted: str) -> str | None:
    """Why ``uartlab.a.b[.Attr]`` names nothing in the checkout, or None: the package-dir mapping of
    pyproject.toml, then folders and modules, then at most one name the module defines."""
    parts = dotted.split(".")
    for n in range(len(parts), 0, -1):
        if ".".join(parts[:n]) in PACKAGE_DIRS:
            where, rest = ROOT / PACKAGE_DIRS[".".join(parts[:n])], parts[n:]
            break
    module = where / "__init__.py"
    while rest and (where / rest[0]).is_dir():
        where, rest = where / rest[0], rest[1:]
        module = where / "__init__.py"
    if rest and (where / f"{rest[0]}.py").is_file():
        module, rest = where / f"{rest[0]}.py", rest[1:]
    if not rest:
        return None
    if len(rest) == 1 and module.is_file() and _defines(module.read_text(), rest[0]):
        return None
    return f"{dotted}: {'.'.join(rest)} is not in {module.relative_to(ROOT)}"


def problems(doc_name: str, text: str) -> list[str]:
    missing = [f"{doc_name}: {p}" for p in sorted(named_paths(text)) if not (ROOT / p).exists()]
    missing += [f"{doc_name}: {why}" for d in sorted(set(DOTTED.findall(text))) if (why := dotted_problem(d))]
    if doc_name == "README.md":
        missing += [f"README.md tour: {p}" for p in tour_paths(text) if not (ROOT / p).exists()]
    return missing


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_path_the_docs_name_exists(doc):
    assert problems(doc.name, doc.read_text()) == []


def test_the_tour_lists_the_package_rooms():
    listed = set(tour_paths((ROOT / "README.md").read_text()))
    assert {"core/hub.py", "app/rig/rig.py", "app/gui/panels/rig.py", "drivers/twins/plant.py"} <= listed


def test_a_made_up_path_or_module_is_reported():
    readme = ("# x\n\n## Tour\n\n```\napp/             the app\n  rig/             the rig\n"
              "    rig.py           real\n    gone.py          made up\n"
              "                     a description line, not an entry.py\n```\n")
    text = readme + "See app/run/nowhere.py, docs/architecture.md and `uartlab.app.rig.rig.NoSuchRig`.\n"
    assert problems("README.md", text) == [
        "README.md: app/run/nowhere.py",
        "README.md: uartlab.app.rig.rig.NoSuchRig: NoSuchRig is not in app/rig/rig.py",
        "README.md tour: app/rig/gone.py",
    ]


def test_every_module_is_in_the_tour():
    """The other way round: a module added to the package without a line in the tour fails here. The NatNet
    codec's modules are described on their folder's line; package __init__ and __main__ files need none."""
    readme = (ROOT / "README.md").read_text()
    listed = set(tour_paths(readme))
    natnet_line = next(line for line in readme.splitlines() if line.strip().startswith("natnet/"))
    unlisted = []
    for folder in PACKAGE_DIRS.values():
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if path.name in ("__init__.py", "__main__.py") or rel in listed:
                continue
            if rel.startswith("drivers/natnet/") and path.name in readme.split("## Tour", 1)[1] + natnet_line:
                continue
            unlisted.append(rel)
    assert unlisted == []
