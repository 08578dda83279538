"""The engine's fast paths give the answers of the slow code they replace (docs/performance.md).

Each shortcut is checked against its reference on the package's own sources, the fixtures and
hand-written edge cases: the statement walk against `ast.walk`, the local parent lookup
against a map of the whole tree, the substring scans against the case-insensitive regexes,
the line starts against the newline regex, and the comments found by tokenizing only the
top-level statements that hold a suppression word against tokenizing the whole file.
"""
from __future__ import annotations

import ast
import random
from pathlib import Path

from devlint.analysis.model import FileFacts
from devlint.analysis.prefilter import TRIGGER_TOKEN
from devlint.analysis.rows import _token_rows, _trigger_rows
from devlint.analysis.walk import STATEMENT_LIKE, statements
from devlint.engine.suppression import _RELEVANT, _has_relevant, comments
from devlint.source import _NEWLINE, Locator

ROOT = Path(__file__).resolve().parent.parent

EDGE_CASES = [
    '"""doc # noqa"""\nx = 1  # noqa\n',
    'x = """\n# noqa: DL101\n"""  # noqa\ny = 2\n',
    's = f"""{1}\n# devlint: ignore\n"""  # devlint: ignore[DL101]\n',
    '@dec  # noqa\ndef f():\n    """x"""\n    return 1  # NOQA\n# trailing # noqa\n',
    "x = 1 + \\\n    2  # noqa\n'''a'''\n",
    "if x:\n    pass\n# noqa\n  # noqa: DL1\n'''\n# noqa\n'''\n",
    "x = 1; y = '''\n'''  # noqa\nz = 3\n",
    "class A:\n    '''d'''\n    def f(self):  # noqa\n        return '# noqa'\n",
    "a = 1\r\nb = '''\r\n# noqa\r\n'''  # noqa\r\n",
    "a = 1\rb = '''\r# noqa\r'''  # noqa\r",
    "match x:\n    case 1:  # noqa\n        '''s'''\n    case _:\n        pass\n",
    "try:\n    pass\nexcept E:  # noqa\n    '''x'''\nfinally:\n    pass\n",
    "x = [\n    1,  # noqa\n]\n'''a'''\n",
    "def f(\n    a,  # noqa: DL103\n):\n    '''d'''\n",
]


def _sources():
    paths = sorted((ROOT / "devlint").rglob("*.py")) + sorted((ROOT / "fixtures").rglob("*.py"))
    out = []
    for p in paths:
        try:
            text = p.read_text(encoding="utf-8")
            ast.parse(text)
        except (UnicodeDecodeError, SyntaxError, ValueError):
            continue
        out.append(text)
    return out + EDGE_CASES


SOURCES = _sources()


def test_there_are_sources():
    assert len(SOURCES) > 50


def test_statements_is_ast_walk_filtered():
    for text in SOURCES:
        tree = ast.parse(text)
        assert statements(tree) == [tree] + [n for n in ast.walk(tree)
                                             if isinstance(n, STATEMENT_LIKE)]


