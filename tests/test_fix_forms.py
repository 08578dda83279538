"""Forms that are right (issue 13): each defect found by running fixed code gets a test here.
The runtime matrix (tests/runtime) runs the forms; these tests pin which form is written."""
from __future__ import annotations

import pytest

from devlint.api import check_source, fix_source

FALLBACK = 'import torch\nd = "cuda" if torch.cuda.is_available() else "cpu"\n'


def _fix(src, target, select=None, unsafe=True, path="m.py"):
    kw = {"select": select} if select else {}
    fixed, remaining, failures = fix_source(src, path, unsafe=unsafe, profile="torch",
                                            target_torch=target, **kw)
    assert failures == []
    return fixed, remaining


def test_device_form_asks_availability_first_on_2_6():
    # 2.6: current_accelerator() raises without an accelerator and reports the build's
    # accelerator on a GPU-less machine: ask is_available() first
    fixed, _ = _fix(FALLBACK, "2.6")
    assert fixed == ('import torch\nd = torch.accelerator.current_accelerator().type if '
                     'torch.accelerator.is_available() else "cpu"\n')


@pytest.mark.parametrize("target", ["2.7", "2.10", "2.14"])
def test_device_form_checks_availability_from_2_7(target):
    fixed, _ = _fix(FALLBACK, target)
    assert fixed == ('import torch\nd = (torch.accelerator.current_accelerator('
                     'check_available=True) or torch.device("cpu")).type\n')


@pytest.mark.parametrize("target", ["2.6", "2.7"])
def test_no_form_calls_current_accelerator_unchecked(target):
    src = ('import torch\nx = torch.ones(2).to("cuda")\ny = torch.zeros(2, device="cuda")\n'
           'm = torch.nn.Linear(2, 2).cuda()\n'
           'torch.distributed.init_process_group("nccl")\n' + FALLBACK.split("\n", 1)[1])
    fixed, _ = _fix(src, target)
    for line in fixed.splitlines()[1:]:
        assert "current_accelerator" in line, line
        assert ("check_available=True" in line) or ("is_available()" in line), line


LADDER = ('next((t for t in ("cuda", "xpu", "mps") if getattr(getattr(torch, t, None), '
          '"is_available", bool)()), "cpu")')


@pytest.mark.parametrize("target", ["1.0", "1.13", "2.0", "2.5"])
def test_target_below_torch_accelerator_gets_the_device_ladder(target):
    """Below 2.6 there is no torch.accelerator: the device, its type and its object are
    written as a ladder over the device modules that works on every release (getattr with
    defaults, `torch.cuda.is_available`, `torch.device`); the APIs with no such form (the
    distributed backend and torch.cuda.synchronize below 2.2, autocast below 1.10) stay flagged,
    unfixed; from 2.2 `torch.cuda.synchronize()` calls the ladder's device module (torch.cpu,
    whose synchronize is a no-op, without an accelerator)."""
    src = ('import torch\nx = torch.ones(2).to("cuda")\n' + FALLBACK.split("\n", 1)[1]
           + 'torch.distributed.init_process_group("nccl")\nwith torch.autocast("cuda"):\n'
           '    pass\ntorch.cuda.synchronize()\n')
    diags = check_source(src, "m.py", profile="torch", target_torch=target)
    assert {d.code for d in diags} >= {"DL101", "DL106", "DL501", "DL403"}
    fixed, remaining = _fix(src, target)
    assert "accelerator" not in fixed
    assert fixed.splitlines()[1:3] == [f"x = torch.ones(2).to({LADDER})", f"d = {LADDER}"]
    if tuple(map(int, target.split("."))) < (2, 2):
        assert {d.code for d in remaining} >= {"DL501", "DL401"}
    else:
        # from 2.2 torch picks each device's backend where none is given (unsafe: a gloo
        # backend beside NCCL on CUDA)
        assert not {"DL401", "DL501"} & {d.code for d in remaining}
        assert "torch.distributed.init_process_group(None)" in fixed
        assert fixed.splitlines()[-1] == f"getattr(torch, {LADDER}).synchronize()"
    # it reports nothing of its own (a second --fix changes nothing), and runs
    again, _ = _fix(fixed, target)
    assert again == fixed
    torch = pytest.importorskip("torch")
    ns: dict = {}
    exec(compile(fixed.splitlines()[0] + "\n" + "\n".join(fixed.splitlines()[1:3]), "m.py",
                 "exec"), ns)
    want = "cuda" if torch.cuda.is_available() else "xpu" if torch.xpu.is_available() else \
        "mps" if torch.backends.mps.is_available() else "cpu"
    assert ns["d"] == want and ns["x"].device.type == want


