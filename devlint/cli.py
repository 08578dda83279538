"""Command line: `devlint [check] [OPTIONS] [PATHS]...`, `devlint rule`, `devlint verify`."""
from __future__ import annotations

import os
import sys

import click

from devlint import __version__
from devlint import cli_exempt as cx
from devlint import cli_sources as cs
from devlint import cli_notes as cn

SUBCOMMANDS = ("check", "rule", "verify", "init")
# the reporters' names, kept here so that `--help` needs no reporter module
FORMATS = ("concise", "full", "json", "json-lines", "github", "sarif", "gitlab", "junit")
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


def _usage_error(message: str):
    click.echo(f"devlint: error: {message}", err=True)
    sys.exit(EXIT_ERROR)


def _cache_and_signals(f):
    """`--no-cache` / `--cache-dir` for `check` (kept out of its signature: they only choose the
    runner's cache, see `_run_cache`), and SIGINT/SIGTERM: exit 130/143 with a message (files
    are then either untouched or completely fixed: the runner writes each one atomically)."""
    import functools

    @functools.wraps(f)
    def wrapper(*args, no_cache=False, cache_dir=None, **kwargs):
        from devlint.engine.interrupt import Interrupted, interruptible

        click.get_current_context().meta["devlint.cache"] = (no_cache, cache_dir)
        try:
            # the whole command: discovery, the passes, the project stage, the report
            with interruptible():
                return f(*args, **kwargs)
        except Interrupted as e:
            click.echo("devlint: interrupted; every file is either unchanged or fully written",
                       err=True)
            sys.exit(128 + e.signum)

    wrapper = click.option("--cache-dir", type=click.Path(file_okay=False),
                           envvar="DEVLINT_CACHE_DIR", show_envvar=True,
                           help="Where to keep the result cache (default: .devlint_cache).")(wrapper)
    return click.option("--no-cache", is_flag=True, envvar="DEVLINT_NO_CACHE", show_envvar=True,
                        help="Neither read nor write the result cache.")(wrapper)


def _run_cache():
    """The result cache chosen by --no-cache / --cache-dir, or None."""
    no_cache, cache_dir = click.get_current_context().meta.get("devlint.cache", (True, None))
    if no_cache:
        return None
    from devlint.engine.cache import Cache

    return Cache(cache_dir)


@cli.command("check")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--fix", is_flag=True, help="Apply safe fixes.")
@click.option("--unsafe-fixes", "unsafe_fixes", is_flag=True, default=None,
              help="Also apply (and show) unsafe fixes.")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff; write nothing.")
@click.option("--fix-read-only", is_flag=True,
              help="With --fix or --add-noqa: also rewrite read-only files (mode kept).")
@click.option("--select", multiple=True, help="Rule codes, prefixes or names to enable (or ALL).")
@click.option("--extend-select", multiple=True, help="Rules to enable on top of the selection.")
@click.option("--ignore", multiple=True, help="Rule codes, prefixes or names to disable.")
@click.option("--profile", help="Fix forms: auto, torch, vllm, or a custom profile.")
@click.option("--target-torch", help="Oldest torch version the fixed code must run on (e.g. 2.6).")
@click.option("--output-format", type=click.Choice(FORMATS),
              envvar="DEVLINT_OUTPUT_FORMAT", show_envvar=True, help="How findings are printed.")
@click.option("-o", "--output-file", type=click.Path(dir_okay=False), help="Write the report here.")
@click.option("--statistics", is_flag=True, help="Count findings per rule instead of listing them.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings remain.")
@click.option("--exit-non-zero-on-fix", is_flag=True, help="Exit 1 when something was fixed.")
@click.option("--config", "config_path", type=click.Path(exists=True, dir_okay=False),
              help="Use this devlint.toml / pyproject.toml instead of the nearest one.")
@click.option("--force-exclude", is_flag=True,
              help="Apply excludes to explicitly named files (and --stdin-filename) too.")
