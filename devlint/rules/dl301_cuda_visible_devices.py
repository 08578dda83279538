"""DL301 cuda-visible-devices."""
from __future__ import annotations

import ast

from devlint.diagnostics import Applicability, Edit, Fix
from devlint.analysis.fixkit import make_fix, role_expr
from devlint.evidence.not_a_device import message_text_reason
from devlint.rules._device import note_exempt, skipped
from devlint.rules.base import IN_FILE, IN_PACKAGE, Invalid, Rule, Valid

_ENV_FUNCS = {"os.getenv", "os.putenv", "os.unsetenv", "os.environ.get", "os.environ.pop",
              "os.environ.setdefault"}
_ENV_METHODS = {"setenv", "delenv", "setdefault", "get", "pop"}


class CudaVisibleDevices(Rule):
    """
    ## What it does
    Flags `CUDA_VISIBLE_DEVICES` read or written from Python: `os.environ["CUDA_VISIBLE_DEVICES"]`,
    `os.environ.get(...)`, `os.getenv(...)`, `monkeypatch.setenv(...)`, `"CUDA_VISIBLE_DEVICES"
    in os.environ`, and env dicts (`{"CUDA_VISIBLE_DEVICES": ...}`) passed to subprocesses; also
    the variable set in any other environment mapping (`env = os.environ.copy();
    env["CUDA_VISIBLE_DEVICES"] = ...`) or as a keyword (`dict(os.environ,
    CUDA_VISIBLE_DEVICES="0")`, `env.update(CUDA_VISIBLE_DEVICES=...)`); and shell command text
    built in Python that starts by setting it (`f"CUDA_VISIBLE_DEVICES={gpus} python
    train.py"` for `os.system` or `subprocess.run(..., shell=True)`), not in a message or a
    docstring.

    ## Why is this bad?
    Each vendor has its own visibility variable (`HIP_VISIBLE_DEVICES`, `ZE_AFFINITY_MASK`,
    `ASCEND_RT_VISIBLE_DEVICES`, ...): setting `CUDA_VISIBLE_DEVICES` does not pin a worker to
    its device anywhere else, so every worker sees (and fights over) every device.

    ## Example
    ```python
    os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(map(str, device_ids))
    ```

    Use instead (vllm profile):
    ```python
    os.environ[current_platform.device_control_env_var] = ",".join(map(str, device_ids))
    ```

    ## Fix
    vllm profile: `current_platform.device_control_env_var`. torch has no API naming the
    variable: the torch profile offers a display-only fix listing the per-vendor variables.
    Command text gets that display-only fix in every profile (the name stands inside a
    string).

    ## Fix safety
    Safe in the vllm profile (on CUDA platforms the variable is `CUDA_VISIBLE_DEVICES`);
    display-only in the torch profile.

    ## Profiles
    - `torch`: flag only (display-only fix).
    - `vllm`: `current_platform.device_control_env_var`.
    """

    code = "DL301"
    # not `rocm-guard`: under `if _is_hip:` the platform still names its own variable and
    # backend (`HIP_VISIBLE_DEVICES` is ROCm's)
    exempt_by = tuple(dict.fromkeys(IN_FILE + IN_PACKAGE))
    name = "cuda-visible-devices"
    summary = "`CUDA_VISIBLE_DEVICES` set or read from Python"

    valid = [
        Valid('import os\nENV = {"CUDA_VISIBLE_DEVICES": lambda: os.environ.get("CUDA_VISIBLE_DEVICES")}\n'),
        Valid('import os\nx = os.environ[current_platform.device_control_env_var]\n',
              profile="vllm"),
        Valid('logger.info("CUDA_VISIBLE_DEVICES is set")\n'),
        Valid('DOC = "set CUDA_VISIBLE_DEVICES to choose GPUs"\n'),
        # a parsed configuration read by its key chooses nothing
        Valid('gpus = cfg["CUDA_VISIBLE_DEVICES"]\n'),
        # command text in a message, or the CUDA arm of a ladder of visibility variables
        Valid('print(f"CUDA_VISIBLE_DEVICES={v}")\nlogger.info("CUDA_VISIBLE_DEVICES=%s", v)\n'
              'raise RuntimeError(f"CUDA_VISIBLE_DEVICES={v} hides every GPU")\n'),
        Valid('"""CUDA_VISIBLE_DEVICES=0 python run.py trains on the first GPU."""\n'),
        # the variable read only as the text of a log line or an error (not-a-device)
        Valid('import os\nlogger.warning("context: CUDA_VISIBLE_DEVICES=%s", '
              'os.environ.get("CUDA_VISIBLE_DEVICES"))\n'
              'logger.info(f"on gpu {g} (CUDA_VISIBLE_DEVICES='
              '{os.environ.get(\'CUDA_VISIBLE_DEVICES\', \'unset\')})")\n'
              'raise RuntimeError(f"no GPU in {os.environ[\'CUDA_VISIBLE_DEVICES\']}")\n'
              'sys.stderr.write(os.environ.get("CUDA_VISIBLE_DEVICES", ""))\n'),
        Valid('if is_torch_npu_available():\n    p = f"ASCEND_RT_VISIBLE_DEVICES={g}"\n'
              'elif is_torch_cuda_available():\n    p = f"CUDA_VISIBLE_DEVICES={g}"\n'),
        # nvidia-tool: a tool built on nvidia-smi numbers NVIDIA GPUs
        Valid('import os\nimport subprocess\n\n\ndef smi(q):\n'
              '    return subprocess.check_output(["nvidia-smi", q]).decode()\n\n\n'
              'def gpus():\n    v = os.environ.get("CUDA_VISIBLE_DEVICES")\n'
              '    return v.split(",") if v else smi("-L").splitlines()\n\n\n'
              'def pids():\n    return subprocess.check_output(["nvidia-smi", "-q"])\n'),
    ]
    invalid = [
        # under a ROCm-only test too (rocm-guard does not cover it): ROCm's variable is
        # HIP_VISIBLE_DEVICES
        Invalid('import os\nfrom sglang.srt.utils import is_hip\n\n_is_hip = is_hip()\n'
                'if _is_hip:\n    os.environ["CUDA_VISIBLE_DEVICES"] = "0,1"\n', None),
        # a test for CUDA *or ROCm* exempts only the torch.cuda API rules (cuda-alike-guard):
        # the platform names its own visibility variable (upstream vLLM, dev corpus 055)
        Invalid('import os\nif current_platform.is_cuda_alike():\n'
                '    os.environ["CUDA_VISIBLE_DEVICES"] = "0,1"\n',
                'import os\nfrom vllm.platforms import current_platform\n'
                'if current_platform.is_cuda_alike():\n'
                '    os.environ[current_platform.device_control_env_var] = "0,1"\n',
                profile="vllm"),
        Invalid('import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "0,1"\n',
                'import os\nfrom vllm.platforms import current_platform\n'
                'os.environ[current_platform.device_control_env_var] = "0,1"\n', profile="vllm"),
        Invalid('import os\nv = os.environ.get("CUDA_VISIBLE_DEVICES", "")\n', None),
        # ... but not one written into a file (a launcher script, an env file)
        Invalid('import os\nf.write("export CUDA_VISIBLE_DEVICES=" + '
                'os.environ["CUDA_VISIBLE_DEVICES"])\n', None),
        # ... and a read that decides something inside the message call is a choice
        Invalid('import os\nlogger.info("one GPU" if os.environ.get("CUDA_VISIBLE_DEVICES") '
                'else "all")\n', None),
        # a tool that also asks another vendor's tool serves several platforms (nvidia-tool's
        # limit), and a mention of nvidia-smi in a message is no run
        Invalid('import os\nimport subprocess\n\n\ndef smi():\n'
                '    return subprocess.check_output(["nvidia-smi"])\n\n\n'
                'def amd():\n    return subprocess.check_output(["rocm-smi"])\n\n\n'
                'def gpus():\n    return os.environ.get("CUDA_VISIBLE_DEVICES")\n', None),
        Invalid('import os\n\n\ndef gpus():\n    logger.info("see nvidia-smi")\n'
                '    return os.environ.get("CUDA_VISIBLE_DEVICES")\n', None),
        Invalid('env = {"CUDA_VISIBLE_DEVICES": "0", "PATH": p}\n',
                'from vllm.platforms import current_platform\n'
                'env = {current_platform.device_control_env_var: "0", "PATH": p}\n', profile="vllm"),
        # an environment mapping other than os.environ: a copy handed to a subprocess
        Invalid('import os\nimport subprocess\nenv = os.environ.copy()\nenv["CUDA_VISIBLE_DEVICES"] = "1"\n'
                'subprocess.run(cmd, env=env)\n',
                'import os\nimport subprocess\nfrom vllm.platforms import current_platform\n'
                'env = os.environ.copy()\nenv[current_platform.device_control_env_var] = "1"\n'
                'subprocess.run(cmd, env=env)\n', profile="vllm"),
        Invalid('import os\nenv = dict(os.environ, CUDA_VISIBLE_DEVICES="0")\n',
                'import os\nfrom vllm.platforms import current_platform\n'
                'env = dict(os.environ, **{current_platform.device_control_env_var: "0"})\n',
                profile="vllm"),
        Invalid('import os\nenv = dict(os.environ, CUDA_VISIBLE_DEVICES="0")\n', None),
        # shell command text that sets the variable (os.system, shell=True, a launcher)
        Invalid('import subprocess\nsubprocess.run(f"CUDA_VISIBLE_DEVICES={gpu} python train.py",'
                ' shell=True)\n', None),
        Invalid('prefix = f"CUDA_VISIBLE_DEVICES={gpus}" if gpus else ""\n', None),
        Invalid('cmd = "export CUDA_VISIBLE_DEVICES=0 && python x.py"\n', None, profile="vllm"),
        Invalid('def t(monkeypatch):\n    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")\n',
                'from vllm.platforms import current_platform\n'
                'def t(monkeypatch):\n    monkeypatch.setenv(current_platform.device_control_env_var, "1")\n',
                profile="vllm"),
    ]

    def check(self, facts):
        yield from self._keywords(facts)
        yield from self._command_prefixes(facts)
        for node in facts.strings:
            if node.value != "CUDA_VISIBLE_DEVICES" or not _is_env_use(facts, node):
                continue
            message = _message_call(facts, node)
            if message is not None:  # read only as the text of a log line or an error
                note_exempt(facts, node, message_text_reason(message, facts.path))
                continue
            if skipped(facts, node, api=True):
                continue
            expr = role_expr(facts, "visibility-env")
            s, e = facts.span(node)
            if expr is not None:
                fix = make_fix(facts, f"Use `{expr.text}`", [Edit(s, e, expr.text)], expr)
            else:
                fix = Fix(Applicability.DISPLAY_ONLY,
                          "Choose the variable per vendor: CUDA_VISIBLE_DEVICES (NVIDIA), "
                          "HIP_VISIBLE_DEVICES (AMD), ZE_AFFINITY_MASK (Intel XPU), "
                          "ASCEND_RT_VISIBLE_DEVICES (Ascend)", ())
            yield self.diagnostic(facts, node, "`CUDA_VISIBLE_DEVICES` only selects NVIDIA GPUs",
                                  fix)

    def _command_prefixes(self, facts):
        """`"CUDA_VISIBLE_DEVICES=0 python x.py"`, `f"CUDA_VISIBLE_DEVICES={gpus}"`: shell
        command text that Python builds (for `os.system`, `subprocess(..., shell=True)`, a
        launcher's command line) and that starts by setting the variable. Not a message (an
        argument of `print`, a logger, `warnings.warn`, an exception) nor a docstring."""
        for node in facts.env_prefixes:
            if _in_message(facts, node) or skipped(facts, node, api=True):
                continue
            s, e = facts.span(node)
            start = facts.text.find("CUDA_VISIBLE_DEVICES", s, e)
            if start < 0:
                continue  # an escape or a line continuation inside the name
            # the command's text names the variable: no expression of the profile can stand
            # in a string literal, so the per-vendor names are shown
            fix = Fix(Applicability.DISPLAY_ONLY, _DISPLAY, ())
            yield self.diagnostic(facts, (start, start + len("CUDA_VISIBLE_DEVICES")),
                                  "`CUDA_VISIBLE_DEVICES=` in a shell command only selects "
                                  "NVIDIA GPUs", fix)

    def _keywords(self, facts):
        """`dict(os.environ, CUDA_VISIBLE_DEVICES="0")`, `env.update(CUDA_VISIBLE_DEVICES=g)`:
        the variable as a keyword of a call building an environment."""
        for call in facts.calls:
            for kw in call.keywords:
                if kw.arg != "CUDA_VISIBLE_DEVICES" or skipped(facts, call, api=True):
                    continue
                expr = role_expr(facts, "visibility-env")
                fix = None
                if expr is not None:
                    s, e = facts.span(kw)
                    text = f"**{{{expr.text}: {facts.source(kw.value)}}}"
                    fix = make_fix(facts, f"Use `{expr.text}`", [Edit(s, e, text)], expr)
                else:
                    fix = Fix(Applicability.DISPLAY_ONLY, _DISPLAY, ())
                s, _ = facts.span(kw)
                yield self.diagnostic(facts, (s, s + len("CUDA_VISIBLE_DEVICES")),
                                      "`CUDA_VISIBLE_DEVICES` only selects NVIDIA GPUs", fix)


