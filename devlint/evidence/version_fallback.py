"""Principle: the CUDA fallback for a torch too old to have the generic API is dead code
where the project's torch always has it.

```python
device = (torch.accelerator.current_accelerator()
          if hasattr(torch, "accelerator") else torch.cuda.current_device())
```
The test asks which torch is installed, not which device: on every torch that has the
generic API (`torch.accelerator`, since 2.6) the generic arm runs, whatever the device. Where
the project declares a torch floor that already has it (`torch>=2.6` in its packaging files,
`target-torch` in its configuration, or the torch a profile pins), the fallback never runs: a
dead branch, not a device pin.
Evidence: the `hasattr(torch..., "<name>")` test of the `if` or conditional expression whose
`else` holds the candidate, the API's first release (`devlint/data/torch_api.toml`: the
earliest `since` of a replacement under that name) and the floor; the evidence is the test's
line.
Limits: only `hasattr` of torch or one of its modules, naming something the API table knows
(`accelerator`, `Event`, `Stream`, `get_device_module`, `accelerator.empty_cache`...); without
a declared floor (the default target) the fallback may run on an old torch and stays a
finding, and so does a version flag computed elsewhere (`if _torch_ge_2_7:`); only the `else`
side (the arm the missing API takes) is dead.
"""
from __future__ import annotations

import ast
from functools import lru_cache

from devlint.evidence import Reason


@lru_cache(maxsize=1)
def _first_release() -> dict:
    """{"torch.accelerator": (2, 6), "torch.accelerator.empty_cache": (2, 8), ...}: the first
    torch release of each replacement in the API table and of each module holding one."""
    from devlint.profiles.torch_api import load_table

    out: dict = {}
    for e in load_table():
        since = getattr(e, "since", None)
        repl = getattr(e, "replacement", "") or ""
        if not repl or not since:
            continue
        since = tuple(since) if not isinstance(since, str) else tuple(
            int(x) for x in since.split(".")[:2])
        parts = repl.split(".")
        for i in range(2, len(parts) + 1):
            name = ".".join(parts[:i])
            if name not in out or since < out[name]:
                out[name] = since
    return out


def _floor(settings, profile: str | None) -> tuple[int, int] | None:
    """The torch every supported install has: the configured target, the declared floor, or
    the torch a profile pins (not the default target)."""
    from devlint.settings import PROFILE_TARGET_TORCH, DEFAULT_TARGET_TORCH, parse_version

    value = getattr(settings, "target_torch", None) or getattr(settings, "declared_torch", None)
    if not value and profile and PROFILE_TARGET_TORCH.get(profile) not in (
            None, DEFAULT_TARGET_TORCH):
        value = PROFILE_TARGET_TORCH[profile]
    return parse_version(value) if value else None


def version_fallback_reason(facts, node) -> Reason | None:
    """The reason `node` stands in the dead fallback of a `hasattr(torch, ...)` test."""
    if not facts.memo("version-fallback-text", lambda: "hasattr" in facts.text):
        return None
    cur, par = node, facts.get_parent(node)
    while par is not None:
        test = None
        if isinstance(par, ast.IfExp) and cur is par.orelse:
            test = par.test
        elif isinstance(par, ast.If) and any(cur is st for st in par.orelse):
            test = par.test
        if test is not None:
            api = _asked_api(facts, test)
            if api is not None:
                return _reason(facts, api, test)
        if isinstance(par, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return None
        cur, par = par, facts.get_parent(par)
    return None


def _asked_api(facts, test) -> str | None:
    """`hasattr(torch, "accelerator")` -> "torch.accelerator" (torch or one of its modules)."""
    if not (isinstance(test, ast.Call) and isinstance(test.func, ast.Name)
            and test.func.id == "hasattr" and len(test.args) == 2
            and isinstance(test.args[1], ast.Constant) and isinstance(test.args[1].value, str)):
        return None
    owner = facts.qualname(test.args[0]) if isinstance(test.args[0], ast.Attribute) else (
        facts.aliases.get(test.args[0].id) if isinstance(test.args[0], ast.Name) else None)
    if owner is None or owner.split(".")[0] != "torch":
        return None
    return f"{owner}.{test.args[1].value}"


def _reason(facts, api: str, test) -> Reason | None:
    since = _first_release().get(api)
    floor = _floor(facts.settings, facts.profile)
    if since is None or floor is None or floor < since:
        return None
    return Reason("version-fallback", f"the fallback for a torch without `{api}` (since "
                  f"{since[0]}.{since[1]}), which the project's torch floor "
                  f"{floor[0]}.{floor[1]} always has: dead code", facts.path, test.lineno)
