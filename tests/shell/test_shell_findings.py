"""DL302 detection: each context is flagged at the exact row/column of the variable name,
selectors, comments and printed strings are not, and suppression comments work."""
from __future__ import annotations

import pytest

from devlint.diagnostics import Applicability
from devlint.shell import ShellOptions, analyze_shell, lint_shell


def spans(text: str, path: str = "run.sh", **opts):
    """[(row, col, end_row, end_col, flagged text)] of the findings."""
    out = []
    for d in lint_shell(text, path, ShellOptions(**opts) if opts else None):
        assert d.code == "DL302" and d.name == "shell-cuda-visible-devices"
        out.append((*d.location, *d.end_location, text[d.start:d.end]))
    return out


CUDA = "CUDA_VISIBLE_DEVICES"


@pytest.mark.parametrize("line,col", [
    ("CUDA_VISIBLE_DEVICES=0 vllm serve m &", 1),  # command prefix
    ("A=1 CUDA_VISIBLE_DEVICES=0 B=2 python3 x.py", 5),  # prefix between others
    ("export CUDA_VISIBLE_DEVICES=0,1", 8),
    ("  local CUDA_VISIBLE_DEVICES=$1", 9),
    ("declare -x CUDA_VISIBLE_DEVICES", 12),
    ("unset CUDA_VISIBLE_DEVICES", 7),
    ("unset -v CUDA_VISIBLE_DEVICES", 10),
    ("CUDA_VISIBLE_DEVICES=3", 1),  # plain assignment
    ("CUDA_VISIBLE_DEVICES+=,1", 1),
    ('echo "$CUDA_VISIBLE_DEVICES"', 8),  # reads
    ("echo ${CUDA_VISIBLE_DEVICES}", 8),
    ("n=${CUDA_VISIBLE_DEVICES:-0}", 5),
    ("n=${#CUDA_VISIBLE_DEVICES}", 6),
    ("if [[ -z ${CUDA_VISIBLE_DEVICES:-} ]]; then echo; fi", 12),
    ("env CUDA_VISIBLE_DEVICES=0 python3 x.py", 5),
    ('env -u CUDA_VISIBLE_DEVICES python3 x.py', 8),
    ("eval 'CUDA_VISIBLE_DEVICES=0 python3 x.py'", 7),
    ('eval "CUDA_VISIBLE_DEVICES=$G python3 x.py &"', 7),
    ("bash -c 'CUDA_VISIBLE_DEVICES=1 python3 x.py'", 10),
    ("timeout 60 sh -ec \"CUDA_VISIBLE_DEVICES=1 python3 x.py\"", 20),
    ("HIP_VISIBLE_DEVICES=0 python3 x.py", 1),  # ROCm-only
    ("for CUDA_VISIBLE_DEVICES in 0 1; do python3 x.py; done", 5),
])
def test_each_context_is_flagged_at_the_name(line, col):
    text = f"#!/bin/bash\n{line}\n"
    found = spans(text)
    assert len(found) == 1, found
    row, c, erow, ecol, flagged = found[0]
    assert (row, c, erow) == (2, col, 2)
    assert flagged in (CUDA, "HIP_VISIBLE_DEVICES")
    assert ecol == c + len(flagged)


def test_string_later_evaluated_through_variables():
    text = (
        "#!/bin/bash\n"
        "run() {\n"
        '  BASE_CMD="CUDA_VISIBLE_DEVICES=$GPU \\\n'
        "    vllm serve $MODEL \\\n"
        "    --port $PORT\"\n"
        '  FULL_CMD="$BASE_CMD --enforce-eager"\n'
        '  eval "$FULL_CMD &"\n'
        "}\n"
        'PRINTED="CUDA_VISIBLE_DEVICES=0 is only printed"\n'
        'echo "$PRINTED"\n'
    )
    d, = lint_shell(text, "run.sh")
    assert d.location == (3, 13) and d.end_location == (3, 33)
    assert "`eval`" in d.message
    assert d.noqa_row == 5  # a comment can only go after the closing quote


def test_heredoc_fed_to_bash():
    text = "#!/bin/bash\nbash <<EOF\nCUDA_VISIBLE_DEVICES=$GPU python3 x.py\nEOF\n"
    (row, col, *_), = spans(text)
    assert (row, col) == (3, 1)
    quoted = "#!/bin/bash\nbash <<'EOF'\nCUDA_VISIBLE_DEVICES=$GPU python3 x.py\nEOF\n"
    d, = lint_shell(quoted, "run.sh")
    assert d.location == (3, 1) and d.fix is None


