"""Values made only on CUDA by a function imported from another project module
(`devlint.evidence.imported_guard`, applied by `devlint/engine/project/xguards.py`), through
real `devlint check` runs over small packages: the test of such a value guards the code under
it as a producer of the file's own would, and the nearest forms stay findings."""
from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest
from _cli import run, write_package


def write(root, files: dict):
    write_package(root, files, dedent=True)


def findings(root, *paths, extra=("--no-cache",)):
    r = run("check", "--output-format", "json", *extra, *paths, cwd=root)
    assert r.returncode in (0, 1), r.stderr
    return sorted((f["filename"].replace(os.sep, "/"), f["location"]["row"], f["code"])
                  for f in json.loads(r.stdout))


PRODUCERS = """\
    import torch

    from vllm.platforms import current_platform

    _alt = None


    def side_stream():
        if not current_platform.is_cuda():
            return None
        return torch.cuda.Stream()


    def alike_stream():
        global _alt
        if _alt is None and current_platform.is_cuda_alike():
            _alt = torch.cuda.Stream()
        return _alt


    def any_gpu_stream():
        if not torch.cuda.is_available():
            return None
        return torch.cuda.Stream()


    def plain_stream():
        return torch.cuda.Stream()
    """

LAYER = """\
    import torch

    {imp}


    class Layer:
        def __init__(self):
            self.stream = {call}

        def forward(self, x):
            if self.stream is not None:
                with torch.cuda.stream(self.stream):
                    y = x.to("cuda")
            return x
    """


def layer(producer, imp="from pkg.utils import {p}"):
    return LAYER.format(imp=imp.format(p=producer), call=f"{producer}()")


@pytest.fixture
def pkg(tmp_path):
    write(tmp_path, {"pkg/utils.py": PRODUCERS})
    return tmp_path


# the rows of `torch.cuda.stream(...)` (DL402) and `x.to("cuda")` (DL101) in LAYER
STREAM, LITERAL = ("pkg/layer.py", 12, "DL402"), ("pkg/layer.py", 13, "DL101")


def test_a_value_an_imported_function_makes_only_on_cuda_guards_its_tests(pkg):
    write(pkg, {"pkg/layer.py": layer("side_stream")})
    assert findings(pkg, "pkg/layer.py") == []


def test_a_cuda_alike_value_exempts_the_torch_cuda_api_only(pkg):
    write(pkg, {"pkg/layer.py": layer("alike_stream")})
    assert findings(pkg, "pkg/layer.py") == [LITERAL]


def test_the_imported_producer_agrees_with_the_same_producer_in_the_file(pkg):
    text = textwrap.dedent(PRODUCERS) + "\n\n" + textwrap.dedent(
        LAYER.format(imp="", call="side_stream()"))
    write(pkg, {"pkg/layer.py": text})
    start = text.splitlines().index("class Layer:") + 1
    got = findings(pkg, "pkg/layer.py")
    assert got and all(row < start for _, row, _ in got)  # the producers' own bodies only


@pytest.mark.parametrize("producer", [
    "any_gpu_stream",  # made under torch.cuda.is_available(): that test's fix opens it to all
    "plain_stream",  # made everywhere
])
def test_values_that_exist_off_cuda_keep_the_findings(pkg, producer):
    write(pkg, {"pkg/layer.py": layer(producer)})
    assert findings(pkg, "pkg/layer.py") == [STREAM, LITERAL]


def test_a_call_through_the_module_object_is_not_followed(pkg):
    write(pkg, {"pkg/layer.py": LAYER.format(imp="from pkg import utils",
                                             call="utils.side_stream()")})
    assert findings(pkg, "pkg/layer.py") == [STREAM, LITERAL]


def test_a_re_export_resolves(pkg):
    write(pkg, {"pkg/streams/__init__.py": "from ..utils import side_stream\n",
                "pkg/layer.py": layer("side_stream", "from pkg.streams import {p}")})
    assert findings(pkg, "pkg/layer.py") == []


def test_show_exempt_names_the_producer_and_its_test(pkg):
    write(pkg, {"pkg/layer.py": layer("side_stream")})
    r = run("check", "--no-cache", "--show-exempt", "pkg/layer.py", cwd=pkg)
    assert "[imported-guard]" in r.stdout and "`side_stream` (imported from `pkg.utils`)" \
        in r.stdout and "pkg/utils.py:9" in r.stdout


def test_warm_runs_agree_and_a_changed_producer_is_judged_again(pkg):
    write(pkg, {"pkg/layer.py": layer("side_stream")})
    assert findings(pkg, "pkg/layer.py", extra=()) == []
    assert findings(pkg, "pkg/layer.py", extra=()) == []
    utils = pkg / "pkg" / "utils.py"
    utils.write_text(utils.read_text().replace("    if not current_platform.is_cuda():\n"
                                               "        return None\n", ""))
    os.utime(utils, ns=(1, 1))
    assert findings(pkg, "pkg/layer.py", extra=()) == [STREAM, LITERAL]