_DISPLAY = ("Choose the variable per vendor: CUDA_VISIBLE_DEVICES (NVIDIA), HIP_VISIBLE_DEVICES "
            "(AMD), ZE_AFFINITY_MASK (Intel XPU), ASCEND_RT_VISIBLE_DEVICES (Ascend)")


_MESSAGE_CALLS = {"print", "warn", "debug", "info", "warning", "error", "exception",
                  "critical", "log", "echo", "write", "format_exc"}


def _called_name(call) -> str:
    """The called name without a `_once` suffix (`logger.warning_once` -> `warning`)."""
    f = call.func
    name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
    return name[:-5] if name.endswith("_once") else name


def _is_message_name(base: str) -> bool:
    return base in _MESSAGE_CALLS or base.lower().endswith(("log", "error", "exception",
                                                            "warning"))


def _in_message(facts, node) -> bool:
    """`node` is (part of) a message: an argument of a print/log/warn call or of an exception,
    a raised or asserted value, or a statement of its own (a docstring)."""
    cur, par = node, facts.get_parent(node) or facts.tree_parent(node)
    while par is not None and not isinstance(par, ast.stmt):
        if isinstance(par, ast.Call) and par.func is not cur \
                and _is_message_name(_called_name(par)):
            return True
        cur, par = par, facts.get_parent(par) or facts.tree_parent(par)
    return isinstance(par, (ast.Raise, ast.Assert)) or (isinstance(par, ast.Expr)
                                                        and par.value is node)


