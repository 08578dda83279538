"""DL900 unused-suppression."""
from __future__ import annotations

import re

from devlint.diagnostics import Applicability, Diagnostic, Edit, Fix
from devlint.rules.base import Invalid, Rule, Valid


class UnusedSuppression(Rule):
    """
    ## What it does
    Flags devlint suppressions that suppress nothing: `# noqa: DL101` on a line without a
    DL101 finding, `# devlint: ignore[DL4]` with no DL4xx finding, a
    `# devlint: file-ignore[DL2]` in a file without DL2xx findings. Codes of other tools in the
    same `# noqa` are left alone, and so is a bare `# noqa`.

    ## Why is this bad?
    A stale suppression hides the next real finding on that line, and tells readers a hardcoding
    is there on purpose when it is gone.

    ## Example
    ```python
    x = x.to(device)  # noqa: DL101
    ```

    Use instead:
    ```python
    x = x.to(device)
    ```

    ## Fix
    The unused codes are removed from the comment; a comment left without codes is removed.

    ## Fix safety
    Safe: comments only.

    ## Profiles
    Independent of the profile.
    """

    code = "DL900"
    name = "unused-suppression"
    summary = "Suppression comment that suppresses nothing"
    exempt_by = ()  # about the file itself: never exempt

    valid = [
        Valid('import torch\nx = torch.zeros(2, device="cuda")  # noqa: DL103\n'),
        Valid("x = 1  # noqa\n"),
        Valid("x = 1  # noqa: E501\n"),
    ]
    invalid = [
        Invalid("x = x.to(device)  # noqa: DL101\n", "x = x.to(device)\n"),
        Invalid("x = 1  # noqa: DL101, E501\n", "x = 1  # noqa: E501\n"),
        Invalid("# devlint: file-ignore[DL4]\nx = 1\n", "\nx = 1\n"),
        Invalid("x = 1  # devlint: ignore[DL1] keep this note\n", "x = 1  # keep this note\n"),
    ]

    def check(self, facts):
        return iter(())  # reported by the engine after suppressions are applied


def unused_suppressions(suppressions, enabled, text: str, path: str):
    """Diagnostics for the devlint codes of `suppressions` that suppressed nothing."""
    out = []
    for s in suppressions:
        if s.codes is None:
            if s.kind == "noqa" or s.used:
                continue  # a bare noqa may serve other tools
            stale, keep = ("<all>",), ()
        else:
            # like ruff's RUF100: a code of a disabled rule suppresses nothing either
            stale = tuple(c for c in s.codes if c.startswith("DL")
                          and not any(u.startswith(c) for u in s.used))
            keep = tuple(c for c in s.codes if c not in stale)
        if not stale:
            continue
        comment = text[s.start:s.end]
        if keep:
            head = re.match(r"#\s*(noqa:\s*|devlint:\s*(?:file-)?ignore\[)", comment).group(0)
            sep = ", "
            new = head + sep.join(keep) + ("]" if "[" in head else "")
            edit = Edit(s.start, s.end, new)
        else:
            line_end = text.find("\n", s.end)
            line_end = len(text) if line_end < 0 else line_end
            rest = text[s.end:line_end].strip()
            start = s.start
            while start > 0 and text[start - 1] in " \t":
                start -= 1
            line_start = text.rfind("\n", 0, start) + 1
            if rest and not rest.startswith("#"):
                edit = Edit(s.start, s.end, "#")
            elif start == line_start:
                edit = Edit(s.start, s.end, "")
            else:
                edit = Edit(start, s.end, "")
        what = ", ".join(c if _enabled(c, enabled) else f"{c} (non-enabled)" for c in stale) \
            if stale != ("<all>",) else "every code"
        d = Diagnostic(UnusedSuppression.code, UnusedSuppression.name,
                       f"Unused suppression of {what}", path, s.start, s.end,
                       Fix(Applicability.SAFE, "Remove the unused suppression", (edit,)))
        out.append(d)
    return out


def _enabled(code: str, enabled) -> bool:
    return any(e.startswith(code) for e in enabled)


RULE = UnusedSuppression