def test_tree_parent_is_the_whole_tree_map():
    for text in SOURCES[::4] + EDGE_CASES:
        tree = ast.parse(text)
        full = {id(c): n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
        facts = FileFacts("x.py", text, "torch", None, None, tree, {})
        nodes = list(ast.walk(tree))
        for node in nodes[::3]:  # nodes with a line first: answered without the whole map
            if hasattr(node, "lineno"):
                assert facts.tree_parent(node) is full.get(id(node))
        assert facts.tree_parent(tree) is None  # the module: none, and no map built for it
        assert "tree_parents" not in facts._scope_memo
        for node in nodes[1::7]:
            assert facts.tree_parent(node) is full.get(id(node))


def _random_texts(parts, n, seed):
    rng = random.Random(seed)
    return ["".join(rng.choice(parts) for _ in range(rng.randint(0, 12))) for _ in range(n)]


_PARTS = ["#", " ", "\n", "\r\n", "\r", "noqa", "NoQA", "nOqA", ":", "DL1", "dl2", "DLx", "x",
          "\t", "\x1c", "devlint:", "DEVLINT:", "devl", "nt:", "CUDA", "cu", "da", "NCCL", "gloo",
          "é", "\u0130", "\u0131", "\f", "\u212a", "\u017f", "\u2028", "\u00a0"]


def test_substring_scans_match_the_regexes():
    for text in SOURCES + _random_texts(_PARTS, 20000, 17):
        assert _has_relevant(text) == (_RELEVANT.search(text) is not None), text
        starts = Locator(text)._starts
        assert _trigger_rows(text, starts) == set(_token_rows(TRIGGER_TOKEN, text, starts)), text


def test_line_starts_match_the_newline_regex():
    parts = ["a", "\n", "\r", "\r\n", "é", "\x0c", "\u2028", "", "\x0b"]
    for text in SOURCES + _random_texts(parts, 20000, 5):
        assert Locator(text)._starts == [0, *[m.end() for m in _NEWLINE.finditer(text)]]


def test_comments_by_statement_match_the_whole_file():
    for text in SOURCES:
        tree = ast.parse(text)
        assert comments(text, tree) == comments(text)
    # the edge cases do find comments (the comparison is not between two empty lists)
    assert all(comments(text, ast.parse(text)) for text in EDGE_CASES)


KERNEL_CASES = [
    'load_inline(name="k", cpp_sources=[s], cuda_sources=[src])\n',
    'def f():\n    return load(name="k", sources=["a.cpp", "k.cu"])\n',
    'def g():\n    x = [1]\n    return jit(cuda_files=[p], flags=["-O3"])\n',
    'def h():\n    return build(f"{root}/norm.cuh")\n',
    'class K:\n    def m(self):\n        return load(sources=["kern.cu  "])\n',
    'def d():\n    """see kernel.cu"""\n    return 1\n',
    'def n():\n    return load(sources=["a .cu"])\n',
    'class M(Base, cuda_srcs=1):\n    pass\n',
]


def test_kernel_build_gate_never_hides_a_build():
    """`cuda_kernel_source._may_build` (one walk of a statement) holds wherever the search it
    spares (`build_call` on every node of the statement) finds a build: the results of
    `module_reason` and `builders` are those of the search without the gate."""
    from devlint.evidence import cuda_kernel_source as k

    for text in SOURCES + KERNEL_CASES:
        tree = ast.parse(text)
        for st in tree.body:
            if any(k.build_call(n) is not None for n in ast.walk(st)):
                assert k._may_build(st), text
    tree = ast.parse("".join(KERNEL_CASES))
    assert {st.name for st in tree.body if isinstance(st, ast.FunctionDef)
            and k._may_build(st)} == {"f", "g", "h", "d", "n"}
    assert set(k.builders(tree, "".join(KERNEL_CASES))) == {"f", "g", "h"}
    assert k.module_reason(tree, "".join(KERNEL_CASES), "m.py") is not None


def test_memoized_realpath_is_realpath(tmp_path, monkeypatch):
    """`discovery._realpath` (the directory's real path memoized) gives `os.path.realpath`
    for files, links to files and to folders, broken links, loops, relative paths."""
    import os

    from devlint.discovery import _realpath

    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "a.py").write_text("x = 1\n")
    (tmp_path / "pkg" / "sub" / "b.py").write_text("y = 2\n")
    os.symlink(tmp_path / "pkg" / "a.py", tmp_path / "pkg" / "sub" / "link.py")
    os.symlink(tmp_path / "pkg" / "sub", tmp_path / "pkg" / "alias")
    os.symlink("sub/../a.py", tmp_path / "pkg" / "rel.py")
    os.symlink(tmp_path / "nowhere.py", tmp_path / "pkg" / "broken.py")
    os.symlink(tmp_path / "pkg" / "loop2.py", tmp_path / "pkg" / "loop1.py")
    os.symlink(tmp_path / "pkg" / "loop1.py", tmp_path / "pkg" / "loop2.py")
    monkeypatch.chdir(tmp_path / "pkg")
    paths = []
    for dirpath, _dirs, files in os.walk(tmp_path, followlinks=True):
        paths += [os.path.join(dirpath, f) for f in files]
    paths += [os.path.relpath(p) for p in paths] + ["a.py", "./a.py", "alias/../a.py",
                                                    "alias/b.py", "missing/x.py", ""]
    dirs: dict = {}
    for p in paths * 2:
        assert _realpath(p, dirs) == os.path.realpath(p), p


