"""DL501 hardcoded-dist-backend."""
from __future__ import annotations

import ast
import re

from devlint.diagnostics import Edit
from devlint.analysis.fixkit import make_fix, role_expr
from devlint.rules._device import skipped
from devlint.rules.base import IN_FILE, IN_PACKAGE, Invalid, Rule, Valid

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
    process group (`init_process_group`, `init_distributed_environment`) under a profile that
    names the project's platform backend (`vllm`, a custom profile's `dist-backend`), since a
    `gloo` side group is the usual, device-independent way to talk on the CPU, and under
    `torch` gloo is the CPU backend every build has, no CUDA pin. Also a device backend
    chosen by an expression (`"nccl" if torch.cuda.is_available() else "gloo"`, `x or "nccl"`),
    passed to another library's distributed entry point (`deepspeed.init_distributed(
    dist_backend="nccl")`: a function named to initialise or set up distributed, process-group
    or model-parallel communication), or given as the default of a parameter named for a
    backend (`def init(comm_backend="nccl")`).

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
    the others, which the replacement changes on CUDA machines. Below torch 2.6 the fix is
    `None` and unsafe: torch then makes one backend per device (gloo beside NCCL on CUDA) and
    `get_backend()` no longer says `nccl`.

    ## Profiles
    - `torch`: `torch.distributed.get_default_backend_for_device(<accelerator or cpu>)`; with
      `target-torch` 2.2 to 2.5 (no `torch.accelerator`), `None` as the backend argument of
      `torch.distributed.init_process_group` / `new_group` only (torch picks each device's
      backend), no fix elsewhere.
    - `vllm`: `current_platform.dist_backend`.
    """

    code = "DL501"
    # not `rocm-guard`: under `if _is_hip:` the platform still names its own variable and
    # backend (`HIP_VISIBLE_DEVICES` is ROCm's)
    exempt_by = tuple(dict.fromkeys(IN_FILE + IN_PACKAGE))
    name = "hardcoded-dist-backend"
    summary = "Hardcoded torch.distributed backend"

    valid = [
        Valid('import torch.distributed as dist\ng = dist.new_group(ranks, backend="gloo")\n'),
        Valid('BACKENDS = {"cuda": "nccl", "xpu": "xccl"}\n'),
        # under torch's profile gloo is the CPU backend every build has: no CUDA pin
        Valid('import torch.distributed as dist\n'
              'dist.init_process_group(backend="gloo", store=store, rank=0, world_size=1)\n'),
        Valid('if backend == "nccl":\n    pass\n'),
        Valid('logger.info("using nccl")\n'),
        Valid('cfg = WeightTransferConfig(backend="nccl")\n'),
        Valid('backend = "nccl"\nprint(backend)\n'),
        # a parameter that is not a backend, a weight-transfer engine's default
        Valid('def f(name="nccl"):\n    pass\n'),
        Valid('def transfer(engine_backend=None):\n    pass\n'),
        # several device backends chosen by a ladder
        Valid('import torch.distributed as dist\n'
              'dist.init_process_group("hccl" if is_npu_available() else "nccl")\n'),
        # an expression of another API
        Valid('cfg = WeightTransferConfig(backend="nccl" if fast else "gloo")\n'),
    ]
    invalid = [
        # a ROCm-only test does not choose the backend (rocm-guard covers device names only)
        Invalid('import torch.distributed as dist\n\n\ndef init():\n'
                '    if current_platform.is_rocm():\n'
                '        dist.init_process_group(backend="nccl")\n',
                'import torch.distributed as dist\nimport torch\n\n\ndef init():\n'
                '    if current_platform.is_rocm():\n'
                '        dist.init_process_group(backend=torch.distributed.'
                'get_default_backend_for_device(torch.accelerator.current_accelerator() if '
                'torch.accelerator.is_available() else "cpu"))\n'),
        Invalid('import torch.distributed as dist\ndist.init_process_group("nccl")\n',
                'import torch.distributed as dist\n'
                'import torch\n'
                'dist.init_process_group(torch.distributed.get_default_backend_for_device(torch.accelerator.current_accelerator() if torch.accelerator.is_available() else "cpu"))\n'),
        # a project whose platform names every group's backend asks it for gloo's too
        Invalid('init_distributed_environment(world_size, rank, backend="gloo")\n',
                'from vllm.platforms import current_platform\n'
                'init_distributed_environment(world_size, rank, backend=current_platform.dist_backend)\n',
                profile="vllm"),
        Invalid('init_distributed_environment(world_size, rank, backend="hccl")\n',
                'from vllm.platforms import current_platform\n'
                'init_distributed_environment(world_size, rank, backend=current_platform.dist_backend)\n',
                profile="vllm"),
        Invalid('def init():\n    backend = "nccl"\n    init_distributed_environment(backend=backend)\n',
                'from vllm.platforms import current_platform\n'
                'def init():\n    backend = current_platform.dist_backend\n    init_distributed_environment(backend=backend)\n',
                profile="vllm"),
        # a parameter default
        Invalid('def initialize_model_parallel(tp=1, pp_comm_backend: str = "nccl"):\n    pass\n',
                'from vllm.platforms import current_platform\n'
                'def initialize_model_parallel(tp=1, pp_comm_backend: str = current_platform.dist_backend):\n'
                '    pass\n', profile="vllm"),
        # chosen by an expression
        Invalid('import torch\nimport torch.distributed as dist\n'
                'dist.init_process_group(backend="nccl" if torch.cuda.is_available() else "gloo")\n',
                'import torch\nimport torch.distributed as dist\nfrom vllm.platforms import current_platform\n'
                'dist.init_process_group(backend=current_platform.dist_backend)\n', profile="vllm"),
        # a local device's test stays: only the CUDA arm's backend changes
        Invalid('import torch.distributed as dist\n\n\ndef g(ranks, device):\n'
                '    backend = "nccl" if device == "cuda" else "gloo"\n'
                '    return dist.new_group(ranks, backend=backend)\n',
                'import torch.distributed as dist\nfrom vllm.platforms import current_platform\n\n\n'
                'def g(ranks, device):\n'
                '    backend = current_platform.dist_backend if device == "cuda" else "gloo"\n'
                '    return dist.new_group(ranks, backend=backend)\n', profile="vllm"),
        Invalid('import deepspeed\ndeepspeed.init_distributed(dist_backend=args.backend or "nccl")\n',
                'import deepspeed\nfrom vllm.platforms import current_platform\n'
                'deepspeed.init_distributed(dist_backend=args.backend or current_platform.dist_backend)\n',
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
            par = facts.get_parent(node) or facts.tree_parent(node)
            if isinstance(par, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and any(
                    d is node for d in (*par.args.defaults, *par.args.kw_defaults)):
                # `def init(comm_backend: str = "nccl")`: the default every caller gets
                if value in _DEVICE_BACKENDS and _backend_parameter(par.args, node) \
                        and not skipped(facts, node, api=True):
                    yield self._finding(facts, node, value, default=True)
                continue
            top = node
            while isinstance(par, (ast.IfExp, ast.BoolOp)) and top is not getattr(par, "test", None):
                # `backend="nccl" if torch.cuda.is_available() else "gloo"`: an expression
                # chooses the backend; judge where the whole expression goes
                top, par = par, facts.get_parent(par) or facts.tree_parent(par)
            if top is not node:
                found = self._chosen(facts, node, value, top, par)
                if found is not None:
                    yield found
                continue
            if isinstance(par, (ast.Assign, ast.AnnAssign)) and value in _DEVICE_BACKENDS \
                    and par.value is node and _backend_variable(facts, par):
                # `backend = "nccl"` later handed to init_process_group(backend=backend)
                if not skipped(facts, node, api=True):
                    yield self._finding(facts, node, value)
                continue
            if isinstance(par, ast.keyword):
                if not _backend_keyword(par.arg):
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
            if value == "gloo" and (fname not in _INIT or not _platform_names_backends(facts)):
                continue
            if skipped(facts, node, api=True):
                continue
            yield self._finding(facts, node, value)

    def _finding(self, facts, node, value, default=False, whole=None):
        expr = role_expr(facts, "dist-backend")
        fix = None
        if expr is not None and expr.text == "None" \
                and not _torch_group_argument(facts, whole if whole is not None else node):
            # the torch profile below 2.6: `None` lets torch pick each device's backend, which
            # only the argument of torch's own init_process_group / new_group means (a
            # variable or parameter default may be compared with "nccl" elsewhere)
            expr = None
        if expr is not None:
            s, e = facts.span(whole if whole is not None else node)
            # a parameter default is evaluated once, when the function is defined; `None`
            # (below 2.6) also adds a gloo backend on CUDA and changes `get_backend()`
            fix = make_fix(facts, f"Use `{expr.text}`", [Edit(s, e, expr.text)], expr,
                           safe=value == "nccl" and not default and expr.text != "None")
        what = "default distributed backend" if default else "distributed backend"
        return self.diagnostic(facts, node, f"Hardcoded {what} {facts.source(node)}", fix)

    def _chosen(self, facts, node, value, top, par):
        """A backend literal inside an expression (`"nccl" if cuda else "gloo"`) that goes to
        a process-group entry point or a backend variable handed to one."""
        if value not in _DEVICE_BACKENDS:
            return None
        if isinstance(par, ast.keyword):
            call = facts.get_parent(par) or facts.tree_parent(par)
            if not (_backend_keyword(par.arg) and isinstance(call, ast.Call)
                    and _is_group_entry(_callee_name(call))):
                return None
        elif isinstance(par, ast.Call):
            if not (par.args and par.args[0] is top and _is_group_entry(_callee_name(par))):
                return None
        elif isinstance(par, (ast.Assign, ast.AnnAssign)):
            if not (par.value is top and _backend_variable(facts, par)):
                return None
        else:
            return None
        if skipped(facts, top, api=True):
            return None
        names_other = any(isinstance(n, ast.Constant) and isinstance(n.value, str)
                          and n.value in _DEVICE_BACKENDS and n.value != value
                          for n in ast.walk(top))
        if names_other:
            return None  # a ladder over several device backends
        # `"nccl" if torch.cuda.is_available() else "gloo"` is the whole platform choice; a
        # test of a local device (`"nccl" if device == "cuda" else "gloo"`) keeps its test
        whole = top if isinstance(top, ast.IfExp) and _cpu_fallback(top, node) \
            and _asks_availability(facts, top.test) else None
        return self._finding(facts, node, value, whole=whole)


# a function that starts distributed communication, by its name (`deepspeed.init_distributed`,
# `setup_distributed`, `initialize_model_parallel`, `init_dist`): its backend keyword picks
# the collective library
_DIST_ENTRY = re.compile(r"(?i)^_*(init|initiali[sz]e|setup|launch)_?\w*"
                         r"(dist|process_group|model_parallel)")


def _platform_names_backends(facts) -> bool:
    """`"gloo"` for the default process group is a choice of device only where the profile
    names the project's own platform backend (`current_platform.dist_backend`, a custom
    profile's `dist-backend`): such a project asks its platform for every group's backend.
    Under torch's own profile it is the CPU backend, built into every torch and pinning
    nothing to CUDA (four of four judged lines across nine samples were false positives):
    the fix would turn it into NCCL on CUDA machines, not make CUDA code portable."""
    from devlint.profiles import get_profile

    own = get_profile(facts.profile, facts.settings).role("dist-backend")
    # a custom profile that `extends = "torch"` without its own role has torch's
    return own is not None and own != get_profile("torch").role("dist-backend")


def _is_group_entry(name: str) -> bool:
    return name in _INIT or name in _GROUP or "process_group" in name \
        or bool(_DIST_ENTRY.match(name))


def _backend_keyword(arg) -> bool:
    """`backend=`, `dist_backend=`, `comm_backend=`."""
    return arg is not None and (arg == "backend" or arg.endswith("_backend"))


def _backend_parameter(args: ast.arguments, default) -> bool:
    """The parameter whose default is `default` has `backend` in its name."""
    positional = [*args.posonlyargs, *args.args]
    for a, d in zip(positional[len(positional) - len(args.defaults):], args.defaults):
        if d is default:
            return "backend" in a.arg.lower()
    for a, d in zip(args.kwonlyargs, args.kw_defaults):
        if d is default:
            return "backend" in a.arg.lower()
    return False


def _asks_availability(facts, test) -> bool:
    """`torch.cuda.is_available()` (or its negation)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    return isinstance(test, ast.Call) and facts.qualname(test.func) == "torch.cuda.is_available"


def _cpu_fallback(ifexp, node) -> bool:
    """`"nccl" if <test> else "gloo"` (either order): the other arm is gloo."""
    other = ifexp.orelse if ifexp.body is node else ifexp.body if ifexp.orelse is node else None
    return isinstance(other, ast.Constant) and other.value == "gloo"


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


def _torch_group_argument(facts, node) -> bool:
    """`node` is the backend argument (`backend=` or the first positional) of torch's own
    `init_process_group` / `new_group`."""
    par = facts.get_parent(node)
    call = facts.get_parent(par) if isinstance(par, ast.keyword) else par
    if not isinstance(call, ast.Call):
        return False
    if isinstance(par, ast.keyword) and par.arg != "backend":
        return False
    if not isinstance(par, ast.keyword) and not (call.args and call.args[0] is node):
        return False
    return (facts.qualname(call.func) or "") in ("torch.distributed.init_process_group",
                                                 "torch.distributed.new_group")


def _callee_name(call) -> str:
    f = call.func
    if isinstance(f, ast.Attribute):
        return f.attr
    if isinstance(f, ast.Name):
        return f.id
    return ""


RULE = HardcodedDistBackend
