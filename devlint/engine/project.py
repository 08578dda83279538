"""Stage 5: what one file cannot tell about itself, read from the package around it.

The per-file stages (and the cache, keyed by content) see one file. Some code is CUDA-only
because of its neighbours, so this stage runs in the main process after them, over the files
that have findings, and only drops findings; it never adds one:

- **CUDA-only through a project module.** A module that calls, outside any `if` or `except`,
  a function or class it imports at top level from a project module that is CUDA-only (by its
  name or folder, its imports, its CUDA runtime or toolkit use, or by this same rule one step
  further) is CUDA-only too: the M2N trainer calls `m2n_common.to_placements` (which sets up
  `vllm.utils.nccl`), the CPU-offload worker builds the `cuMemcpyBatchAsync` copy backend.
  Not a module that names another platform itself (`is_rocm()`, `torch.xpu` ...): that call
  is its CUDA path. Availability checks, getters and setters (`has_`, `is_`, `get_`, `set_`
  ...), a project's wrappers named exactly after a stack (`vllm.utils.flashinfer`) and its
  platform modules do not count. ROCm files and test modules are never CUDA-only this way.
- **A test double of a CUDA-only module** (`hf3fs_mock_client`, imported in place of the
  CUDA-only `hf3fs_client` when that import fails) is CUDA-only, and so is the importer.
- **A function that only runs on CUDA.** A module-level function whose every use, in the
  package and in its own module, stands under a test that selects CUDA (inside
  `if current_platform.is_cuda():`, or after an exit that rules out every other platform the
  module names, `if current_platform.is_xpu() or current_platform.is_rocm(): return`), in a
  function or class CUDA-only by its name, in a CUDA-only module, or in another module-level
  function that only runs on CUDA: `swap_blocks_triton`'s kernel, which
  `gpu_worker._select_swap_blocks_fn` returns only when `not is_xpu() and not is_rocm()`. Its
  table-API uses stay findings when a platform test is what selects CUDA, as under an in-file
  guard. Uses it cannot follow (through the module object, a star import, a re-export) keep
  the findings; uses outside the package are not seen.

The package is found from the file (the directories holding `__init__.py` above it), so a
pre-commit run over a few staged files judges them as a run over the whole tree does. What
the stage learns of each file is stored in the cache directory, keyed by the file's stat; the
workers record each file's project imports while they read it; only the statements whose
lines name what is looked for are walked; and a module is parsed only when its text says it
may matter.
"""
from __future__ import annotations

import ast
import bisect
import hashlib
import json
import os
import re
import time
from dataclasses import dataclass, field
from functools import lru_cache

from devlint.analysis.descent import Descent
from devlint.analysis.model import _EXITS, FileFacts, collect_imports
from devlint.engine.atomic import write_atomic
from devlint.engine.cache import RACY_S
from devlint.evidence import cuda_only_module, cuda_only_scope, platform_ladder, vocabulary

# findings about the file itself, not a device hardcoding: never exempted
_KEEP = {"DL900", "DL999", "DL000"}
# platforms other than CUDA and ROCm (an exclusion must name one of them, not CPU alone)
_NON_CUDA_ALIKE = platform_ladder.OTHER_PLATFORMS
# a module CUDA-only by this rule makes its importers so, but not theirs: a chain of two calls
_MAX_DEPTH = 1
# `from M import names` (a parenthesised list, or a line: backslash continuations are joined
# after the match) and `import a, b.c`, at any depth (statements after a `;` are put on a line
# of their own first)
_ANY_IMPORT = re.compile(rb"\n[ \t]*(?:from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]*"
                         rb"(\((?:[^)#]|#[^\n]*)*\)|[^\n]*)"
                         rb"|import[ \t]+([\w.]+(?:[ \t]*,[ \t]*[\w.]+)*))")
_AFTER_SEMICOLON = re.compile(rb";[ \t]*(?=(?:from|import)[ \t])")
_IMPORTED_NAME = re.compile(rb"(\w+)(?:\s+as\s+(\w+))?")
_TOP_IMPORT = re.compile(r"^(?:from[ \t]+(\.*[\w.]*)[ \t]+import\b|import[ \t]+([\w.]+))", re.M)
_EMPTY = ast.Module(body=[], type_ignores=[])
_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


@dataclass
class Exemption:
    """What the project stage exempts in one file: all of it, or some module-level functions."""

    module: str | None = None  # why the whole module is CUDA-only
    functions: dict = field(default_factory=dict)  # function name -> why
    # the functions only called under a platform test (not all in CUDA-only modules): like
    # code under an in-file CUDA guard, their table-API uses are still findings
    guarded: set = field(default_factory=set)

    def __bool__(self):
        return bool(self.module or self.functions)


def package_of(path: str) -> tuple[str, str] | None:
    """(directory above the top package, dotted module name) of a file inside a package."""
    path = os.path.abspath(path)
    d, name = os.path.split(path)
    pkg = _package_dir(d)
    if pkg is None:
        return None
    root, dotted = pkg
    stem = os.path.splitext(name)[0]
    return root, dotted if stem == "__init__" else f"{dotted}.{stem}"


@lru_cache(maxsize=4096)
def _package_dir(d: str) -> tuple[str, str] | None:
    """(directory above the top package, dotted name) of a package directory, or None."""
    if not os.path.isfile(os.path.join(d, "__init__.py")):
        return None
    parent, name = os.path.split(d)
    above = _package_dir(parent) if parent != d else None
    return (above[0], f"{above[1]}.{name}") if above else (parent, name)


def absolute(module: str | None, level: int, modname: str, is_package: bool) -> str | None:
    """The dotted module of `from <dots><module> import`, resolved against `modname`."""
    if level == 0:
        return module
    parts = modname.split(".")
    keep = len(parts) - level + (1 if is_package else 0)
    if keep <= 0:
        return None
    return ".".join(parts[:keep] + ([module] if module else []))


