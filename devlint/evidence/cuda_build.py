"""Principle: a test of the CUDA toolkit version establishes a CUDA build.

`TRITON_CUDA_SUPPORT = version.parse(torch.version.cuda) > version.parse("11.4")` and
`@pytest.mark.skipif(not TRITON_CUDA_SUPPORT, reason="triton requires cuda version to be
higher than 11.4")`: `torch.version.cuda` is the CUDA toolkit torch was built with (None on
ROCm, XPU and CPU builds), so the test asks for a CUDA feature by its version, as a compute
capability test does; the test gated by it runs on CUDA only, on purpose. Evidence: the gate
(or the flag's test), file:line.
Limits: only a comparison that needs the version (`> version.parse("11.4")`,
`torch.version.cuda is not None`, `torch.version.cuda.startswith("12")`); `torch.version.cuda
is None` establishes the opposite; a mention elsewhere (a log line) is no test. Which build
torch is, asked beside a `torch.cuda` query in the same test, is `capability`'s business.
"""
from __future__ import annotations

import ast


def _is_cuda_version(node, qualname) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "cuda" \
        and (qualname(node) == "torch.version.cuda"
             or (isinstance(node.value, ast.Attribute) and node.value.attr == "version"
                 and getattr(node.value.value, "id", None) == "torch"))


def cuda_build_test(test, qualname) -> int:
    """+1: the test is true only on a CUDA build (it compares the CUDA toolkit version, or
    asks that it is not None); -1: `torch.version.cuda is None`; 0: no such test."""
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        if isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) \
                and test.func.attr == "startswith" and _is_cuda_version(test.func.value, qualname):
            return 1
        return 0
    sides = (test.left, test.comparators[0])
    if not any(_is_cuda_version(n, qualname) for s in sides for n in ast.walk(s)):
        return 0
    op = test.ops[0]
    other = sides[1] if any(_is_cuda_version(n, qualname) for n in ast.walk(sides[0])) else sides[0]
    if isinstance(other, ast.Constant) and other.value is None:
        if isinstance(op, ast.IsNot):
            return 1
        if isinstance(op, ast.Is):
            return -1
        return 0
    if isinstance(op, (ast.Gt, ast.GtE, ast.Lt, ast.LtE, ast.Eq)):
        return 1
    return 0