def test_kernel_source_gate_stays_a_plain_scan_on_runs_of_quotes():
    # A gate built from nested regex repetitions (a suffix spelled across implicitly
    # concatenated strings) backtracked exponentially on a dot followed by runs of quotes,
    # and a check of Megatron-LM never finished; the gate is a substring scan again.
    from devlint.evidence.cuda_kernel_source import mentions

    assert mentions("x = 1.\n" + "'''" * 200 + "\n") is False
    assert mentions("x = 1.cu" + "'''" * 200 + "\n") is True
    assert mentions('load(name="k", sources=["k' + '.cu"])') is True


KERNEL_SPELLINGS = [
    'load(name="k", sources=["k.cu"])', "load('k', ['a.cuh' ])", 'load("k", [r"a.cu"])',
    'load("k", ["a.cu\\t"])', 'load("k", ["a.cu" ""])', 'load("k", [f"{d}/a.cu"])',
    'load("k", ["a.cu\\\nh"])', 'load("k", [\'\'\'a.cuh\'\'\'])', "load(cuda_sources=[s])",
    'x = t.cuda()\nload("k", sources=[p + ".cu"])', 'load("k", [f"a.cu{\'\'}"])',
]


def test_kernel_source_gate_holds_wherever_a_build_is_found():
    """`mentions` is true of every source in which `build_call` finds a build: the sources
    and fixtures of the package, spellings of the suffix (raw, escaped whitespace after it,
    implicit concatenation, an f-string, a continued line, triple quotes), and it is false of
    `.cuda` alone (nearly every file it is asked about)."""
    from devlint.evidence.cuda_kernel_source import build_call, mentions

    def builds(text):
        return any(build_call(n) is not None for n in ast.walk(ast.parse(text)))

    assert all(builds(text) for text in KERNEL_SPELLINGS)
    for text in SOURCES + KERNEL_SPELLINGS:
        if builds(text):
            assert mentions(text), text
    assert not mentions("x = t.cuda()\ny = torch.cuda.is_available()\nz = '.cuda_'\n")


def _select_by_scan(diags, unsafe):
    """The fix loop's edit selection as it was: every new edit tested against every edit
    taken (quadratic: a 50k-line generated file has tens of thousands)."""
    from devlint.engine.fixer import _overlaps, applicable

    groups, taken, seen = [], [], set()
    for d in sorted((d for d in diags if applicable(d, unsafe)), key=lambda d: d.start):
        new = [e for e in d.fix.edits if e not in seen]
        if any(_overlaps(e, taken) for e in new):
            continue
        groups.append((d, new))
        for e in new:
            seen.add(e)
            taken.append((e.start, e.end))
    return groups


