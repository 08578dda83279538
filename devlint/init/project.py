"""`devlint init`: the project read with stdlib `ast` (modules, definitions, imports), and what
each definition dispatches over and stands for.

(The package docstring, devlint/init/__init__.py, states the principles.)
"""
from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, field

from devlint.evidence.vocabulary import is_test_path

ACCELERATORS = ("cuda", "xpu", "npu", "mps", "mlu", "musa", "hpu", "xla")
DEVICE_TYPES = ACCELERATORS + ("cpu", "meta")
# backend extension modules named after their device (`import torch_npu`)
_EXT_MODULES = {f"torch_{d}": d for d in ACCELERATORS}
_AVAILABLE = re.compile(r"(?:^|_)(" + "|".join(ACCELERATORS) + r")(?:_|$)")
_DEVICE_STRING = re.compile(r"^(" + "|".join(DEVICE_TYPES) + r")(?::\d+)?$")
MIN_USES = 2
SKIP_DIRS = {".git", ".hg", ".svn", ".tox", ".nox", ".venv", "venv", "node_modules", "build",
             "dist", "site-packages", "__pycache__", ".eggs", "third_party", "3rdparty"}


@dataclass
class Module:
    name: str  # dotted
    path: str  # relative to the root
    tree: ast.Module
    is_test: bool
    defs: dict = field(default_factory=dict)  # name -> [nodes] (def, class, assignments)
    imports: dict = field(default_factory=dict)  # local -> (module, name|None, stmt text, line)


@dataclass
class Candidate:
    module: str
    name: str
    path: str
    line: int
    kind: str  # "module" | "type" | "device" | "api"
    api: str = ""  # for kind "api": the torch.cuda name it wraps
    call: bool = True  # written as `name()` (a function) or `name` (a constant)
    params: tuple = ()  # required parameters of a function
    optional: bool = False  # has optional parameters (passes the API's arguments through)
    names: tuple = ()  # device-module attributes an accelerator object offers
    backends: tuple = ()
    uses: list = field(default_factory=list)  # (path, line) outside its module
    # `getattr(torch, <this>[, default])` outside its module: (path, line, in a test, default)
    module_uses: list = field(default_factory=list)
    test_uses: int = 0
    import_stmt: str = ""
    expr: str = ""  # the role's expression when not `name()` / `name`
    idiom: bool = False  # the device module written as getattr(torch, <this>)

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


def module_name(rel: str) -> str:
    parts = rel[:-3].replace(os.sep, "/").split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    if parts and parts[0] in ("src", "lib", "python") and len(parts) > 1:
        parts = parts[1:]
    return ".".join(parts)


def iter_python_files(root: str):
    for dp, dn, fn in os.walk(root):
        dn[:] = sorted(d for d in dn if d not in SKIP_DIRS and not d.startswith("."))
        for f in sorted(fn):
            if f.endswith(".py"):
                yield os.path.join(dp, f)


def load_project(root: str) -> dict:
    mods: dict = {}
    for path in iter_python_files(root):
        rel = os.path.relpath(path, root).replace(os.sep, "/")
        try:
            with open(path, "rb") as f:
                tree = ast.parse(f.read(), filename=rel)
        except (SyntaxError, ValueError, OSError):
            continue
        name = module_name(rel)
        m = Module(name, rel, tree, is_test_path(rel.split("/")))
        _collect_top(m, tree.body, rel.endswith("__init__.py"))
        mods.setdefault(name, m)
    return mods


def _collect_top(m: Module, body, is_pkg: bool) -> None:
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            m.defs.setdefault(stmt.name, []).append(stmt)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for t in targets:
                if isinstance(t, ast.Name):
                    m.defs.setdefault(t.id, []).append(stmt)
        elif isinstance(stmt, ast.ImportFrom):
            base = _absolute(m.name, stmt.module, stmt.level, is_pkg)
            for a in stmt.names:
                if a.name != "*":
                    m.imports[a.asname or a.name] = (base, a.name, stmt.lineno)
        elif isinstance(stmt, ast.Import):
            for a in stmt.names:
                local = a.asname or a.name.split(".")[0]
                m.imports[local] = (a.name if a.asname else local, None, stmt.lineno)
        elif isinstance(stmt, (ast.If, ast.Try, ast.With)):
            for block in (stmt.body, getattr(stmt, "orelse", ()), getattr(stmt, "finalbody", ())):
                _collect_top(m, block, is_pkg)
            for h in getattr(stmt, "handlers", ()):
                _collect_top(m, h.body, is_pkg)


def _absolute(current: str, module: str | None, level: int, is_pkg: bool) -> str:
    if level == 0:
        return module or ""
    parts = current.split(".")
    if not is_pkg:
        parts = parts[:-1]
    if level > 1:
        parts = parts[:len(parts) - (level - 1)] if level - 1 <= len(parts) else []
    return ".".join(parts + ([module] if module else []))


