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