def test_select_bisects_like_the_scan():
    """`fixer._select` looks only at the taken edits that can touch a new one: the same groups
    as testing each against all of them, on random edits (overlaps, insertions at one point,
    a diagnostic whose own edits overlap, which turns the bisection off)."""
    from devlint.diagnostics import Applicability, Diagnostic, Edit, Fix
    from devlint.engine.fixer import _select

    rnd = random.Random(20261201)
    for _ in range(5000):
        size, diags = rnd.randint(3, 30), []
        for _ in range(rnd.randint(1, 12)):
            edits = []
            for _ in range(rnd.choice((1, 1, 1, 2, 3))):
                a = rnd.randint(0, size)
                b = a if rnd.random() < 0.35 else rnd.randint(a, size)
                edits.append(Edit(a, b, rnd.choice("xy")))
            at = rnd.randint(0, size)
            kind = rnd.choice((Applicability.SAFE, Applicability.UNSAFE))
            diags.append(Diagnostic("DL101", "n", "m", "p.py", at, at,
                                    Fix(kind, "m", tuple(edits))))
        unsafe = rnd.random() < 0.5
        assert _select(diags, unsafe) == _select_by_scan(diags, unsafe)


def test_changed_spans_hold_every_change():
    """`fixer.changed_spans`, carried over rounds of edits: outside the spans, the fixed text
    is pieces of the input, in order (input characters all distinct, edits write others)."""
    from devlint.diagnostics import Edit
    from devlint.engine.fixer import apply_edits, changed_spans

    rnd = random.Random(20261202)
    for _ in range(3000):
        orig = "".join(chr(0x4E00 + i) for i in range(rnd.randint(0, 40)))
        text, spans = orig, []
        for _ in range(rnd.randint(1, 4)):
            points = sorted(rnd.randint(0, len(text)) for _ in range(2 * rnd.randint(0, 4)))
            edits = []
            for a, b in zip(points[::2], points[1::2]):
                if edits and edits[-1].end == a and (a == b or edits[-1].start == a):
                    continue  # two insertions at one point: the loop never takes both
                edits.append(Edit(a, b, rnd.choice(("", "a", "bb", "ccc"))))
            text, spans = apply_edits(text, edits), changed_spans(edits, spans)
        pos, at = 0, 0
        for a, b in sorted(spans) + [(len(text), len(text))]:
            assert 0 <= a <= b <= len(text)
            if a > pos:
                piece = text[pos:a]
                found = orig.find(piece, at)
                assert found >= 0 and "a" not in piece and "b" not in piece and "c" not in piece
                at = found + len(piece)
            pos = max(pos, b)


def test_changed_statements_are_the_statements_touched():
    """What LibCST reads of a fixed file: the top-level statements holding a change (with the
    lines up to the next one, decorators with their `def`, `a; b` as one), which parse alone
    wherever the whole file does; a statement that breaks is in it."""
    import libcst

    from devlint.analysis.walk import top_rows
    from devlint.engine.concrete import changed_statements

    text = ("#!/usr/bin/env python\n'''doc'''\nimport os; import sys\n\n@dec(\n    1)\n"
            "def f():\n    return 1\n# c\n\nclass A:\n    x = 1\nz = 2\n")
    rows = top_rows(ast.parse(text))
    at = text.index
    assert changed_statements(text, rows, [(at("sys"), at("sys") + 3)]) == \
        "import os; import sys\n\n"
    assert changed_statements(text, rows, [(at("1)"), at("1)") + 1)]) == \
        "@dec(\n    1)\ndef f():\n    return 1\n# c\n\n"
    assert changed_statements(text, rows, [(at("z ="), at("z ="))]) == \
        "class A:\n    x = 1\nz = 2\n"
    assert changed_statements(text, rows, [(0, 1), (len(text), len(text))]) == \
        "#!/usr/bin/env python\nz = 2\n"
    assert changed_statements(text, rows, []) == ""
    rnd = random.Random(20261203)
    for source in SOURCES[::3]:
        rows = top_rows(ast.parse(source))
        spans = [(p, p + rnd.randint(0, 3)) for p in
                 sorted(rnd.randint(0, len(source)) for _ in range(rnd.randint(1, 4)))]
        spans = [(a, min(b, len(source))) for a, b in spans]
        region = changed_statements(source, rows, spans)
        ast.parse(region)
        libcst.parse_module(region)
        for a, b in spans:
            assert source[a:b] in region


