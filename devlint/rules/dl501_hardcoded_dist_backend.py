"""DL501 hardcoded-dist-backend."""
from __future__ import annotations

import ast

from devlint.diagnostics import Edit
from devlint.analysis.fixkit import make_fix, role_expr
from devlint.rules._device import skipped
from devlint.rules.base import Invalid, Rule, Valid

_DEVICE_BACKENDS = {"nccl", "hccl", "xccl"}
# calls that create the default (device) process group: there even "gloo" is a choice of device
_INIT = {"init_process_group", "init_distributed_environment", "init_world_group"}
_GROUP = {"new_group", "new_subgroups", "new_subgroups_by_enumeration", "init_model_parallel_group",
          "stateless_init_torch_distributed_process_group"}


class HardcodedDistBackend(Rule):
    """
    ## What it does
    Flags a hardcoded device backend for `torch.distributed`: `init_process_group("nccl")`,
    `init_process_group(backend="nccl")`, `new_group(ranks, backend="nccl")`, and any
    `backend="nccl"` / `"hccl"` / `"xccl"` argument; `"gloo"` only where it creates the default
    process group (`init_process_group`, `init_distributed_environment`), since a `gloo`
    side group is the usual, device-independent way to talk on the CPU.

    ## Why is this bad?
    NCCL exists only for NVIDIA (and, as RCCL, AMD) GPUs. Intel XPU uses `xccl`, Ascend `hccl`,
    CPU-only runs `gloo`: a hardcoded backend makes distributed code fail at start-up elsewhere.

    ## Example
    ```python
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    ```

    Use instead:
    ```python
    dist.init_process_group(
        torch.distributed.get_default_backend_for_device(
            torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu")),
        rank=rank, world_size=world_size)
    ```

    ## Fix
    The backend becomes the profile's `dist-backend` role.

    ## Fix safety
    Safe for `"nccl"` (on a CUDA machine the default backend for the device is `nccl`); unsafe for
    the others, which the replacement changes on CUDA machines.

    ## Profiles
    - `torch`: `torch.distributed.get_default_backend_for_device(<accelerator or cpu>)`.
    - `vllm`: `current_platform.dist_backend`.
    """

    code = "DL501"
    name = "hardcoded-dist-backend"
    summary = "Hardcoded torch.distributed backend"

    valid = [
        Valid('import torch.distributed as dist\ng = dist.new_group(ranks, backend="gloo")\n'),
        Valid('BACKENDS = {"cuda": "nccl", "xpu": "xccl"}\n'),
        Valid('if backend == "nccl":\n    pass\n'),
        Valid('logger.info("using nccl")\n'),
        Valid('cfg = WeightTransferConfig(backend="nccl")\n'),
        Valid('backend = "nccl"\nprint(backend)\n'),
    ]
    invalid = [
        Invalid('import torch.distributed as dist\ndist.init_process_group("nccl")\n',
                'import torch.distributed as dist\n'
                'import torch\n'
                'dist.init_process_group(torch.distributed.get_default_backend_for_device(torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu"))\n'),
        Invalid('init_distributed_environment(world_size, rank, backend="hccl")\n',
                'from vllm.platforms import current_platform\n'
                'init_distributed_environment(world_size, rank, backend=current_platform.dist_backend)\n',
                profile="vllm"),
        Invalid('def init():\n    backend = "nccl"\n    init_distributed_environment(backend=backend)\n',
                'from vllm.platforms import current_platform\n'
                'def init():\n    backend = current_platform.dist_backend\n    init_distributed_environment(backend=backend)\n',
                profile="vllm"),
        Invalid('import torch.distributed as dist\ng = dist.new_group(ranks, backend="nccl")\n',
                'import torch.distributed as dist\nfrom vllm.platforms import current_platform\n'
                'g = dist.new_group(ranks, backend=current_platform.dist_backend)\n', profile="vllm"),
    ]

    def check(self, facts):
        for node in facts.strings:
            value = node.value
            if value not in _DEVICE_BACKENDS and value != "gloo":
                continue
            par = facts.get_parent(node)
            if isinstance(par, (ast.Assign, ast.AnnAssign)) and value in _DEVICE_BACKENDS \
                    and par.value is node and _backend_variable(facts, par):
                # `backend = "nccl"` later handed to init_process_group(backend=backend)
                if not skipped(facts, node, api=True):
                    yield self._finding(facts, node, value)
                continue
            if isinstance(par, ast.keyword):
                if par.arg != "backend":
                    continue
                call = facts.get_parent(par)
            else:
                call = par
                if not isinstance(call, ast.Call) or not call.args or call.args[0] is not node:
                    continue
            if not isinstance(call, ast.Call):
                continue
            fname = _callee_name(call)
            if not _is_group_entry(fname):
                continue  # `backend=` of another API (a weight-transfer engine, a kernel)
            if value == "gloo" and fname not in _INIT:
                continue
            if skipped(facts, node, api=True):
                continue
            yield self._finding(facts, node, value)

    def _finding(self, facts, node, value):
        expr = role_expr(facts, "dist-backend")
        fix = None
        if expr is not None:
            s, e = facts.span(node)
            fix = make_fix(facts, f"Use `{expr.text}`", [Edit(s, e, expr.text)], expr,
                           safe=value == "nccl")
        return self.diagnostic(facts, node, f"Hardcoded distributed backend "
                               f"{facts.source(node)}", fix)


def _is_group_entry(name: str) -> bool:
    return name in _INIT or name in _GROUP or "process_group" in name


def _backend_variable(facts, stmt) -> bool:
    """`backend = "nccl"` whose name the file then hands to a process-group entry point."""
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    names = {t.id for t in targets if isinstance(t, ast.Name)}
    if not names:
        return False
    for call in facts.memo("dist_calls", lambda: [
            n for n in ast.walk(facts.tree) if isinstance(n, ast.Call)
            and _is_group_entry(_callee_name(n))]):
        args = [*call.args[:1], *(k.value for k in call.keywords if k.arg == "backend")]
        if any(isinstance(a, ast.Name) and a.id in names for a in args):
            return True
    return False


def _callee_name(call) -> str:
    f = call.func
    if isinstance(f, ast.Attribute):
        return f.attr
    if isinstance(f, ast.Name):
        return f.id
    return ""


RULE = HardcodedDistBackend
