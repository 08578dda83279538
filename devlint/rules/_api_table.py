"""The check shared by the table-driven rules (DL401, DL404): a `torch.cuda.X` reference whose
replacement the data table names, rewritten where the target torch has it.

Size: ~580 lines: one walk over a file's `torch.cuda` references decides, per reference, between
the table's form, the guard form (a CUDA query and the code it guards, rewritten together) and
the project's own forms (its device module or wrappers); the three meet in `_table_uses`. The
project forms are the first candidates to move out into a module of their own."""
from __future__ import annotations

import ast
import bisect
from dataclasses import replace
from functools import lru_cache

from devlint.diagnostics import Applicability, Edit, Fix
from devlint.analysis.model import simple_name
from devlint.analysis.fixkit import Expr, bind_expr, in_test_module, make_fix, parens_redundant
from devlint.profiles import get_profile
from devlint.profiles.torch_api import best_entry, entries_by_name, profile_overrides
from devlint.evidence import Reason
from devlint.evidence.not_a_device import annotation_reason
from devlint.evidence.project_policy import forbidden_call, outranks, policy_profile
from devlint.evidence.redundant_seed import CUDA_SEEDS, redundant_seed_reason
from devlint.rules._device import (guards_cuda_only, note_exempt, note_guarded, skipped,
                                   why_skipped)
from devlint.rules._guard_body import (accelerator_value_edits, device_type_call_edits,
                                      opens_to_accelerator)
from devlint.source import newline_of


def table_findings(rule, facts, annotations_when_constructed=False):
    """Findings for the file's `torch.cuda` references that the table maps for this rule.

    Only uses count: calls (and constructions). A bare reference (`orig = torch.cuda.Stream`,
    saved before a monkeypatch) is not one, nor is code under a CUDA guard (unless the
    profile's project forbids the call there too: `evidence.project_policy`). Annotations are
    never findings; with `annotations_when_constructed`, the annotation of a variable or
    attribute (not of a parameter or return) that names a class the file constructs in a
    reported use rides on that construction's fix, so that the file's declared types follow
    its objects (`self.pool: list[torch.cuda.Event] = []` beside `torch.cuda.Event()`
    rewritten to `torch.Event()`)."""
    if facts.cuda_alike:
        return
    table = entries_by_name(rule.code)
    if not table:
        return
    target = target_of(facts)
    annotations = [] if annotations_when_constructed else None
    reported: dict = {}  # qual -> its findings
    found = []
    for qual, diag in _table_uses(rule, facts, table, target, annotations):
        reported.setdefault(qual, []).append(diag)
        diag.table_api = True
        found.append(diag)
    if annotations:
        _annotations_follow(rule, facts, target, annotations, reported)
    yield from found


def _annotations_follow(rule, facts, target, annotations, reported) -> None:
    """An annotation is no finding of its own (it changes nothing at run time), but where the
    file constructs the class it names, the fix of that construction rewrites the annotation
    too: the annotation of the construction's own target first, else that of any target the
    file annotates with the class."""
    constructed = _construction_targets(facts)
    for node, par, qual, entries in annotations:
        key = _annotated_target(facts, node)
        if key is None or qual not in reported:
            continue  # parameters and returns only describe values made elsewhere
        hosts = [d for d in reported[qual] if d.fix is not None]
        host = next((d for d in hosts if constructed.get(d.start) == key),
                    hosts[0] if hosts else None)
        if host is None:
            continue
        ann = _finding(rule, facts, node, par, best_entry(entries, target), target)
        if ann.fix is None:
            continue
        s, e = facts.span(node)
        own = tuple(x for x in ann.fix.edits if s <= x.start and x.end <= e)
        taken = {(x.start, x.end) for x in host.fix.edits}
        host.fix = replace(host.fix, applicability=_less_safe(host.fix, ann.fix),
                           edits=host.fix.edits + tuple(
                               x for x in own if (x.start, x.end) not in taken))


def _less_safe(fix: Fix, other: Fix) -> Applicability:
    """The applicability of a fix that also makes `other`'s edits: the less safe of the two."""
    order = [Applicability.SAFE, Applicability.UNSAFE, Applicability.DISPLAY_ONLY]
    return max(fix.applicability, other.applicability, key=order.index)


def target_of(facts):
    return facts.settings.target_torch_tuple(facts.profile)


