"""A CUDA guard's finding runs over the code it guards (`engine.linter.extend_guards`): the
guarded code is not reported on its own (the cuda-guard principle), so the finding of the
guard (`if torch.cuda.is_available():`, a skip gate) ends where the last candidate it exempts
ends; its location, its suppressions and every other finding stay as they were."""
from __future__ import annotations

import textwrap

from devlint.api import check_source


def rows(text, path="pkg/mod.py"):
    return [(d.code, d.location[0], d.end_location[0])
            for d in check_source(textwrap.dedent(text), path, profile="torch")]


def test_guard_finding_covers_its_body():
    assert rows("""\
        import torch


        def clear(model):
            if torch.cuda.is_available():
                model = model.cuda()
                torch.cuda.empty_cache()
            return model
        """) == [("DL401", 5, 7)]


def test_guard_with_a_device_literal_body():
    assert rows("""\
        import torch

        device = None
        if torch.cuda.is_available():
            device = "cuda"
        """) == [("DL401", 4, 5)]


def test_skip_gate_covers_the_test_it_gates():
    assert rows("""\
        import unittest
        import torch


        class T(unittest.TestCase):
            @unittest.skipIf(not torch.cuda.is_available(), "CUDA")
            def test_a(self):
                x = torch.ones(2).cuda()
                assert x.device.type == "cuda"

            def test_b(self):
                pass
        """, "tests/test_mod.py") == [("DL203", 6, 9)]


def test_unreported_guard_extends_nothing():
    # a platform ladder's CUDA arm: neither the test nor the body is a finding
    assert rows("""\
        import torch

        if torch.cuda.is_available():
            torch.cuda.synchronize()
        elif torch.xpu.is_available():
            torch.xpu.synchronize()
        """) == []


def test_other_findings_keep_their_extent():
    assert rows("""\
        import torch

        x = torch.ones(2).to("cuda")
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        y = x.cuda()
        """) == [("DL101", 3, 3), ("DL401", 4, 5), ("DL102", 6, 6)]


def test_a_noqa_in_the_guarded_code_is_not_the_guards():
    found = rows("""\
        import torch

        if torch.cuda.is_available():
            torch.cuda.synchronize()  # noqa: DL401
        """)
    # the guard is still reported (over its body); the body's noqa suppresses nothing
    assert ("DL401", 3, 4) in found
    assert any(code == "DL900" for code, _, _ in found)


def test_a_noqa_on_the_guard_suppresses_it():
    assert rows("""\
        import torch

        if torch.cuda.is_available():  # noqa: DL401
            torch.cuda.synchronize()
        """) == []
