"""The evidence layer: the reasons devlint has for NOT reporting a candidate.

One module per principle; each states the principle, its evidence and its limits, and returns
a `Reason` (principle, human text, where the evidence is) instead of a bare bool, so that a
`--show-exempt` can print it:

- `cuda_guard`: code under a test that already established CUDA (`if t.is_cuda:`,
  `if current_platform.is_cuda():`, the else-branch of the opposite test, an early exit).
- `platform_ladder`: an if/elif chain that gives CUDA and another platform their own arms;
  which tests name a platform at all.
- `several_platforms`: a collection or a boolean test that also names another accelerator.
- `capability_gate`: a CUDA query joined to a compute-capability test.
- `redundant_seed`: a CUDA seed beside `torch.manual_seed` of the same value.
- `fast_path`: a tensor's CUDA branch beside a generic alternative (DL202).
- `cuda_only_module`: a file CUDA-only by construction: its folder, its name, its imports of
  a CUDA-only stack, its use of CUDA IPC / the CUDA runtime, a profile's platform folder, a
  vendor family with only NVIDIA/AMD backends (`vocabulary` holds the shared word lists,
  `devlint/data/cuda_only.toml`).
- `cuda_only_scope`: a function or class CUDA-only by its name, its imports or its direct use
  of the CUDA runtime; an argument of a call into a CUDA-only module.
- `not_a_device`: code that never puts a value on a device (a type annotation, a
  `TYPE_CHECKING` block).
- The package-level principles (CUDA-only through a project module, test doubles, functions
  only called on CUDA) live with the project stage, `devlint.engine.project`, which
  reads the package around a file.

This layer imports only the configuration layer (data) and the standard library.
"""
from __future__ import annotations


class Reason(str):
    """Why a candidate or a file is not reported.

    A `str` (its human text), so that every caller that only asks "is there a reason?" or
    prints it keeps working, with the principle's name and where its evidence stands:
    `principle` ("cuda-only-module", "cuda-only-scope", ...), `path` and `line` (None where the
    evidence is the path itself). `location` is `path:line`; `to_dict()` is the JSON form.
    """

    principle: str
    path: str | None
    line: int | None

    def __new__(cls, principle: str, text: str, path: str | None = None,
                line: int | None = None):
        self = super().__new__(cls, text)
        self.principle = principle
        self.path = path
        self.line = line
        return self

    def __reduce__(self):  # pickles (process pool) with its fields
        return (Reason, (self.principle, str(self), self.path, self.line))

    @property
    def text(self) -> str:
        return str.__str__(self)

    @property
    def location(self) -> str | None:
        if self.path is None:
            return None
        return f"{self.path}:{self.line}" if self.line else self.path

    def to_dict(self) -> dict:
        return {"principle": self.principle, "message": self.text, "location": self.location}
