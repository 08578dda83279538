"""What the project stage knows about names a file imports from other project modules, for a
re-run of the file's analysis (`devlint.engine.project.xguards`): the imported functions that
return a value only on CUDA (else None), as the file's own producers do
(`devlint.analysis.flow`, `devlint.evidence.cuda_value`), and the imported module-level flags
that their module sets from a platform query (`_is_cuda = is_cuda()`), as the file's own
flags are (`Guards._query_aliases`). Empty, so without effect, in the
per-file run (whose results the cache keys by the file's content alone)."""
from __future__ import annotations

from contextvars import ContextVar

# local name -> "cuda" | "alike": the level of the value an imported producer returns
PRODUCERS: ContextVar[dict] = ContextVar("devlint_imported_producers", default={})


def imported_producer(name: str) -> str | None:
    """The level of the imported function `name` when the project stage found it returns a
    value only on CUDA ("cuda") or a CUDA-alike platform ("alike"), else None."""
    return PRODUCERS.get().get(name)


# local name -> (true establishes CUDA, false establishes CUDA): an imported flag's sides
FLAGS: ContextVar[dict] = ContextVar("devlint_imported_flags", default={})


def imported_flags() -> dict:
    """{local name: (on_true, on_false)} of the imported flags the project stage found set
    from a platform query in their module."""
    return FLAGS.get()
