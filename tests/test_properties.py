"""Properties of the engine over generated modules (hypothesis; hypothesmith for arbitrary valid
Python): devlint never raises on a valid module, a fix always leaves parseable code, fixing is
idempotent, and every position lies inside the file. Bounded: few examples, no deadline."""
from __future__ import annotations

import ast

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from devlint.diagnostics import Applicability
from devlint.engine.concrete import python_parses
from devlint.engine.fixer import apply_edits, fix_text
from devlint.engine.linter import lint_text
from devlint.rules.registry import enabled_codes
from devlint.engine.runner import process_source
from devlint.settings import Settings
from devlint.source import Locator, SourceFile

BOUNDED = settings(max_examples=60, deadline=None, derandomize=True,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])

# statements that hardcode CUDA (and near misses), to be nested in random blocks
SNIPPETS = [
    'x = torch.zeros(2, device="cuda")', "y = t.cuda()", 'z = t.to("cuda:0")',
    "torch.cuda.synchronize()", "assert t.is_cuda", 'DEVICE = "cuda"',
    'DEVICES = ["cuda:0", "cuda:1"]', 'd = f"cuda:{i}"', 'd = "cuda:%d" % i',
    'd = "cuda:" + str(i)', "torch.cuda.manual_seed(0)", "n = torch.cuda.device_count()",
    'g = torch.Generator(device="cuda")', "s = torch.cuda.Stream()",
    'dist.init_process_group("nccl")', 'os.environ["CUDA_VISIBLE_DEVICES"] = "0"',
    'if t.device.type == "cuda":\n    pass', 'x = "cuda" if torch.cuda.is_available() else "cpu"',
    'with torch.device("cuda"):\n    pass', 'k = {"cuda": 1, "xpu": 2}', "# cuda comment",
    'msg = "moved to cuda"', "y = self.cuda()", 'x = t.to("cuda")  # noqa: DL101',
    "x = t.cuda()  # devlint: ignore[DL102]", "dst.copy_(src.to('cuda'))",
    "torch.cuda.empty_cache()", "x = th.cuda.current_device()", "pass",
]
HEADERS = ["import torch", "import torch as th", "from torch import cuda",
           "import os", "import torch.distributed as dist", "from vllm.platforms import current_platform"]
BLOCKS = ["def f(t, i, src, dst):", "def g(self, t, device, i):", "class C:",
          "if torch.cuda.is_available():", "if cond:", "for i in range(2):", "with ctx:",
          "try:", "while False:", "async def h(t, i):"]


@st.composite
def modules(draw):
    lines = draw(st.lists(st.sampled_from(HEADERS), max_size=4))
    for _ in range(draw(st.integers(1, 8))):
        depth = draw(st.integers(0, 2))
        indent = ""
        for _ in range(depth):
            block = draw(st.sampled_from(BLOCKS))
            lines.append(indent + block)
            indent += draw(st.sampled_from(["    ", "\t", "  "])) if not indent else indent[:1] * 4
            if block == "try:":
                lines.append(indent + "pass")
                lines.append(indent[:-4 if indent.endswith("    ") else -1] + "except Exception:")
        for snippet in draw(st.lists(st.sampled_from(SNIPPETS), min_size=1, max_size=4)):
            lines.extend(indent + part for part in snippet.split("\n"))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    text = newline.join(lines) + draw(st.sampled_from([newline, ""]))
    try:
        ast.parse(text)
    except SyntaxError:
        text = "\n".join(ln.replace("\t", "    ") for ln in text.splitlines()) + "\n"
    return text


PROFILES = st.sampled_from(["torch", "vllm"])
PATHS = st.sampled_from(["example.py", "tests/test_example.py", "vllm/worker/model_runner.py"])


def _valid(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


def _check_positions(diags, text):
    loc = Locator(text)
    for d in diags:
        assert 0 <= d.start <= d.end <= len(text), d
        for row, col in (d.location, d.end_location):
            assert 1 <= row <= loc.line_count, d
            assert 1 <= col <= len(loc.line(row)) + 1, d
        assert d.location == loc.rowcol(d.start) and d.end_location == loc.rowcol(d.end)
        if d.fix is not None:
            for e in d.fix.edits:
                assert 0 <= e.start <= e.end <= len(text), (d, e)


def _fix(text, path, s, unsafe=True):
    codes = enabled_codes(s, path)
    return fix_text(text, lambda t: lint_text(path, t, s, codes),
                    lambda t: python_parses(t, path), unsafe)


def _properties(text: str, path: str, profile: str):
    s = Settings(profile=profile)
    diags = lint_text(path, text, s)  # never raises
    assert not any(d.code == "DL999" for d in diags)
    _check_positions(diags, text)
    for d in diags:  # each fix alone leaves code that parses
        if d.fix is not None and d.fix.applicability is not Applicability.DISPLAY_ONLY:
            assert python_parses(apply_edits(text, d.fix.edits)) is None, d
    outcome = _fix(text, path, s)
    assert python_parses(outcome.text) is None
    assert outcome.converged and not outcome.failures
    again = _fix(outcome.text, path, s)
    assert again.text == outcome.text and again.applied == 0, "fixing is not idempotent"
    left = lint_text(path, outcome.text, s)
    _check_positions(left, outcome.text)
    assert not [d for d in left if d.fix is not None and
                d.fix.applicability in (Applicability.SAFE, Applicability.UNSAFE)]
    # the runner (prefilter, decoding, re-parse by LibCST) agrees with the bare engine
    res = process_source(path, "python", text.encode(), s, "fix", True)
    assert res.internal_error is None and not res.failures
    assert SourceFile.from_bytes(res.new_bytes).text == outcome.text if res.changed else True


@BOUNDED
@given(modules(), PATHS, PROFILES)
def test_generated_device_code(text, path, profile):
    if _valid(text):
        _properties(text, path, profile)


@BOUNDED
@given(st.text(st.characters(blacklist_categories=("Cs",)), max_size=200), PATHS)
def test_any_text_never_raises(text, path):
    """Arbitrary (mostly invalid) text: a DL999 at most, never an exception."""
    diags = lint_text(path, text, Settings())
    _check_positions(diags, text)
    res = process_source(path, "python", text.encode("utf-8", "surrogatepass"), Settings(),
                         "fix", True)
    assert res.internal_error is None


def test_hypothesmith_modules():
    hypothesmith = pytest.importorskip("hypothesmith")

    @settings(max_examples=40, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(hypothesmith.from_node(), st.sampled_from(SNIPPETS))
    def check(module, snippet):
        # an arbitrary valid module, then one hardcoding statement appended at top level
        text = module if module.endswith("\n") or not module else module + "\n"
        for candidate in (text + snippet + "\n", text):
            if _valid(candidate):
                _properties(candidate, "example.py", "torch")
                break

    check()