def top_imports(text: str) -> list:
    """(module, level) of the imports at column 0: the module's unconditional imports (give or
    take one inside a multi-line string, which only costs a parse)."""
    out = []
    for a, b in _TOP_IMPORT.findall(text):
        mod = a or b
        level = len(mod) - len(mod.lstrip("."))
        out.append((mod[level:] or None, level))
    return out


def rows_naming(text: str, names) -> list:
    """Sorted 1-based rows on which one of `names` occurs as a word."""
    pat = re.compile(r"\b(?:%s)\b" % "|".join(map(re.escape, names)))
    rows = []
    line = 1
    pos = 0
    for m in pat.finditer(text):
        line += text.count("\n", pos, m.start())
        pos = m.start()
        if not rows or rows[-1] != line:
            rows.append(line)
    return rows


def _spans(node, rows) -> bool:
    i = bisect.bisect_left(rows, node.lineno)
    return i < len(rows) and rows[i] <= (node.end_lineno or node.lineno)


def statements_at(body, rows):
    """The simple statements (and compound statements' headers) of `body`, at any depth, whose
    lines hold one of `rows`; yields (statement, chain of enclosing statements)."""
    stack = [(s, ()) for s in reversed(body)]
    while stack:
        stmt, outer = stack.pop()
        if not _spans(stmt, rows):
            continue
        yield stmt, outer
        inner = outer + (stmt,)
        for name in _BODIES:
            for child in reversed(getattr(stmt, name, ()) or ()):
                if isinstance(child, ast.AST) and hasattr(child, "lineno"):
                    stack.append((child, inner))


class FactStore:
    """Per-file facts of the project stage, kept across runs in the cache directory and keyed
    by each file's stat (like the result cache): `imports`, a module's own CUDA-only reason,
    the imported names it calls unconditionally, where it uses a name. A warm run re-reads
    none of the package's files."""

    def __init__(self, path: str | None):
        self.path = path
        self.entries: dict = {}  # abs path -> [mtime_ns, size, ino, {fact: value}]
        self.dirty = False
        self.now = time.time()
        if path:
            try:
                with open(path, "rb") as f:
                    data = json.loads(f.read())
                if isinstance(data, dict):
                    self.entries = data
            except (OSError, ValueError):
                pass

    def facts(self, path: str, st=None) -> dict:
        """The facts recorded for the file as it is now (a fresh dict when it changed)."""
        if st is None:
            try:
                st = os.stat(path)
            except OSError:
                return {}
        return self.facts_at(path, (st.st_mtime_ns, st.st_size, st.st_ino))

    def facts_at(self, path: str, stat_key, read_at: float | None = None) -> dict:
        """The facts of the file as it was at `stat_key` (mtime_ns, size, inode), read at
        `read_at` (default: when the store was opened, before this run read anything)."""
        key = list(stat_key)
        e = self.entries.get(path)
        if isinstance(e, list) and len(e) == 4 and e[:3] == key and isinstance(e[3], dict):
            return e[3]
        facts: dict = {}
        # a file modified within RACY_S of its read may change again within the same mtime
        # tick, keeping its stat: such facts are not kept
        if (self.now if read_at is None else read_at) - key[0] / 1e9 >= RACY_S:
            self.entries[path] = key + [facts]
        return facts

    def save(self, present=None) -> None:
        """Write the store if it changed; `present`: every file the package has now (entries
        of the others, deleted or renamed, are dropped)."""
        if present is not None:
            gone = [p for p in self.entries if p not in present]
            for p in gone:
                del self.entries[p]
            self.dirty = self.dirty or bool(gone)
        if self.path and self.dirty:
            _write_json(self.path, self.entries)


