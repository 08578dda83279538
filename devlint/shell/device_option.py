"""DL303's analysis: a command-line option of a shell script that names a CUDA device
(`--device cuda:0`, `--device=cuda`, `--placement "cuda"`), found with tree-sitter-bash.

What counts: an option handed to a Python script the command runs (`python train.py`,
`torchrun ... train.py`, `accelerate launch train.py`): a long option (`--name`) whose name
speaks of a device or of where tensors are placed (`device`, `placement`: `--device`,
`--vllm_device`, `--placement_policy`) and whose value is a CUDA device and nothing else
(`cuda`, `cuda:3`, quoted or not; `--opt value` or `--opt=value`). Not an installed tool's
option (`lm_eval --device cuda:0`: the tool may ignore it, for some of its backends, or mean
something of its own), not a value built from a variable (`--device "$DEVICE"`), not another word
(`--device cpu`, `-DCOMPUTE_BACKEND=cuda`: a build of the CUDA backend is CUDA's on purpose),
not text inside a string that is later run (only the script's own commands)."""
from __future__ import annotations

import re
from dataclasses import dataclass

from devlint.shell.parse import _ancestors, _Doc, _statement, _walk

CODE = "DL303"
NAME = "shell-device-option"

# the option names that choose a device: `--device`, `--vllm_device`, `--device-map`,
# `--placement`, `--placement_policy` (case and separators free)
_DEVICE_OPTION = re.compile(r"(?i)^--[a-z0-9_.-]*(?:device|placement)[a-z0-9_.-]*$")
# the value: CUDA's device type, with an index or without
_CUDA_DEVICE = re.compile(r"^cuda(?::\d+)?$")
# the programs that run a Python script given by its path: the interpreter, torch's and
# Hugging Face's launchers, DeepSpeed's
_LAUNCHER = re.compile(r"^(?:python(?:\d+(?:\.\d+)?)?|torchrun|deepspeed|launch)$")
# argument node types whose text is a plain value once its quotes are taken off
_VALUE_TYPES = frozenset({"word", "string", "raw_string", "concatenation"})


@dataclass
class DeviceOption:
    start: int  # character offsets of the value (its quotes included)
    end: int
    option: str  # the option's name (`--device`)
    value: str  # the value without quotes (`cuda:0`)
    node: object  # the value's tree node (for suppression rows)
    sep: str = " "  # between option and value: " " or "="


def _plain_value(doc: _Doc, node) -> str | None:
    """The text of a value with its quotes taken off, or None if any part of it expands
    (a variable, a command substitution) or is not a plain word or string."""
    if node.type == "word":
        return doc.src(node)
    if node.type == "raw_string":
        return doc.src(node)[1:-1]
    if node.type == "string":
        if any(c.type not in ('"', "string_content") for c in node.children):
            return None
        return doc.src(node)[1:-1]
    if node.type == "concatenation":
        parts = [_plain_value(doc, c) for c in node.children]
        return None if any(p is None for p in parts) else "".join(parts)
    return None


def _arguments(command) -> list:
    """The command's arguments (not its name, prefixes or redirects)."""
    return [c for c in command.children if c.type in _VALUE_TYPES]


def _script_arguments(doc: _Doc, command) -> list:
    """The arguments a command hands to a Python script it runs (`python train.py ...`,
    `torchrun --nproc_per_node 4 train.py ...`, `accelerate launch train.py ...`, also behind
    a wrapper: `nohup python x.py`, `srun python x.py`): those after the first `*.py` word,
    when a Python launcher stands before it. [] for any other command: an installed tool's
    options are the tool's own (it may ignore `--device`, or take it for a build or a backend
    of its own), while a script's reach its own argument parser."""
    name = command.child_by_field_name("name")
    words = ([name] if name is not None else []) + _arguments(command)
    launcher = False
    for i, w in enumerate(words):
        text = _plain_value(doc, w) if w.type != "command_name" else doc.src(w)
        if text is None:
            continue
        base = text.rsplit("/", 1)[-1]
        if _LAUNCHER.match(base):
            launcher = True
        elif launcher and text.endswith(".py") and not text.startswith("-"):
            return [a for a in words[i + 1:] if a.type != "command_name"]
    return []


def device_options(doc: _Doc, root) -> list[DeviceOption]:
    """The CUDA device options of a script's commands, in text order."""
    out = []
    for node in _walk(root):
        if node.type != "command" or any(a.type == "ERROR" for a in _ancestors(node)):
            continue
        args = _script_arguments(doc, node)
        for i, arg in enumerate(args):
            text = _plain_value(doc, arg)
            if text is None or not text.startswith("--"):
                continue
            if "=" in text:  # `--device=cuda`, `--placement="cuda"`
                option, value = text.split("=", 1)
                if _DEVICE_OPTION.match(option) and _CUDA_DEVICE.match(value):
                    start = doc.start(arg) + doc.src(arg).index("=") + 1
                    out.append(DeviceOption(start, doc.end(arg), option, value, arg, "="))
                continue
            if not _DEVICE_OPTION.match(text) or i + 1 >= len(args):
                continue
            nxt = args[i + 1]
            value = _plain_value(doc, nxt)
            if value is not None and _CUDA_DEVICE.match(value):
                out.append(DeviceOption(doc.start(nxt), doc.end(nxt), text, value, nxt))
    return sorted(out, key=lambda f: f.start)



def diagnostics(doc: _Doc, options: list[DeviceOption], path: str) -> list:
    """DL303's diagnostics (flag only: the right value is the program's own, `auto`, a
    variable, or no option at all)."""
    from devlint.diagnostics import Diagnostic

    loc = doc.locator
    out = []
    for f in options:
        d = Diagnostic(CODE, NAME, f"`{f.option}{f.sep}{f.value}` hardcodes a CUDA device on the "
                       "command line; XPU, NPU and CPU-only machines have none (no automatic "
                       "fix: pass the program's own device choice, or leave the option out)",
                       path, f.start, f.end, None)
        d.location = loc.rowcol(f.start)
        d.end_location = loc.rowcol(f.end)
        row = d.location[0]
        # a comment cannot follow a line continuation: the command's last row holds the noqa
        continued = loc.line(row).rstrip().endswith("\\")
        d.noqa_row = _statement(f.node).end_point[0] + 1 if continued else row
        out.append(d)
    return out
