"""DL403 cuda-amp."""
from __future__ import annotations

import ast

from devlint.diagnostics import Edit
from devlint.analysis.fixkit import Expr, bare, make_fix
from devlint.profiles.torch_api import best_entry, entries_by_name
from devlint.rules._device import device_strings, device_type_expr, skipped
from devlint.rules.base import Invalid, Rule, Valid

# device-generic amp entry points whose device argument may be a CUDA literal
_GENERIC = {"torch.autocast": "device_type", "torch.amp.autocast": "device_type",
            "torch.amp.GradScaler": "device", "torch.amp.custom_fwd": "device_type",
            "torch.amp.custom_bwd": "device_type"}


class CudaAmp(Rule):
    """
    ## What it does
    Flags CUDA-only mixed precision: `torch.cuda.amp.autocast(...)`,
    `torch.cuda.amp.GradScaler(...)`, the `torch.cuda.amp.custom_fwd` / `custom_bwd`
    decorators, imports from `torch.cuda.amp`, and the generic APIs pinned to CUDA:
    `torch.autocast("cuda")`, `torch.autocast(device_type="cuda")`,
    `torch.amp.GradScaler("cuda")`.

    ## Why is this bad?
    `torch.cuda.amp` is deprecated and CUDA-only; a `"cuda"` device type makes autocast a no-op
    (with a warning) or an error on other accelerators, so the model silently runs in full
    precision or fails.

    ## Example
    ```python
    with torch.cuda.amp.autocast():
        y = model(x)
    ```

    Use instead:
    ```python
    with torch.autocast((torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu")).type):
        y = model(x)
    ```

    ## Fix
    `torch.cuda.amp.X(...)` becomes `torch.autocast(<device type>, ...)` /
    `torch.amp.GradScaler(<device type>, ...)`; a `"cuda"` device literal in the generic APIs
    becomes the profile's device type. `@torch.cuda.amp.custom_fwd` becomes
    `@torch.amp.custom_fwd(device_type=<device type>)` (torch >= 2.4). An import from
    `torch.cuda.amp` is removed once no use of its names is left.

    With the torch profile the fixed call also gets `enabled=torch.accelerator.is_available()`
    (or `enabled=<given> and ...`): without CUDA the original is disabled (autocast warns and
    does nothing, the scaler passes values through), and the fixed code must not turn on CPU
    autocast (bfloat16) or loss scaling there. vLLM's CPU platform is a deliberate target, so
    the vllm profile writes the device type alone.

    ## Fix safety
    Replacing the literal and `GradScaler` are safe. `torch.cuda.amp.autocast` -> `torch.autocast`
    is unsafe: positional arguments mean different things, and the default dtype comes from the
    device instead of being float16.

    ## Profiles
    - `torch`: `(torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu")).type`
      (target-torch 2.7+; 2.6 asks `torch.accelerator.is_available()` first; none below 2.6).
    - `vllm`: `current_platform.device_type`.
    """

    code = "DL403"
    name = "cuda-amp"
    summary = "CUDA-only automatic mixed precision"

    valid = [
        Valid("import torch\nwith torch.autocast(device_type=dev.type):\n    pass\n"),
        Valid('import torch\nwith torch.autocast("cpu"):\n    pass\n'),
        Valid("import torch\n\n\n@torch.amp.custom_fwd(device_type=dev_type)\ndef f(ctx, x):\n"
              "    return x\n"),
        Valid("from torch.amp import autocast\nwith autocast(dev_type):\n    pass\n"),
        # the arm of a tensor's own CUDA test (cuda-guard): it runs only where `t` is on CUDA
        Valid("import contextlib\nimport torch\n\n\ndef no_autocast(t):\n"
              "    return torch.autocast('cuda', enabled=False) if t.is_cuda "
              "else contextlib.nullcontext()\n"),
    ]
    invalid = [
        # the deprecated decorators
        Invalid("import torch\n\n\nclass F(torch.autograd.Function):\n"
                "    @staticmethod\n    @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)\n"
                "    def forward(ctx, x):\n        return x\n\n"
                "    @staticmethod\n    @torch.cuda.amp.custom_bwd\n"
                "    def backward(ctx, g):\n        return g\n",
                "import torch\nfrom vllm.platforms import current_platform\n\n\n"
                "class F(torch.autograd.Function):\n"
                "    @staticmethod\n    @torch.amp.custom_fwd(device_type=current_platform.device_type, "
                "cast_inputs=torch.float32)\n"
                "    def forward(ctx, x):\n        return x\n\n"
                "    @staticmethod\n    @torch.amp.custom_bwd(device_type=current_platform.device_type)\n"
                "    def backward(ctx, g):\n        return g\n", profile="vllm", count=2),
        # the import goes once its uses are fixed
        Invalid("import torch\n\n\ndef f(x):\n    from torch.cuda.amp import autocast\n"
                "    with autocast(dtype=torch.bfloat16):\n        return x\n",
                "import torch\nfrom vllm.platforms import current_platform\n\n\ndef f(x):\n"
                "    with torch.autocast(current_platform.device_type, dtype=torch.bfloat16):\n"
                "        return x\n", profile="vllm", count=2),
        # still used where no fix applies: flagged, kept
        Invalid("from torch.cuda.amp import autocast\nwith autocast(True):\n    pass\n", None,
                count=2),
        Invalid("import torch\nwith torch.cuda.amp.autocast():\n    pass\n",
                'import torch\n'
                'with torch.autocast(torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu", enabled=torch.accelerator.is_available()):\n'
                '    pass\n'),
        Invalid("import torch\ns = torch.cuda.amp.GradScaler(init_scale=2.0)\n",
                "import torch\nfrom vllm.platforms import current_platform\n"
                "s = torch.amp.GradScaler(current_platform.device_type, init_scale=2.0)\n",
                profile="vllm"),
        Invalid('import torch\nwith torch.autocast("cuda", dtype=torch.bfloat16):\n    pass\n',
                "import torch\nfrom vllm.platforms import current_platform\n"
                "with torch.autocast(current_platform.device_type, dtype=torch.bfloat16):\n    pass\n",
                profile="vllm"),
        Invalid('from torch.cuda import amp\nwith amp.autocast(enabled=True):\n    pass\n',
                'from torch.cuda import amp\n'
                'import torch\n'
                'with torch.autocast(torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu", enabled=True and torch.accelerator.is_available()):\n'
                '    pass\n'),
    ]

    def check(self, facts):
        if facts.cuda_alike:
            return
        table = entries_by_name(self.code)
        target = facts.settings.target_torch_tuple(facts.profile)
        yield from self._imports(facts)
        for node, qual in facts.torch_refs:
            entries = table.get(qual)
            if not entries or not qual.startswith("torch.cuda.amp."):
                continue
            if qual in _DECORATORS:
                found = self._custom_fwd_bwd(facts, node, best_entry(entries, target), target)
                if found is not None:
                    yield found
                continue
            call = facts.get_parent(node)
            if not isinstance(call, ast.Call) or call.func is not node:
                continue
            if skipped(facts, node, api=True):
                continue
            entry = best_entry(entries, target)
            fix = None
            if entry is not None and entry.available_for(target) and not call.args:
                t = device_type_expr(facts)
                repl = entry.replacement
                imports = t.imports
                local = facts.torch_name()
                if local is None:
                    local = "torch"
                    imports = imports + ("import torch",)
                repl = local + repl[len("torch"):]
                s, _ = facts.span(node)
                _, e = facts.span(call)
                kws = [facts.source(k) for k in call.keywords]
                if facts.profile == "torch" and "enabled" not in {k.arg for k in call.keywords}:
                    kws.append(f"enabled={_available(facts)}")
                elif facts.profile == "torch":
                    kws = [f"enabled={_and_available(facts, k.value)}" if k.arg == "enabled"
                           else facts.source(k) for k in call.keywords]
                args = [bare(t.text), *kws]
                new = f"{repl}({', '.join(args)})"
                fix = make_fix(facts, f"Use `{entry.replacement}` with the profile's device type",
                               [Edit(s, e, new)], Expr(new, imports, "", entry.safe),
                               safe=entry.safe)
            yield self.diagnostic(facts, call, f"`{facts.source(node)}` is CUDA-only", fix)
        for node in device_strings(facts):
            if node.value != "cuda":
                continue
            par = facts.get_parent(node)
            kw = None
            if isinstance(par, ast.keyword):
                kw, par = par, facts.get_parent(par)
            if not isinstance(par, ast.Call):
                continue
            q = facts.qualname(par.func)
            if q not in _GENERIC:
                continue
            if kw is None and (not par.args or par.args[0] is not node):
                continue
            if kw is not None and kw.arg != _GENERIC[q]:
                continue
            if skipped(facts, node, api=True):
                continue
            t = device_type_expr(facts)
            s, e = facts.span(node)
            edits = [Edit(s, e, t.text)]
            if facts.profile == "torch" and q in _ENABLED_AT:
                edits.extend(_enabled_edits(facts, par, _ENABLED_AT[q]))
            fix = make_fix(facts, f"Use the profile's device type `{t.text}`", edits, t)
            yield self.diagnostic(facts, node, f"`{facts.source(par.func)}` pinned to CUDA", fix)

    def _custom_fwd_bwd(self, facts, node, entry, target):
        """`@torch.cuda.amp.custom_fwd`, `@torch.cuda.amp.custom_fwd(cast_inputs=...)`,
        `torch.cuda.amp.custom_bwd(f)`: the generic decorator with `device_type=`."""
        if skipped(facts, node, api=True):
            return None
        par = facts.get_parent(node) or facts.tree_parent(node)
        call = par if isinstance(par, ast.Call) and par.func is node else None
        if call is None and not _is_decorator(facts, node):
            return None  # a bare reference (`orig = torch.cuda.amp.custom_fwd`)
        fix = None
        if entry is not None and entry.available_for(target):
            t = device_type_expr(facts)
            local = facts.torch_name()
            imports = t.imports
            if local is None:
                local = "torch"
                imports = imports + ("import torch",)
            repl = entry.callee(local)
            s, e = facts.span(node)
            if call is None:
                edits = [Edit(s, e, f"{repl}(device_type={t.text})")]
            else:
                parts = [facts.source(a) for a in call.args] + [f"device_type={t.text}"] + \
                    [facts.source(k) for k in call.keywords]
                _, ce = facts.span(call)
                edits = [Edit(s, ce, f"{repl}({', '.join(parts)})")]
            fix = make_fix(facts, f"Use `{entry.replacement}(device_type=...)`", edits,
                           Expr(repl, imports, "", entry.safe), safe=entry.safe)
        target_node = call if call is not None else node
        return self.diagnostic(facts, target_node, f"`{facts.source(node)}` is CUDA-only", fix)

    def _imports(self, facts):
        """`from torch.cuda.amp import autocast`: names from the deprecated CUDA-only amp
        module. Its uses are reported where they stand; once none is left the
        import is removed."""
        if "torch.cuda" not in facts.text or facts.tree is None:
            return
        for stmt in facts.statements():
            if not isinstance(stmt, ast.ImportFrom) or stmt.level:
                continue
            if stmt.module != "torch.cuda.amp":
                continue  # `from torch.cuda import amp` binds the module: its uses are reported
            names = [a.asname or a.name for a in stmt.names]
            if "*" in names or skipped(facts, stmt, api=True):
                continue
            fix = None
            if not _used(facts, names, stmt):
                edit = _remove_statement(facts, stmt)
                if edit is not None:
                    fix = make_fix(facts, "Remove the unused `torch.cuda.amp` import", [edit], ())
            yield self.diagnostic(facts, stmt, "Imports from the deprecated CUDA-only "
                                  "`torch.cuda.amp`; use `torch.amp` with a device type", fix)


