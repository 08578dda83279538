"""The `torch.cuda.X` -> device-generic replacement table (data: devlint/data/torch_api.toml)."""
from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache

from devlint.profiles import _load_toml_bytes

TABLE_PATH = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "torch_api.toml")


@dataclass(frozen=True)
class ApiEntry:
    rule: str
    name: str
    kind: str
    replacement: str
    since: tuple[int, int] | None
    until: tuple[int, int] | None
    safe: bool
    insert_device_type: bool
    args: str
    reference: str
    note: str
    member: str = ""  # call `<replacement>().<member>` (a device module's function)
    cpu_value: str = ""  # the fixed code's value where no accelerator is available
    needs_accelerator: bool = False  # meaningless without an accelerator (raises, like CUDA's)
    member_fallback: str = ""  # the member to call on a backend module that lacks `member`
    form: str = ""  # the fix's text where no torch callee is the replacement (below 2.6)
    whole_call: bool = False  # `form` replaces the whole argument-less call, not the callee

    def callee(self, torch_local: str = "torch") -> str:
        """The replacement as written in the fixed code, with the file's torch name."""
        if self.form:
            return self.form.replace("{ladder}", _ladder()).replace("{torch}", torch_local)
        repl = self.replacement
        if repl.startswith("torch."):
            repl = torch_local + repl[len("torch"):]
        if self.member and self.member_fallback:
            # `getattr(torch.get_device_module(), "manual_seed_all",
            #          torch.get_device_module().manual_seed)`: torch.mps lacks the first
            return (f'getattr({repl}(), "{self.member}", '
                    f'{repl}().{self.member_fallback})')
        return f"{repl}().{self.member}" if self.member else repl

    def available_for(self, target: tuple[int, int]) -> bool:
        if not (self.replacement or self.form) or self.since is None:
            return False
        if target < self.since:
            return False
        return self.until is None or target < self.until


def _ver(v) -> tuple[int, int] | None:
    if not v:
        return None
    major, minor = str(v).split(".")[:2]
    return int(major), int(minor)


@lru_cache(maxsize=None)
def load_table() -> tuple[ApiEntry, ...]:
    with open(TABLE_PATH, "rb") as f:
        data = _load_toml_bytes(f.read())
    out = []
    for e in data.get("api", []):
        out.append(ApiEntry(
            rule=e["rule"], name=e["name"], kind=e.get("kind", "call"),
            replacement=e.get("replacement", ""), since=_ver(e.get("since")),
            until=_ver(e.get("until")), safe=bool(e.get("safe", False)),
            insert_device_type=bool(e.get("insert_device_type", False)),
            args=e.get("args", "same"), reference=e.get("reference", ""), note=e.get("note", ""),
            member=e.get("member", ""),
            cpu_value=e.get("cpu_value", ""),
            needs_accelerator=bool(e.get("needs_accelerator", False)),
            member_fallback=e.get("member_fallback", ""),
            form=e.get("form", ""), whole_call=bool(e.get("whole_call", False))))
    return tuple(out)


@lru_cache(maxsize=None)
def _ladder() -> str:
    """The torch profile's device type below torch.accelerator (its oldest `device-type` form,
    devlint/data/profiles.toml): the first of cuda, xpu, mps whose module says
    `is_available()`, else "cpu". `{ladder}` in a table `form` stands for it."""
    from devlint.profiles import builtin_profiles

    forms = builtin_profiles()["torch"].roles["device-type"]
    return min(forms, key=lambda f: f.since or (0, 0)).expr


@lru_cache(maxsize=None)
def entries_by_name(rule: str) -> dict:
    """name -> entries (several when a replacement was renamed across versions)."""
    out: dict = {}
    for e in load_table():
        if e.rule == rule:
            out.setdefault(e.name, []).append(e)
    return out


def best_entry(entries, target: tuple[int, int]):
    """The entry whose replacement exists in the target torch, else the first one (flag only)."""
    for e in entries:
        if e.available_for(target):
            return e
    return entries[0] if entries else None


@dataclass(frozen=True)
class ProfileApi:
    name: str
    attribute: str
    replacement: str
    imports: tuple[str, ...]
    safe: bool
    note: str


@lru_cache(maxsize=None)
def _profile_api_data() -> dict:
    path = os.path.join(os.path.dirname(TABLE_PATH), "profile_api.toml")
    with open(path, "rb") as f:
        return _load_toml_bytes(f.read())


@lru_cache(maxsize=None)
def profile_overrides(profile: str) -> dict:
    """name -> [ProfileApi] for one profile (data: devlint/data/profile_api.toml)."""
    data = _profile_api_data()
    out: dict = {}
    for e in data.get(profile, []):
        imp = e.get("import", ())
        out.setdefault(e["name"], []).append(ProfileApi(
            e["name"], e.get("attribute", ""), e["replacement"],
            (imp,) if isinstance(imp, str) else tuple(imp), bool(e.get("safe", False)),
            e.get("note", "")))
    return out


@lru_cache(maxsize=None)
def project_api_names() -> frozenset:
    """Profile-table names outside `torch.cuda` (a project's own CUDA-only helpers, such as
    vLLM's `cuda_device_count_stateless`): the engine collects their references too."""
    data = _profile_api_data()
    return frozenset(e["name"] for entries in data.values() if isinstance(entries, list)
                     for e in entries if not e["name"].startswith("torch.cuda"))