def _patched_apis(facts) -> frozenset:
    """The `torch.cuda.X` a module assigns (`torch.cuda.set_stream = _patched_set_stream`):
    its own calls of X then mean its replacement, which the generic API would bypass."""
    return frozenset(q for node, q in facts.torch_refs
                     if isinstance(getattr(node, "ctx", None), ast.Store))


def _table_uses(rule, facts, table, target, annotations):
    """(qual, diagnostic) for each reported use; each annotation that may be tied to one is
    appended to `annotations` (None: annotations are not considered)."""
    patched = facts.memo("patched_apis", lambda: _patched_apis(facts))
    for node, qual in facts.torch_refs:
        entries = table.get(qual)
        project = project_form(rule.code, facts, qual)
        if not entries:
            if project is None and (rule.code != "DL401"
                                    or qual not in profile_overrides(facts.profile)):
                continue
            entries = ()  # a project's own CUDA-only helper the profile replaces
        if qual in patched:
            continue  # the module replaced `torch.cuda.X` with its own: it calls that one
        if isinstance(getattr(node, "ctx", None), (ast.Store, ast.Del)):
            continue  # `torch.cuda.synchronize = f` replaces the API, it does not call it
        w = facts.where_of(node)
        reason = why_skipped(facts, node, api=True, annotations=True)
        bound = policy_profile(facts)
        forbidden = forbidden_call(bound, qual)
        if reason is not None and not outranks(bound, qual, reason):
            note_exempt(facts, node, reason)
            note_guarded(facts, node, reason)
            continue
        # a guard, ladder arm or redundant seed the project's own rule outranks
        suffix = f" (also here: {forbidden} forbids it)" if forbidden and reason else ""
        par = facts.get_parent(node)
        if w is not None and w.annotation:
            if annotations is not None:
                annotations.append((node, par, qual, entries))
            note_exempt(facts, node, annotation_reason(node, facts.path))
            continue
        if not (isinstance(par, ast.Call) and par.func is node):
            if not (isinstance(par, ast.keyword) or (isinstance(par, ast.Call)
                                                     and node in par.args)):
                continue  # a bare reference (saved before a monkeypatch), not a use
        if in_skip_gate(facts, node):
            continue  # DL203 reports the whole gate
        if _is_query_test(facts, node, par, qual):
            continue
        silence = _reported_by(facts, par) or _guards_cuda_only_code(facts, par, qual)
        if silence is not None:
            note_exempt(facts, node, silence)
            continue
        if _is_ipc_event(facts, par, qual):
            continue
        seed = qual in CUDA_SEEDS and not forbidden and _redundant_seed(facts, par)
        if seed:
            note_exempt(facts, node, seed)
            continue  # `torch.manual_seed` of the same value seeds every device already
        if project is not None:
            yield qual, _noted(_project_finding(rule, facts, node, par, qual, project), suffix)
            continue
        entry = best_entry(entries, target)
        guard = _guard_of(facts, node, qual)
        seeds = [_redundant_seed(facts, st.value) if isinstance(st, ast.Expr) else None
                 for st in guard or ()]
        if guard and all(seeds) and not any(
                forbidden_call(policy_profile(facts), facts.qualname(st.value.func))
                for st in guard):
            note_exempt(facts, node, Reason(
                "redundant-seed", "the test guards only CUDA seeds that `torch.manual_seed` of "
                "the same value already sets", seeds[0].path, seeds[0].line))
            continue  # it guards only redundant seeds: nothing depends on it
        if guard is not None and entry is not None and _has_form(entry):
            # the guard of CUDA code (`if torch.cuda.is_available(): torch.cuda.empty_cache()`):
            # the body is not a finding of its own, so a fix rewrites both, unsafely
            yield qual, _noted(_guard_finding(rule, facts, node, par, entry, target, guard),
                               suffix)
            continue
        if entry is None or not _has_form(entry):
            # no generic form in torch: a finding only where the profile offers one
            found = _profile_finding(rule, facts, node, par, qual)
            if found is not None:
                yield qual, _noted(found, suffix)
            continue
        yield qual, _noted(_finding(rule, facts, node, par, entry, target), suffix)


def _noted(diag, suffix: str):
    diag.message += suffix
    return diag