def test_libcst_reads_the_changed_statements_and_a_break_there_reverts(monkeypatch):
    """The runner gives LibCST the statements a fix changed, not the whole file; when LibCST
    rejects them and accepted the input, every fix is reverted (DL000), as with the file."""
    from devlint.engine import concrete
    from devlint.engine.runner import process_source
    from devlint.settings import Settings

    source = ("import torch\n\n\ndef clean():\n    return 1\n\n\n"
              "def f():\n    torch.cuda.synchronize()\n")
    asked = []

    def picky(text):
        asked.append(text)
        return "LibCST: no" if "accelerator" in text else None

    monkeypatch.setattr(concrete, "libcst_parses", picky)
    res = process_source("m.py", "python", source.encode(), Settings(), "fix", False)
    fixed_f = ("def f():\n    if torch.accelerator.is_available():\n"
               "        torch.accelerator.synchronize()\n")
    assert asked[0] == fixed_f
    assert asked[1] == source
    assert not res.changed and res.failures and res.failures[-1][0] == "DL000"
    asked.clear()
    monkeypatch.setattr(concrete, "libcst_parses", lambda text: asked.append(text))
    res = process_source("m.py", "python", source.encode(), Settings(), "fix", False)
    assert res.changed and asked == [fixed_f]


_MENTION_PARTS = ["is_cuda", "is_cud", "a", "_", "x", " ", "\n", "'", '"', ":", "cuda", "CUDA",
                  ".", "is_available", "inline_asm", "capabilit", "SM", "sm", "s", "m", "_at_",
                  "least", "9", "90", "0", "Hopper", "BLACKWELL", "mi", "MI", "3", "300",
                  "gfx", "GFX", ".cu", ".cuh", "cuda_sources", "cuda_srcs", "é", "\u0130",
                  "\u0131", "\u017f", "\u212a", "\u00b5", "\u0660", "\u00e5", "\u212b", "ß"]


def test_mentions_one_by_one_is_the_alternation():
    from devlint.evidence.calls_cuda_only import _MENTIONS, mentions

    texts = SOURCES + _random_texts(_MENTION_PARTS, 30000, 23) + [
        "x\u017fm9", "\u0131\u212a", "gf\u212a1", "m\u0130123", "xMI300", "ami300", "_mi300",
        "\u00e9mi300", "\u0660mi300", "mi\u0663\u0660\u0660", "'cuda'", "cuda:'", "is_cudax",
        "is_cuda.", "SM_AT_LEAST", "bLaCkWeLl", "\u017fm_at_lea\u017ft", "x.cuh'"]
    for text in texts:
        assert mentions(text) == (_MENTIONS.search(text) is not None), repr(text)


FLOW_CASES = [
    "def f(xs):\n    s = [x for x in xs]\n    if (n := len(s)) > 1:\n        t = {k: v\n             for k, v in s}\n    return s\n",
    "class A:\n    y = [i for i in\n         range(3)]\n    def f(self):\n        with g() as (self.a, b):\n            self.b = (c := 2)\n",
    "def f():\n    x = 1\r\n    y = [z for z in x]\r\n    return y\r\n",
    "def f():\n    global g\n    def h():\n        nonlocal x\n        class C:\n            def m(self):\n                global k\n",
    "try:\n    a = [b async for b in c]\nexcept E:\n    def f():\n        global q\nelse:\n    d = 1\n",
]


def _flow_of(text):
    from devlint.analysis.descent import Descent
    from devlint.analysis.model import collect_imports
    from devlint.settings import Settings

    tree = ast.parse(text)
    aliases: dict = {}
    collect_imports(tree.body, aliases)
    return tree, Descent(FileFacts("x.py", text, "torch", Settings(), None, tree, aliases), [])


def _own_nodes_reference(fn):
    stack = list(fn.body)
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                 ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))


