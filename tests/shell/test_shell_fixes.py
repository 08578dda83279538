"""DL302 fixes: the rewrite for each context, the one selector block, idempotence, `bash -n` /
`sh -n` on the output, the rule module's own examples, and the engine's fixer agreeing."""
from __future__ import annotations

import shutil
import subprocess

import pytest
from conftest import FIXTURE, GOLDEN

from devlint.rules import dl302_shell_cuda_visible_devices as rule
from devlint.shell import (
    fix_shell,
    lint_shell,
    syntax_error_count,
    validate_shell,
)

V = "DEVICE_VISIBILITY_ENV"
SELECTOR_FIRST_LINE = "# The variable that selects visible devices, from DEVICE_TYPE (devlint DL302)."


def body_after_selector(fixed: str) -> str:
    """The fixed script without its header and selector block."""
    assert fixed.count("\nesac\n") == 1, fixed
    return fixed.split("\nesac\n", 1)[1].lstrip("\n")


def shell_accepts(text: str, shell: str = "bash") -> None:
    proc = subprocess.run([shutil.which(shell), "-n"], input=text, text=True,
                          capture_output=True, check=False)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("line,expected", [
    ("CUDA_VISIBLE_DEVICES=0 vllm serve m &", f'env "${V}=0" vllm serve m &'),
    ('CUDA_VISIBLE_DEVICES="$GPU_E" vllm serve "$MODEL"', f'env "${V}=$GPU_E" vllm serve "$MODEL"'),
    ("CUDA_VISIBLE_DEVICES='0,1' python3 x.py", f'env "${V}=0,1" python3 x.py'),
    ("CUDA_VISIBLE_DEVICES= python3 x.py", f'env "${V}=" python3 x.py'),
    ("CUDA_VISIBLE_DEVICES=${GPUS:-0} python3 x.py", f'env "${V}=${{GPUS:-0}}" python3 x.py'),
    # other prefixes stay, in place when they mean the same as env arguments ...
    ("A=1 CUDA_VISIBLE_DEVICES=0 B=2 cmd", f'A=1 env "${V}=0" B=2 cmd'),
    ("CUDA_VISIBLE_DEVICES=$G VLLM_KV_CACHE_LAYOUT='HND' UCX_NET_DEVICES=all vllm serve m",
     f"env \"${V}=$G\" VLLM_KV_CACHE_LAYOUT='HND' UCX_NET_DEVICES=all vllm serve m"),
    # ... else env moves next to the command (B=$x would be word-split as an argument)
    ("A=1 CUDA_VISIBLE_DEVICES=0 B=$x cmd", f'A=1 B=$x env "${V}=0" cmd'),
    ("CUDA_VISIBLE_DEVICES=0 exec python3 x.py", f'exec env "${V}=0" python3 x.py'),
    ("CUDA_VISIBLE_DEVICES=0 HIP_VISIBLE_DEVICES=0 python3 x.py", f'env "${V}=0" python3 x.py'),
    ("export CUDA_VISIBLE_DEVICES=0,1", f'export "${V}=0,1"'),
    ("export CUDA_VISIBLE_DEVICES=$1 OTHER=2", f'export "${V}=$1" OTHER=2'),
    ("export CUDA_VISIBLE_DEVICES", f'export "${V}"'),
    ("declare -x CUDA_VISIBLE_DEVICES=0", f'declare -x "${V}=0"'),
    ("unset CUDA_VISIBLE_DEVICES", f'unset "${V}"'),
    ("CUDA_VISIBLE_DEVICES=3", f'eval "${V}=3"'),
    ('CUDA_VISIBLE_DEVICES="$GPU"', f"eval \"${V}=\"'\"$GPU\"'"),
    ("A=1 CUDA_VISIBLE_DEVICES=2", f'A=1 ; eval "${V}=2"'),
    ('echo "$CUDA_VISIBLE_DEVICES"', f'echo "${{!{V}}}"'),
    ("n=${CUDA_VISIBLE_DEVICES:-0}", f"n=${{!{V}:-0}}"),
    ("list=${CUDA_VISIBLE_DEVICES//,/ }", f"list=${{!{V}//,/ }}"),
    ("env CUDA_VISIBLE_DEVICES=0 python3 x.py", f'env "${V}=0" python3 x.py'),
    ('env CUDA_VISIBLE_DEVICES="$G" python3 x.py', f'env "${V}=$G" python3 x.py'),
    ("env CUDA_VISIBLE_DEVICES=$G python3 x.py", f'env "${V}="$G python3 x.py'),
    ("env -u CUDA_VISIBLE_DEVICES python3 x.py", f'env -u "${V}" python3 x.py'),
    ('CMD="CUDA_VISIBLE_DEVICES=$G vllm serve m"', f'CMD="${V}=$G vllm serve m"'),
    ('CMD="echo \\$CUDA_VISIBLE_DEVICES"', f'CMD="echo \\$${V}"'),
    ("CMD='CUDA_VISIBLE_DEVICES=$G vllm serve m'", f"CMD=\"${V}\"'=$G vllm serve m'"),
    ("CMD='env CUDA_VISIBLE_DEVICES'", f"CMD='env '\"${V}\""),
    ("CMD='CUDA_VISIBLE_DEVICES=0'", f'CMD="${V}"\'=0\''),
    ("CMD='x CUDA_VISIBLE_DEVICES=1 y'", f"CMD='x '\"${V}\"'=1 y'"),
    ("bash -c 'CUDA_VISIBLE_DEVICES=1 python3 x.py'", f"bash -c \"${V}\"'=1 python3 x.py'"),
    ("eval CUDA_VISIBLE_DEVICES=1 python3 x.py", f'eval "${V}"=1 python3 x.py'),
    ("HIP_VISIBLE_DEVICES=0 python3 x.py", f'env "${V}=0" python3 x.py'),
])
def test_rewrite_for_each_context(line, expected):
    text = f"#!/bin/bash\n{line}\n"
    if line.startswith("CMD="):
        text += 'eval "$CMD"\n'
        expected += '\neval "$CMD"'
    fixed = fix_shell(text, "run.sh", unsafe=True)
    assert body_after_selector(fixed) == expected + "\n"
    shell_accepts(fixed)
    assert lint_shell(fixed, "run.sh") == []


