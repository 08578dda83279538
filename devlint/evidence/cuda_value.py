"""Principle: a value that exists only on CUDA establishes CUDA where code tests for it.

```python
def make_side_stream():
    if not current_platform.is_cuda():
        return None
    return torch.cuda.Stream()

class Layer:
    def __init__(self):
        self.stream = make_side_stream()

    def forward(self, x):
        if self.stream is not None:           # only on CUDA
            with torch.cuda.stream(self.stream):
                ...
```
A flag works the same way for a truth test: a name or `self` attribute only ever assigned a
test that is true only on CUDA (`self.use_fusion = _is_cuda and not disabled`), or False,
makes `if self.use_fusion:` CUDA's; so does a chain of flags, each assigned an `and` one
operand of which is the previous flag (`_use_aiter = get_bool_env_var(...) and _is_hip`,
`use_fused = _use_aiter and supported`: ROCm's, `rocm-guard`). An `or` establishes
nothing, nor does a flag stored anywhere with another value (a function's `global` store too). A producer whose every value other than None is computed under a test that establishes CUDA
(an `if`, the else-branch of the opposite test, an early `if not is_cuda(): return None`, a
`x if is_cuda() else None`) returns None elsewhere; a name or `self` attribute that only ever
holds such values (or None) is not None, and is true, only on CUDA. So the code under
`if s is not None:`, `if s:`, `if x and s:`, after `assert s is not None` or `if s is None:
return`, and in the else-branch of `if s is None:` runs only on CUDA, like the code under the
producer's own test. Evidence: where the value is made under its test (the test's line, or
the conditional expression's).
A private class or function of the file (its name starts with `_`: its module holds every
use) that is constructed or called only there, under such tests (`_State(stream=s) if s is
not None else None`), is CUDA's as a whole, like code under the test (evidence: the first
use's test). In a test module, a call inside a test (or a method of a test class) skipped
unless a compute capability is met (`evidence.capability.requiring_mark`:
`skipif(get_device_capability() < (9, 0))`, a module flag or helper that asks one) or a
library of NVIDIA/AMD GPU kernels loads (`evidence.library_gate`) stands on CUDA too: such a
gate is CUDA's on purpose and no finding (evidence: the mark); an availability gate
(`skipif(not torch.cuda.is_available())`) is a finding whose fix does not reach the helper,
and a call under it does not count.
An item or slice of such a value (`streams[0]`, `streams[:3]`) is one too (None has none);
a closure's free name (`def layer_fn(i): return Layer(alt_stream=alt_stream)` inside the
constructor that makes it) is the enclosing function's, unless a nested function declares it
`nonlocal`.
Limits: statically visible chains only: the producer is a function of the same file (a
module-level function, or a method called through `self`) and every definition of its name is
one; the value is followed through assignments to a local name, a module name or a `self`
attribute of the class (every store into it, in every method, must be such a value or None;
an unpacking, an augmented assignment, a loop or `with` target is not followed), and into a
parameter that defaults to None (for a flag's truth test, None or False) of a module-level
function or class (`__init__`), or of a private method (`_name`, not a dunder) of a
module-level class that the file only calls as `self._name(...)` in that class's methods (no
other reference to the name, no subclass in the file), only where
every reference to that function or class in the file is a call that passes such a value,
None or nothing (`isinstance` and annotations aside, and an attribute of the class,
`partial(Layer.facts, cfg)`, where the class makes no instance of itself by `cls(...)`,
`type(self)(...)` or `__class__`; a reference of any other kind, a subclass of the file, or
`*args`/`**kwargs` where the call does not name the parameter, and the parameter is the
caller's choice; `Layer(**kw, alt_stream=s)` passes `s`: a second value would be a TypeError); a class
that is a value of a module-level registry (`LAYERS = {"attention": Attn, ...}`) counts by the
registry's calls where the file only reads it by an item that it calls (`LAYERS[kind](...)`)
or binds to a local name that it only calls (`cls = LAYERS[kind]; cls(alt_stream=s)`), and
reads at least once (a registry it never reads is there for its importers); no more than twelve steps
(a model handing a stream down `Model -> Stack -> Layer -> MoE` takes two a level). A producer that returns a value without a CUDA test on
some path, or a generator, is none. A value made under `torch.cuda.is_available()` or
`device_count()` (without a compute-capability test beside it) is none either: that test is
itself a finding, and its fix makes the value on any accelerator, so the code that tests the
value is fixed with it (diffusers' group offloading: cross corpus 005). A value made under `is_cuda_alike()` exists
on ROCm too: it exempts the `torch.cuda` API only (as `cuda-alike-guard`), never a device
literal; one made only under `is_rocm()` / `is_hip()` (a flag `_is_hip`, `env and _is_hip`)
exists on ROCm alone, where "cuda" is the AMD GPU's name (`rocm-guard`). The producer's
own test stays a finding where it is one.
"""
from __future__ import annotations

from devlint.evidence import Reason
from devlint.evidence.rocm_guard import rocm_guard_reason


def value_reason(level: str, evidence, test, path: str | None) -> Reason:
    """The Reason of a candidate under `test`, a test of a value made only on CUDA ("cuda") or
    on a CUDA-alike platform ("alike") at `evidence`."""
    line = getattr(evidence, "lineno", None) or getattr(test, "lineno", None)
    if level == "rocm":  # made only under a test that holds only on ROCm
        return rocm_guard_reason(test, path, "value", line)
    if level == "cuda":
        return Reason("cuda-value", "under a test of a value that exists only on CUDA (made "
                      "under the CUDA test here; None or false elsewhere)", path, line)
    return Reason("cuda-alike-guard", "under a test of a value that exists only on a "
                  "CUDA-alike platform (CUDA or ROCm: torch.cuda is its API; made under the "
                  "test here, None elsewhere)", path, line)


def used_on_cuda_reason(level: str, name: str, evidence, path: str | None) -> Reason:
    """The Reason of a candidate in a private class or function used only under a test that
    establishes CUDA ("cuda") or a CUDA-alike platform ("alike")."""
    line = getattr(evidence, "lineno", None)
    if level == "cuda":
        return Reason("cuda-value", f"`{name}` is private to its file and used there only "
                      "under a test that establishes CUDA", path, line)
    return Reason("cuda-alike-guard", f"`{name}` is private to its file and used there only "
                  "under a test for a CUDA-alike platform (CUDA or ROCm: torch.cuda is its "
                  "API)", path, line)
