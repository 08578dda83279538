"""The package index and its package-level principles (see `devlint.engine.project`):
CUDA-only through a project module, a test double of a CUDA-only module, a function that only
runs on CUDA. Each answer is a human reason (a `str`) or None.

Size: ~420 lines, one class: the three principles share the per-run memo of parsed modules,
the importers index and the fact store, and call each other recursively (a module is CUDA-only
through a function that is only called on CUDA ...); splitting the class would pass that state
around."""
from __future__ import annotations

import ast
import gc
import os
import re
import time

from devlint.engine.project.package import (
    _EMPTY, _file_imports, absolute, package_of, through_a_parent, top_imports,
)
from devlint.engine.project.store import _key_hash, FactStore
from devlint.evidence import Reason, vocabulary
from devlint.evidence.cuda_kernel_package import SUFFIXES as CUDA_SOURCES
from devlint.evidence.only_called_on_cuda import PRINCIPLE as ONLY_CALLED_ON_CUDA
from devlint.evidence.test_double import PRINCIPLE as TEST_DOUBLE


# a module CUDA-only by this rule makes its importers so, but not theirs: a chain of two calls
_MAX_DEPTH = 1
# parsed trees held at once by a Project (least recently used dropped first)
_TREES_KEPT = 64
# a tree of a text longer than this is not held (CPython's tree takes ~190 bytes per
# character: torch's 1.4 MB common_methods_invocations.py, ~250 MB): parsed again if asked
_TREE_HELD_CHARS = 200_000
# but the last such tree of a text up to this long is held, alone, until another replaces
# it: the passes ask for the same large module one after another (vLLM 0.33's 319k-character
# `gpu_model_runner.py` was parsed 21 times in a cold run, ~10 % of its CPU time); one tree
# of at most ~75 MB, and none of torch's 1.4 MB file
_LARGE_TREE_HELD_CHARS = 400_000
# with the collector off (the CLI), the cyclic garbage of the parses is collected once this
# many young objects have piled up (young generations only: made since the last collection).
# A safety net only: the analyses' trees are freed by reference count (no recursive closure
# keeps one in a cycle: tests/test_tree_cycles.py), so the young objects here are mostly the
# trees held, which a collection scans and keeps (vLLM 0.33: 5 collections, ~0.7 CPU s, that
# freed ~3,600 objects, at 200,000; none at this bound, and torch's peak the same, 383 MB)
_YOUNG_OBJECTS = 2_000_000


def _on_import(why) -> bool:
    """The module is CUDA-only by what it does when imported: an unconditional import of a
    CUDA-only stack, or CUDA runtime use by its top-level code (`cuda_only_module`'s
    reasons), not by its name, its folder, a few functions or a chain of calls."""
    return str(why).startswith(("imports `", "its top-level code uses "))


