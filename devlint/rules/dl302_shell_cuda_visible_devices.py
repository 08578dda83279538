"""DL302 shell-cuda-visible-devices: documentation, examples and the entry point of the shell
rule. Detection and fixes live in devlint.shell (tree-sitter-bash, imported lazily)."""
from __future__ import annotations

from devlint.rules._shell_rule import ShellRule
from devlint.rules.base import Invalid, Valid

CODE = "DL302"
NAME = "shell-cuda-visible-devices"
SUMMARY = "`CUDA_VISIBLE_DEVICES` hardcoded in a shell script"

_SELECTOR = """\
# The variable that selects visible devices, from DEVICE_TYPE (devlint DL302).
case "${DEVICE_TYPE:-cuda}" in
    rocm) DEVICE_VISIBILITY_ENV=HIP_VISIBLE_DEVICES ;;
    xpu) DEVICE_VISIBILITY_ENV=ZE_AFFINITY_MASK ;;
    npu) DEVICE_VISIBILITY_ENV=ASCEND_RT_VISIBLE_DEVICES ;;
    hpu) DEVICE_VISIBILITY_ENV=HABANA_VISIBLE_MODULES ;;
    mlu) DEVICE_VISIBILITY_ENV=MLU_VISIBLE_DEVICES ;;
    tpu) DEVICE_VISIBILITY_ENV=TPU_VISIBLE_CHIPS ;;
    neuron) DEVICE_VISIBILITY_ENV=NEURON_RT_VISIBLE_CORES ;;
    *) DEVICE_VISIBILITY_ENV=CUDA_VISIBLE_DEVICES ;;
esac"""


def _fixed(header: str, body: str) -> str:
    """`header` lines, the selector block, then `body` (what the fixer writes)."""
    return f"{header}\n\n{_SELECTOR}\n\n{body}"


