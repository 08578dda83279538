"""Principle: code that switches torch's attention to FlashAttention-3/4 is CUDA's own.

```python
def test_fp8_sdpa_profiler():
    q = torch.randn(1, 8, 128, 64, device="cuda", dtype=torch.bfloat16)
    activate_flash_attention_impl("FA3")
```
`torch.nn.attention.activate_flash_attention_impl("FA3")` (and `"FA4"`) replaces the flash
SDPA kernel by FlashAttention-3 (Hopper, SM90) or FlashAttention-4 (Blackwell): NVIDIA kernels
that no other accelerator has, so the devices, streams and timings of the code that selects
them are CUDA's on purpose. Evidence (a `Reason("flash-attention-impl", ...)`, file:line of
the call): a function that makes the call (outside an `if <platform test>:`); a whole module
whose top-level code makes it, or two or more of its top-level functions and classes do; a
whole module that makes the call anywhere (under a condition, with a name chosen at run time:
`if "fa3" in backend: activate_flash_attention_impl("FA3")`, `activate_flash_attention_impl(
cfg["flash_impl"])`) when the only implementations it names are FA3/FA4 (a table of backends
`{"fa3": {"flash_impl": "FA3"}}`): it exists to compare or run those kernels (a benchmark or
an evaluation of FlashAttention-3 against another backend), and torch registers no other
implementation to activate (the default is restored with `restore_flash_attention_impl()`).
Limits: a function's own call counts only with a constant `"FA3"`/`"FA4"` argument; a module
that names another implementation (`"FA2"`, a provider's own name) or none at all, or whose
only call passes a name it never gives an FA3/FA4 value, is no such module; a mention in a
string or a comment is no call.
"""
from __future__ import annotations

import ast
import re

from devlint.evidence import Reason

_P = "flash-attention-impl"
_CUDA_ONLY_IMPLS = frozenset({"FA3", "FA4"})
_UNITS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def mentions(text: str) -> bool:
    return "activate_flash_attention_impl" in text


def _activation(node) -> ast.Call | None:
    if not isinstance(node, ast.Call) or not node.args:
        return None
    f = node.func
    name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
    arg = node.args[0]
    if name == "activate_flash_attention_impl" and isinstance(arg, ast.Constant) \
            and arg.value in _CUDA_ONLY_IMPLS:
        return node
    return None


def _first(nodes) -> ast.Call | None:
    from devlint.evidence.cuda_only_scope import own_nodes

    for n in own_nodes(nodes):
        call = _activation(n)
        if call is not None:
            return call
    return None


def module_reason(tree: ast.Module, text: str, path: str | None) -> Reason | None:
    if not mentions(text):
        return None
    units = []
    for st in tree.body:
        if isinstance(st, _UNITS):
            body = st.body
        else:
            body = [st]
        call = next((c for n in body for c in map(_activation, ast.walk(n)) if c), None)
        if call is None:
            continue
        if not isinstance(st, _UNITS):
            return Reason(_P, "its top-level code switches attention to a CUDA-only "
                          "FlashAttention", path, call.lineno)
        units.append(call)
    if len(units) >= 2:
        return Reason(_P, "two or more of its functions switch attention to a CUDA-only "
                      "FlashAttention (FA3/FA4)", path, units[0].lineno)
    return _only_fa3_fa4(tree, path)


_IMPL_NAME = re.compile(r"FA\d+")


def _only_fa3_fa4(tree: ast.Module, path: str | None) -> Reason | None:
    """The module calls `activate_flash_attention_impl` somewhere, and every implementation
    it names (a string constant `"FA3"`, `"FA2"`..., or a call's constant argument) is FA3 or
    FA4, at least one of them."""
    call = None
    names = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) \
                and _IMPL_NAME.fullmatch(n.value):
            names.add(n.value)
        elif isinstance(n, ast.Call) and n.args:
            f = n.func
            if (f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")) \
                    != "activate_flash_attention_impl":
                continue
            call = call or n
            arg = n.args[0]
            if isinstance(arg, ast.Constant):
                names.add(arg.value)
    if call is None or not names or not names <= _CUDA_ONLY_IMPLS:
        return None
    return Reason(_P, "it switches attention to FlashAttention, and the only implementations it "
                  f"names are CUDA-only ({'/'.join(sorted(names))})", path, call.lineno)


def scope_reason(scope, text: str, path: str | None) -> Reason | None:
    if not mentions(text) or not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    call = _first(scope.body)
    if call is None:
        return None
    return Reason(_P, f"`{scope.name}` switches attention to a CUDA-only FlashAttention "
                  f"(`{call.args[0].value}`)", path, call.lineno)
