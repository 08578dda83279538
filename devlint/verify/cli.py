"""``devlint verify``: run verification cases on every device and compare the results."""
from __future__ import annotations

import sys

import click

EXIT_OK, EXIT_MISMATCH, EXIT_USAGE = 0, 1, 2


def _split_devices(value: str | None) -> list[str] | None:
    if value is None:
        return None
    return [part.strip().lower() for part in value.split(",") if part.strip()]


@click.command("verify")
@click.argument("targets", nargs=-1)
@click.option("--devices", "devices", metavar="cpu,cuda,...", default=None,
              help="Comma-separated device types to run on (default: every available one).")
@click.option("--reference", "reference", metavar="DEVICE", default=None,
              help="Device whose results the others are compared with (default: cpu).")
@click.option("--output-format", "output_format", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="Output format.")
@click.option("-o", "--output-file", "output_file", type=click.Path(dir_okay=False, writable=True),
              default=None, help="Write the report to this file instead of stdout.")
@click.option("--list", "list_only", is_flag=True, help="List the cases the targets declare and exit.")
def verify_command(targets, devices, reference, output_format, output_file, list_only):
    """Run verification cases on every device and check they agree.

    TARGETS are Python files, folders of them, or module paths declaring cases with
    @devlint.verify.case; with none, the built-in cases (devlint.verify.cases) run.
    Exit 0: all agree; 1: a mismatch or failure; 2: usage or environment error.
    """
    from .devices import VerifyEnvironmentError, import_torch, select_devices
    from .runner import VerifyUsageError, load_targets, run_cases

    try:
        import_torch()
        chosen = select_devices(_split_devices(devices))
        if reference is not None:
            reference = reference.strip().lower()
        cases = load_targets(list(targets) or None)
        if list_only:
            for c in cases:
                click.echo(f"{c.name}\t{c.target}\t{c.description}")
            sys.exit(EXIT_OK)
        run = run_cases(cases, chosen, reference)
    except (VerifyEnvironmentError, VerifyUsageError) as exc:
        click.echo(f"devlint verify: error: {exc}", err=True)
        sys.exit(EXIT_USAGE)

    from .report import render_json, render_text

    text = render_json(run) if output_format == "json" else render_text(run)
    if output_file:
        with open(output_file, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        click.echo(text, nl=False)
    sys.exit(run.exit_code)