class Project:
    def __init__(self, root: str):
        self.root = root
        self.mods = load_project(root)
        self._backends: dict = {}

    def resolve(self, module: str, name: str, hops: int = 4):
        """The (module, name) defining `name` as seen from `module`, following imports and
        re-exports inside the project; None when it is not the project's."""
        m = self.mods.get(module)
        while m is not None and hops > 0:
            if name in m.defs:
                return m.name, name
            imp = m.imports.get(name)
            if imp is None:
                return None
            base, orig, _ = imp
            if orig is None:
                return None
            if f"{base}.{orig}" in self.mods and base + "." + orig != m.name:
                return None  # a submodule, not a definition
            m, name, hops = self.mods.get(base), orig, hops - 1
        return None

    # -- backends -------------------------------------------------------------------------
    def backends(self, module: str, name: str, depth: int = 3) -> frozenset:
        key = (module, name, depth)
        if key in self._backends:
            return self._backends[key]
        self._backends[key] = frozenset()  # cycles
        m = self.mods[module]
        found = set()
        for node in m.defs.get(name, ()):
            found |= _direct_backends(node)
            if depth > 0:
                for ref in _referenced_names(node):
                    if ref == name:
                        continue
                    target = self.resolve(module, ref)
                    if target is None:
                        continue
                    tnodes = self.mods[target[0]].defs.get(target[1], ())
                    # tables, classes and constants dispatch for their users; a function
                    # only for the short wrappers that return or call it
                    if all(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                           for n in tnodes) and not _short(node):
                        continue
                    found |= self.backends(target[0], target[1], depth - 1)
        out = frozenset(found)
        self._backends[key] = out
        return out


def _short(node) -> bool:
    """A function whose body (docstring and `global` aside) is at most three statements."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return True
    body = [s for s in node.body if not isinstance(s, ast.Global) and not (
        isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    return len(body) <= 3


def _direct_backends(node) -> set:
    """The accelerator backends a definition names; `torch.accelerator` (device-generic by
    construction) counts as all of them."""
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) \
                and n.value.id == "torch" and n.attr in ACCELERATORS:
            out.add(n.attr)
        elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) \
                and n.value.id == "torch" and n.attr == "accelerator":
            out.update(("accelerator", "cuda", "xpu"))
        elif isinstance(n, ast.Attribute) and n.attr == "mps" and isinstance(n.value, ast.Attribute) \
                and n.value.attr == "backends":
            out.add("mps")
        elif isinstance(n, ast.Constant) and isinstance(n.value, str):
            mm = _DEVICE_STRING.match(n.value)
            if mm and mm.group(1) in ACCELERATORS:
                out.add(mm.group(1))
        elif isinstance(n, ast.Name) and n.id in _EXT_MODULES:
            out.add(_EXT_MODULES[n.id])
        elif isinstance(n, ast.Call):
            f = n.func
            fname = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if "available" in fname:
                out.update(_AVAILABLE.findall(fname.lower()))
            for k in n.keywords:  # OrderedDict(cuda=..., npu=...)
                if k.arg in ACCELERATORS:
                    out.add(k.arg)
    return out


def _referenced_names(node) -> list:
    seen, out = set(), []
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in seen:
            seen.add(n.id)
            out.append(n.id)
    return out


# -- what a dispatcher stands for -----------------------------------------------------------
def _returns(node) -> list:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        out = []
        for n in ast.walk(node):
            if isinstance(n, ast.Return) and n.value is not None:
                out.append(n.value)
        return out
    if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
        return [node.value]
    return []


def _local_values(func, name: str) -> list:
    """The values a function assigns to a local `name`."""
    return [n.value for n in ast.walk(func) if isinstance(n, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)]


def _value_kind(project: Project, module: str, func, value, depth: int = 2) -> str | None:
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        mm = _DEVICE_STRING.match(value.value)
        if mm:
            return "device" if ":" in value.value else "type"
        return None
    if isinstance(value, ast.JoinedStr):
        text = "".join(v.value for v in value.values if isinstance(v, ast.Constant))
        return "device" if ":" in text else None
    if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name):
        if value.value.id == "torch" and value.attr in ACCELERATORS + ("cpu",):
            return "module"
        if value.value.id in _EXT_MODULES:
            return "module"
    if isinstance(value, ast.Call):
        f = value.func
        if isinstance(f, ast.Attribute) and f.attr == "format" and isinstance(f.value, ast.Constant) \
                and isinstance(f.value.value, str):
            head = f.value.value.split(":", 1)[0]
            return "device" if head in DEVICE_TYPES and ":" in f.value.value else None
        if isinstance(f, ast.Name) and f.id == "getattr" and value.args and isinstance(
                value.args[0], ast.Name) and value.args[0].id == "torch":
            return "module"
        if isinstance(f, ast.Attribute) and f.attr == "device" and isinstance(f.value, ast.Name) \
                and f.value.id == "torch":
            return "device"
        if isinstance(f, ast.Attribute) and f.attr == "current_accelerator":
            return "device"  # torch.accelerator.current_accelerator()
        if depth > 0 and isinstance(f, ast.Name):
            target = project.resolve(module, f.id)
            if target is not None:
                k = _def_kind(project, *target, depth=depth - 1)
                if k in ("module", "type", "device"):
                    return k
        if isinstance(f, ast.Attribute) and "device" in f.attr and "name" not in f.attr \
                and f.attr.startswith(("get_current", "current")):
            return "device"  # `get_accelerator().get_current_device()`
    if isinstance(value, ast.Name) and func is not None:
        kinds = {_value_kind(project, module, None, v, depth) for v in _local_values(func, value.id)}
        kinds.discard(None)
        if len(kinds) == 1:
            return kinds.pop()
        if kinds == {"type", "device"}:
            return "device"
    if isinstance(value, ast.IfExp):
        kinds = {_value_kind(project, module, func, v, depth) for v in (value.body, value.orelse)}
        kinds.discard(None)
        if len(kinds) == 1:
            return kinds.pop()
    return None


def _foreign_string(values) -> bool:
    """A string value that torch does not accept as a device (`"hip"`, `"mlx"`): the value is
    the project's platform name, not a device type."""
    for v in values:
        if isinstance(v, ast.IfExp):
            if _foreign_string([v.body, v.orelse]):
                return True
        elif isinstance(v, ast.Constant) and isinstance(v.value, str) \
                and not _DEVICE_STRING.match(v.value):
            return True
    return False


