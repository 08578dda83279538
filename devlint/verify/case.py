"""Declaring verification cases.

A case is a function of one argument, a ``torch.device``, returning tensors or nested
tuples/lists/dicts of them. It builds its inputs deterministically (on the CPU, then moved to the
device: random numbers drawn on different devices differ) and returns what the code under test
computed. Declare it with :func:`case`; ``original=`` names the unfixed code, a function of the same
shape that runs where it can.

Inside a case, :func:`expect_close` / :func:`expect_equal` state in-case properties (e.g. the
re-injected KV slots are bit-identical to the saved ones); their figures are recorded in the report
and a failed one marks the case a mismatch on that device. :func:`not_applicable` says the case
cannot run on this device (e.g. Triton kernels on the CPU): reported as ``n/a``, not a failure.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable

from .compare import EXACT, Comparison, compare, to_cpu


class NotApplicable(Exception):
    """The case does not apply to this device; the message says why."""


class CheckFailed(AssertionError):
    """An in-case expectation (expect_close / expect_equal) did not hold."""

    def __init__(self, message: str, comparisons: list[Comparison] | None = None):
        super().__init__(message)
        self.comparisons = comparisons or []


def not_applicable(reason: str):
    """Stop the case here and report it as ``n/a`` on this device, with ``reason``."""
    raise NotApplicable(reason)


@dataclass
class Check:
    """The outcome of one expect_close / expect_equal inside a case."""

    name: str
    ok: bool
    comparisons: list[Comparison]

    def to_dict(self) -> dict:
        from .compare import worst

        return {"name": self.name, "ok": self.ok, **worst(self.comparisons),
                "failures": [c.to_dict() for c in self.comparisons if not c.ok]}


_state = threading.local()


class recording_checks:
    """Context manager collecting the Checks (and notes) made while a case runs: yields
    ``(checks, notes)``."""

    def __enter__(self) -> tuple[list[Check], list[str]]:
        self._previous = (getattr(_state, "checks", None), getattr(_state, "notes", None))
        _state.checks, _state.notes = [], []
        return _state.checks, _state.notes

    def __exit__(self, *exc) -> None:
        _state.checks, _state.notes = self._previous


def note(message: str) -> None:
    """Attach a line of information to this run of the case (shown in the report's details)."""
    notes = getattr(_state, "notes", None)
    if notes is not None:
        notes.append(str(message))


def expect_close(name: str, reference: Any, actual: Any, tolerance=None) -> list[Comparison]:
    """Assert inside a case that ``actual`` matches ``reference`` (same metric and tolerances as the
    cross-device comparison). Records the figures; raises CheckFailed if it does not hold."""
    comparisons = compare(to_cpu(reference), to_cpu(actual), tolerance)
    ok = all(c.ok for c in comparisons)
    checks = getattr(_state, "checks", None)
    if checks is not None:
        checks.append(Check(name, ok, comparisons))
    if not ok:
        first = next(c for c in comparisons if not c.ok)
        raise CheckFailed(f"{name}: {first.path}: {first.message}", comparisons)
    return comparisons


def expect_equal(name: str, reference: Any, actual: Any) -> list[Comparison]:
    """expect_close demanding bit-identical floats and equal integers."""
    return expect_close(name, reference, actual, tolerance=EXACT)


@dataclass
class Case:
    """A declared verification case. Calling it runs the fixed code on a device."""

    name: str
    fn: Callable[[Any], Any]
    original: Callable[[Any], Any] | None = None
    tolerance: Any = None
    description: str = ""
    target: str | None = None
    seed: int = 0
    tags: tuple[str, ...] = field(default_factory=tuple)
    sources: tuple[str, ...] = field(default_factory=tuple)

    def source_files(self) -> list[str]:
        """The files whose contents make this case what it is: the files defining its functions,
        then the ``sources`` it names (the code it loads by path). Their hash goes into records."""
        import inspect

        files: list[str] = []
        for fn in (self.fn, self.original):
            if fn is None:
                continue
            try:
                path = inspect.getsourcefile(fn)
            except TypeError:
                path = None
            if path and path not in files:
                files.append(path)
        for path in self.sources:
            if str(path) not in files:
                files.append(str(path))
        return files

    def source_hash(self) -> str:
        """sha256 over the name and contents (not the location) of :meth:`source_files`."""
        import hashlib
        import os

        digest = hashlib.sha256()
        for path in self.source_files():
            digest.update(os.path.basename(path).encode() + b"\0")
            try:
                with open(path, "rb") as fh:
                    digest.update(fh.read())
            except OSError:
                digest.update(b"<missing>")
            digest.update(b"\0")
        return digest.hexdigest()

    def __call__(self, device):
        return self.fn(device)


_registry: list[Case] = []
_registry_lock = threading.Lock()


def case(fn: Callable | None = None, *, name: str | None = None, original: Callable | None = None,
         tolerance=None, description: str | None = None, seed: int = 0, sources=()):
    """Declare a verification case: ``@case`` or ``@case(name=..., original=..., tolerance=...)``.

    ``tolerance``: None (per-dtype defaults), ``"exact"`` (bit-identical floats), a number (relative
    RMS for every float dtype) or a mapping ``{"float32": 1e-4, ...}``. ``seed`` seeds torch's
    global CPU generator before each run. ``sources``: files the case loads by path (beyond the
    file that defines it), hashed into ``--record`` manifests so that records of different code
    are never compared. Returns a :class:`Case`, which is still callable.
    """

    def wrap(f: Callable) -> Case:
        doc = (f.__doc__ or "").strip().splitlines()
        c = Case(
            name=name or f.__name__,
            fn=f,
            original=original,
            tolerance=tolerance,
            description=description if description is not None else (doc[0] if doc else ""),
            target=getattr(f, "__module__", None),
            seed=seed,
            sources=tuple(str(p) for p in sources),
        )
        with _registry_lock:
            _registry.append(c)
        return c

    if fn is not None:
        return wrap(fn)
    return wrap


def registered_cases() -> list[Case]:
    """Every case declared so far in this process, in declaration order."""
    with _registry_lock:
        return list(_registry)


def _registry_mark() -> int:
    with _registry_lock:
        return len(_registry)


def _registered_since(mark: int) -> list[Case]:
    with _registry_lock:
        return list(_registry[mark:])
