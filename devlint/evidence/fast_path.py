"""Principle: a CUDA fast path whose alternative is a correct generic path.

`if x.is_cuda and HAS_TILELANG: return tilelang_kernel(x)` followed by
`return torch_reference(x)`, or `if h.is_cuda and ...: logits = torch.mm(..., out_dtype=...)
else: logits = F.linear(...)`: on every other device the alternative computes the same value
on the tensor's own device, so the CUDA test picks an optimisation, not a device (the test is
not a hardcoding, and the CUDA arm is CUDA's own).
Evidence: the `if` with a tensor's CUDA test, an alternative (its `else`, or the code after a
CUDA arm that returns) that produces the same thing (both arms return, or both assign the same
names), and no CPU move or CUDA device in the alternative. The evidence is the `if`'s line.
The arm may return from inside a `with` block, and return a tuple of computed values; an
`elif` arm's alternative is what follows the whole chain (every arm before it is another
backend's fast path, the code after the chain the generic one).
Two more shapes of the same dispatch: an `else`
that does the work in place in the tested tensor's own storage (`t[n:].fill_(-1)`) while the
CUDA arm leaves it to a later kernel and moves nothing; a device's own test
(`device.type == "cuda"`) whose alternative allocates on that device, the arms assigning the
same names, the same calls, and only a string label for a log apart (`how = "cudaMalloc"`).
Limits: arms that return or assign constants choose a value (`return 1` / `return 0`);
a branch without an alternative (`if x.is_cuda: mask = mask.to(x.device)`,
`y = y.pin_memory()`) is a finding: on other devices the work is skipped; an alternative that
moves to the CPU (`.cpu()`, `"cpu"`), allocates there (a torch factory without `device=`,
`torch.empty(n)`, also under a tensor's own test) or names `"cuda"` is no generic path; a CUDA arm that
moves a tensor (`.cuda()`, `.to(...)`, `device=`) beside an in-place `else` is a finding; a
device test whose alternative does not use the device (`torch.empty(n)`: the CPU) is one.
"""
from __future__ import annotations

import ast

from devlint.evidence import Reason

_CPU_MOVES = frozenset({"cpu", "numpy"})


def fast_path_reason(stmt: ast.If, rest, path: str | None,
                     device: bool = False) -> Reason | None:
    """`stmt` tests a tensor for CUDA; `rest` is the statements after it in its block.
    `device`: the test asks a device (`device.type == "cuda"`), not a tensor; the
    alternative must then use that device (`torch.empty(n, device=device)`)."""
    body = stmt.body
    if not body:
        return None
    if stmt.orelse:
        other = stmt.orelse
        same = _returns(body) and _returns(other) or (
            _assigned(body) and _assigned(body) == _assigned(other)
            and _same_calls(body, other)) or (
            _in_place(other, _tested(stmt.test)) and not _moves(body))
    else:
        other = rest
        same = _returns(body) and bool(rest) and any(
            isinstance(n, ast.Return) and _computed(n.value)
            for st in rest for n in ast.walk(st))
    if not same or not other or not _generic(other):
        return None
    if device and not any(isinstance(n, ast.Name) and n.id in _tested(stmt.test)
                          for st in other for n in ast.walk(st)):
        return None
    return Reason("fast-path", "a CUDA fast path whose alternative computes the same on any "
                  "device", path, stmt.lineno)


def _returns(block) -> bool:
    """The block ends by returning a computed value (a call): a constant returned is a
    choice, not the same computation done another way."""
    last = block[-1]
    while isinstance(last, (ast.With, ast.AsyncWith)) and last.body:
        last = last.body[-1]  # `with torch.autocast("cuda", enabled=False): return f(x)`
    return isinstance(last, ast.Return) and _computed(last.value)


def _computed(value) -> bool:
    """A call, or a tuple of calls (`return rope(q), rope(k)`)."""
    if isinstance(value, ast.Tuple):
        return bool(value.elts) and all(isinstance(e, ast.Call) for e in value.elts)
    return isinstance(value, ast.Call)


