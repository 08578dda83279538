"""The project stage's stored answers for dispatch twins (`xtwins`) and CUDA-requiring
callees (`callees`): a warm run reads the package's answer back, and no stored answer
outlives a change of a module it was read from, in the package or in another top-level
package (its `deps`). Each warm run is compared with a run without the cache."""
from __future__ import annotations

import json
import os
import textwrap
import time

from _cli import run, write_package


def age(root):
    """The files changed within the last 5 s made 10 s old (the stage stores no answer about
    a file changed within 2 s); the others left as they are, so that their stat holds."""
    old = time.time_ns() - 10 * 10**9
    for p in root.rglob("*.py"):
        st = p.stat()
        if st.st_mtime_ns > old + 5 * 10**9:
            os.utime(p, ns=(st.st_atime_ns, old))


def findings(root, *args):
    r = run("check", "--output-format", "json", "--profile", "torch", *args, cwd=root)
    assert r.returncode in (0, 1), r.stderr
    return sorted((f["filename"].replace(os.sep, "/"), f["location"]["row"], f["code"])
                  for f in json.loads(r.stdout))


def warm_and_cold(root, *paths):
    """(the findings with the cache, without it)."""
    return (findings(root, "--cache-dir", str(root / ".cache"), *paths),
            findings(root, "--no-cache", *paths))


def memo(root, suffix):
    (found,) = list((root / ".cache").rglob(f"project/*.{suffix}.json"))
    return found


BASE = """\
    class Dispatch:
        def forward_native(self, x):
            raise NotImplementedError

        def forward_cuda(self, x):
            raise NotImplementedError
"""

LAYER = """\
    import torch

    from base.ops import Dispatch


    class Layer(Dispatch):
        def forward_cuda(self, x):
            return x.to("cuda")

        def helper(self, x):
            return x.to("cuda")
"""


def test_dispatch_twins_are_stored_and_invalidated_by_the_base_module(tmp_path):
    write_package(tmp_path, {"base/ops.py": BASE, "pkg/layer.py": LAYER}, dedent=True)
    age(tmp_path)
    kept = [("pkg/layer.py", 11, "DL101")]
    assert warm_and_cold(tmp_path, "pkg") == (kept, kept)  # the arm (8) is exempt
    stored = json.loads(memo(tmp_path, "xtwins").read_text())
    assert stored["twins"] and any(p.endswith("ops.py") for p, _ in stored["deps"])
    assert warm_and_cold(tmp_path, "pkg") == (kept, kept)  # read back
    # the base (another top-level package) no longer defines the generic twin: the stored
    # answer of `pkg`, whose own files did not change, is not read
    (tmp_path / "base/ops.py").write_text(
        textwrap.dedent(BASE).replace("forward_native", "forward_other"))
    age(tmp_path)
    both = [("pkg/layer.py", 8, "DL101"), ("pkg/layer.py", 11, "DL101")]
    assert warm_and_cold(tmp_path, "pkg") == (both, both)


def test_a_stored_twin_answer_is_what_a_warm_run_reports(tmp_path):
    write_package(tmp_path, {"base/ops.py": BASE, "pkg/layer.py": LAYER}, dedent=True)
    age(tmp_path)
    findings(tmp_path, "--cache-dir", str(tmp_path / ".cache"), "pkg")
    path = memo(tmp_path, "xtwins")
    stored = json.loads(path.read_text())
    stored["twins"] = {}  # made visible: an emptied answer is read back as it is
    path.write_text(json.dumps(stored))
    assert findings(tmp_path, "--cache-dir", str(tmp_path / ".cache"), "pkg") == [
        ("pkg/layer.py", 8, "DL101"), ("pkg/layer.py", 11, "DL101")]


API = """\
    import torch


    def quantize(w):
        assert w.device.type == "cuda", "only CUDA for now"
        return w


    def generic(w):
        return w * 2
"""

