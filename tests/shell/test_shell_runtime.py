"""Run fixed scripts with stub commands on PATH (see conftest.py) and check which visibility
variable reaches each command: under the default DEVICE_TYPE the fixed script must behave
exactly like the original; under DEVICE_TYPE=xpu (rocm, npu, hpu) the device's own variable
must arrive and CUDA_VISIBLE_DEVICES must not."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from conftest import FIXTURE, GOLDEN, visibility

from devlint.shell import fix_shell, lint_shell

CONTEXTS_BASH = r"""#!/bin/bash
set -eu
GPU=3
A=1 CUDA_VISIBLE_DEVICES=$GPU B=2 probe prefix
export CUDA_VISIBLE_DEVICES=4
probe export
echo "read=$CUDA_VISIBLE_DEVICES default=${CUDA_VISIBLE_DEVICES:-none}"
CMD="CUDA_VISIBLE_DEVICES=5 probe evaldq"
eval "$CMD"
CMD2='CUDA_VISIBLE_DEVICES=$GPU probe evalsq'
eval "$CMD2"
bash -c 'CUDA_VISIBLE_DEVICES=7 probe bashc'
env CUDA_VISIBLE_DEVICES=8 probe envarg
bash <<END_OF_SCRIPT
CUDA_VISIBLE_DEVICES=10 probe heredoc
END_OF_SCRIPT
unset CUDA_VISIBLE_DEVICES
probe unset
CUDA_VISIBLE_DEVICES=9
echo "plain=$CUDA_VISIBLE_DEVICES"
probe plain
"""

CONTEXTS_SH = r"""#!/bin/sh
set -eu
CUDA_VISIBLE_DEVICES=3 probe prefix
export CUDA_VISIBLE_DEVICES=4
probe export
CMD="CUDA_VISIBLE_DEVICES=5 probe evaldq"
eval "$CMD"
sh -c 'CUDA_VISIBLE_DEVICES=7 probe shc'
unset CUDA_VISIBLE_DEVICES
probe unset
"""

# what each probe must see: {label: value of the visibility variable, or None for unset}
EXPECTED_BASH = {"prefix": "3", "export": "4", "evaldq": "5", "evalsq": "3", "bashc": "7",
                 "envarg": "8", "heredoc": "10", "unset": None, "plain": None}
EXPECTED_SH = {"prefix": "3", "export": "4", "evaldq": "5", "shc": "7", "unset": None}
DEVICE_VARS = {None: "CUDA_VISIBLE_DEVICES", "cuda": "CUDA_VISIBLE_DEVICES",
               "xpu": "ZE_AFFINITY_MASK", "rocm": "HIP_VISIBLE_DEVICES",
               "npu": "ASCEND_RT_VISIBLE_DEVICES", "hpu": "HABANA_VISIBLE_MODULES"}


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def probes(run) -> dict:
    assert run.returncode == 0, run.stderr
    return {c.args: visibility(c) for c in run.calls if c.command == "probe"}


def expected(table: dict, var: str) -> dict:
    return {label: ({var: value} if value is not None else {}) for label, value in table.items()}


@pytest.mark.parametrize("device_type", [None, "cuda", "xpu", "rocm", "npu", "hpu"])
def test_bash_contexts_reach_each_command(stubs, tmp_path, device_type):
    fixed = fix_shell(CONTEXTS_BASH, "contexts.sh")
    assert lint_shell(fixed, "contexts.sh") == []
    run = stubs.run(write(tmp_path, "fixed.sh", fixed), device_type=device_type)
    assert probes(run) == expected(EXPECTED_BASH, DEVICE_VARS[device_type])
    prefix = run.one("probe", "prefix")
    assert (prefix.env["A"], prefix.env["B"]) == ("1", "2")  # the other prefixes are kept
    assert "read=4 default=4\n" in run.stdout and "plain=9\n" in run.stdout


def test_fixed_bash_script_behaves_like_the_original_by_default(stubs, tmp_path):
    original = stubs.run(write(tmp_path, "orig.sh", CONTEXTS_BASH))
    fixed = stubs.run(write(tmp_path, "fixed.sh", fix_shell(CONTEXTS_BASH, "contexts.sh")))
    assert original.returncode == fixed.returncode == 0, (original.stderr, fixed.stderr)
    assert original.calls == fixed.calls
    assert original.stdout == fixed.stdout


@pytest.mark.parametrize("device_type", [None, "xpu"])
def test_posix_sh_contexts_reach_each_command(stubs, tmp_path, device_type):
    fixed = fix_shell(CONTEXTS_SH, "contexts.sh")
    assert lint_shell(fixed, "contexts.sh") == []
    run = stubs.run(write(tmp_path, "fixed.sh", fixed), shell="sh", device_type=device_type)
    assert probes(run) == expected(EXPECTED_SH, DEVICE_VARS[device_type])


# ── the fixture: two servers on two devices ───────────────────────────────────────────────────

def servers(run) -> dict:
    assert run.returncode == 0, run.stderr
    out = {}
    for port in ("8100", "8200"):
        call = run.one("vllm", f"--port {port}")
        assert call.args.startswith("serve Qwen/Qwen3-0.6B")
        assert call.env["VLLM_NIXL_SIDE_CHANNEL_PORT"] == {"8100": "5559", "8200": "5659"}[port]
        out[port] = visibility(call)
    return out


@pytest.mark.parametrize("device_type", [None, "cuda", "xpu", "npu"])
def test_golden_fixture_puts_each_server_on_its_device(stubs, device_type):
    run = stubs.run(GOLDEN, device_type=device_type)
    var = DEVICE_VARS[device_type]
    assert servers(run) == {"8100": {var: "0"}, "8200": {var: "1"}}  # eval'd strings
    env_call = run.one("vllm", "collect-env")  # command prefix, other prefix kept
    assert visibility(env_call) == {var: "0"} and env_call.env["VLLM_LOGGING_LEVEL"] == "DEBUG"
    client = run.one("python3", "-m pytest")  # export
    assert visibility(client) == {var: ""} and client.env["TEST_MODEL"] == "Qwen/Qwen3-0.6B"
    assert "Accuracy client devices: ''" in run.stdout  # read
    proxy = run.one("python3", "toy_proxy_server.py")
    assert visibility(proxy) == {}


def test_golden_fixture_behaves_like_the_original_by_default(stubs):
    original = stubs.run(FIXTURE)
    fixed = stubs.run(GOLDEN)
    assert original.returncode == fixed.returncode == 0, (original.stderr, fixed.stderr)

    def calls(run, script_dir):  # servers start in the background: compare sorted
        return sorted((c.command, c.args.replace(str(script_dir), "<dir>"), c.env)
                      for c in run.calls)

    assert calls(original, FIXTURE.parent) == calls(fixed, GOLDEN.parent)
    assert original.stdout == fixed.stdout


def test_original_fixture_pins_cuda_even_on_xpu(stubs):
    """The bug the rule exists for: with DEVICE_TYPE=xpu the unfixed script still sets only
    CUDA_VISIBLE_DEVICES, so both servers would see every XPU."""
    run = stubs.run(FIXTURE, device_type="xpu")
    assert servers(run) == {"8100": {"CUDA_VISIBLE_DEVICES": "0"},
                            "8200": {"CUDA_VISIBLE_DEVICES": "1"}}


def test_extra_serve_args_still_reach_the_servers(stubs):
    run = stubs.run(GOLDEN, device_type="xpu",
                    extra_env={"SERVE_EXTRA_ARGS": "--seed=1,--max-model-len=64"})
    assert servers(run) == {"8100": {"ZE_AFFINITY_MASK": "0"}, "8200": {"ZE_AFFINITY_MASK": "1"}}
    for port in ("8100", "8200"):
        assert run.one("vllm", f"--port {port}").args.endswith("--seed=1 --max-model-len=64")


# ── the real pre-fix vLLM script (only where the vLLM mirror is available) ────────────────────

VLLM_GIT_DIR = Path(os.environ.get("DEVLINT_VLLM_GIT_DIR",
                                   "/work/.mirror/local-inference-lab+vllm/repo"))
VLLM_SCRIPT = "tests/v1/kv_connector/nixl_integration/run_multi_connector_accuracy_test.sh"
VLLM_COMMIT = "c9dddc144"  # added the script, CUDA_VISIBLE_DEVICES hardcoded (pre-XPU change)


def _vllm_script(tmp_path: Path) -> Path:
    if not VLLM_GIT_DIR.is_dir():
        pytest.skip("vLLM mirror not available (set DEVLINT_VLLM_GIT_DIR)")
    proc = subprocess.run(
        ["git", f"--git-dir={VLLM_GIT_DIR}", "show", f"{VLLM_COMMIT}:{VLLM_SCRIPT}"],
        capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        pytest.skip(f"cannot read {VLLM_SCRIPT} at {VLLM_COMMIT}: {proc.stderr.strip()}")
    p = tmp_path / "run_multi_connector_accuracy_test.sh"  # vLLM's file: temporary, never committed
    p.write_text(proc.stdout)
    return p


@pytest.mark.parametrize("device_type", [None, "xpu"])
def test_real_vllm_script_is_flagged_fixed_and_runs(stubs, tmp_path, device_type):
    script = _vllm_script(tmp_path)
    text = script.read_text()
    diags = lint_shell(text, str(script))
    lines = text.splitlines()
    assert [lines[d.location[0] - 1].strip() for d in diags] == [
        'BASE_CMD="CUDA_VISIBLE_DEVICES=$PREFILL_GPU \\',
        'BASE_CMD="CUDA_VISIBLE_DEVICES=$DECODE_GPU \\']
    fixed = script.with_name("fixed.sh")
    fixed.write_text(fix_shell(text, str(script)))
    assert subprocess.run(["bash", "-n", str(fixed)], check=False).returncode == 0
    run = stubs.run(fixed, device_type=device_type)
    # The script's EXIT trap runs `kill $(jobs -pr)`: it fails (status 2) when no stub server
    # is still running, and succeeds (0) when one still is, a race in the script itself that
    # either run can lose. Both runs must end in one of those two ways, as the original does.
    original = stubs.run(script, device_type=device_type)
    assert run.returncode in (0, 2) and original.returncode in (0, 2), run.stderr[-2000:]
    assert "All MultiConnector accuracy tests passed!" in run.stdout
    # (the proxy starts in the background and may be killed by that trap before its stub
    # records anything, in either run: it is not compared)
    for r in (run, original):
        assert len(r.by("python3", "-m pytest")) == 2 and len(r.by("vllm")) == 4
    var = DEVICE_VARS[device_type]
    serves = [c for c in run.calls if c.command == "vllm"]
    assert len(serves) == 4  # prefill + decode, for the normal and the cross-layer layout
    assert {(c.args.split("--port ")[1].split()[0], visibility(c)[var]) for c in serves} == {
        ("8100", "0"), ("8200", "1")}
    assert all(set(visibility(c)) == {var} for c in serves)
