"""Issue 18 (callers): a private method called only through `self` under tests that establish
CUDA is CUDA's own (self-called-on-cuda); its limits keep the findings."""
from __future__ import annotations

import pytest

from devlint.api import check_source

_CLASS = ("import torch\n\n\nclass Worker:\n"
          "    def _measure(self):\n"
          "        torch.cuda.reset_peak_memory_stats()\n"
          "        return torch.zeros(1, device=\"cuda\")\n\n")


def _codes(text):
    return sorted(d.code for d in check_source(text, path="pkg/mod.py", profile="torch"))


@pytest.mark.parametrize("caller", [
    # an early exit that leaves only CUDA
    "    def prewarm(self):\n        if not is_cuda():\n            return None\n"
    "        return self._measure()\n",
    # under the test, in every caller (an `if`, a conditional expression)
    "    def a(self):\n        if is_cuda():\n            self._measure()\n\n"
    "    def b(self):\n        return self._measure() if is_cuda() else None\n",
    # through another private method that runs only on CUDA
    "    def _warm(self):\n        return self._measure()\n\n"
    "    def prewarm(self):\n        if is_cuda():\n            self._warm()\n",
])
def test_exempt(caller):
    assert _codes(_CLASS + caller) == []


def test_exempt_from_a_derived_class():
    text = _CLASS + "\nclass Sub(Worker):\n    def run(self):\n        if is_cuda():\n" \
                    "            self._measure()\n"
    assert _codes(text) == []


def test_reason_names_the_principle_and_the_test():
    from devlint.api import _settings, _to_bytes, process

    text = _CLASS + "    def prewarm(self):\n        if not is_cuda():\n            return\n" \
                    "        self._measure()\n"
    res = process(_to_bytes(text), "pkg/mod.py", _settings(None, profile="torch",
                                                                show_exempt=True))
    assert res.diagnostics == []
    whys = {(e.code, e.principle, e.evidence) for e in res.exempt}
    assert whys == {(code, "self-called-on-cuda", "pkg/mod.py:10") for code in ("DL103", "DL401")}


@pytest.mark.parametrize("caller", [
    # one call without a CUDA test
    "    def a(self):\n        if is_cuda():\n            self._measure()\n        self._measure()\n",
    # a public method: any caller may reach it
    None,
    # passed on as a value (a callback)
    "    def a(self):\n        if is_cuda():\n            run(self._measure)\n",
    # named by a string (`getattr`)
    "    def a(self):\n        if is_cuda():\n            getattr(self, '_measure')()\n",
    # called on another object
    "    def a(self, other):\n        if is_cuda():\n            self._measure()\n"
    "        other._measure()\n",
    # a CPU-only exclusion selects no platform
    "    def a(self):\n        if is_cpu():\n            return\n        self._measure()\n",
    # never called: nothing establishes CUDA
    "    def a(self):\n        pass\n",
    # an alias in the class body
    "    def a(self):\n        if is_cuda():\n            self._measure()\n\n    peak = _measure\n",
])
def test_still_reported(caller):
    if caller is None:
        text = _CLASS.replace("_measure", "measure") + "    def a(self):\n        if is_cuda():\n" \
                                                 "            self.measure()\n"
    else:
        text = _CLASS + caller
    assert _codes(text) == ["DL103", "DL401"]


def test_private_class_built_in_a_method_run_only_on_cuda():
    # cuda-value's private class, constructed in a private method that runs only on CUDA
    text = ("import torch\n\n\nclass _Call:\n    def __init__(self):\n"
            "        self.ready = torch.cuda.Event()\n\n\n"
            "class Layer:\n    def _overlap(self):\n        return _Call()\n\n"
            "    def forward(self):\n        if is_cuda() and is_sm120():\n"
            "            return self._overlap()\n        return None\n")
    assert _codes(text) == []
    # ... and reported where the method also runs elsewhere
    assert _codes(text.replace("        return None\n", "        return self._overlap()\n")) \
        == ["DL402"]


def test_a_test_that_is_a_finding_establishes_nothing_for_the_callee():
    # `device.type == "cuda"` is DL202's finding; its fix lets the other accelerators reach
    # `_measure`, whose findings stay (cross corpus 074, bitsandbytes `Params4bit._quantize`)
    text = _CLASS + "    def to(self, device):\n        if device.type == 'cuda':\n" \
                    "            return self._measure()\n        return self\n"
    assert _codes(text) == ["DL103", "DL202", "DL401"]
    text = _CLASS + "    def to(self, x):\n        if x.is_cuda:\n" \
                    "            return self._measure()\n        return self\n"
    assert "DL103" in _codes(text)


def test_a_platform_query_named_is_cuda_establishes_cuda():
    text = _CLASS + "    def run(self):\n        if not current_platform.is_cuda():\n" \
                    "            return None\n        return self._measure()\n"
    assert _codes(text) == []
