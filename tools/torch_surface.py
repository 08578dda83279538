#!/usr/bin/env python3
"""The torch API surface of a real release, read statically from its wheel, and the check that
a fixed file calls only what its target torch has.

    python tools/torch_surface.py extract WHEEL [WHEEL...] [--out tests/data/torch_surface]
    python tools/torch_surface.py check --target 2.6 ORIGINAL FIXED

`extract` reads the wheel's `.py` / `.pyi` files with `ast` (nothing is imported or run, so a
CUDA wheel is read on a machine without CUDA, and no release needs installing) and writes
`<out>/<major>.<minor>.json`: for each module devlint's fixes may call into (torch, torch.cuda,
torch.accelerator, the other device modules, torch.amp, torch.distributed, ...), every public
name it binds, with the parameters of each function and constructor, and the wheel's file name
and sha256 as provenance.

How a module's names are found, as Python would bind them on import:
- top-level `def`, `class`, assignments and imports, in every branch of a top-level `if`/`try`
  (a name bound on one platform only is still in the surface: the check is about existence);
- `from M import *`: M's `__all__` (a literal list, with `+=` / `.extend` / `.append`), else
  M's public names;
- a child module is an attribute of its package once anything there imports it;
- the `torch` package itself also exports the public names of `torch._C` and
  `torch._C._VariableFunctions` (its `for name in dir(_C)` loops), read from their `.pyi` stubs
  (the operators of the latter without their signatures: no fix adds one).
An imported name takes the signature of its definition (`from torch.amp import GradScaler`).

`check` (and `new_calls` / `problems` for tests and bench scripts) collects the `torch.*`
calls of a fixed file that its original does not make (so: the calls the fix wrote), with
imports and aliases resolved, and reports each that the surface of a release lacks, or whose
keywords or positional count its signature refuses. `torch.get_device_module().NAME(...)` is
checked against `torch.cuda` and `torch.xpu` (the module it returns on those backends), and
`getattr(torch, <device type>).NAME(...)` (the device ladder's module, below 2.6) against those
and `torch.cpu` (the ladder's fallback).
"""
from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import re
import sys
import zipfile

# The modules a fix may call into: everything devlint's forms name lives here.
MODULES = (
    "torch", "torch.accelerator", "torch.accelerator.memory", "torch.cuda", "torch.cuda.amp",
    "torch.cpu", "torch.cpu.amp", "torch.xpu", "torch.mps", "torch.mtia", "torch.amp",
    "torch.distributed", "torch.random",
)
# the device modules `torch.get_device_module()` returns on the backends a fix must run on
DEVICE_MODULE_BACKENDS = ("torch.cuda", "torch.xpu")
# `getattr(torch, <device type>)`, the device ladder's module (devlint's forms below 2.6): the
# same backends, and torch.cpu, which the ladder falls back to without an accelerator
DEVICE_ATTR = "torch.<device>()"
DEVICE_ATTR_BACKENDS = ("torch.cuda", "torch.xpu", "torch.cpu")


# ------------------------------------------------------------------------------- extraction


class Wheel:
    """The `.py` / `.pyi` sources of a wheel (or an unpacked tree), by module name."""

    def __init__(self, path: str):
        self.path = path
        self._zip = zipfile.ZipFile(path) if zipfile.is_zipfile(path) else None
        if self._zip is not None:
            self._names = set(self._zip.namelist())
        else:  # an unpacked wheel or a site-packages folder: its torch/ and torch-*.dist-info/
            self._names = {os.path.relpath(os.path.join(d, f), path).replace(os.sep, "/")
                           for top in os.listdir(path)
                           if top == "torch" or re.match(r"torch-[\d.]+.*\.dist-info$", top)
                           for d, _, fs in os.walk(os.path.join(path, top)) for f in fs}
        self._trees: dict = {}

    def file_of(self, module: str) -> str | None:
        base = module.replace(".", "/")
        for cand in (base + "/__init__.py", base + ".py", base + "/__init__.pyi", base + ".pyi"):
            if cand in self._names:
                return cand
        return None

    def is_package(self, module: str) -> bool:
        f = self.file_of(module)
        return f is not None and "/__init__." in f

    def tree(self, module: str):
        if module not in self._trees:
            f = self.file_of(module)
            if f is None:
                self._trees[module] = None
            else:
                data = (self._zip.read(f) if self._zip is not None
                        else open(os.path.join(self.path, f), "rb").read())
                self._trees[module] = ast.parse(data, f)
        return self._trees[module]

    def version(self) -> str:
        for name in self._names:
            m = re.match(r"torch-(\d+\.\d+\.\d+)[^/]*\.dist-info/METADATA$", name)
            if m:
                return m.group(1)
        f = "torch/version.py"
        if f in self._names:
            text = (self._zip.read(f).decode() if self._zip is not None
                    else open(os.path.join(self.path, f)).read())
            m = re.search(r"__version__\s*=\s*'([\d.]+)", text)
            if m:
                return m.group(1)
        raise ValueError(f"{self.path}: no torch version found")


