"""Every rule's own examples are its tests (Fixit style): valid code is not flagged, invalid
code is flagged and fixes to the expected code, which parses and is stable."""
from __future__ import annotations

import ast

import pytest

from devlint.api import check_source, fix_source
from devlint.rules import registry
from devlint.rules.base import DOC_SECTIONS, doc_sections

RULES = registry.all_rules()
# shell rules' examples are shell scripts, run by tests/shell
PY_RULES = [r for r in RULES if not getattr(r, "shell", False)]


def _cases(kind):
    for rule in PY_RULES:
        for i, ex in enumerate(getattr(rule, kind)):
            yield pytest.param(rule, ex, id=f"{rule.code}-{kind}-{i}")


@pytest.mark.parametrize("rule,example", list(_cases("valid")))
def test_valid_is_not_flagged(rule, example):
    diags = check_source(example.source, example.path, profile=example.profile)
    assert [d for d in diags if d.code == rule.code] == []


@pytest.mark.parametrize("rule,example", list(_cases("invalid")))
def test_invalid_is_flagged_and_fixed(rule, example):
    diags = [d for d in check_source(example.source, example.path, profile=example.profile)
             if d.code == rule.code]
    assert len(diags) == example.count, [d.message for d in diags]
    for d in diags:
        assert 1 <= d.location[0] <= d.end_location[0]
        assert example.source[d.start:d.end].strip(), "the span must cover the hardcoding"
    fixed, remaining, failures = fix_source(example.source, example.path, unsafe=True,
                                            profile=example.profile, select=(rule.code,))
    assert failures == []
    if example.fixed is None:
        assert fixed == example.source
        return
    assert fixed == example.fixed
    ast.parse(fixed)
    assert [d for d in remaining if d.code == rule.code] == []
    again, _, _ = fix_source(fixed, example.path, unsafe=True, profile=example.profile,
                             select=(rule.code,))
    assert again == fixed


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_rule_documents_itself(rule):
    assert rule.code.startswith("DL") and len(rule.code) == 5
    assert rule.name == rule.name.lower() and " " not in rule.name
    assert doc_sections(rule.doc()) == list(DOC_SECTIONS)
    assert rule.valid and rule.invalid
