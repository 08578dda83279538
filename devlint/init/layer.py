"""`devlint init`: the candidates of a project's device layer, their uses (the evidence), and
the roles chosen from them."""
from __future__ import annotations

import ast
from dataclasses import dataclass

from devlint.evidence.vocabulary import is_test_path
from devlint.init.project import (ACCELERATORS, MIN_USES, Candidate, Project,
                                  _accelerator_names, _def_kind, _wrapped_api)


def find_candidates(project: Project, dm_names) -> list:
    out = []
    for mod in sorted(project.mods):
        m = project.mods[mod]
        for name in sorted(m.defs):
            nodes = m.defs[name]
            node = nodes[0]
            if isinstance(node, ast.ClassDef) or name.startswith("__"):
                continue
            is_func = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            backends = project.backends(mod, name)
            names, family = (), frozenset()
            if is_func and len(backends & set(ACCELERATORS)) < 2:
                # a getter of an accelerator object: its class family does the dispatch
                names, family = _accelerator_names(project, mod, node, dm_names)
                backends = backends | family
            if len(backends & set(ACCELERATORS)) < 2:
                continue
            kind = _def_kind(project, mod, name)
            api = ""
            if is_func and kind is None:
                if not names:
                    names, _ = _accelerator_names(project, mod, node, dm_names)
                if names:
                    kind = "module"
                else:
                    # a function that returns no device value, named after the torch.cuda
                    # function it dispatches: that function's wrapper
                    api = _wrapped_api(node, name, dm_names)
                    kind = "api" if api else None
            elif is_func and kind in ("device", "type"):
                # a getter that returns the backends' own answer (`torch.npu.current_device()`
                # / `torch.cuda.current_device()`) wraps that function too
                api = _wrapped_api(node, name, dm_names, calls_only=True)
            if kind is None:
                continue
            params, optional = (), False
            if is_func:
                a = node.args
                pos = a.posonlyargs + a.args
                required = pos[:len(pos) - len(a.defaults)]
                params = tuple(p.arg for p in required)
                optional = len(pos) > len(required) or bool(a.kwonlyargs) or a.vararg is not None
                if any(d is None for d in a.kw_defaults):
                    continue  # required keyword-only arguments: not a drop-in form
            out.append(Candidate(mod, name, m.path, node.lineno, kind, api, is_func, params,
                                 optional, names, tuple(sorted(backends & set(ACCELERATORS)))))
    return out