DOC = """
## What it does
Flags `CUDA_VISIBLE_DEVICES` (and `HIP_VISIBLE_DEVICES` set on its own) in shell scripts
(`*.sh`, `*.bash`, files with a sh/bash shebang): command prefixes
(`CUDA_VISIBLE_DEVICES=0 vllm serve ...`), `export`/`local`/`declare`, `unset`, plain
assignments, reads (`$CUDA_VISIBLE_DEVICES`, `${CUDA_VISIBLE_DEVICES:-0}`), `env NAME=...`
arguments, and the name inside text that is later run as shell code: strings passed to `eval`
or `bash -c`, variables whose value reaches `eval` (`BASE_CMD="CUDA_VISIBLE_DEVICES=$GPU vllm
serve ..."` then `eval "$BASE_CMD &"`), and here-documents fed to `bash`/`sh`. Also the
name handed to a launcher that sets it for the program it starts: Slurm's
`srun --export=ALL,CUDA_VISIBLE_DEVICES=0` (`sbatch`, `salloc`), and
`docker run -e CUDA_VISIBLE_DEVICES=0` (`podman`, `nerdctl`; `run`, `create`, `exec`;
`apptainer`/`singularity --env`), fixed to `--export=ALL,"$DEVICE_VISIBILITY_ENV"=0`.

The same rule reads the shell inside other files: a notebook's `!` lines and `%%bash` cells,
GitHub Actions `run:`, GitLab CI `script:`, Buildkite `command:`, and Dockerfiles' `RUN`,
`CMD`, `ENTRYPOINT`, heredocs and `ENV` (docs/notebooks.md, docs/ci-files.md).

A selector is not a finding: an assignment whose value is a visibility variable's name
(`DEVICE_VISIBILITY_ENV=CUDA_VISIBLE_DEVICES` in an `if` or `case` arm), nor is the name in a
comment or in a string that is only printed. Nor is what a shell function built on
`nvidia-smi` sets, reads or prints (`set_n_least_used_CUDA_VISIBLE_DEVICES() { ... nvidia-smi
--query-gpu=memory.used ...; export CUDA_VISIBLE_DEVICES=...; }`): it picks NVIDIA's GPUs
(principle `nvidia-tool`), unless it also runs another vendor's tool (`rocm-smi`...).

## Why is this bad?
Only NVIDIA's runtime (and AMD's HIP runtime) reads `CUDA_VISIBLE_DEVICES`. On Intel XPU the
variable is `ZE_AFFINITY_MASK`, on Ascend NPU `ASCEND_RT_VISIBLE_DEVICES`, on Gaudi
`HABANA_VISIBLE_MODULES`: a script that pins two servers to GPUs 0 and 1 with
`CUDA_VISIBLE_DEVICES` starts both on the same XPU there, and tests that need two devices fail
or measure the wrong thing.

## Example
```bash
#!/bin/bash
set -e
BASE_CMD="CUDA_VISIBLE_DEVICES=$GPU vllm serve $MODEL --port $PORT"
eval "$BASE_CMD &"
CUDA_VISIBLE_DEVICES=1 python3 bench.py
```

Use instead:
```bash
#!/bin/bash
set -e

# The variable that selects visible devices, from DEVICE_TYPE (devlint DL302).
case "${DEVICE_TYPE:-cuda}" in
    rocm) DEVICE_VISIBILITY_ENV=HIP_VISIBLE_DEVICES ;;
    xpu) DEVICE_VISIBILITY_ENV=ZE_AFFINITY_MASK ;;
    ...
    *) DEVICE_VISIBILITY_ENV=CUDA_VISIBLE_DEVICES ;;
esac

BASE_CMD="$DEVICE_VISIBILITY_ENV=$GPU vllm serve $MODEL --port $PORT"
eval "$BASE_CMD &"
env "$DEVICE_VISIBILITY_ENV=1" python3 bench.py
```

## Fix
Once per file, after the shebang, the leading comments and `set`/`shopt` lines, a `case` on
`${DEVICE_TYPE:-cuda}` sets `DEVICE_VISIBILITY_ENV` from the table in
`devlint/data/visibility_env.toml` (cuda, rocm, xpu, npu, hpu, mlu, tpu, neuron; anything else
gets `CUDA_VISIBLE_DEVICES`). A selector the script already has (`DEVICE_VISIBILITY_ENV=...`, or
any variable assigned two visibility names, set at top level before the first use) is reused.
Each use is rewritten for its context:

| use | becomes |
|---|---|
| `CUDA_VISIBLE_DEVICES=$G cmd` | `env "$DEVICE_VISIBILITY_ENV=$G" cmd` (a bare `$VAR=value cmd` is not an assignment); other prefixes stay: `A=1 env "...=0" B=2 cmd`, or the `env` moves next to the command when a later prefix would change meaning as an argument |
| `export CUDA_VISIBLE_DEVICES=0,1` / `local` / `declare` | `export "$DEVICE_VISIBILITY_ENV=0,1"` |
| `unset CUDA_VISIBLE_DEVICES`, `env -u ...` | `unset "$DEVICE_VISIBILITY_ENV"` |
| `CUDA_VISIBLE_DEVICES=3` | `eval "$DEVICE_VISIBILITY_ENV=3"` (the same assignment under the chosen name) |
| `$CUDA_VISIBLE_DEVICES`, `${CUDA_VISIBLE_DEVICES:-0}` (bash) | `${!DEVICE_VISIBILITY_ENV}`, `${!DEVICE_VISIBILITY_ENV:-0}` |
| `env CUDA_VISIBLE_DEVICES=0 cmd` | `env "$DEVICE_VISIBILITY_ENV=0" cmd` |
| name in a double-quoted string later `eval`ed | `$DEVICE_VISIBILITY_ENV` (expanded when the string is built, so `eval` sees `ZE_AFFINITY_MASK=0 cmd`, a real prefix) |
| name in a single-quoted `eval` / `bash -c` string | `'...'"$DEVICE_VISIBILITY_ENV"'...'` |

No fix (flag only): reads in POSIX sh (`#!/bin/sh`; there is no indirect expansion),
`${#CUDA_VISIBLE_DEVICES}` and subscripts, a prefix on a shell function or builtin (`env` cannot
run them), `+=` and array values, a prefix next to `HIP_VISIBLE_DEVICES` with another value,
quoted here-documents, and anything inside a region the parser could not parse.

## Fix safety
Safe where behaviour is unchanged when `DEVICE_TYPE` is unset: the selector then picks
`CUDA_VISIBLE_DEVICES`, and every rewrite above sets, exports, unsets or reads exactly what the
original did (`env NAME=value cmd` passes the same environment as a prefix). Unsafe when:
- a value would be word-split or globbed as an `env` argument although it was not as an
  assignment (an unquoted value with characters the rewriter cannot put in double quotes);
- the script sources other files, so a prefixed command could be a function `env` cannot run;
- the script itself assigns `DEVICE_TYPE` (the selector runs before that assignment) or already
  uses `DEVICE_VISIBILITY_ENV` for something else.
Setting `DEVICE_TYPE` in the environment is the intended new behaviour.

## Profiles
The same in every profile: shell scripts have no `current_platform`. The names come from the
rule's options (`device_type_var`, default `DEVICE_TYPE`; `visibility_var`, default
`DEVICE_VISIBILITY_ENV`); the dialect (bash or POSIX sh) from the shebang, else the extension,
else bash-only syntax in the file.
"""

