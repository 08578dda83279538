"""Policy: a project's own checked rule against some `torch.cuda` calls outranks a CUDA guard.

Not a reason to leave a candidate out, but the one stated limit of four that do
(`cuda_guard`, `cuda_alike_guard`, `platform_ladder`, `redundant_seed`): where a built-in profile's project forbids
a `torch.cuda` call everywhere outside its platform layer in a rule it checks itself (vLLM's
pre-commit hook `tools/pre_commit/check_torch_cuda.py`, RFC vllm-project/vllm#30679), that call
is reported for the profile even under a guard that established CUDA, in the CUDA arm of a
platform ladder, and beside a redundant seed: the project fixes those too (its CUDA branches
are shared with other devices' subclasses). The calls, the rule and its evidence are data
(`devlint/data/project_policy.toml`); the finding's message names the rule.
Limits: only the listed calls and only in the profile that states them, and only in the
project itself: where the profile was chosen by configuration (`profile = "vllm"`,
`--profile vllm`) or `auto` chose it from the file's place inside the profile's own package;
a file that only imports the project (another project's integration test importing vllm) is
not bound by the project's internal rule; CUDA-only files and
scopes stay exempt (the rubric's "CUDA-specific on purpose" by purpose, not by a branch), and
device literals under a guard stay exempt (the project's rule names calls, not strings).
"""
from __future__ import annotations

import os
from functools import lru_cache

from devlint.evidence.vocabulary import absolute_parts

# the principles whose exemption a project's rule outranks
OUTRANKED = frozenset({"cuda-guard", "cuda-alike-guard", "rocm-guard", "platform-ladder",
                       "redundant-seed"})


@lru_cache(maxsize=None)
def _policies() -> dict:
    from devlint.profiles import _load_toml_bytes

    path = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data",
                        "project_policy.toml")
    with open(path, "rb") as f:
        return _load_toml_bytes(f.read())


def policy_profile(facts) -> str | None:
    """The profile whose project rule binds this file: its resolved profile where that was
    configured, or where `auto` chose it from the file's place in the profile's own package
    (not from an import of it); else None."""
    requested = getattr(facts.settings, "profile", "auto")
    if requested != "auto":
        return facts.profile
    parts = absolute_parts(facts)
    return facts.profile if facts.profile in parts[:-1] else None


def forbidden_call(profile: str | None, qual: str) -> str | None:
    """Where the profile's project forbids `qual` outright (the rule's evidence, for the
    finding's message), else None."""
    policy = _policies().get(profile or "")
    if not policy or qual not in policy.get("apis", ()):
        return None
    return policy["evidence"].split(" (", 1)[0]


def outranks(profile: str | None, qual: str, reason) -> bool:
    """True where `reason` (a `Reason`) is one a project's rule against `qual` outranks."""
    return getattr(reason, "principle", None) in OUTRANKED \
        and forbidden_call(profile, qual) is not None
