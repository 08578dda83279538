"""Flags chosen by a CUDA test, for the caller walk of `xcallers` (`evidence.cuda_choice`, the
`cuda-choice` principle): `if self.use_fused:` where every value `use_fused` is given in its
file is a test that establishes CUDA (or False/None) selects CUDA as the test itself would.

`choice(walker, test)` answers for a test of a walked file (memoized per walker); `walk_if`
lets the walker descend an `if` on such a flag with the `Choice` as its `why`; `written_elsewhere`
reads the package's other files (bytes, a substring first) for a write of an attribute flag."""
from __future__ import annotations

import ast
import os
import re

from devlint.analysis.method_uses import _reported_test
from devlint.evidence import cuda_callers, cuda_choice
from devlint.evidence.cuda_choice import Choice

_ATTR_OWNERS = ("self", "cls")


def polarity(walker, test) -> int:
    """+1 / -1 where `test` (true / false) selects CUDA through a chosen flag, else 0."""
    sign, _ = _judge(walker, test)
    return sign


def walk_if(walker, stmt) -> bool:
    """Walk `if <flag>:` with the flag's `Choice` as the `why` of the arm it selects; False
    (nothing walked) when the test reads no chosen flag."""
    sign, found = _judge(walker, stmt.test)
    if not sign:
        return False
    walker.expr(stmt.test, None)
    walker.block(stmt.body, found if sign > 0 else None)
    walker.block(stmt.orelse, found if sign < 0 else None)
    return True


