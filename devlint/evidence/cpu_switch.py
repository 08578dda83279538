"""Principle: an option whose every reader only asks whether it is the CPU picks no device.

```python
@dataclass
class SamplingParams:
    generator_device: str = "cuda"          # not reported: only "cpu or not" is read

# stages/input_validation.py
if batch.generator_device == "cpu":
    device = "cpu"
else:
    device = current_platform.device_type   # the accelerator comes from the platform
```
A request field, config attribute or parameter named N whose default (or constant) is
"cuda", where every read of N in the package only compares it with "cpu" or None, or hands
it on under the same name (`f(N=req.N)`, `state.N = req.N`, `{"N": req.N}`, `N = req.N or
default`), or compares two reads of it: "cuda" there is a label for "an accelerator", and
the code that acts on it derives the device itself (the rubric's value that never reaches a
device). Evidence: the first comparison with "cpu" (file:line). Applied by the project stage
(`devlint.engine.project.xswitch`), which reads the package's files that name N.
Limits: every read counts, in every module of the package: an attribute `x.N` read anywhere,
`getattr(x, "N", ...)`, and a local name N in a function that takes N as a parameter or binds
it from such a read (a local N bound only from other values is another variable); a read
passed to a device (`torch.device(x.N)`, `.to(x.N)`), returned, formatted, passed
positionally or under another name, or compared with anything but "cpu", None or another
read of N keeps the finding; only a default or constant "cuda" of a field, attribute or
parameter (not a device string with an index, not a call's argument); a name read nowhere
is not followed (an option nobody reads is `dead-default`'s question).
"""
from __future__ import annotations

from devlint.evidence import Reason

PRINCIPLE = "cpu-switch"


def switch_reason(name: str, path: str, line: int) -> Reason:
    return Reason(PRINCIPLE, f"`{name}` is only ever compared with \"cpu\" (or handed on under "
                  "its name): \"cuda\" labels an accelerator, the readers pick the device",
                  path, line)