def _def_kind(project: Project, module: str, name: str, depth: int = 2) -> str | None:
    m = project.mods[module]
    kinds = set()
    for node in m.defs.get(name, ()):
        if isinstance(node, ast.ClassDef):
            return None
        values = _returns(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            values += [v for r in values if isinstance(r, ast.Name)
                       for v in _local_values(node, r.id)]
        if _foreign_string(values):
            return None
        for v in _returns(node):
            k = _value_kind(project, module, node if not isinstance(node, (ast.Assign, ast.AnnAssign))
                            else None, v, depth)
            if k:
                kinds.add(k)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
            ann = ast.unparse(node.returns)
            if ann in ("torch.device",):
                kinds.add("device")
    if kinds == {"type", "device"}:
        return "device"
    if len(kinds) == 1:
        return kinds.pop()
    if kinds == {"type"} | {"module"}:
        return None
    return None


def _accelerator_names(project: Project, module: str, func, dm_names) -> tuple:
    """The device-module names an accelerator object offers: the methods of the class its
    getter is annotated to return, when that class (or its subclasses) dispatch."""
    none = ((), frozenset())
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or func.returns is None:
        return none
    ann = func.returns
    name = ann.id if isinstance(ann, ast.Name) else (ann.value if isinstance(ann, ast.Constant)
                                                     and isinstance(ann.value, str) else None)
    if not name:
        return none
    target = project.resolve(module, name)
    if target is None:
        return none
    cls = [n for n in project.mods[target[0]].defs.get(target[1], ()) if isinstance(n, ast.ClassDef)]
    if not cls:
        return none
    methods = {n.name for n in cls[0].body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    # its subclasses in the project must wrap two or more backends
    subs = set()
    for m in project.mods.values():
        for defs in m.defs.values():
            for n in defs:
                if isinstance(n, ast.ClassDef) and any(
                        (isinstance(b, ast.Name) and b.id == name) or
                        (isinstance(b, ast.Attribute) and b.attr == name) for b in n.bases):
                    subs |= _direct_backends(n)
    if len(subs & set(ACCELERATORS)) < 2:
        return none
    return tuple(sorted(methods & dm_names)), frozenset(subs & set(ACCELERATORS))


def _wrapped_api(node, name: str, dm_names, calls_only: bool = False) -> str:
    """The torch.cuda function a dispatcher named after it wraps (`backend_empty_cache`,
    `empty_device_cache`, `synchronize`): the longest device-module name that is a whole
    word of the function's name and that the function calls or tabulates."""
    words = name.lower().strip("_")
    attrs = {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
    best = ""
    # the device module's names, and the torch.cuda functions a project wraps that the module
    # does not stand for (device_module_api.toml says why)
    for api in dm_names | {"ipc_collect", "manual_seed", "manual_seed_all", "device_count",
                           "is_available"}:
        if api[0].isupper() or ("_" not in api and api != "synchronize"):
            continue  # one common word (`device`, `seed`, `init`) names no torch function
        if re.search(r"(?:^|_)" + re.escape(api) + r"(?:_|$)", words) and len(api) > len(best):
            best = api
    if not best:
        return ""
    if calls_only:
        # it calls the API on a backend's device module (`torch.npu.current_device()`)
        return best if any(
            isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == best
            and isinstance(n.func.value, ast.Attribute) and n.func.value.attr in ACCELERATORS
            for n in ast.walk(node)) else ""
    # it must itself reach the API (a call, or a table of the backends' functions)
    return best if best in attrs or words.endswith(best) else ""


