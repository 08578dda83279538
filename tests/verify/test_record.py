"""`devlint verify --record DIR` / `--compare DIR [DIR...]`: records round-trip every result
structure, comparisons use the same code and tolerances as a local run, and records of another
devlint version, other case sources or other cases are refused (exit 2) rather than compared."""
import json
import textwrap

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")

from click.testing import CliRunner  # noqa: E402

from devlint.verify.cli import verify_command  # noqa: E402
from devlint.verify.record import (  # noqa: E402
    MANIFEST,
    TENSORS,
    RecordError,
    compare_records,
    decode_value,
    encode_value,
    read_record,
)

CASES = """
import os
import torch
from devlint.verify import case, expect_equal, not_applicable, note

SHIFT = float(os.environ.get("DEVLINT_TEST_SHIFT", "0"))


def original(device):
    # The same structure as the fixed code's result (on a CUDA machine it runs and is compared).
    x = torch.arange(4.0).to("cuda") * 2 + SHIFT
    return {"x": x, "n": torch.arange(3).to("cuda"), "meta": ("dims", 4, None, [True, 1.5])}


@case(name="double", original=original)
def double(device):
    x = torch.arange(4.0, device=device) * 2 + SHIFT
    expect_equal("doubled", torch.arange(0.0, 8.0, 2.0), (x - SHIFT).cpu())
    note("a note")
    return {"x": x, "n": torch.arange(3, device=device), "meta": ("dims", 4, None, [True, 1.5])}


@case(name="exact_sum", tolerance="exact")
def exact_sum(device):
    return torch.ones(5, dtype=torch.bfloat16, device=device).cumsum(0)


@case(name="gpu_only")
def gpu_only(device):
    if device.type == "cpu":
        not_applicable("needs a GPU")
    return torch.ones(1, device=device)
"""


def invoke(*args, env=None):
    result = CliRunner().invoke(verify_command, list(args), env=env or {})
    return result.exit_code, result.output


@pytest.fixture
def cases_file(tmp_path):
    path = tmp_path / "my_cases.py"
    path.write_text(textwrap.dedent(CASES))
    return path


def record(cases_file, folder, label, env=None):
    code, out = invoke(str(cases_file), "--devices", "cpu", "--record", str(folder), "--label", label, env=env)
    assert code == 0, out
    return folder


def test_value_round_trip():
    tensors = {}
    value = {"a": torch.arange(6).reshape(2, 3), 3: (torch.zeros(0), [torch.ones(2, dtype=torch.bfloat16), None]),
             "flags": torch.tensor([True, False]), "s": "text", "f": 1.25, "b": False, "size": torch.Size([2, 3])}
    node = json.loads(json.dumps(encode_value(value, "case/cpu", tensors)))
    back = decode_value(node, tensors)
    assert set(back) == set(value)
    assert torch.equal(back["a"], value["a"]) and back["a"].dtype == torch.int64
    assert back[3][0].shape == (0,) and back[3][1][0].dtype == torch.bfloat16 and back[3][1][1] is None
    assert isinstance(back[3], tuple) and isinstance(back[3][1], list)
    assert torch.equal(back["flags"], value["flags"])
    assert (back["s"], back["f"], back["b"], back["size"]) == ("text", 1.25, False, (2, 3))
    assert all(k.startswith("case/cpu/") for k in tensors)


