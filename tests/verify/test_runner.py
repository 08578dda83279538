"""The runner and the `verify` command on small targets written for each test: statuses, the
original-vs-fixed rule, exit codes 0/1/2, the JSON schema, the pytest plugin."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")

from click.testing import CliRunner  # noqa: E402

from devlint.verify import available_devices, load_target, run_cases, same_on_all_devices  # noqa: E402
from devlint.verify.cli import verify_command  # noqa: E402
from devlint.verify.runner import VerifyUsageError  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _env():
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")]))}


def target(tmp_path, body, name="cases.py"):
    path = tmp_path / name
    path.write_text("import torch\nfrom devlint.verify import case, expect_close, not_applicable, note\n\n"
                    + textwrap.dedent(body))
    return str(path)


def invoke(*args):
    result = CliRunner().invoke(verify_command, list(args))
    return result.exit_code, result.output


AGREE = """
def original(device):
    return {"y": torch.arange(6.0).reshape(2, 3).to("cuda") * 2, "idx": torch.arange(3).to("cuda")}

@case(name="double", original=original)
def double(device):
    return {"y": torch.arange(6.0).reshape(2, 3).to(device) * 2, "idx": torch.arange(3, device=device)}
"""


def test_agreeing_case_exits_0_and_original_failure_is_reported(tmp_path):
    code, out = invoke(target(tmp_path, AGREE), "--devices", "cpu")
    assert code == 0, out
    assert "double" in out and "ok (ref)" in out
    if not torch.cuda.is_available():
        assert "original fails here: AssertionError: Torch not compiled with CUDA enabled" in out


def test_original_that_runs_and_differs_is_a_mismatch(tmp_path):
    path = target(tmp_path, """
    def original(device):
        return torch.ones(3, device=device)

    @case(name="wrong_fix", original=original)
    def fixed(device):
        return torch.ones(3, device=device) * 1.5
    """)
    code, out = invoke(path, "--devices", "cpu")
    assert code == 1, out
    assert "MISMATCH" in out
    assert "original differs from the fixed code on cpu: <result>: relative RMS error" in out


def test_error_in_fixed_code_exits_1_with_location(tmp_path):
    path = target(tmp_path, """
    @case(name="boom")
    def boom(device):
        raise RuntimeError("kernel exploded")
    """)
    code, out = invoke(path, "--devices", "cpu")
    assert code == 1
    assert "ERROR: RuntimeError: kernel exploded" in out
    assert "cases.py:" in out and "in boom" in out


def test_failed_expectation_is_a_mismatch(tmp_path):
    path = target(tmp_path, """
    @case(name="checked")
    def checked(device):
        expect_close("state", torch.zeros(2, 3), torch.zeros(3, 2))
        return torch.zeros(1)
    """)
    code, out = invoke(path, "--devices", "cpu")
    assert code == 1
    assert "MISMATCH: state: <result>: shape mismatch: reference [2, 3] vs got [3, 2]" in out


def test_not_applicable_is_visible_and_not_a_failure(tmp_path):
    path = target(tmp_path, """
    @case(name="gpu_only")
    def gpu_only(device):
        if device.type == "cpu":
            not_applicable("needs a GPU")
        return torch.ones(1, device=device)
    """)
    code, out = invoke(path, "--devices", "cpu")
    assert code == 0
    assert "n/a: needs a GPU" in out


def test_json_schema(tmp_path):
    code, out = invoke(target(tmp_path, AGREE), "--devices", "cpu", "--output-format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["schema_version"] == 1
    assert set(data) >= {"devlint_version", "environment", "devices", "reference", "cases", "summary"}
    assert data["devices"] == ["cpu"] and data["reference"] == "cpu"
    assert data["environment"]["torch"] == torch.__version__
    (c,) = data["cases"]
    assert c["name"] == "double" and c["status"] == "ok" and c["has_original"] is True
    cpu = c["results"]["cpu"]
    assert set(cpu) == {"status", "message", "where", "is_reference", "compared_with", "figures",
                        "comparisons", "checks", "notes", "original"}
    assert cpu["status"] == "ok" and cpu["is_reference"] is True
    assert set(cpu["original"]) == {"status", "message", "where", "figures", "comparisons", "checks", "notes"}
    assert data["summary"] == {"cases": 1, "ok": 1, "mismatch": 0, "error": 0, "n/a": 0, "exit_code": 0}


def test_json_comparison_records_figures(tmp_path):
    path = target(tmp_path, """
    def original(device):
        return {"y": torch.tensor([3.0, 4.0], device=device)}

    @case(name="close", original=original, tolerance=0.5)
    def close(device):
        return {"y": torch.tensor([3.0, 4.5], device=device)}
    """)
    code, out = invoke(path, "--devices", "cpu", "--output-format", "json")
    assert code == 0
    orig = json.loads(out)["cases"][0]["results"]["cpu"]["original"]
    assert orig["status"] == "ok"
    (leaf,) = orig["comparisons"]
    assert leaf["path"] == "y" and leaf["kind"] == "float" and leaf["ok"] is True
    assert leaf["max_abs"] == pytest.approx(0.5) and leaf["threshold"] == 0.5
    # the fixed result is the reference: rms([3, 4.5]) = sqrt(14.625)
    assert leaf["rel_rms"] == pytest.approx((0.125 ** 0.5) / (14.625 ** 0.5), rel=1e-6)


def test_unknown_device_is_a_usage_error(tmp_path):
    code, out = invoke(target(tmp_path, AGREE), "--devices", "cpu,tpu")
    assert code == 2
    assert "device 'tpu' is not available here" in out


def test_missing_target_is_a_usage_error(tmp_path):
    code, out = invoke(str(tmp_path / "nope.py"))
    assert code == 2 and "no such file" in out


def test_target_without_cases_is_a_usage_error(tmp_path):
    path = tmp_path / "empty.py"
    path.write_text("x = 1\n")
    code, out = invoke(str(path))
    assert code == 2 and "no verification cases found" in out
    with pytest.raises(VerifyUsageError):
        load_target(str(path))


def test_target_that_raises_on_import_is_a_usage_error(tmp_path):
    path = tmp_path / "bad.py"
    path.write_text("raise ImportError('no such thing')\n")
    code, out = invoke(str(path))
    assert code == 2 and "error while loading: ImportError: no such thing" in out


def test_torch_missing_is_an_environment_error(tmp_path, monkeypatch):
    path = target(tmp_path, AGREE)
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` now raises ImportError
    code, out = invoke(path)
    assert code == 2
    assert "devlint verify needs PyTorch" in out and "devlint[verify]" in out


def test_module_path_target(tmp_path, monkeypatch):
    (tmp_path / "my_cases_mod.py").write_text(textwrap.dedent("""
        import torch
        from devlint.verify import case

        @case(name="from_module")
        def from_module(device):
            return torch.arange(4, device=device)
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    code, out = invoke("my_cases_mod", "--devices", "cpu")
    assert code == 0 and "from_module" in out