# every place a call's value can be followed, and places it cannot
POSITIONS = """\
    import torch
    from pkg.utils import a, b, c, d, e, f, g, h, k, m, n, o


    def helper(s=None):
        if s is not None:
            torch.cuda.synchronize()


    def run(x):
        y = a()
        if y is not None:
            x.to("cuda")
        z: int = b()
        if z:
            x.to("cuda")
        if (w := c()) is not None:
            x.to("cuda")
        if d() is None:
            return e() if x else None
        helper(s=f())
        helper(g())
        h()
        k().x
        m()[0]
        if not n():
            x.to("cuda")
        return o
    """


def test_only_calls_whose_value_is_followed_are_judged_and_the_flow_asks_no_other():
    """The xguards filter (`_valued_calls`) keeps every imported name the flow asks the
    producer oracle about: the flow runs with an oracle that records what it is asked."""
    import ast

    from devlint.analysis.imported import PRODUCERS as ORACLE
    from devlint.engine.linter import lint_text
    from devlint.engine.project.xguards import _valued_calls
    from devlint.settings import Settings

    text = textwrap.dedent(POSITIONS)
    imported = {n: ("pkg.utils", n) for n in "abcdefghkmno"}
    assert _valued_calls(ast.parse(text), imported) == set("abcdefg")

    class Asked(dict):
        def get(self, name, default=None):
            asked.add(name)
            return default

    fixtures = sorted((Path(__file__).resolve().parent.parent / "fixtures").rglob("*.py"))
    for path, source in [("pkg/run.py", text)] + [(str(p), p.read_text()) for p in fixtures]:
        asked = set()
        token = ORACLE.set(Asked())
        try:
            lint_text(path, source, Settings())
        except SyntaxError:
            continue
        finally:
            ORACLE.reset(token)
        tree = ast.parse(source)
        called = {n.func.id: ("m", n.func.id) for n in ast.walk(tree)
                  if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
        assert asked <= _valued_calls(tree, called), path
        if path == "pkg/run.py":
            assert asked >= {"a", "b", "d", "f"}


# ---- imported flags: `_is_cuda = is_cuda()` in one module, `if _is_cuda:` in another ----

FLAGS = """\
    import torch

    from pkg.platform import is_cuda, is_hip

    _is_cuda = is_cuda()
    _is_hip = is_hip()
    _has_gpu = torch.cuda.is_available()
    _use_fused = _is_cuda and not torch.version.hip
    _rebound = is_cuda()


    def reset():
        global _rebound
        _rebound = False
    """

USER = """\
    import torch

    from pkg.flags import {flag}


    def sync(x):
        if {flag}:
            torch.cuda.synchronize()
            x = x.to("cuda")
        return x
    """


@pytest.fixture
def flagged(tmp_path):
    write(tmp_path, {"pkg/platform.py": "def is_cuda():\n    return True\n\n\n"
                                        "def is_hip():\n    return False\n",
                     "pkg/flags.py": FLAGS})
    return tmp_path


@pytest.mark.parametrize("flag", ["_is_cuda", "_use_fused"])
def test_an_imported_flag_set_from_a_platform_query_guards_as_in_its_module(flagged, flag):
    write(flagged, {"pkg/user.py": USER.format(flag=flag)})
    assert findings(flagged, "pkg/user.py") == []
    r = run("check", "--no-cache", "--show-exempt", "pkg/user.py", cwd=flagged)
    assert "[imported-guard]" in r.stdout and f"`{flag}` (imported from `pkg.flags`)" \
        in r.stdout


@pytest.mark.parametrize("flag", [
    "_has_gpu",  # `torch.cuda.is_available()`: a finding of its own, its fix opens the flag
    "_rebound",  # stored again by a function (`global`): not the query's value alone
    "_is_hip",  # no CUDA test
])
def test_imported_flags_that_do_not_establish_cuda_keep_the_findings(flagged, flag):
    write(flagged, {"pkg/user.py": USER.format(flag=flag)})
    assert [code for _, _, code in findings(flagged, "pkg/user.py")] == ["DL401", "DL101"]


def test_a_file_that_binds_the_imported_name_again_is_judged_by_its_own_value(flagged):
    text = USER.format(flag="_is_cuda").replace(
        "\n\n\n    def sync", "\n    _is_cuda = torch.cuda.device_count() >= 0\n\n\n    def sync")
    assert "_is_cuda = torch" in text
    write(flagged, {"pkg/user.py": text})
    # the count is a finding of its own; the body under the test keeps its two
    assert [code for _, _, code in findings(flagged, "pkg/user.py")] == [
        "DL401", "DL401", "DL101"]
