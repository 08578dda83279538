"""DL404 cuda-manual-seed."""
from __future__ import annotations

import ast

from devlint.diagnostics import Applicability, Edit, Fix
from devlint.rules._api_table import table_findings
from devlint.rules.base import TABLE_API, Invalid, Rule, Valid


class CudaManualSeed(Rule):
    """
    ## What it does
    Flags `torch.cuda.manual_seed(seed)` and `torch.cuda.manual_seed_all(seed)`.

    ## Why is this bad?
    They seed CUDA generators only: on XPU, NPU or MPS the run is silently unseeded and results
    stop being reproducible.

    ## Example
    ```python
    torch.cuda.manual_seed_all(seed)
    ```

    Use instead:
    ```python
    torch.manual_seed(seed)
    ```

    ## Fix
    `torch.manual_seed(seed)` seeds the CPU generator and every device's.

    Where the same block already calls `torch.manual_seed(seed)` with the same argument (a
    seeding helper that seeds every library in turn), the call is removed instead: the
    existing call already seeds every device. Several CUDA seed calls with the same argument
    become one `torch.manual_seed(seed)`: the first is rewritten, the others removed.

    ## Fix safety
    Unsafe: the replacement also reseeds the CPU generator, which changes the CPU random stream
    when the code seeds the CPU differently (or not at all) on purpose. Removing a call next to
    an existing `torch.manual_seed(seed)` with the same argument (only seed calls between
    them) is safe: `torch.manual_seed` seeds every CUDA device already.

    ## Profiles
    Both profiles use `torch.manual_seed`.
    """

    code = "DL404"
    name = "cuda-manual-seed"
    summary = "`torch.cuda.manual_seed` seeds CUDA generators only"
    exempt_by = TABLE_API

    valid = [
        # redundant: `torch.manual_seed` of the same value seeds every device already
        # (evidence.redundant_seed)
        Valid("import random\nimport torch\n\n\ndef seed_all(s):\n    random.seed(s)\n"
              "    torch.manual_seed(s)\n    torch.cuda.manual_seed(s)\n"
              "    torch.cuda.manual_seed_all(s)\n"),
        Valid("import torch\ntorch.manual_seed(0)\n"),
        Valid("import random\nrandom.seed(0)\n"),
    ]
    invalid = [
        # the original is a no-op without CUDA: so is the fix, where no accelerator is available
        Invalid("import torch\ntorch.cuda.manual_seed_all(0)\n",
                "import torch\nif torch.accelerator.is_available():\n    torch.manual_seed(0)\n"),
        Invalid("import torch as th\nth.cuda.manual_seed(1)\n",
                "import torch as th\nif th.accelerator.is_available():\n    th.manual_seed(1)\n"),
        Invalid("import torch\n\n\ndef seed_all(s):\n    torch.cuda.manual_seed(s)\n"
                "    torch.cuda.manual_seed_all(s)\n",
                "import torch\n\n\ndef seed_all(s):\n    if torch.accelerator.is_available():\n"
                "        torch.manual_seed(s)\n", count=2),
    ]

    def check(self, facts):
        diags = list(table_findings(self, facts))
        calls = {}
        for node, _ in facts.torch_refs:
            par = facts.get_parent(node)
            if isinstance(par, ast.Call) and par.func is node:
                calls[facts.span(node)[0]] = par
        first_of = {}  # (block, argument) -> the call that becomes torch.manual_seed
        for d in diags:
            call = calls.get(d.start)
            stmt = facts.get_parent(call) if call is not None else None
            where = _seed_statement(facts, call, stmt)
            if where is None or d.fix is None:
                yield d
                continue
            block, arg = where
            existing = _existing_manual_seed(facts, block, stmt, arg)
            if existing is None and first_of.setdefault((id(block), arg), call) is call:
                yield d  # the first of its kind: rewritten to torch.manual_seed(arg)
                continue
            d.fix = Fix(Applicability.SAFE if existing is not None else d.fix.applicability,
                        "Remove it: `torch.manual_seed(" + arg + ")` "
                        + ("already seeds every device" if existing is not None
                           else "(from the first CUDA seed call here) seeds every device"),
                        (_line_removal(facts, stmt),))
            yield d


_SEED_CALLS = ("seed", "manual_seed", "manual_seed_all", "set_seed")


def _seed_statement(facts, call, stmt):
    """(block, argument source) for a `torch.cuda.manual_seed(x)` statement alone on its
    lines, else None."""
    if call is None or not isinstance(stmt, ast.Expr) or stmt.value is not call \
            or len(call.args) != 1 or call.keywords:
        return None
    s, e = facts.span(stmt)
    line_start = facts.text.rfind("\n", 0, s) + 1
    line_end = facts.text.find("\n", e)
    line_end = len(facts.text) if line_end < 0 else line_end
    if facts.text[line_start:s].strip() or facts.text[e:line_end].strip():
        return None
    parent = facts.tree_parent(stmt)
    for field in ("body", "orelse", "finalbody"):
        block = getattr(parent, field, None)
        if isinstance(block, list) and any(x is stmt for x in block):
            return block, facts.source(call.args[0])
    return None


def _existing_manual_seed(facts, block, stmt, arg):
    """A `torch.manual_seed(arg)` statement of the same block, with only seed calls between
    it and `stmt`."""
    i = next(k for k, x in enumerate(block) if x is stmt)
    for step in (-1, 1):
        k = i + step
        while 0 <= k < len(block):
            other = block[k]
            if not (isinstance(other, ast.Expr) and isinstance(other.value, ast.Call)):
                break
            f = other.value.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if name not in _SEED_CALLS:
                break
            if facts.qualname(f) == "torch.manual_seed" and len(other.value.args) == 1 \
                    and facts.source(other.value.args[0]) == arg:
                return other
            k += step
    return None


def _line_removal(facts, stmt) -> Edit:
    s, e = facts.span(stmt)
    start = facts.text.rfind("\n", 0, s) + 1
    end = facts.text.find("\n", e)
    end = len(facts.text) if end < 0 else end + 1
    return Edit(start, end, "")


RULE = CudaManualSeed
