"""Modules reached only where CUDA is established (`evidence.cuda_reach`, the `cuda-reach`
principle): every reference to the module in its package, an import of it or a dotted-path
string naming it (`"pkg.backends.sla.SLABackend"`), stands in a CUDA-only module (a CUDA
platform module that alone resolves a backend) or where a test (or a flag chosen by one,
`xchoice`) establishes CUDA.

Per file with findings left by the other passes, the module's references are read from the
package's importers index (`Project.importers`; `from pkg.backends import sla` through the
package above it too) and, only when every import passes, from one scan of the package's
texts for dotted strings under its top-level package (`_dotted`, once per package and run);
the uses of what each importer binds are walked with `xcallers`' walker (`_State.uses`)."""
from __future__ import annotations

import os
import re

from devlint.engine.project.package import through_a_parent
from devlint.evidence import cuda_reach
from devlint.evidence.vocabulary import is_test_module
from devlint.evidence.cuda_choice import Choice

_MAX_REFS = 12  # references judged per module, at most (more: kept, the answer costs)


def reach_findings(project, results, kept, key_of=None) -> dict:
    """{absolute path: {(start, code): Reason}} of the findings, still `kept(diag, path)` by
    the other passes, in modules every reference to which runs on CUDA only. With the
    stage's `key_of`, answers are stored as `xcallers_run` stores its own (per package,
    `xgates.per_package`; per file for a namespace package's modules, `xspaces`): a warm run
    imports no walker and reads no file."""
    from devlint.engine.project.xcallers_run import stored_answers

    return stored_answers(
        project, results, kept, key_of, "xreach", "reached",
        lambda state, project, path, res, deps: _file_answer(state, project, path,
                                                            res.diagnostics, deps),
        skip=lambda path: os.path.basename(path) == "__init__.py", suffix="xreach")


def _file_answer(state, project, path: str, diags, deps=None) -> dict:
    got = _reached(state, path, deps)
    if got is None:
        return {}
    why, at_import, by_test = got
    # imported at another module's import: the module's own top-level code runs there,
    # whatever its functions wait for; a table API selected by a platform test stays a
    # finding, as under an in-file guard
    used = _used_at_import(project, path) if at_import else set()
    return {(d.start, d.code): why for d in diags
            if (not at_import or d.scope is not None and d.scope.split(".")[0] not in used)
            and not (by_test and d.table_api)}


def _reached(state, path, deps=None):
    """(Reason, whether an importer imports it at its own import, whether a platform test
    selects CUDA for a reference) when every reference to the module at `path` runs on CUDA
    only, else None. Where the module is also named from a package above its own (`_outer`),
    the stat of every file and folder of that package goes into `deps`: the answer read them,
    and the stored answer is keyed by its own package's files only."""
    pkg = state.module(path)
    if pkg is None or "test" in os.path.basename(path):
        return None
    project = state.project
    if state.module_reason(path, pkg[0]):
        return None  # the stage's own principle answers for it
    refs = {}  # importer path -> its local names for the module or what it imports from it
    names = [pkg, *([_outer(pkg)] if _outer(pkg) else [])]
    outer = names[-1][0]

    def test(p: str) -> bool:  # (asked below the package root: not of the folders above it)
        return is_test_module(os.path.relpath(p, outer))

    if deps is not None and len(names) > 1:
        deps.update(_tree_stats(state, names[-1][0], names[-1][1].split(".")[0]))
    for root, modname in names:
        index = project.importers(root, modname.split(".")[0])
        for p, got in index.get(modname, {}).items():
            if p != path:
                refs.setdefault(p, set()).update(local for _, local in got)
        parent, _, leaf = modname.rpartition(".")
        for p, got in index.get(parent, {}).items():
            locals_ = {local for n, local in got if n == leaf}
            if p != path and locals_:
                refs.setdefault(p, set()).update(locals_)
        if through_a_parent(project, index, modname, path, skip=test):
            return None  # `from pkg import ops`, then `ops.x.mod...`: not followed
    root, modname = names[-1]  # the outermost name: the one a dotted string spells
    top = modname.split(".")[0]
    refs = [(p, sorted(v)) for p, v in sorted(refs.items())]
    refs = [(p, v) for p, v in refs if not test(p)]
    if len(refs) > _MAX_REFS:
        return None
    first, at_import, by_test = None, False, False
    for p, locals_ in refs:
        if "*" in locals_ or os.path.basename(p) == "__init__.py":
            return None  # the module object, a star import, a re-export: not followed
        ev = _cuda_reference(state, root, p, locals_, path)
        if ev is None:
            return None
        first = first or ev
        by_test = by_test or ev[3]
        at_import = at_import or ev[1] is not None and _imported_at_import(
            state.project, p, modname, locals_)
    dotted = _dotted(project, root, top)
    strings = {(p, row) for p, row in dotted.get(modname, ()) if p != path}
    strings |= {(p, row) for prefix, ps in dotted.get("{", {}).items()
                if modname.startswith(prefix) for p, row in ps if p != path}
    strings |= {(p, row) for p, row in dotted.get(".", {}).get(
        modname.rpartition(".")[0] + ".", ()) if p != path}
    strings = {(p, row) for p, row in strings if not test(p)}
    if len(refs) + len(strings) > _MAX_REFS or not refs and not strings:
        return None  # no reference at all: an entry point, loaded by a name not seen
    for p, row in sorted(strings):
        module = _cuda_module(state, p, root)
        if not module:
            return None  # a string the stage cannot judge, or one in generic code
        first = first or (p, row, f"names it in a dotted path; its module is CUDA-only "
                          f"({module})", False)
    return cuda_reach.reason(modname, *first[:3]), at_import, by_test


