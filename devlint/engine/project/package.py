"""The package around a file: its dotted module name, its imports (read from the text, at
any depth, relative ones resolved), and the statements at given rows."""
from __future__ import annotations

import ast
import bisect
import os
import re
from functools import lru_cache


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
    """(directory above the top package, dotted name) of a package directory, or None.
    A folder without `__init__.py` inside a regular package is a namespace portion of it
    (PEP 420: `sglang/srt/` under `sglang/__init__.py` imports as `sglang.srt`), so the
    package goes on above it; a folder with no regular package above it is no package."""
    parent, name = os.path.split(d)
    if not os.path.isfile(os.path.join(d, "__init__.py")):
        if parent == d or not name.isidentifier():
            return None
        above = _package_dir(parent)
        return (above[0], f"{above[1]}.{name}") if above else None
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


_WORD = re.compile(r"\w")
_WORDS = re.compile(r"\w+")


def rows_naming(text: str, names) -> list:
    """Sorted 1-based rows on which one of `names` occurs as a word. A name that is not a
    substring of the text matches nowhere: it is left out of the search, and where none is
    left the text is not searched (most files of a package name none of a walk's names)."""
    names = [n for n in names if n in text]
    if not names:
        return []
    left = all(_WORDS.fullmatch(n) for n in names)
    # names of word characters only: the search starts at a literal (which the regex engine
    # scans for) and the boundary before a match is tested after it; a match without one is
    # dropped, as `\b` would drop it, and every character inside it is a word character, so
    # no match of `\b(?:...)` could start there either
    pat = re.compile((r"(?:%s)\b" if left else r"\b(?:%s)\b") % "|".join(map(re.escape, names)))
    rows = []
    line = 1
    pos = 0
    for m in pat.finditer(text):
        if left and m.start() and _WORD.match(text, m.start() - 1):
            continue
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


def through_a_parent(project, index: dict, modname: str, path: str, name: str | None = None,
                     named: bool = False, skip=None) -> bool:
    """Whether a file other than `path` may reach the module `modname` through a package above
    it (`from pkg import mod`, then `mod.name(...)`): uses through attributes are not followed,
    so an answer that needs every use is not given (the findings are kept). `index` is
    `Project.importers`' ({module: {path: {(name, local)}}}; ("*", "*") for `import M`),
    `project.text(p)` an importer's text. One walk down the packages above the module (`pkg`,
    `pkg.ops` for `pkg.ops.mod`), each with its child on the way (`ops`, `mod`); what is
    asked differs by what is followed:

    - `name` given, the uses of the module's function `name` (`Project._on_cuda_only`,
      `xcallers`): an importer of a package above that imports the child (`from pkg import
      mod`, `from . import mod`) reaches it, and so does `import pkg` with `child.name` in
      its text. With `named` (`xcallers`' caller walk) an importer of the child counts only
      where its text also names `name`: one that never names it (`from pkg import kernels`
      for other kernels) cannot call it by name; `only-called-on-cuda` counts every one.
    - `name` None, the references to the module itself (`xreach`): an importer whose text
      names the module's leaf, of a package above the module's own parent that imports the
      child or the package (`from pkg import ops`, then `ops.x.mod`), or of its own parent by
      `import parent` only (`from parent import mod` is a reference `xreach` judges as such);
      importers `skip(p)` holds (tests) are left out.

    Texts are searched for the substring first: the word-bounded regex would scan every
    position of the (many) texts that never name it."""
    if skip is None:  # the same question recurs (each finding of a module asks it)
        memo = project.__dict__.setdefault("_through_a_parent", {})
        key = (id(index), modname, path, name, named)
        if key not in memo:
            memo[key] = _through_a_parent(project, index, modname, path, name, named, None)
        return memo[key]
    return _through_a_parent(project, index, modname, path, name, named, skip)


def _through_a_parent(project, index, modname, path, name, named, skip) -> bool:
    parts = modname.split(".")
    word = None  # the word-bounded name (leaf or function) searched for, compiled once
    for i in range(1, len(parts)):
        parent, child = ".".join(parts[:i]), parts[i]
        wanted = ("*",) if i == len(parts) - 1 else (child, "*")
        for p, names in index.get(parent, {}).items():
            if p == path:
                continue
            if name is None:  # the module itself
                if not any(n in wanted for n, _ in names) or skip is not None and skip(p):
                    continue
                leaf, text = parts[-1], project.text(p) or ""
                word = word or re.compile(r"\b%s\b" % re.escape(leaf))
                if leaf in text and word.search(text):
                    return True
                continue
            direct = any(n == child for n, _ in names)
            if direct and not named:
                return True
            if not direct and ("*", "*") not in names:
                continue
            text = project.text(p) or ""
            if direct:
                word = word or re.compile(r"\b%s\b" % re.escape(name))
                if name in text and word.search(text):
                    return True
            elif f"{child}.{name}" in text and re.search(
                    r"\b%s\.%s\b" % (re.escape(child), re.escape(name)), text):
                return True
    return False


def _file_imports(path: str, top: str) -> list:
    """[[module, [[name, local], ...]], ...] of a file's imports of the top-level package
    `top` (relative ones resolved)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return []
    return imports_of(path, data, top)


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