TESTS = """\
    import torch
    from lib.api import quantize, generic


    def test_quantize():
        x = torch.randn(4, device="cuda")
        quantize(x)


    def test_generic():
        x = torch.randn(4, device="cuda")
        generic(x)
"""


def test_cuda_callees_are_stored_and_invalidated_by_the_callee_module(tmp_path):
    write_package(tmp_path, {"lib/api.py": API, "tests/test_quant.py": TESTS}, dedent=True)
    age(tmp_path)
    kept = [("tests/test_quant.py", 11, "DL103")]
    assert warm_and_cold(tmp_path, "tests") == (kept, kept)  # test_quantize's body is exempt
    path = memo(tmp_path, "callees")
    stored = json.loads(path.read_text())
    assert stored["callers"] and any(p.endswith("api.py") for p, _ in stored["deps"])
    assert warm_and_cold(tmp_path, "tests") == (kept, kept)  # read back
    both = [("tests/test_quant.py", 6, "DL103"), ("tests/test_quant.py", 11, "DL103")]
    # the callee (another top-level package) no longer requires CUDA: not read back
    (tmp_path / "lib/api.py").write_text("def quantize(w):\n    return w\n\n\n"
                                         "def generic(w):\n    return w * 2\n")
    age(tmp_path)
    assert warm_and_cold(tmp_path, "tests") == (both, both)


def test_a_stored_callee_answer_is_what_a_warm_run_reports(tmp_path):
    write_package(tmp_path, {"lib/api.py": API, "tests/test_quant.py": TESTS}, dedent=True)
    age(tmp_path)
    findings(tmp_path, "--cache-dir", str(tmp_path / ".cache"), "tests")
    path = memo(tmp_path, "callees")
    stored = json.loads(path.read_text())
    stored["callers"] = {}  # made visible: an emptied answer is read back as it is
    path.write_text(json.dumps(stored))
    assert findings(tmp_path, "--cache-dir", str(tmp_path / ".cache"), "tests") == [
        ("tests/test_quant.py", 6, "DL103"), ("tests/test_quant.py", 11, "DL103")]


# --- re-export chains: every module read on the way is a dependency of the stored answer --

CHAIN_TEST = """\
    import pytest
    import torch

    from helpers import {name}


    {gate}
    def test_one():
        x = torch.ones(2, device="cuda")
"""


def _deps(tmp_path, suffix) -> set:
    stored = json.loads(memo(tmp_path, suffix).read_text())
    return {os.path.relpath(p, tmp_path).replace(os.sep, "/") for p, _ in stored["deps"]}


def _re_export_from(tmp_path, module: str, name: str):
    """`helpers/__init__.py` re-exports `name` from `helpers/<module>.py` now; aged, so that
    only its changed content (not its stat being recent) can tell the warm run."""
    init = tmp_path / "helpers/__init__.py"
    init.write_text(f"from helpers.{module} import {name}  # re-exported\n")
    age(tmp_path)


def _chain(tmp_path, suffix: str, defining: str, plain: str, name: str, gate: str):
    """`tests/test_x.py` imports `name` from `helpers/__init__.py`, which re-exports it from
    `helpers/defs.py` (`defining`, where it gates on CUDA); the stored answer depends on both
    modules, and re-exporting it from `helpers/plain.py` (`plain`, where it does not) is
    seen by the warm run."""
    write_package(tmp_path, {
        "helpers/__init__.py": f"from helpers.defs import {name}\n",
        "helpers/defs.py": defining, "helpers/plain.py": plain,
        "tests/test_x.py": CHAIN_TEST.format(name=name, gate=gate)}, dedent=True)
    age(tmp_path)
    assert warm_and_cold(tmp_path, "tests") == ([], [])  # the gate holds: exempt
    assert _deps(tmp_path, suffix) >= {"helpers/__init__.py", "helpers/defs.py"}
    _re_export_from(tmp_path, "plain", name)
    kept = [("tests/test_x.py", 9, "DL103")]
    assert warm_and_cold(tmp_path, "tests") == (kept, kept)