def test_positions_count_characters_not_bytes():
    text = "#!/bin/bash\necho 'é→ü' && CUDA_VISIBLE_DEVICES=0 python3 x.py\n"
    (row, col, _, ecol, flagged), = spans(text)
    assert (row, col, ecol) == (2, 15, 35) and flagged == CUDA


@pytest.mark.parametrize("text", [
    # comments, printed strings, other names that contain the name
    "#!/bin/bash\n# CUDA_VISIBLE_DEVICES=0 python x.py\n",
    '#!/bin/bash\necho "set CUDA_VISIBLE_DEVICES=0 # to pick a GPU"\n',
    "#!/bin/bash\nRAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES=1 ray start\n",
    "#!/bin/bash\nMY_CUDA_VISIBLE_DEVICES_X=1\n",
    # selectors: the name as a value, in if/else or case arms (the seed's, and devlint's own)
    ('#!/bin/bash\nif [[ "$KV_BUFFER_DEVICE" == "xpu" ]]; then\n  DEVICE_VISIBILITY_ENV=ZE_AFFINITY_MASK\n'
     'else\n  DEVICE_VISIBILITY_ENV=CUDA_VISIBLE_DEVICES\nfi\n'
     'BASE_CMD="${DEVICE_VISIBILITY_ENV}=$GPU vllm serve m"\neval "$BASE_CMD &"\n'),
    ('#!/bin/sh\ncase "${DEVICE_TYPE:-cuda}" in\n  xpu) V="ZE_AFFINITY_MASK" ;;\n'
     '  *) V="CUDA_VISIBLE_DEVICES" ;;\nesac\nenv "$V=0" python3 x.py\n'),
    # upstream's fixed EPD script style
    ('#!/bin/bash\nDEVICE_AFFINITY_ENV="CUDA_VISIBLE_DEVICES"\n'
     'env "$DEVICE_AFFINITY_ENV=$GPU_E" vllm serve "$MODEL" &\n'),
])
def test_not_flagged(text):
    assert spans(text) == []


def test_hip_is_not_reported_when_set_with_cuda_on_the_same_command():
    text = "#!/bin/bash\nCUDA_VISIBLE_DEVICES=0 HIP_VISIBLE_DEVICES=0 python3 x.py\n"
    assert [s[-1] for s in spans(text)] == [CUDA]
    text = "#!/bin/bash\nCUDA_VISIBLE_DEVICES=0 HIP_VISIBLE_DEVICES=1 python3 x.py\n"
    d, = lint_shell(text, "run.sh")
    assert d.fix is None and "another value" in d.message


# ── suppression ─────────────────────────────────────────────────────────────────────────────

@pytest.mark.parametrize("comment,suppressed", [
    ("# noqa: DL302", True),
    ("# noqa:DL302,DL101", True),
    ("# noqa", True),
    ("# NOQA: dl302", True),
    ("# noqa: DL3", True),
    ("# noqa: shell-cuda-visible-devices", True),
    ("# devlint: ignore[DL302]", True),
    ("# devlint: ignore[DL101]", False),
    ("# noqa: DL301", False),
])
def test_line_suppression(comment, suppressed):
    text = f"#!/bin/bash\nCUDA_VISIBLE_DEVICES=0 python3 x.py  {comment}\n"
    res = analyze_shell(text, "run.sh")
    assert (res.diagnostics == []) is suppressed
    assert len(res.suppressed) == (1 if suppressed else 0)


def test_hash_inside_a_string_is_not_a_comment():
    text = '#!/bin/bash\nCUDA_VISIBLE_DEVICES=0 python3 x.py "# noqa: DL302"\n'
    assert len(lint_shell(text, "run.sh")) == 1
    text = "#!/bin/bash\nCUDA_VISIBLE_DEVICES=0 python3 x.py '# devlint: file-ignore[DL3]'\n"
    assert len(lint_shell(text, "run.sh")) == 1


def test_suppression_on_the_last_line_of_a_continued_command():
    text = ("#!/bin/bash\nCUDA_VISIBLE_DEVICES=0 \\\n  vllm serve m \\\n"
            "  --port 8000 &  # noqa: DL302\nCUDA_VISIBLE_DEVICES=1 python3 x.py\n")
    d, = lint_shell(text, "run.sh")
    assert d.location == (5, 1)
    res = analyze_shell(text, "run.sh")
    assert res.suppressed[0].location == (2, 1) and res.suppressed[0].noqa_row == 4


def test_multi_line_eval_string_suppressed_after_its_closing_quote():
    text = ('#!/bin/bash\nBASE_CMD="CUDA_VISIBLE_DEVICES=0 \\\n  vllm serve m"  # noqa: DL302\n'
            'eval "$BASE_CMD"\n')
    assert lint_shell(text, "run.sh") == []


