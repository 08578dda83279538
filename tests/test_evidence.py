"""The evidence layer: every reason not to report a candidate is a `Reason` naming its
principle and where its evidence stands (what a `--show-exempt` prints)."""
from __future__ import annotations

import pickle

import pytest

from devlint.analysis.triage import build_facts
from devlint.evidence import Reason
from devlint.rules._device import device_strings, skipped, why_skipped
from devlint.settings import Settings


def test_reason_is_its_text_with_a_principle_and_a_location():
    r = Reason("cuda-only-module", "imports `cupy`", "pkg/k.py", 3)
    assert r == "imports `cupy`" and f"{r}" == "imports `cupy`" and r
    assert (r.principle, r.text, r.location) == ("cuda-only-module", "imports `cupy`",
                                                 "pkg/k.py:3")
    assert Reason("cuda-only-module", "in a `nvidia/` folder", "a/nvidia/k.py").location \
        == "a/nvidia/k.py"
    assert r.to_dict() == {"principle": "cuda-only-module", "message": "imports `cupy`",
                           "location": "pkg/k.py:3"}
    back = pickle.loads(pickle.dumps(r))  # crosses the process pool with its fields
    assert (back.principle, back.text, back.location) == (r.principle, r.text, r.location)


def _reasons(text, path="pkg/mod.py"):
    facts = build_facts(path, text, Settings(profile="torch"))
    return facts, {node.lineno: why_skipped(facts, node) for node in device_strings(facts)}


def test_a_cuda_only_import_exempts_the_file_with_its_line():
    facts, reasons = _reasons('import os\nimport cupy\n\nx = t.to("cuda")\n')
    assert facts.cuda_only.principle == "cuda-only-module"
    assert facts.cuda_only.location == "pkg/mod.py:2"
    assert reasons[4] is facts.cuda_only


@pytest.mark.parametrize("text, row, principle, evidence_row", [
    # a guard that establishes CUDA, and the else-branch of the opposite test
    ('if current_platform.is_cuda():\n    d = "cuda"\n', 2, "cuda-guard", 1),
    ('if not current_platform.is_cuda():\n    d = "cpu"\nelse:\n    d = "cuda"\n', 4,
     "cuda-guard", 1),
    # an early exit that leaves only CUDA
    ('def f():\n    if not current_platform.is_cuda():\n        return\n    d = "cuda"\n', 4,
     "cuda-guard", 2),
    # a platform ladder: the CUDA arm of a chain that names another platform
    ('if torch.cuda.is_available():\n    d = "cuda"\nelif torch.xpu.is_available():\n'
     '    d = "xpu"\n', 2, "platform-ladder", 1),
    # the literal's own expression tests for a CUDA-alike platform
    ('d = "cuda" if is_cuda_alike() else "cpu"\n', 1, "cuda-guard", 1),
    # never runs
    ('if TYPE_CHECKING:\n    d = "cuda"\n', 2, "not-a-device", 1),
    # a CUDA-only scope, by its name
    ('def _flashinfer_setup(t):\n    return t.to("cuda")\n', 2, "cuda-only-scope", 1),
    ('class Op:\n    def forward_native(self, t):\n        return t\n\n'
     '    def forward_cuda(self, t):\n        return t.to("cuda")\n', 6, "cuda-twin", 2),
])
def test_each_principle_names_itself_and_its_evidence(text, row, principle, evidence_row):
    facts, reasons = _reasons("import torch\n" + text)
    why = reasons[row + 1]
    assert why is not None, text
    assert why.principle == principle
    assert why.location == f"pkg/mod.py:{evidence_row + 1}"
    node = next(n for n in device_strings(facts) if n.lineno == row + 1)
    assert skipped(facts, node)


def test_an_annotation_is_not_a_device():
    facts = build_facts("pkg/mod.py", "import torch\ns: torch.cuda.Stream | None = None\n",
                        Settings(profile="torch"))
    node, _ = facts.torch_refs[0]
    why = why_skipped(facts, node)
    assert (why.principle, why.location) == ("not-a-device", "pkg/mod.py:2")
    assert why_skipped(facts, node, annotations=True) is None


def test_no_reason_no_exemption():
    # not CUDA: excluding the CPU is no evidence of CUDA
    facts, reasons = _reasons('import torch\ndef f(device):\n    if device == "cpu":\n'
                              '        return\n    d = "cuda"\n')
    assert reasons[5] is None
    node = next(n for n in device_strings(facts) if n.lineno == 5)
    assert not skipped(facts, node)