def test_selector_block_is_inserted_once_after_header_and_shared_by_all_fixes():
    text = ("#!/usr/bin/env bash\n# Launch two servers.\n#\n# Usage: run.sh\nset -euo pipefail\n"
            "shopt -s nullglob\n\n# ports\nPORT=8000\nexport CUDA_VISIBLE_DEVICES=0\n"
            "CUDA_VISIBLE_DEVICES=1 python3 x.py\necho $CUDA_VISIBLE_DEVICES\n")
    diags = lint_shell(text, "run.sh")
    assert len(diags) == 3
    first_edits = {d.fix.edits[0] for d in diags}
    assert len(first_edits) == 1  # identical Edit objects: the engine applies it once
    block, = first_edits
    assert block.start == block.end == text.index("shopt -s nullglob") + len("shopt -s nullglob")
    fixed = fix_shell(text, "run.sh")
    assert fixed.startswith("#!/usr/bin/env bash\n# Launch two servers.\n#\n# Usage: run.sh\n"
                            "set -euo pipefail\nshopt -s nullglob\n\n" + SELECTOR_FIRST_LINE + "\n")
    assert "\nesac\n\n# ports\nPORT=8000\n" in fixed
    assert fixed.count(SELECTOR_FIRST_LINE) == 1
    shell_accepts(fixed)


def test_a_comment_that_belongs_to_the_first_statement_stays_with_it():
    text = "#!/bin/bash\n# Start the server\nCUDA_VISIBLE_DEVICES=0 vllm serve m\n"
    fixed = fix_shell(text, "run.sh")
    assert fixed.startswith("#!/bin/bash\n\n" + SELECTOR_FIRST_LINE)
    assert fixed.endswith("esac\n\n# Start the server\nenv \"$DEVICE_VISIBILITY_ENV=0\" vllm serve m\n")


