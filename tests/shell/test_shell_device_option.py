"""DL303 (shell-device-option): a CUDA device given to a command-line option of a shell
script is flagged at the value, without a fix; other values, variables, other options, text
that is not a command, suppressed lines and embedded shell (CI YAML) are not."""
from __future__ import annotations

import pytest

from devlint.rules import dl303_shell_device_option as rule
from devlint.shell import fix_shell, lint_shell, lint_shell_file


def flagged(text: str, path: str = "run.sh"):
    """[(row, col, flagged text)] of the DL303 findings."""
    return [(*d.location, text[d.start:d.end]) for d in lint_shell(text, path)
            if d.code == "DL303"]


@pytest.mark.parametrize("line,col,value", [
    ("python x.py --device cuda", 22, "cuda"),
    ("python x.py --device cuda:1 --seed 0", 22, "cuda:1"),
    ('python3 eval.py --model hf --device "cuda:0" | tee log', 37, '"cuda:0"'),
    ("python x.py --device 'cuda'", 22, "'cuda'"),
    ("python x.py --device=cuda:0", 22, "cuda:0"),
    ('python x.py --placement="cuda"', 25, '"cuda"'),
    ("python rlhf.py --vllm_device cuda:3", 30, "cuda:3"),
    ("python x.py --device-map cuda", 26, "cuda"),
    ("python x.py --Placement_Policy=cuda", 32, "cuda"),
    ("X=$(python probe.py --device cuda)", 30, "cuda"),
    ("if true; then python x.py --device cuda; fi", 36, "cuda"),
    ("torchrun --nproc_per_node 2 train.py --device cuda", 47, "cuda"),
    ("accelerate launch --num_processes 2 train.py --device cuda", 55, "cuda"),
    ("srun -N 1 /usr/bin/python3.11 src/train.py --device cuda", 53, "cuda"),
    ("deepspeed --include localhost:0 train.py --device=cuda", 51, "cuda"),
])
def test_flagged_at_the_value(line, col, value):
    text = f"#!/bin/bash\n{line}\n"
    assert flagged(text) == [(2, col, value)]


@pytest.mark.parametrize("line", [
    "python x.py --device cpu",
    "python x.py --device auto --placement cpu",
    'python x.py --device "$DEVICE"',
    'python x.py --device "cuda:$LOCAL_RANK"',
    "python x.py --device ${DEVICE:-cuda}",
    "python x.py --device cudagraph",
    "python x.py --device",  # no value
    "python x.py --backend cuda --impl=cuda",  # not a device option
    "cmake -DCOMPUTE_BACKEND=cuda -S .",
    "python x.py -d cuda",  # short options are too ambiguous to read
    "python x.py cuda --device",  # a positional word
    "lm_eval --model hf --device cuda:0",  # an installed tool's option
    "swift rlhf --vllm_device cuda:3",
    "python -m lm_eval --device cuda",
    "torchrun --device cuda train.py",  # the launcher's own option
    "python -c 'import x' --device cuda",
    "echo 'use --device cuda'",
    'CMD="python x.py --device cuda"',  # a string, not a command of the script
    "# python x.py --device cuda",
])
def test_not_flagged(line):
    assert flagged(f"#!/bin/bash\n{line}\n") == []


def test_continued_command_and_suppressions():
    text = "#!/bin/bash\ntorchrun train.py \\\n  --device cuda \\\n  --lr 1e-5\n"
    assert flagged(text) == [(3, 12, "cuda")]
    # a comment cannot follow a continuation: the command's last line holds the noqa
    assert flagged(text.replace("--lr 1e-5", "--lr 1e-5  # noqa: DL303")) == []
    assert flagged(text.replace("--lr 1e-5", "--lr 1e-5  # noqa: DL302")) == [(3, 12, "cuda")]
    assert flagged("#!/bin/bash\n# devlint: file-ignore[DL3]\npython x.py --device cuda\n") == []


def test_no_fix_and_selection():
    from devlint.settings import Settings

    text = "#!/bin/bash\nCUDA_VISIBLE_DEVICES=0 python x.py --device cuda:0\n"
    diags = lint_shell(text, "run.sh")
    assert [d.code for d in diags] == ["DL302", "DL303"]
    assert diags[1].fix is None
    # the fix of DL302 leaves the device option as it was
    assert "--device cuda:0" in fix_shell(text, "run.sh", unsafe=True)
    assert [d.code for d in lint_shell_file(text, "run.sh", Settings(select=("DL303",)))] \
        == ["DL303"]
    assert [d.code for d in lint_shell_file(text, "run.sh", Settings(ignore=("DL303",)))] \
        == ["DL302"]
    assert lint_shell_file(text, "run.sh", Settings(ignore=("DL3",))) == []


def test_embedded_shell_is_not_read():
    from devlint.settings import Settings
    from devlint.sources.ci_yaml import run_ci_yaml

    yaml = ("on: push\njobs:\n  t:\n    runs-on: gpu\n    steps:\n"
            "      - run: CUDA_VISIBLE_DEVICES=0 python x.py --device cuda\n")
    out = run_ci_yaml(".github/workflows/t.yml", yaml, Settings(), "check", False)
    assert [d.code for d in out.diagnostics] == ["DL302"]


@pytest.mark.parametrize("path,source", rule.VALID)
def test_rule_valid_examples(path, source):
    assert rule.check(source, path) == []


@pytest.mark.parametrize("path,source,fixed", rule.INVALID)
def test_rule_invalid_examples(path, source, fixed):
    assert rule.check(source, path)
    assert fixed is None and fix_shell(source, path, unsafe=True) == source


def test_rule_documents_itself():
    from devlint.rules.base import DOC_SECTIONS, doc_sections
    from devlint.rules.registry import lookup

    assert lookup("DL303") is rule.RULE and lookup("shell-device-option") is rule.RULE
    assert doc_sections(rule.RULE.doc()) == list(DOC_SECTIONS)
    assert rule.RULE.valid and rule.RULE.invalid