def _redundant_seed(facts, call):
    if not (isinstance(call, ast.Call) and (facts.qualname(call.func) or "") in CUDA_SEEDS):
        return None
    w = facts.where_of(call.func) or facts.where_of(call)
    scope = w.function if w is not None and w.function is not None else facts.tree
    return redundant_seed_reason(call, scope, facts.qualname, facts.source, facts.path)


_GUARD_QUERIES = ("torch.cuda.is_available", "torch.cuda.device_count")


def _guard_of(facts, node, qual):
    """The statements a CUDA query guards, when `node` is (in) the test of an `if`: its body,
    or, for `if not <query>: return`, the rest of its block. None otherwise."""
    if qual not in _GUARD_QUERIES:
        return None
    par = facts.get_parent(node)
    grand = facts.get_parent(par) if par is not None else None
    if isinstance(grand, ast.IfExp) and grand.test is par:
        return [grand.body, grand.orelse]  # `torch.cuda.current_device() if <query> else "cpu"`
    w = facts.where_of(node)
    stmt = w.statement if w is not None else None
    if not isinstance(stmt, (ast.If, ast.Assert)):
        return None
    s, e = facts.span(stmt.test)
    if not s <= facts.span(node)[0] < e:
        return None
    if isinstance(stmt, ast.Assert):  # `assert torch.cuda.is_available()` guards the rest
        block = _enclosing_block(facts, stmt)
        return block[block.index(stmt) + 1:] if block is not None else None
    if not stmt.orelse and stmt.body and isinstance(stmt.body[-1], (ast.Return, ast.Raise)) \
            and isinstance(stmt.test, ast.UnaryOp):
        block = _enclosing_block(facts, stmt)
        return block[block.index(stmt) + 1:] if block is not None else None
    return stmt.body


def _starts_within(starts: list, s: int, e: int) -> list:
    """The keys of sorted (offset, key) pairs whose offset lies in [s, e)."""
    lo = bisect.bisect_left(starts, (s,))
    hi = bisect.bisect_left(starts, (e,))
    return [k for _, k in starts[lo:hi]]


def guard_body_edits(facts, body, target, accelerator: bool = False, device=None):
    """Edits that rewrite the `torch.cuda` calls of a guarded body with their table
    replacements (same arguments); None where the body holds a CUDA use without one available
    at `target`, or a device literal (the guard's fix cannot rewrite it).

    With `accelerator` (the rewritten guard lets the body run only where an accelerator is
    available: `if torch.accelerator.is_available():`, a skip gate on it), the body's own
    device values follow too (`accelerator_value_edits`); other literals still mean None.
    `device` (object, type string): the device the rewritten guard runs the body on, where it
    is a tensor's (`if t.is_cuda:` -> `t.device`); the body's device values take it."""
    accelerator = accelerator or device is not None
    from devlint.rules._device import device_strings

    if not body:
        return []
    spans = [facts.span(st) for st in body]
    local = facts.torch_name() or "torch"
    # the nodes that start inside the body, found by bisecting their sorted starts (computed
    # once per file: a generated file has thousands of guards), kept in their original order
    every = facts.memo("guard_literals", lambda: (*device_strings(facts), *facts.fstrings))
    lit_starts = facts.memo("guard_literal_starts", lambda: sorted(
        (facts.span(n)[0], i) for i, n in enumerate(every)))
    ref_starts = facts.memo("torch_ref_starts", lambda: sorted(
        (facts.span(node)[0], i) for i, (node, _) in enumerate(facts.torch_refs)))
    edits = []
    literals = [every[i] for i in sorted({i for s, e in spans
                                          for i in _starts_within(lit_starts, s, e)})]
    if literals or accelerator:
        more = accelerator_value_edits(facts, body, literals, local, target, device) \
            if accelerator else None
        if more is None:
            return None
        edits.extend(more)
    for i in sorted({i for s, e in spans for i in _starts_within(ref_starts, s, e)}):
        node, qual = facts.torch_refs[i]
        par = facts.get_parent(node)
        if isinstance(par, ast.Attribute) and par.value is node:
            continue
        entries = [e for code in ("DL401", "DL402", "DL403", "DL404")
                   for e in entries_by_name(code).get(qual, ())]
        entry = best_entry(entries, target)
        bare = isinstance(par, ast.Call) and par.func is node and not par.args \
            and not par.keywords  # `torch.cuda.synchronize()`: no argument to translate
        if entry is not None and entry.insert_device_type and accelerator \
                and entry.available_for(target):
            more = device_type_call_edits(facts, node, par, entry, local, target, device)
            if more is None:
                return None
            edits.extend(more)
            continue
        if entry is None or not _has_form(entry) or not entry.available_for(target) \
                or not (entry.args == "same" or bare) or entry.insert_device_type:
            return None
        s, e = facts.span(par if entry.whole_call else node)
        if entry.whole_call and not bare:
            return None
        edits.append(Edit(s, e, entry.callee(local)))
    return edits


