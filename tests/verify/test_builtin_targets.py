"""The built-in targets (devlint.verify.cases): they agree on the CPU, the unfixed seed code fails
there with the device error, and deliberately broken "fixed" variants are caught."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _env():
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")]))}
FIXTURES = os.path.join(ROOT, "fixtures")
CASES = os.path.join(ROOT, "devlint", "verify", "cases")
CUDA = torch.cuda.is_available()


def verify(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "devlint.verify", *args], cwd=cwd, capture_output=True,
                          text=True, env=_env())


@pytest.fixture(scope="module")
def builtin_json():
    proc = verify("--devices", "cpu", "--output-format", "json")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(proc.stdout)


def by_name(data):
    return {c["name"]: c for c in data["cases"]}


def test_builtin_targets_agree_on_cpu(builtin_json):
    cases = by_name(builtin_json)
    assert {"kv_connector.kv_layout", "kv_connector.mla_layout", "kda.recurrent_vs_chunked", "kda.varlen",
            "kda.gather_initial_states", "kda.test_module"} <= set(cases)
    for name, c in cases.items():
        assert c["status"] in ("ok", "n/a"), (name, c["results"]["cpu"]["message"])
    assert builtin_json["summary"]["exit_code"] == 0
    for name in ("kv_connector.kv_layout", "kda.recurrent_vs_chunked", "kda.gather_initial_states", "kda.test_module"):
        assert cases[name]["status"] == "ok"


def test_kv_slots_are_checked_bit_for_bit(builtin_json):
    for name in ("kv_connector.kv_layout", "kv_connector.mla_layout"):
        checks = by_name(builtin_json)[name]["results"]["cpu"]["checks"]
        names = [c["name"] for c in checks]
        assert sum("re-injected slots == saved slots" in n for n in names) == 2
        assert sum("untouched slots unchanged" in n for n in names) == 2
        assert all(c["ok"] and c["max_abs"] == 0.0 for c in checks)


@pytest.mark.skipif(CUDA, reason="checks the CPU-only behaviour of the unfixed seed code")
def test_unfixed_kv_connector_fails_on_cpu_with_the_device_error(builtin_json):
    for name in ("kv_connector.kv_layout", "kv_connector.mla_layout"):
        orig = by_name(builtin_json)[name]["results"]["cpu"]["original"]
        assert orig["status"] == "fails"
        assert "Torch not compiled with CUDA enabled" in orig["message"]
        assert orig["where"].startswith(
            os.path.join("devlint", "verify", "cases", "fixtures", "kv_connector", "example_connector.py") + ":")
        assert "in start_load_kv" in orig["where"]


@pytest.mark.skipif(CUDA, reason="checks the CPU-only behaviour of the unfixed seed code")
def test_unfixed_kda_test_module_fails_on_cpu(builtin_json):
    orig = by_name(builtin_json)["kda.test_module"]["results"]["cpu"]["original"]
    assert orig["status"] == "fails" and "CUDA" in orig["message"]


def test_fla_kernels_are_reported_not_applicable_on_cpu(builtin_json):
    fla = [c for c in builtin_json["cases"] if c["name"].startswith("kda.fla_")]
    assert len(fla) == 4
    for c in fla:
        assert c["results"]["cpu"]["status"] == "n/a"
        assert c["results"]["cpu"]["message"] == "fla's Triton kernels need a GPU"


def test_text_table(builtin_json):
    proc = verify("--devices", "cpu", "devlint.verify.cases.kv_connector")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "devlint verify: 2 cases on cpu (reference: cpu)"
    assert any(line.split() == ["case", "cpu"] for line in lines)
    assert any(line.split() == ["kv_connector.kv_layout", "ok", "(ref)"] for line in lines)
    if not CUDA:
        assert any(line.split() == ["original", "fails"] for line in lines)
        assert "original fails here: AssertionError: Torch not compiled with CUDA enabled" in proc.stdout


def _run_broken(tmp_path, body):
    (tmp_path / "broken_cases.py").write_text(textwrap.dedent(body))
    return verify("--devices", "cpu", str(tmp_path / "broken_cases.py"))


def test_off_by_one_slot_injection_is_caught(tmp_path):
    paged = open(os.path.join(FIXTURES, "kv_connector", "paged_kv.py")).read()
    broken = paged.replace("flat[:, slots, ...] = src_kv_cache", "flat[:, slots + 1, ...] = src_kv_cache")
    assert broken != paged
    (tmp_path / "paged_kv_broken.py").write_text(broken)
    proc = _run_broken(tmp_path, f"""
        import importlib.util, pathlib, sys
        spec = importlib.util.spec_from_file_location(
            "kv_cases_for_test", {os.path.join(CASES, "kv_connector.py")!r})
        kv = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(kv)
        from devlint.verify import case

        BROKEN = pathlib.Path(__file__).with_name("paged_kv_broken.py")

        @case(name="broken_kv", tolerance="exact")
        def broken_kv(device):
            return kv.run_connector(kv.golden_path(kv.CONNECTOR), device, "kv", paged_kv=BROKEN)
    """)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "broken_kv" in proc.stdout and "MISMATCH" in proc.stdout
    assert "layers.0: re-injected slots == saved slots: <result>: not bit-identical" in proc.stdout


def test_transposed_state_is_caught(tmp_path):
    proc = _run_broken(tmp_path, f"""
        import importlib.util
        from devlint.verify import case

        spec = importlib.util.spec_from_file_location("kda_ref_for_test", {os.path.join(FIXTURES, "kda", "kda_reference.py")!r})
        ref = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(ref)

        def inputs(device):
            return ref.make_kda_inputs(1, 24, 1, 64, 32, seed=5, device=device)

        def original(device):
            o, ht = ref.kda_recurrent(**inputs(device), output_final_state=True)
            return {{"o": o, "ht": ht}}

        @case(name="transposed_state", original=original)
        def transposed_state(device):
            x = inputs(device)
            h0 = x.pop("initial_state")
            # the bug: the [K, V] state read as if it were stored [V, K]
            o, ht = ref.kda_recurrent(**x, initial_state=h0.transpose(-1, -2).reshape(h0.shape), output_final_state=True)
            return {{"o": o, "ht": ht}}
    """)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "original differs from the fixed code on cpu: o: relative RMS error" in proc.stdout


def test_broken_gather_is_caught(tmp_path):
    golden = open(os.path.join(FIXTURES, "golden", "torch", "kda", "gather_initial_states.py")).read()
    broken = golden.replace("return torch.where(keep, rows, torch.zeros_like(rows))", "return rows")
    assert broken != golden
    (tmp_path / "gather_broken.py").write_text(broken)
    proc = _run_broken(tmp_path, f"""
        import importlib.util, pathlib
        spec = importlib.util.spec_from_file_location("kda_cases_for_test", {os.path.join(CASES, "kda.py")!r})
        kda = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(kda)
        from devlint.verify import case

        @case(name="broken_gather", tolerance="exact", original=lambda d: kda.run_gather(kda.ORIGINAL_GATHER, d))
        def broken_gather(device):
            return kda.run_gather(pathlib.Path(__file__).with_name("gather_broken.py"), device)
    """)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "gathered rows (zero where no initial state)" in proc.stdout and "MISMATCH" in proc.stdout


def test_shell_script_hands_each_vendor_its_visibility_variable(builtin_json):
    cases = by_name(builtin_json)
    expected = {"cuda": "CUDA_VISIBLE_DEVICES", "rocm": "HIP_VISIBLE_DEVICES", "xpu": "ZE_AFFINITY_MASK",
                "npu": "ASCEND_RT_VISIBLE_DEVICES"}
    for kind, var in expected.items():
        cpu = cases[f"shell.multi_connector[{kind}]"]["results"]["cpu"]
        assert cpu["status"] == "ok"
        (check,) = cpu["checks"]
        assert check["ok"] and check["name"] == f"{var} carries each command's devices"
        orig = cpu["original"]
        if kind == "cuda":
            assert orig["status"] == "ok"
        else:  # the unfixed script hands every vendor CUDA_VISIBLE_DEVICES
            assert orig["status"] == "fails"
            assert orig["message"] == (f"AssertionError: prefill server received {{'CUDA_VISIBLE_DEVICES': '0'}}, "
                                       f"a {kind} runtime reads {var}")


def test_broken_shell_fix_is_caught(tmp_path):
    golden = open(os.path.join(FIXTURES, "golden", "torch", "shell", "run_multi_connector_accuracy_test.sh")).read()
    # The decode server's prefix left as it was: a fix that missed one of the two eval'ed commands.
    broken = golden.replace('BASE_CMD="$DEVICE_VISIBILITY_ENV=$DECODE_GPU', 'BASE_CMD="CUDA_VISIBLE_DEVICES=$DECODE_GPU')
    assert broken != golden
    (tmp_path / "broken.sh").write_text(broken)
    proc = _run_broken(tmp_path, f"""
        import pathlib
        from devlint.verify import case, expect_equal
        from devlint.verify.cases import shell

        @case(name="broken_shell")
        def broken_shell(device):
            got = shell.run_script(pathlib.Path(__file__).with_name("broken.sh"), "xpu")
            expect_equal("ZE_AFFINITY_MASK carries each command's devices", shell.expected("xpu"), got)
            return got
    """)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "broken_shell" in proc.stdout and "MISMATCH" in proc.stdout
    assert "MISMATCH: ZE_AFFINITY_MASK carries each command's devices: decode server: key mismatch: " \
           "missing keys ['ZE_AFFINITY_MASK'], extra keys ['CUDA_VISIBLE_DEVICES']" in proc.stdout
