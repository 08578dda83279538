"""Shared helpers for the shell (DL302) tests: stub commands on PATH that record which device
visibility variables they received, and a runner for shell scripts in a clean environment."""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "fixtures" / "shell" / "run_multi_connector_accuracy_test.sh"
# the shell fix does not depend on the profile: the torch golden is the one, the vllm copy
# must equal it (tests/test_seed_fixtures.py compares both with the fixer's output)
GOLDEN = REPO / "fixtures" / "golden" / "torch" / "shell" / "run_multi_connector_accuracy_test.sh"

# Variables a stub reports when they are in its environment.
REPORTED = (
    "CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ZE_AFFINITY_MASK", "ASCEND_RT_VISIBLE_DEVICES",
    "HABANA_VISIBLE_MODULES", "MLU_VISIBLE_DEVICES", "TPU_VISIBLE_CHIPS", "NEURON_RT_VISIBLE_CORES",
    "A", "B", "TEST_MODEL", "VLLM_LOGGING_LEVEL", "VLLM_NIXL_SIDE_CHANNEL_PORT",
)

_RECORDER = r"""#!/bin/bash
# Stub: append "name|VAR=value|...|args=ARGS" to $STUB_LOG (one write, so lines never mix).
line="$(basename "$0")"
for v in $(compgen -e | sort); do
  case " __REPORTED__ " in
    *" $v "*) line+="|$v=${!v}" ;;
  esac
done
line+="|args=$*"
printf '%s\n' "$line" >> "$STUB_LOG"
"""

# curl stands in for "is the server on PORT up?": it answers once a stub server for that port
# has recorded a start that no earlier answer accounted for (a script may start a server on the
# same port again after killing the first), so scripts that wait for servers finish
# deterministically, whatever the machine's load.
_CURL = r"""#!/bin/bash
url="${@: -1}"
port="${url#*localhost:}"
port="${port%%/*}"
answered="$STUB_ROOT/curl-answered-$port"
seen=$(cat "$answered" 2>/dev/null || echo 0)
for _ in $(seq 3000); do
  started=$(grep -c -- "--port $port" "$STUB_LOG" 2>/dev/null)
  if [ "${started:-0}" -gt "$seen" ]; then echo $((seen + 1)) > "$answered"; exit 0; fi
  /bin/sleep 0.01
done
exit 7
"""

_NVIDIA_SMI = """#!/bin/bash
printf 'Stub GPU A\\nStub GPU B\\n'
"""

_GIT = """#!/bin/bash
echo "$STUB_ROOT"
"""

_NOOP = "#!/bin/bash\nexit 0\n"


@dataclass
class Call:
    command: str
    env: dict
    args: str


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    calls: list

    def by(self, command: str, arg_part: str = "") -> list:
        return [c for c in self.calls if c.command == command and arg_part in c.args]

    def one(self, command: str, arg_part: str = "") -> Call:
        found = self.by(command, arg_part)
        assert len(found) == 1, (command, arg_part, self.calls)
        return found[0]


def _write(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


class Stubs:
    def __init__(self, root: Path):
        self.root = root
        self.bin = root / "bin"
        self.bin.mkdir()
        self.log = root / "calls.log"
        recorder = _RECORDER.replace("__REPORTED__", " ".join(REPORTED))
        for name in ("vllm", "python3", "probe", "pkill"):
            _write(self.bin / name, recorder)
        _write(self.bin / "curl", _CURL)
        _write(self.bin / "nvidia-smi", _NVIDIA_SMI)
        _write(self.bin / "git", _GIT)
        _write(self.bin / "sleep", _NOOP)

    def run(self, script: Path, shell: str = "bash", device_type: str | None = None,
            extra_env: dict | None = None) -> Run:
        if self.log.exists():
            self.log.unlink()
        for answered in self.root.glob("curl-answered-*"):
            answered.unlink()
        self.log.touch()
        env = {
            "PATH": f"{self.bin}{os.pathsep}/usr/local/bin{os.pathsep}/usr/bin{os.pathsep}/bin",
            "HOME": str(self.root),
            "LANG": "C",
            "STUB_LOG": str(self.log),
            "STUB_ROOT": str(self.root),
            "LOG_DIR": str(self.root),
        }
        if device_type is not None:
            env["DEVICE_TYPE"] = device_type
        env.update(extra_env or {})
        proc = subprocess.run([shutil.which(shell) or shell, str(script)], env=env,
                              cwd=self.root, capture_output=True, text=True, timeout=300,
                              check=False)
        calls = []
        for line in self.log.read_text().splitlines():
            head, _, args = line.partition("|args=")
            name, *pairs = head.split("|")
            calls.append(Call(name, dict(p.split("=", 1) for p in pairs), args))
        return Run(proc.returncode, proc.stdout, proc.stderr, calls)


@pytest.fixture
def stubs(tmp_path):
    return Stubs(tmp_path)


def visibility(call: Call) -> dict:
    """The device-visibility variables a stub received."""
    return {k: v for k, v in call.env.items() if k in REPORTED[:8]}