def _has_form(entry) -> bool:
    """The table names a generic form: a torch callee, or a `form` (below 2.6)."""
    return bool(entry.replacement or entry.form)


def _guard_finding(rule, facts, node, par, entry, target, body):
    """The guard itself is the finding; its fix (where the body can follow) rewrites the test
    and the body together and is unsafe: it changes which branch runs."""
    diag = _finding(rule, facts, node, par, entry, target)
    if diag.fix is None:
        return diag
    more = guard_body_edits(facts, body, target, opens_to_accelerator(facts, node, body))
    if more is None:
        diag.fix = None
        diag.message += " (the guarded code must follow; no automatic fix)"
        return diag
    s, e = facts.span(par if entry.whole_call else node)
    repl = entry.callee(facts.torch_name() or "torch")
    expr = Expr(repl, () if facts.torch_name() else ("import torch",), "", False)
    diag.fix = make_fix(facts, f"Use `{repl}` for the guard and the code it guards",
                        [Edit(s, e, repl), *more], expr, safe=False)
    return diag


@lru_cache(maxsize=None)
def device_module_names() -> frozenset:
    """`torch.cuda` names a device module offers on every backend (devlint/data/
    device_module_api.toml)."""
    import os

    from devlint.profiles import _load_toml_bytes

    path = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data",
                        "device_module_api.toml")
    with open(path, "rb") as f:
        return frozenset(_load_toml_bytes(f.read())["names"])


@lru_cache(maxsize=None)
def _owner(qual: str) -> str:
    """The rule whose table maps `qual` (DL401 for device-module names no table has)."""
    for code in ("DL401", "DL402", "DL403", "DL404"):
        if qual in entries_by_name(code):
            return code
    return "DL401"


def project_form(code: str, facts, qual: str):
    """The project's own form of `torch.cuda.X` in the file's profile, as ("wrapper" |
    "module", RoleExpr): the profile's `api` wrapper of X, else its `device-module` role when
    that module offers X. None: the torch table decides."""
    if not qual.startswith("torch.cuda.") or _owner(qual) != code:
        return None
    name = qual[len("torch.cuda."):]
    if "." in name:
        return None
    prof = get_profile(facts.profile, facts.settings)
    test = in_test_module(facts)
    wrapper = prof.api_wrapper(qual, test)
    if wrapper is not None:
        return ("wrapper", wrapper)
    dm = prof.role("device-module", None, test)
    if dm is not None and name in device_module_names() and (not dm.names or name in dm.names):
        return ("module", dm)
    return None


def _project_finding(rule, facts, node, par, qual, project):
    """`torch.cuda.X(...)` -> `<device-module>.X(...)`, or the call -> the project's wrapper
    (`{args}` in its expression stands for the call's arguments)."""
    kind, r = project
    name = qual[len("torch.cuda."):]
    s, e = facts.span(node)
    what = "device-module" if kind == "module" else f"wrapper of {qual}"
    expr = bind_expr(facts, r, f"the {facts.profile} profile's {what}")
    call = par if isinstance(par, ast.Call) and par.func is node else None
    if kind == "module":
        repl = f"{expr.text}.{name}"
        edits = [Edit(s, e, repl)]
    elif call is not None:
        cs, ce = facts.span(call)
        if "{args}" in expr.text:
            if call.keywords:
                # the wrapper's parameters may be named otherwise (`set_device(local_rank)`)
                return rule.diagnostic(facts, (s, e), f"`{facts.text[s:e]}` is CUDA-only; the "
                                       f"project's `{expr.text}` takes positional arguments",
                                       None)
            repl = expr.text.replace("{args}", ", ".join(facts.source(a) for a in call.args))
        elif call.args or call.keywords:
            return rule.diagnostic(facts, (s, e), f"`{facts.text[s:e]}` is CUDA-only; the "
                                   f"project's `{expr.text}` takes no arguments", None)
        else:
            repl = expr.text
        s, e, edits = cs, ce, [Edit(cs, ce, repl)]
    else:
        return rule.diagnostic(facts, (s, e), f"`{facts.text[s:e]}` is CUDA-only", None)
    fix = make_fix(facts, f"Use the project's `{repl}`", edits, expr, safe=False)
    return rule.diagnostic(facts, (s, e), f"`{facts.text[s:e]}` is CUDA-only; the project "
                           f"calls `{repl}`", fix)