def test_a_re_exported_gate_depends_on_every_module_of_the_chain(tmp_path):
    _chain(tmp_path, "xgates", """\
        import pytest
        import torch

        cuda_mark = pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA")
        """, """\
        import pytest

        cuda_mark = pytest.mark.skipif(False, reason="never")
        """, "cuda_mark", "@cuda_mark")


def test_a_re_exported_flag_depends_on_every_module_of_the_chain(tmp_path):
    _chain(tmp_path, "xflags", """\
        try:
            import deep_ep
            HAVE_DEEP_EP = True
        except ImportError:
            HAVE_DEEP_EP = False
        """, """\
        try:
            import json
            HAVE_DEEP_EP = True
        except ImportError:
            HAVE_DEEP_EP = False
        """, "HAVE_DEEP_EP", '@pytest.mark.skipif(not HAVE_DEEP_EP, reason="DeepEP")')


GUARDED = """\
    import torch

    from helpers import side_stream


    class Layer:
        def __init__(self):
            self.stream = side_stream()

        def forward(self, x):
            if self.stream is not None:
                with torch.cuda.stream(self.stream):
                    y = x.to("cuda")
            return x
"""


def test_a_re_exported_producer_depends_on_every_module_of_the_chain(tmp_path):
    write_package(tmp_path, {
        "helpers/__init__.py": "from helpers.defs import side_stream\n",
        "helpers/defs.py": """\
            import torch

            from vllm.platforms import current_platform


            def side_stream():
                if not current_platform.is_cuda():
                    return None
                return torch.cuda.Stream()
            """,
        "helpers/plain.py": """\
            import torch


            def side_stream():
                return torch.cuda.Stream()
            """,
        "pkg/layer.py": GUARDED}, dedent=True)
    age(tmp_path)
    warm, cold = warm_and_cold(tmp_path, "pkg")
    assert warm == cold and ("pkg/layer.py", 13, "DL101") not in cold
    assert _deps(tmp_path, "xguards") >= {"helpers/__init__.py", "helpers/defs.py"}
    _re_export_from(tmp_path, "plain", "side_stream")
    warm, cold = warm_and_cold(tmp_path, "pkg")
    assert warm == cold and ("pkg/layer.py", 13, "DL101") in cold


def test_a_namespace_answer_is_reused_only_for_the_same_content(tmp_path):
    # `xspaces.NamespaceAnswers` keys each file's answer by its stat and the digest of its
    # text: a change that keeps the stat (same size, the old mtime and inode) is answered anew
    import hashlib
    from types import SimpleNamespace

    from devlint.engine.project.xspaces import NamespaceAnswers
    from devlint.evidence import Reason

    path = tmp_path / "ns" / "mod.py"
    path.parent.mkdir()
    path.write_text("x = 'a'\n")
    old = path.stat()
    project = SimpleNamespace(memo_file=lambda d, top: str(tmp_path / "memo.exempt.json"),
                              text=lambda p: open(p).read())
    calls = []

    def compute(p, res):
        calls.append(open(p).read())
        return {(0, "DL101"): Reason("cuda-callers", "called on CUDA", p, 1)}

    def answer():
        spaces = NamespaceAnswers(project, lambda root, top: (hashlib.blake2b(), True),
                                  lambda p: (str(tmp_path), "ns.mod"), compute)
        found = spaces.answer(str(path), SimpleNamespace(path=str(path), diagnostics=[]))
        spaces.save()
        return found

    assert answer() and answer() and len(calls) == 1  # stored, then read back
    path.write_text("x = 'b'\n")  # same size, same inode; the old mtime put back
    os.utime(path, ns=(old.st_atime_ns, old.st_mtime_ns))
    assert path.stat().st_ino == old.st_ino and path.stat().st_size == old.st_size
    assert answer() and calls == ["x = 'a'\n", "x = 'b'\n"]
