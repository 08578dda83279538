"""gated-benchmark (issue #18): a benchmark module that skips its measurements unless the GPU
is of a recent NVIDIA compute capability (SM89+) or a given AMD architecture is CUDA's own;
a gate on an old generation, a capability query that picks a value, a gate that also asks
for availability, a benchmark shared with another accelerator, and a library or test module
are not."""
import ast

import devlint
from devlint.evidence.gated_benchmark import module_reason

HEAD = "import logging\nimport torch\n\ndevice = torch.device('cuda')\n\n\n"
MAIN = ("def main(configs):\n    torch.cuda.synchronize()\n    for config in configs:\n{gate}"
        "        x = torch.randn(8, device=device)\n")


def codes(gate, path="benchmarks/moe/bench_grouped_mm.py", head=HEAD):
    text = head + MAIN.format(gate=gate)
    return sorted(d.code for d in devlint.check_source(text, path=path))


FINDINGS = ["DL103", "DL401"]


def test_a_benchmark_that_skips_without_a_recent_nvidia_generation():
    assert codes("        if torch.cuda.get_device_capability() != (10, 0):\n"
                 "            logging.warning('Skipping MXFP8, needs SM100')\n"
                 "            continue\n") == []
    assert codes("        if not is_sm_at_least_90():\n            return\n") == []
    # joined to a choice of configuration: that configuration needs the generation
    assert codes("        if config.recipe == 'fp8' and torch.cuda.get_device_capability() "
                 "!= (9, 0):\n            logging.warning('skipping')\n            return\n") == []


def test_a_skip_that_binds_a_placeholder_and_an_else_arm():
    assert codes("        if torch.cuda.get_device_capability() != (9, 0):\n"
                 "            print('skip fp8')\n            fp8_us = float('inf')\n"
                 "        else:\n            fp8_us = 1.0\n") == []
    assert codes("        if is_sm_at_least_100():\n            run(config)\n"
                 "        else:\n            logging.info('needs SM100')\n") == []


def test_an_amd_architecture_counts():
    assert codes("        if not (is_MI300() or is_MI350()):\n"
                 "            logging.warning('requires MI300')\n            continue\n") == []


def test_what_skips_no_recent_generation_keeps_the_findings():
    for gate in (
            # bf16 on pre-Ampere GPUs: it skips old CUDA GPUs, not other accelerators
            "        if torch.cuda.get_device_capability()[0] < 8:\n            continue\n",
            # a capability query that picks a value skips nothing
            "        if is_MI300():\n            dtype = torch.float8_e4m3fnuz\n",
            "        if not is_sm_at_least_89():\n            dtype = torch.float16\n",
            # a gate that also asks for availability runs everywhere else
            "        if torch.cuda.is_available() and not is_sm_at_least_89():\n"
            "            continue\n",
            # no gate at all
            "        pass\n"):
        assert codes(gate) == FINDINGS, gate


def test_a_benchmark_shared_with_another_accelerator_keeps_the_findings():
    gate = "        if not is_sm_at_least_90():\n            continue\n"
    assert codes(gate, head=HEAD + "XPU = torch.xpu.is_available()\n\n\n") == FINDINGS
    assert codes(gate, head="from pkg.platforms import current_platform\n" + HEAD) == FINDINGS


def test_library_and_test_modules_are_judged_by_their_own_principles():
    gate = "        if not is_sm_at_least_90():\n            continue\n"
    assert codes(gate, path="pkg/moe/grouped_mm.py") == FINDINGS
    assert codes(gate, path="tests/test_grouped_mm.py") == FINDINGS


def test_the_reason_names_the_principle_and_the_gate():
    text = HEAD + MAIN.format(gate="        if not is_sm_at_least_100():\n            return\n")
    why = module_reason(ast.parse(text), text, "benchmarks/bench_x.py")
    assert why.principle == "gated-benchmark" and why.line == 10


def test_a_skip_measures_nothing_a_fallback_measurement_is_none():
    # an exit that measures nothing: `return`, `return None`, a constant, after a message
    for leave in ("return None", "return 0.0", "return float('inf')"):
        assert codes("        if not is_sm_at_least_90():\n            print('needs SM90')\n"
                     f"            {leave}\n") == [], leave
    # `return fallback(...)` measures the fallback: the benchmark times something without
    # the generation
    for leave in ("return bench_bf16(config)", "return run(config, fp8=False)"):
        assert codes("        if not is_sm_at_least_90():\n            print('needs SM90')\n"
                     f"            {leave}\n") == FINDINGS, leave


def rows_of(text, path="benchmarks/bench_fp8.py"):
    return sorted((d.location[0], d.code) for d in devlint.check_source(text, path=path))


def test_the_gate_covers_its_run_not_what_else_the_benchmark_does():
    text = ("import torch\n\ndevice = torch.device('cuda')\n\n\n"      # 3: module level
            "def make(n):\n    return torch.randn(n, device='cuda')\n\n\n"  # 7: both runs use it
            "def fp8_only(x):\n    torch.cuda.synchronize()\n    return x\n\n\n"  # 11
            "def bench_fp8(n):\n    torch.cuda.synchronize()\n"          # 15: the gated run
            "    if not is_sm_at_least_90():\n        print('skip')\n        return\n"
            "    fp8_only(make(n))\n\n\n"
            "def bench_bf16(n):\n    torch.cuda.synchronize()\n    make(n)\n")  # 24
    assert rows_of(text) == [(3, "DL103"), (7, "DL103"), (24, "DL401")]
    # the gated run is all the benchmark does: the whole module is exempt
    whole = text[:text.index("def bench_bf16")] + "if __name__ == '__main__':\n    bench_fp8(8)\n"
    assert rows_of(whole) == []


def test_a_helper_the_modules_own_code_also_calls_keeps_its_findings():
    # found in review: `__main__` code outside the gated run shares `make` with it
    text = ("import torch\n\n\ndef make():\n    return torch.zeros(2, device='cuda')\n\n\n"
            "def bench_fp8():\n    if torch.cuda.get_device_capability() < (9, 0):\n"
            "        print('skip: needs SM90')\n        return\n    make()\n\n\n"
            "def bench_other():\n    print('other')\n\n\n"
            "if __name__ == '__main__':\n    x = make()\n    bench_other()\n")
    assert (5, "DL103") in rows_of(text)