NOOP = ('import torch\n\n\ndef f():\n    torch.cuda.empty_cache()  # free\n'
        '    n = torch.cuda.memory_allocated()\n    if n: torch.cuda.empty_cache()\n'
        '    return n, torch.cuda.memory_stats()\n')


def test_no_op_on_cpu_originals_stay_no_ops():
    # torch.cuda.empty_cache() does nothing without a GPU; torch.accelerator.empty_cache()
    # raises on the CPU-only wheel: the fix asks for an accelerator first
    fixed, remaining = _fix(NOOP, "2.9", unsafe=False)
    assert remaining == []
    assert fixed == (
        'import torch\n\n\ndef f():\n    if torch.accelerator.is_available():\n'
        '        torch.accelerator.empty_cache()  # free\n'
        '    n = torch.accelerator.memory_allocated() if torch.accelerator.is_available() else 0\n'
        '    if n: (torch.accelerator.empty_cache() if torch.accelerator.is_available() else None)\n'
        '    return n, torch.accelerator.memory_stats() if torch.accelerator.is_available() '
        'else {}\n')
    ns: dict = {}
    exec(compile(fixed, "m.py", "exec"), ns)
    assert ns["f"]() == (0, {})


def test_every_table_entry_with_a_cpu_value_is_a_guarded_form():
    from devlint.profiles.torch_api import load_table

    guarded = {e.name for e in load_table() if e.cpu_value}
    assert {"torch.cuda.empty_cache", "torch.cuda.memory_allocated",
            "torch.cuda.memory_stats"} <= guarded
    for name in guarded:
        src = f"import torch\nx = {name}()\n"
        fixed, _ = _fix(src, "2.14")
        assert "if torch.accelerator.is_available() else" in fixed, fixed


def test_inferred_device_never_comes_from_the_assigned_or_moved_variable():
    src = ('import torch as th\n\n\ndef train(loader, model):\n'
           '    for images, labels in loader:\n        images = images.to("cuda")\n'
           '        print(images.device)\n\n\n'
           'def g():\n    x = th.ones(2).cuda()\n    print(x.device)\n    return x\n\n\n'
           'def h(batch):\n    batch = batch.to("cuda")\n    y = batch * 2\n    return y.device\n')
    fixed, _ = _fix(src, "2.7")
    assert "images.to(images.device)" not in fixed
    assert ".to(x.device)" not in fixed and ".to(y.device)" not in fixed
    assert fixed.count('current_accelerator(check_available=True) or "cpu"') == 3
    ns: dict = {}
    exec(compile(fixed, "m.py", "exec"), ns)
    assert ns["g"]().device.type == "cpu"  # no UnboundLocalError


def test_inferred_device_from_a_tensor_bound_before_is_kept():
    src = ('import torch\n\n\ndef f(x, ref):\n    x = x.to("cuda")\n'
           '    assert ref.device == x.device\n    return x + ref\n')
    fixed, _ = _fix(src, "2.7")
    assert 'x = x.to(ref.device)' in fixed


HEADER = (b'#!/usr/bin/env python3\n# -*- coding: latin-1 -*-\n# Copyright (c) 2024 Jos\xe9\n'
          b'# Licensed under the Apache License, Version 2.0\n\nx = 1\n'
          b'y = f(x, device="cuda")\n')