def _message_call(facts, node):
    """The print/log/warn call or exception whose argument reads the variable at `node` (an
    `os.environ.get(...)` / `os.environ[...]` load), else None: not a store, a test or an
    assert, and not through a name stored first."""
    par = facts.get_parent(node)
    if isinstance(par, ast.Subscript) and not isinstance(par.ctx, ast.Load):
        return None
    if isinstance(par, ast.Call) and getattr(par.func, "attr", "") in ("setenv", "delenv",
                                                                      "pop", "setdefault"):
        return None
    cur, par = node, facts.get_parent(node)
    while par is not None and not isinstance(par, ast.stmt):
        if isinstance(par, ast.Call) and par.func is not cur:
            base = _called_name(par)
            if _to_a_file(par, base):
                return None  # `f.write(...)`, `print(..., file=f)`: a script or a config
            if _is_message_name(base):
                return par
        if isinstance(par, (ast.Compare, ast.BoolOp, ast.IfExp, ast.Lambda, ast.NamedExpr)):
            return None
        cur, par = par, facts.get_parent(par)
    return None


def _to_a_file(call, name) -> bool:
    """`f.write(...)` or `print(..., file=f)` to something other than the standard streams:
    the text goes into a file (a launcher script's `export CUDA_VISIBLE_DEVICES=...`, an env
    file), not to a reader."""
    if name == "write":
        target = call.func.value if isinstance(call.func, ast.Attribute) else None
    elif name == "print":
        target = next((k.value for k in call.keywords if k.arg == "file"), None)
        if target is None:
            return False
    else:
        return False
    return target is None or ast.unparse(target) not in ("sys.stdout", "sys.stderr")