def _params(args: ast.arguments, drop_first: bool) -> list:
    """[name, kind] for each parameter; kind: posonly, pos, kwonly, varargs, varkw."""
    out = [[a.arg, "posonly"] for a in args.posonlyargs]
    out += [[a.arg, "pos"] for a in args.args]
    if drop_first and out:
        out = out[1:]
    if args.vararg:
        out.append([args.vararg.arg, "varargs"])
    out += [[a.arg, "kwonly"] for a in args.kwonlyargs]
    if args.kwarg:
        out.append([args.kwarg.arg, "varkw"])
    return out


def _class_signatures(node: ast.ClassDef) -> list | None:
    """The constructor's parameter lists (one per overload); None where the class defines no
    constructor of its own (its bases decide: any call accepted)."""
    sigs = []
    for kind in ("__init__", "__new__"):
        for st in node.body:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)) and st.name == kind:
                sigs.append(_params(st.args, drop_first=True))
        if sigs:
            return sigs
    return None


class Module:
    """One module's bindings: name -> ("function", sigs) | ("class", sigs) | ("module", M) |
    ("import", M, NAME) | ("value",)."""

    def __init__(self, wheel: Wheel, name: str):
        self.wheel, self.name = wheel, name
        self.bindings: dict = {}
        self.all: list | None = None
        self.star: list = []
        tree = wheel.tree(name)
        if tree is not None:
            self._walk(tree.body)

    def _package(self) -> str:
        return self.name if self.wheel.is_package(self.name) else self.name.rpartition(".")[0]

    def _absolute(self, node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        base = self._package()
        for _ in range(node.level - 1):
            base = base.rpartition(".")[0]
        return f"{base}.{node.module}" if node.module else base

    def _bind(self, name: str, value) -> None:
        old = self.bindings.get(name)
        # a def/class beats a value bound in another branch (`if TYPE_CHECKING: ... else: def`)
        if old is None or old[0] == "value" or value[0] in ("function", "class"):
            self.bindings[name] = value

    def _child_imported(self, module: str) -> None:
        """`from .memory import x` / `import torch.cuda.memory`: the child becomes an attribute
        of its package."""
        if module.startswith(self.name + "."):
            child = module[len(self.name) + 1:].split(".")[0]
            if child and self.wheel.file_of(f"{self.name}.{child}") is not None:
                self.bindings.setdefault(child, ("module", f"{self.name}.{child}"))

    def _walk(self, body) -> None:
        for st in body:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
                prev = self.bindings.get(st.name)
                sigs = prev[1] if prev and prev[0] == "function" and prev[1] else []
                self._bind(st.name, ("function", sigs + [_params(st.args, False)]))
            elif isinstance(st, ast.ClassDef):
                self._bind(st.name, ("class", _class_signatures(st)))
            elif isinstance(st, ast.Import):
                for a in st.names:
                    if a.asname:
                        self._bind(a.asname, ("module", a.name))
                    else:  # `import os` binds os; `import torch.cuda` binds torch
                        self._bind(a.name.split(".")[0], ("module", a.name.split(".")[0]))
                    self._child_imported(a.name)
            elif isinstance(st, ast.ImportFrom):
                mod = self._absolute(st)
                self._child_imported(mod)
                for a in st.names:
                    if a.name == "*":
                        self.star.append(mod)
                        continue
                    full = f"{mod}.{a.name}"
                    if self.wheel.file_of(full) is not None:
                        self._bind(a.asname or a.name, ("module", full))
                        self._child_imported(full)
                    else:
                        self._bind(a.asname or a.name, ("import", mod, a.name))
            elif isinstance(st, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = st.targets if isinstance(st, ast.Assign) else [st.target]
                for t in targets:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name) and n.id == "__all__":
                            self._all_from(st)
                        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                            self._bind(n.id, _assigned(st))
            elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
                f = st.value.func
                if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) \
                        and f.value.id == "__all__" and f.attr in ("extend", "append"):
                    vals = _strings(st.value.args[0]) if st.value.args else []
                    self.all = (self.all or []) + vals
            elif isinstance(st, ast.If):
                self._walk(st.body)
                self._walk(st.orelse)
            elif isinstance(st, ast.Try):
                self._walk(st.body)
                for h in st.handlers:
                    self._walk(h.body)
                self._walk(st.orelse)
                self._walk(st.finalbody)
            elif isinstance(st, (ast.With,)):
                self._walk(st.body)

    def _all_from(self, st) -> None:
        value = st.value
        if value is None:
            return
        vals = _strings(value)
        if isinstance(st, ast.AugAssign):
            self.all = (self.all or []) + vals
        elif vals or isinstance(value, (ast.List, ast.Tuple)):
            self.all = vals