def _judge(walker, test):
    """(sign, Choice) of a test: a chosen flag (+1), its negation (-1), an `and` with a
    chosen operand (+1), an `or` of chosen operands only (+1)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        sign, found = _judge(walker, test.operand)
        return (-1, found) if sign > 0 else (0, None)
    if isinstance(test, ast.BoolOp):
        got = [_judge(walker, v) for v in test.values]
        if isinstance(test.op, ast.And):
            return next(((1, f) for s, f in got if s > 0), (0, None))
        return (1, got[0][1]) if all(s > 0 for s, _ in got) else (0, None)
    key = None
    if isinstance(test, ast.Name):
        key = ("n", test.id)
    elif isinstance(test, ast.Attribute) and isinstance(test.value, ast.Name) \
            and test.value.id in _ATTR_OWNERS:
        key = ("a", test.attr)
    if key is None:
        return 0, None
    memo = walker.__dict__.setdefault("_choices", {})
    if key not in memo:
        memo[key] = _flag(walker, *key)
    found = memo[key]
    return (1, found) if found is not None else (0, None)


def _flag(walker, kind: str, name: str):
    """The Choice of a flag every value of which in the file is a CUDA test (at least one)
    or False/None, and which no other file of the package writes (an attribute); else None."""
    if not _may_be_chosen(walker.facts.text, name):
        return None
    stores, assigns = _stores(walker).get((kind, name), (0, ()))
    if stores is None or not assigns or len(assigns) != stores:
        return None  # a parameter, `global`, a loop, `with ... as`, `+=`, a walrus, a tuple
    first = None
    for n in assigns:
        value = n.value
        if isinstance(value, ast.Constant) and value.value in (False, None):
            continue
        on_true, _, _ = walker.tests._sides(value)
        if not on_true or _reported_test(value):
            return None
        if first is None or n.lineno < first:
            first = n.lineno
    if first is None:
        return None
    if kind == "a" and written_elsewhere(walker, name):
        return None
    owner = "self." if kind == "a" else ""
    return Choice(owner + name, walker.facts.path, first)


# what a CUDA test names (`is_cuda()`, `torch.cuda`, `"cuda"`, a compute capability)
_CUDA_WORD = re.compile(r"(?i)cuda|sm_?\d|capabilit|hopper|blackwell|ampere|nvidia")


def _may_be_chosen(text: str, name: str) -> bool:
    """Whether some assignment of `name` in the text may be a CUDA test: a CUDA word within
    the 300 characters after it (a text filter before the file is walked)."""
    for m in re.finditer(r"\b%s[ \t]*(?::[^=\n]*)?=(?!=)" % re.escape(name), text):
        if _CUDA_WORD.search(text, m.end(), m.end() + 300):
            return True
    return False


def _stores(walker) -> dict:
    """{(kind, name): (stores, [single-target assignments])} of the walked file, "n" for
    names and "a" for attributes (any object's); stores None where a parameter or a
    `global` / `nonlocal` names it. One walk per file (memoized per project)."""
    project = getattr(walker, "project", None)
    memo = project.__dict__.setdefault("_flag_stores", {}) if project is not None \
        else walker.__dict__.setdefault("_flag_stores", {})
    path = walker.facts.path
    if path in memo:
        return memo[path]
    counts: dict = {}
    assigns: dict = {}
    banned: set = set()
    for n in ast.walk(walker.facts.tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            counts[("n", n.id)] = counts.get(("n", n.id), 0) + 1
        elif isinstance(n, ast.Attribute) and isinstance(n.ctx, (ast.Store, ast.Del)):
            counts[("a", n.attr)] = counts.get(("a", n.attr), 0) + 1
        elif isinstance(n, ast.arg):
            banned.add(("n", n.arg))
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            banned.update(("n", x) for x in n.names)
        elif isinstance(n, (ast.Assign, ast.AnnAssign)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            if len(targets) == 1 and n.value is not None:
                t = targets[0]
                if isinstance(t, ast.Name):
                    assigns.setdefault(("n", t.id), []).append(n)
                    assigns.setdefault(("a", t.id), []).append(n)  # a class attribute
                elif isinstance(t, ast.Attribute):
                    assigns.setdefault(("a", t.attr), []).append(n)
    out = {}
    for key in set(counts) | set(assigns):
        stores = counts.get(key, 0)
        if key[0] == "a":  # a class body's `name = ...` stores the attribute too
            stores += counts.get(("n", key[1]), 0)
        out[key] = (None if key in banned else stores, assigns.get(key, ()))
    if len(memo) >= 64:
        del memo[next(iter(memo))]
    memo[path] = out
    return out


def _names(target, kind: str, name: str) -> bool:
    if isinstance(target, ast.Name):
        return target.id == name
    if isinstance(target, ast.Attribute):
        return kind == "a" and target.attr == name
    return any(_names(t, kind, name) for t in getattr(target, "elts", ()))


def written_elsewhere(walker, attr: str) -> bool:
    """Whether another file of the walked file's package may write the attribute: `.attr =`,
    an indented `attr = ...` (a subclass's class attribute, a keyword), `setattr(...,
    "attr", ...)`. Unknown package: True. Memoized per project and package."""
    project, pkg = getattr(walker, "project", None), getattr(walker, "package", None)
    if project is None or pkg is None:
        return True
    root, top = pkg[0], pkg[1].split(".")[0]
    memo = project.__dict__.setdefault("_flag_writes", {})
    key = (root, top, attr)
    if key not in memo:
        word = attr.encode()
        pattern = re.compile(rb"(?:\.|^[ \t]+|[(,][ \t]*)%s[ \t]*(?::[^=\n]*)?=(?!=)"
                             rb"|setattr\([^)\n]*[\"']%s[\"']" % (re.escape(word),
                                                                 re.escape(word)), re.M)
        own = os.path.abspath(walker.facts.path)
        found = False
        for path, _ in project.files(root, top):
            if os.path.abspath(path) == own:
                continue
            try:
                with open(path, "rb") as f:
                    data = f.read()
            except OSError:
                continue
            if word in data and pattern.search(data):
                found = True
                break
        memo[key] = found
    return memo[key]


_TRITON_KERNEL = re.compile(r"^[ \t]*@(?:triton|tl)\.(?:jit|autotune|heuristics)\b", re.M)


def generic_kernel(project, path: str) -> bool:
    """Whether the module defines a Triton kernel (`@triton.jit`): a Triton kernel runs on
    other accelerators too, so its wrapper is device-generic code whoever chose to reach it
    (the rubric's `assert t.is_cuda` in a Triton wrapper). Memoized per project."""
    memo = project.__dict__.setdefault("_triton_modules", {})
    if path not in memo:
        text = project.text(path) or ""
        memo[path] = "triton" in text and bool(_TRITON_KERNEL.search(text))
    return memo[path]


def site(project, target_path: str, path: str, row: int, why: Choice, choice):
    """(the `cuda_callers.Site` of a use under a chosen flag, or None where the target is a
    Triton kernel's wrapper; the first choice met, a Reason)."""
    if generic_kernel(project, target_path):
        return None, choice
    return (cuda_callers.site(path, row, cuda_choice.site_text(why)),
            choice or cuda_choice.evidence(why))


def through(project, target_path: str, up, choice):
    """A caller's answer `up` ((Reason, by_test) or None) for the target at `target_path`:
    none where the caller runs on CUDA by a chosen flag and the target wraps a Triton kernel;
    with the first choice met."""
    if up and up[0].principle == cuda_choice.PRINCIPLE:
        if generic_kernel(project, target_path):
            return None, choice
        return up, choice or up[0]
    return up, choice
