"""The built-in cases ship inside the package: the seed files they load are byte-identical copies
of the linter's demo fixtures (fixtures/), and the golden (fixed) copies are what `devlint --fix`
writes (tests/test_seed_fixtures.py checks fixtures/golden against the fixer)."""
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
PACKAGED = ROOT / "devlint" / "verify" / "cases" / "fixtures"


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def test_packaged_fixtures_are_the_demo_fixtures():
    packaged = _files(PACKAGED)
    assert packaged == sorted([
        os.path.join("golden", "torch", "kda", "gather_initial_states.py"),
        os.path.join("golden", "torch", "kda", "test_kda.py"),
        os.path.join("golden", "torch", "kv_connector", "example_connector.py"),
        os.path.join("golden", "torch", "shell", "run_multi_connector_accuracy_test.sh"),
        os.path.join("kda", "gather_initial_states.py"),
        os.path.join("kda", "kda_reference.py"),
        os.path.join("kda", "test_kda.py"),
        os.path.join("kv_connector", "example_connector.py"),
        os.path.join("kv_connector", "paged_kv.py"),
        os.path.join("shell", "run_multi_connector_accuracy_test.sh"),
    ])
    for rel in packaged:
        assert (PACKAGED / rel).read_bytes() == (FIXTURES / rel).read_bytes(), (
            f"devlint/verify/cases/fixtures/{rel} differs from fixtures/{rel}: copy the demo fixture over it")


def test_builtin_targets_are_package_modules():
    pytest.importorskip("torch")
    from devlint.verify.runner import default_targets, load_targets

    assert default_targets() == ["devlint.verify.cases.kda", "devlint.verify.cases.kv_connector",
                                 "devlint.verify.cases.shell"]
    names = [c.name for c in load_targets(None)]
    assert len(names) == 14 and names[0] == "kda.recurrent_vs_chunked" and names[-1] == "shell.multi_connector[npu]"
