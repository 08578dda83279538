"""A test module's worker entry that its own test launches only under a CUDA guard
(`devlint.evidence.launched_worker`, applied by `devlint/engine/project/xworkers.py`),
through real `devlint check` runs: the exempt form, and the nearest forms that stay findings."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest


def findings(root, *paths):
    env = dict(os.environ)
    env.pop("DEVLINT_OUTPUT_FORMAT", None)
    r = subprocess.run([sys.executable, "-m", "devlint", "check", "--output-format", "json",
                        "--no-cache", *paths], capture_output=True, text=True, cwd=root,
                       env=env)
    assert r.returncode in (0, 1), r.stderr
    return sorted((f["location"]["row"], f["code"]) for f in json.loads(r.stdout))


MODULE = """\
    import os
    import subprocess
    import sys
    import unittest

    import torch

    from vllm.platforms import current_platform


    def _worker():
        rank = int(os.environ["RANK"])
        torch.cuda.set_device(rank)
        x = torch.ones(2, device="cuda")
        return 0


    class TestParity(unittest.TestCase):
        def test_two_ranks(self):
            {guard}
            subprocess.run([sys.executable, __file__, "--worker"], check=True)


    if __name__ == "__main__":
        {main}
        unittest.main()
    """
GUARD = 'if not current_platform.is_cuda():\n            self.skipTest("CUDA-only")'
WORKER_MAIN = 'if "--worker" in sys.argv:\n            raise SystemExit(_worker())'
WORKER_ROWS = [(13, "DL401"), (14, "DL103")]


def module(tmp_path, name="test_parity.py", guard=GUARD, main=WORKER_MAIN, extra=""):
    pkg = tmp_path / "tests"
    pkg.mkdir(exist_ok=True)
    (pkg / "__init__.py").touch()
    (pkg / name).write_text(textwrap.dedent(MODULE).format(guard=guard, main=main) + extra)
    return f"tests/{name}"


def test_a_worker_launched_only_after_a_cuda_skip_is_cuda_code(tmp_path):
    assert findings(tmp_path, module(tmp_path)) == []


@pytest.mark.parametrize("guard", [
    "pass",  # launched everywhere
    'if current_platform.is_cpu():\n            self.skipTest("no CPU")',  # rules out the CPU only
])
def test_a_launch_without_a_cuda_guard_keeps_the_findings(tmp_path, guard):
    assert findings(tmp_path, module(tmp_path, guard=guard)) == WORKER_ROWS


def test_one_unguarded_launch_among_guarded_ones_keeps_the_findings(tmp_path):
    extra = textwrap.dedent("""\


        def test_elsewhere():
            subprocess.run([sys.executable, __file__, "--worker"], check=True)
        """)
    path = module(tmp_path, extra=extra)
    assert findings(tmp_path, path) == WORKER_ROWS


def test_the_scripts_unconditional_entry_is_no_worker(tmp_path):
    assert findings(tmp_path, module(tmp_path, main="_worker()")) == WORKER_ROWS


def test_only_test_modules(tmp_path):
    assert findings(tmp_path, module(tmp_path, name="parity_tool.py")) == WORKER_ROWS