def _cuda_reference(state, root, p, locals_, target):
    """(path, row, why) of an importer's reference that runs on CUDA only, else None: the
    importer's module is CUDA-only, or each use of what it binds is CUDA-established (a test,
    a chosen flag, a CUDA-only scope)."""
    module = _cuda_module(state, p, root)
    if module:
        return p, None, f"imports it; its module is CUDA-only ({module})", False
    from devlint.engine.project.xchoice import _CUDA_WORD

    text = state.project.text(p)
    if not text or not _CUDA_WORD.search(text):
        return None  # names nothing of CUDA: every use runs anywhere
    uses = state.uses(p, set(locals_))
    if not uses:
        return None  # imported and never used: a re-export, not followed
    from devlint.engine.project.xchoice import generic_kernel

    first, by_test = None, False
    for row, why, _holder, _called, _node in uses:
        if not why or why == "inert":
            return None
        if isinstance(why, Choice) and generic_kernel(state.project, target):
            return None  # a Triton kernel's module: generic whoever chose it (cuda-choice)
        by_test = by_test or why == "test"
        first = first or (p, row, "uses it only where CUDA is established ("
                          + (f"`{why.flag}` set from a CUDA test at line {why.line}"
                             if isinstance(why, Choice) else "a CUDA test" if why == "test"
                             else str(why)) + ")")
    return first and (*first, by_test)


def _dotted(project, root: str, top: str) -> dict:
    """{dotted name: {(path, line)}} of the string literals of the package's files that
    name one of its modules (`"pkg.mod"`, `"pkg.mod.Class"`, `"pkg.mod:fn"`: every dotted
    prefix is entered); under "{" {prefix: {(path, line)}} of the formatted ones
    (`f"pkg.ops.{m}:{fn}"`: any module below the prefix), under "." of those ending in a dot
    (`"pkg.ops." + name`, or an implicit concatenation: the modules of that package). Read
    once per package and run (bytes, no parse)."""
    memo = project.__dict__.setdefault("_dotted_strings", {})
    key = (root, top)
    if key in memo:
        return memo[key]
    found: dict = {}
    # a formatted or concatenated path (`f"pkg.ops.{m}"`, `"pkg.ops." + m`): a prefix
    pattern = re.compile(rb"[\"']((?:%s)(?:\.\w+)+)(\.?\{|\.(?!\w))?" % re.escape(top.encode()))
    needle = top.encode() + b"."
    for p, _ in project.files(root, top):
        try:
            with open(p, "rb") as f:
                data = f.read()
        except OSError:
            continue
        if needle not in data:
            continue
        for m in pattern.finditer(data):
            name = m.group(1).decode("ascii", "replace")
            at = (p, data.count(b"\n", 0, m.start()) + 1)
            if m.group(2):  # formatted: any module below; a bare prefix: its own modules
                kind = "{" if b"{" in m.group(2) else "."
                found.setdefault(kind, {}).setdefault(name + ".", set()).add(at)
                continue
            parts = name.split(".")
            for i in range(2, len(parts) + 1):
                found.setdefault(".".join(parts[:i]), set()).add(at)
    memo[key] = found
    return found


