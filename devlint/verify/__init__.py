"""Runtime verifier: does the fixed code still compute the same thing, on every device?

The only part of devlint that uses torch, and it imports torch lazily (inside functions), so
importing ``devlint.verify`` costs nothing until a case runs.

Declare cases in a Python file::

    import torch
    from devlint.verify import case

    def original(device):                 # the unfixed code: runs where it can
        return torch.arange(4.0).to("cuda") * 2

    @case(name="double", original=original)
    def double(device):                   # the fixed code: runs on every device
        return torch.arange(4.0).to(device) * 2

then ``devlint verify that_file.py`` (or ``python -m devlint.verify that_file.py``) runs each case on
every available device, compares the results on the CPU with the reference device's and prints a
device x case table. In pytest, add ``pytest_plugins = ["devlint.verify.pytest_plugin"]`` to
``conftest.py`` for the ``device`` fixture and :func:`same_on_all_devices`.
"""
from .case import Case, CheckFailed, NotApplicable, case, expect_close, expect_equal, not_applicable, note
from .compare import DEFAULT_TOLERANCES, EXACT, Comparison, Tolerance, compare, to_cpu
from .devices import VerifyEnvironmentError, available_devices
from .runner import (
    VerifyRun,
    VerifyUsageError,
    load_target,
    load_targets,
    run_case,
    run_cases,
    same_on_all_devices,
)

__all__ = [
    "Case",
    "CheckFailed",
    "Comparison",
    "DEFAULT_TOLERANCES",
    "EXACT",
    "NotApplicable",
    "Tolerance",
    "VerifyEnvironmentError",
    "VerifyRun",
    "VerifyUsageError",
    "available_devices",
    "case",
    "compare",
    "expect_close",
    "expect_equal",
    "load_target",
    "load_targets",
    "not_applicable",
    "note",
    "run_case",
    "run_cases",
    "same_on_all_devices",
    "to_cpu",
]

