"""A profile's project rule (devlint/data/project_policy.toml: vLLM's pre-commit hook against
some torch.cuda calls) outranks a CUDA guard, but only in the project itself: where the profile
is configured, or where `auto` chose it from the file's place in the profile's own package;
a file of another project that only imports vllm is not bound by vLLM's internal rule."""
from __future__ import annotations

from devlint.api import check_source

GUARDED = ("import torch\nimport vllm\n\n\ndef free():\n    if torch.cuda.is_available():\n"
           "        torch.cuda.empty_cache()\n")


def _policy_rows(path, **kw):
    return [d.location[0] for d in check_source(GUARDED, path, **kw) if "forbids it" in d.message]


def test_configured_profile_applies_the_project_rule():
    assert _policy_rows("pkg/worker.py", profile="vllm") == [7]


def test_auto_inside_the_profiles_own_package_applies_it():
    assert _policy_rows("/src/vllm/v1/worker/gpu_worker.py") == [7]


def test_auto_from_an_import_alone_does_not():
    # another project's integration test that imports vllm: the guard stays the finding
    assert _policy_rows("/src/ao/test/integration/test_vllm.py") == []
    rows = [(d.code, d.location[0]) for d in check_source(GUARDED, "/src/ao/test/integration/test_vllm.py")]
    assert ("DL401", 7) not in rows and any(r == 6 for _, r in rows)