def _is_env_use(facts, node) -> bool:
    par = facts.get_parent(node)
    if isinstance(par, ast.Subscript) and par.slice is node:
        if not isinstance(par.ctx, ast.Load):
            # `env["CUDA_VISIBLE_DEVICES"] = ...`: setting the variable in an environment
            # mapping (a copy of os.environ handed to a subprocess) is setting it
            return True
        return (facts.qualname(par.value) or facts.source(par.value)).endswith("environ")
    if isinstance(par, ast.Call) and par.args and par.args[0] is node:
        if _in_registry_value(facts, par):
            return False
        q = facts.qualname(par.func) or ""
        if q in _ENV_FUNCS:
            return True
        f = par.func
        return isinstance(f, ast.Attribute) and f.attr in _ENV_METHODS and \
            (f.attr in ("setenv", "delenv") or facts.source(f.value).endswith("environ"))
    if isinstance(par, ast.Compare) and par.left is node:
        return any(isinstance(op, (ast.In, ast.NotIn)) for op in par.ops)
    if isinstance(par, ast.Dict) and any(k is node for k in par.keys):
        value = par.values[[id(k) for k in par.keys].index(id(node))]
        # `{"CUDA_VISIBLE_DEVICES": lambda: os.environ.get("CUDA_VISIBLE_DEVICES")}` declares
        # the variable in an environment registry; it chooses no device
        return not _reads_same_variable(value)
    return False


def _in_registry_value(facts, call) -> bool:
    cur = facts.get_parent(call)
    while cur is not None and not isinstance(cur, ast.stmt):
        if isinstance(cur, ast.Dict):
            return any(isinstance(k, ast.Constant) and k.value == "CUDA_VISIBLE_DEVICES"
                       for k in cur.keys)
        cur = facts.get_parent(cur)
    return False


def _reads_same_variable(value) -> bool:
    return any(isinstance(n, ast.Constant) and n.value == "CUDA_VISIBLE_DEVICES"
               for n in ast.walk(value))


RULE = CudaVisibleDevices