def _assigned(st):
    """`f = deprecated(...)(g)` and `f = g` keep a function's signature when `g` is a name."""
    value = getattr(st, "value", None)
    while isinstance(value, ast.Call) and value.args and isinstance(value.func, ast.Call):
        value = value.args[0]  # `deprecated("...")(current_device_index)`
    if isinstance(value, ast.Name):
        return ("alias", value.id)
    return ("value",)


def _strings(node) -> list:
    if isinstance(node, (ast.List, ast.Tuple)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant)
                and isinstance(e.value, str)]
    if isinstance(node, ast.BinOp):
        return _strings(node.left) + _strings(node.right)
    return []


class Surface:
    def __init__(self, wheel: Wheel):
        self.wheel = wheel
        self._modules: dict = {}

    def module(self, name: str) -> Module:
        if name not in self._modules:
            self._modules[name] = Module(self.wheel, name)
        return self._modules[name]

    def names(self, name: str, seen=frozenset()) -> dict:
        """name -> binding, with star imports (and torch's `dir(_C)` loops) expanded."""
        if name in seen:
            return {}
        seen = seen | {name}
        mod = self.module(name)
        out: dict = {}
        stars = list(mod.star)
        if name == "torch":
            stars += ["torch._C", "torch._C._VariableFunctions"]
        for star in stars:
            sub = self.module(star)
            exported = self.names(star, seen)
            public = sub.all if sub.all is not None else [
                n for n in exported if not n.startswith("_")]
            for n in public:
                if n in exported:
                    out[n] = ("import", star, n)
        out.update(mod.bindings)
        return out

    def resolve(self, module: str, name: str, depth: int = 0):
        """The binding `module.name` finally stands for: ("function", sigs) | ("class", sigs)
        | ("module", M) | ("value",) | None (absent)."""
        if depth > 20:
            return ("value",)
        b = self.names(module).get(name)
        if b is None:
            if self.wheel.file_of(f"{module}.{name}") is not None and name in self.names(module):
                return ("module", f"{module}.{name}")
            return None
        if b[0] == "import":
            if self.wheel.file_of(b[1]) is None:
                return ("value",)  # outside the wheel (typing_extensions, ...)
            r = self.resolve(b[1], b[2], depth + 1)
            if r is not None and b[1] == "torch._C._VariableFunctions":
                # the tensor operators (torch.zeros, ...): no fix form adds one, so their
                # ~1,500 overloaded signatures are not kept, only that they exist
                return (r[0], None) if r[0] in ("function", "class") else r
            return r if r is not None else ("value",)
        if b[0] == "alias":
            r = self.resolve(module, b[1], depth + 1)
            return r if r is not None else ("value",)
        if b[0] == "module" and self.wheel.file_of(b[1]) is None:
            return ("value",)
        return b

    def dump(self, module: str) -> dict:
        out = {}
        for n in sorted(self.names(module)):
            if n.startswith("_") and n != "__version__":
                continue
            r = self.resolve(module, n) or ("value",)
            if r[0] == "module":
                out[n] = {"module": r[1]}
            elif r[0] in ("function", "class"):
                out[n] = {"kind": r[0], "signatures": r[1]}
            else:
                out[n] = {"kind": "value"}
        return out


def modules_of(path: str) -> dict:
    """module -> {name: binding} for every module of MODULES the wheel (or folder) has."""
    wheel = Wheel(path)
    surface = Surface(wheel)
    return {m: surface.dump(m) for m in MODULES if wheel.file_of(m) is not None}


