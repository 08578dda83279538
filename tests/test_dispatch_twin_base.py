"""CUDA arms of a per-platform dispatch whose generic twin a base class in another project
module defines (`devlint.evidence.cuda_twin`, applied by `devlint/engine/project/xtwins.py`),
through real `devlint check` runs over small packages, and the private methods called only
from such arms; the nearest forms stay findings."""
from __future__ import annotations

import json
import os
from _cli import run, write_package


def write(root, files: dict, namespace=()):
    write_package(root, files, dedent=True, namespace=namespace)


def findings(root, *paths):
    r = run("check", "--output-format", "json", "--no-cache", "--profile", "torch", *paths,
            cwd=root)
    assert r.returncode in (0, 1), r.stderr
    return sorted((f["filename"].replace(os.sep, "/"), f["location"]["row"], f["code"])
                  for f in json.loads(r.stdout))


BASE = """\
    class Dispatch:
        def forward(self, *args):
            return self._forward_method(*args)

        def forward_native(self, x):
            raise NotImplementedError

        def forward_cuda(self, x):
            raise NotImplementedError
"""

LAYER = """\
    import torch

    from pkg.base.ops import {base}


    class Layer({base}):
        def forward_cuda(self, x):
            torch.cuda.synchronize()
            return self._cuda_path(x)

        def _cuda_path(self, x):
            return x.to("cuda")

        def _shared(self, x):
            return x.to("cuda")

        def helper(self, x):
            torch.cuda.synchronize()
            return self._shared(x)
"""


def test_arm_and_its_private_callee_are_exempt(tmp_path):
    write(tmp_path, {"pkg/base/ops.py": BASE, "pkg/layers/layer.py": LAYER.format(base="Dispatch")})
    # the CUDA arm (8) and the method only it calls (12) go; a private method the native arm
    # calls (15) and a public method (21) stay
    assert findings(tmp_path, "pkg/layers/layer.py") == [
        ("pkg/layers/layer.py", 15, "DL101"), ("pkg/layers/layer.py", 18, "DL401")]


def test_base_through_a_re_export_and_a_base_of_the_base(tmp_path):
    write(tmp_path, {
        "pkg/base/core.py": BASE,
        "pkg/base/ops.py": "from pkg.base.core import Dispatch\n\n\nclass Deprecated(Dispatch):\n"
                           "    pass\n",
        "pkg/layers/layer.py": LAYER.format(base="Deprecated")})
    assert findings(tmp_path, "pkg/layers/layer.py") == [
        ("pkg/layers/layer.py", 15, "DL101"), ("pkg/layers/layer.py", 18, "DL401")]


def test_namespace_package(tmp_path):
    write(tmp_path, {"pkg/base/ops.py": BASE, "pkg/ns/layers/layer.py": LAYER.format(
        base="Dispatch")}, namespace=("pkg/ns", "pkg/ns/layers"))
    assert findings(tmp_path, "pkg/ns/layers/layer.py") == [
        ("pkg/ns/layers/layer.py", 15, "DL101"), ("pkg/ns/layers/layer.py", 18, "DL401")]


def test_still_reported(tmp_path):
    # a base that defines no generic twin: `forward_cuda` is just a method named after CUDA
    write(tmp_path, {"pkg/base/ops.py": "class Dispatch:\n    def forward(self, x):\n"
                                        "        return x\n",
                     "pkg/layers/layer.py": LAYER.format(base="Dispatch")})
    assert [row for _, row, _ in findings(tmp_path, "pkg/layers/layer.py")] == [8, 12, 15, 18]


def test_in_class_twin_carries_to_private_callees(tmp_path):
    layer = LAYER.format(base="Dispatch").replace("    from pkg.base.ops import Dispatch\n", "").replace(
        "    class Layer(Dispatch):\n", "    class Layer:\n        def forward_native(self, x):\n"
        "            return x\n\n")
    write(tmp_path, {"pkg/layers/layer.py": layer})
    assert [row for _, row, _ in findings(tmp_path, "pkg/layers/layer.py")] == [17, 20]


def test_private_method_mentioned_elsewhere_stays(tmp_path):
    layer = LAYER.format(base="Dispatch") + """
    def use(layer, x):
        return layer._cuda_path(x)
"""
    write(tmp_path, {"pkg/base/ops.py": BASE, "pkg/layers/layer.py": layer})
    assert [row for _, row, _ in findings(tmp_path, "pkg/layers/layer.py")] == [12, 15, 18]