def _profile_finding(rule, facts, node, par, qual):
    for o in profile_overrides(facts.profile).get(qual, ()):
        if not isinstance(par, ast.Call) or par.func is not node:
            continue
        target = par
        reads = []
        if o.attribute:
            grand = facts.get_parent(par)
            if isinstance(grand, ast.Attribute) and grand.attr == o.attribute \
                    and grand.value is par:
                target = grand
            else:
                # `props = torch.cuda.get_device_properties(i)` read only as `props.name`
                reads = _only_attribute_reads(facts, par, o.attribute)
                if not reads:
                    continue
        arg = _device_index_arg(facts, par.args[0]) if par.args else ""
        repl = o.replacement.replace("{arg}", arg)
        s, e = facts.span(target)
        expr = Expr(repl, o.imports, "", o.safe)
        why = f"; {o.note}" if o.note else ""
        edits = [Edit(s, e, repl)]
        for read in reads:  # `props.name` -> `props`
            _, value_end = facts.span(read.value)
            edits.append(Edit(value_end, facts.span(read)[1], ""))
        fix = make_fix(facts, f"Use `{repl}`{why}", edits, expr, safe=o.safe)
        return rule.diagnostic(facts, (s, e), f"`{facts.text[s:e]}` is CUDA-only; the "
                               f"{facts.profile} profile has `{repl}`", fix)
    return None


def _only_attribute_reads(facts, call, attribute) -> list:
    """The `x.<attribute>` reads of `x = call` when they are the only uses of `x` in the
    function (and `x` is bound once there); else []."""
    stmt = facts.get_parent(call)
    if not (isinstance(stmt, ast.Assign) and stmt.value is call and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)):
        return []
    name = stmt.targets[0].id
    w = facts.where_of(call)
    scope = w.function if w is not None else None
    if scope is None:
        return []
    reads = []
    for n in ast.walk(scope):
        if isinstance(n, ast.Name) and n.id == name and n is not stmt.targets[0]:
            par = facts.tree_parent(n)
            if isinstance(n.ctx, ast.Load) and isinstance(par, ast.Attribute) \
                    and par.value is n and par.attr == attribute:
                reads.append(par)
            else:
                return []
    return reads


def _guards_cuda_only_code(facts, call, qual):
    """`if torch.cuda.is_available(): props = torch.cuda.get_device_properties()`: the test
    guards CUDA-only code, and rewriting it alone would run that code elsewhere (the
    `cuda-guard` Reason, with the guarded code's first line, else None)."""
    if not qual.endswith((".is_available", ".device_count")) or not isinstance(call, ast.Call):
        return None
    cur = facts.get_parent(call)
    while cur is not None and not isinstance(cur, ast.stmt):
        cur = facts.get_parent(cur)
    if not isinstance(cur, ast.If):
        return None
    if guards_cuda_only(facts, cur.body):
        return _guarded_reason(facts, cur.body)
    # `if not torch.cuda.is_available(): return False` guards the rest of the block
    negated = isinstance(cur.test, ast.UnaryOp) and isinstance(cur.test.op, ast.Not) \
        and cur.test.operand is call
    if negated and not cur.orelse and cur.body and isinstance(cur.body[-1], (ast.Return,
                                                                          ast.Raise)):
        block = _enclosing_block(facts, cur)
        if block is not None:
            rest = block[block.index(cur) + 1:]
            if rest and guards_cuda_only(facts, rest):
                return _guarded_reason(facts, rest)
    return None


def _guarded_reason(facts, body):
    return Reason("cuda-guard", "the test guards code with no device-generic form (rewriting "
                  "the test alone would run that code elsewhere)", facts.path, body[0].lineno)