_DECORATORS = ("torch.cuda.amp.custom_fwd", "torch.cuda.amp.custom_bwd")


def _is_decorator(facts, node) -> bool:
    par = facts.tree_parent(node)
    return isinstance(par, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
        d is node for d in par.decorator_list)


def _used(facts, names, stmt) -> bool:
    """Whether any of `names` is read anywhere in the file (outside `stmt`)."""
    wanted = set(names)
    for n in ast.walk(facts.tree):
        if isinstance(n, ast.Name) and n.id in wanted:
            return True
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) \
                and n.value.id in wanted:
            return True
    return False


def _remove_statement(facts, stmt):
    """An edit deleting `stmt` with its line(s), or `pass` where it is the only statement of
    its block; None when it shares a line with other code."""
    loc = facts.locator
    start, end = facts.span(stmt)
    line_start = loc.line_start(stmt.lineno)
    if facts.text[line_start:start].strip():
        return None
    rest_end = facts.text.find("\n", end)
    rest_end = len(facts.text) if rest_end == -1 else rest_end + 1
    if facts.text[end:rest_end].strip() and not facts.text[end:rest_end].strip().startswith("#"):
        return None
    par = facts.tree_parent(stmt)
    block = None
    for field in ("body", "orelse", "finalbody", "handlers"):
        b = getattr(par, field, None)
        if isinstance(b, list) and any(x is stmt for x in b):
            block = b
    if block is not None and len(block) == 1 and not isinstance(par, ast.Module):
        return Edit(start, end, "pass")
    return Edit(line_start, rest_end, "")


