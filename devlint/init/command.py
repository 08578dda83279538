"""The `devlint init` command (registered by devlint.cli; imports nothing heavy until run)."""
from __future__ import annotations

import sys

import click


@click.command("init")
@click.argument("path", required=False, default=".", type=click.Path(file_okay=False))
@click.option("--yes", "-y", is_flag=True, help="Write pyproject.toml without asking.")
def init_command(path, yes):
    """Find the project's device layer and torch floor (read with ast: nothing is run), show
    the evidence (file:line), write [tool.devlint] to pyproject.toml once confirmed."""
    from devlint.init.run import run

    def ask(question):
        if not sys.stdin.isatty():
            return None  # no terminal to confirm on
        return click.confirm(question, default=False)

    sys.exit(run(path, yes, click.echo, ask))