def test_file_without_shebang_gets_the_block_at_the_top():
    text = "if [[ -n $X ]]; then :; fi\nCUDA_VISIBLE_DEVICES=0 python3 x.py\n"
    fixed = fix_shell(text, "run.sh")
    assert fixed.startswith(SELECTOR_FIRST_LINE)
    shell_accepts(fixed)
    assert lint_shell(fixed, "run.sh") == []


def test_selector_arms_follow_the_data_table_and_the_file_indentation():
    from devlint.shell.table import visibility_table

    table = visibility_table()
    text = "#!/bin/bash\nf() {\n\techo\n}\nexport CUDA_VISIBLE_DEVICES=0\n"
    fixed = fix_shell(text, "run.sh")
    for dtype, env in table.devices:
        if dtype != table.default:
            assert f"\n\t{dtype}) {V}={env} ;;\n" in fixed
    assert f"\n\t*) {V}={table.default_env()} ;;\n" in fixed
    assert dict(table.devices)["xpu"] == "ZE_AFFINITY_MASK"
    assert dict(table.devices)["npu"] == "ASCEND_RT_VISIBLE_DEVICES"
    assert dict(table.devices)["rocm"] == "HIP_VISIBLE_DEVICES"


def test_an_existing_selector_is_reused_instead_of_inserting_one():
    text = ('#!/bin/bash\nif [[ "$KV_BUFFER_DEVICE" == "xpu" ]]; then\n'
            "  VIS=ZE_AFFINITY_MASK\nelse\n  VIS=CUDA_VISIBLE_DEVICES\nfi\n"
            "CUDA_VISIBLE_DEVICES=0 python3 x.py\n")
    fixed = fix_shell(text, "run.sh")
    assert "esac" not in fixed
    assert fixed.endswith('env "$VIS=0" python3 x.py\n')
    # a selector defined after the first use cannot be reused
    late = ("#!/bin/bash\nCUDA_VISIBLE_DEVICES=0 python3 x.py\n"
            "DEVICE_VISIBILITY_ENV=CUDA_VISIBLE_DEVICES\n")
    assert fix_shell(late, "run.sh").count(SELECTOR_FIRST_LINE) == 1


def test_fix_is_idempotent_and_stable():
    text = FIXTURE.read_text()
    once = fix_shell(text, str(FIXTURE))
    assert fix_shell(once, str(FIXTURE)) == once
    assert lint_shell(once, str(FIXTURE)) == []


def test_posix_sh_fix_passes_sh_n_and_keeps_unfixable_reads():
    text = ("#!/bin/sh\nset -eu\nCUDA_VISIBLE_DEVICES=0 python3 x.py\n"
            "export CUDA_VISIBLE_DEVICES=1\necho \"$CUDA_VISIBLE_DEVICES\"\nunset CUDA_VISIBLE_DEVICES\n"
            'CMD="CUDA_VISIBLE_DEVICES=2 python3 y.py"\neval "$CMD"\n')
    fixed = fix_shell(text, "run.sh", unsafe=True)
    shell_accepts(fixed, "sh")
    remaining = lint_shell(fixed, "run.sh")
    assert [(d.location[0], d.fix) for d in remaining] == [(body_row(fixed, 'echo "$CUDA'), None)]
    assert "${!" not in fixed