# Shell examples: (path, source) and (path, source, fixed source). Run by tests/shell.
VALID = [
    ("run.sh", "#!/bin/bash\necho 'set CUDA_VISIBLE_DEVICES to pick GPUs'  # CUDA_VISIBLE_DEVICES\n"),
    ("run.sh", ('#!/bin/bash\nif [[ "$KV_BUFFER_DEVICE" == "xpu" ]]; then\n'
                "  DEVICE_VISIBILITY_ENV=ZE_AFFINITY_MASK\nelse\n"
                "  DEVICE_VISIBILITY_ENV=CUDA_VISIBLE_DEVICES\nfi\n"
                'BASE_CMD="$DEVICE_VISIBILITY_ENV=0 vllm serve m"\neval "$BASE_CMD &"\n')),
    ("run.sh", "#!/bin/bash\nCUDA_VISIBLE_DEVICES=0 python3 x.py  # noqa: DL302\n"),
    ("run.sh", "#!/bin/bash\n# devlint: file-ignore[DL3]\nexport CUDA_VISIBLE_DEVICES=0\n"),
    ("run.sh", "#!/bin/bash\nRAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES=1 ray start\n"),
    ("run.sh", "#!/bin/bash\nsrun --export=ALL,HF_HOME=/data python3 x.py\n"
               "docker run --rm -e HF_TOKEN img\ndocker build -t img .\n"),
    # a helper that picks GPUs with nvidia-smi: they are NVIDIA's (nvidia-tool)
    ("run.sh", "#!/bin/bash\npick_gpus() {\n"
               "    local IDS=$(nvidia-smi --query-gpu=index --format=csv,noheader | head -n $1)\n"
               "    export CUDA_VISIBLE_DEVICES=$(echo $IDS | sed 's/ /,/g')\n"
               "    echo \"CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES\"\n}\n"),
]

INVALID = [
    ("run.sh",
     "#!/bin/bash\nset -e\n\nCUDA_VISIBLE_DEVICES=0 python3 bench.py\n",
     _fixed("#!/bin/bash\nset -e", 'env "$DEVICE_VISIBILITY_ENV=0" python3 bench.py\n')),
    ("run.sh",
     "#!/bin/bash\nexport CUDA_VISIBLE_DEVICES=0,1\nunset CUDA_VISIBLE_DEVICES\n",
     _fixed("#!/bin/bash",
            'export "$DEVICE_VISIBILITY_ENV=0,1"\nunset "$DEVICE_VISIBILITY_ENV"\n')),
    ("run.sh",
     '#!/bin/bash\nBASE_CMD="CUDA_VISIBLE_DEVICES=$GPU vllm serve $MODEL"\neval "$BASE_CMD &"\n',
     _fixed("#!/bin/bash",
            'BASE_CMD="$DEVICE_VISIBILITY_ENV=$GPU vllm serve $MODEL"\neval "$BASE_CMD &"\n')),
    ("run.sh",
     '#!/bin/bash\necho "using ${CUDA_VISIBLE_DEVICES:-all}"\n',
     _fixed("#!/bin/bash", 'echo "using ${!DEVICE_VISIBILITY_ENV:-all}"\n')),
    ("run.sh",
     "#!/bin/bash\nbash -c 'CUDA_VISIBLE_DEVICES=1 python3 x.py'\n",
     _fixed("#!/bin/bash", "bash -c \"$DEVICE_VISIBILITY_ENV\"'=1 python3 x.py'\n")),
    ("run.sh",
     "#!/bin/bash\nsrun --export=ALL,CUDA_VISIBLE_DEVICES=0 python3 x.py\n",
     _fixed("#!/bin/bash", 'srun --export=ALL,"$DEVICE_VISIBILITY_ENV"=0 python3 x.py\n')),
    ("run.sh",
     "#!/bin/bash\ndocker run --rm -e CUDA_VISIBLE_DEVICES=0,1 img python3 x.py\n",
     _fixed("#!/bin/bash",
            'docker run --rm -e "$DEVICE_VISIBILITY_ENV"=0,1 img python3 x.py\n')),
    # POSIX sh: the read is flagged without a fix, so nothing changes
    ("run.sh", '#!/bin/sh\necho "$CUDA_VISIBLE_DEVICES"\n', None),
]


def check(text: str, path: str, options=None):
    """DL302 diagnostics of one shell script (suppressions applied)."""
    from devlint.shell import lint_shell

    return lint_shell(text, path, options)


class ShellCudaVisibleDevices(ShellRule):
    __doc__ = DOC
    code = CODE
    name = NAME
    summary = SUMMARY
    exempt_by = ("nvidia-tool",)  # a shell function built on nvidia-smi (devlint.shell)
    valid = [Valid(src, path=path) for path, src in VALID]
    invalid = [Invalid(src, fixed, path=path) for path, src, fixed in INVALID]

    @staticmethod
    def check_shell(text: str, path: str, options=None):
        return check(text, path, options)


RULE = ShellCudaVisibleDevices
