"""One line per finding (`path:row:col: CODE [*] message`), then ruff's summary lines."""
from __future__ import annotations

from devlint.diagnostics import Applicability


def marker(d, unsafe: bool) -> str:
    if d.fix is None:
        return ""
    a = d.fix.applicability
    if a is Applicability.SAFE or (unsafe and a is Applicability.UNSAFE):
        return "[*] "
    return ""


def header(d, unsafe: bool) -> str:
    from devlint.reporters import cell_prefix

    row, col = d.location
    return f"{d.path}:{cell_prefix(d)}{row}:{col}: {d.code} {marker(d, unsafe)}{d.message}\n"


def report(diagnostics, out, ctx) -> None:
    from devlint.reporters import exempt

    for d in diagnostics:
        out.write(header(d, ctx.unsafe))
    exempt.write_section(out, ctx)
    write_summary(diagnostics, out, ctx)
    exempt.write_summary(out, ctx)


def write_summary(diagnostics, out, ctx) -> None:
    if ctx.quiet:
        return
    n = len(diagnostics)
    fixed = ctx.fixed
    if n == 0:
        if fixed:
            out.write(f"Found {fixed} error{'s' if fixed != 1 else ''} ({fixed} fixed, 0 remaining).\n")
        elif not ctx.diff_mode and not ctx.failed:
            # (a run that failed, exit 2, has checked nothing "passed": stderr says why)
            out.write("All checks passed!\n")
        return
    if fixed:
        out.write(f"Found {n + fixed} errors ({fixed} fixed, {n} remaining).\n")
    else:
        out.write(f"Found {n} error{'s' if n != 1 else ''}.\n")
    safe = sum(1 for d in diagnostics if d.fix and d.fix.applicability is Applicability.SAFE)
    unsafe = sum(1 for d in diagnostics if d.fix and d.fix.applicability is Applicability.UNSAFE)
    if ctx.unsafe:
        if safe + unsafe:
            out.write(f"[*] {safe + unsafe} fixable with the `--fix --unsafe-fixes` option.\n")
    else:
        if safe:
            out.write(f"[*] {safe} fixable with the `--fix` option")
            if unsafe:
                out.write(f" ({unsafe} hidden fix{'es' if unsafe != 1 else ''} can be enabled "
                          f"with the `--unsafe-fixes` option)")
            out.write(".\n")
        elif unsafe:
            out.write(f"No fixes available ({unsafe} hidden fix{'es' if unsafe != 1 else ''} can "
                      f"be enabled with the `--unsafe-fixes` option).\n")
