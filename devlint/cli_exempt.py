"""The options of `devlint check` about what is not reported: `--show-exempt` and
`--skip-cuda-only-paths/--no-skip-cuda-only-paths` (kept out of `cli.py`, and out of `check`'s
signature: the command line's own concern is small)."""
from __future__ import annotations

import click

EXEMPT_FORMATS = ("concise", "full", "json")
EXEMPT_USAGE = (f"--show-exempt lists what was not reported in the {', '.join(EXEMPT_FORMATS)} "
                "formats; not with --statistics, --diff or --add-noqa")


def exempt_options(f):
    """`--show-exempt` (list what was not reported, and why) and
    `--skip-cuda-only-paths/--no-skip-cuda-only-paths` (whole files CUDA-only by their folder
    or name), kept out of `check`'s signature: they become settings overrides
    (`exempt_overrides`) and a report option (`cli._finish`)."""
    import functools

    @functools.wraps(f)
    def wrapper(*args, show_exempt=False, skip_cuda_only_paths=None, **kwargs):
        meta = click.get_current_context().meta
        meta["devlint.show_exempt"] = show_exempt
        meta["devlint.exempt_overrides"] = dict(
            {"show_exempt": True} if show_exempt else {},
            **({} if skip_cuda_only_paths is None
               else {"skip_cuda_only_paths": skip_cuda_only_paths}))
        return f(*args, **kwargs)

    wrapper = click.option(
        "--skip-cuda-only-paths/--no-skip-cuda-only-paths", default=None,
        help="Skip files CUDA-only by their folder or name (cuda/, nvidia/, third_party/, "
             "cuda_utils.py ...; default: true). Their imports still count.")(wrapper)
    return click.option(
        "--show-exempt", is_flag=True,
        help="Also list every candidate and file not reported, with the principle and the "
             "evidence (file:line).")(wrapper)


def exempt_overrides() -> dict:
    return click.get_current_context().meta.get("devlint.exempt_overrides", {})


def show_exempt() -> bool:
    ctx = click.get_current_context(silent=True)
    return bool(ctx and ctx.meta.get("devlint.show_exempt"))


def exempt_report(results) -> dict:
    """The `ReportContext` arguments about what was not reported: the entries (with
    --show-exempt) and the counts of skipped files (always)."""
    from devlint.reporters.exempt import skipped_counts

    entries = [e for r in results for e in getattr(r, "exempt", ())]
    return {"exempt": entries if show_exempt() else None, "skipped": skipped_counts(entries)}


def check_usage(fmt, statistics, diff, add_noqa) -> None:
    """Exit 2 when --show-exempt is asked for where it cannot print anything."""
    if show_exempt() and (fmt not in EXEMPT_FORMATS or statistics or diff or add_noqa):
        import sys

        click.echo(f"devlint: error: {EXEMPT_USAGE}", err=True)
        sys.exit(2)
