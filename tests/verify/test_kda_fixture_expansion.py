"""The KDA test module's pytest parametrisations are expanded the way pytest does when the verify
case runs its test functions, with real pytest marks and with the shim the case loads the module
with (so that the case needs no pytest)."""
import pytest

torch = pytest.importorskip("torch")

from devlint.verify.cases import _pytest_shim  # noqa: E402
from devlint.verify.cases import kda as cases  # noqa: E402


@pytest.mark.parametrize("api", [pytest, _pytest_shim.module()], ids=["pytest", "shim"])
def test_parametrizations_match_pytest(api):
    @api.mark.parametrize("seqlens", [(64,), (37, 100, 83)])
    @api.mark.parametrize(("a", "b"), [(1, 2), api.param(3, 4, id="x")])
    @api.mark.parametrize("dtype", [torch.float32])
    def fn(seqlens, a, b, dtype):
        pass

    combos = cases._parametrizations(fn)
    assert len(combos) == 4
    assert {c["seqlens"] for c in combos} == {(64,), (37, 100, 83)}
    assert {(c["a"], c["b"]) for c in combos} == {(1, 2), (3, 4)}
    assert all(c["dtype"] is torch.float32 for c in combos)
    assert cases._parametrizations(lambda: None) == [{}]


def test_shim_marks_skip_and_importorskip():
    shim = _pytest_shim.module()

    @shim.mark.slow
    @shim.mark.filterwarnings("ignore")
    def fn():
        shim.skip("no GPU here")

    assert [m.name for m in fn.pytestmark] == ["filterwarnings", "slow"]
    assert fn.pytestmark[0].args == ("ignore",)
    with pytest.raises(shim.skip.Exception) as info:
        fn()
    assert info.value.msg == "no GPU here"
    with pytest.raises(_pytest_shim.Skipped, match="could not import 'no_such_module_xyz'"):
        shim.importorskip("no_such_module_xyz")
    assert shim.importorskip("math").sqrt(4) == 2


def test_the_test_module_loads_with_the_shim_not_pytest():
    module = cases.load_module(cases.golden_path(cases.TEST_MODULE), deps=cases._test_module_deps(), fresh=True)
    assert module.pytest.__file__ == _pytest_shim.__file__
    marks = module.test_fla_kernel_matches_reference.pytestmark
    assert sorted(m.args[0] for m in marks) == ["dtype", "kernel", "seqlens"]
