"""DL404 cuda-manual-seed."""
from __future__ import annotations

import ast

from devlint.diagnostics import Applicability, Edit, Fix
from devlint.profiles.torch_api import best_entry, entries_by_name
from devlint.rules._api_table import _finding, table_findings, target_of
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
    torch.cuda.manual_seed(seed)
    ```

    Use instead:
    ```python
    if torch.accelerator.is_available():
        torch.get_device_module().manual_seed(seed)
    ```

    ## Fix
    The current accelerator's own device module seeds its generators: on CUDA,
    `torch.get_device_module()` is `torch.cuda`, so the fixed code calls the very function the
    original called, and the CPU generator keeps its stream (`torch.manual_seed` would reseed
    it: later CPU draws would change). `torch.cuda.manual_seed_all(seed)` becomes
    `getattr(torch.get_device_module(), "manual_seed_all",
    torch.get_device_module().manual_seed)(seed)`: `torch.mps` has no `manual_seed_all` (one
    device: its `manual_seed` seeds all). The availability test keeps the original's no-op on
    a machine without an accelerator (`torch.cpu` has no seed functions).

    Where the same block already calls `torch.manual_seed(seed)` with the same argument (a
    seeding helper that seeds every library in turn), with only seed calls between, the call
    is removed instead: the existing call already seeds every device. Several CUDA seed calls
    with the same argument in one run of seed calls become one: the first is rewritten (to
    the `manual_seed_all` form where one of them was `manual_seed_all`), the others removed.

    ## Fix safety
    Safe: on CUDA the same function runs with the same argument; without an accelerator
    nothing runs, as before.

    ## Profiles
    Both profiles use the device module's form.
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
        # the generic seed comes later, nothing reads the stream in between
        Valid("import torch\n\n\ndef seed_all(s):\n    torch.cuda.manual_seed_all(s)\n"
              "    torch.backends.cudnn.deterministic = True\n    torch.manual_seed(s)\n"),
        Valid("import random\nrandom.seed(0)\n"),
    ]
    invalid = [
        # the original is a no-op without CUDA: so is the fix, where no accelerator is available
        Invalid("import torch\ntorch.cuda.manual_seed(0)\n",
                "import torch\nif torch.accelerator.is_available():\n"
                "    torch.get_device_module().manual_seed(0)\n"),
        Invalid("import torch as th\nth.cuda.manual_seed_all(1)\n",
                "import torch as th\nif th.accelerator.is_available():\n"
                "    getattr(th.get_device_module(), \"manual_seed_all\", "
                "th.get_device_module().manual_seed)(1)\n"),
        Invalid("import torch\n\n\ndef seed_all(s):\n    torch.cuda.manual_seed(s)\n"
                "    torch.cuda.manual_seed_all(s)\n",
                "import torch\n\n\ndef seed_all(s):\n    if torch.accelerator.is_available():\n"
                "        getattr(torch.get_device_module(), \"manual_seed_all\", "
                "torch.get_device_module().manual_seed)(s)\n", count=2),
        # a draw between two seeds: the second reseeds, it is not redundant
        Invalid("import torch\ntorch.cuda.manual_seed(0)\nx = torch.rand(2)\n"
                "torch.cuda.manual_seed(0)\n",
                "import torch\nif torch.accelerator.is_available():\n"
                "    torch.get_device_module().manual_seed(0)\nx = torch.rand(2)\n"
                "if torch.accelerator.is_available():\n"
                "    torch.get_device_module().manual_seed(0)\n", count=2),
        # the CUDA seed's stream is read before the generic seed runs: it is not redundant
        Invalid("import torch\n\n\ndef fork(s):\n"
                "    torch.cuda.manual_seed(s)\n    state = torch.randn(2, device=d)\n"
                "    torch.manual_seed(s)\n    return state\n",
                "import torch\n\n\ndef fork(s):\n"
                "    if torch.accelerator.is_available():\n"
                "        torch.get_device_module().manual_seed(s)\n"
                "    state = torch.randn(2, device=d)\n"
                "    torch.manual_seed(s)\n    return state\n"),
    ]

    def check(self, facts):
        diags = list(table_findings(self, facts))
        calls = {}
        for node, _ in facts.torch_refs:
            par = facts.get_parent(node)
            if isinstance(par, ast.Call) and par.func is node:
                calls[facts.span(node)[0]] = par
        groups = {}  # (run of seed statements, argument) -> [(diag, call, stmt)]
        for d in diags:
            call = calls.get(d.start)
            stmt = facts.get_parent(call) if call is not None else None
            where = _seed_statement(facts, call, stmt)
            if where is None or d.fix is None:
                continue
            block, arg = where
            existing = _existing_manual_seed(facts, block, stmt, arg)
            if existing is not None:
                d.fix = Fix(Applicability.SAFE,
                            "Remove it: `torch.manual_seed(" + arg + ")` already seeds every "
                            "device", (_line_removal(facts, stmt),))
                continue
            groups.setdefault((id(block), _run_start(facts, block, stmt), arg), []).append(
                (d, call, stmt))
        for members in groups.values():
            # one seed of the same value in a run of seed calls: the first is rewritten (to
            # the form that seeds every device where one of them did), the others removed
            first, call, _ = members[0]
            quals = {facts.qualname(c.func) for _, c, _ in members}
            if len(members) > 1 and facts.qualname(call.func) != _ALL \
                    and _ALL in quals:
                entry = best_entry(entries_by_name(self.code)[_ALL], target_of(facts))
                redone = _finding(self, facts, call.func, call, entry, target_of(facts))
                if redone.fix is not None:
                    first.fix, first.message = redone.fix, redone.message
            if len(members) == 1:
                continue
            # one fix for the group, whichever finding it is applied from (an editor's quick
            # fix): removing a later seed alone would leave the first one CUDA-only
            edits = tuple(first.fix.edits) + tuple(_line_removal(facts, st)
                                                   for _, _, st in members[1:])
            seeds = "every device" if _ALL in quals else "the current device"
            first.fix = Fix(first.fix.applicability, first.fix.message + "; remove the "
                            "other CUDA seed calls of this value here", edits)
            for d, _, _ in members[1:]:
                d.fix = Fix(first.fix.applicability, "Remove it: the first CUDA seed call of "
                            "this value here, rewritten, seeds " + seeds, edits)
        yield from diags


_ALL = "torch.cuda.manual_seed_all"


def _run_start(facts, block, stmt) -> int:
    """The index in `block` of the first statement of the run of seed-call statements that
    holds `stmt` (nothing else runs between the calls of one run)."""
    i = next(k for k, x in enumerate(block) if x is stmt)
    while i > 0 and _is_seed_call(block[i - 1]):
        i -= 1
    return i


def _is_seed_call(st) -> bool:
    if not (isinstance(st, ast.Expr) and isinstance(st.value, ast.Call)):
        return False
    f = st.value.func
    return (f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")) in _SEED_CALLS


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
            if not _is_seed_call(other):
                break
            f = other.value.func
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