class Project:
    """The packages a run touches: facts read from the store or computed on demand (sources
    read and parsed only then), memoized for the run."""

    def __init__(self, cache=None):
        self._cache = cache  # devlint.engine.cache.Cache, or None
        self.now = time.time()
        self._stores: dict = {}  # package directory -> FactStore
        self._text: dict = {}  # path -> text | None
        self._tree: dict = {}  # path -> ast.Module | None
        self._large_tree = None  # (path, tree) of the last text over `_TREE_HELD_CHARS`
        self._facts: dict = {}  # path -> facts dict (from a store, or for this run only)
        self._cuda_only: dict = {}  # (path, depth-limited?) -> reason | None ("" while deciding)
        # path -> (reason, [name, first row, last row]): the one module-level function or
        # class of the module that calls into a CUDA-only project module (`calls_cuda_only`)
        self.scoped: dict = {}
        self._importers: dict = {}  # package directory -> {module: {path: {(name, local)}}}
        self._files: dict = {}  # package directory -> [(path, stat)]
        self._sources: dict = {}  # package directory -> [(path, stat)] of its CUDA sources
        # path -> (root, dotted module) | None, as `xcallers._State.module` names a file: one
        # answer per run, shared by the passes' states (a text the Project holds no tree of,
        # over `_TREE_HELD_CHARS`, was parsed again by each pass to name it)
        self.module_names: dict = {}

    # --- facts and sources ----------------------------------------------------------------
    def store(self, root: str, top: str) -> FactStore:
        key = os.path.join(root, top)
        if key not in self._stores:
            where = None
            if self._cache is not None:
                where = self._cache.side_file("project", _key_hash(key) + ".facts.json")
            self._stores[key] = FactStore(where)
        return self._stores[key]

    def _store_of(self, path: str) -> FactStore:
        """The store of the file's package; for a module of a namespace package (no
        `__init__.py` above it), the store of its folder (keyed by the folder and a trailing
        separator, which no package's key has): its facts are kept across runs as a
        package's are, keyed by its stat, so a warm run parses it no more."""
        pkg = package_of(path)
        if pkg is None:
            return self.store(os.path.dirname(path), "")
        return self.store(pkg[0], pkg[1].split(".")[0])

    def fact(self, path: str, name: str, compute):
        """A fact about the file at `path`: from the store when the file is unchanged, else
        computed (and recorded)."""
        held = self._facts.get(path)
        if held is None:
            store = self._store_of(path)
            held = self._facts[path] = (store.facts(path), store)
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
        """The file's tree, parsed on demand. Only the most recently used `_TREES_KEPT` trees
        are held (a file's facts are stored as soon as they are computed, so a tree is rarely
        asked for again once its file is done): holding every tree the stage parsed made
        the main process grow with the project (torch's sources: 457 -> 785 MB)."""
        trees = self._tree
        if path in trees:
            tree = trees.pop(path)
        elif self._large_tree is not None and self._large_tree[0] == path:
            return self._large_tree[1]
        else:
            text = self.text(path)
            try:
                tree = None if text is None else ast.parse(text, filename=path)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                tree = None
            if len(trees) >= _TREES_KEPT:
                del trees[next(iter(trees))]
            if not gc.isenabled() and gc.get_count()[0] > _YOUNG_OBJECTS:
                gc.collect(1)  # torch's sources: the main process's peak 581 -> 443 MB
            if text is not None and len(text) > _TREE_HELD_CHARS:
                # not among the trees held (443 -> 365 MB on torch's sources); one slot
                self._large_tree = (path, tree) if len(text) <= _LARGE_TREE_HELD_CHARS \
                    else None
                return tree
        trees[path] = tree  # most recently used last
        return tree

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
            # the stats the runner took this run (the cache's), else one per file
            taken = getattr(self._cache, "stats", None)
            taken = taken() if taken is not None else {}
            out, sources = [], []
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
                            out.append((e.path, taken.get(e.path) or e.stat()))
                        elif e.name.endswith(CUDA_SOURCES):
                            sources.append((e.path, e.stat()))
                    except OSError:
                        continue
            out.sort()
            sources.sort()
            self._files[key] = out
            self._sources[key] = sources
        return self._files[key]

    def sources(self, root: str, top: str) -> list:
        """[(path, stat)] of the CUDA C++ sources (`.cu`, `.cuh`) of the package `top`."""
        self.files(root, top)
        return self._sources[os.path.join(root, top)]

    def kernel_package(self, path: str, root: str, modname: str):
        """The Reason when the module at `path` belongs to a package below the top-level one
        that ships CUDA C++ sources (`devlint.evidence.cuda_kernel_package`), else None."""
        from devlint.evidence.cuda_kernel_package import kernel_package_reason
        from devlint.evidence.fast_path import names_triton

        top = modname.split(".")[0]
        top_dir = os.path.abspath(os.path.join(root, top))
        memo = self.__dict__.setdefault("_kernel_packages", {})
        if top_dir not in memo:
            owners: dict = {}  # package directory -> the first CUDA source it holds
            for src, _ in self.sources(root, top):
                d = os.path.dirname(os.path.abspath(src))
                while d.startswith(top_dir + os.sep) and not os.path.exists(
                        os.path.join(d, "__init__.py")):
                    d = os.path.dirname(d)
                if d.startswith(top_dir + os.sep):
                    owners.setdefault(d, src)
            memo[top_dir] = owners
        owners = memo[top_dir]
        if not owners:
            return None
        d = os.path.dirname(os.path.abspath(path))
        while d.startswith(top_dir + os.sep):
            if d in owners:
                tree = self.tree(path)
                if tree is None or names_triton(tree):
                    return None
                return kernel_package_reason(d, owners[d])
            d = os.path.dirname(d)
        return None

    def seed(self, results) -> None:
        """Take what the workers recorded while they read the files (FileResult.facts, with
        the stat they read each at)."""
        for res in results:
            if res.facts is None or res.stat is None:
                continue
            path = os.path.abspath(res.path)
            store = self._store_of(path)
            facts = store.facts_at(path, res.stat[:3], res.stat[3])
            if package_of(path) is None:
                # a namespace package's module: held for the run even where the store does
                # not keep them (a file changed within the racy window), as before it had one
                facts = self._facts.setdefault(path, (facts, store))[0]
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
                # a namespace package below (a folder without `__init__.py`) makes its files
                # their own packages, whose store `fact` reads: only this package's own
                # files are held from this store (else the workers' facts went unseen)
                if (package_of(path) or (None,))[0] == root:
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
        # (the text gates and the walker are imported where an answer is computed: a warm
        # run reads the stored answers and imports neither)
        from devlint.engine.project.gates import _may_be_cuda_only, _text_reason
        from devlint.evidence import cuda_only_module

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
        from devlint.engine.project.gates import _names_other_platform
        from devlint.evidence import cuda_only_module

        top = modname.split(".")[0]
        if self.fact(path, "platforms", lambda: _names_other_platform(
                (self.text(path) or "").encode("utf-8", "surrogateescape"))):
            return None  # it has paths for other platforms: its CUDA calls are one of them
        cuda = {}  # module -> why it is CUDA-only
        parts = {}  # module -> (why, the name of its one CUDA-only function or class)
        for mod in self.fact(path, "top", lambda: self._top_project_imports(path, modname)) \
                + self.fact(path, "doubled", lambda: self._double_fallbacks(path, modname)):
            target = self.resolve(root, mod)
            why = target and self.cuda_only(target, mod, root, depth)
            if why:
                cuda[mod] = (why, target)
            elif target in self.scoped:
                parts[mod] = (self.scoped[target][0], target, self.scoped[target][1][0])
        if not cuda and not parts:
            return None
        sibling = self._sibling_on_import(path, modname, cuda)
        if sibling is not None:
            return sibling
        if vocabulary.is_test_path(os.path.abspath(path).replace(os.sep, "/").split("/")) \
                or cuda_only_module._vendor_family_reason(path) or self.fact(
                path, "alike", lambda: bool(cuda_only_module._cuda_only_reason(
                    path, self.tree(path) or _EMPTY, alike=True))):
            return None  # ROCm code keeps its findings; a test module's imports gate tests
        # One weak signal never makes a whole file CUDA-only. The whole module is when the
        # calls stand in its body or in two module-level functions or classes (as a CUDA
        # runtime use must, `cuda_only_module`), or when a callee is CUDA-only on import
        # (`_on_import`: vLLM's 3FS connector builds the CUDA-built `Hf3fsClient`). Else
        # only the calling function or class is (`scoped`: a generic model entering
        # `use_symmetric_memory()`, a no-op off CUDA, keeps its other findings), and a module
        # CUDA-only in one scope passes that on through that scope's name alone (`parts`:
        # `DmaBackend`, the class of `copy_backend` that calls `cuda_mem_ops`).
        first, scopes, bound = None, [], False
        for local, mod, scope in self.fact(path, "scoped-calls",
                                           lambda: self._calls(path, modname, top)):
            if mod in cuda or mod in parts and parts[mod][2] == local:
                first = first or (local, mod)
                bound = bound or mod in cuda and _on_import(cuda[mod][0])
                if scope not in scopes:
                    scopes.append(scope)
        if first is None:
            return None
        local, mod = first
        why, target = cuda[mod] if mod in cuda else parts[mod][:2]
        reason = Reason("cuda-only-module", f"it calls `{local}` from `{mod}`, which is "
                        f"CUDA-only ({why})", target)
        if not bound and None not in scopes and len(scopes) < 2:
            # one more function or class of the module that imports a CUDA-only stack itself
            # (`def trtllm_maps(): from flashinfer.fused_moe import ...`) makes two
            other = next((w for name, w in self.fact(path, "stack-scopes", lambda: (
                self._stack_scopes(path))) if name != scopes[0][0]), None)
            if other is None:
                self.scoped[path] = (reason, scopes[0])
                return None
            reason = Reason("cuda-only-module", f"{reason}, and {other}", target)
        return reason

    @staticmethod
    def _sibling_on_import(path: str, modname: str, cuda: dict):
        """A module of the same package that it imports at the top and that is CUDA-only on
        import (`_on_import`: it imports a CUDA-only stack, or one such sibling, at the top):
        the package is a subsystem built on that stack, and this module cannot be imported
        without it either (`dwdp/weight_manager.py` imports `dwdp/weight_buffer.py`, which
        imports `dwdp/page_pool.py`, which imports `cuda.bindings`). Not across packages: a
        generic module importing a CUDA-only subsystem keeps its own findings."""
        package = modname if os.path.basename(path) == "__init__.py" \
            else modname.rpartition(".")[0]
        for mod, (why, target) in cuda.items():
            if mod.rpartition(".")[0] == package and _on_import(why):
                return Reason("cuda-only-module", f"imports `{mod}` at the top, a module of its "
                              f"own package that is CUDA-only on import ({why})", target)
        return None

    def _stack_scopes(self, path: str) -> list:
        """[(name, why)] of the module-level functions and classes that import a CUDA-only
        stack in their own body (`cuda_only_scope`'s import reasons)."""
        from devlint.evidence.cuda_only_scope import _scope_reason

        tree, text = self.tree(path), self.text(path)
        if tree is None or text is None:
            return []
        out = []
        for st in tree.body:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                why = _scope_reason(st, ast.get_source_segment(text, st) or "", path)
                if why is not None and (f"`{st.name}` imports `" in str(why)
                                        or f"`{st.name}` is built on `" in str(why)):
                    out.append([st.name, str(why)])
        return out

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
        from devlint.engine.project.walker import (
            _aliases, _unconditional_calls, _with_double_fallback)

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
        return [[name, imported[name], scope] for name, scope in _unconditional_calls(
            tree, self.text(path), imported, scoped=True)]

    def _double_fallbacks(self, path: str, modname: str) -> list:
        """Project modules imported in a `try:` whose fallback is a test double (their import
        counts as unconditional: the double stands in for them, `hf3fs_mock_client`)."""
        from devlint.engine.project.walker import _DOUBLE_IMPORT, _with_double_fallback

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
        from devlint.engine.project.walker import _DOUBLE

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
                            return Reason(TEST_DOUBLE, f"it stands in for `{real}` (imported "
                                          f"in its place by `{os.path.relpath(importer, root)}`"
                                          f"), which is CUDA-only ({why})", importer,
                                          stmt.lineno)
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
        sites = []  # (where, by_test, (path, row) of the evidence)
        index = self.importers(root, modname.split(".")[0])
        if through_a_parent(self, index, modname, path, name):
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
        sites.extend((f"{os.path.relpath(path, root)}:{row}", how == "test", (path, row))
                     for row, how in rows)
        for holder in holders:
            found = self._on_cuda_only(path, modname, root, holder, memo, seen + (name,))
            if not found:
                memo[name] = None
                return None
            sites.append((f"`{holder}`, which {found[0]}", found[1],
                          (found[0].path, found[0].line)))
        memo[name] = None if not sites else (
            Reason(ONLY_CALLED_ON_CUDA, f"every use runs on CUDA only ({sites[0][0]})",
                   *sites[0][2]), any(s[1] for s in sites))
        return memo[name]

    def _own_uses(self, path: str, name: str):
        """([(row, how)] uses of `name` on CUDA, [module-level functions holding the others
        (None: module-level code)]) in its own module, its own body aside."""
        from devlint.engine.project.walker import _CudaWalker

        text = self.text(path)
        if text is not None and (text.count(name) <= 1 or len(re.findall(
                r"\b%s\b" % re.escape(name), text)) <= 1):
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
            return [(f"{rel} ({why})", False, (path, None))]
        rows = self.fact(path, "uses:" + ",".join(locals_),
                         lambda: self._guarded_rows(path, locals_))
        return None if rows is None else [(f"{rel}:{row} ({how})" if how != "test"
                                           else f"{rel}:{row}", how == "test", (path, row))
                                          for row, how in rows]

    def _guarded_rows(self, path: str, locals_):
        from devlint.engine.project.walker import _CUDA_CONTEXT, _CudaWalker

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
