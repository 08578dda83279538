"""Principle: a test module's worker entry, launched only by its own test after a CUDA guard, runs only on CUDA.

```python
def _worker():                      # runs in the launched processes
    torch.cuda.set_device(rank)
    ...

class TestParity(unittest.TestCase):
    def test_two_ranks(self):
        if not current_platform.is_cuda():
            self.skipTest("CUDA-only test")
        subprocess.run([sys.executable, __file__, "--worker"], ...)

if __name__ == "__main__":
    if "--worker" in sys.argv:
        raise SystemExit(_worker())
    unittest.main()
```
The test launches the module itself (`__file__` in the launched argv) as worker processes,
and the `__main__` block hands those processes to the worker function under the worker's
flag (`--worker` in `sys.argv`, `RANK` in the environment); so the worker runs where the
launch runs, and the launch stands under a guard that established CUDA (judged by the in-file
guard predicate: an early `skipTest` on `not current_platform.is_cuda()`, an `if` on a CUDA
test). The worker's devices are CUDA's like the code under that guard.
Evidence: the guard over the launch (file:line). Applied by the project stage
(`devlint.engine.project.xworkers`).
Limits: a test module (`test_*.py`, `*_test.py`) only; the worker must be called in the
`__main__` block under an `if` (a worker flag), not as the script's unconditional entry;
every launch of `__file__` in the module must stand under such a guard (one launch without,
or none at all, keeps the findings); only the worker functions' own bodies (and what is
nested in them), not module helpers they call; a launch through another module is not
followed.
"""
from __future__ import annotations

from devlint.evidence import Reason

PRINCIPLE = "launched-worker"


def worker_reason(worker: str, guard: Reason) -> Reason:
    return Reason(PRINCIPLE, f"`{worker}` runs only in the worker processes this test module "
                  f"launches (`__file__`) {guard.text}", guard.path, guard.line)
