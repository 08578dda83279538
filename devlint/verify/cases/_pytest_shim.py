"""The part of pytest's API a test module needs at import time and while its test functions run,
so that the built-in cases can run a real test module (the seed's ``test_kda.py``) on a machine
where only ``devlint[verify]`` is installed, without pytest.

Provided: ``pytest.mark.<name>`` (``parametrize`` and any other mark, recorded on the function's
``pytestmark`` list as pytest does), ``pytest.param``, ``pytest.skip`` (raises
``pytest.skip.Exception``), ``pytest.importorskip`` and ``pytest.fail``. Fixtures, ``raises`` and
the rest of pytest are not: a test module that needs them is run with pytest itself.

The built-in cases always load their test module with this module standing in for ``pytest``
(whether or not pytest is installed), so the case computes the same thing everywhere.
"""
from __future__ import annotations

import importlib
import inspect
import types
from dataclasses import dataclass, field
from typing import Any


class Skipped(Exception):
    """Raised by :func:`skip`; ``msg`` holds the reason, as pytest's ``Skipped`` does."""

    def __init__(self, msg: str = ""):
        super().__init__(msg)
        self.msg = msg


class Failed(AssertionError):
    """Raised by :func:`fail`."""


@dataclass(frozen=True)
class Mark:
    name: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)


class MarkDecorator:
    """``pytest.mark.NAME`` / ``pytest.mark.NAME(*args, **kwargs)``: applied to a function or class,
    appends a :class:`Mark` to its ``pytestmark`` list."""

    def __init__(self, mark: Mark):
        self.mark = mark

    @property
    def name(self) -> str:
        return self.mark.name

    @property
    def args(self) -> tuple:
        return self.mark.args

    @property
    def kwargs(self) -> dict:
        return self.mark.kwargs

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and (inspect.isfunction(args[0]) or inspect.isclass(args[0])):
            target = args[0]
            marks = list(getattr(target, "pytestmark", []))
            marks.append(self.mark)
            target.pytestmark = marks
            return target
        return MarkDecorator(Mark(self.mark.name, self.mark.args + args, {**self.mark.kwargs, **kwargs}))


class MarkGenerator:
    def __getattr__(self, name: str) -> MarkDecorator:
        if name.startswith("_"):
            raise AttributeError(name)
        return MarkDecorator(Mark(name))


@dataclass(frozen=True)
class ParameterSet:
    """``pytest.param(*values, id=..., marks=...)``."""

    values: tuple
    marks: tuple = ()
    id: str | None = None


def param(*values: Any, marks=(), id: str | None = None) -> ParameterSet:  # noqa: A002 - pytest's name
    return ParameterSet(values, tuple(marks) if isinstance(marks, (list, tuple)) else (marks,), id)


def skip(reason: str = "") -> None:
    raise Skipped(reason)


skip.Exception = Skipped  # type: ignore[attr-defined]


def fail(reason: str = "") -> None:
    raise Failed(reason)


def importorskip(modname: str, minversion: str | None = None, reason: str | None = None):
    try:
        return importlib.import_module(modname)
    except ImportError as exc:
        raise Skipped(reason or f"could not import {modname!r}: {exc}") from None


mark = MarkGenerator()


def module() -> types.ModuleType:
    """A fresh module object named ``pytest`` exposing this API."""
    shim = types.ModuleType("pytest", __doc__)
    for name in ("mark", "param", "skip", "fail", "importorskip", "Mark", "MarkDecorator", "ParameterSet"):
        setattr(shim, name, globals()[name])
    shim.__file__ = __file__
    return shim
