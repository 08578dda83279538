"""Rule lookup and selection (codes, code prefixes, kebab-case names, ALL)."""
from __future__ import annotations

import importlib
from functools import lru_cache

# module names, in catalog order; each defines exactly one Rule subclass named RULE
RULE_MODULES = (
    "dl101_device_literal_to",
    "dl102_cuda_method",
    "dl103_device_literal_argument",
    "dl104_device_literal_constant",
    "dl105_device_fstring",
    "dl106_cuda_or_cpu_fallback",
    "dl201_is_cuda_assert",
    "dl202_is_cuda_branch",
    "dl203_cuda_only_skip",
    "dl301_cuda_visible_devices",
    "dl302_shell_cuda_visible_devices",
    "dl303_shell_device_option",
    "dl401_torch_cuda_api",
    "dl402_cuda_stream_event",
    "dl403_cuda_amp",
    "dl404_cuda_manual_seed",
    "dl501_hardcoded_dist_backend",
    "dl900_unused_suppression",
    "dl902_io_error",
)


@lru_cache(maxsize=None)
def all_rules() -> tuple:
    out = []
    for mod in RULE_MODULES:
        m = importlib.import_module(f"devlint.rules.{mod}")
        out.append(m.RULE)
    return tuple(out)


def by_code() -> dict:
    return {r.code: r for r in all_rules()}


def lookup(code_or_name: str):
    """A rule class by exact code or name, else None."""
    key = code_or_name.strip()
    for r in all_rules():
        if r.code == key.upper() or r.name == key.lower():
            return r
    return None


def _matches(selector: str, rule) -> bool:
    s = selector.strip()
    if s.upper() == "ALL":
        return True
    if s.lower() == rule.name:
        return True
    return rule.code.startswith(s.upper()) and s.upper().startswith("DL")


def selector_matches_any(selector: str) -> bool:
    return any(_matches(selector, r) for r in all_rules()) or _is_known_code(selector)


def _is_known_code(selector: str) -> bool:
    # codes handled outside the Python rule table (shell rule, syntax errors)
    return selector.upper() in ("DL999", "DL99")


def select_codes(select, extend_select=(), ignore=(), codes=None) -> frozenset:
    """The enabled codes: select + extend-select, minus ignore; a more specific selector wins
    (like ruff: `--select DL1 --ignore DL` keeps nothing, `--select DL101 --ignore DL1` keeps DL101)."""
    codes = codes or all_codes()
    enabled = set()
    for code in codes:
        best_on = max((_spec(s) for s in (*select, *extend_select) if _code_matches(s, code)), default=-1)
        best_off = max((_spec(s) for s in ignore if _code_matches(s, code)), default=-1)
        if best_on >= 0 and best_on > best_off:
            enabled.add(code)
    return frozenset(enabled)


def all_codes() -> tuple:
    return tuple(r.code for r in all_rules())


def _name_of(code: str) -> str | None:
    r = by_code().get(code)
    return r.name if r else None


def _code_matches(selector: str, code: str) -> bool:
    s = selector.strip()
    if s.upper() == "ALL":
        return True
    if s.lower() == _name_of(code):
        return True
    return s.upper().startswith("DL") and code.startswith(s.upper())


def _spec(selector: str) -> int:
    s = selector.strip()
    if s.upper() == "ALL":
        return 0
    if not s.upper().startswith("DL"):
        return 10  # a name is exact
    return len(s)


def fixable_codes(settings) -> frozenset:
    """The codes whose fixes are offered: `fixable` minus `unfixable` (ruff's settings)."""
    fixable = getattr(settings, "fixable", ("ALL",))
    unfixable = getattr(settings, "unfixable", ())
    if fixable == ("ALL",) and not unfixable:
        return frozenset(all_codes())
    return select_codes(fixable, (), unfixable)


def drop_unfixable(diagnostics, settings):
    """The diagnostics, those of rules not fixable by the settings without their fix."""
    if getattr(settings, "fixable", ("ALL",)) == ("ALL",) and not getattr(settings,
                                                                          "unfixable", ()):
        return diagnostics
    allowed = fixable_codes(settings)
    for d in diagnostics:
        if d.fix is not None and d.code not in allowed:
            d.fix = None
            d.edit_locations = []
    return diagnostics


def enabled_codes(settings, path: str) -> frozenset:
    """The codes enabled for `path`: select/extend-select/ignore, then its per-file-ignores."""
    from devlint.settings import ignored_codes_for

    codes = select_codes(settings.select, settings.extend_select, settings.ignore)
    per_file = ignored_codes_for(settings, path)
    if per_file:
        codes = frozenset(c for c in codes
                          if not any(c.startswith(p.upper()) or p.upper() == "ALL"
                                     or _name_of(c) == p.lower() for p in per_file))
    return codes