def body_row(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def test_crlf_and_non_ascii_text_keep_their_form():
    text = "#!/bin/bash\r\n# café\r\nCUDA_VISIBLE_DEVICES=0 python3 x.py\r\n"
    fixed = fix_shell(text, "run.sh")
    assert "\r\n" in fixed and "\n" not in fixed.replace("\r\n", "")
    assert "# café" in fixed and 'env "$DEVICE_VISIBILITY_ENV=0" python3 x.py\r\n' in fixed


def test_validate_shell_and_syntax_error_count():
    assert validate_shell("echo ok\n", "a.sh") is None
    assert validate_shell('echo "unterminated\n', "a.sh") is not None
    assert validate_shell("x=$(( 1 + \n", "a.sh") is not None
    assert syntax_error_count("echo ok\n") == 0
    assert syntax_error_count("if then fi fi\n") > 0


# ── the rule module's own examples ───────────────────────────────────────────────────────────

@pytest.mark.parametrize("path,source", rule.VALID)
def test_rule_valid_examples(path, source):
    assert rule.check(source, path) == []


@pytest.mark.parametrize("path,source,fixed", rule.INVALID)
def test_rule_invalid_examples(path, source, fixed):
    diags = rule.check(source, path)
    assert diags
    out = fix_shell(source, path, unsafe=True)
    if fixed is None:
        assert out == source
        return
    assert out == fixed
    shell_accepts(out, "bash")
    assert fix_shell(out, path, unsafe=True) == out


def test_rule_documents_itself():
    from devlint.rules.base import DOC_SECTIONS, doc_sections

    assert rule.CODE == "DL302" and rule.NAME == "shell-cuda-visible-devices"
    assert doc_sections(rule.DOC) == list(DOC_SECTIONS)
    assert doc_sections(rule.RULE.doc()) == list(DOC_SECTIONS)
    assert rule.RULE.code == rule.CODE and rule.RULE.valid and rule.RULE.invalid


# ── fixture and engine ──────────────────────────────────────────────────────────────────────

def test_fixture_findings_and_golden():
    text = FIXTURE.read_text()
    diags = lint_shell(text, str(FIXTURE))
    rows = [(d.location, text[d.start:d.end]) for d in diags]
    assert [r for r, _ in rows] == [
        (body_row(text, 'BASE_CMD="CUDA_VISIBLE_DEVICES=$PREFILL_GPU'), 13),
        (body_row(text, 'BASE_CMD="CUDA_VISIBLE_DEVICES=$DECODE_GPU'), 13),
        (body_row(text, "CUDA_VISIBLE_DEVICES=$PREFILL_GPU VLLM_LOGGING_LEVEL"), 1),
        (body_row(text, 'export CUDA_VISIBLE_DEVICES=""'), 8),
        (body_row(text, "echo \"Accuracy client devices: '${CUDA_VISIBLE_DEVICES}'\""), 35),
    ]
    assert {t for _, t in rows} == {"CUDA_VISIBLE_DEVICES"}
    golden = GOLDEN.read_text()
    assert fix_shell(text, str(FIXTURE)) == golden
    copy = GOLDEN.parents[2] / "vllm" / "shell" / GOLDEN.name
    assert copy.read_text() == golden, f"{copy} is stale: copy {GOLDEN} over it"
    shell_accepts(golden)
    assert lint_shell(golden, str(GOLDEN)) == []


def test_engine_fixer_and_runner_agree_with_fix_shell():
    from devlint.engine.fixer import fix_text
    from devlint.engine.runner import process_source
    from devlint.settings import Settings
    from devlint.shell import lint_shell_file

    path = str(FIXTURE)
    text = FIXTURE.read_text()
    outcome = fix_text(text, lambda t: lint_shell_file(t, path, Settings()),
                       lambda t: validate_shell(t, path), unsafe=False)
    assert outcome.failures == [] and outcome.text == GOLDEN.read_text()
    res = process_source(path, "shell", FIXTURE.read_bytes(), Settings(), "fix", False)
    assert res.changed and res.new_bytes.decode() == GOLDEN.read_text() and res.diagnostics == []
    assert lint_shell_file(text, path, Settings(ignore=("DL3",))) == []
    assert len(lint_shell_file(text, path, Settings(select=("DL302",)))) == 5


def test_block_never_lands_after_a_use_sharing_the_header_line():
    for text in ("#!/bin/bash\nset -e; CUDA_VISIBLE_DEVICES=0 python3 x.py\n",
                 "set -e; CUDA_VISIBLE_DEVICES=0 python3 x.py\n"):
        fixed = fix_shell(text, "run.sh")
        assert fixed.index("esac") < fixed.index('env "$DEVICE_VISIBILITY_ENV=0"')
        assert fixed.endswith('\nset -e; env "$DEVICE_VISIBILITY_ENV=0" python3 x.py\n')
        shell_accepts(fixed)