def _enclosing_block(facts, stmt):
    """The statement list holding `stmt`."""
    par = facts.tree_parent(stmt)
    for field in ("body", "orelse", "finalbody"):
        block = getattr(par, field, None)
        if isinstance(block, list) and any(st is stmt for st in block):
            return block
    return None


def _is_ipc_event(facts, call, qual) -> bool:
    """`torch.cuda.Event(interprocess=True)` is a CUDA IPC handle: no generic form."""
    return qual == "torch.cuda.Event" and isinstance(call, ast.Call) and any(
        k.arg == "interprocess" and not (isinstance(k.value, ast.Constant) and not k.value.value)
        for k in call.keywords)


def _device_index_arg(facts, arg) -> str:
    """The platform methods take a device index: `"cuda"` means the default, `x.device` its
    `.index`."""
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return ""
    src = facts.source(arg)
    if src.endswith("device"):
        return f"{src}.index"
    return src


def _construction_targets(facts) -> dict:
    """start offset of a construction's reference -> the target it is assigned to."""
    out = {}
    for node, _qual in facts.torch_refs:
        call = facts.get_parent(node)
        w = facts.where_of(node)
        stmt = w.statement if w else None
        if isinstance(call, ast.Call) and call.func is node \
                and isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            key = simple_name(targets[0]) if len(targets) == 1 else None
            if key:
                out[facts.span(node)[0]] = key
    return out


def _annotated_target(facts, node) -> str | None:
    w = facts.where_of(node)
    stmt = w.statement if w else None
    if isinstance(stmt, ast.AnnAssign):
        return simple_name(stmt.target)
    return None


def _is_query_test(facts, node, par, qual) -> bool:
    """`a if torch.cuda.is_available() else b` picks between a CUDA value and a fallback: the
    test alone is no hardcoding (DL106 rewrites the whole expression)."""
    if not qual.endswith(".is_available") or not isinstance(par, ast.Call):
        return False
    grand = facts.get_parent(par)
    if not (isinstance(grand, ast.IfExp) and grand.test is par):
        return False
    arms = (grand.body, grand.orelse)
    # DL106 rewrites a CUDA-or-CPU value; an arm without CUDA code guards nothing
    return any(_device_value(facts, arm) for arm in arms) or not any(
        (facts.qualname(n) or "").startswith("torch.cuda.")
        for arm in arms for n in ast.walk(arm) if isinstance(n, ast.Attribute))


def _device_value(facts, node) -> bool:
    """`"cuda"` or `torch.device("cuda")`: the arms DL106 rewrites with the whole choice."""
    if isinstance(node, ast.Call) and facts.qualname(node.func) == "torch.device" \
            and len(node.args) == 1:
        node = node.args[0]
    return isinstance(node, ast.Constant) and node.value == "cuda"


_REPORTERS = {"str", "repr", "print", "format", "info", "debug", "warning", "error", "log",
              "info_once", "debug_once", "warning_once"}


def _reported_by(facts, call):
    """A query whose answer is only printed or logged (environment reports, messages): the
    `print-only` Reason at the call that reports it, else None."""
    if not isinstance(call, ast.Call):
        return None
    cur = facts.get_parent(call)
    while cur is not None and not isinstance(cur, ast.stmt):
        if isinstance(cur, ast.Call):
            f = cur.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if name in _REPORTERS:
                return Reason("print-only", f"the answer is only reported (an argument of "
                              f"`{name}(...)`)", facts.path, cur.lineno)
        cur = facts.get_parent(cur)
    return None


