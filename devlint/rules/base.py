"""What every rule module provides: its identity, its documentation, its examples, and a
check over the facts the triage stage collected."""
from __future__ import annotations

import inspect
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Iterator

if TYPE_CHECKING:
    from devlint.diagnostics import Diagnostic
    from devlint.analysis.model import FileFacts


@dataclass(frozen=True)
class Invalid:
    """Code that must be flagged, and what `--fix --unsafe-fixes` turns it into."""

    source: str
    fixed: str | None = None  # None: the finding has no automatic fix
    profile: str = "torch"
    count: int = 1  # findings expected in `source`
    path: str = "example.py"


@dataclass(frozen=True)
class Valid:
    """Code that must not be flagged."""

    source: str
    profile: str = "torch"
    path: str = "example.py"


# The principles (devlint.evidence.PRINCIPLES) under which a rule leaves a candidate
# unreported: in the file (`rules._device.skipped`), and in the package (the project stage)
IN_FILE = ("cuda-only-module", "cuda-only-scope", "cuda-guard", "platform-ladder",
           "several-platforms", "capability-gate", "fast-path", "not-a-device", "print-only", "cuda-twin",
           "sibling-platforms", "cuda-backend", "stated-requirement", "abstract-default",
           "cuda-only-arm", "compared-value", "dead-value",
           "cuda-kernel-source", "entry-gate", "cuda-graph-capture", "nvidia-tool",
           "flash-attention-impl", "mock-target", "cuda-value", "fake-tensor", "hip-device",
           "host-copy", "version-fallback", "load-location", "self-called-on-cuda",
           "kernel-benchmark", "gated-benchmark",
           "uses-cuda-value", "library-gate", "library-subject", "stated-gate")
IN_PACKAGE = ("cuda-only-module", "test-double", "only-called-on-cuda", "calls-cuda-only",
              "cuda-by-default",
              "dead-default", "imported-gate", "imported-guard", "launched-worker",
              "imported-flag", "cuda-choice", "cuda-reach", "cuda-kernel-package",
              "cpu-switch")
# a test that holds only on ROCm (`if _is_hip:`): the device-literal, tensor-test and API rules
# honour it ("cuda" is the AMD GPU's name there), not the visibility-variable and backend
# rules (DL301, DL501), whose names the platform chooses
ROCM = ("rocm-guard",)
# the table-API rules honour the same principles (under an established guard a table API is
# no finding either: the guard is), and a CUDA seed beside torch.manual_seed(same) is redundant
TABLE_API = tuple(dict.fromkeys(IN_FILE + IN_PACKAGE + ("redundant-seed", "cuda-alike-guard")
                                + ROCM))
# the stream and event rule: the same, without seeds
STREAMS = tuple(dict.fromkeys(IN_FILE + IN_PACKAGE + ("cuda-alike-guard",) + ROCM))


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]  # one line, used by `devlint rule --all`
    # the principles it honours (`devlint rule` lists them; tests/test_show_exempt.py checks
    # that what --show-exempt reports for the rule's examples is among them)
    exempt_by: ClassVar[tuple[str, ...]] = tuple(dict.fromkeys(IN_FILE + IN_PACKAGE + ROCM))
    valid: ClassVar[list[Valid]] = []
    invalid: ClassVar[list[Invalid]] = []

    def check(self, facts: "FileFacts") -> Iterator["Diagnostic"]:  # pragma: no cover
        raise NotImplementedError

    @classmethod
    def doc(cls) -> str:
        """The rule's user documentation (the class docstring)."""
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def url(cls) -> str:
        from devlint.diagnostics import rule_url

        return rule_url(cls.code)

    def diagnostic(self, facts: "FileFacts", node_or_span, message: str, fix=None) -> "Diagnostic":
        from devlint.diagnostics import Diagnostic

        if isinstance(node_or_span, tuple):
            start, end = node_or_span
        else:
            start, end = facts.span(node_or_span)
        # a message is one line, even when it quotes a multi-line expression
        message = re.sub(r"\s*\n\s*", " ", message)
        return Diagnostic(self.code, self.name, message, facts.path, start, end, fix)


DOC_SECTIONS = ("What it does", "Why is this bad?", "Example", "Fix", "Fix safety", "Profiles")


def doc_sections(doc: str) -> list[str]:
    return re.findall(r"^## (.+)$", doc, flags=re.M)
