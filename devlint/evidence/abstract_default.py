"""Principle: the default of an abstract method's parameter is never used.

`@abstractmethod def set_rng_state(self, state, device: str = "cuda") -> None: ...` in a base
class: a call runs an override, with the override's own signature and defaults (each
platform's subclass names its own device), so the abstract default never reaches a device.
Evidence: the `@abstractmethod` decorator (file:line).
Limits: only a method decorated `@abstractmethod` (`abc.abstractmethod`) whose body does
nothing (a docstring, `pass`, `...`, `raise NotImplementedError`): an abstract method with a
body can be reached through `super()`, and its default with it.
"""
from __future__ import annotations

import ast

from devlint.evidence import Reason
from devlint.evidence.dead_default import default_of


def _is_abstract(d) -> bool:
    name = d.attr if isinstance(d, ast.Attribute) else getattr(d, "id", "")
    return name == "abstractmethod"


def _does_nothing(stmt) -> bool:
    if isinstance(stmt, ast.Pass):
        return True
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
        return True  # a docstring or `...`
    if isinstance(stmt, ast.Raise):
        exc = stmt.exc.func if isinstance(stmt.exc, ast.Call) else stmt.exc
        return getattr(exc, "id", None) == "NotImplementedError"
    return False


def abstract_default_reason(facts, node) -> Reason | None:
    """The reason for a candidate in the default of an empty abstract method's parameter."""
    if facts.tree is None:
        return None
    found = default_of(facts, node)
    if found is None:
        return None
    fn = found[0]
    mark = next((d for d in fn.decorator_list if _is_abstract(d)), None)
    if mark is None or not all(_does_nothing(st) for st in fn.body):
        return None
    return Reason("abstract-default", f"a default of the abstract method `{fn.name}`: every "
                  "call runs an override, with its own signature", facts.path, mark.lineno)
