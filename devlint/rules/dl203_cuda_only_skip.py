"""DL203 cuda-only-skip."""
from __future__ import annotations

import ast
import re

from devlint.diagnostics import Edit
from devlint.analysis.fixkit import make_fix
from devlint.profiles.torch_api import best_entry, entries_by_name
from devlint.evidence.cuda_guard import GATE_NAME
from devlint.rules._api_table import guard_body_edits
from devlint.rules._guard_body import gate_opens_to_accelerator, module_mark
from devlint.evidence.capability import called_at_import
from devlint.evidence.capability_gate import stacked_reason
from devlint.evidence.cuda_only_test import gated_test_reason
from devlint.evidence.stated_gate import gate_reason as stated_gate_reason
from devlint.rules._device import note_exempt, skipped
from devlint.rules.base import Invalid, Rule, Valid

_GATE_NAME = GATE_NAME  # the gates whose tests' bodies are CUDA's (evidence.cuda_guard)
_SKIPS = ("skipif", "skipIf", "skipUnless")


class CudaOnlySkip(Rule):
    """
    ## What it does
    Flags test gates that require CUDA: `@pytest.mark.skipif(not torch.cuda.is_available(),
    ...)`, `skipif(torch.cuda.device_count() < 2, ...)`, `unittest.skipIf/skipUnless(...)` on
    the same tests, `pytestmark = pytest.mark.skipif(...)`, and `@requires_cuda`-style
    decorators; and gates on a device-holding name compared with "cuda"
    (`@unittest.skipIf(torch_device != "cuda", ...)`, `skipUnless(device == "cuda")`), unless
    the condition names another device type too, also requires a CUDA-only library
    (`is_xformers_available()`; `gate_stacks` and `imports` in `devlint/data/cuda_only.toml`),
    or is what a gate helper returns (`def require_torch_gpu(t): return skipUnless(...)(t)`).

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
    table); `torch_device != "cuda"` becomes `torch_device == "cpu"` (skip only where no
    accelerator runs the test). Gates on platform queries (`current_platform.is_cuda()`) are deliberate and not
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
                 "test-double", "only-called-on-cuda", "calls-cuda-only", "cuda-by-default",
                 "cuda-kernel-source",
                 "entry-gate",
                 "capability-gate", "cuda-only-test", "imported-flag", "stated-gate")

    valid = [
        Valid("import pytest\n@pytest.mark.skipif(not current_platform.is_cuda(), reason='CUDA graphs')\ndef test_x():\n    pass\n"),
        Valid("import pytest, torch\n@pytest.mark.skipif(not torch.accelerator.is_available(), reason='gpu')\ndef test_x():\n    pass\n"),
        # several backends named: a ladder, not a CUDA-only gate
        Valid("import unittest\n@unittest.skipIf(torch_device not in ('cuda', 'xpu'), 'gpu')\n"
              "def test_x():\n    pass\n"),
        Valid("import unittest\n@unittest.skipIf(torch_device != 'cuda' and torch_device != 'xpu', "
              "'gpu')\ndef test_x():\n    pass\n"),
        # skips CUDA only: runs everywhere else
        Valid("import unittest\n@unittest.skipIf(torch_device == 'cuda', 'not on cuda')\n"
              "def test_x():\n    pass\n"),
        # not a device
        Valid("import unittest\n@unittest.skipIf(backend != 'cuda', 'kernel')\ndef test_x():\n"
              "    pass\n"),
        # the test exercises a CUDA-only library's path
        Valid("import unittest\n@unittest.skipIf(torch_device != 'cuda' or not is_xformers_available(),"
              " 'xformers')\ndef test_x():\n    pass\n"),
        # the definition of a project's gate helper: its uses are what a port changes
        Valid("import unittest\n\n\ndef require_torch_gpu(test_case):\n"
              "    return unittest.skipUnless(torch_device == 'cuda', 'CUDA')(test_case)\n"),
        # the skip mark of the "cuda" value of a parametrisation gates only that value
        Valid("import pytest, torch\n@pytest.mark.parametrize('device', ['cpu', pytest.param('cuda', "
              "marks=pytest.mark.skipif(not torch.cuda.is_available(), reason='x'))])\n"
              "def test_x(device):\n    pass\n"),
        # a capability gate skips only older CUDA GPUs
        Valid("import unittest, torch\n@unittest.skipIf(torch.cuda.is_available() and not "
              "is_sm_at_least_89(), 'sm89')\ndef test_x():\n    pass\n"),
        # stacked with a gate that requires a compute capability: the test needs an SM90+ GPU
        Valid("import torch, unittest\n@unittest.skipIf(not torch.cuda.is_available(), 'CUDA')\n"
              "@unittest.skipIf(not is_sm_at_least_90(), 'sm90')\ndef test_x():\n    pass\n"),
        # ... a mark bound to a name, or the gate of the enclosing class
        Valid("import pytest, torch\n_sm100 = pytest.mark.skipif(not is_sm_at_least_100(), "
              "reason='sm100')\n\n\n@_sm100\n@pytest.mark.skipif(not torch.cuda.is_available(), "
              "reason='CUDA')\ndef test_x():\n    pass\n"),
        Valid("import torch, unittest\n\n\n@unittest.skipIf(not is_sm_at_least_90(), 'sm90')\n"
              "class T(unittest.TestCase):\n    @unittest.skipIf(torch.cuda.device_count() < 2, '2')\n"
              "    def test_x(self):\n        pass\n"),
        # capability-gate: the gate itself requires an SM100 GPU (an SM-specific kernel)
        Valid("import pytest, torch\n@pytest.mark.skipif(torch.cuda.get_device_capability()[0] "
              "< 10, reason='sm100')\ndef test_x():\n    pass\n"),
        # ... or NVIDIA hardware: it skips on ROCm (torch's "cuda" too) as well
        Valid("import pytest, torch\n@pytest.mark.skipif(not torch.cuda.is_available() or "
              "torch.version.hip is not None, reason='requires NVIDIA CUDA')\ndef test_x():\n"
              "    pass\n"),
        # stacked with a gate on a library of NVIDIA/AMD GPU kernels only (cuda_only.toml
        # `gate_stacks`), or every parametrised value carries one
        Valid("import torch, unittest\n@unittest.skipIf(not torch.cuda.is_available(), 'CUDA')\n"
              "@unittest.skipIf(not _is_mslk_available(), 'mslk')\ndef test_x():\n    pass\n"),
        Valid("import pytest, torch\n@pytest.mark.skipif(not torch.cuda.is_available(), "
              "reason='CUDA')\n@pytest.mark.parametrize('cfg', [pytest.param(1, marks="
              "pytest.mark.skipif(not is_mslk_available(), reason='mslk'))])\n"
              "def test_x(cfg):\n    pass\n"),
        # ... or on a module flag set only where such a library imports (library-gate)
        Valid("import pytest, torch\ntry:\n    import flash_attn_3\n    HAVE_FA3 = True\n"
              "except ImportError:\n    HAVE_FA3 = False\n\n\n"
              "@pytest.mark.skipif(not torch.cuda.is_available(), reason='CUDA')\n"
              "@pytest.mark.skipif(not HAVE_FA3, reason='FA3')\ndef test_x():\n    pass\n"),
        # cuda-only-test: the gated test always calls a CUDA-only module's kernel (its subject
        # exists only on CUDA), or its class's every test does
        Valid("import pytest, torch\nfrom pkg.ops.fused_cuda_ops import fused_rope\n\n\n"
              "@pytest.mark.skipif(not torch.cuda.is_available(), reason='CUDA')\n"
              "def test_x():\n    fused_rope(torch.ones(2))\n"),
        Valid("from pkg.ops.fused_cuda_ops import fused_rope\n\n\n@requires_cuda\n"
              "def test_x():\n    assert fused_rope(1)\n"),
        Valid("import torch, unittest\nfrom pkg.ops.fused_cuda_ops import fused_rope\n\n\n"
              "@unittest.skipIf(not torch.cuda.is_available(), 'CUDA')\n"
              "class T(unittest.TestCase):\n    def test_a(self):\n        fused_rope(1)\n\n"
              "    def test_b(self):\n        fused_rope(2)\n"),
        # library-subject: the gated test is a test of a GPU-kernel library's own op (its
        # gate's reason names a kernel of it; or its name names the library)
        Valid('import pytest, torch\nfrom pkg.extensions.transformer_engine import HAVE_FUSION\n\n\n'
              '@pytest.mark.skipif(not torch.cuda.is_available() or not HAVE_FUSION, '
              'reason="TE fused router ops not available")\n'
              'def test_router():\n    x = torch.randn(4)\n', path="tests/test_router.py"),
        # library-subject: a gate in a module that skips unless the library is there and
        # imports its package (every test in it runs only where the library runs)
        Valid('import pytest, torch\nfrom pkg.api import HAVE_GTP\n\nif not HAVE_GTP:\n'
              '    pytest.skip("GTP requires TransformerEngine >= 2.19", allow_module_level=True)\n\n'
              'import transformer_engine.pytorch as te\n\n\n'
              '@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA required")\n'
              'def test_fallback():\n    x = torch.randn(4)\n', path="tests/test_gtp.py"),
        # stated-gate: the gate's reason states the CUDA-only thing its test exercises
        Valid("import torch, unittest\n@unittest.skipUnless(torch.cuda.is_available(), "
              "'CUDA graphs')\ndef test_x():\n    pass\n"),
        Valid("import pytest, torch\n@pytest.mark.skipif(not torch.cuda.is_available(), "
              "reason='fused VAE kernels need CUDA')\ndef test_x():\n    pass\n"),
        # the deliberate CUDA twin of a generic gate defined next to it
        Valid("import torch, unittest\n\n\ndef require_torch_multi_gpu(test):\n"
              "    return unittest.skipUnless(torch.cuda.device_count() > 1, '2 GPUs')(test)\n\n\n"
              "def require_torch_multi_accelerator(test):\n"
              "    return unittest.skipUnless(backend_device_count() > 1, '2')(test)\n"),
    ]
    invalid = [
        # a library that runs anywhere (or a parametrised value without it) asks for no GPU
        Invalid("import torch, unittest\n@unittest.skipIf(not torch.cuda.is_available(), 'CUDA')\n"
                "@unittest.skipIf(not is_scipy_available(), 'scipy')\ndef test_x():\n    pass\n",
                "import torch, unittest\n@unittest.skipIf(not torch.accelerator.is_available(), "
                "'Accelerator')\n@unittest.skipIf(not is_scipy_available(), 'scipy')\ndef test_x():\n"
                "    pass\n"),
        Invalid("import pytest\nimport torch\n\n\n@pytest.mark.skipif(not torch.cuda.is_available(), reason='gpu')\ndef test_x():\n    pass\n",
                "import pytest\nimport torch\n\n\n@pytest.mark.skipif(not torch.accelerator.is_available(), reason='gpu')\ndef test_x():\n    pass\n"),
        Invalid("import pytest\nimport torch\npytestmark = pytest.mark.skipif(torch.cuda.device_count() < 2, reason='2 gpus')\n",
                "import pytest\nimport torch\npytestmark = pytest.mark.skipif(torch.accelerator.device_count() < 2, reason='2 gpus')\n"),
        Invalid("import pytest\nimport torch\n\n\n@pytest.mark.skipif(not torch.cuda.is_available(), reason='requires CUDA')\ndef test_x():\n    pass\n",
                "import pytest\nimport torch\n\n\n@pytest.mark.skipif(not torch.accelerator.is_available(), reason='requires an accelerator')\ndef test_x():\n    pass\n"),
        Invalid("import unittest\nimport torch\n\n\n@unittest.skipIf(torch.cuda.device_count() < 2, 'needs 2 CUDA GPUs')\ndef test_x():\n    pass\n",
                "import unittest\nimport torch\n\n\n@unittest.skipIf(torch.accelerator.device_count() < 2, 'needs 2 accelerators')\ndef test_x():\n    pass\n"),
        Invalid("@requires_cuda\ndef test_x():\n    pass\n", None),
        # stated-gate's limit: a reason that names only the platform, or attention (which
        # runs on every accelerator)
        Invalid("import pytest, torch\n@pytest.mark.skipif(not torch.cuda.is_available(), "
                "reason='attention needs CUDA')\ndef test_x():\n    pass\n",
                "import pytest, torch\n@pytest.mark.skipif(not torch.accelerator.is_available(), "
                "reason='attention needs an accelerator')\ndef test_x():\n    pass\n"),
        # library-subject's limit: a reason that names the library but no kernel of it
        Invalid('import pytest, torch\nfrom pkg.extensions.transformer_engine import HAVE_FUSION\n\n\n'
                '@pytest.mark.skipif(not torch.cuda.is_available() or not HAVE_FUSION, '
                'reason="TE not available")\n'
                'def test_router():\n    x = torch.randn(4)\n',
                'import pytest, torch\nfrom pkg.extensions.transformer_engine import HAVE_FUSION\n\n\n'
                '@pytest.mark.skipif(not torch.accelerator.is_available() or not HAVE_FUSION, '
                'reason="TE not available")\n'
                'def test_router():\n    x = torch.randn(4)\n', path="tests/test_router.py"),
        # limit: a test that never runs is dead, not CUDA's: its gate stays a finding
        Invalid('import pytest, torch\n\n\n@pytest.mark.skip("flaky")\n'
                '@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA")\n'
                'def test_x():\n    x = torch.ones(2)\n',
                'import pytest, torch\n\n\n@pytest.mark.skip("flaky")\n'
                '@pytest.mark.skipif(not torch.accelerator.is_available(), reason="Accelerator")\n'
                'def test_x():\n    x = torch.ones(2)\n'),
        # limit: the CUDA-only call is one backend among others (under an `if`), or only some
        # of the class's tests make it: the gate stays a finding
        Invalid("from pkg.ops.fused_cuda_ops import fused_rope\n\n\n@requires_cuda\n"
                "def test_x(fused):\n    if fused:\n        fused_rope(1)\n", None),
        Invalid("import torch, unittest\nfrom pkg.ops.fused_cuda_ops import fused_rope\n\n\n"
                "@unittest.skipIf(not torch.cuda.is_available(), 'CUDA')\n"
                "class T(unittest.TestCase):\n    def test_a(self):\n        fused_rope(1)\n\n"
                "    def test_b(self):\n        torch.ones(2)\n",
                "import torch, unittest\nfrom pkg.ops.fused_cuda_ops import fused_rope\n\n\n"
                "@unittest.skipIf(not torch.accelerator.is_available(), 'Accelerator')\n"
                "class T(unittest.TestCase):\n    def test_a(self):\n        fused_rope(1)\n\n"
                "    def test_b(self):\n        torch.ones(2)\n"),
        Invalid("import unittest\n@unittest.skipIf(torch_device != 'cuda', 'gpu')\ndef test_x():\n"
                "    pass\n",
                "import unittest\n@unittest.skipIf(torch_device == 'cpu', 'gpu')\ndef test_x():\n"
                "    pass\n"),
        Invalid('import pytest\n@pytest.mark.skipif(\n    torch_device != "cuda" or not has_accelerate(),\n'
                '    reason="offload")\ndef test_x():\n    pass\n',
                'import pytest\n@pytest.mark.skipif(\n    torch_device == "cpu" or not has_accelerate(),\n'
                '    reason="offload")\ndef test_x():\n    pass\n'),
        Invalid("import unittest\n@unittest.skipUnless(self_device.type == 'cuda', 'gpu')\n"
                "def test_x():\n    pass\n",
                "import unittest\n@unittest.skipUnless(self_device.type != 'cpu', 'gpu')\n"
                "def test_x():\n    pass\n"),
        # the gated test's device values follow the gate: it runs only with an accelerator
        Invalid("import torch\nimport unittest\n\n\nclass T(unittest.TestCase):\n"
                "    @unittest.skipIf(not torch.cuda.is_available(), 'needs a GPU')\n"
                "    def test_x(self):\n        device = 'cuda'\n"
                "        x = torch.ones(2).cuda()\n",
                "import torch\nimport unittest\n\n\nclass T(unittest.TestCase):\n"
                "    @unittest.skipIf(not torch.accelerator.is_available(), 'needs a GPU')\n"
                "    def test_x(self):\n        device = torch.accelerator.current_accelerator().type\n"
                "        x = torch.ones(2).to(device=torch.accelerator.current_accelerator())\n"),
        # ... not a gated class: its body runs at import, skipped or not
        Invalid("import torch\nimport unittest\n\n\n@unittest.skipIf(not torch.cuda.is_available(), "
                "'GPU')\nclass T(unittest.TestCase):\n    device = 'cuda'\n", None),
        # limit: a capability check inside the test's body is no gate beside it
        Invalid("import pytest\nimport torch\n\n\n@pytest.mark.skipif(not torch.cuda.is_available(), "
                "reason='gpu')\ndef test_x():\n    if not is_sm_at_least_90():\n        pytest.skip('sm90')\n",
                "import pytest\nimport torch\n\n\n@pytest.mark.skipif(not torch.accelerator.is_available(), "
                "reason='gpu')\ndef test_x():\n    if not is_sm_at_least_90():\n        pytest.skip('sm90')\n"),
        # limit: an operand that excludes something other than ROCm says nothing of NVIDIA
        Invalid("import pytest, sys, torch\n@pytest.mark.skipif(not torch.cuda.is_available() or "
                "sys.platform == 'win32', reason='gpu')\ndef test_x():\n    pass\n",
                "import pytest, sys, torch\n@pytest.mark.skipif(not torch.accelerator.is_available() or "
                "sys.platform == 'win32', reason='gpu')\ndef test_x():\n    pass\n"),
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
            compares = _device_compares(call.args[0], skip_when=name != "skipUnless")
            if compares and (_requires_cuda_stack(call.args[0]) or _gate_helper(facts, call)):
                compares = []
            if not refs and not compares:
                continue
            if (refs and all(_guarded(facts, n) for n, _ in refs)) \
                    or skipped(facts, call, api=True, guards=False):
                continue  # each query a guarded one, or the gate is exempt as a whole
            # the gate's reason states the CUDA-only thing its test exercises
            stated = stacked_reason(call, facts.tree, facts.get_parent, facts.path) \
                or stated_gate_reason(call, facts.path)
            if stated is not None:
                note_exempt(facts, call, stated)
                continue
            subject = _gated_test(facts, call)
            if subject is not None:
                note_exempt(facts, call, subject)
                continue
            edits = []
            fixable = True
            for cmp, op in compares:
                # `torch_device != "cuda"` -> `torch_device == "cpu"`: skip only without an
                # accelerator
                cs, e = facts.span(cmp.comparators[0])
                quote = facts.text[cs] if facts.text[cs] in "'\"" else '"'
                left_end = facts.span(cmp.left)[1]
                edits.append(Edit(left_end, e, f" {op} {quote}cpu{quote}"))
            for n, q in refs:
                entry = best_entry(table.get(q, ()), target)
                if entry is None or not entry.available_for(target) or entry.cpu_value:
                    fixable = False
                    break
                s, e = facts.span(n)
                if entry.whole_call:  # `any(...)` stands for the whole argument-less call
                    call_ = facts.get_parent(n)
                    if not (isinstance(call_, ast.Call) and call_.func is n
                            and not call_.args and not call_.keywords):
                        fixable = False
                        break
                    s, e = facts.span(call_)
                edits.append(Edit(s, e, entry.callee(facts.torch_name() or "torch")))
            fix = None
            # the gated test is CUDA's (its body is no finding of its own): the fix opens it
            # to every accelerator, so it rewrites the body too, unsafely, or is not offered
            body = guard_body_edits(facts, _gated_body(facts, call), target,
                                    not compares and gate_opens_to_accelerator(facts, call, name))
            if fixable and (facts.torch_name() or not refs) and body is not None:
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
                    subject = _gated_test(facts, d)
                    if subject is not None:
                        note_exempt(facts, d, subject)
                        continue
                    yield self.diagnostic(facts, d, f"`@{facts.source(d)}` skips every non-CUDA "
                                          "accelerator")


def _gated_test(facts, gate):
    """The reason for a gate over a test that cannot run without CUDA (`cuda_only_test`)."""
    par = facts.get_parent(gate)
    klass = facts.get_parent(par) if par is not None else None
    outer = klass if isinstance(klass, ast.ClassDef) else None
    return gated_test_reason(gate, par, lambda scope: facts.scope_reason(
        scope, outer if scope is par else par))


_OTHER_DEVICE_TYPES = {"xpu", "npu", "mps", "hpu", "mlu", "musa", "mtia", "xla", "tpu",
                       "neuron", "privateuseone"}


def _devicey(expr) -> bool:
    """`torch_device`, `device`, `self.device_type`, `x.device.type`: a name that holds a
    device (or its type), by the word `device` in it."""
    if isinstance(expr, ast.Attribute) and expr.attr == "type":
        expr = expr.value
    name = expr.attr if isinstance(expr, ast.Attribute) else getattr(expr, "id", "")
    return "device" in name.lower()


def _device_compares(cond, skip_when: bool) -> list:
    """(`X != "cuda"` compare, the operator of its generic form) for each comparison of a
    device-holding name with "cuda" that makes the gate skip every other device: `!=` in a
    skipif/skipIf condition (directly or as one operand of `or`), `==` in a skipUnless one (or
    an operand of `and`). A condition that names another device type anywhere is a ladder or
    a table of backends, and not reported."""
    for n in ast.walk(cond):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) \
                and n.value.split(":")[0] in _OTHER_DEVICE_TYPES:
            return []
    want, joiner = (ast.NotEq, ast.Or) if skip_when else (ast.Eq, ast.And)
    operands = cond.values if isinstance(cond, ast.BoolOp) and isinstance(cond.op, joiner) \
        else [cond]
    out = []
    for c in operands:
        if isinstance(c, ast.Compare) and len(c.ops) == 1 and isinstance(c.ops[0], want) \
                and isinstance(c.comparators[0], ast.Constant) \
                and c.comparators[0].value == "cuda" and _devicey(c.left):
            out.append((c, "==" if skip_when else "!="))
    return out


def _requires_cuda_stack(cond) -> bool:
    """The condition also asks for a CUDA-only library (`is_xformers_available()`,
    `find_spec("flash_attn")`): the test exercises that library's CUDA path."""
    from devlint.evidence.vocabulary import cuda_library_check

    return any(cuda_library_check(n) for n in ast.walk(cond))


def _gate_helper(facts, call) -> bool:
    """`def require_torch_gpu(test): return unittest.skipUnless(torch_device == "cuda", ...)
    (test)`: the definition of a project's gate helper states which device it requires on
    purpose; the tests that use it are what a port changes."""
    cur = facts.get_parent(call) or facts.tree_parent(call)
    while cur is not None and not isinstance(cur, ast.stmt):
        cur = facts.get_parent(cur) or facts.tree_parent(cur)
    return isinstance(cur, ast.Return)


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
    if module_mark(facts, call):
        # `pytestmark`: the bodies of the module's tests and of its classes' methods run only
        # past it (what runs at import, a class body or a module constant, is its own finding)
        out = []
        at_import = called_at_import(facts.tree)  # run at collection, skipped or not
        for st in facts.tree.body:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if st.name not in at_import:
                    out.extend(st.body)
            elif isinstance(st, ast.ClassDef):
                out.extend(s for m in st.body
                           if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))
                           for s in m.body)
        return out
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
