"""Command line: `devlint [check] [OPTIONS] [PATHS]...`, `devlint rule`, `devlint verify`."""
from __future__ import annotations

import os
import sys
from dataclasses import replace

import click

from devlint import __version__

SUBCOMMANDS = ("check", "rule", "verify")
EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class _DefaultToCheck(click.Group):
    """`devlint --fix src/` means `devlint check --fix src/`."""

    def parse_args(self, ctx, args):
        if not args or (args[0] not in self.commands and args[0] not in
                        ("--version", "--help", "-h")):
            args = ["check", *args]
        return super().parse_args(ctx, args)


@click.group(cls=_DefaultToCheck, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="devlint",
                      message="%(prog)s %(version)s")
def cli():
    """devlint: find and fix device-hardcoding (CUDA-only) bugs in PyTorch code."""


def _split(values) -> tuple[str, ...]:
    out = []
    for v in values or ():
        out.extend(x.strip() for x in v.split(",") if x.strip())
    return tuple(out)


class ReportContext:
    def __init__(self, unsafe, quiet, fixed, diff_mode, texts):
        self.unsafe = unsafe
        self.quiet = quiet
        self.fixed = fixed
        self.diff_mode = diff_mode
        self._texts = texts
        self._lines: dict = {}

    def source_lines(self, path):
        if path not in self._lines:
            text = self._texts.get(path)
            if text is None:
                try:
                    from devlint.source import SourceFile

                    with open(path, "rb") as f:
                        text = SourceFile.from_bytes(f.read()).text
                except (OSError, UnicodeDecodeError, LookupError):
                    text = ""
            from devlint.source import Locator

            loc = Locator(text)
            self._lines[path] = [loc.line(r) for r in range(1, loc.line_count + 1)]
        return self._lines[path]

    def fix_preview(self, d):
        lines = self.source_lines(d.path)
        if not lines or not d.fix or not d.fix.edits:
            return ""
        from devlint.engine.fixer import apply_edits
        from devlint.engine.runner import unified_diff

        text = "\n".join(lines) + "\n"
        try:
            new = apply_edits(text, d.fix.edits)
        except Exception:
            return ""
        diff = unified_diff(d.path, text, new).splitlines()
        return "\n".join(diff[2:])


class SettingsResolver:
    """Settings for each path: the nearest config (or --config), then command-line overrides."""

    def __init__(self, config_path, overrides: dict, extend_select=(), extend_ignore=()):
        from devlint.settings import load_settings

        self.config_path = config_path
        self.overrides = overrides
        self.extend_select = extend_select
        self.extend_ignore = extend_ignore
        self._cache: dict = {}
        self._fixed = load_settings(config_path) if config_path else None

    def __call__(self, path: str):
        from devlint.settings import Settings, find_config, load_settings

        if self._fixed is not None:
            base = self._fixed
            key = "--config"
        else:
            cfg = find_config(os.path.dirname(os.path.abspath(path)) or ".")
            key = cfg
            if cfg not in self._cache:
                self._cache[cfg] = load_settings(cfg) if cfg else Settings()
            base = self._cache[cfg]
        ck = ("resolved", key)
        if ck not in self._cache:
            s = replace(base, **self.overrides)
            if self.extend_select:
                s = replace(s, extend_select=s.extend_select + self.extend_select)
            if self.extend_ignore:
                s = replace(s, ignore=s.ignore + self.extend_ignore)
            self._cache[ck] = s
        return self._cache[ck]


@cli.command("check")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--fix", is_flag=True, help="Apply safe fixes.")
@click.option("--unsafe-fixes", "unsafe_fixes", is_flag=True, default=None,
              help="Also apply (and show) unsafe fixes.")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff; write nothing.")
@click.option("--select", multiple=True, help="Rule codes, prefixes or names to enable (or ALL).")
@click.option("--extend-select", multiple=True, help="Rules to enable on top of the selection.")
@click.option("--ignore", multiple=True, help="Rule codes, prefixes or names to disable.")
@click.option("--profile", help="Fix forms: auto, torch, vllm, or a custom profile.")
@click.option("--target-torch", help="Oldest torch version the fixed code must run on (e.g. 2.6).")
@click.option("--output-format", type=click.Choice(["concise", "full", "json"]),
              envvar="DEVLINT_OUTPUT_FORMAT", help="How findings are printed.")