def extract(wheel_path: str) -> dict:
    sha = hashlib.sha256()
    with open(wheel_path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            sha.update(chunk)
    return {
        "torch": Wheel(wheel_path).version(),
        "provenance": {"wheel": os.path.basename(wheel_path), "sha256": sha.hexdigest(),
                       "read_by": "tools/torch_surface.py extract (ast over .py/.pyi; "
                                  "nothing imported)"},
        "modules": modules_of(wheel_path),
    }


def write_surface(data: dict, out_dir: str) -> str:
    release = ".".join(data["torch"].split(".")[:2])
    path = os.path.join(out_dir, f"{release}.json")
    os.makedirs(out_dir, exist_ok=True)
    # one name per line: a diff between two releases reads like the changelog
    lines = ["{", f' "torch": {json.dumps(data["torch"])},',
             f' "provenance": {json.dumps(data["provenance"], sort_keys=True)},',
             ' "modules": {']
    mods = list(data["modules"].items())
    for i, (m, names) in enumerate(mods):
        lines.append(f"  {json.dumps(m)}: {{")
        items = list(names.items())
        for j, (n, v) in enumerate(items):
            comma = "," if j < len(items) - 1 else ""
            lines.append(f"   {json.dumps(n)}: {json.dumps(v, separators=(',', ':'))}{comma}")
        lines.append("  }" + ("," if i < len(mods) - 1 else ""))
    lines += [" }", "}"]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


# ----------------------------------------------------------------------------------- checking


def load_surfaces(data_dir: str) -> dict:
    """(major, minor) -> surface, for every release file in data_dir."""
    out = {}
    for name in os.listdir(data_dir):
        m = re.match(r"^(\d+)\.(\d+)\.json$", name)
        if m:
            with open(os.path.join(data_dir, name)) as f:
                out[(int(m.group(1)), int(m.group(2)))] = json.load(f)
    return dict(sorted(out.items()))


class TorchCall:
    """A call into torch: `qual` the dotted name (`torch.accelerator.synchronize`, or
    `torch.get_device_module().empty_cache`), the keywords and positional count given."""

    __slots__ = ("qual", "keywords", "positional", "star", "line")

    def __init__(self, qual, keywords, positional, star, line):
        self.qual, self.keywords, self.positional = qual, keywords, positional
        self.star, self.line = star, line

    def key(self):
        return (self.qual, self.keywords, self.positional, self.star)

    def __repr__(self):
        kw = "".join(f", {k}=" for k in self.keywords)
        return f"{self.qual}({self.positional} positional{kw}) line {self.line}"


def _aliases(tree) -> dict:
    """local name -> dotted torch name, from every import in the file."""
    out = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            for a in n.names:
                if a.name == "torch" or a.name.startswith("torch."):
                    if a.asname:
                        out[a.asname] = a.name
                    else:
                        out["torch"] = "torch"
        elif isinstance(n, ast.ImportFrom) and not n.level and n.module \
                and (n.module == "torch" or n.module.startswith("torch.")):
            for a in n.names:
                if a.name != "*":
                    out[a.asname or a.name] = f"{n.module}.{a.name}"
    return out


def _dotted(node, aliases):
    if isinstance(node, ast.Name):
        return aliases.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value, aliases)
        return f"{base}.{node.attr}" if base else None
    if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)):
        # `torch.get_device_module().empty_cache`: a member of the returned module
        inner = _dotted(node.func, aliases)
        if inner == "torch.get_device_module":
            return inner + "()"
        # `getattr(torch, <device type>).synchronize`: a device module picked at run time
        if isinstance(node.func, ast.Name) and node.func.id == "getattr" \
                and len(node.args) == 2 and not node.keywords \
                and _dotted(node.args[0], aliases) == "torch":
            return DEVICE_ATTR
    return None


def torch_calls(source: str) -> list:
    tree = ast.parse(source)
    aliases = _aliases(tree)
    out = []
    for n in ast.walk(tree):
        if not isinstance(n, ast.Call):
            continue
        qual = _dotted(n.func, aliases)
        if not qual or not qual.startswith("torch"):
            continue
        kws = tuple(sorted(k.arg for k in n.keywords if k.arg))
        star = any(isinstance(a, ast.Starred) for a in n.args) or any(
            k.arg is None for k in n.keywords)
        out.append(TorchCall(qual, kws, len(n.args), star, n.lineno))
    return out