class Project:
    """The packages a run touches: facts read from the store or computed on demand (sources
    read and parsed only then), memoized for the run."""

    def __init__(self, cache=None):
        self._cache = cache  # devlint.engine.cache.Cache, or None
        self.now = time.time()
        self._stores: dict = {}  # package directory -> FactStore
        self._text: dict = {}  # path -> text | None
        self._tree: dict = {}  # path -> ast.Module | None
        self._facts: dict = {}  # path -> facts dict (from a store, or for this run only)
        self._cuda_only: dict = {}  # (path, depth-limited?) -> reason | None ("" while deciding)
        self._importers: dict = {}  # package directory -> {module: {path: {(name, local)}}}
        self._files: dict = {}  # package directory -> [(path, stat)]

    # --- facts and sources ----------------------------------------------------------------
    def store(self, root: str, top: str) -> FactStore:
        key = os.path.join(root, top)
        if key not in self._stores:
            where = None
            if self._cache is not None:
                where = self._cache.side_file("project", _key_hash(key) + ".facts.json")
            self._stores[key] = FactStore(where)
        return self._stores[key]

    def fact(self, path: str, name: str, compute):
        """A fact about the file at `path`: from the store when the file is unchanged, else
        computed (and recorded)."""
        held = self._facts.get(path)
        if held is None:
            pkg = package_of(path)
            store = self.store(pkg[0], pkg[1].split(".")[0]) if pkg else None
            held = self._facts[path] = (store.facts(path) if store else {}, store)
        facts, store = held
        if name not in facts:
            facts[name] = compute()
            if store is not None:
                store.dirty = True
        return facts[name]

    def save(self) -> None:
        for key, st in self._stores.items():
            files = self._files.get(key)
            st.save({p for p, _ in files} if files is not None else None)

    def text(self, path: str) -> str | None:
        """The file's text, decoded as the linter decodes it (BOM, coding cookie)."""
        if path not in self._text:
            from devlint.source import SourceFile

            try:
                with open(path, "rb") as f:
                    self._text[path] = SourceFile.from_bytes(f.read()).text
            except (OSError, UnicodeDecodeError, LookupError):
                self._text[path] = None
        return self._text[path]

    def tree(self, path: str):
        if path not in self._tree:
            text = self.text(path)
            try:
                self._tree[path] = None if text is None else ast.parse(text, filename=path)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                self._tree[path] = None
        return self._tree[path]

    @staticmethod
    def resolve(root: str, module: str) -> str | None:
        base = os.path.join(root, *module.split("."))
        for cand in (base + ".py", os.path.join(base, "__init__.py")):
            if os.path.isfile(cand):
                return cand
        return None

    def files(self, root: str, top: str) -> list:
        """[(path, stat)] of every .py file of the top-level package `top` under `root`."""
        key = os.path.join(root, top)
        if key not in self._files:
            out = []
            stack = [key]
            while stack:
                try:
                    entries = list(os.scandir(stack.pop()))
                except OSError:
                    continue
                for e in entries:
                    try:
                        if e.is_dir(follow_symlinks=False):
                            if not e.name.startswith(".") and e.name != "__pycache__":
                                stack.append(e.path)
                        elif e.name.endswith(".py"):
                            out.append((e.path, e.stat()))
                    except OSError:
                        continue
            out.sort()
            self._files[key] = out
        return self._files[key]

    def seed(self, results) -> None:
        """Take what the workers recorded while they read the files (FileResult.facts, with
        the stat they read each at)."""
        for res in results:
            if res.facts is None or res.stat is None:
                continue
            path = os.path.abspath(res.path)
            pkg = package_of(path)
            if pkg is None:
                continue  # its package vanished during the run
            store = self.store(pkg[0], pkg[1].split(".")[0])
            facts = store.facts_at(path, res.stat[:3], res.stat[3])
            for k, v in res.facts.items():
                if k not in facts:
                    facts[k] = v
                    store.dirty = True

    def importers(self, root: str, top: str) -> dict:
        """{module: {path: {(name, local)}}} over the top-level package `top` under `root`:
        every `from M import name as local` (("*", "*") for `import M`), at any depth, read
        with one regular expression per file (no parse) or from the store."""
        key = os.path.join(root, top)
        if key not in self._importers:
            store = self.store(root, top)
            index: dict = {}
            for path, st in self.files(root, top):
                facts = store.facts(path, st)
                if "imports" not in facts:
                    facts["imports"] = _file_imports(path, top)
                    store.dirty = True
                self._facts.setdefault(path, (facts, store))
                for mod, names in facts["imports"]:
                    index.setdefault(mod, {}).setdefault(path, set()).update(map(tuple, names))
            self._importers[key] = index
        return self._importers[key]

    def memo_file(self, root: str, top: str) -> str | None:
        if self._cache is None:
            return None
        return self._cache.side_file("project", _key_hash(os.path.join(root, top))
                                     + ".exempt.json")

    # --- CUDA-only modules --------------------------------------------------------------
    def cuda_only(self, path: str, modname: str, root: str, depth: int = 0) -> str | None:
        """Why the project module at `path` is CUDA-only, or None."""
        key = (path, depth >= _MAX_DEPTH)  # a depth-limited answer may be shorter
        if key in self._cuda_only:
            return self._cuda_only[key] or None
        self._cuda_only[key] = ""
        reason = self.fact(path, "own", lambda: self._own_reason(path, modname))
        if reason == "-":
            reason = None  # a wrapper named after a stack, a platform module
        elif reason is None and depth < _MAX_DEPTH:
            reason = self.calls_cuda_only(path, modname, root, depth + 1)
        self._cuda_only[key] = reason
        return reason

    def _own_reason(self, path: str, modname: str) -> str | None:
        """Why the module is CUDA-only by itself (its name or folder, its imports, its CUDA
        runtime use), "-" for a wrapper or platform module that never is, else None. Parsed
        only when its text names a CUDA-only stack or a runtime marker."""
        parts = modname.split(".")
        stacks = vocabulary._cuda_only_defaults()[0][2]
        if parts[-1] in stacks or "platforms" in parts[:-1]:
            return "-"
        if vocabulary.is_cuda_only_module(modname, wrappers=False):
            return f"its name `{modname}` says it is CUDA-specific"
        # its folder or file name; a vendored tree (`third_party/`, `_vendor/`) is exempt from
        # the per-file rules, but vendoring says nothing about CUDA
        folders = vocabulary._cuda_only_defaults()[0][0] - vocabulary.VENDORED
        dirs = os.path.abspath(path).replace(os.sep, "/").split("/")[:-1]
        folder = next((d for d in dirs if d in folders), None)
        if folder:
            return f"in a `{folder}/` folder"
        name = os.path.basename(path)  # judged without its folders from here on
        reason = cuda_only_module._cuda_only_reason(name, _EMPTY)
        if reason is None and self.fact(path, "gate", lambda: _may_be_cuda_only(
                (self.text(path) or "").encode("utf-8", "surrogateescape"))):
            reason = self.fact(path, "own-text", lambda: _text_reason(
                path, self.text(path), self.tree(path)))
        return reason

    def calls_cuda_only(self, path: str, modname: str, root: str, depth: int = 0) -> str | None:
        """Why the module calls into a CUDA-only project module unconditionally, or None.
        Which imported modules are CUDA-only is decided first (names, then text-gated parses),
        so the module itself is parsed only when one is."""
        top = modname.split(".")[0]
        if self.fact(path, "platforms", lambda: _names_other_platform(
                (self.text(path) or "").encode("utf-8", "surrogateescape"))):
            return None  # it has paths for other platforms: its CUDA calls are one of them
        cuda = {}  # module -> why it is CUDA-only
        for mod in self.fact(path, "top", lambda: self._top_project_imports(path, modname)) \
                + self.fact(path, "doubled", lambda: self._double_fallbacks(path, modname)):
            target = self.resolve(root, mod)
            why = target and self.cuda_only(target, mod, root, depth)
            if why:
                cuda[mod] = why
        if not cuda:
            return None
        if vocabulary.is_test_path(os.path.abspath(path).replace(os.sep, "/").split("/")) \
                or cuda_only_module._vendor_family_reason(path) or self.fact(
                path, "alike", lambda: bool(cuda_only_module._cuda_only_reason(
                    path, self.tree(path) or _EMPTY, alike=True))):
            return None  # ROCm code keeps its findings; a test module's imports gate tests
        for local, mod in self.fact(path, "calls", lambda: self._calls(path, modname, top)):
            if mod in cuda:
                return f"it calls `{local}` from `{mod}`, which is CUDA-only ({cuda[mod]})"
        return None

    def _top_project_imports(self, path: str, modname: str) -> list:
        text = self.text(path)
        if text is None:
            return []
        top = modname.split(".")[0]
        is_package = os.path.basename(path) == "__init__.py"
        out = []
        for mod, level in top_imports(text):
            mod = absolute(mod, level, modname, is_package)
            if mod and mod.split(".")[0] == top and mod not in out:
                out.append(mod)
        return out

    def _calls(self, path: str, modname: str, top: str) -> list:
        """[(local name, module)] of the names imported at the top from project modules that
        the module calls unconditionally."""
        tree = self.tree(path)
        if tree is None:
            return []
        is_package = os.path.basename(path) == "__init__.py"
        imported: dict = {}  # local name -> module

        def take(stmt, names=None):
            mod = absolute(stmt.module, stmt.level, modname, is_package)
            if mod and mod.split(".")[0] == top:
                for a in stmt.names:
                    local = a.asname or a.name
                    if not local.startswith(vocabulary._AVAILABILITY_PREFIXES) and (
                            names is None or local in names):
                        imported[local] = mod

        for stmt in tree.body:
            if isinstance(stmt, ast.ImportFrom):
                take(stmt)
            elif isinstance(stmt, ast.Try):
                real = _with_double_fallback(stmt, modname, is_package)
                for st in stmt.body:
                    if isinstance(st, ast.ImportFrom):
                        take(st, real)
                for name, alias in _aliases(stmt.body).items():
                    if alias in imported and name in real:
                        imported[name] = imported[alias]
        return [[name, imported[name]] for name in _unconditional_calls(tree, self.text(path),
                                                                        imported)]

    def _double_fallbacks(self, path: str, modname: str) -> list:
        """Project modules imported in a `try:` whose fallback is a test double (their import
        counts as unconditional: the double stands in for them, `hf3fs_mock_client`)."""
        text = self.text(path)
        if text is None or not _DOUBLE_IMPORT.search(text):
            return []  # no indented import of a double (one in an `except:`): no parse
        tree = self.tree(path)
        if tree is None:
            return []
        is_package = os.path.basename(path) == "__init__.py"
        out = []
        for stmt in tree.body:
            if isinstance(stmt, ast.Try) and _with_double_fallback(stmt, modname, is_package):
                out += [absolute(st.module, st.level, modname, is_package)
                        for st in stmt.body if isinstance(st, ast.ImportFrom)]
        return [m for m in out if m]

    def double_of(self, path: str, modname: str, root: str) -> str | None:
        """Why the module, a test double (`*_mock_*`, `fake_*` ...), is CUDA-only: a module
        imports it in place of a CUDA-only module when that import fails."""
        if not _DOUBLE.search(modname.rsplit(".", 1)[-1]):
            return None
        top = modname.split(".")[0]
        for importer in sorted(self.importers(root, top).get(modname, {})):
            pkg = package_of(importer)
            tree = self.tree(importer) if pkg else None
            if tree is None:
                continue
            is_package = os.path.basename(importer) == "__init__.py"
            for stmt in tree.body:
                if not (isinstance(stmt, ast.Try) and any(
                        isinstance(st, ast.ImportFrom) and absolute(
                            st.module, st.level, pkg[1], is_package) == modname
                        for h in stmt.handlers for st in h.body)):
                    continue
                for st in stmt.body:
                    if isinstance(st, ast.ImportFrom):
                        real = absolute(st.module, st.level, pkg[1], is_package)
                        target = real and self.resolve(root, real)
                        why = target and self.cuda_only(target, real, root)
                        if why:
                            return (f"it stands in for `{real}` (imported in its place by "
                                    f"`{os.path.relpath(importer, root)}`), which is CUDA-only "
                                    f"({why})")
        return None

    # --- functions only ever called on CUDA ---------------------------------------------
    def cuda_callers_only(self, path: str, modname: str, root: str, names) -> dict:
        """{name: (why, by_test)} for the module-level functions `names` of the module at
        `path` that run on CUDA only: every use, in the package and in the module itself,
        stands under a platform test (by_test), in a function or class CUDA-only by its name
        or runtime use, in a CUDA-only module, or in another module-level function of the
        module that runs on CUDA only by this same rule."""
        memo: dict = {}
        out = {}
        for name in names:
            found = self._on_cuda_only(path, modname, root, name, memo, ())
            if found:
                out[name] = found
        return out

    def _on_cuda_only(self, path, modname, root, name, memo, seen):
        if name in memo:
            return memo[name]
        if name in seen or len(seen) > 8:
            return None
        sites = []  # (where, by_test)
        index = self.importers(root, modname.split(".")[0])
        if self._through_a_parent(index, modname, name, path):
            memo[name] = None  # `from pkg import mod; mod.f()`: not followed
            return None
        files = index.get(modname, {})
        for p in sorted(files):
            locals_ = sorted({local for n, local in files[p] if n in (name, "*")})
            if p == path or not locals_:
                continue
            if "*" in locals_:
                memo[name] = None  # `import pkg.mod` and `pkg.mod.f(...)`: not followed
                return None
            where = self._uses_on_cuda(p, root, locals_)
            if where is None:
                memo[name] = None
                return None
            sites.extend(where)
        # its own module: each use on CUDA, or held by a function that runs on CUDA only
        rows, holders = self.fact(path, "own-uses:" + name,
                                  lambda: self._own_uses(path, name))
        if None in holders:
            memo[name] = None
            return None
        sites.extend((f"{os.path.relpath(path, root)}:{row}", how == "test") for row, how in rows)
        for holder in holders:
            found = self._on_cuda_only(path, modname, root, holder, memo, seen + (name,))
            if not found:
                memo[name] = None
                return None
            sites.append((f"`{holder}`, which {found[0]}", found[1]))
        memo[name] = None if not sites else (
            f"every use runs on CUDA only ({sites[0][0]})", any(b for _, b in sites))
        return memo[name]

    def _through_a_parent(self, index: dict, modname: str, name: str, path: str) -> bool:
        """Whether some file reaches the module through a package above it: `from pkg import
        mod` / `from . import mod` (then `mod.name(...)`), or `import pkg` with `mod.name` in
        its text. Such uses are not followed, so they keep the findings."""
        parts = modname.split(".")
        for i in range(1, len(parts)):
            parent, child = ".".join(parts[:i]), parts[i]
            for p, names in index.get(parent, {}).items():
                if p == path:
                    continue
                if any(n == child for n, _ in names):
                    return True
                if ("*", "*") in names and re.search(
                        r"\b%s\.%s\b" % (re.escape(child), re.escape(name)),
                        self.text(p) or ""):
                    return True
        return False

    def _own_uses(self, path: str, name: str):
        """([(row, how)] uses of `name` on CUDA, [module-level functions holding the others
        (None: module-level code)]) in its own module, its own body aside."""
        text = self.text(path)
        if text is not None and len(re.findall(r"\b%s\b" % re.escape(name), text)) <= 1:
            return [], []  # only its `def` names it: no parse
        tree = self.tree(path)
        if tree is None or text is None:
            return [], [None]
        walker = _CudaWalker(path, text, tree, {name}, skip=name)
        walker.run()
        return walker.sites, sorted(walker.holders, key=lambda h: (h is None, h or ""))

    def _uses_on_cuda(self, path: str, root: str, locals_):
        """Where `path` uses `locals_` (its names for a function of another module), each on
        CUDA only: [(where, whether a platform test selects CUDA there)]; None when one use
        may run elsewhere."""
        pkg = package_of(path)
        if pkg is None:
            return None
        rel = os.path.relpath(path, root)
        why = self.cuda_only(path, pkg[1], root)
        if why:
            return [(f"{rel} ({why})", False)]
        rows = self.fact(path, "uses:" + ",".join(locals_),
                         lambda: self._guarded_rows(path, locals_))
        return None if rows is None else [(f"{rel}:{row} ({how})" if how != "test"
                                           else f"{rel}:{row}", how == "test")
                                          for row, how in rows]

    def _guarded_rows(self, path: str, locals_):
        text = self.text(path)
        if text is None or not _CUDA_CONTEXT.search(text):
            return None  # no platform test and no CUDA-named scope: every use runs anywhere
        tree = self.tree(path)
        if tree is None:
            return None
        walker = _CudaWalker(path, self.text(path), tree, set(locals_))
        walker.run()
        # no use at all: the name is re-exported (`__init__.py`), which is not followed
        return None if walker.holders or not walker.sites else walker.sites


