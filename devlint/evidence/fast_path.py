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
Two more: a CUDA arm that tries a fast path and falls through to the generic code where it
declines (`if x.is_cuda: from pkg.ipc import exchange, ready; if ready(pg): out = exchange(x);
if out is not None: return out.view(shape)`, then the generic collective; or `if
try_small_copy(dst, src): return`, then the generic copy): the arm holds only imports,
assignments to names, `if`s of the same, and returns (computed values where the code after
returns one, nothing where the code after returns nothing), and it loads its kernel there
(an import in the arm); and the negated test `if not q.is_cuda: return rope(q, cos, sin)`
whose arm is the generic path (a computed return, no CPU move) with the CUDA path after it,
that loads its kernel only there (an import after the test) and ends by returning.
Where the arms keep different temporaries, they agree when they bind the same names of
those the code after the `if` reads (`out = fused_attn(q, k, v)` with its kernel imported in
the arm, against `q, k = norm(q), norm(k); out = attn(q, k, v)`): the code after receives the
same results from either. The code after a CUDA arm that returns may return a name it
computed first (`out = self._combine(x).to(dtype)`, `return out`). The negated test's CUDA
side may show it is CUDA's by CUDA's own runtime API (`torch.cuda.current_stream(...)`,
`except torch.cuda.OutOfMemoryError`) instead of an import of its kernel.
One more: `if not t.is_cuda: t = t.to(self.device)` moves the tensor to the device the code
was given unless it is a CUDA tensor already: on every other device the move lands where the
code says (a no-op where the tensor is there), so the test only skips a move, it picks no
device (only that one statement, the same tensor rebound, to a device that is a name or an
attribute, not a literal, and no `else`).
Limits: arms that return or assign constants choose a value (`return 1` / `return 0`);
a branch without an alternative (`if x.is_cuda: mask = mask.to(x.device)`,
`y = y.pin_memory()`) is a finding: on other devices the work is skipped; an alternative that
moves to the CPU (`.cpu()`, `"cpu"`), allocates there (a torch factory without `device=`,
`torch.empty(n)`, also under a tensor's own test) or names `"cuda"` is no generic path; a CUDA arm that
moves a tensor (`.cuda()`, `.to(...)`, `device=`) beside an in-place `else` is a finding; a
device test whose alternative does not use the device (`torch.empty(n)`: the CPU) is one.
The arm that falls through, the arms that agree only on what follows, and the negated test
keep their findings where a portable kernel
may be what the CUDA test keeps from other accelerators (the rubric's Triton wrapper): the
module names Triton (`import triton`, a `*_triton` function), or the CUDA side launches a
kernel the Triton way (`kernel[grid](...)`) or calls a function of the module that does; also
where the CUDA side imports nothing (its kernel, imported beside the generic code for every
device, may be a portable one from another module), where a name the arm binds is read after
it (the fall-through carries it), where the arm does any other work before falling through
(a call as a statement), or where it returns a name (`return fused`: not a computation of its
own). Arms that agree only on what follows must both compute (a call) and bind no name the
code after reads to a constant (`on_cpu = True` is a choice), and the CUDA arm must load its
kernel there (an import in the arm).
"""
from __future__ import annotations

import ast

from devlint.evidence import Reason

_CPU_MOVES = frozenset({"cpu", "numpy"})


def fast_path_reason(stmt: ast.If, rest, path: str | None,
                     device: bool = False, portable=None) -> Reason | None:
    """`stmt` tests a tensor for CUDA; `rest` is the statements after it in its block.
    `device`: the test asks a device (`device.type == "cuda"`), not a tensor; the
    alternative must then use that device (`torch.empty(n, device=device)`). `portable(block)`:
    the file or `block` launches a portable kernel (`launches_portable_kernel`), asked of an
    arm that falls through."""
    body = stmt.body
    if not body:
        return None
    if stmt.orelse:
        other = stmt.orelse
        same = _returns(body) and _returns(other) or (
            _assigned(body) and _assigned(body) == _assigned(other)
            and _same_calls(body, other)) or (
            _in_place(other, _tested(stmt.test)) and not _moves(body)) or (
            _agree(body, other, rest) and _imports(body)
            and not (portable is not None and portable(body)))
    else:
        other = rest
        same = _returns(body) and _returns_computed(rest) or (
            _tries(body, rest) and not (portable is not None and portable(body)))
    if not same or not other or not _generic(other):
        return None
    if device and not any(isinstance(n, ast.Name) and n.id in _tested(stmt.test)
                          for st in other for n in ast.walk(st)):
        return None
    return Reason("fast-path", "a CUDA fast path whose alternative computes the same on any "
                  "device", path, stmt.lineno)


def negated_fast_path_reason(stmt: ast.If, rest, path: str | None,
                             portable: bool) -> Reason | None:
    """`stmt` is `if not t.is_cuda:` without an `else`; `rest` the statements after it (the
    CUDA side); `portable`: the file or the CUDA side launches a portable kernel (Triton)."""
    body = stmt.body
    if stmt.orelse or not body or not rest or portable or not _returns(body) \
            or not _generic(body) or not isinstance(rest[-1], ast.Return) \
            or not (_imports(rest) or _cuda_api(rest)):
        return None
    return Reason("fast-path", "the arm taken off CUDA computes the same on the tensor's own "
                  "device; the CUDA path after it launches no portable kernel", path,
                  stmt.lineno)


def moved_to_target_reason(stmt: ast.If, path: str | None) -> Reason | None:
    """`stmt` is `if not t.is_cuda:`; its body only rebinds `t` to `t.to(<a device named by a
    variable or attribute>, ...)` and there is no `else`."""
    if stmt.orelse or len(stmt.body) != 1 or not isinstance(stmt.body[0], ast.Assign):
        return None
    assign, tested = stmt.body[0], stmt.test.operand.value
    call = assign.value
    name = ast.unparse(tested)  # (the target's context is Store, the test's Load)
    if len(assign.targets) != 1 or ast.unparse(assign.targets[0]) != name \
            or not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute) \
            or call.func.attr != "to" or ast.unparse(call.func.value) != name:
        return None
    device = call.args[0] if call.args else next(
        (k.value for k in call.keywords if k.arg == "device"), None)
    if not isinstance(device, (ast.Name, ast.Attribute)) or (
            isinstance(device, ast.Attribute) and device.attr in ("cuda", "cpu")):
        return None
    return Reason("fast-path", "off CUDA the tensor moves to the device the code names "
                  f"(`{ast.unparse(device)}`), a no-op where it is there: the test skips a move, "
                  "it picks no device", path, stmt.lineno)


def launches_portable_kernel(tree, block, named: bool | None = None) -> bool:
    """The module names Triton (`import triton`, a `*_triton` function; `named`: that answer,
    computed once per file), or `block` launches a kernel the Triton way (`kernel[grid](...)`)
    or calls a function of the module that does: a kernel that runs on other accelerators
    too, so the CUDA test keeps it from them."""
    if names_triton(tree) if named is None else named:
        return True
    defs = {st.name: st for st in getattr(tree, "body", ()) if isinstance(
        st, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for st in block:
        for n in ast.walk(st):
            if isinstance(n, ast.Call):
                if isinstance(n.func, ast.Subscript):
                    return True
                fn = defs.get(getattr(n.func, "id", None))
                if fn is not None and any(isinstance(c, ast.Call) and isinstance(
                        c.func, ast.Subscript) for c in ast.walk(fn)):
                    return True
    return False


def names_triton(tree) -> bool:
    """A name, an import or a function of the module that says Triton."""
    for n in ast.walk(tree):
        if isinstance(n, ast.alias):
            word = n.name + " " + (n.asname or "")
        elif isinstance(n, ast.ImportFrom):
            word = n.module or ""
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            word = n.name
        elif isinstance(n, ast.Name):
            word = n.id
        elif isinstance(n, ast.Attribute):
            word = n.attr
        else:
            continue
        if "triton" in word.lower():
            return True
    return False


def _tries(body, rest) -> bool:
    """The arm tries a fast path and falls through to the generic code where it declines:
    it holds only imports, assignments to names, `if`s of the same, and returns, at least one
    (`if ready(pg): out = fast(x); if out is not None: return out.view(shape)`); the names it
    binds are not read after it (a fall-through carries nothing into the generic code); its
    returns all return computed values where the code after it returns one, or all return
    nothing where the code after it returns nothing (a procedure: `if try_fast(dst, src):
    return`, then the generic copy)."""
    exits = []
    if not rest or not _imports(body) or not _attempt(body, exits) or not exits:
        return False
    bound = set()
    for st in body:
        for n in ast.walk(st):
            if isinstance(n, ast.alias):
                bound.add((n.asname or n.name).split(".")[0])
            elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                bound.add(n.id)
    later = [n for st in rest for n in ast.walk(st)]
    if any(isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in bound
           for n in later):
        return False
    returns = [n for n in later if isinstance(n, ast.Return)]
    if all(_computed(r.value) for r in exits):
        return any(_computed(r.value) for r in returns)
    if all(r.value is None or (isinstance(r.value, ast.Constant) and r.value.value is None)
           for r in exits):
        return all(r.value is None for r in returns) and any(
            isinstance(n, ast.Call) for n in later)
    return False


def _returns_computed(rest) -> bool:
    """The code after the arm returns a computed value: a call (`return ref(x)`), or a name
    it binds from one first (`out = self._combine(x).to(dtype)`, then `return out`)."""
    if not rest:
        return False
    made = set()
    for st in rest:
        if isinstance(st, ast.Assign) and any(isinstance(n, ast.Call)
                                              for n in ast.walk(st.value)):
            made.update(t.id for t in st.targets if isinstance(t, ast.Name))
    return any(isinstance(n, ast.Return) and (_computed(n.value) or (
        isinstance(n.value, ast.Name) and n.value.id in made))
        for st in rest for n in ast.walk(st))


def _agree(body, other, rest) -> bool:
    """Both arms compute, and they bind the same names of those the code after the `if`
    reads (`out = fused_attn(q, k, v)` against `q, k = norm(q), norm(k); out = attn(q, k,
    v)`, then `return proj(out)`): whatever other temporaries each arm keeps, the code after
    it receives the same results from either. Names bound to constants are a choice
    (`on_cpu = True`), not a result."""
    live = {n.id for st in rest for n in ast.walk(st)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    outs = []
    for arm in (body, other):
        bound = set()
        for st in arm:
            for n in ast.walk(st):
                if isinstance(n, (ast.Assign, ast.AnnAssign)) and isinstance(
                        n.value, ast.Constant) and any(
                        isinstance(t, ast.Name) and t.id in live
                        for tg in (getattr(n, "targets", None) or [n.target])
                        for t in ast.walk(tg)):
                    return False
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    bound.add(n.id)
        if not any(isinstance(n, ast.Call) for st in arm for n in ast.walk(st)):
            return False
        outs.append(bound & live)
    return bool(outs[0]) and outs[0] == outs[1]


def _cuda_api(block) -> bool:
    """The block calls CUDA's own runtime API (`torch.cuda.current_stream(...)`, `except
    torch.cuda.OutOfMemoryError`): it is written for CUDA, whatever else it does."""
    return any(isinstance(n, ast.Attribute) and n.attr == "cuda"
               and isinstance(n.value, ast.Name) and n.value.id == "torch"
               for st in block for n in ast.walk(st))


def _imports(block) -> bool:
    """The block imports a module: the kernel it runs is loaded only there (a module the code
    does not load off CUDA), not one imported beside the generic code for every device."""
    return any(isinstance(n, (ast.Import, ast.ImportFrom)) for st in block for n in ast.walk(st))


def _attempt(block, exits) -> bool:
    for st in block:
        if isinstance(st, ast.Return):
            exits.append(st)
        elif isinstance(st, ast.If):
            if not (_attempt(st.body, exits) and _attempt(st.orelse, exits)):
                return False
        elif isinstance(st, (ast.Assign, ast.AnnAssign)):
            targets = st.targets if isinstance(st, ast.Assign) else [st.target]
            if not all(isinstance(t, ast.Name) for t in targets):
                return False
        elif not isinstance(st, (ast.Import, ast.ImportFrom)):
            return False
    return True


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
