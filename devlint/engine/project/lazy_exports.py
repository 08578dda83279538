"""A package's lazy re-exports (PEP 562): the names its `__init__` resolves on first access
through a module-level `__getattr__` and a literal table of name -> submodule.

```python
_EXPORTS = {"fused_norm": "norm.fused_norm_jit", "rope": "pkg.kernels.rope"}

def __getattr__(name):
    module = _EXPORTS.get(name)
    ...
    return getattr(import_module(owner), name)
```
`from pkg.ops import fused_norm` then binds `pkg.ops.norm.fused_norm_jit.fused_norm`, exactly
as an explicit `from .norm.fused_norm_jit import fused_norm` in the `__init__` would: the
project stage (`callees`) follows such a name to its defining module like any re-export.
Limits: only a module-level dict literal whose keys and values are all strings, each value a
dotted module name (absolute when it starts with the package's top-level name, else relative
to the package), that the module's own `def __getattr__` reads and that imports (an `import`,
`import_module`, `__import__`); explicit imports of the `__init__` win over it. A table whose
every value is a plain name the module binds (`_DEPRECATED = {"norm": "fused_norm"}`, read to
warn and return the new name's object) renames, it loads nothing: not read. Computed values, `"module:attr"` forms and other loaders
(`_LazyModule`, `lazy_loader.attach`) are not read.
"""
from __future__ import annotations

import ast
import re

_GETATTR = re.compile(r"^def __getattr__\(", re.M)
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\Z")
_IMPORTERS = frozenset({"import_module", "__import__"})


def _bound(tree) -> set:
    """The names a module binds at its top level (definitions, imports, assignments)."""
    out = set()
    for st in tree.body:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(st.name)
        elif isinstance(st, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in st.names)
        elif isinstance(st, (ast.Assign, ast.AnnAssign)):
            for t in st.targets if isinstance(st, ast.Assign) else [st.target]:
                out.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
    return out


def lazy_exports(text: str, modname: str, tree) -> dict:
    """{name: [module, name]} of the names a package `__init__` exports through its
    `__getattr__` (see the module docstring); `tree`: the parsed module, or a function that
    parses it (called only when the text defines a module-level `__getattr__`)."""
    if not _GETATTR.search(text):
        return {}
    tree = tree() if callable(tree) else tree
    if tree is None:
        return {}
    getattr_fn = next((st for st in tree.body if isinstance(st, ast.FunctionDef)
                       and st.name == "__getattr__"), None)
    if getattr_fn is None:
        return {}
    if not any(isinstance(n, (ast.Import, ast.ImportFrom)) or isinstance(n, ast.Call) and (
            getattr(n.func, "id", None) or getattr(n.func, "attr", None)) in _IMPORTERS
            for n in ast.walk(getattr_fn)):
        return {}  # it imports nothing: a table it reads names no module to load
    read = {n.id for n in ast.walk(getattr_fn) if isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Load)}
    top = modname.split(".")[0]
    bound = None  # the names the module binds at its top level, read once when asked
    out: dict = {}
    for st in tree.body:
        if isinstance(st, ast.Assign) and len(st.targets) == 1:
            target, value = st.targets[0], st.value
        elif isinstance(st, ast.AnnAssign) and st.value is not None:
            target, value = st.target, st.value
        else:
            continue
        if not (isinstance(target, ast.Name) and target.id in read
                and isinstance(value, ast.Dict) and value.keys):
            continue
        table = {}
        for k, v in zip(value.keys, value.values):
            if not (isinstance(k, ast.Constant) and isinstance(k.value, str)
                    and isinstance(v, ast.Constant) and isinstance(v.value, str)
                    and _DOTTED.match(v.value)):
                table = {}
                break
            mod = v.value if v.value.split(".")[0] == top else f"{modname}.{v.value}"
            table[k.value] = [mod, k.value]
        if table and all("." not in v.value for v in value.values):
            bound = _bound(tree) if bound is None else bound
            if all(v.value in bound for v in value.values):
                continue  # old name -> a name of the module's own: a rename table
        for name, where in table.items():
            out.setdefault(name, where)
    return out
