"""Skip gates that read a capability or GPU-library flag imported from another project module
(`devlint.evidence.imported_flag`, applied by `devlint/engine/project/xflags.py`), through
real `devlint check` runs over small packages. Each exempt form is paired with the nearest
form that stays a finding."""
from __future__ import annotations

import json
import os

from _cli import run, write_package

UTILS = """\
    import torch

    try:
        from deep_ep import Buffer
        HAVE_DEEP_EP = True
    except ImportError:
        HAVE_DEEP_EP = False

    HAS_CUDA = torch.cuda.is_available()


    def linear_skip_reason():
        if not torch.cuda.is_available():
            return "CUDA not available"
        if not is_sm_at_least_90():
            return "requires SM90+"
        return None


    def plain_skip_reason():
        if not torch.cuda.is_available():
            return "CUDA not available"
        return None
    """

TESTS = """\
    import unittest

    import pytest
    import torch

    from tests.utils import HAS_CUDA, HAVE_DEEP_EP, linear_skip_reason, plain_skip_reason

    SKIP = linear_skip_reason()
    PLAIN = plain_skip_reason()


    def is_ep_available():
        from tests.utils import HAVE_DEEP_EP

        return HAVE_DEEP_EP


    class TestReason(unittest.TestCase):
        @unittest.skipIf(SKIP is not None, SKIP or "")
        def test_gated(self):
            x = torch.ones(2, device="cuda")

        @unittest.skipIf(PLAIN is not None, PLAIN or "")
        def test_plain(self):
            x = torch.ones(2, device="cuda")


    @pytest.mark.skipif(not HAVE_DEEP_EP, reason="DeepEP")
    def test_flag():
        x = torch.ones(2, device="cuda")


    @pytest.mark.skipif(not is_ep_available(), reason="DeepEP")
    class TestHelper:
        @pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA")
        def test_a(self):
            x = torch.ones(2, device="cuda")


    @pytest.mark.skipif(not HAS_CUDA, reason="CUDA")
    def test_cuda_flag():
        x = torch.ones(2, device="cuda")


    @pytest.mark.skipif(not HAVE_DEEP_EP and not HAS_CUDA, reason="either")
    def test_either():
        x = torch.ones(2, device="cuda")
    """


def _findings(root):
    r = run("check", "--output-format", "json", "--no-cache", "tests", cwd=root)
    assert r.returncode in (0, 1), r.stderr
    return sorted((f["filename"].replace(os.sep, "/").rsplit("/", 1)[-1], f["location"]["row"],
                   f["code"]) for f in json.loads(r.stdout))


def test_imported_capability_and_library_flags_gate_their_tests(tmp_path):
    write_package(tmp_path, {"tests/utils.py": UTILS, "tests/test_x.py": TESTS}, dedent=True)
    found = _findings(tmp_path)
    rows = {row for name, row, _ in found if name == "test_x.py"}
    # exempt: a reason helper that requires SM90+, a DeepEP flag, a local helper returning it
    # (the body and the availability gate stacked inside the gated class)
    assert not rows & {21, 30, 35, 37}, found
    # still findings: a reason helper that only asks for CUDA, a flag that only asks for CUDA
    # (the flag's own module reports its query), a gate one of whose alternatives is no library
    assert {(25, "DL103"), (42, "DL103"), (47, "DL103")} <= {(r, c) for n, r, c in found
                                                              if n == "test_x.py"}


def test_imported_flags_show_their_definition(tmp_path):
    write_package(tmp_path, {"tests/utils.py": UTILS, "tests/test_x.py": TESTS}, dedent=True)
    r = run("check", "--output-format", "json", "--no-cache", "--show-exempt", "tests",
            cwd=tmp_path)
    data = json.loads(r.stdout)
    flags = {(e["location"]["row"], e["code"], e["evidence"]) for e in data["exempt"]
             if e["principle"] == "imported-flag"}
    assert flags == {(21, "DL103", "tests/utils.py:12"),  # `def linear_skip_reason`
                     (30, "DL103", "tests/utils.py:5"),  # `HAVE_DEEP_EP = True`
                     (35, "DL203", "tests/utils.py:5")}, flags  # through `is_ep_available`


MARKED = """\
    import pytest
    import torch

    from tests.utils import HAVE_DEEP_EP

    pytestmark = pytest.mark.skipif(not HAVE_DEEP_EP, reason="DeepEP")


    def _inner():
        return torch.zeros(1, device="cuda")


    def _configs():
        return [torch.ones(1, device="cuda"), _inner()]


    def _helper():
        return torch.ones(1, device="cuda")


    @pytest.mark.parametrize("c", _configs())
    def test_a(c):
        x = torch.ones(2, device="cuda") + _helper()


    class TestB:
        shared = torch.ones(1, device="cuda")

        def test_b(self):
            x = torch.ones(2, device="cuda")
    """


def test_a_module_flag_gate_covers_the_tests_not_what_runs_at_collection(tmp_path):
    write_package(tmp_path, {"tests/utils.py": UTILS, "tests/test_y.py": MARKED}, dedent=True)
    rows = {row for name, row, _ in _findings(tmp_path) if name == "test_y.py"}
    # exempt: the tests' bodies and the helper only they call
    assert not rows & {18, 23, 30}, rows
    # still findings: what runs at collection even when every test is skipped (the helper a
    # parametrisation calls, the helper that one calls, a class body)
    assert {10, 14, 27} <= rows, rows


MODULE_SKIPPED = """\
    import pytest
    import torch

    from _sibling_utils import linear_skip_reason

    if skip_reason := linear_skip_reason():
        pytest.skip(skip_reason, allow_module_level=True)


    def setup():
        torch.cuda.set_device(0)
        return torch.ones(1, device="cuda")
    """

MODULE_SKIPPED_PLAIN = """\
    import pytest
    import torch

    from _sibling_utils import plain_skip_reason

    if skip_reason := plain_skip_reason():
        pytest.skip(skip_reason, allow_module_level=True)


    def setup():
        return torch.ones(1, device="cuda")
    """


def test_a_module_level_skip_on_an_imported_reason_helper_gates_the_module(tmp_path):
    # a manual torchrun test importing its helpers from a sibling module (the script's folder
    # is on sys.path): the module skips itself unless the helper finds SM90+
    write_package(tmp_path, {"tests/multi/_sibling_utils.py": UTILS,
                             "tests/multi/test_tp.py": MODULE_SKIPPED,
                             "tests/multi/test_plain.py": MODULE_SKIPPED_PLAIN}, dedent=True)
    found = _findings(tmp_path)
    assert not {row for name, row, _ in found if name == "test_tp.py"}, found
    # a helper that only asks for CUDA: the module's devices stay findings
    assert (11, "DL103") in {(r, c) for n, r, c in found if n == "test_plain.py"}, found