def test_flow_walks_match_the_whole_walks():
    """`ValueFlow`'s statement-list walks and its row-gated store search against the full
    walks they replace: the functions' own def and global nodes in `ast.walk` order, the own
    statements of each function, and each body's store nodes."""
    from devlint.analysis.flow import _STORE_NODES

    funcs = (ast.FunctionDef, ast.AsyncFunctionDef)
    for text in SOURCES[::3] + FLOW_CASES:
        tree, flow = _flow_of(text)
        fns = [n for n in ast.walk(tree) if isinstance(n, funcs)]
        assert [fn for fn, _ in flow._own_functions()[1]] == fns
        for fn, own in flow._own_functions()[1]:
            mine = {id(n) for n in _own_nodes_reference(fn)}
            assert own == [n for n in ast.walk(fn) if id(n) in mine
                           and isinstance(n, (*funcs, ast.Global))]
            assert {id(n) for n in flow._own_statements(fn)} == {
                id(n) for n in _own_nodes_reference(fn) if isinstance(n, STATEMENT_LIKE)}
        bodies = [tree.body] + [n.body for n in ast.walk(tree)
                                if isinstance(n, (*funcs, ast.ClassDef))]
        for body in bodies:
            got = [n for n, _, _ in flow._store_nodes(body)]
            want = [n for root, _, _ in flow._stores(body) for n in ast.walk(root)
                    if isinstance(n, _STORE_NODES)]
            assert got == want


def test_libcst_reads_a_long_statement_by_its_changed_pieces(monkeypatch):
    """Of a top-level statement longer than PIECES_ABOVE (a generated table), LibCST reads the
    expressions holding the changes, not the statement; a piece it rejects reverts every fix
    (DL000), as the statement would; a change outside every piece keeps the whole statement."""
    from devlint.analysis.walk import top_rows
    from devlint.engine import concrete
    from devlint.engine.runner import process_source
    from devlint.settings import Settings

    rows_text = "".join(f"    dict(name='op{i}', size={i}, tags=('a', 'b', 'c')),\n"
                        for i in range(3000))
    table = "TABLE = [\n" + rows_text + "    dict(run=lambda x: x.to('cuda')),\n]\n"
    assert len(table) > concrete.PIECES_ABOVE
    source = "import torch\n\n" + table + "\n\ndef f(x):\n    return x\n"
    asked, pieces = [], []
    monkeypatch.setattr(concrete, "libcst_parses", lambda text: asked.append(text))
    monkeypatch.setattr(concrete, "libcst_expression_parses", lambda p: pieces.append(p))
    res = process_source("m.py", "python", source.encode(), Settings(), "fix", False)
    assert res.changed and asked == [] and len(pieces) == 1
    assert pieces[0].startswith("dict(run=lambda x: x.to(") and pieces[0].endswith("))")
    fixed = res.new_bytes.decode()
    assert pieces[0] in fixed and "'cuda'" not in fixed

    def rejects(piece):
        pieces.append(piece)
        return "LibCST: no"

    pieces.clear()
    monkeypatch.setattr(concrete, "libcst_expression_parses", rejects)
    monkeypatch.setattr(concrete, "libcst_parses", lambda text: None)
    res = process_source("m.py", "python", source.encode(), Settings(), "fix", False)
    assert pieces and not res.changed and res.failures[-1][0] == "DL000"

    # the pieces themselves, and a change that no piece holds (the list's own brackets)
    tree = ast.parse(source)
    spans = concrete.statement_pieces(source, tree)
    assert spans == sorted(spans) and all(b - a <= concrete.PIECE_CHARS for a, b in spans)
    rows = top_rows(tree)
    at = source.index("op7")
    region, read = concrete.changed_pieces(source, rows, [(at, at + 3)], spans)
    assert region == "" and read == ["dict(name='op7', size=7, tags=('a', 'b', 'c'))"]
    at = source.index("[\n")
    region, read = concrete.changed_pieces(source, rows, [(at, at + 1)], spans)
    assert read == [] and region.startswith("TABLE = [")
    ast.parse(region)
    monkeypatch.undo()
    assert concrete.libcst_expression_parses("dict(\n  a=1,  # note\n)") is None
    assert concrete.libcst_expression_parses("dict(a=") is not None