def _file_imports(path: str, top: str) -> list:
    """[[module, [[name, local], ...]], ...] of a file's imports of the top-level package
    `top` (relative ones resolved)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return []
    return imports_of(path, data, top)


def worker_facts(path: str, data: bytes) -> dict | None:
    """What the workers record of each file of a package while they read it: its project
    imports (one pass over its import lines), which the importers index needs of every file.
    The rest is read in the main process for the few modules that matter."""
    if package_of(path) is None:
        return None
    return {"imports": imports_of(path, data)}


def _text_reason(path: str, text: str | None, tree) -> str | None:
    """Why the module's imports or CUDA runtime use make it CUDA-only (not its folders)."""
    if tree is None or text is None:
        return None
    return cuda_only_module._cuda_only_reason(os.path.basename(path), tree) or cuda_only_module._runtime_reason(tree, text)


def parsed_facts(path: str, text: str, tree) -> dict:
    """What the workers record of every file they parse, from the linter's tree: why its
    imports or runtime use make it CUDA-only (the project stage would otherwise parse the
    modules an import chain leads to)."""
    if package_of(path) is None:
        return {}
    return {"own-text": _text_reason(path, text, tree)}


def linted_facts(path: str, text: str, tree, diags) -> dict:
    """What the stage will ask of a file with findings, from the tree the linter already
    parsed (so the main process does not parse it again): the same facts, computed by the
    same code."""
    path = os.path.abspath(path)
    pkg = package_of(path)
    if pkg is None:
        return {}
    modname = pkg[1]
    project = Project()
    project._text[path] = text
    project._tree[path] = tree
    facts = {"top": project._top_project_imports(path, modname),
             "calls": project._calls(path, modname, modname.split(".")[0]),
             "doubled": project._double_fallbacks(path, modname)}
    for name in {d.scope for d in diags if d.code not in _KEEP} - {None}:
        facts["own-uses:" + name] = project._own_uses(path, name)
    return facts