def new_calls(original: str, fixed: str) -> list:
    """The torch calls of `fixed` its original does not make (with those keywords)."""
    before: dict = {}
    for c in torch_calls(original):
        before[c.key()] = before.get(c.key(), 0) + 1
    out = []
    for c in torch_calls(fixed):
        if before.get(c.key(), 0):
            before[c.key()] -= 1
        else:
            out.append(c)
    return out


def _lookup(surface: dict, qual: str):
    """The entry for a dotted name, walking modules and attributes; (entry, reason)."""
    mods = surface["modules"]
    parts = qual.split(".")
    module = parts[0]
    if module not in mods:
        return None, f"{module} is not in the surface data"
    i = 1
    while i < len(parts):
        names = mods.get(module)
        if names is None:
            return None, f"{module} is not in the surface data (add it to MODULES)"
        entry = names.get(parts[i])
        if entry is None:
            return None, f"{module} has no `{parts[i]}`"
        if "module" in entry:
            module = entry["module"]
            i += 1
            continue
        if i == len(parts) - 1:
            return entry, ""
        # an attribute of a function/class/value (`torch.Tensor.to`): not checked deeper
        return {"kind": "value"}, ""
    return {"module": module}, ""


def _accepts(sig: list, call: TorchCall) -> bool:
    kinds = {n: k for n, k in sig}
    if call.star:
        return True
    npos = sum(1 for _, k in sig if k in ("posonly", "pos"))
    if call.positional > npos and "varargs" not in kinds.values():
        return False
    for kw in call.keywords:
        k = kinds.get(kw)
        if k in ("pos", "kwonly"):
            continue
        if "varkw" in kinds.values():
            continue
        return False
    return True


def problems(call: TorchCall, surface: dict) -> list:
    """Why `call` fails on this release ([] when the release has it and accepts its
    arguments)."""
    qual = call.qual
    targets = [qual]
    if qual.startswith("torch.get_device_module()."):
        member = qual[len("torch.get_device_module()."):]
        targets = [f"{m}.{member}" for m in DEVICE_MODULE_BACKENDS]
        entry, why = _lookup(surface, "torch.get_device_module")
        if entry is None:
            return [why]
    elif qual.startswith(DEVICE_ATTR + "."):
        member = qual[len(DEVICE_ATTR) + 1:]
        # a backend module the release lacks (torch.xpu before 2.3) is one the ladder, which
        # asks `getattr(torch, t, None)`, never picks
        targets = [f"{m}.{member}" for m in DEVICE_ATTR_BACKENDS
                   if m.split(".")[1] in surface["modules"]["torch"]]
    out = []
    for t in targets:
        entry, why = _lookup(surface, t)
        if entry is None:
            out.append(why)
            continue
        if entry.get("kind") in ("function", "class") and entry.get("signatures"):
            if not any(_accepts(s, call) for s in entry["signatures"]):
                sigs = " | ".join("(" + ", ".join(f"{n}:{k}" for n, k in s) + ")"
                                  for s in entry["signatures"])
                out.append(f"{t} does not accept {call.positional} positional and keywords "
                           f"{list(call.keywords)}: {sigs}")
        elif "module" in entry:
            out.append(f"{t} is a module, not callable")
    return out


def check_fix(original: str, fixed: str, target: tuple, surfaces: dict) -> list:
    """Every problem of the calls the fix wrote, on each release at or above `target`:
    [(release, call, reason)]."""
    out = []
    calls = new_calls(original, fixed)
    for release, surface in surfaces.items():
        if release < target:
            continue
        for c in calls:
            for why in problems(c, surface):
                out.append((release, c, why))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    ex = sub.add_parser("extract", help="write the surface of each wheel")
    ex.add_argument("wheels", nargs="+")
    ex.add_argument("--out", default=os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "tests", "data", "torch_surface"))
    ck = sub.add_parser("check", help="the calls a fix wrote that a release lacks")
    ck.add_argument("--target", required=True)
    ck.add_argument("--data", default=os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "tests", "data", "torch_surface"))
    ck.add_argument("original")
    ck.add_argument("fixed")
    args = ap.parse_args(argv)
    if args.cmd == "extract":
        for w in args.wheels:
            print(write_surface(extract(w), args.out))
        return 0
    target = tuple(int(p) for p in args.target.split(".")[:2])
    with open(args.original) as f:
        original = f.read()
    with open(args.fixed) as f:
        fixed = f.read()
    found = check_fix(original, fixed, target, load_surfaces(args.data))
    for release, call, why in found:
        print(f"torch {release[0]}.{release[1]}: {call}: {why}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
