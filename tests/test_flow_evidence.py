"""Issue 18 (flow): guards reached through helpers, CUDA-graph capture and data flow; values
that never reach a device (mock targets). Each principle with what it exempts (valid) and
its limits (still reported)."""
from __future__ import annotations

import pytest

from devlint.analysis.triage import build_facts
from devlint.rules._device import why_skipped
from devlint.settings import Settings


def _api_reasons(text, path="pkg/mod.py"):
    """row -> Reason (or None) of each `torch.cuda` reference of the text (rows of `text`)."""
    facts = build_facts(path, "import torch\n" + text, Settings(profile="torch"))
    return {node.lineno - 1: why_skipped(facts, node, api=True) for node, _ in facts.torch_refs}


def _string_reasons(text, path="tests/test_mod.py"):
    facts = build_facts(path, "import torch\n" + text, Settings(profile="torch"))
    return {node.lineno - 1: why_skipped(facts, node, api=True) for node in facts.api_strings}


_HELPER = ("def check_gpu_memory(threshold=0.9):\n"
           "    \"\"\"Whether the GPU memory is over the threshold.\"\"\"\n"
           "    if not torch.cuda.is_available():\n        return False\n"
           "    return torch.cuda.memory_allocated() > threshold\n\n\n")


@pytest.mark.parametrize("text, row, principle, evidence_row", [
    # a helper that returns a false value unless CUDA is there: true only on CUDA
    (_HELPER + "def f():\n    if check_gpu_memory(0.5):\n        torch.cuda.empty_cache()\n",
     10, "cuda-guard", 9),
    (_HELPER.replace("return False", "return") + "def f():\n    if not check_gpu_memory():\n"
     "        return\n    torch.cuda.empty_cache()\n", 11, "cuda-guard", 9),
    # CUDA-graph capture is CUDA's
    ("def f(e):\n    if torch.cuda.is_current_stream_capturing():\n"
     "        torch.cuda.current_stream().wait_event(e)\n", 3, "cuda-guard", 2),
    ("def f(e):\n    capturing = torch.cuda.is_current_stream_capturing()\n"
     "    if capturing:\n        torch.cuda.current_stream().wait_event(e)\n", 4, "cuda-guard", 3),
])
def test_guard_principles(text, row, principle, evidence_row):
    why = _api_reasons(text)[row]
    assert why is not None and why.principle == principle, why
    assert why.location == f"pkg/mod.py:{evidence_row + 1}"


@pytest.mark.parametrize("text, row", [
    # the helper's own availability test stays the finding
    (_HELPER + "def f():\n    if check_gpu_memory(0.5):\n        torch.cuda.empty_cache()\n", 3),
    # a helper that returns a true value without CUDA proves nothing
    (_HELPER.replace("return False", "return True") + "def f():\n    if check_gpu_memory():\n"
     "        torch.cuda.empty_cache()\n", 10),
    # a helper whose CUDA test is not its first statement
    ("def check(x):\n    if x:\n        return True\n    if not torch.cuda.is_available():\n"
     "        return False\n    return True\n\n\ndef f(x):\n    if check(x):\n"
     "        torch.cuda.empty_cache()\n", 11),
    # a capture test guards its body, not what follows it
    ("def f(e):\n    if not torch.cuda.is_current_stream_capturing():\n        pass\n"
     "    torch.cuda.current_stream().wait_event(e)\n", 4),
])
def test_limits_of_the_guard_principles(text, row):
    assert _api_reasons(text)[row] is None


@pytest.mark.parametrize("text, row", [
    ('from unittest.mock import patch\n\n\n@patch("torch.cuda.current_stream")\n'
     'def test_x(m):\n    pass\n', 4),
    ('def test_x(monkeypatch):\n    monkeypatch.setattr("torch.cuda.empty_cache", lambda: 0)\n',
     2),
    ('from unittest import mock\n\n\ndef test_x():\n'
     '    with mock.patch("torch.cuda.synchronize", new=lambda: None):\n        run()\n', 5),
])
def test_a_mock_target_is_a_name_not_a_use(text, row):
    why = _string_reasons(text)[row]
    assert why is not None and why.principle == "mock-target", why


@pytest.mark.parametrize("text, row, expected", [
    ('def test_x(monkeypatch):\n    monkeypatch.setattr(torch.cuda, "is_available", '
     'lambda: True)\n', 2, "mock-target"),
    ('from unittest import mock\n\n\ndef test_x():\n'
     '    with mock.patch.object(torch.cuda, "synchronize"):\n        run()\n', 5, "mock-target"),
    # the replacement given to the patch runs: still a finding
    ('def test_x(monkeypatch):\n    monkeypatch.setattr(torch.cuda, "synchronize", '
     'torch.cuda.empty_cache)\n', 2, None),
])
def test_mock_targets_through_the_module_object(text, row, expected):
    facts = build_facts("tests/test_mod.py", "import torch\n" + text, Settings(profile="torch"))
    whys = [why_skipped(facts, node, api=True) for node, _ in facts.torch_refs
            if node.lineno - 1 == row]
    got = {getattr(w, "principle", None) for w in whys}
    assert expected in got, whys
    if expected is None:
        assert any(w is None for w in whys)