@click.option("--stdin-filename", help="With `-` as the path: the name of the file read from "
              "stdin (for configuration, per-file ignores and the report).")
@click.option("--add-noqa", is_flag=True,
              help="Add `# noqa: CODE` to every line with a finding (the adoption baseline).")
@click.option("--since", metavar="REV",
              help="Report only findings on lines changed since a git revision.")
@click.option("--show-settings", is_flag=True,
              help="Print the effective settings for the given file (or directory) and exit.")
@click.option("-j", "--jobs", type=int, default=None, help="Worker processes (default: CPUs).")
@click.option("-q", "--quiet", is_flag=True, help="Print findings only: no summary, no progress.")
@cx.exempt_options
@cs.extension_option
@_cache_and_signals
def check(paths, fix, unsafe_fixes, diff, fix_read_only, select, extend_select, ignore, profile,
          target_torch, output_format, output_file, statistics, exit_zero, exit_non_zero_on_fix,
          config_path, force_exclude, stdin_filename, add_noqa, since, show_settings, jobs, quiet):
    """Lint PATHS (default: the current directory) and optionally fix them."""
    import gc

    # The run allocates many short-lived ast nodes and no reference cycles worth collecting;
    # the cyclic collector alone costs more than half of the parse time (measured on vLLM).
    gc.disable()
    from devlint.discovery import PathError, discover, named_input_errors
    from devlint.engine.since import changed_lines
    from devlint.engine import runner
    from devlint.errors import ConfigError
    from devlint.settings import parse_version

    use_stdin = "-" in paths
    if use_stdin and len(paths) > 1:
        _usage_error("`-` (stdin) cannot be combined with other paths")
    if stdin_filename and paths and not use_stdin:
        _usage_error("--stdin-filename needs `-` as the path")
    if stdin_filename and not paths:
        use_stdin, paths = True, ("-",)
    if since and (fix or diff or add_noqa or use_stdin):
        _usage_error("--since reports findings; it cannot be combined with --fix, --diff, "
                     "--add-noqa or stdin")
    if add_noqa and (fix or diff):
        _usage_error("--add-noqa cannot be combined with --fix or --diff")

    overrides: dict = dict(cx.exempt_overrides(), **cs.source_overrides())
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
        from devlint.config import SettingsResolver

        resolver = SettingsResolver(config_path, overrides, ext, ign)
        paths = paths or (".",)
        if show_settings:
            return _show_settings(resolver, stdin_filename or "-" if use_stdin else paths[0])
        if use_stdin:
            name = stdin_filename or "-"
            settings = resolver(name)
            _check_profile(settings)
            tasks = None
        else:
            candidates = list(discover(paths, resolver, force_exclude))
            changed = changed_lines(since, paths) if since else None
            if changed is not None:
                candidates = [c for c in candidates if changed.touches(c.path)]
            tasks = [(c.path, c.kind, resolver(c.path)) for c in candidates]
            for s in {id(s): s for _, _, s in tasks}.values():
                _check_profile(s)
        run_settings = resolver.run_settings(paths[0] if not use_stdin else name)
    except (ConfigError, PathError) as e:
        _usage_error(str(e))
    unsafe = bool(unsafe_fixes) if unsafe_fixes is not None else bool(run_settings.unsafe_fixes)
    fmt = output_format or run_settings.output_format or "concise"
    cx.check_usage(fmt, statistics, diff, add_noqa)
    mode = "diff" if diff else ("fix" if fix else "check")
    opts = dict(fmt=fmt, unsafe=unsafe, mode=mode, statistics=statistics, exit_zero=exit_zero,
                exit_non_zero_on_fix=exit_non_zero_on_fix, quiet=quiet, output_file=output_file)
    if use_stdin:
        return _check_stdin(name, stdin_filename is not None, settings, force_exclude, add_noqa,
                            **opts)
    cache = _run_cache()
    results = _run(runner, tasks, "check", unsafe, jobs, quiet, cache=cache)
    exempt = _project_exemptions(results, cache)
    if mode != "check" and not add_noqa:
        # the fix pass, over the files with a fix the project stage leaves to apply
        from devlint.engine import project
        from devlint.engine.fixer import applicable

        todo = [i for i, r in enumerate(results)
                if any(applicable(d, unsafe) for d in project.filtered(
                    r.diagnostics, exempt.get(os.path.abspath(r.path))))]
        fixed = _run(runner, [tasks[i] for i in todo], mode, unsafe, jobs, quiet, cache=cache,
                     exempt=exempt, write_read_only=fix_read_only) if todo else []
        runner.take_fixed(results, todo, fixed)
    if exempt:
        from devlint.engine import project

        project.apply(results, exempt)
    named_input_errors(results, candidates)
    if add_noqa:
        return _add_noqa(results, tasks, quiet, fix_read_only)
    if changed is not None:
        changed.narrow(results)
    return _finish(results, **opts)


