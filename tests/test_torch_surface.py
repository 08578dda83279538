"""A fixed file never calls a torch function that its target torch lacks (issue 19).

The API surface of each supported torch release (tests/data/torch_surface/<X.Y>.json) is read
from the real release's wheel by tools/torch_surface.py (ast over its .py/.pyi files; each file
names the wheel and its sha256). Every fix devlint makes on the code CI has (every rule's
examples, the runtime matrix's snippets, fixtures/) is made at each target-torch from 2.2 (the
device ladder's forms below torch.accelerator) to the newest release, and every torch call the fix wrote is looked up in the surface of that release
and every newer one: it must exist and accept the arguments the fix gives it.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "tests" / "runtime"))

import torch_surface  # noqa: E402

DATA = ROOT / "tests" / "data" / "torch_surface"
SURFACES = torch_surface.load_surfaces(str(DATA))
RELEASES = list(SURFACES)


def _sources():
    """(id, path, profile, source) for every piece of code CI has that devlint fixes."""
    from cases import SNIPPETS

    from devlint.rules import registry

    for rule in registry.all_rules():
        if getattr(rule, "shell", False):
            continue
        for i, ex in enumerate(rule.invalid):
            yield f"{rule.code}-example-{i}", ex.path, ex.profile, ex.source
    for sn in SNIPPETS:
        yield f"snippet-{sn.name}", "snippet.py", sn.profile, sn.source
    for p in sorted((ROOT / "fixtures").rglob("*.py")):
        rel = p.relative_to(ROOT).as_posix()
        yield rel, rel, "auto", p.read_text()


SOURCES = list(_sources())


# ------------------------------------------------------------------------------ the data


def test_every_supported_release_has_its_surface():
    assert (2, 2) in SURFACES, "the oldest release a table form (`since = 2.2`) may target"
    for needed in ((2, 3), (2, 4), (2, 5), (2, 6), (2, 7), (2, 8), (2, 13), (2, 14)):
        assert needed in SURFACES, needed
    for release, surface in SURFACES.items():
        assert surface["torch"].startswith(f"{release[0]}.{release[1]}.")
        prov = surface["provenance"]
        assert prov["wheel"].startswith(f"torch-{surface['torch']}") and prov["wheel"].endswith(
            ".whl")
        assert len(prov["sha256"]) == 64 and int(prov["sha256"], 16) >= 0
        for module in ("torch", "torch.cuda", "torch.cpu", "torch.amp", "torch.distributed") \
                + (("torch.xpu",) if release >= (2, 3) else ()) \
                + (("torch.accelerator",) if release >= (2, 6) else ()):
            assert surface["modules"].get(module), (release, module)


def test_the_surface_records_what_changed_between_releases():
    """Facts of the releases themselves (the reason the check exists), read from the data."""
    acc = {r: s["modules"]["torch.accelerator"] for r, s in SURFACES.items() if r >= (2, 6)}
    # 2.6 already has the *_index names (the *_idx ones are deprecated aliases there)
    assert {"current_device_index", "set_device_index", "current_device_idx"} <= set(acc[(2, 6)])
    # current_accelerator(check_available=...) arrived in 2.7
    assert acc[(2, 6)]["current_accelerator"]["signatures"] == [[]]
    assert ["check_available", "pos"] in acc[(2, 7)]["current_accelerator"]["signatures"][0]
    # device_index in 2.8; no memory API in torch.accelerator before 2.9
    assert "device_index" not in acc[(2, 7)] and "device_index" in acc[(2, 8)]
    assert "empty_cache" not in acc[(2, 8)] and "empty_cache" in acc[max(SURFACES)]


def test_the_surface_records_what_the_forms_below_2_6_rely_on():
    """No torch.accelerator before 2.6, torch.get_device_module from 2.4; the device ladder's
    module (`getattr(torch, <device type>)`) is torch.cpu without an accelerator, which has
    synchronize, set_device and current_device from 2.2 on, and no empty_cache; torch.mps has
    no is_available before 2.5 (the ladder's getattr default then counts it unavailable)."""
    mods = {r: s["modules"] for r, s in SURFACES.items()}
    assert all(("accelerator" in m["torch"]) == (r >= (2, 6)) for r, m in mods.items())
    assert all(("get_device_module" in m["torch"]) == (r >= (2, 4)) for r, m in mods.items())
    for r, m in mods.items():
        assert {"synchronize", "set_device", "current_device", "is_available",
                "device_count"} <= set(m["torch.cpu"]), r
        assert "empty_cache" not in m["torch.cpu"], r
    # torch.xpu has mem_get_info from 2.6 (the device module's form starts there)
    assert "mem_get_info" not in mods[(2, 5)]["torch.xpu"]
    assert "mem_get_info" in mods[(2, 6)]["torch.xpu"]
    assert "xpu" not in mods[(2, 2)]["torch"] and "is_available" in mods[(2, 3)]["torch.xpu"]
    assert "is_available" not in mods[(2, 4)]["torch.mps"]
    assert "is_available" in mods[(2, 5)]["torch.mps"]


def test_the_reader_matches_the_installed_torch():
    """The static reader, run on the installed torch's files, gives the committed surface of
    that release; and what it lists exists when torch is imported."""
    torch = pytest.importorskip("torch")
    import importlib
    import warnings

    release = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
    site = os.path.dirname(os.path.dirname(torch.__file__))
    read = torch_surface.modules_of(site)
    for module in ("torch.accelerator", "torch.cuda", "torch.xpu", "torch.amp"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            live = importlib.import_module(module)
        for name, entry in read[module].items():
            if entry.get("kind") in ("function", "class") or "module" in entry:
                assert hasattr(live, name), f"{module}.{name} read but not in torch"
        for name in dir(live):
            obj = getattr(live, name)
            if type(obj).__name__ == "tensortype":
                continue  # the legacy tensor types (torch.cuda.FloatTensor) the C core makes
            if not name.startswith("_") and callable(obj) \
                    and getattr(obj, "__module__", "").startswith(module):
                assert name in read[module], f"{module}.{name} in torch but not read"
    if release in SURFACES:
        assert read == SURFACES[release]["modules"], "the committed data is stale"


# ----------------------------------------------------------------------------- the checker


def _problems(original, fixed, target):
    return torch_surface.check_fix(original, fixed, target, SURFACES)


def test_the_check_finds_a_call_the_target_lacks():
    original = "import torch\ntorch.cuda.empty_cache()\n"
    fixed = "import torch as th\nth.accelerator.empty_cache()\n"
    found = _problems(original, fixed, (2, 8))
    assert [(r, "no `empty_cache`" in why) for r, _, why in found] == [((2, 8), True)]
    assert _problems(original, fixed, (2, 9)) == []


def test_the_check_finds_a_keyword_the_target_refuses():
    fixed = ("from torch import accelerator\n"
             "d = accelerator.current_accelerator(check_available=True)\n")
    found = _problems("import torch\n", fixed, (2, 6))
    assert [r for r, _, _ in found] == [(2, 6)]
    assert "check_available" in found[0][2]
    assert _problems("import torch\n", fixed, (2, 7)) == []


def test_the_check_follows_the_device_module_to_each_backend():
    fixed = "import torch\ntorch.get_device_module().ipc_collect()\n"
    found = _problems("import torch\n", fixed, (2, 6))
    assert found and all("torch.xpu has no `ipc_collect`" in why for _, _, why in found)
    ok = "import torch\ntorch.get_device_module().empty_cache()\n"
    assert _problems("import torch\n", ok, (2, 6)) == []


def test_the_check_follows_the_device_ladders_module_to_cpu_too():
    ladder = 'next((t for t in ("cuda", "xpu") if getattr(torch, t).is_available()), "cpu")'
    fixed = f"import torch\ngetattr(torch, {ladder}).empty_cache()\n"
    found = _problems("import torch\n", fixed, (2, 2))
    assert found and all("torch.cpu has no `empty_cache`" in why for _, _, why in found)
    ok = f"import torch\ngetattr(torch, {ladder}).synchronize()\n"
    assert _problems("import torch\n", ok, (2, 2)) == []


def test_calls_the_original_makes_are_not_the_fixs():
    src = "import torch\ntorch.cuda.foo_only_in_old_torch(1)\ntorch.cuda.synchronize()\n"
    fixed = ("import torch\ntorch.cuda.foo_only_in_old_torch(1)\n"
             "torch.accelerator.synchronize()\n")
    assert [c.qual for c in torch_surface.new_calls(src, fixed)] == [
        "torch.accelerator.synchronize"]


# ------------------------------------------------------------------------- the fixes


@pytest.mark.slow
@pytest.mark.parametrize("release", RELEASES, ids=[f"{a}.{b}" for a, b in RELEASES])
def test_no_fix_calls_what_its_target_torch_lacks(release):
    from devlint.api import fix_source

    target = f"{release[0]}.{release[1]}"
    found, checked = [], 0
    for sid, path, profile, source in SOURCES:
        if torch_surface.check_fix("", source, release, {release: SURFACES[release]}):
            continue  # the original already calls what this release lacks: it runs on none
        fixed, _, failures = fix_source(source, path, unsafe=True, profile=profile,
                                        target_torch=target)
        assert failures == [], (sid, failures)
        calls = torch_surface.new_calls(source, fixed)
        checked += len(calls)
        for rel, call, why in torch_surface.check_fix(source, fixed, release, SURFACES):
            found.append(f"{sid} @ target {target}, torch {rel[0]}.{rel[1]}: {call}: {why}")
    assert checked, "the fixes wrote no torch call: nothing was checked"
    assert not found, "\n".join(found)


def test_every_table_replacement_exists_from_its_since():
    """devlint/data/torch_api.toml: each replacement (a device module's member: in torch.cuda
    and torch.xpu) exists in every release from its `since` up to its `until`."""
    from devlint.profiles.torch_api import load_table

    found = []
    forms = 0
    for e in load_table():
        if e.form:
            # a form (below 2.6): the torch calls it writes, from its since up to its until
            forms += 1
            text = e.callee("torch") + ("" if e.whole_call else "()")
            calls = torch_surface.torch_calls(f"import torch\n{text}\n")
            for release, surface in SURFACES.items():
                if release < e.since or (e.until is not None and release >= e.until):
                    continue
                for call in calls:
                    for why in torch_surface.problems(call, surface):
                        found.append(f"{e.name} -> {text}: torch {release}: {why}")
            continue
        if not e.replacement:
            continue
        qual = f"{e.replacement}().{e.member}" if e.member else e.replacement
        call = torch_surface.TorchCall(qual, (), 0, True, 0)
        for release, surface in SURFACES.items():
            if release < e.since or (e.until is not None and release >= e.until):
                continue
            for why in torch_surface.problems(call, surface):
                found.append(f"{e.name} -> {qual} (since {e.since}): torch {release}: {why}")
    assert forms, "the table has no form below 2.6: nothing was checked"
    assert not found, "\n".join(found)
