"""A device inferred from a tensor (`x.device`) is never one the code rebinds in between: after
`x = x.cpu()`, `x.device` is the CPU, and a fix moving `y` there would send it to the CPU on
CUDA. Found in review: the tensor guard of DL202/DL102 and the first `x.device` read of the
function both ignored the rebinding (also through an attribute, `self.x = self.x.cpu()`)."""
import pytest

from tests._cli import run


@pytest.mark.parametrize("owner, tensor", [("x", "x"), ("self", "self.x")])
def test_a_rebound_tensor_lends_no_device(tmp_path, owner, tensor):
    src = (f"def f({owner}, y):\n    if {tensor}.is_cuda:\n        {tensor} = {tensor}.cpu()\n"
           "        y = y.cuda()\n    return y\n")
    (tmp_path / "m.py").write_text(src)
    run("--fix", "--unsafe-fixes", "m.py", cwd=tmp_path)
    fixed = (tmp_path / "m.py").read_text()
    assert "y = y.cuda()" not in fixed  # the finding is fixed ...
    assert f"y.to({tensor}.device" not in fixed and f"device={tensor}.device" not in fixed
    assert "torch.accelerator" in fixed  # ... to the current accelerator, not the rebound tensor


def test_a_tensor_kept_lends_its_device(tmp_path):
    (tmp_path / "m.py").write_text("def f(x, y):\n    if x.is_cuda:\n        y = y.cuda()\n"
                                   "    return y\n")
    run("--fix", "--unsafe-fixes", "m.py", cwd=tmp_path)
    assert "y = y.to(device=x.device)" in (tmp_path / "m.py").read_text()