def _imported_at_import(project, path: str, modname: str, locals_) -> bool:
    """Whether `path` imports the module (or binds one of `locals_` by an import) in a
    statement that runs when `path` is imported: module level, also inside `try:`/`if`."""
    import ast

    tree = project.tree(path)
    if tree is None:
        return True
    leaf = modname.rpartition(".")[2]
    stack = list(tree.body)
    while stack:
        st = stack.pop()
        if isinstance(st, (ast.Import, ast.ImportFrom)):
            if any((a.asname or a.name) in locals_ or a.name.endswith(leaf) or leaf in (
                    getattr(st, "module", None) or "") for a in st.names):
                return True
        elif isinstance(st, (ast.Try, ast.If, ast.With)):
            for field in ("body", "orelse", "finalbody", "handlers"):
                for x in getattr(st, field, ()):
                    stack.extend(x.body if isinstance(x, ast.excepthandler) else [x])
    return False


def _tree_stats(state, root: str, top: str) -> dict:
    """{path: stat} of every folder and Python file under the package `root/top`, once per
    run (a file added, removed or edited there changes one of them)."""
    from devlint.engine.project.xgates import _stat

    memo = state.__dict__.setdefault("_xreach_tree_stats", {})
    key = os.path.join(root, top)
    if key not in memo:
        got = {}
        for folder, dirs, files in os.walk(key):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            got[folder] = _stat(folder)
            for f in sorted(files):
                if f.endswith(".py"):
                    got[os.path.join(folder, f)] = _stat(os.path.join(folder, f))
        memo[key] = got
    return memo[key]


def _outer(pkg):
    """(root, dotted module) of a module of a package that sits in a folder without
    `__init__.py` below another package (`sglang/multimodal_gen/runtime/layers/x.py`, whose
    own package is `layers`): named from the package above, as absolute imports and dotted
    strings name it; None when there is none."""
    from devlint.engine.project.xcallers import _below_package

    root, mod = pkg
    top, _, rest = mod.partition(".")
    up = _below_package(os.path.join(root, top, "__init__.py"))
    if up is None:
        return None
    base = up[1][:-len(".__init__")] if up[1].endswith(".__init__") else up[1]
    return up[0], f"{base}.{rest}" if rest else base


def _cuda_module(state, path: str, root: str):
    """Why the module at `path` is CUDA-only by its name or folder: the stage's answer, or
    for a platform module (which the stage never propagates: generic code imports it
    through the platform layer) its own name (`platforms/cuda.py`), as its own rules judge."""
    why = state.module_reason(path, root)
    if why:
        # by its name or folder only: a module CUDA-only by what it imports may import the
        # CUDA stack at the top and still be the generic core (a runner importing a kernel
        # plugin), which the chain would carry into every module it imports
        return why if str(why).startswith(("its name", "in a `")) else None
    if "platforms" not in path.replace(os.sep, "/").split("/")[:-1]:
        return None
    from devlint.engine.project.package import _EMPTY
    from devlint.evidence.cuda_only_module import _cuda_only_reason

    return _cuda_only_reason(os.path.basename(path), _EMPTY)


def _used_at_import(project, path: str) -> set:
    """The names the module's own top-level code reads (outside function and class bodies:
    `DEFAULT = swap(None)` runs `swap` at import)."""
    import ast

    tree = project.tree(path)
    if tree is None:
        return {None}
    names, stack = set(), list(tree.body)
    while stack:
        st = stack.pop()
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stack.extend(st.decorator_list)
            if isinstance(st, ast.ClassDef):  # a class body runs at import (not its defs)
                stack.extend([*st.bases, *st.body])
            continue
        for n in ast.iter_child_nodes(st):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                names.add(n.id)
            else:
                stack.append(n)
    return names
