"""The torch.cuda -> generic API table (devlint/data/torch_api.toml) is data: check it.

Three layers:
- shape: keys, rule codes, version strings, rename chains. Needs no torch.
- torch: every replacement resolves in the installed torch (from ``import torch`` alone), is
  what its kind says, is not newer than the installed torch, and keeps the call's meaning
  (signatures line up; a context manager never becomes a resource constructor).
- cuda: the "safe" claims, exercised on a real CUDA device; skipped without one.
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import re
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    tomllib = pytest.importorskip("tomli")

TABLE_PATH = Path(__file__).resolve().parents[1] / "devlint" / "data" / "torch_api.toml"
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))

REQUIRED_KEYS = {
    "rule",
    "name",
    "kind",
    "replacement",
    "since",
    "safe",
    "insert_device_type",
    "args",
    "reference",
    "note",
}
OPTIONAL_KEYS = {"until", "member", "cpu_value", "needs_accelerator", "member_fallback", "form",
                 "whole_call"}
RULES = {"DL401", "DL402", "DL403", "DL404"}
KINDS = {"call", "class", "context", "attribute"}
VERSION = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)$")

# Classes whose constructor takes a *device* and builds a new resource. They may support
# `with obj:`, but `with torch.cuda.stream(s)` is not `with torch.Stream(s)`: mapping a
# context-manager function onto one of these changes the meaning of its argument.
RESOURCE_CONSTRUCTORS = {"torch.Stream", "torch.Event", "torch.device", "torch.Generator"}


def load_table() -> list[dict]:
    with TABLE_PATH.open("rb") as f:
        return tomllib.load(f)["api"]


ENTRIES = load_table()


def entry_id(entry: dict) -> str:
    suffix = f"<{entry['until']}" if "until" in entry else ""
    return f"{entry['name']}@{entry['since'] or '-'}{suffix}"


def version_tuple(text: str) -> tuple[int, int]:
    major, minor = VERSION.match(text).groups()
    return int(major), int(minor)


# --------------------------------------------------------------------------- shape (no torch)


def test_table_has_only_api_entries():
    with TABLE_PATH.open("rb") as f:
        document = tomllib.load(f)
    assert set(document) == {"api"}
    assert len(document["api"]) >= 30


@pytest.mark.parametrize("entry", ENTRIES, ids=entry_id)
def test_entry_keys_and_types(entry):
    keys = set(entry)
    assert REQUIRED_KEYS <= keys, f"missing {REQUIRED_KEYS - keys}"
    assert keys <= REQUIRED_KEYS | OPTIONAL_KEYS, f"unknown {keys - REQUIRED_KEYS - OPTIONAL_KEYS}"
    for key in REQUIRED_KEYS - {"safe", "insert_device_type"}:
        assert isinstance(entry[key], str), key
    assert isinstance(entry["safe"], bool)
    assert isinstance(entry["insert_device_type"], bool)
    assert entry["rule"] in RULES
    assert entry["kind"] in KINDS
    assert entry["name"].startswith("torch.")
    assert entry["args"], "args is 'same' or a description, never empty"
    assert entry["reference"]
    if "member" in entry:
        # a device module's function: torch.get_device_module().<member>
        assert entry["replacement"] == "torch.get_device_module", entry["replacement"]
        assert entry["member"].isidentifier()
        assert entry.get("member_fallback", "x").isidentifier()
        assert entry["kind"] == "call"
        # without an accelerator the form raises (torch.cpu lacks the member): it either asks
        # first (cpu_value) or the call has no meaning there (needs_accelerator)
        assert ("cpu_value" in entry) != bool(entry.get("needs_accelerator")), entry["name"]


@pytest.mark.parametrize("entry", ENTRIES, ids=entry_id)
def test_entry_versions(entry):
    if entry.get("form"):
        # a form below 2.6: no torch callee; `since` is the oldest surface its torch calls were
        # checked in (tests/test_torch_surface.py), or 1.0 for a form of builtins and getattr
        # defaults alone (no torch call at all: right on every release)
        import torch_surface

        assert entry["replacement"] == "" and "member" not in entry
        assert entry["until"] == "2.6", "torch.accelerator's own forms take over at 2.6"
        assert "cpu_value" not in entry, "the guard asks torch.accelerator, which 2.6 brought"
        text = entry["form"].replace("{ladder}", '"cpu"').replace("{torch}", "torch")
        calls = torch_surface.torch_calls(f"import torch\n{text}\n")
        if entry["since"] == "1.0":
            assert calls == [], (entry["name"], calls)
        else:
            assert entry["reference"].startswith(
                f"tests/data/torch_surface/{entry['since']}.json"), entry["reference"]
        return
    if entry["replacement"] == "":
        assert entry["since"] == "", "no replacement, so no first version"
        assert "until" not in entry
        assert entry["safe"] is False, "nothing to rewrite to"
        assert entry["insert_device_type"] is False
        assert entry["note"], "say what a human can do instead"
        return
    assert entry["replacement"].startswith("torch.")
    assert VERSION.match(entry["since"]), entry["since"]
    if "until" in entry:
        assert VERSION.match(entry["until"]), entry["until"]
        assert version_tuple(entry["since"]) < version_tuple(entry["until"])
    if version_tuple(entry["since"]) < (2, 13):
        # older than the torch the test runs against: the version must come with evidence,
        # the versioned docs page (or release-tag file) of exactly that release
        # (or the release's own surface, read from its wheel: tests/data/torch_surface)
        ref = entry["reference"]
        if ref.startswith("tests/data/torch_surface/"):
            assert ref.startswith(f"tests/data/torch_surface/{entry['since']}.json"), ref
            return
        assert ref.startswith("https://"), ref
        assert f"/{entry['since']}/" in ref, ref


def test_names_are_unique_or_form_a_rename_chain():
    by_name: dict[str, list[dict]] = {}
    for entry in ENTRIES:
        by_name.setdefault(entry["name"], []).append(entry)
    for name, group in by_name.items():
        if len(group) == 1:
            assert "until" not in group[0], f"{name}: until without a newer entry"
            continue
        group = sorted(group, key=lambda e: version_tuple(e["since"]))
        assert len({e["rule"] for e in group}) == 1, name
        assert len({e["kind"] for e in group}) == 1, name
        for older, newer in zip(group, group[1:]):
            assert older.get("until") == newer["since"], f"{name}: chain broken at {older['since']}"
        assert "until" not in group[-1], f"{name}: newest entry must not end"


def test_device_type_insertion_only_for_amp():
    for entry in ENTRIES:
        if entry["insert_device_type"]:
            assert entry["rule"] == "DL403", entry["name"]


def test_rules_cover_the_spec():
    names = {e["name"] for e in ENTRIES}
    expected = {
        "torch.cuda.synchronize",
        "torch.cuda.device_count",
        "torch.cuda.is_available",
        "torch.cuda.current_device",
        "torch.cuda.set_device",
        "torch.cuda.current_stream",
        "torch.cuda.set_stream",
        "torch.cuda.empty_cache",
        "torch.cuda.memory_allocated",
        "torch.cuda.max_memory_allocated",
        "torch.cuda.memory_reserved",
        "torch.cuda.max_memory_reserved",
        "torch.cuda.reset_peak_memory_stats",
        "torch.cuda.memory_stats",
        "torch.cuda.reset_accumulated_memory_stats",
        "torch.cuda.mem_get_info",
        "torch.cuda.device",
        "torch.cuda.stream",
        "torch.cuda.Stream",
        "torch.cuda.Event",
        "torch.cuda.amp.autocast",
        "torch.cuda.amp.GradScaler",
        "torch.autocast",
        "torch.cuda.manual_seed",
        "torch.cuda.manual_seed_all",
    }
    assert expected <= names, expected - names


# --------------------------------------------------------------------------- against torch

@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


@pytest.fixture(scope="module")
def installed(torch) -> tuple[int, int]:
    major, minor = re.match(r"(\d+)\.(\d+)", torch.__version__).groups()
    return int(major), int(minor)


def resolve(torch, dotted: str):
    """Follow attributes from the imported torch package, as rewritten code would."""
    parts = dotted.split(".")
    assert parts[0] == "torch"
    obj = torch
    for part in parts[1:]:
        obj = getattr(obj, part)
    return obj


def applies(entry: dict, installed: tuple[int, int]) -> bool:
    if version_tuple(entry["since"]) > installed:
        return False
    return "until" not in entry or installed < version_tuple(entry["until"])


def is_context_manager_factory(obj) -> bool:
    if inspect.isclass(obj):
        return hasattr(obj, "__enter__") and hasattr(obj, "__exit__")
    wrapped = getattr(obj, "__wrapped__", None)
    return wrapped is not None and inspect.isgeneratorfunction(wrapped)


def parameters(obj) -> list[inspect.Parameter] | None:
    try:
        return list(inspect.signature(obj).parameters.values())
    except (TypeError, ValueError):
        return None  # builtin without a text signature


def positional(params: list[inspect.Parameter]) -> list[inspect.Parameter]:
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p for p in params if p.kind in kinds and p.name != "self"]


WITH_REPLACEMENT = [e for e in ENTRIES if e["replacement"]]
WITHOUT_REPLACEMENT = [e for e in ENTRIES if not e["replacement"] and not e.get("form")]
WITH_FORM = [e for e in ENTRIES if e.get("form")]


@pytest.mark.parametrize("entry", WITH_FORM, ids=entry_id)
def test_forms_below_2_6_run_where_the_original_runs(entry, torch):
    """A form below torch.accelerator, evaluated on the installed (CPU) torch: the questions
    answer what torch.cuda's answer without CUDA (False, 0); the device ladder's module is
    torch.cpu, whose synchronize / set_device run (the originals raise there)."""
    from devlint.profiles.torch_api import entries_by_name

    e = next(x for x in entries_by_name(entry["rule"])[entry["name"]] if x.form)
    text = e.callee("torch")
    if e.whole_call:
        assert eval(text, {"torch": torch}) == resolve(torch, entry["name"])()
        return
    fn = eval(text, {"torch": torch})
    assert fn.__module__.startswith("torch.cpu"), fn.__module__
    if entry["name"].endswith("set_device"):
        fn(0)
    else:
        fn()


@pytest.mark.parametrize("entry", WITH_REPLACEMENT, ids=entry_id)
def test_replacement_resolves_and_has_its_kind(entry, torch, installed):
    if version_tuple(entry["since"]) > installed:
        pytest.skip(f"installed torch {installed} predates {entry['since']}")
    if "until" in entry and installed >= version_tuple(entry["until"]):
        # a renamed callee: the old name may survive as a deprecated alias, or be gone
        with contextlib.suppress(AttributeError):
            resolve(torch, entry["replacement"])
        return
    obj = resolve(torch, entry["replacement"])
    if entry["kind"] == "class":
        assert inspect.isclass(obj), f"{entry['replacement']} is not a class"
    elif entry["kind"] == "context":
        assert is_context_manager_factory(obj), f"{entry['replacement']} is no context manager"
        assert entry["replacement"] not in RESOURCE_CONSTRUCTORS, (
            f"{entry['name']} selects an existing object; {entry['replacement']}(...) builds a new one"
        )
    else:
        assert callable(obj), f"{entry['replacement']} is not callable"


@pytest.mark.parametrize("entry", WITH_REPLACEMENT, ids=entry_id)
def test_the_cuda_api_exists(entry, torch):
    """The table names real torch.cuda APIs (torch 2.13 keeps the deprecated amp ones)."""
    resolve(torch, entry["name"])


@pytest.mark.parametrize(
    "entry",
    [e for e in WITH_REPLACEMENT if e["safe"] and e["kind"] in ("call", "class")],
    ids=entry_id,
)
def test_safe_rewrites_keep_the_positional_signature(entry, torch, installed):
    """A safe fix renames the callee; positional arguments must land on the same parameters."""
    if not applies(entry, installed):
        pytest.skip("entry does not apply to the installed torch")
    original = parameters(resolve(torch, entry["name"]))
    if "member" in entry:
        # what torch.get_device_module() returns on an XPU machine (CUDA's is the original)
        replacement = parameters(getattr(torch.xpu, entry["member"]))
    else:
        replacement = parameters(resolve(torch, entry["replacement"]))
    if original is None or replacement is None:
        pytest.skip("builtin without a signature")
    original, replacement = positional(original), positional(replacement)
    if entry["insert_device_type"]:
        assert replacement[0].name in ("device", "device_type"), replacement[0]
        replacement = replacement[1:]
    if entry["name"] == entry["replacement"]:
        return
    if "member" in entry:
        assert [p.name for p in original] == [p.name for p in replacement]
        return
    assert len(original) == len(replacement), (original, replacement)
    if entry["args"] == "same":
        assert [p.name for p in original] == [p.name for p in replacement]


@pytest.mark.parametrize("entry", [e for e in ENTRIES if e["kind"] == "context"], ids=entry_id)
def test_context_replacements_work_on_cpu(entry, torch, installed):
    if not entry["replacement"]:
        pytest.skip("no generic callee")
    if not applies(entry, installed):
        pytest.skip("entry does not apply to the installed torch")
    factory = resolve(torch, entry["replacement"])
    if entry["insert_device_type"] or "device_type" in entry["args"]:
        candidates = [("cpu",)]
    else:
        candidates = [(None,), ()]
    for args in candidates:
        try:
            manager = factory(*args)
            with manager:
                pass
        except (TypeError, RuntimeError):
            continue
        return
    # not exercisable without an accelerator: at least be a context manager
    assert is_context_manager_factory(factory)


DEVICE_MODULE_FORMS = [e for e in ENTRIES if "member" in e]


@pytest.mark.parametrize("entry", DEVICE_MODULE_FORMS, ids=entry_id)
def test_device_module_forms(entry, torch, installed):
    """`torch.get_device_module().<member>`: the member is the CUDA function itself on CUDA and
    exists on the XPU module; the CPU module lacks it, so without CUDA the original must either
    raise as well (needs_accelerator) or, for an entry with a cpu_value, be a no-op or raise
    where the availability test keeps the fixed code running."""
    assert callable(torch.get_device_module)
    member = entry["member"]
    assert entry["name"] == f"torch.cuda.{member}", "the same function on each backend"
    assert callable(getattr(torch.cuda, member))
    assert callable(getattr(torch.xpu, member))
    assert not hasattr(torch.cpu, member)
    # DL404's seeds: every accelerator module torch ships has the member, or the fallback the
    # form falls back to (torch.mps: manual_seed, no manual_seed_all). (DL401's memory forms
    # are not on every backend: the table's DL401 header lists where each is missing.)
    fallback = entry.get("member_fallback")
    for backend in ("cuda", "xpu", "mps", "mtia") if entry["rule"] == "DL404" else ():
        mod = getattr(torch, backend)
        assert callable(getattr(mod, member, None)) or (
            fallback and callable(getattr(mod, fallback, None))), (backend, member)
    if fallback:
        assert not hasattr(torch.mps, member) or hasattr(torch.mps, fallback)
        assert not hasattr(torch.cpu, fallback)
    if torch.cuda.is_available():
        # on CUDA the form calls the very function the original called
        assert torch.get_device_module() is torch.cuda
        return
    assert torch.get_device_module("cuda") is torch.cuda
    if "cpu_value" in entry:
        assert version_tuple(entry["since"]) >= (2, 6), "the guard is torch.accelerator.is_available"
        if entry["cpu_value"] != "None":
            # a reading: without CUDA the original reads exactly the value the fix falls back to
            assert getattr(torch.cuda, member)() == ast.literal_eval(entry["cpu_value"])
    else:
        with pytest.raises((AssertionError, AttributeError, RuntimeError)):
            getattr(torch.cuda, member)()


@pytest.mark.parametrize("entry", WITHOUT_REPLACEMENT, ids=entry_id)
def test_entries_without_replacement_are_still_without_one(entry, torch):
    """When torch grows a generic equivalent, this fails: fill in the replacement."""
    short = entry["name"].rsplit(".", 1)[1]
    assert not hasattr(torch.accelerator, short), f"torch.accelerator.{short} exists now"


def test_stream_selects_itself_as_a_context_manager(torch, installed):
    """The torch.cuda.stream note: `with s:` is the generic form (2.7+), torch.Stream(s) is not."""
    if installed < (2, 7):
        pytest.skip("torch.Stream is a context manager from 2.7")
    stream = torch.Stream("cpu")
    with stream as entered:
        assert entered is stream
    # the constructor's first argument is a device: torch.Stream(s) would not select s
    assert torch.Stream.__doc__.strip().startswith("Stream(device")


def test_argument_claims_in_notes(torch, installed):
    """Differences the table states as checked on torch 2.13 CPU."""
    with pytest.raises(TypeError):
        torch.accelerator.set_stream(None)  # torch.cuda.set_stream(None) is a no-op
    with pytest.raises(TypeError):
        torch.Event(True)  # first positional is device, not enable_timing
    assert torch.Event(enable_timing=True) is not None
    grad_scaler_device = inspect.signature(torch.amp.GradScaler).parameters["device"]
    assert grad_scaler_device.default == "cuda"
    assert not hasattr(torch.accelerator, "manual_seed")
    if not torch.accelerator.is_available():
        assert torch.accelerator.device_count() == 0
        assert torch.accelerator.current_accelerator() is None
        torch.cuda.empty_cache()  # silent no-op without CUDA...
        with pytest.raises(RuntimeError):
            torch.accelerator.empty_cache()  # ...while the generic call raises


def test_autocast_positional_order_differs(torch):
    """Why torch.cuda.amp.autocast -> torch.autocast is unsafe with positional arguments."""
    old = [p.name for p in positional(parameters(torch.cuda.amp.autocast.__init__))]
    new = [p.name for p in positional(parameters(torch.autocast.__init__))]
    assert old[:2] == ["enabled", "dtype"]
    assert new[:3] == ["device_type", "dtype", "enabled"]


# --------------------------------------------------------------------------- on a CUDA device


@pytest.fixture(scope="module")
def cuda(torch):
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
    return torch


def test_cuda_device_queries_agree(cuda, installed):
    torch = cuda
    assert torch.accelerator.current_accelerator().type == "cuda"
    assert torch.accelerator.is_available() is torch.cuda.is_available()
    assert torch.accelerator.device_count() == torch.cuda.device_count()
    if installed >= (2, 7):
        assert torch.accelerator.current_device_index() == torch.cuda.current_device()
    torch.accelerator.synchronize(0)
    torch.accelerator.synchronize(torch.device("cuda:0"))


def test_cuda_memory_queries_agree(cuda, installed):
    torch = cuda
    if installed < (2, 9):
        pytest.skip("memory API from 2.9")
    keep = torch.empty(1 << 20, device="cuda")
    assert torch.accelerator.memory_allocated() == torch.cuda.memory_allocated()
    assert torch.accelerator.memory_allocated(0) == torch.cuda.memory_allocated(0)
    assert torch.accelerator.memory_reserved() == torch.cuda.memory_reserved()
    assert torch.accelerator.max_memory_allocated() == torch.cuda.max_memory_allocated()
    assert set(torch.accelerator.memory_stats()) == set(torch.cuda.memory_stats())
    torch.accelerator.reset_peak_memory_stats()
    torch.accelerator.reset_accumulated_memory_stats()
    torch.accelerator.empty_cache()
    if installed >= (2, 10):
        assert torch.accelerator.get_memory_info()[1] == torch.cuda.mem_get_info()[1]
    del keep


def test_cuda_device_index_context(cuda, installed):
    torch = cuda
    if installed < (2, 8):
        pytest.skip("device_index from 2.8")
    last = torch.cuda.device_count() - 1
    before = torch.cuda.current_device()
    with torch.accelerator.device_index(last):
        assert torch.cuda.current_device() == last
    assert torch.cuda.current_device() == before
    with pytest.raises((TypeError, RuntimeError)):  # int or None only, unlike torch.cuda.device
        with torch.accelerator.device_index(torch.device("cuda", last)):
            pass
    with torch.cuda.device(-1):  # a no-op for torch.cuda.device...
        assert torch.cuda.current_device() == before
    with pytest.raises(RuntimeError):  # ...an invalid ordinal for device_index
        with torch.accelerator.device_index(-1):
            pass


def test_cuda_stream_selection(cuda, installed):
    torch = cuda
    if installed < (2, 7):
        pytest.skip("torch.Stream is a context manager from 2.7")
    default = torch.accelerator.current_stream()
    side = torch.Stream("cuda")
    with side:
        assert torch.accelerator.current_stream() == side
        assert torch.cuda.current_stream().stream_id == side.stream_id
    assert torch.accelerator.current_stream() == default
    legacy = torch.cuda.Stream()
    assert isinstance(legacy, torch.Stream)  # so `with s:` also covers torch.cuda.Stream
    with legacy:
        current = torch.accelerator.current_stream()
        assert current.stream_id == legacy.stream_id
        # the same stream, yet torch.Stream == torch.cuda.Stream is False: a current_stream
        # rewrite breaks `torch.cuda.current_stream() == s` style comparisons
        assert (current == legacy) is False
    torch.accelerator.set_stream(legacy)
    assert torch.cuda.current_stream() == legacy
    torch.cuda.set_stream(side)
    assert torch.accelerator.current_stream() == side
    torch.accelerator.set_stream(default)
    assert isinstance(torch.cuda.Event(), torch.Event)


def test_cuda_current_stream_type(cuda):
    """The current_stream entry is unsafe because the result is not a torch.cuda.Stream."""
    torch = cuda
    generic = torch.accelerator.current_stream()
    assert isinstance(torch.cuda.current_stream(), torch.cuda.Stream)
    assert not isinstance(generic, torch.cuda.Stream)
    assert not hasattr(generic, "cuda_stream")


def test_cuda_event_timing(cuda):
    torch = cuda
    start, end = torch.Event(enable_timing=True), torch.Event(enable_timing=True)
    start.record()
    torch.ones(1024, device="cuda").sum()
    end.record()
    end.synchronize()
    assert start.elapsed_time(end) >= 0.0


def test_cuda_amp_equivalence(cuda):
    torch = cuda
    a = torch.randn(8, 8, device="cuda")
    with pytest.warns(FutureWarning), torch.cuda.amp.autocast():
        old = (a @ a).dtype
    with torch.autocast("cuda"):
        new = (a @ a).dtype
    assert old == new == torch.float16
    with pytest.warns(FutureWarning):
        old_scaler = torch.cuda.amp.GradScaler(1024.0)
    new_scaler = torch.amp.GradScaler("cuda", 1024.0)
    assert old_scaler.get_scale() == new_scaler.get_scale() == 1024.0


def test_cuda_manual_seed_reseeds_cpu_too(cuda):
    """Why DL404's fix is the device module's seed, not torch.manual_seed: the same CUDA
    numbers either way, but torch.manual_seed changes later CPU numbers."""
    torch = cuda
    torch.manual_seed(1)
    cpu_before = torch.get_rng_state()
    torch.cuda.manual_seed_all(0)
    via_cuda = torch.rand(4, device="cuda")
    assert torch.equal(torch.get_rng_state(), cpu_before)
    dm = torch.get_device_module()
    assert dm is torch.cuda
    getattr(dm, "manual_seed_all", dm.manual_seed)(0)  # DL404's form
    assert torch.equal(torch.rand(4, device="cuda"), via_cuda)
    assert torch.equal(torch.get_rng_state(), cpu_before)
    torch.manual_seed(0)
    via_torch = torch.rand(4, device="cuda")
    assert torch.equal(via_cuda, via_torch)
    assert not torch.equal(torch.get_rng_state(), cpu_before)


def test_member_fallback_form_on_a_module_without_the_member():
    """`getattr(torch.get_device_module(), "manual_seed_all", ...manual_seed)`: on a backend
    module without manual_seed_all (torch.mps) the form calls its manual_seed; on one with it,
    manual_seed_all. Evaluated with stand-in modules that record the call."""
    from types import SimpleNamespace

    from devlint.profiles.torch_api import entries_by_name

    (entry,) = entries_by_name("DL404")["torch.cuda.manual_seed_all"]
    calls = []
    single = SimpleNamespace(manual_seed=lambda s: calls.append(("manual_seed", s)))
    multi = SimpleNamespace(manual_seed=lambda s: calls.append(("manual_seed", s)),
                            manual_seed_all=lambda s: calls.append(("manual_seed_all", s)))
    for mod in (single, multi):
        fake = SimpleNamespace(get_device_module=lambda mod=mod: mod)
        eval(entry.callee("fake"), {"fake": fake})(5)
    assert calls == [("manual_seed", 5), ("manual_seed_all", 5)]
