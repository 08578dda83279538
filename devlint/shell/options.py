"""Which files are shell scripts, their dialect, and DL302's fixer options (no parser here:
cheap to import)."""
from __future__ import annotations

import codecs
import os
from dataclasses import dataclass

SHELL_EXTENSIONS = (".sh", ".bash")

# Interpreter basename -> dialect. dash/ash are POSIX sh; ksh/zsh are not linted (their
# indirection and quoting rules differ from bash's).
_INTERPRETERS = {"bash": "bash", "sh": "sh", "dash": "sh", "ash": "sh"}


@dataclass(frozen=True)
class ShellOptions:
    """Settings of DL302's fixer.

    device_type_var: environment variable the inserted selector reads (default value `cuda`).
    visibility_var: shell variable the selector sets to the name of the visibility variable.
    dialect: "auto" (from the shebang, else the extension, else bash-only syntax in the file),
        "bash" or "sh" (POSIX: reads of the variable are flagged without a fix).
    """

    device_type_var: str = "DEVICE_TYPE"
    visibility_var: str = "DEVICE_VISIBILITY_ENV"
    dialect: str = "auto"

    def __post_init__(self):
        for field_name in ("device_type_var", "visibility_var"):
            value = getattr(self, field_name)
            if not (value and (value[0].isalpha() or value[0] == "_")
                    and all(c.isalnum() or c == "_" for c in value) and value.isascii()):
                raise ValueError(f"{field_name} must be a shell variable name, got {value!r}")
        if self.dialect not in ("auto", "bash", "sh"):
            raise ValueError(f"dialect must be 'auto', 'bash' or 'sh', got {self.dialect!r}")


def shebang_interpreter(head: bytes | str) -> str | None:
    """Basename of the interpreter named by a `#!` first line (`env` and its options skipped)."""
    if isinstance(head, str):
        head = head.encode("utf-8", "surrogatepass")
    head = head.removeprefix(codecs.BOM_UTF8)
    if not head.startswith(b"#!"):
        return None
    first = head.split(b"\n", 1)[0].rstrip(b"\r")
    words = first[2:].decode("utf-8", "replace").split()
    if not words:
        return None
    prog = os.path.basename(words[0])
    if prog == "env":
        for word in words[1:]:
            if word.startswith("-") or "=" in word:
                continue  # `env -S bash -e`, `env VAR=1 bash`
            return os.path.basename(word)
        return None
    return prog


def is_shell_path(path: str, head: bytes) -> bool:
    """True for `*.sh` / `*.bash` files and files whose first line is a sh/bash shebang."""
    if path.lower().endswith(SHELL_EXTENSIONS):
        return True
    return shebang_interpreter(head) in _INTERPRETERS


def detect_dialect(text: str, path: str) -> str | None:
    """"bash" or "sh" from the shebang, then the extension; None when only the file's own
    syntax can tell (a `.sh` file without a shebang)."""
    interp = shebang_interpreter(text[:256])
    if interp in _INTERPRETERS:
        return _INTERPRETERS[interp]
    if path.lower().endswith(".bash"):
        return "bash"
    return None