def _project_exemptions(results, cache) -> dict:
    """Stage 5 (devlint/engine/project/): findings the package around a file explains."""
    if not any(r.diagnostics for r in results):
        return {}
    from devlint.engine import project

    return project.exemptions(results, cache)


def _run(runner, tasks, mode, unsafe, jobs, quiet, **extra):
    """runner.run, with a progress line on a terminal for long runs."""
    from devlint.reporters import progress as progress_mod

    if not progress_mod.wanted(len(tasks), quiet, sys.stderr):
        return runner.run(tasks, mode, unsafe, jobs, **extra)
    import inspect

    bar = progress_mod.Progress(len(tasks), sys.stderr,
                                "Fixing" if mode == "fix" else "Checking")
    try:
        if "progress" in inspect.signature(runner.run).parameters:
            return runner.run(tasks, mode, unsafe, jobs, progress=bar.advance, **extra)
        # the runner reports no progress of its own: run it in slices
        results = []
        step = max(runner.SERIAL_BELOW, len(tasks) // 20)
        for i in range(0, len(tasks), step):
            chunk = tasks[i:i + step]
            results.extend(runner.run(chunk, mode, unsafe, jobs, **extra))
            bar.advance(len(chunk))
        return results
    finally:
        bar.close()


def _show_settings(resolver, path):
    from devlint.config import describe

    settings = resolver(path if not os.path.isdir(path) else os.path.join(path, "_"))
    _check_profile(settings)
    click.echo(describe(settings, path), nl=False)
    sys.exit(EXIT_OK)


def _check_stdin(name, named, settings, force_exclude, add_noqa, *, fmt, unsafe, mode,
                 statistics, exit_zero, exit_non_zero_on_fix, quiet, output_file):
    """Lint (or fix) the source on stdin, through the same engine call as each file."""
    from devlint import api
    from devlint.engine.runner import FileResult
    from devlint.settings import is_excluded
    from devlint.source import SourceFile

    data = sys.stdin.buffer.read()
    kind = None
    if named:
        from devlint.discovery import kind_of

        kind = kind_of(name) if os.path.isfile(name) else None
    if named and force_exclude and is_excluded(settings, name):
        res = FileResult(name)  # excluded: reported as clean, the source passes unchanged
    else:
        res = api.process(data, name, settings, "check" if add_noqa else mode, unsafe,
                          kind or api.kind_of_path(name))
    if res.unreadable or res.error:
        _usage_error(f"{name}: {res.unreadable or res.error}")
    new_bytes = res.new_bytes if res.new_bytes is not None else data
    if add_noqa:
        src = SourceFile.from_bytes(data)
        new_text, added = _noqa_text(src.text, res.diagnostics, res.path, kind or
                                     api.kind_of_path(name), settings)
        sys.stdout.buffer.write(src.to_bytes(new_text))
        sys.stdout.flush()
        if not quiet:
            click.echo(f"Added {added} noqa directive{'s' if added != 1 else ''}.", err=True)
        sys.exit(EXIT_OK)
    if mode == "fix":
        sys.stdout.buffer.write(new_bytes)
        sys.stdout.flush()
    try:
        text = SourceFile.from_bytes(new_bytes).text
    except (UnicodeDecodeError, LookupError):
        text = ""
    # with --fix stdout carries the fixed source, so the report goes to stderr
    return _finish([res], fmt, unsafe, mode, statistics, exit_zero, exit_non_zero_on_fix,
                   quiet, output_file, texts={name: text}, report_to_stderr=mode == "fix")


def _noqa_text(text, diagnostics, path, kind, settings):
    from devlint.api import noqa_source

    return noqa_source(text, diagnostics, path, settings, kind)


def _add_noqa(results, tasks, quiet, write_read_only=False):
    from devlint.engine.runner import READ_ONLY_NOQA, read_only, write_atomic
    from devlint.engine.suppression import NOT_NOQA_ABLE
    from devlint.source import SourceFile

    kinds = {p: (k, s) for p, k, s in tasks}
    total, files, failed = 0, 0, False
    for r in results:
        if r.internal_error:
            failed = True
            click.echo(f"devlint: error: internal error while linting {r.path}: "
                       f"{r.internal_error}", err=True)
            continue
        diags = [d for d in r.diagnostics if d.code not in NOT_NOQA_ABLE]
        if not diags:
            continue
        kind, settings = kinds[r.path]
        if not write_read_only and read_only(r.path):
            click.echo(f"devlint: warning: {r.path}: {READ_ONLY_NOQA}", err=True)
            continue
        try:
            with open(r.path, "rb") as f:
                src = SourceFile.from_bytes(f.read())
            new_text, added = _noqa_text(src.text, diags, r.path, kind, settings)
            if added:
                write_atomic(r.path, src.to_bytes(new_text))
        except (OSError, UnicodeError, LookupError) as e:
            click.echo(f"devlint: warning: {r.path}: cannot add noqa: {e}", err=True)
            continue
        if added < len({(d.code, d.location) for d in diags}):
            click.echo(f"devlint: warning: {r.path}: {len(diags) - added} finding(s) could "
                       f"not be suppressed with a noqa comment", err=True)
        total += added
        files += bool(added)
    if not quiet:
        click.echo(f"Added {total} noqa directive{'s' if total != 1 else ''}"
                   f"{f' in {files} file' + ('s' if files != 1 else '') if total else ''}.",
                   err=True)
    sys.exit(EXIT_ERROR if failed else EXIT_OK)


def _check_profile(settings):
    from devlint.errors import ConfigError
    from devlint.settings import PROFILES

    if settings.profile in PROFILES:
        return  # auto, or a built-in profile (profiles.toml is not read for it)
    from devlint.profiles import get_profile

    try:
        get_profile(settings.profile, settings)
    except KeyError:
        raise ConfigError(f"unknown profile {settings.profile!r} (expected auto, torch, vllm or a "
                          f"[tool.devlint.profiles.NAME] table)") from None


def _validate_selectors(values, option):
    from devlint.rules import registry
    from devlint.errors import ConfigError

    for v in values:
        if not registry.selector_matches_any(v):
            raise ConfigError(f"{option}: unknown rule selector {v!r}")
    return values


def _finish(results, fmt, unsafe, mode, statistics, exit_zero, exit_non_zero_on_fix, quiet,
            output_file, texts=None, report_to_stderr=False):
    from devlint.reporters import get_reporter
    from devlint.reporters.context import ReportContext

    diagnostics = [d for r in results for d in r.diagnostics]
    diagnostics.sort(key=lambda d: d.sort_key())
    fixed = sum(r.applied for r in results)
    failed = False
    for r in results:
        if r.error:
            click.echo(f"devlint: warning: {r.path}: {r.error}", err=True)
        if r.input_error:
            failed = True
            click.echo(f"devlint: error: {r.input_error}", err=True)
        if r.internal_error:
            failed = True
            click.echo(f"devlint: error: internal error while linting {r.path}: "
                       f"{r.internal_error}", err=True)
        for code, msg in r.failures:
            click.echo(f"devlint: error: {r.path}: {code}: {msg}. This is a devlint bug; "
                       f"please report it.", err=True)
    cn.write_fix_notes(results, quiet, mode == "diff")
    if output_file:
        out = open(output_file, "w", encoding="utf-8", newline="\n")
    else:
        out = sys.stderr if report_to_stderr else sys.stdout
    try:
        if mode == "diff":
            for r in results:
                if r.diff:
                    out.write(r.diff)
            if not quiet:
                n = sum(1 for r in results if r.diff)
                k = sum(r.applied for r in results)
                click.echo(f"Would fix {k} error{'s' if k != 1 else ''} in {n} "
                           f"file{'s' if n != 1 else ''}.", err=True)
        elif statistics:
            from devlint.reporters.statistics import write_statistics

            write_statistics(diagnostics, out, unsafe, fmt)
        else:
            ctx = ReportContext(unsafe, quiet, fixed, mode == "diff", texts, failed,
                                **cx.exempt_report(results))
            get_reporter(fmt)(diagnostics, out, ctx)
    finally:
        if output_file:
            out.close()
        else:
            out.flush()
    if failed:
        sys.exit(EXIT_ERROR)
    if mode == "diff":
        sys.exit(EXIT_FINDINGS if any(r.diff for r in results) and not exit_zero else EXIT_OK)
    if exit_non_zero_on_fix and fixed:
        sys.exit(EXIT_FINDINGS)
    if diagnostics and not exit_zero:
        sys.exit(EXIT_FINDINGS)
    sys.exit(EXIT_OK)


@cli.command("rule")
@click.argument("code", required=False)
@click.option("--all", "show_all", is_flag=True, help="Every rule.")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text")
def rule_command(code, show_all, output_format):
    """Explain a rule (by code or name), or list them all."""
    from devlint.reporters import documented_rules, rule_dict, rule_text

    catalog = documented_rules()
    if show_all:
        rules = list(catalog)
    elif code:
        key = code.strip()
        r = next((r for r in catalog if r.code == key.upper() or r.name == key.lower()), None)
        if r is None:
            click.echo(f"devlint: error: unknown rule {code!r}", err=True)
            sys.exit(EXIT_ERROR)
        rules = [r]
    else:
        click.echo("devlint: error: give a rule code or name, or --all", err=True)
        sys.exit(EXIT_ERROR)
    if output_format == "json":
        import json

        data = [rule_dict(r) for r in rules]
        click.echo(json.dumps(data if show_all else data[0], indent=2))
        return
    for i, r in enumerate(rules):
        if i:
            click.echo("\n" + "-" * 72 + "\n")
        click.echo(rule_text(r))


def _register_verify():
    @cli.command("verify", context_settings={"ignore_unknown_options": True,
                                             "allow_extra_args": True,
                                             "help_option_names": []})
    @click.pass_context
    def verify(ctx):
        """Run fixed code on every available device and check the results agree."""
        try:
            from devlint.verify.cli import verify_command
        except ImportError as e:
            click.echo(f"devlint: error: verify is not available: {e}", err=True)
            sys.exit(EXIT_ERROR)
        verify_command.main(args=ctx.args, prog_name="devlint verify", standalone_mode=True)


_register_verify()
cli.add_command(__import__("devlint.init.command").init.command.init_command)  # scan: lazy
cli.add_command(__import__("devlint.lsp.command").lsp.command.server_command)  # pygls: lazy


def main(argv=None):
    cli.main(args=argv, prog_name="devlint")


if __name__ == "__main__":
    main()
