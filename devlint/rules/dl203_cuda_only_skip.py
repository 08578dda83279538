"""DL203 cuda-only-skip."""
from __future__ import annotations

import ast
import re

from devlint.diagnostics import Edit
from devlint.analysis.fixkit import make_fix
from devlint.profiles.torch_api import best_entry, entries_by_name
from devlint.evidence.cuda_guard import GATE_NAME
from devlint.rules._api_table import guard_body_edits
from devlint.rules._device import skipped
from devlint.rules.base import Invalid, Rule, Valid

_GATE_NAME = GATE_NAME  # the gates whose tests' bodies are CUDA's (evidence.cuda_guard)
_SKIPS = ("skipif", "skipIf", "skipUnless")


class CudaOnlySkip(Rule):
    """
    ## What it does
    Flags test gates that require CUDA: `@pytest.mark.skipif(not torch.cuda.is_available(),
    ...)`, `skipif(torch.cuda.device_count() < 2, ...)`, `unittest.skipIf/skipUnless(...)` on
    the same tests, `pytestmark = pytest.mark.skipif(...)`, and `@requires_cuda`-style
    decorators.

    ## Why is this bad?
    The tests are skipped on every non-CUDA accelerator, so a port to XPU, NPU or MPS passes CI
    without running them: the suite reports green while the device path is untested.

    ## Example
    ```python
    @pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
    def test_kernel(): ...
    ```

    Use instead:
    ```python
    @pytest.mark.skipif(not torch.accelerator.is_available(), reason="needs a GPU")
    def test_kernel(): ...
    ```

    ## Fix
    The `torch.cuda` queries in the gate become their `torch.accelerator` forms (from the version
    table). Gates on platform queries (`current_platform.is_cuda()`) are deliberate and not
    flagged; named decorators (`@requires_cuda`) are flagged without a fix.

    ## Fix safety
    Unsafe: on a CUDA machine the gate decides the same way, but elsewhere it now runs the
    test, whose body was CUDA's (literals and `torch.cuda` calls under a CUDA gate are not
    findings of their own). The fix rewrites the gated body's `torch.cuda` calls with it, and
    is not offered where the body holds a device literal or a call without a replacement.

    ## Profiles
    Both profiles use `torch.accelerator`.
    """

    code = "DL203"
    name = "cuda-only-skip"
    summary = "Test gate skips every non-CUDA accelerator"
    exempt_by = ("cuda-only-module", "cuda-only-scope", "not-a-device", "print-only", "cuda-twin",
                 "test-double", "only-called-on-cuda")

    valid = [
        Valid("import pytest\n@pytest.mark.skipif(not current_platform.is_cuda(), reason='CUDA graphs')\ndef test_x():\n    pass\n"),
        Valid("import pytest, torch\n@pytest.mark.skipif(not torch.accelerator.is_available(), reason='gpu')\ndef test_x():\n    pass\n"),
        # the skip mark of the "cuda" value of a parametrisation gates only that value
        Valid("import pytest, torch\n@pytest.mark.parametrize('device', ['cpu', pytest.param('cuda', "
              "marks=pytest.mark.skipif(not torch.cuda.is_available(), reason='x'))])\n"
              "def test_x(device):\n    pass\n"),
        # a capability gate skips only older CUDA GPUs
        Valid("import unittest, torch\n@unittest.skipIf(torch.cuda.is_available() and not "
              "is_sm_at_least_89(), 'sm89')\ndef test_x():\n    pass\n"),
        # the deliberate CUDA twin of a generic gate defined next to it
        Valid("import torch, unittest\n\n\ndef require_torch_multi_gpu(test):\n"
              "    return unittest.skipUnless(torch.cuda.device_count() > 1, '2 GPUs')(test)\n\n\n"
              "def require_torch_multi_accelerator(test):\n"
              "    return unittest.skipUnless(backend_device_count() > 1, '2')(test)\n"),
    ]
    invalid = [
        Invalid("import pytest\nimport torch\n\n\n@pytest.mark.skipif(not torch.cuda.is_available(), reason='gpu')\ndef test_x():\n    pass\n",
                "import pytest\nimport torch\n\n\n@pytest.mark.skipif(not torch.accelerator.is_available(), reason='gpu')\ndef test_x():\n    pass\n"),
        Invalid("import pytest\nimport torch\npytestmark = pytest.mark.skipif(torch.cuda.device_count() < 2, reason='2 gpus')\n",
                "import pytest\nimport torch\npytestmark = pytest.mark.skipif(torch.accelerator.device_count() < 2, reason='2 gpus')\n"),
        Invalid("import pytest\nimport torch\n\n\n@pytest.mark.skipif(not torch.cuda.is_available(), reason='requires CUDA')\ndef test_x():\n    pass\n",
                "import pytest\nimport torch\n\n\n@pytest.mark.skipif(not torch.accelerator.is_available(), reason='requires an accelerator')\ndef test_x():\n    pass\n"),
        Invalid("import unittest\nimport torch\n\n\n@unittest.skipIf(torch.cuda.device_count() < 2, 'needs 2 CUDA GPUs')\ndef test_x():\n    pass\n",
                "import unittest\nimport torch\n\n\n@unittest.skipIf(torch.accelerator.device_count() < 2, 'needs 2 accelerators')\ndef test_x():\n    pass\n"),
        Invalid("@requires_cuda\ndef test_x():\n    pass\n", None),
        # limit: a CUDA-named gate with no generic twin next to it
        Invalid("import torch\nimport unittest\n\n\ndef require_torch_multi_gpu(test):\n"
                "    return unittest.skipUnless(torch.cuda.device_count() > 1, '2 GPUs')(test)\n",
                "import torch\nimport unittest\n\n\ndef require_torch_multi_gpu(test):\n"
                "    return unittest.skipUnless(torch.accelerator.device_count() > 1, '2 GPUs')(test)\n"),
    ]

    def check(self, facts):
        if facts.cuda_alike:
            return
        target = facts.settings.target_torch_tuple(facts.profile)
        table = entries_by_name("DL401")
        for call in facts.calls:
            f = call.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if name not in _SKIPS or not call.args:
                continue
            refs = [(n, q) for n, q in facts.torch_refs if _inside(facts, n, call.args[0])]
            if not refs or all(_guarded(facts, n) for n, _ in refs) \
                    or skipped(facts, call, api=True, guards=False):
                continue  # none, each one a guarded query, or the gate is exempt as a whole
            edits = []
            fixable = True
            for n, q in refs:
                entry = best_entry(table.get(q, ()), target)
                if entry is None or not entry.available_for(target):
                    fixable = False
                    break
                repl = entry.replacement
                local = facts.torch_name() or "torch"
                s, e = facts.span(n)
                edits.append(Edit(s, e, local + repl[len("torch"):]))
            fix = None
            # the gated test is CUDA's (its body is no finding of its own): the fix opens it
            # to every accelerator, so it rewrites the body too, unsafely, or is not offered
            body = guard_body_edits(facts, _gated_body(facts, call), target)
            if fixable and facts.torch_name() and body is not None:
                edits.extend(_reason_edits(facts, call))
                fix = make_fix(facts, "Gate on any accelerator (`torch.accelerator`)",
                               [*edits, *body], (), safe=False)
            yield self.diagnostic(facts, call, "Test gate skips every non-CUDA accelerator", fix)
        for stmt in facts.tree.body if facts.tree else ():
            for d in getattr(stmt, "decorator_list", ()):
                target_name = d.func if isinstance(d, ast.Call) else d
                nm = target_name.attr if isinstance(target_name, ast.Attribute) else \
                    getattr(target_name, "id", "")
                if _GATE_NAME.match(nm):
                    yield self.diagnostic(facts, d, f"`@{facts.source(d)}` skips every non-CUDA "
                                          "accelerator")