@lru_cache(maxsize=1)
def _needles() -> tuple:
    """Bytes needles: (runtime markers, names of another platform)."""
    exact, prefixes, _ = vocabulary._runtime_markers()
    markers = tuple(m.encode() for m in (*exact, *prefixes))
    # `torch.cuda.is_available()` asks whether there is CUDA at all: the module has a path
    # without it
    others = tuple(f"is_{p}(".encode() for p in sorted(_NON_CUDA_ALIKE | {"rocm"})) + (
        b"torch.xpu", b"torch.npu", b"torch.mps", b"cuda.is_available(")
    return markers, others


def _names_other_platform(data: bytes) -> bool:
    """The module tests for, or uses, a platform other than NVIDIA CUDA (`is_rocm()`,
    `is_xpu()`, `torch.xpu` ...): it is platform-aware, and a call into a CUDA-only module is
    its CUDA path, not all of it."""
    return any(n in data for n in _needles()[1])


def _may_be_cuda_only(data: bytes) -> bool:
    """Whether the module's own facts could make it CUDA-only: a runtime marker in its text,
    or an import of a CUDA-only stack at its top level (a column-0 import, or any import when
    a column-0 `try:` could hold it). Otherwise it is not parsed for them."""
    if any(m in data for m in _needles()[0]):
        return True
    stacks = vocabulary._cuda_only_defaults()[0][2]
    text = data.decode("utf-8", "replace")
    if any(m and not lvl and vocabulary._names_cuda_module(m, stacks) for m, lvl in top_imports(text)):
        return True
    if "\ntry:" not in text and not text.startswith("try:"):
        return False
    seen: list = []
    imports_of("", data, top="", seen=seen)
    return any(vocabulary._names_cuda_module(m, stacks) for m in seen)


