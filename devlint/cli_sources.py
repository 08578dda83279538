"""`--extension EXT:LANGUAGE` (ruff's option): files with another extension read as Python, a
stub, a notebook or a shell script. Kept out of `check`'s signature: it becomes the
`extension` settings override (`source_overrides`)."""
from __future__ import annotations

import click

LANGUAGES = ("python", "pyi", "ipynb", "shell")


def parse_mapping(values) -> tuple:
    """(("ext", "language"), ...) from `EXT:LANGUAGE` items (comma-separated or repeated)."""
    out = {}
    for value in values:
        for item in (v.strip() for v in value.split(",")):
            if not item:
                continue
            ext, sep, lang = item.partition(":")
            ext = ext.strip().lstrip(".").lower()
            if not sep or not ext or lang.strip() not in LANGUAGES:
                raise click.UsageError(f"--extension: expected EXT:LANGUAGE with LANGUAGE one of "
                                       f"{', '.join(LANGUAGES)}, got {item!r}")
            out[ext] = lang.strip()
    return tuple(sorted(out.items()))


def extension_option(f):
    import functools

    @functools.wraps(f)
    def wrapper(*args, extension=(), **kwargs):
        mapping = parse_mapping(extension)
        click.get_current_context().meta["devlint.source_overrides"] = (
            {"extension": mapping} if mapping else {})
        return f(*args, **kwargs)

    return click.option("--extension", multiple=True, metavar="EXT:LANGUAGE",
                        help="Read files ending in .EXT as LANGUAGE (python, pyi, ipynb, shell), "
                             "e.g. --extension ipy:python.")(wrapper)


def source_overrides() -> dict:
    return click.get_current_context().meta.get("devlint.source_overrides", {})