# where `enabled` stands positionally in the generic APIs
_ENABLED_AT = {"torch.autocast": 2, "torch.amp.autocast": 2, "torch.amp.GradScaler": 5}


def _available(facts) -> str:
    target = facts.settings.target_torch_tuple(facts.profile)
    if target is not None and target < (2, 6):
        # no torch.accelerator before 2.6: the profile's device type (a ladder over the
        # device modules there) is "cpu" exactly where no accelerator is available
        return f'{bare(device_type_expr(facts).text)} != "cpu"'
    return f"{facts.torch_name() or 'torch'}.accelerator.is_available()"


def _and_available(facts, value) -> str:
    src = facts.source(value)
    if not isinstance(value, (ast.Name, ast.Constant, ast.Attribute, ast.Call)):
        src = f"({src})"
    return f"{src} and {_available(facts)}"


def _enabled_edits(facts, call, position) -> list:
    """Without CUDA the original is disabled (autocast warns and does nothing, the scaler
    passes values through): the fixed code stays disabled where no accelerator is available,
    instead of turning on CPU autocast (bfloat16) or loss scaling there."""
    kw = next((k for k in call.keywords if k.arg == "enabled"), None)
    if kw is not None:
        s, e = facts.span(kw.value)
        return [Edit(s, e, _and_available(facts, kw.value))]
    if len(call.args) > position:
        arg = call.args[position]
        s, e = facts.span(arg)
        return [Edit(s, e, _and_available(facts, arg))]
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None
                                                                for k in call.keywords):
        return []
    last = max([*call.args, *call.keywords], key=lambda n: facts.span(n)[1])
    _, e = facts.span(last)
    return [Edit(e, e, f", enabled={_available(facts)}")]


RULE = CudaAmp