def imports_of(path: str, data: bytes, top: str | None = None, seen=None) -> list:
    """`_file_imports` of bytes already read (the workers index the files they read).
    seen: a list to extend with every absolute module the import lines name (any package);
    with top="" only `seen` is filled."""
    modname = None
    if top is None:
        pkg = package_of(path)
        if pkg is None:
            return []
        modname = pkg[1]
        top = modname.split(".")[0]
    out: dict = {}
    found = []  # (module as written, names)
    data = b"\n" + data
    if b";" in data:
        data = _AFTER_SEMICOLON.sub(b"\n", data)
    for m in _ANY_IMPORT.finditer(data):
        frm, what, imp = m.groups()
        if imp:
            for one in imp.split(b","):
                found.append((one.strip().split()[0] if one.strip() else b"", None))
            continue
        end = m.end()
        while what.endswith(b"\\") and end < len(data):  # a backslash continuation
            nxt = data.find(b"\n", end + 1)
            nxt = len(data) if nxt < 0 else nxt
            what = what[:-1] + b" " + data[end + 1:nxt]
            end = nxt
        found.append((frm, what))
    for frm, what in found:
        if not frm:
            continue
        if seen is not None and not frm.startswith(b"."):
            seen.append(frm.decode("ascii", "replace"))
        if not top or not frm.startswith((b".", top.encode())):
            continue  # another package's module: only its name was wanted
        mod = frm.decode("ascii", "replace")
        if what is None:
            names = [("*", "*")]  # `import pkg.mod`: the module object
        else:
            what = re.sub(rb"#[^\n]*", b"", what).replace(b"\\", b" ")
            names = [(n.decode("ascii", "replace"), (a or n).decode("ascii", "replace"))
                     for n, a in _IMPORTED_NAME.findall(what)]
            if b"*" in what:
                names.append(("*", "*"))  # a star import: every name, not followed
        level = len(mod) - len(mod.lstrip("."))
        if level:
            if modname is None:
                pkg = package_of(path)
                modname = pkg[1] if pkg else ""
            mod = absolute(mod[level:] or None, level, modname,
                           path.endswith("__init__.py")) if modname else None
        if mod and mod.split(".")[0] == top:
            have = out.setdefault(mod, [])
            have.extend([list(n) for n in names if list(n) not in have])
    return [[m, n] for m, n in out.items()]


# what can put a use on CUDA in a module that is not CUDA-only: a platform test, or a function
# or class CUDA-only by its name or runtime use (evidence.cuda_only_scope); a text without any of
# these is not parsed
_CUDA_CONTEXT = re.compile(
    r"\bis_(?:%s)\b" % "|".join(sorted(_NON_CUDA_ALIKE | {"cuda", "cuda_alike", "rocm",
                                                         "available"}))
    + r"|\.type\s*[!=]=|[\"']cuda[\"']|TYPE_CHECKING|cuda_stream|cudart|MemPool|DeviceType|CUstream"
    + r"|cupy|^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+\w*(?i:%s)" % cuda_only_scope._VENDOR_NAME.pattern,
    re.M)
_DOUBLE = re.compile(r"(?:\b|_)(?:mock|fake|stub|dummy)(?:\b|_)", re.I)
_DOUBLE_IMPORT = re.compile(r"^[ \t]+from[ \t]+[\w.]*?(?:\b|_)(?:mock|fake|stub|dummy)(?:\b|_)",
                            re.I | re.M)


def _aliases(body) -> dict:
    """`Name = Other` assignments of a block: {Name: Other}."""
    return {st.targets[0].id: st.value.id for st in body
            if isinstance(st, ast.Assign) and len(st.targets) == 1
            and isinstance(st.targets[0], ast.Name) and isinstance(st.value, ast.Name)}


