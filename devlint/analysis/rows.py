"""Rows of a file the triage looks at: the leading docstring/`__future__`/import block (where
a fix adds an import) and the rows holding a trigger token (the only statements the descent
enters)."""
from __future__ import annotations

import ast
import bisect
import re

from devlint.analysis.model import FileFacts
from devlint.analysis.prefilter import TRIGGER_TOKEN


def leading_rows(facts: FileFacts) -> None:
    body = facts.tree.body
    i = 0
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        facts.docstring_end_row = body[0].end_lineno
        i = 1
    last_import = 0
    for stmt in body[i:]:
        if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
            facts.future_end_row = stmt.end_lineno
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            last_import = stmt.end_lineno
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            break
    facts.import_end_row = last_import


def hot_rows(facts: FileFacts) -> list[int]:
    """Rows holding a trigger token, or a name imported from torch.cuda under another name."""
    text = facts.text
    starts = facts.locator._starts
    rows = _trigger_rows(text, starts)
    extra = [name for name, qual in facts.aliases.items()
             if qual.startswith("torch.cuda") and "cuda" not in name.lower()]
    extra += _nested_cuda_imports(text)
    if extra:
        pat = re.compile(r"\b(?:%s)\b" % "|".join(map(re.escape, extra)))
        rows.update(_token_rows(pat, text, starts))
    return sorted(rows)


_NESTED_CUDA_IMPORT = re.compile(r"^[ \t]+from[ \t]+torch\.cuda[\w.]*[ \t]+import[ \t]+([^\n#(]+)",
                                 re.M)


def _nested_cuda_imports(text: str) -> list:
    """Names a function imports from torch.cuda (`from torch.cuda.amp import autocast` inside
    a method): their uses are hot rows too."""
    if "from torch.cuda" not in text:
        return []
    out = []
    for m in _NESTED_CUDA_IMPORT.finditer(text):
        for part in m.group(1).split(","):
            name = part.split(" as ")[-1].strip()
            if name.isidentifier() and "cuda" not in name.lower():
                out.append(name)
    return out


# TRIGGER_TOKEN's alternatives (it ignores case): a substring search of the lowered text finds
# the same rows, ~10x faster than the case-insensitive regex. No character outside ASCII
# matches one of their letters under re.IGNORECASE or lowers to one, and the only character
# whose lower() is longer is U+0130: with it absent, offsets in the lowered text are the text's.
_TOKENS = ("cuda", "nccl", "hccl", "xccl", "gloo")


def _trigger_rows(text: str, starts: list) -> set:
    """set(_token_rows(TRIGGER_TOKEN, text, starts))."""
    low = text.lower()
    if len(low) != len(text):
        return set(_token_rows(TRIGGER_TOKEN, text, starts))
    end = len(low)
    rows = set()
    for needle in _TOKENS:
        i = low.find(needle)
        while i != -1:
            row = bisect.bisect_right(starts, i)
            rows.add(row)
            i = low.find(needle, starts[row] if row < len(starts) else end)
    return rows


def _token_rows(pattern, text: str, starts: list):
    """1-based rows holding a match: one search per such row, skipping to the next line."""
    search = pattern.search
    end = len(text)
    pos = 0
    while True:
        m = search(text, pos)
        if m is None:
            return
        row = bisect.bisect_right(starts, m.start())
        yield row
        pos = starts[row] if row < len(starts) else end



