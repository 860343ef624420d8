"""docs/session-file.md's examples work as written on a real twin session: every ```python block runs (in a
folder where the session is `session.h5` and the doc's `uartlab export` commands have been run), and every
dataset, group and attribute the ```matlab blocks name is in the file."""

from __future__ import annotations

import re
import runpy
import shlex
import shutil
from pathlib import Path

import h5py
import pytest
from uartlab.app.cli import main as cli

DOC = Path(__file__).parents[1] / "docs" / "session-file.md"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.M | re.S)
PLACEHOLDER = re.compile(r"<|NNNN|\.(csv|mat)$")   # "<stream>", "/trials/NNNN_<name>", export files


def blocks(language: str) -> list[str]:
    return [body for lang, body in BLOCK.findall(DOC.read_text(encoding="utf-8")) if lang == language]


@pytest.fixture(scope="module")
def folder(twin_session_file, tmp_path_factory) -> Path:
    """The session as `session.h5`, with what the doc's shell lines make of it (session_csv/, session.mat)."""
    work = tmp_path_factory.mktemp("session_doc")
    shutil.copy(twin_session_file, work / "session.h5")
    commands = [shlex.split(line.split("#")[0]) for body in blocks("bash") for line in body.splitlines()
                if line.startswith("uartlab ")]
    assert commands, "the doc shows no uartlab command"
    for argv in commands:
        argv = [str(work / a) if a == "session.h5" else a for a in argv[1:]]
        assert cli.main(argv) == 0, argv
    return work


@pytest.mark.parametrize("index", range(len(blocks("python"))))
def test_python_example_runs_as_written(index, folder, monkeypatch, capsys):
    code = blocks("python")[index]
    monkeypatch.chdir(folder)
    script = folder / f"example_{index}.py"
    script.write_text(code, encoding="utf-8")
    runpy.run_path(str(script), run_name="__main__")
    assert capsys.readouterr().out.strip(), "an example prints what it read"


def matlab_names() -> list[tuple[str, str | None]]:
    """(HDF5 path, attribute or None) for every h5read/h5readatt/h5info the MATLAB blocks call."""
    found = []
    for body in blocks("matlab"):
        for path, attr in re.findall(r"h5readatt\(f,\s*'([^']+)',\s*'([^']+)'\)", body):
            found.append((path, attr))
        for path in re.findall(r"h5(?:read|info)\(f,\s*'([^']+)'", body):
            found.append((path, None))
    return found


def test_the_matlab_examples_name_what_the_file_has(folder):
    names = matlab_names()
    assert len(names) >= 10
    with h5py.File(folder / "session.h5", "r") as f:
        for path, attr in names:
            assert path == "/" or path in f, f"{path} is not in a real session file"
            if attr is not None:
                assert attr in f[path].attrs, f"{path} has no attribute {attr!r}"


def test_the_doc_names_no_dataset_a_session_lacks(folder):
    """Every /streams/... or /trials/... path written anywhere in the doc, placeholders aside, exists."""
    text = DOC.read_text(encoding="utf-8")
    paths = {p.rstrip("/.,;:)") for p in re.findall(r"['\"`](/?(?:streams|trials|config|clock|events)[\w/.+@-]*)",
                                                  text)}
    with h5py.File(folder / "session.h5", "r") as f:
        missing = sorted(p for p in paths if not PLACEHOLDER.search(p) and p.strip("/") and p.strip("/") not in f)
    assert not missing