def test_list_option(tmp_path):
    code, out = invoke(target(tmp_path, AGREE), "--list")
    assert code == 0 and out.startswith("double\t")


def test_run_cases_api_across_every_device(tmp_path):
    cases = load_target(target(tmp_path, AGREE))
    run = run_cases(cases, available_devices())
    assert run.exit_code == 0
    assert run.reference == "cpu"
    assert set(run.results[0].devices) == set(available_devices())


def test_same_on_all_devices_returns_cpu_results():
    results = same_on_all_devices(lambda d, n: torch.arange(n, device=d).cumsum(0), 5)
    assert set(results) == set(available_devices())
    assert torch.equal(results["cpu"], torch.tensor([0, 1, 3, 6, 10]))


def test_same_on_all_devices_raises_on_failure():
    def broken(device):
        raise ValueError("no")

    with pytest.raises(AssertionError, match="broken does not give the same result on every device"):
        same_on_all_devices(broken)


def test_importing_devlint_verify_does_not_import_torch():
    code = "import sys, devlint, devlint.verify, devlint.verify.cli; assert 'torch' not in sys.modules"
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          env=_env())
    assert proc.returncode == 0, proc.stderr


def test_pytest_plugin_device_fixture(tmp_path):
    test_file = tmp_path / "test_dev.py"
    test_file.write_text(textwrap.dedent("""
        import torch
        from devlint.verify.pytest_plugin import same_on_all_devices

        def test_ones(device):
            assert isinstance(device, torch.device)
            assert torch.ones(2, device=device).sum().item() == 2

        def test_same(device):
            same_on_all_devices(lambda d: torch.arange(3, device=d) * 2)
    """))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "devlint.verify.pytest_plugin", "-p", "no:cacheprovider",
         "-v", "--devlint-devices", "cpu", str(test_file)],
        cwd=tmp_path, capture_output=True, text=True, env=_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "test_ones[cpu] PASSED" in proc.stdout and "test_same[cpu] PASSED" in proc.stdout