def test_a_subscripts_tuple_with_a_slice_is_no_piece():
    """`(0:1, i)` does not parse alone: a long statement's fix inside `a[0:1, i]` is read from
    an expression around it, not reverted as unparsable (found in review)."""
    from devlint.engine.runner import process_source
    from devlint.settings import Settings

    values = ", ".join(str(i % 10) for i in range(40_000))
    source = ("import torch\n\nx = torch.tensor([" + values + "])[0:1, torch.zeros(1, "
              "device=\"cuda\")]\n")
    res = process_source("m.py", "python", source.encode(), Settings(), "fix", True)
    assert res.changed and not res.failures
    fixed = res.new_bytes.decode()
    assert '"cuda"' not in fixed and fixed.endswith(")]\n")
    ast.parse(fixed)


# `value_use._own` as it was: a stack of `ast.iter_child_nodes`, nested scopes not entered
_own_generator_reference = _own_nodes_reference


def test_value_use_own_nodes_are_the_generators():
    """`value_use._own`'s loop over `_child_fields` holds the nodes the generator walk
    yielded, each once, but the context and operator singletons (which its readers never
    look at: they build sets and ask whether any node qualifies)."""
    from devlint.analysis.value_use import _own

    singletons = (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)
    funcs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
    for text in SOURCES + FLOW_CASES:
        for fn in ast.walk(ast.parse(text)):
            if isinstance(fn, funcs) and not isinstance(fn, ast.Lambda):
                got = [id(n) for n in _own(fn) if not isinstance(n, singletons)]
                want = [id(n) for n in _own_generator_reference(fn)
                        if not isinstance(n, singletons)]
                assert sorted(got) == sorted(want) and len(set(got)) == len(got)


def test_rows_naming_gate_is_the_search():
    """`rows_naming` leaves out the names that are not substrings of the text (and searches
    nothing where none is left): the rows are those of the whole alternation."""
    import re

    from devlint.engine.project.package import rows_naming

    def reference(text, names):
        pat = re.compile(r"\b(?:%s)\b" % "|".join(map(re.escape, names)))
        return sorted({text.count("\n", 0, m.start()) + 1 for m in pat.finditer(text)})

    rng = random.Random(17)
    words = ["f", "f_x", "g", "x", "_f", "fg", "gf", "é", "\n", " ", ".", "(", "_", "\u0301",
             "1", "\u00b7"]
    for text in SOURCES[::5]:
        names = sorted({w for w in re.findall(r"[A-Za-z_]\w*", text)[:40:7]}) or ["x"]
        assert rows_naming(text, names) == reference(text, names)
        assert rows_naming(text, ["no_such_name_here"]) == []
    for _ in range(20000):
        text = "".join(rng.choice(words) for _ in range(rng.randrange(0, 30)))
        names = rng.sample(["f", "f_x", "g", "fg", "_f", "é", "gf", "f.x", "x\u0301"],
                           rng.randrange(1, 4))
        assert rows_naming(text, names) == reference(text, names)


def test_children_and_nodes_are_the_ast_walks():
    """`walk.children` / `walk.nodes` give `ast.iter_child_nodes` / `ast.walk`'s nodes in
    their order, the load/store/del context singletons aside."""
    from devlint.analysis.walk import children, nodes

    for text in SOURCES + FLOW_CASES:
        tree = ast.parse(text)
        want = [n for n in ast.walk(tree) if not isinstance(n, ast.expr_context)]
        assert nodes(tree) == want
        for n in want:
            assert children(n) == [c for c in ast.iter_child_nodes(n)
                                   if not isinstance(c, ast.expr_context)]
