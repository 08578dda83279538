"""DL303 shell-device-option: documentation, examples and the entry point of the shell rule
that flags a CUDA device on a command line. Detection lives in devlint.shell.device_option
(tree-sitter-bash, imported lazily)."""
from __future__ import annotations

from devlint.rules._shell_rule import ShellRule
from devlint.rules.base import Invalid, Valid

CODE = "DL303"
NAME = "shell-device-option"
SUMMARY = "CUDA device option on a command line in a shell script"

DOC = """
## What it does
Flags a command-line option that a shell script (`*.sh`, `*.bash`, files with a sh/bash
shebang) hands to a Python script it runs (`python train.py`, `torchrun ... train.py`,
`deepspeed train.py`, `accelerate launch train.py`, also behind `nohup`, `srun` and the
like), whose name chooses a device, `--device`, `--vllm_device`, `--device-map`,
`--placement`, `--placement_policy` (any long option whose name holds `device` or
`placement`), and whose value is a CUDA device: `cuda` or `cuda:N`, quoted or not, as
`--device cuda:0` or `--device=cuda`.

Not flagged: an installed tool's options (`lm_eval --device cuda:0`, `swift rlhf
--vllm_device cuda:3`: the tool may ignore the option for some of its backends, or give it a
meaning of its own; a script's options reach its own argument parser), another value
(`--device cpu`, `--device auto`), a value built from a variable (`--device "$DEVICE"`,
`--device "cuda:$RANK"`), an option whose name does not choose a device (`--backend cuda`,
`-DCOMPUTE_BACKEND=cuda` builds the CUDA backend, on purpose), the words in comments or in
strings, and command lines in CI YAML, Dockerfiles and notebooks (their jobs run on the
machine the file itself asks for).

## Why is this bad?
The script sends the program to a CUDA device whatever the machine has: on Intel XPU, Ascend
NPU, Apple MPS or a CPU-only machine the program fails at start-up (`Torch not compiled with
CUDA enabled`, `no CUDA GPUs are available`) although nothing in it needs CUDA. Most programs
pick the available accelerator themselves (`auto`, or no option at all), or take the device
from a variable the user sets.

## Example
```bash
#!/bin/bash
torchrun --nproc_per_node 4 train.py --device cuda --lr 5e-6
```

Use instead:
```bash
#!/bin/bash
torchrun --nproc_per_node 4 train.py --device "${DEVICE:-cuda}" --lr 5e-6
```

## Fix
None: the right value depends on the program (`auto`, its own default when the option is
left out, or a variable of the script), so the rule only reports it.

## Fix safety
No fix is offered.

## Profiles
The same in every profile: shell scripts have no `current_platform`.
"""

# Shell examples: (path, source) and (path, source, fixed source). Run by tests/shell.
VALID = [
    ("run.sh", "#!/bin/bash\npython train.py --device cpu --placement auto\n"),
    ("run.sh", '#!/bin/bash\npython train.py --device "$DEVICE" --device_map "cuda:$RANK"\n'),
    ("run.sh", "#!/bin/bash\ncmake -DCOMPUTE_BACKEND=cuda -S . && make\n"
               "python bench.py --backend cuda --kernel=cuda\n"),
    # an installed tool's option: the tool decides what it means (or ignores it)
    ("run.sh", "#!/bin/bash\nlm_eval --model vllm --tasks wikitext --device cuda\n"
               "swift rlhf --use_vllm true --vllm_device cuda:3\n"),
    # the launcher's own options, before the script
    ("run.sh", "#!/bin/bash\ndeepspeed --device cuda:0 train.py --lr 1e-5\n"),
    ("run.sh", "#!/bin/bash\n# run with --device cuda:0 on a GPU machine\n"
               "echo 'pass --device cuda to use the GPU'\n"),
    ("run.sh", "#!/bin/bash\npython x.py --device cuda:0  # noqa: DL303\n"),
    ("run.sh", "#!/bin/bash\n# devlint: file-ignore[shell-device-option]\n"
               "python x.py --device=cuda\n"),
]

INVALID = [
    ("run.sh", "#!/bin/bash\npython eval.py --model hf --tasks wikitext --device cuda:0\n", None),
    ("run.sh", '#!/bin/bash\ntorchrun --nproc_per_node 4 --standalone train.py \\\n'
               '  --plugin="gemini" \\\n  --placement="cuda" \\\n  --lr 5e-6\n', None),
    ("run.sh", "#!/bin/bash\nnohup python3 rlhf.py --use_vllm true --vllm_device 'cuda:3' &\n",
     None),
    ("run.sh", "#!/bin/bash\nOUT=$(accelerate launch probe.py --device=cuda)\n", None),
]


def check(text: str, path: str, options=None):
    """The shell rules' diagnostics of one script that are DL303's."""
    from devlint.shell import lint_shell

    return [d for d in lint_shell(text, path, options) if d.code == CODE]


class ShellDeviceOption(ShellRule):
    __doc__ = DOC
    code = CODE
    name = NAME
    summary = SUMMARY
    valid = [Valid(src, path=path) for path, src in VALID]
    invalid = [Invalid(src, fixed, path=path) for path, src, fixed in INVALID]

    @staticmethod
    def check_shell(text: str, path: str, options=None):
        return check(text, path, options)


RULE = ShellDeviceOption