@pytest.mark.parametrize("directive,suppressed", [
    ("# devlint: file-ignore[DL3]", True),
    ("# devlint: file-ignore[DL302]", True),
    ("# devlint: file-ignore[DL101, shell-cuda-visible-devices]", True),
    ("# devlint: file-ignore[DL4]", False),
])
def test_file_suppression(directive, suppressed):
    text = (f"#!/bin/bash\n{directive}\nexport CUDA_VISIBLE_DEVICES=0\n"
            "CUDA_VISIBLE_DEVICES=1 python3 x.py\n")
    res = analyze_shell(text, "run.sh")
    assert len(res.diagnostics) == (0 if suppressed else 2)
    assert any(s.kind == "file-ignore" and s.used for s in res.suppressions) is suppressed


def test_unused_suppressions_are_reported_as_unused():
    text = "#!/bin/bash\necho hi  # noqa: DL302\nCUDA_VISIBLE_DEVICES=0 x  # noqa: DL302\n"
    res = analyze_shell(text, "run.sh")
    assert [(s.row, s.used) for s in res.suppressions] == [(2, False), (3, True)]


def test_applicability_and_fix_messages():
    text = "#!/bin/bash\nCUDA_VISIBLE_DEVICES=0 python3 x.py\n"
    d, = lint_shell(text, "run.sh")
    assert d.fix.applicability is Applicability.SAFE
    assert "DEVICE_TYPE" in d.fix.message
    # the script sources other files: the prefixed command might be a function from there
    d, = lint_shell("#!/bin/bash\nsource ./common.sh\nCUDA_VISIBLE_DEVICES=0 run_server\n", "r.sh")
    assert d.fix.applicability is Applicability.UNSAFE
    # the script sets DEVICE_TYPE itself, after the selector would read it
    d, = lint_shell("#!/bin/bash\nDEVICE_TYPE=cuda\nexport CUDA_VISIBLE_DEVICES=0\n", "r.sh")
    assert d.fix.applicability is Applicability.UNSAFE
    # a function or builtin cannot be run by env: flagged, not fixed
    text = "#!/bin/bash\nserve() { vllm serve m; }\nCUDA_VISIBLE_DEVICES=0 serve\n"
    d, = lint_shell(text, "r.sh")
    assert d.fix is None and "function `serve`" in d.message


def test_posix_sh_reads_are_flagged_without_a_fix():
    d, = lint_shell('#!/bin/sh\necho "$CUDA_VISIBLE_DEVICES"\n', "run.sh")
    assert d.fix is None and "POSIX sh" in d.message
    d, = lint_shell('#!/bin/sh\nexport CUDA_VISIBLE_DEVICES=0\n', "run.sh")
    assert d.fix is not None


def test_custom_variable_names():
    text = "#!/bin/bash\nCUDA_VISIBLE_DEVICES=0 python3 x.py\n"
    d, = lint_shell(text, "run.sh", ShellOptions(device_type_var="ACCEL", visibility_var="VIS"))
    contents = [e.content for e in d.fix.edits]
    assert any('case "${ACCEL:-cuda}" in' in c and "VIS=ZE_AFFINITY_MASK" in c for c in contents)
    assert 'env "$VIS=0"' in contents


_PICK = ("#!/bin/bash\nset_least_used_gpus() {\n    local n=${1:-9999}\n"
         "    local IDS=$(%s --query-gpu=memory.used --format=csv | tail -n +2 | nl -v 0 |\n"
         "        sort -g -k 2 | awk '{print $1}' | head -n $n)\n"
         "    export CUDA_VISIBLE_DEVICES=$(echo $IDS | sed 's/ /,/g')\n"
         "    echo \"CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES\"\n}\n\n"
         "set_least_used_gpus 4\nCUDA_VISIBLE_DEVICES=0 python3 train.py\n")


def test_a_function_built_on_nvidia_smi_is_nvidias_own():
    # the GPUs it picks, exports and prints are the ones nvidia-smi numbered
    # (evidence.nvidia_tool); the script's own launch line is still a finding
    assert [r for r, *_ in spans(_PICK % "nvidia-smi")] == [11]
    # without nvidia-smi, or beside another vendor's tool, the function is generic
    assert [r for r, *_ in spans(_PICK % "my-gpu-query")] == [6, 7, 11]
    both = _PICK.replace("    local n=", "    rocm-smi --showuse\n    local n=")
    assert [r for r, *_ in spans(both % "nvidia-smi")] == [7, 8, 12]
