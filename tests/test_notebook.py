"""Jupyter notebooks end to end: real notebooks written with nbformat, linted, fixed and
linted again through the command line (docs/notebooks.md)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import nbformat
import pytest

from devlint.sources.notebook import Notebook, read_cell


def _devlint(*args, cwd):
    return subprocess.run([sys.executable, "-m", "devlint", *args], cwd=cwd,
                          capture_output=True, text=True)


def _notebook(path, cells, **write):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    out = []
    for c in cells:
        if isinstance(c, str):
            out.append(nbformat.v4.new_code_cell(c))
        else:
            out.append(c)
    nb.cells = out
    nbformat.write(nb, str(path), **write)
    return nb


CELLS = [
    nbformat.v4.new_markdown_cell("# Training\n`x.to(\"cuda\")` in prose is no finding"),
    "%matplotlib inline\n%load_ext autoreload\nimport torch\n!pip install -q einops",
    'x = torch.ones(3)\ny = x.to("cuda")\ntorch.cuda.synchronize()',
    "!CUDA_VISIBLE_DEVICES=0 python train.py\nfiles = !ls\nx?",
    "%%bash\nCUDA_VISIBLE_DEVICES=0 python train.py\n",
    "z = torch.zeros(2, device='cuda')  # noqa: DL103\nw = torch.zeros(2, device='cuda')",
]


@pytest.fixture
def project(tmp_path):
    nb = _notebook(tmp_path / "train.ipynb", CELLS)
    nb.cells[2].outputs = [nbformat.v4.new_output("stream", text="tensor([1., 1., 1.])\n")]
    nb.cells[2].execution_count = 7
    nb.cells[2].metadata["tags"] = ["keep-me"]
    nbformat.write(nb, str(tmp_path / "train.ipynb"))
    return tmp_path


def test_check_reports_cell_and_row(project):
    r = _devlint("check", "--no-cache", "train.ipynb", cwd=project)
    assert r.returncode == 1, r.stderr
    lines = [line for line in r.stdout.splitlines() if line.startswith("train.ipynb:")]
    assert lines == [
        "train.ipynb:cell 3:2:10: DL101 [*] Hardcoded CUDA device `\"cuda\"` passed to `.to()`",
        "train.ipynb:cell 3:3:1: DL401 [*] `torch.cuda.synchronize` is CUDA-only; use "
        "`torch.accelerator.synchronize`",
        "train.ipynb:cell 4:1:2: DL302 Hardcoded `CUDA_VISIBLE_DEVICES` command prefix; Intel "
        "XPU, Ascend NPU and other devices ignore it",
        "train.ipynb:cell 5:2:1: DL302 [*] Hardcoded `CUDA_VISIBLE_DEVICES` command prefix; "
        "Intel XPU, Ascend NPU and other devices ignore it",
        "train.ipynb:cell 6:2:27: DL103 [*] Hardcoded CUDA device in `device='cuda'`",
    ]
    # magics, `!` escapes and `obj?` are no syntax errors; the noqa of cell 6 row 1 holds
    assert "DL999" not in r.stdout


def test_json_output_has_the_cell(project):
    r = _devlint("check", "--no-cache", "--output-format", "json", "train.ipynb", cwd=project)
    found = json.loads(r.stdout)
    first = found[0]
    assert (first["cell"], first["code"], first["location"], first["end_location"]) == (
        3, "DL101", {"row": 2, "column": 10}, {"row": 2, "column": 16})
    assert first["noqa_row"] == 2
    bang = next(d for d in found if d["cell"] == 4)
    # the selector block cannot go in a `!` line: shown, not applied
    assert bang["fix"]["applicability"] == "display-only"
    assert "not applied in a notebook `!` line" in bang["fix"]["message"]


def test_fix_rewrites_only_the_changed_cells(project):
    path = project / "train.ipynb"
    before = json.loads(path.read_text(encoding="utf-8"))
    r = _devlint("check", "--no-cache", "--fix", "train.ipynb", cwd=project)
    assert r.returncode == 1, r.stdout + r.stderr  # the `!` line is left for a human
    after_text = path.read_text(encoding="utf-8")
    after = json.loads(after_text)
    nbformat.validate(nbformat.reads(after_text, as_version=4))
    # the file's formatting: nbformat's indent of 1, its key order, its trailing newline
    assert after_text.startswith('{\n "cells": [\n') and after_text.endswith("}\n")
    assert list(after) == list(before)
    changed = {i for i, (a, b) in enumerate(zip(before["cells"], after["cells"])) if a != b}
    assert changed == {2, 4, 5}
    for i in range(len(before["cells"])):
        a, b = before["cells"][i], after["cells"][i]
        assert {k: v for k, v in a.items() if k != "source"} == \
               {k: v for k, v in b.items() if k != "source"}  # outputs, metadata, ids kept
        assert isinstance(b["source"], list)
    fixed = "".join(after["cells"][2]["source"])
    assert "torch.accelerator.synchronize()" in fixed and '"cuda"' not in fixed
    assert "".join(after["cells"][4]["source"]).startswith("%%bash\n# The variable")
    # a second run finds only what has no fix here, and changes nothing
    r2 = _devlint("check", "--no-cache", "--fix", "train.ipynb", cwd=project)
    assert path.read_text(encoding="utf-8") == after_text
    assert [line.split(": ")[0] for line in r2.stdout.splitlines()
            if line.startswith("train.ipynb")] == ["train.ipynb:cell 4:1:2"]


def test_source_as_one_string_and_other_formatting_kept(tmp_path):
    cells = [nbformat.v4.new_code_cell('import torch\nt = torch.ones(1).cuda()\n'),
             nbformat.v4.new_code_cell("print('ünïcode')")]
    nb = nbformat.v4.new_notebook(cells=cells)
    data = json.loads(nbformat.writes(nb))
    data["cells"][0]["source"] = "import torch\nt = torch.ones(1).cuda()\n"  # a string
    text = json.dumps(data, indent=2, ensure_ascii=True)  # no trailing newline
    path = tmp_path / "n.ipynb"
    path.write_text(text, encoding="utf-8")
    _devlint("check", "--no-cache", "--fix", "n.ipynb", cwd=tmp_path)
    new = path.read_text(encoding="utf-8")
    assert not new.endswith("\n") and new.startswith('{\n  "cells"')
    assert "\\u00fc" in new  # ensure_ascii kept
    src = json.loads(new)["cells"][0]["source"]
    assert isinstance(src, str) and ".cuda()" not in src and src.endswith("\n")


def test_unreproducible_formatting_is_not_rewritten(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('x.to("cuda")')])
    text = json.dumps(json.loads(nbformat.writes(nb)), indent=1).replace('": ', '":  ')
    path = tmp_path / "odd.ipynb"
    path.write_text(text, encoding="utf-8")
    r = _devlint("check", "--no-cache", "--fix", "odd.ipynb", cwd=tmp_path)
    assert path.read_text(encoding="utf-8") == text
    assert "formatting cannot be reproduced" in r.stdout + r.stderr
    assert r.returncode == 1


def test_diff_shows_cells(project):
    r = _devlint("check", "--no-cache", "--diff", "train.ipynb", cwd=project)
    assert r.returncode == 1
    assert "--- a/train.ipynb:cell 3\n+++ b/train.ipynb:cell 3\n" in r.stdout
    assert '-y = x.to("cuda")\n' in r.stdout


def test_a_broken_cell_does_not_hide_the_others(tmp_path):
    _notebook(tmp_path / "b.ipynb", ["def f(:\n    pass", 'x.to("cuda")'])
    r = _devlint("check", "--no-cache", "b.ipynb", cwd=tmp_path)
    assert "b.ipynb:cell 1:1:7: DL999" in r.stdout
    assert "b.ipynb:cell 2:1:6: DL101" in r.stdout


def test_walk_discovers_notebooks_and_caches_them(tmp_path):
    (tmp_path / "pkg").mkdir()
    for i in range(4):  # enough files for the pool and the project stage
        (tmp_path / "pkg" / f"m{i}.py").write_text(f"import torch\nt{i} = torch.ones(1).cuda()\n")
    _notebook(tmp_path / "pkg" / "explore.ipynb", ['x.to("cuda")'])
    cache = tmp_path / "cache"
    first = _devlint("check", "--cache-dir", str(cache), ".", cwd=tmp_path)
    assert "pkg/explore.ipynb:cell 1:1:6: DL101" in first.stdout
    second = _devlint("check", "--cache-dir", str(cache), ".", cwd=tmp_path)
    assert second.stdout == first.stdout and second.returncode == first.returncode == 1


def test_non_python_kernel_is_not_read_as_python(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('x <- "cuda"')])
    nb.metadata["kernelspec"] = {"name": "ir", "display_name": "R", "language": "R"}
    nbformat.write(nb, str(tmp_path / "r.ipynb"))
    r = _devlint("check", "--no-cache", "r.ipynb", cwd=tmp_path)
    assert r.returncode == 0, r.stdout


@pytest.mark.parametrize("source, python, shells", [
    ("!ls -la\nx = 1", "0      \nx = 1", ["ls -la"]),
    ("files = !ls\n", "files = 0  \n", ["ls"]),
    ("%time y = x.cuda()", "0;    y = x.cuda()", []),
    ("%env CUDA_VISIBLE_DEVICES=0", "0" + " " * 26, ["export CUDA_VISIBLE_DEVICES=0"]),
    ("%env CUDA_VISIBLE_DEVICES 0", "0" + " " * 26, ["export CUDA_VISIBLE_DEVICES=0"]),
    ("if x:\n    !nvidia-smi \\\n      -L\n", "if x:\n    0            \n        \n",
     ["nvidia-smi \\\n      -L"]),
    ("%%bash\necho hi\n", "      \n       \n", ["echo hi\n"]),
    ("%%timeit\nx.cuda()\n", "        \nx.cuda()\n", []),
    ("x = 1\n(a\n % b)", "x = 1\n(a\n % b)", []),  # valid Python: nothing is an escape
])
def test_escapes(source, python, shells):
    cell = read_cell(source)
    assert cell.python == python
    assert len(cell.python) == len(source)
    assert [r.text for r in cell.shells] == shells
    for r in cell.shells:  # every mapped piece is the cell's own text
        for s, e, h in r.pieces:
            assert source[h:h + e - s] == r.text[s:e]


def test_document_round_trip():
    text = nbformat.writes(nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("a = 1"), nbformat.v4.new_markdown_cell("m"),
        nbformat.v4.new_code_cell("b = 2\n"), nbformat.v4.new_code_cell("")]))
    nb = Notebook.parse(text)
    assert nb.split(nb.document()) == ["a = 1", "b = 2\n", ""]
    assert nb.dumps(nb.split(nb.document())) == text
    assert [nb.cell_number(k) for k in range(3)] == [1, 3, 4]


def test_startup_does_not_import_the_notebook_reader():
    code = ("import sys, devlint.cli, devlint.discovery, devlint.engine.runner; "
            "print('devlint.sources.notebook' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert out.stdout.strip() == "False"


def test_since_keeps_the_findings_of_a_changed_notebook_only(tmp_path):
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    _notebook(tmp_path / "old.ipynb", ['x.to("cuda")'])
    _notebook(tmp_path / "new.ipynb", ["import torch"])
    for cmd in (["init", "-q"], ["add", "."], ["commit", "-qm", "base"]):
        subprocess.run(["git", *cmd], cwd=tmp_path, env=env, check=True)
    _notebook(tmp_path / "new.ipynb", ["import torch", "y = torch.ones(1).cuda()"])
    r = _devlint("check", "--no-cache", "--since", "HEAD", ".", cwd=tmp_path)
    assert [line.split(": ")[0] for line in r.stdout.splitlines() if ".ipynb" in line] == [
        "new.ipynb:cell 2:1:19"]


def test_extension_option_maps_other_extensions(tmp_path):
    """ruff's `--extension EXT:LANGUAGE`: a notebook saved as `.nb`, a Python file as `.ipy`."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('x.to("cuda")')])
    nbformat.write(nb, str(tmp_path / "explore.nb"))
    (tmp_path / "start.ipy").write_text("import torch\nt = torch.ones(1).cuda()\n")
    plain = _devlint("check", "--no-cache", ".", cwd=tmp_path)
    assert plain.returncode == 0, plain.stdout
    mapped = _devlint("check", "--no-cache", "--extension", "nb:ipynb,ipy:python", ".",
                      cwd=tmp_path)
    assert [line.split(": ")[0] for line in mapped.stdout.splitlines() if ": DL" in line] == [
        "explore.nb:cell 1:1:6", "start.ipy:2:19"]
    bad = _devlint("check", "--no-cache", "--extension", "nb:ruby", ".", cwd=tmp_path)
    assert bad.returncode == 2 and "EXT:LANGUAGE" in bad.stderr