@click.option("-o", "--output-file", type=click.Path(dir_okay=False), help="Write the report here.")
@click.option("--statistics", is_flag=True, help="Count findings per rule instead of listing them.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings remain.")
@click.option("--exit-non-zero-on-fix", is_flag=True, help="Exit 1 when something was fixed.")
@click.option("--config", "config_path", type=click.Path(exists=True, dir_okay=False),
              help="Use this devlint.toml / pyproject.toml instead of the nearest one.")
@click.option("--force-exclude", is_flag=True, help="Apply excludes to explicitly named files too.")
@click.option("-j", "--jobs", type=int, default=None, help="Worker processes (default: CPUs).")
@click.option("-q", "--quiet", is_flag=True, help="Print findings only, no summary.")
def check(paths, fix, unsafe_fixes, diff, select, extend_select, ignore, profile, target_torch,
          output_format, output_file, statistics, exit_zero, exit_non_zero_on_fix, config_path,
          force_exclude, jobs, quiet):
    """Lint PATHS (default: the current directory) and optionally fix them."""
    import gc

    # The run allocates many short-lived ast nodes and no reference cycles worth collecting;
    # the cyclic collector alone costs more than half of the parse time (measured on vLLM).
    gc.disable()
    from devlint.discovery import PathError, discover
    from devlint.engine import runner
    from devlint.settings import ConfigError, parse_version

    overrides: dict = {}
    try:
        if select:
            overrides["select"] = _validate_selectors(_split(select), "--select")
        if profile:
            overrides["profile"] = profile
        if target_torch:
            parse_version(target_torch)
            overrides["target_torch"] = target_torch
        ext = _validate_selectors(_split(extend_select), "--extend-select")
        ign = _validate_selectors(_split(ignore), "--ignore")
        resolver = SettingsResolver(config_path, overrides, ext, ign)
        paths = paths or (".",)
        candidates = list(discover(paths, resolver, force_exclude))
        tasks = [(c.path, c.kind, resolver(c.path)) for c in candidates]
        first = tasks[0][2] if tasks else resolver(os.path.join(paths[0], "_"))
        for _, _, s in tasks[:1]:
            _check_profile(s)
    except (ConfigError, PathError) as e:
        click.echo(f"devlint: error: {e}", err=True)
        sys.exit(EXIT_ERROR)
    unsafe = bool(unsafe_fixes) if unsafe_fixes is not None else bool(first.unsafe_fixes)
    fmt = output_format or first.output_format or "concise"
    mode = "diff" if diff else ("fix" if fix else "check")
    results = runner.run(tasks, mode, unsafe, jobs)
    return _finish(results, fmt, unsafe, mode, statistics, exit_zero, exit_non_zero_on_fix,
                   quiet, output_file)


def _check_profile(settings):
    from devlint.profiles import get_profile
    from devlint.settings import ConfigError

    if settings.profile == "auto":
        return
    try:
        get_profile(settings.profile, settings)
    except KeyError:
        raise ConfigError(f"unknown profile {settings.profile!r} (expected auto, torch, vllm or a "
                          f"[tool.devlint.profiles.NAME] table)") from None


def _validate_selectors(values, option):
    from devlint.rules import registry
    from devlint.settings import ConfigError

    for v in values:
        if not registry.selector_matches_any(v):
            raise ConfigError(f"{option}: unknown rule selector {v!r}")
    return values


