"""The visibility variable handed to a launcher that sets it for the program it starts:
`srun --export=ALL,CUDA_VISIBLE_DEVICES=0` (Slurm's srun, sbatch, salloc) and
`docker run -e CUDA_VISIBLE_DEVICES=0` (docker, podman, nerdctl `run` / `create` / `exec`;
apptainer and singularity `--env`): a mixin of the visibility analysis.

The name is replaced where it stands by the chosen variable, expanded: an unquoted word
becomes `--export=ALL,"$DEVICE_VISIBILITY_ENV"=0`, a double-quoted one takes
`$DEVICE_VISIBILITY_ENV` inside its quotes, a single-quoted one is closed and reopened around
it; the launcher then receives exactly the text it did, the variable's name aside."""
from __future__ import annotations

import os

from devlint.shell.parse import _command_name_text, doc_field

_SLURM = frozenset({"srun", "sbatch", "salloc"})
_CONTAINERS = frozenset({"docker", "podman", "nerdctl"})
_CONTAINER_COMMANDS = frozenset({"run", "create", "exec"})
_APPTAINER = frozenset({"apptainer", "singularity"})


class _Launchers:
    """Mixed into `visibility._Analysis` (uses its `doc`, `flagged`, `_scan_carrier`)."""

    def launcher_findings(self, command):
        cname = _command_name_text(self.doc, command)
        if cname is None:
            return
        name = os.path.basename(cname)
        args = [c for c in command.children if doc_field(command, c) == "argument"]
        words = [self.doc.src(a) for a in args]
        if name in _SLURM:
            options, label = ("--export",), f"`{name} --export`"
        elif name in _CONTAINERS and any(w in _CONTAINER_COMMANDS for w in words[:3]):
            options, label = ("-e", "--env"), f"`{name} -e`"
        elif name in _APPTAINER:
            options, label = ("--env",), f"`{name} --env`"
        else:
            return
        for i, (arg, word) in enumerate(zip(args, words)):
            target = None
            if word in options and i + 1 < len(args):
                target = args[i + 1]
            elif any(word.startswith(o + "=") for o in options if o.startswith("--")):
                target = arg  # `--export=...`, `--env=...`
            if target is None or not any(v in self.doc.src(target) for v in self.flagged):
                continue
            for f in self._scan_carrier(target, label):
                f.context = "option"
                f.message = f"Hardcoded `{f.var}` passed to {label}"
                yield f