def test_record_then_compare_agrees(tmp_path, cases_file):
    a = record(cases_file, tmp_path / "a", "machine-a")
    b = record(cases_file, tmp_path / "b", "machine-b")
    assert sorted(p.name for p in a.iterdir()) == [MANIFEST, TENSORS]
    assert (a / TENSORS).stat().st_mode & 0o044 == (a / MANIFEST).stat().st_mode & 0o044  # as shareable
    manifest = json.loads((a / MANIFEST).read_text())
    assert manifest["format"] == "devlint-verify-record" and manifest["label"] == "machine-a"
    assert manifest["devices"] == ["cpu"] and manifest["reference"] == "cpu"
    assert manifest["environment"]["torch"] == torch.__version__
    assert manifest["tolerances"]["defaults"]["float32"] == {"rel_rms": 1e-5, "atol": 1e-6}
    by_name = {c["name"]: c for c in manifest["cases"]}
    assert by_name["double"]["sources"] == ["my_cases.py"] and len(by_name["double"]["source_sha256"]) == 64
    assert by_name["exact_sum"]["tolerance"] == "exact"
    assert by_name["gpu_only"]["results"]["cpu"] == {
        "status": "n/a", "message": "needs a GPU", "where": None, "value": None, "checks": [], "notes": [],
        "original": None}

    code, out = invoke("--compare", str(a), str(b))
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0] == "devlint verify: 3 cases from 2 records (reference: machine-a/cpu)"
    assert lines[1].startswith("machine-a: torch ") and str(a) in lines[1]
    assert any(line.split() == ["case", "machine-a/cpu", "machine-b/cpu"] for line in lines)
    assert any(line.split() == ["double", "ok", "(ref)", "ok"] for line in lines)
    assert any(line.split() == ["gpu_only", "n/a", "n/a"] for line in lines)
    assert "machine-b/cpu: agrees with machine-a/cpu: max rel-RMS 0.00e+00" in out
    assert "check 'doubled': ok" in out and "note: a note" in out
    original_row = "ok" if torch.cuda.is_available() else "fails"
    assert any(line.split() == ["original", original_row, original_row] for line in lines)

    code, out = invoke("--compare", str(b), "--compare", str(a), "--output-format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["devices"] == ["machine-b/cpu", "machine-a/cpu"] and data["reference"] == "machine-b/cpu"
    assert [r["label"] for r in data["records"]] == ["machine-b", "machine-a"]
    assert data["summary"] == {"cases": 3, "ok": 2, "mismatch": 0, "error": 0, "n/a": 1, "exit_code": 0}


def test_compare_finds_a_machine_that_disagrees(tmp_path, cases_file):
    a = record(cases_file, tmp_path / "a", "good")
    b = record(cases_file, tmp_path / "b", "bad", env={"DEVLINT_TEST_SHIFT": "0.5"})
    code, out = invoke("--compare", str(a), str(b))
    assert code == 1, out
    assert any(line.split() == ["double", "ok", "(ref)", "MISMATCH"] for line in out.splitlines())
    assert "bad/cpu: MISMATCH: differs from good/cpu: x: relative RMS error" in out
    # The same tolerances: the exact case still agrees, the reference can be any column.
    assert any(line.split() == ["exact_sum", "ok", "(ref)", "ok"] for line in out.splitlines())
    code, out = invoke("--compare", str(a), str(b), "--reference", "bad/cpu", "--output-format", "json")
    data = json.loads(out)
    assert code == 1 and data["reference"] == "bad/cpu"
    double = next(c for c in data["cases"] if c["name"] == "double")
    assert double["results"]["good/cpu"]["status"] == "mismatch"


def test_same_label_twice_gets_distinct_columns(tmp_path, cases_file):
    a = record(cases_file, tmp_path / "a", "ci")
    b = record(cases_file, tmp_path / "b", "ci")
    run = compare_records([str(a), str(b)])
    assert run.devices == ["ci/cpu", "ci#2/cpu"] and run.exit_code == 0


def test_records_of_other_sources_are_refused(tmp_path, cases_file):
    a = record(cases_file, tmp_path / "a", "before")
    cases_file.write_text(cases_file.read_text().replace("* 2 + SHIFT", "* 2.0 + SHIFT"))
    b = record(cases_file, tmp_path / "b", "after")
    code, out = invoke("--compare", str(a), str(b))
    assert code == 2
    assert "case 'double' was recorded from different sources" in out
    assert "record the same code on every machine" in out


def test_records_of_another_devlint_version_are_refused(tmp_path, cases_file):
    a = record(cases_file, tmp_path / "a", "a")
    manifest = json.loads((a / MANIFEST).read_text())
    manifest["devlint_version"] = "0.0.1"
    (a / MANIFEST).write_text(json.dumps(manifest))
    code, out = invoke("--compare", str(a))
    assert code == 2
    assert "recorded by devlint 0.0.1, this is devlint" in out


def test_records_of_other_cases_and_non_records_are_refused(tmp_path, cases_file):
    a = record(cases_file, tmp_path / "a", "a")
    other = tmp_path / "other.py"
    other.write_text("import torch\nfrom devlint.verify import case\n\n@case\ndef lone(device):\n"
                     "    return torch.ones(1, device=device)\n")
    code, out = invoke(str(other), "--devices", "cpu", "--record", str(tmp_path / "b"))
    assert code == 0, out
    with pytest.raises(RecordError, match="the records hold different cases .*only .* has double, exact_sum, gpu_only"):
        compare_records([str(a), str(tmp_path / "b")])
    code, out = invoke("--compare", str(tmp_path))
    assert code == 2 and "not a devlint verify record (no manifest.json" in out
    (a / TENSORS).write_bytes((a / TENSORS).read_bytes()[:-8])
    with pytest.raises(RecordError, match="does not match the manifest's sha256"):
        read_record(a)


def test_record_refuses_a_folder_with_other_files_and_usage_errors(tmp_path, cases_file):
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    code, out = invoke(str(cases_file), "--devices", "cpu", "--record", str(tmp_path / "busy"))
    assert code == 2 and "not empty (notes.txt)" in out
    code, out = invoke("--compare", str(tmp_path), "--record", str(tmp_path / "x"))
    assert code == 2 and "--compare reads records" in out
    # A record is replaced by a new one in the same folder.
    record(cases_file, tmp_path / "again", "one")
    record(cases_file, tmp_path / "again", "two")
    assert json.loads((tmp_path / "again" / MANIFEST).read_text())["label"] == "two"


def test_record_without_numpy_says_what_to_install(tmp_path, cases_file, monkeypatch):
    # safetensors' torch API writes through numpy: the verify extra installs it; without it, a
    # clear error (exit 2), not a traceback.
    monkeypatch.setitem(__import__("sys").modules, "numpy", None)
    code, out = invoke(str(cases_file), "--devices", "cpu", "--record", str(tmp_path / "r"))
    assert code == 2, out
    assert "--record cannot write tensors.safetensors" in out and "pip install 'devlint[verify]'" in out