_CUDA_PHRASE = re.compile(r"(?i)\b(?:(an?) )?(?:nvidia )?cuda(?:[- ](gpu|device)(s)?)?\b")


def _reason_text(reason: str) -> str:
    """The skip reason with CUDA replaced by "accelerator": "requires CUDA" -> "requires an
    accelerator", "CUDA not available" -> "Accelerator not available", "needs 2 CUDA GPUs"
    -> "needs 2 accelerators"."""
    def repl(m):
        article, _, plural = m.group(1), m.group(2), m.group(3)
        word = "accelerators" if plural else "accelerator"
        head = reason[:m.start()]
        before = re.split(r"[\s'\"(]+", head.rstrip())[-1].lower()
        if article or (not plural and before in ("requires", "require", "needs", "need",
                                                 "with", "without", "on", "using", "uses")):
            word = "an " + word
        if not head.strip(" '\"rRuU") and m.group(0)[0].isupper():
            word = word[0].upper() + word[1:]
        return word
    return _CUDA_PHRASE.sub(repl, reason)


def _reason_edits(facts, call) -> list:
    """The gate's reason (`reason=` or unittest's second argument) when it names CUDA: it
    would no longer say why the test is skipped."""
    reason = next((k.value for k in call.keywords if k.arg in ("reason", "msg")), None)
    if reason is None and len(call.args) > 1:
        reason = call.args[1]
    if not (isinstance(reason, ast.Constant) and isinstance(reason.value, str)):
        return []
    src = facts.source(reason)
    if not _CUDA_PHRASE.search(reason.value) or "\\" in src or "\n" in src:
        return []
    new = _reason_text(src)
    if new == src:
        return []
    s, e = facts.span(reason)
    return [Edit(s, e, new)]


def _gated_body(facts, call):
    """The statements a skip gate gates: the decorated test's or class's body, else (a
    `pytestmark`, a call inside a test) the module's."""
    par = facts.get_parent(call)
    if isinstance(par, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
            and any(d is call for d in par.decorator_list):
        return par.body
    w = facts.where_of(call)
    gate = w.statement if w is not None else None
    if gate is not None and gate not in facts.tree.body:
        return []  # a gate a helper builds (`return skipUnless(...)(test)`): its tests are elsewhere
    return [st for st in facts.tree.body if st is not gate]


def _guarded(facts, node) -> bool:
    w = facts.where_of(node)
    return w is not None and bool(w.guarded)


def _inside(facts, node, root) -> bool:
    cur = node
    while cur is not None:
        if cur is root:
            return True
        cur = facts.get_parent(cur)
    return False


RULE = CudaOnlySkip