def count_uses(project: Project, cands: list) -> None:
    """Each candidate's uses outside its own module, through any import of it (absolute,
    relative, re-exported); and the import statement most of them use."""
    index = {(c.module, c.name): c for c in cands}
    forms: dict = {}
    for mod in sorted(project.mods):
        m = project.mods[mod]
        local = {}
        for lname, (base, orig, line) in m.imports.items():
            if orig is None:
                continue
            target = project.resolve(base, orig) if base in project.mods else None
            if target in index and target[0] != mod:
                local[lname] = target
                if not m.path.startswith(".") and lname == orig:
                    key = f"from {base} import {orig}"
                    # only absolute imports can be written into another file
                    stmt_level = _import_level(m.tree, line)
                    if stmt_level == 0:
                        forms.setdefault(target, {}).setdefault(key, 0)
                        forms[target][key] += 1
        if not local:
            continue
        for n in ast.walk(m.tree):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in local:
                c = index[local[n.id]]
                c.uses.append((m.path, n.lineno))
                if m.is_test:
                    c.test_uses += 1
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) \
                    and n.func.id == "getattr" and len(n.args) >= 2 \
                    and isinstance(n.args[0], ast.Name) and n.args[0].id == "torch":
                # `getattr(torch, get_device(), torch.cuda)`: the project's device module,
                # written from its device type
                arg = n.args[1]
                ref = arg.func if isinstance(arg, ast.Call) and not arg.args else arg
                if isinstance(ref, ast.Name) and ref.id in local:
                    c = index[local[ref.id]]
                    default = ast.unparse(n.args[2]) if len(n.args) > 2 else None
                    c.module_uses.append((m.path, n.lineno, m.is_test, default))
    for c in cands:
        f = forms.get((c.module, c.name))
        if f:
            c.import_stmt = sorted(f.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
        else:
            c.import_stmt = f"from {c.module} import {c.name}"


def _import_level(tree, line: int) -> int:
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and n.lineno == line:
            return n.level
    return 0


@dataclass
class Detected:
    main: dict  # role -> Candidate
    tests: dict  # role -> Candidate
    api: dict  # torch.cuda.X -> (Candidate, expr)
    test_api: dict
    candidates: list


def _expr(c: Candidate) -> str:
    if c.expr:
        return c.expr
    return f"{c.name}()" if c.call else c.name


def _module_idiom(c: Candidate, scope_test: bool) -> Candidate:
    """`getattr(torch, <device type>[, default])` as the project writes it most."""
    from collections import Counter
    from dataclasses import replace

    uses = [u for u in c.module_uses if u[2] == scope_test]
    default = sorted(Counter(u[3] for u in uses).items(),
                     key=lambda kv: (-kv[1], kv[0] or ""))[0][0]
    arg = f"{c.name}()" if c.call else c.name
    tail = "" if default is None else ", " + default.replace("torch.", "{torch}.")
    return replace(c, kind="module", expr=f"getattr({{torch}}, {arg}{tail})",
                   uses=[(p, ln) for p, ln, _, _ in uses],
                   test_uses=len(uses) if scope_test else 0, idiom=True)


def choose(cands: list, dm_names) -> Detected:
    def ranked(pool, scope_test):
        def n(c):
            return c.test_uses if scope_test else len(c.uses) - c.test_uses
        return sorted((c for c in pool if n(c) >= MIN_USES), key=lambda c: (-n(c), c.module, c.name))

    def test_only(c):
        return c.test_uses * 2 > len(c.uses) or is_test_path(c.path.split("/")) \
            or c.module.rsplit(".", 1)[-1].startswith("testing")

    # one local name stands for one definition in every fixed file
    taken: dict = {}

    def free(c):
        return taken.setdefault(c.name, (c.module, c.name)) == (c.module, c.name)

    main: dict = {}
    tests: dict = {}
    for scope_test, out in ((False, main), (True, tests)):
        pool = [c for c in cands if scope_test or not test_only(c)]
        usable = [c for c in pool if not c.params]
        for role, kinds in (("device-module", ("module",)), ("device", ("device",)),
                            ("device-type", ("type",))):
            for c in ranked([c for c in usable if c.kind in kinds], scope_test):
                if free(c):
                    out[role] = c
                    break
        if "device-module" not in out:
            # no helper returns the module, but the project writes it from its device type
            def n_mod(c):
                return sum(1 for u in c.module_uses if u[2] == scope_test)
            idiom = sorted((c for c in usable if c.kind in ("type", "device")
                            and n_mod(c) >= MIN_USES and taken.get(c.name, (c.module, c.name))
                            == (c.module, c.name)), key=lambda c: (-n_mod(c), c.module, c.name))
            if idiom:
                out["device-module"] = _module_idiom(idiom[0], scope_test)
        if "device" not in out and "device-type" in out:
            out["device"] = out["device-type"]
    # test modules keep the main roles unless the suite has its own
    tests = {role: c for role, c in tests.items() if main.get(role) is not c}
    api: dict = {}
    test_api: dict = {}
    for scope_test, out, roles in ((False, api, main), (True, test_api, {**main, **tests})):
        pool = [c for c in cands if c.api and (scope_test or not test_only(c))]
        by_api: dict = {}
        for c in ranked(pool, scope_test):
            by_api.setdefault(c.api, []).append(c)
        for name, group in sorted(by_api.items()):
            for c in group:
                expr = _api_expr(c, roles)
                if expr is not None and free(c):
                    out[f"torch.cuda.{name}"] = (c, expr)
                    break
    test_api = {k: v for k, v in test_api.items() if api.get(k, (None,))[0] is not v[0]}
    return Detected(main, tests, api, test_api, cands)


def _api_expr(c: Candidate, roles: dict):
    """`name()`, `name({args})` (optional parameters pass the API's own through), or
    `name(<device>)` for one required device parameter; None: not writable."""
    if not c.params:
        return (f"{c.name}({{args}})" if c.optional else f"{c.name}()"), ()
    if len(c.params) == 1 and "device" in c.params[0]:
        dev = roles.get("device-type") or roles.get("device")
        if dev is None:
            return None
        return f"{c.name}({_expr(dev)})", (dev.import_stmt,)
    return None