def _with_double_fallback(stmt: ast.Try, modname: str, is_package: bool) -> set:
    """The names a `try:` imports (and aliases) whose every `except` imports them from a test
    double (`from .utils.hf3fs_mock_client import Hf3fsClient`); else empty."""
    names = {(a.asname or a.name) for st in stmt.body if isinstance(st, ast.ImportFrom)
             for a in st.names}
    names |= {n for n, alias in _aliases(stmt.body).items() if alias in names}
    if not names or not stmt.handlers:
        return set()
    for h in stmt.handlers:
        doubles = [st for st in h.body if isinstance(st, ast.ImportFrom)
                   and _DOUBLE.search((absolute(st.module, st.level, modname, is_package)
                                       or "").rsplit(".", 1)[-1])]
        if not doubles:
            return set()
    return names


def _unconditional_calls(tree, text: str, names: dict) -> list:
    """The names of `names` called outside `if`s, `except` handlers and conditional
    expressions, in a function, a method or the module body, in the order first met."""
    found: list = []
    if not names:
        return found
    rows = rows_naming(text, names)
    for stmt, outer in statements_at(tree.body, rows):
        if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.If, ast.Try, ast.FunctionDef,
                             ast.AsyncFunctionDef, ast.ClassDef)) \
                or type(stmt).__name__ in ("Match", "TryStar"):
            continue  # imports, and headers whose calls are in a test or decorators
        # the statement runs whenever its function does: no `if`/`try` between them
        chain = outer + (stmt,)
        fn = max((i for i, s in enumerate(chain)
                  if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))), default=None)
        if fn is None and any(not isinstance(s, ast.ClassDef) for s in chain[:-1]):
            continue
        # a `try:` body runs too (its `except` handlers do not: they are in the chain)
        if any(not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                  ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith,
                                  ast.Try))
               for s in chain[(0 if fn is None else fn + 1):-1]):
            continue
        for n in vocabulary._unconditional_nodes(_Body([stmt])):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) \
                    and n.func.id in names and n.func.id not in found:
                found.append(n.func.id)
    return found


class _Body:
    """A statement list shaped like a function, for evidence.vocabulary._unconditional_nodes."""

    def __init__(self, body):
        self.body = body


_VOCABULARY = re.compile(r"\bis_(%s)\s*\(" % "|".join(sorted(_NON_CUDA_ALIKE | {"rocm"}))
                         + r"|\btorch\.(?:backends\.)?(xpu|npu|mps|hpu)\b")


def _header(stmt) -> list:
    """The expressions of a def or class statement that run when the statement runs."""
    if isinstance(stmt, ast.ClassDef):
        return [*stmt.decorator_list, *stmt.bases, *(k.value for k in stmt.keywords)]
    a = stmt.args
    return [*stmt.decorator_list, *a.defaults, *(d for d in a.kw_defaults if d is not None),
            *(x.annotation for x in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg)
              if x is not None and x.annotation is not None),
            *([stmt.returns] if stmt.returns is not None else [])]


class _CudaWalker:
    """Walks a module's statements knowing whether CUDA is established (a platform test, or a
    function or class CUDA-only by its name or runtime use), recording each load of the
    watched names: on CUDA, or else which module-level function holds it (None: module-level
    code). Only statements on rows naming them are entered, and the `if`s that may guard
    them."""

    def __init__(self, path, text, tree, names, skip: str | None = None):
        aliases: dict = {}
        collect_imports(tree.body, aliases)
        self.facts = FileFacts(path, text, "torch", None, None, tree, aliases)
        self.tests = Descent(self.facts, [])
        self.names = names
        self.skip = skip  # a module-level function not to enter (the one asked about)
        self.rows = rows_naming(text, names)
        self.sites: list = []  # (row, how): uses on CUDA
        self.holders: set = set()  # module-level functions holding other uses (None: none)
        self.holder = None
        self.depth = 0  # enclosing functions and classes
        # the platforms other than CUDA the module names (`is_xpu()`, `torch.xpu` ...)
        self.vocabulary = {a or b for a, b in _VOCABULARY.findall(text)}

    def polarity(self, test) -> int:
        """+1: true selects CUDA; -1: false selects CUDA; 0: neither. A test that rules out
        platforms (`is_xpu() or is_rocm()`) selects CUDA when false only if it rules out every
        other platform the module names, and at least one accelerator: `if is_cpu(): return`
        leaves XPU in."""
        p, _ = self.tests.cuda_test(test)
        if p:
            return p
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return -self.polarity(test.operand)
        terms = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or) \
            else [test]
        excluded = {x for x in map(self._platform_named, terms) if x}
        if excluded & (_NON_CUDA_ALIKE - {"cpu"}) and excluded >= self.vocabulary:
            return -1
        return 0

    def _platform_named(self, test) -> str | None:
        """The platform a bare query asks about (`current_platform.is_xpu()` -> "xpu",
        `torch.backends.mps.is_available()` -> "mps"), other than CUDA."""
        if not isinstance(test, ast.Call):
            return None
        func = test.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name.startswith("is_") and name[3:] in _NON_CUDA_ALIKE | {"rocm"}:
            return name[3:]
        if name == "is_available" and self.tests._platform_query(test) == "other":
            q = self.facts.qualname(func) or ""
            return next((p for p in ("xpu", "mps", "npu", "hpu") if f".{p}." in q), None)
        return None

    def run(self) -> None:
        self.block(self.facts.tree.body, None)

    def block(self, body, why) -> None:
        for stmt in body:
            if _spans(stmt, self.rows):
                self.statement(stmt, why)
            if why is None and isinstance(stmt, ast.If) and not stmt.orelse and stmt.body \
                    and isinstance(stmt.body[-1], _EXITS) and self.polarity(stmt.test) < 0:
                why = "test"  # `if not <cuda>: return` guards the rest of the block

    def statement(self, stmt, why) -> None:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            return
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            # decorators, defaults, annotations and bases run where the statement runs
            for node in _header(stmt):
                self.expr(node, why)
            top = self.depth == 0 and not isinstance(stmt, ast.ClassDef)
            if top and stmt.name == self.skip:
                return
            if why is None:
                reason = cuda_only_scope._scope_reason(stmt, self.facts.source(stmt))
                if reason:
                    why = reason
            holder = self.holder
            self.depth += 1
            if top:
                self.holder = stmt.name
            try:
                self.block(stmt.body, why)
            finally:
                self.depth -= 1
                self.holder = holder
            return
        if isinstance(stmt, ast.If):
            self.expr(stmt.test, why)
            p = self.polarity(stmt.test)
            self.block(stmt.body, why or ("test" if p > 0 else None))
            self.block(stmt.orelse, why or ("test" if p < 0 else None))
            return
        self._fields(stmt, why)

    def _fields(self, stmt, why) -> None:
        for value in (getattr(stmt, f) for f in stmt._fields):
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                self.block(value, why)
            elif isinstance(value, list):
                for v in value:
                    if isinstance(v, (ast.excepthandler,)) or type(v).__name__ == "match_case":
                        self.block(v.body, why)
                    elif isinstance(v, ast.AST):
                        self.expr(v, why)
            elif isinstance(value, ast.AST):
                self.expr(value, why)

    def expr(self, node, why) -> None:
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and n.id in self.names and isinstance(n.ctx, ast.Load):
                if why:
                    self.sites.append((n.lineno, why))
                else:
                    self.holders.add(self.holder)