def _finding(rule, facts, node, par, entry, target):
    s, e = facts.span(node)
    message = f"`{facts.text[s:e]}` is CUDA-only"
    fix = None
    if entry is not None and entry.available_for(target):
        imports = ()
        local = facts.torch_name()
        if local is None:
            local = "torch"
            imports = ("import torch",)
        repl = entry.callee(local)
        if not (entry.replacement.startswith("torch.") or "{torch}" in entry.form):
            imports = ()
        expr = Expr(repl, imports, "", entry.safe)
        edits = [Edit(s, e, repl)]
        call = par if isinstance(par, ast.Call) and par.func is node else None
        if entry.whole_call:
            # `torch.cuda.is_available()` -> `any(...)`: the form is the whole call
            if call is None or call.args or call.keywords:
                edits = None
            else:
                edits = [Edit(*facts.span(call), repl)]
        if call is not None and "positional-only" in entry.args:
            # `torch.cuda.set_device(device=x)` -> `torch.accelerator.set_device_index(x)`
            for kw in call.keywords:
                if kw.arg == "device" and not call.args:
                    ks, _ = facts.span(kw)
                    vs, _ = facts.span(kw.value)
                    edits.append(Edit(ks, vs, ""))
        established = _accelerator_established(facts, node)
        guard = bool(entry.cpu_value) and not established
        if edits is None:
            pass
        elif guard and call is None and entry.member:
            # `torch.get_device_module().<member>` looks the member up at once, and torch.cpu
            # lacks it: a bare reference cannot be guarded
            edits = None
            message += (f"; `{entry.callee()}` is the generic form where an accelerator is "
                        f"available (no fix: the function is not called here)")
        elif guard and call is not None:
            edits = _guarded(facts, call, edits, local, entry.cpu_value)
        if edits is not None:
            fix = make_fix(facts, f"Use `{repl}`" + (" where an accelerator is available"
                                                      if guard else ""),
                           edits, expr, safe=entry.safe)
            message += f"; use `{entry.callee()}`"
    elif entry is not None and _has_form(entry):
        since = ".".join(map(str, entry.since)) if entry.since else "?"
        message += (f"; `{entry.callee()}` needs torch >= {since} (target-torch is "
                    f"{target[0]}.{target[1]})")
    return rule.diagnostic(facts, (s, e), message, fix)


_AVAILABILITY = ("torch.cuda.is_available", "torch.accelerator.is_available")


def _accelerator_established(facts, node) -> bool:
    """Under a guard that already established CUDA (`if current_platform.is_cuda():`) or an
    available accelerator (`if torch.accelerator.is_available():`): asking again is noise."""
    w = facts.where_of(node)
    if w is not None and w.guarded:
        return True
    child, cur = node, facts.tree_parent(node)
    while cur is not None:
        if isinstance(cur, ast.If) and any(st is child for st in cur.body):
            test = cur.test
            if isinstance(test, ast.Call) and facts.qualname(test.func) in _AVAILABILITY:
                return True
        if isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return False
        child, cur = cur, facts.tree_parent(cur)
    return False


def _guarded(facts, call, edits, torch_local, cpu_value):
    """The original runs on a machine without an accelerator (a no-op, or a counter reading 0)
    where the replacement raises: ask for an accelerator first. A statement of its own becomes
    an `if` block; anywhere else the call becomes `(call if available else cpu_value)`."""
    test = f"{torch_local}.accelerator.is_available()"
    cs, ce = facts.span(call)
    first = min(edits, key=lambda ed: ed.start)
    if first.start != cs:
        return edits  # the callee is not where the call starts: leave the form alone
    rest = [ed for ed in edits if ed is not first]
    stmt = facts.get_parent(call)
    line_start = facts.text.rfind("\n", 0, cs) + 1
    indent = facts.text[line_start:cs]
    line_end = facts.text.find("\n", ce)
    tail = facts.text[ce:len(facts.text) if line_end < 0 else line_end].strip()
    if isinstance(stmt, ast.Expr) and stmt.value is call and not indent.strip() \
            and (not tail or tail.startswith("#")):
        unit = "\t" if "\t" in indent else "    "
        nl = newline_of(facts.text)
        head = Edit(first.start, first.end, f"if {test}:{nl}{indent}{unit}{first.content}")
        return [head, *rest]
    open_, close = ("", "") if parens_redundant(facts, cs, ce) else ("(", ")")
    head = Edit(first.start, first.end, f"{open_}{first.content}")
    return [head, *rest, Edit(ce, ce, f" if {test} else {cpu_value}{close}")]


_SKIP_DECORATORS = ("skipif", "skipIf", "skipUnless")


def in_skip_gate(facts, node) -> bool:
    """Inside `pytest.mark.skipif(...)` / `unittest.skipIf(...)` / `pytestmark = ...`."""
    cur = facts.get_parent(node)
    while cur is not None:
        if isinstance(cur, ast.Call):
            f = cur.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if name in _SKIP_DECORATORS:
                return True
        if isinstance(cur, ast.stmt):
            if isinstance(cur, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark"
                                                   for t in cur.targets):
                return True
            return False
        cur = facts.get_parent(cur)
    return False
