"""DL902 io-error: a file devlint found but could not read or decode (ruff's E902)."""
from __future__ import annotations

from devlint.rules.base import Invalid, Rule, Valid


class IoError(Rule):
    """
    ## What it does
    Reports a file that devlint discovered while walking a directory but could not check: its
    bytes do not decode in its encoding (UTF-8, or the one its coding cookie declares), the
    cookie names an encoding Python does not know, or reading it failed (no permission, a
    symbolic link that leads nowhere or loops). The finding points at the first byte that
    does not decode, or at the cookie.

    A file named explicitly on the command line (or given on stdin) that cannot be read or
    decoded is not a finding but a usage error: devlint prints the same message and exits
    with status 2.

    ## Why is this bad?
    A file devlint cannot read is a file it cannot check: without this finding it would pass
    silently, and so would every hardcoded device in it. Python refuses to import such a
    file too (`SyntaxError: Non-UTF-8 code`), so it is usually a mistake: a file saved in
    latin-1 or cp1252 without a cookie, or a link left behind by a move.

    ## Example
    A file saved in latin-1, without a coding cookie:
    ```python
    name = "caf\\xe9"  # the byte 0xe9, not valid UTF-8
    ```

    Use instead: re-encode the file as UTF-8, or declare its encoding on the first or second
    line:
    ```python
    # -*- coding: latin-1 -*-
    name = "café"
    ```

    ## Fix
    None: devlint never guesses a file's encoding. Convert the file (`iconv -f latin1 -t utf-8`),
    add the cookie, fix its permissions or remove the dangling link. To leave such files out,
    `extend-exclude` them, or `--ignore DL902` (devlint then prints a warning for each instead).

    ## Fix safety
    Not fixable automatically (flag only).

    ## Profiles
    Independent of the profile.
    """

    code = "DL902"
    name = "io-error"
    summary = "File could not be read or decoded"
    exempt_by = ()  # about the file itself: never exempt

    valid = [
        Valid("# -*- coding: latin-1 -*-\nname = 'caf\u00e9'\n"),
        Valid("name = 'caf\u00e9'\n"),
    ]
    invalid = [
        # the text of a check_source() call is already decoded: only a cookie naming an
        # encoding Python does not know can make it undecodable (byte-level cases are tested
        # on files, tests/test_reliability.py)
        # (the device literal is there, and unseen: devlint cannot read the file)
        Invalid("# -*- coding: no-such-codec -*-\nimport torch\nx = torch.zeros(2, device='cuda')\n"),
    ]

    def check(self, facts):
        return iter(())  # reported by the runner, before the file is parsed


RULE = IoError


def decode_error_span(data: bytes, err: Exception):
    """(text, start, end, message) for bytes that do not decode: `text` is the lossy
    decoding that positions refer to, [start, end) the offending character (the first
    undecodable byte, or the coding cookie's line)."""
    import io
    import tokenize

    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:
        encoding = "utf-8"
    if encoding == "utf-8-sig":
        encoding = "utf-8"
    if isinstance(err, UnicodeDecodeError):
        body_offset = 3 if data.startswith(b"\xef\xbb\xbf") else 0
        text = data[body_offset:].decode(encoding, "replace")
        start = len(data[body_offset:body_offset + err.start].decode(encoding, "replace"))
        bad = data[body_offset + err.start:body_offset + err.end][:4]
        message = (f"Cannot decode the file as {encoding}: {err.reason} "
                   f"(byte{'s' if len(bad) > 1 else ''} {' '.join(f'0x{b:02x}' for b in bad)}); "
                   f"convert it to UTF-8 or declare its encoding with a coding cookie")
        return text, start, start + 1, message
    # LookupError (an unknown encoding) or SyntaxError from the cookie: point at the cookie
    text = data.decode("utf-8", "replace")
    lines = text.splitlines(True)
    row = 0
    for i, line in enumerate(lines[:2]):
        if "coding" in line:
            row = i
            break
    start = sum(len(line) for line in lines[:row])
    end = start + len(lines[row].rstrip("\r\n")) if lines else 0
    return text, start, end, f"Cannot decode the file: {err}"