# --- the stage ---------------------------------------------------------------------------

def exemptions(results, cache=None, project: Project | None = None) -> dict:
    """{absolute path: Exemption} for the Python files of `results` (FileResults) that have
    findings. cache: the run's result cache, whose directory also keeps the stage's facts."""
    project = project or Project(cache)
    try:
        return _exemptions(results, project)
    finally:
        project.save()


def _exemptions(results, project: Project) -> dict:
    """Per package: the stored answer when no file of the package changed and the findings'
    functions are the same, else computed (from stored per-file facts where they hold)."""
    project.seed(results)
    packages: dict = {}  # (root, top) -> {path: (modname, scopes)}
    for res in results:
        scopes = {d.scope for d in res.diagnostics if d.code not in _KEEP}
        if not scopes or not res.path.endswith((".py", ".pyi")):
            continue
        pkg = package_of(res.path)
        if pkg is not None:
            root, modname = pkg
            packages.setdefault((root, modname.split(".")[0]), {})[
                os.path.abspath(res.path)] = (modname, sorted(scopes - {None}))
    out = {}
    for (root, top), wanted in packages.items():
        h = hashlib.blake2b(digest_size=16)
        for path, st in project.files(root, top):
            h.update(f"{path}\0{st.st_mtime_ns}\0{st.st_size}\0{st.st_ino}\n".encode(
                "utf-8", "surrogateescape"))
        h.update(json.dumps(sorted(wanted.items())).encode("utf-8", "surrogateescape"))
        # a file changed within RACY_S could change again unseen: do not reuse an answer then
        fresh = all(project.now - st.st_mtime_ns / 1e9 >= RACY_S
                    for _, st in project.files(root, top))
        memo = project.memo_file(root, top)
        stored = _read_json(memo) if memo and fresh else None
        if isinstance(stored, dict) and stored.get("key") == h.hexdigest():
            found = {p: Exemption(m, f, set(g)) for p, (m, f, g) in stored["exempt"].items()}
        else:
            found = {}
            for path, (modname, names) in wanted.items():
                ex = _exemption(project, path, root, modname, names)
                if ex:
                    found[path] = ex
            if memo and fresh:
                _write_json(memo, {"key": h.hexdigest(), "exempt": {
                    p: [e.module, e.functions, sorted(e.guarded)] for p, e in found.items()}})
        out.update(found)
    return out


def _exemption(project: Project, path: str, root: str, modname: str, names) -> Exemption:
    ex = Exemption(project.calls_cuda_only(path, modname, root)
                   or project.double_of(path, modname, root))
    if ex.module or not names:
        return ex
    found = project.cuda_callers_only(path, modname, root, names)
    ex.functions = {n: why for n, (why, _) in found.items()}
    ex.guarded = {n for n, (_, by_test) in found.items() if by_test}
    return ex


def _key_hash(key: str) -> str:
    return hashlib.blake2b(key.encode("utf-8", "surrogateescape"), digest_size=10).hexdigest()


def _read_json(path: str):
    try:
        with open(path, "rb") as f:
            return json.loads(f.read())
    except (OSError, ValueError):
        return None


def _write_json(path: str, data) -> None:
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        write_atomic(path, json.dumps(data, separators=(",", ":")).encode("utf-8"),
                     keep_mode=False, fsync=False, prefix=".tmp-")
    except OSError:
        pass


def keep(diag, ex: Exemption | None) -> bool:
    """Whether a finding survives its file's exemption."""
    if not ex or diag.code in _KEEP:
        return True
    if ex.module:
        return False
    if diag.scope not in ex.functions:
        return True
    return diag.table_api and diag.scope in ex.guarded


def filtered(diags, ex: Exemption | None) -> list:
    """The findings that survive their file's exemption."""
    return [d for d in diags if keep(d, ex)] if ex else diags


def apply(results, exempt: dict) -> int:
    """Drop exempted findings from `results` in place; returns how many were dropped."""
    dropped = 0
    for res in results:
        ex = exempt.get(os.path.abspath(res.path)) if res.diagnostics else None
        if ex:
            before = len(res.diagnostics)
            res.diagnostics = filtered(res.diagnostics, ex)
            dropped += before - len(res.diagnostics)
    return dropped
