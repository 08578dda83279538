"""Principle: a function that only ever runs on CUDA is CUDA's own.

A module-level function whose every use in its package stands under a test that establishes
CUDA, in a CUDA-only function, class or module, or in another function of its module that only
runs on CUDA: its device literals are exempt like literals under an in-file CUDA guard.
Evidence: the first use (file:line). Applied by the project stage
(`devlint.engine.project.index.Project.cuda_callers_only`); across modules and through callers
of callers (a caller in a CUDA dispatch arm, in a function that is itself only called on
CUDA, in a block that always runs a CUDA-only kernel; private methods called through `self`)
by `devlint.engine.project.xcallers`, whose statement and limits are
`devlint.evidence.cuda_callers`'s.
Limits: uses the stage cannot see keep the findings (through the module object, a star
import, a re-export); a table API (`torch.cuda.synchronize()`) selected by a platform test is
still reported, as under an in-file guard; ruling out the CPU alone is no CUDA test.
"""
from __future__ import annotations

PRINCIPLE = "only-called-on-cuda"