def _finish(results, fmt, unsafe, mode, statistics, exit_zero, exit_non_zero_on_fix, quiet,
            output_file):
    from devlint.reporters import get_reporter

    diagnostics = [d for r in results for d in r.diagnostics]
    diagnostics.sort(key=lambda d: (d.path, d.location, d.code))
    fixed = sum(r.applied for r in results)
    failed = False
    for r in results:
        if r.error:
            click.echo(f"devlint: warning: {r.path}: {r.error}", err=True)
        if r.internal_error:
            failed = True
            click.echo(f"devlint: error: internal error while linting {r.path}: "
                       f"{r.internal_error}", err=True)
        for code, msg in r.failures:
            click.echo(f"devlint: error: {r.path}: {code}: {msg}. This is a devlint bug; "
                       f"please report it.", err=True)
    out = open(output_file, "w", encoding="utf-8") if output_file else sys.stdout
    try:
        if mode == "diff":
            for r in results:
                if r.diff:
                    out.write(r.diff)
            if not quiet:
                n = sum(1 for r in results if r.diff)
                click.echo(f"Would fix {sum(r.applied for r in results)} errors in {n} "
                           f"file{'s' if n != 1 else ''}.", err=True)
        elif statistics:
            _statistics(diagnostics, out, unsafe, fmt)
        else:
            ctx = ReportContext(unsafe, quiet, fixed, mode == "diff", {})
            get_reporter(fmt)(diagnostics, out, ctx)
    finally:
        if output_file:
            out.close()
    if failed:
        sys.exit(EXIT_ERROR)
    if mode == "diff":
        sys.exit(EXIT_FINDINGS if any(r.diff for r in results) and not exit_zero else EXIT_OK)
    if exit_non_zero_on_fix and fixed:
        sys.exit(EXIT_FINDINGS)
    if diagnostics and not exit_zero:
        sys.exit(EXIT_FINDINGS)
    sys.exit(EXIT_OK)


def _statistics(diagnostics, out, unsafe, fmt):
    from collections import Counter

    from devlint.reporters.concise import marker

    counts = Counter(d.code for d in diagnostics)
    names = {d.code: d.name for d in diagnostics}
    fixable = {d.code for d in diagnostics if marker(d, unsafe)}
    if fmt == "json":
        import json

        json.dump([{"code": c, "name": names[c], "count": n, "fixable": c in fixable}
                   for c, n in counts.most_common()], out, indent=2)
        out.write("\n")
        return
    width = max((len(str(n)) for n in counts.values()), default=1)
    for code, n in counts.most_common():
        out.write(f"{str(n).rjust(width)}\t{code}\t{'[*] ' if code in fixable else '    '}"
                  f"{names[code]}\n")


@cli.command("rule")
@click.argument("code", required=False)
@click.option("--all", "show_all", is_flag=True, help="Every rule.")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text")
def rule_command(code, show_all, output_format):
    """Explain a rule (by code or name), or list them all."""
    from devlint.rules import registry

    if show_all:
        rules = list(registry.all_rules())
    elif code:
        r = registry.lookup(code)
        if r is None:
            click.echo(f"devlint: error: unknown rule {code!r}", err=True)
            sys.exit(EXIT_ERROR)
        rules = [r]
    else:
        click.echo("devlint: error: give a rule code or name, or --all", err=True)
        sys.exit(EXIT_ERROR)
    if output_format == "json":
        import json

        data = [{"code": r.code, "name": r.name, "summary": r.summary, "explanation": r.doc(),
                 "url": r.url()} for r in rules]
        click.echo(json.dumps(data if show_all else data[0], indent=2))
        return
    for i, r in enumerate(rules):
        if i:
            click.echo("\n" + "-" * 72 + "\n")
        click.echo(f"# {r.name} ({r.code})\n\n{r.summary}\n\n{r.doc()}")


def _register_verify():
    @cli.command("verify", context_settings={"ignore_unknown_options": True,
                                             "allow_extra_args": True})
    @click.pass_context
    def verify(ctx):
        """Run fixed code on every available device and check the results agree."""
        try:
            from devlint.verify.cli import verify_command
        except ImportError as e:
            click.echo(f"devlint: error: verify is not available: {e}", err=True)
            sys.exit(EXIT_ERROR)
        verify_command.main(args=ctx.args, prog_name="devlint verify",
                            standalone_mode=True)


_register_verify()


def main(argv=None):
    cli.main(args=argv, prog_name="devlint")


if __name__ == "__main__":
    main()
