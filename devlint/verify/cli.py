"""``devlint verify``: run verification cases on every device and compare the results; record them,
compare records from several machines, or run them on every accelerator kind of a Ray cluster."""
from __future__ import annotations

import re
import sys

import click

EXIT_OK, EXIT_MISMATCH, EXIT_USAGE = 0, 1, 2

#: What ``--ray`` accepts as an address (anything else after it is a target): Ray's own keywords,
#: ``host:port``, ``ray://host:port``.
_RAY_ADDRESS = re.compile(r"^(auto|local|[a-z][a-z0-9+.-]*://.+|[^/\\\s]+:\d+)$")


def _split_devices(value: str | None) -> list[str] | None:
    if value is None:
        return None
    return [part.strip().lower() for part in value.split(",") if part.strip()]


def _emit(text: str, output_file: str | None) -> None:
    if output_file:
        with open(output_file, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        click.echo(text, nl=False)


@click.command("verify")
@click.argument("targets", nargs=-1)
@click.option("--devices", "devices", metavar="cpu,cuda,...", default=None,
              help="Comma-separated device types to run on (default: every available one).")
@click.option("--reference", "reference", metavar="DEVICE", default=None,
              help="Device whose results the others are compared with (default: cpu); with --compare, "
                   "a column LABEL/DEVICE (default: the first record's reference device).")
@click.option("--output-format", "output_format", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="Output format.")
@click.option("-o", "--output-file", "output_file", type=click.Path(dir_okay=False, writable=True),
              default=None, help="Write the report to this file instead of stdout.")
@click.option("--list", "list_only", is_flag=True, help="List the cases the targets declare and exit.")
@click.option("--record", "record_dir", metavar="DIR", default=None,
              help="Also write the results (safetensors + manifest.json) into DIR, for --compare.")
@click.option("--label", "label", metavar="NAME", default=None,
              help="The machine's name in a record (default: the host name).")
@click.option("--compare", "compare_dirs", metavar="DIR", multiple=True,
              help="Compare records (DIR [DIR...]) made with --record on other machines; runs nothing.")
@click.option("--ray", "ray_address", metavar="[ADDRESS]", is_flag=False, flag_value="", default=None,
              help="Run the cases on one node of every accelerator kind of a Ray cluster (ADDRESS, "
                   "RAY_ADDRESS or the local one) and compare them; needs devlint[ray].")
def verify_command(targets, devices, reference, output_format, output_file, list_only, record_dir, label,
                   compare_dirs, ray_address):
    """Run verification cases on every device and check they agree.

    TARGETS are Python files, folders of them, or module paths declaring cases with
    @devlint.verify.case; with none, the built-in cases (devlint.verify.cases) run.
    With --compare, TARGETS are more record folders.
    Exit 0: all agree; 1: a mismatch or failure; 2: usage, environment or record error.
    """
    from .devices import VerifyEnvironmentError, import_torch, select_devices
    from .record import RecordError
    from .runner import VerifyUsageError

    targets = list(targets)
    if ray_address is not None and ray_address and not _RAY_ADDRESS.match(ray_address):
        # `--ray my_cases.py`: the value is a target, not an address.
        targets.insert(0, ray_address)
        ray_address = ""
    try:
        if compare_dirs and (ray_address is not None or record_dir or list_only):
            raise VerifyUsageError("--compare reads records: it cannot be combined with --ray, --record or --list")
        import_torch()
        if compare_dirs:
            from .record import compare_records

            run = compare_records([*compare_dirs, *targets], reference)
        elif ray_address is not None:
            from .ray_cluster import run_on_ray

            run = run_on_ray(targets or None, address=ray_address or None, devices=_split_devices(devices),
                             reference=reference, record_dir=record_dir)
        else:
            from .runner import load_targets, run_cases

            chosen = select_devices(_split_devices(devices))
            if reference is not None:
                reference = reference.strip().lower()
            cases = load_targets(targets or None)
            if list_only:
                for c in cases:
                    click.echo(f"{c.name}\t{c.target}\t{c.description}")
                sys.exit(EXIT_OK)
            run = run_cases(cases, chosen, reference)
            if record_dir:
                from .record import write_record

                write_record(run, record_dir, label)
    except (VerifyEnvironmentError, VerifyUsageError, RecordError) as exc:
        click.echo(f"devlint verify: error: {exc}", err=True)
        sys.exit(EXIT_USAGE)

    from .report import render_json, render_text

    _emit(render_json(run) if output_format == "json" else render_text(run), output_file)
    sys.exit(run.exit_code)
