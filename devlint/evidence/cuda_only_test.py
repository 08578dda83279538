"""Principle: the skip gate of a test that cannot run without CUDA is right.

`@requires_cuda` (or `@skipif(not torch.cuda.is_available())`) over a test whose own body is
CUDA-only by a principle devlint already has: it always calls a function of a CUDA-only
module (`_fused_qknorm_rope` from `..._cuda_opt`), imports a CUDA-only stack at its top, uses
the CUDA runtime, builds a CUDA C++ kernel, captures a CUDA graph (`cuda-only-scope` and the
scope principles `FileFacts.cuda_only_scope` applies). The test's subject exists only on
CUDA, so an accelerator-generic gate would run it where it must fail: the CUDA gate says what
the test needs (the rubric's "CUDA-specific on purpose"), and its body's findings are already
exempt by the same reason.
Evidence: the test's own CUDA-only reason (its file:line), for the gate decorating it; for a
gated class, the reason of its first test, where every test of the class (`test*` methods)
has one, or the class's own.
Limits: only a gate that decorates the test or class itself (not a `pytestmark`, not an
imported gate, which the project stage judges); a test that calls a CUDA-only module only
under an `if`/`try` (one backend among others) has no such reason, and its gate stays a
finding; so does the gate of a test of generic code that merely skips without CUDA, and
the gate of a test that never runs (`@pytest.mark.skip`: dead, not CUDA's; `not-a-device`
exempts its body, the gate is judged as it stands).
"""
from __future__ import annotations

import ast

from devlint.evidence import Reason

PRINCIPLE = "cuda-only-test"
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_NOT_CUDA = frozenset({"not-a-device", "dead-default"})


def gated_test_reason(gate, parent, scope_reason) -> Reason | None:
    """The reason for the skip gate `gate`, a decorator of `parent` (a test function or
    class), whose test cannot run without CUDA; `scope_reason(scope)` is the CUDA-only reason
    of a function or class, or None."""
    if not isinstance(parent, (*_FUNCS, ast.ClassDef)) \
            or not any(d is gate for d in parent.decorator_list):
        return None
    def cuda_only(scope):
        why = scope_reason(scope)
        # a test that never runs is dead, not CUDA's: its gate is judged as it stands
        return None if getattr(why, "principle", None) in _NOT_CUDA else why

    why = cuda_only(parent)
    if why is None and isinstance(parent, ast.ClassDef):
        tests = [m for m in parent.body if isinstance(m, _FUNCS) and m.name.startswith("test")]
        reasons = [cuda_only(m) for m in tests]
        why = reasons[0] if reasons and all(reasons) else None
    if why is None:
        return None
    return Reason(PRINCIPLE, f"the gated test cannot run without CUDA: {why}",
                  getattr(why, "path", None), getattr(why, "line", None))
