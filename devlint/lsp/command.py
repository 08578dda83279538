"""The `devlint server` command (registered by devlint.cli; pygls is imported only when run)."""
from __future__ import annotations

import sys

import click


@click.command("server")
def server_command():
    """Run the language server on stdio (for editors: diagnostics, quick fixes, fix all,
    add noqa, hover). Needs `pip install 'devlint[server]'`."""
    try:
        from devlint.lsp.server import serve
    except ImportError as e:
        click.echo(f"devlint: error: the language server needs pygls "
                   f"(pip install 'devlint[server]'): {e}", err=True)
        sys.exit(2)
    serve()