def test_inserted_import_goes_below_shebang_cookie_and_license(tmp_path):
    import subprocess
    import sys

    p = tmp_path / "script.py"
    p.write_bytes(HEADER)
    r = subprocess.run([sys.executable, "-m", "devlint", "--fix", "--no-cache", str(p)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = p.read_bytes()
    lines = out.split(b"\n")
    assert lines[:5] == HEADER.split(b"\n")[:5]
    assert lines[5] == b"import torch"
    compile(out, str(p), "exec")  # still latin-1 with its cookie: no "Non-UTF-8 code"
    assert b"\xe9" in out


@pytest.mark.parametrize("head", [
    '"""Docstring."""\n',
    '"""Docstring."""\nfrom __future__ import annotations\n',
    '# comment\n"""Docstring."""\n\nfrom __future__ import annotations\n',
])
def test_inserted_import_goes_after_docstring_and_future_imports(head):
    src = head + 'y = f(device="cuda")\n'
    fixed, _ = _fix(src, "2.7")
    assert fixed.startswith(head)
    assert fixed[len(head):].startswith("import torch\n")
    compile(fixed, "m.py", "exec")


def test_a_fix_that_would_move_the_shebang_or_cookie_is_refused():
    from devlint.diagnostics import Edit
    from devlint.analysis.fixkit import make_fix

    class Facts:
        text = HEADER.decode("latin-1")

    assert make_fix(Facts, "m", [Edit(0, 0, "import torch\n")]) is None
    at = Facts.text.index("x = 1")
    assert make_fix(Facts, "m", [Edit(at, at + 1, "z")]) is not None


@pytest.mark.parametrize("target,expected", [("2.9", "new_type()"), ("2.4", "old_type()")])
def test_custom_profile_forms_per_target(tmp_path, target, expected):
    import subprocess
    import sys

    (tmp_path / "devlint.toml").write_text(
        f'profile = "mine"\ntarget-torch = "{target}"\n[profiles.mine]\n'
        'device-type = [{ expr = "new_type()", import = "from mylib import new_type", '
        'since = "2.8" }, { expr = "old_type()", import = "from mylib import old_type", '
        'since = "2.0" }]\n')
    (tmp_path / "m.py").write_text('DEVICE = "cuda"\n')
    p = subprocess.run([sys.executable, "-m", "devlint", "check", "--fix", "--no-cache",
                        "m.py"], capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    name = expected[:-2]
    assert (tmp_path / "m.py").read_text() == f"from mylib import {name}\nDEVICE = {expected}\n"


def test_no_availability_guard_under_a_guard_that_established_cuda():
    src = ('import torch\n\n\ndef f():\n    if torch.cuda.is_available():\n'
           '        torch.cuda.synchronize()\n        return torch.cuda.max_memory_allocated()\n'
           '    return 0\n')
    fixed, _ = _fix(src, "2.9", select=("DL401",))
    assert fixed == ('import torch\n\n\ndef f():\n    if torch.accelerator.is_available():\n'
                     '        torch.accelerator.synchronize()\n'
                     '        return torch.accelerator.max_memory_allocated()\n    return 0\n')


def test_the_device_is_never_taken_from_the_attribute_being_assigned():
    """`self.device = torch.device("cuda")` in a class that sets self.device only there: the
    fix must not read `self.device` before it exists (it became `self.device = self.device`).
    Later uses may read it: the fixed assignment has set it by then."""
    src = ('import torch\n\n\nclass Agent:\n    def __init__(self, model):\n'
           '        self.device = torch.device("cuda")\n        self.model = model.cuda()\n')
    fixed, _ = _fix(src, "2.7")
    assert "self.device = self.device" not in fixed
    assert ('self.device = torch.accelerator.current_accelerator(check_available=True) or '
            'torch.device("cpu")\n') in fixed
    assert "self.model = model.to(self.device)" in fixed
