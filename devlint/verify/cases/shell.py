"""Built-in verify target: the MultiConnector-style shell script (the seed of DL302).

The script starts a prefill and a decode ``vllm serve`` on two devices (their commands built as
strings and ``eval``-ed), records the environment with ``vllm collect-env``, starts a proxy and
runs an accuracy client that must see no device. It runs here with stub commands first on
``PATH`` (``vllm``, ``python3``, ``curl``, ``nvidia-smi``) that log which device-visibility
variables they received, once per vendor kind (``DEVICE_TYPE``): the fixed script (devlint's
torch-profile fix) must hand each server its device through that vendor's variable (CUDA
``CUDA_VISIBLE_DEVICES``, ROCm ``HIP_VISIBLE_DEVICES``, XPU ``ZE_AFFINITY_MASK``, Ascend
``ASCEND_RT_VISIBLE_DEVICES``) and hide every device from the client; the unfixed script hands
them ``CUDA_VISIBLE_DEVICES`` whatever the kind, so its run fails for every kind but CUDA.

The script does not use torch: its result is the same on every device column (it runs on each,
so that records and comparisons treat it like the other cases). Needs bash (n/a without it).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from devlint.verify import case, expect_equal, not_applicable, note
from devlint.verify.cases._fixtures import golden_path, original_path

SCRIPT = "shell/run_multi_connector_accuracy_test.sh"
ORIGINAL_SCRIPT = original_path(SCRIPT)
SOURCES = (ORIGINAL_SCRIPT, golden_path(SCRIPT))

#: The kinds checked, with the variable each vendor's runtime reads.
KINDS = {
    "cuda": "CUDA_VISIBLE_DEVICES",
    "rocm": "HIP_VISIBLE_DEVICES",
    "xpu": "ZE_AFFINITY_MASK",
    "npu": "ASCEND_RT_VISIBLE_DEVICES",
}
#: Every visibility variable a stub reports (set or not), whatever the kind.
WATCHED = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "ZE_AFFINITY_MASK",
           "ASCEND_RT_VISIBLE_DEVICES", "HABANA_VISIBLE_MODULES", "MLU_VISIBLE_DEVICES",
           "TPU_VISIBLE_CHIPS", "NEURON_RT_VISIBLE_CORES")

# Each call writes its own file (servers start in the background, concurrently): the command
# line, then one VARIABLE=value line per visibility variable that is set.
_REPORT = "\n".join(
    f'if [ -n "${{{var}+x}}" ]; then printf \'%s\\n\' "{var}=${var}" >> "$f"; fi' for var in WATCHED)
# The script kills its servers on exit: a stub finishes its report first (it ignores SIGTERM,
# and the script waits for it), and moves it into place whole.
_STUB = """#!/bin/sh
trap '' TERM
f=$(mktemp "$DEVLINT_STUB_DIR/.call.XXXXXX")
printf '%s' "$(basename "$0") $*" | tr '\\n' ' ' > "$f"
printf '\\n' >> "$f"
{report}
mv "$f" "$DEVLINT_STUB_DIR/call.${{f##*.call.}}"
{tail}
"""
_STUBS = {
    "vllm": "exit 0",
    "python3": "exit 0",
    "curl": "exit 0",
    "nvidia-smi": "printf 'GPU 0\\nGPU 1\\n'",
}
# Ports and devices the script is given; each invocation is named by what it is.
ENV = {"PREFILL_GPU": "0", "DECODE_GPU": "1", "PREFILL_PORT": "8100", "DECODE_PORT": "8200", "PROXY_PORT": "8192",
       "MODEL_NAME": "stub/model"}


def _role(command: str) -> str:
    words = command.split()
    name = words[0] if words else ""
    if name == "vllm" and "serve" in words:
        port = words[words.index("--port") + 1] if "--port" in words else "?"
        return {"8100": "prefill server", "8200": "decode server"}.get(port, f"server on port {port}")
    if name == "vllm" and "collect-env" in words:
        return "collect-env"
    if name == "python3" and "pytest" in words:
        return "accuracy client"
    if name == "python3":
        return "proxy"
    return name


def run_script(path: Path, kind: str) -> dict:
    """Run the script at ``path`` with ``DEVICE_TYPE=kind`` and the stubs; returns what each
    started command received: ``{role: {variable: value}}`` (set variables only)."""
    bash = shutil.which("bash")
    if bash is None:
        not_applicable("bash is not installed")
    with tempfile.TemporaryDirectory(prefix="devlint-verify-shell-") as tmp:
        stubs = Path(tmp) / "bin"
        stubs.mkdir()
        for name, tail in _STUBS.items():
            stub = stubs / name
            stub.write_text(_STUB.format(report=_REPORT, tail=tail), encoding="utf-8")
            stub.chmod(0o755)
        calls = Path(tmp) / "calls"
        calls.mkdir()
        env = {k: v for k, v in os.environ.items() if k not in WATCHED}
        env.update(ENV, DEVICE_TYPE=kind, DEVLINT_STUB_DIR=str(calls), LOG_DIR=str(Path(tmp) / "logs"),
                   PATH=f"{stubs}{os.pathsep}{os.environ.get('PATH', '')}")
        (Path(tmp) / "logs").mkdir()
        proc = subprocess.run([bash, str(path)], env=env, cwd=tmp, capture_output=True, text=True, timeout=60)
        if proc.returncode != 0:
            raise RuntimeError(f"the script exited {proc.returncode}: {(proc.stderr or proc.stdout).strip()[-300:]}")
        received: dict[str, dict[str, str]] = {}
        for call in sorted(calls.glob("call.*")):
            command, *assigned = call.read_text(encoding="utf-8").split("\n")[:-1]
            role = _role(command)
            if role in ("curl", "nvidia-smi"):
                continue
            received[role] = dict(item.split("=", 1) for item in assigned)
        client_line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("Accuracy client devices")), None)
        if client_line:
            note(f"{kind}: {client_line}")
    return received


def expected(kind: str) -> dict:
    var = KINDS[kind]
    return {"prefill server": {var: "0"}, "decode server": {var: "1"}, "collect-env": {var: "0"},
            "proxy": {}, "accuracy client": {var: ""}}


def _fixed(kind: str):
    def fixed(device):
        received = run_script(golden_path(SCRIPT), kind)
        expect_equal(f"{KINDS[kind]} carries each command's devices", expected(kind), received)
        return received

    fixed.__doc__ = (f"The fixed script with DEVICE_TYPE={kind}: servers get {KINDS[kind]}=0 / =1, "
                     "the client sees no device.")
    fixed.__name__ = f"multi_connector_{kind}"
    return fixed


def _original(kind: str):
    def original(device):
        received = run_script(ORIGINAL_SCRIPT, kind)
        if received != expected(kind):
            wrong = next(role for role in expected(kind) if received.get(role) != expected(kind)[role])
            raise AssertionError(f"{wrong} received {received.get(wrong)}, a {kind} runtime reads {KINDS[kind]}")
        return received

    original.__name__ = f"original_multi_connector_{kind}"
    return original


for _kind in KINDS:
    case(_fixed(_kind), name=f"shell.multi_connector[{_kind}]", original=_original(_kind), sources=SOURCES)