def _assigned(block) -> frozenset:
    """The names the block assigns, where it computes at least one of them (a call) and
    assigns nothing but calls and string labels (`alloc = "cudaMalloc"`, a name for a log):
    a block of constants only (`on_cpu = True`) is a choice, not a computation."""
    names = set()
    computed = False
    for st in block:
        if isinstance(st, (ast.Assign, ast.AnnAssign)):
            if isinstance(st.value, ast.Call):
                computed = True
            elif not (isinstance(st.value, ast.Constant) and isinstance(st.value.value, str)):
                return frozenset()  # a constant assigned is a choice, not a computation
        if isinstance(st, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for t in getattr(st, "targets", None) or [st.target]:
                names.update(ast.unparse(n) for n in ast.walk(t)
                             if isinstance(n, (ast.Name, ast.Attribute)) and n is t)
    return frozenset(names) if computed else frozenset()


def _same_calls(body, other) -> bool:
    """Where an arm assigns a string label (`how = "cudaMalloc"`), the arms compute the same
    (the same calls, assigned to the same names): the test then only chooses the label. Two
    different computations beside labels (`reason = f(src, dev); direction = "H2D"` against
    `reason = f(dev, src); direction = "D2H"`) are a choice between meanings."""
    def label(st):
        return isinstance(st, (ast.Assign, ast.AnnAssign)) and isinstance(st.value, ast.Constant)

    if not any(label(st) for st in [*body, *other]):
        return True
    def calls(block):
        return sorted(ast.dump(st) for st in block if not label(st))
    return calls(body) == calls(other)


def _tested(test) -> set:
    """The names whose CUDA-ness the test asks (`t.is_cuda`, `t.device.type == "cuda"`)."""
    roots = set()
    for n in ast.walk(test):
        if isinstance(n, ast.Attribute) and n.attr in ("is_cuda", "device", "type"):
            root = n.value
            while isinstance(root, (ast.Attribute, ast.Subscript)):
                root = root.value
            if isinstance(root, ast.Name):
                roots.add(root.id)
    return roots


def _in_place(block, tensors) -> bool:
    """Every statement of the block is an in-place call on a tested tensor or a slice of it
    (`t[n:].fill_(-1)`, `t.copy_(src)`): the work is done in the tensor's own storage, on
    its own device, whatever that is."""
    if not block or not tensors:
        return False
    for st in block:
        call = st.value if isinstance(st, ast.Expr) else None
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and call.func.attr.endswith("_") and not call.func.attr.startswith("_")):
            return False
        root = call.func.value
        while isinstance(root, (ast.Attribute, ast.Subscript)):
            root = root.value
        if not (isinstance(root, ast.Name) and root.id in tensors):
            return False
    return True


def _moves(block) -> bool:
    """The block moves a value or builds one on a device (`.cuda()`, `.to(...)`, a
    `device=` keyword): a CUDA arm that does so while the other leaves it is a finding."""
    for st in block:
        for n in ast.walk(st):
            if isinstance(n, ast.Attribute) and n.attr in ("cuda", "to", "pin_memory"):
                return True
            if isinstance(n, ast.keyword) and n.arg == "device":
                return True
    return False


# torch's factories: without `device=` they allocate on the CPU
_FACTORIES = frozenset({"empty", "zeros", "ones", "full", "rand", "randn", "randint", "randperm",
                        "arange", "linspace", "logspace", "eye", "tensor", "empty_strided"})


def _allocates_on_cpu(n) -> bool:
    """`torch.empty(n)`: a factory called without a device (`torch.empty_like(t)` keeps
    `t`'s)."""
    return isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) \
        and n.func.attr in _FACTORIES and isinstance(n.func.value, ast.Name) \
        and n.func.value.id == "torch" and not any(k.arg in ("device", None)
                                                   for k in n.keywords)


def _generic(block) -> bool:
    for st in block:
        for n in ast.walk(st):
            if _allocates_on_cpu(n):
                return False
            if isinstance(n, ast.Constant) and isinstance(n.value, str) \
                    and (n.value == "cpu" or n.value.startswith("cuda")):
                return False
            if isinstance(n, ast.Attribute) and (n.attr in _CPU_MOVES or n.attr == "cuda"):
                return False
    return True
