#!/usr/bin/env python3
"""Fix safety at scale: copy large real trees, run `devlint check --fix --unsafe-fixes` over
them and check that the fixes never corrupt code.

For each tree (vLLM 0.33's `vllm/`, the installed torch package, transformers from PyPI):
- no internal error (exit 2) and no reverted fix ("This is a devlint bug");
- every changed Python file still compiles (shell files: `bash -n`);
- a second `--fix` run changes nothing;
- every file without a finding is byte-identical to the original;
- the findings left after fixing are only those without an applicable fix.
It prints a table (files, findings, fixed, unfixable by rule) for docs/reliability.md.

    python bench/fix_safety.py                      # all three trees, in $DEVLINT_BENCH_DIR
    python bench/fix_safety.py --vllm-dir /tmp/vllm033/vllm --trees vllm,torch

Nothing it downloads is committed: it works under $DEVLINT_BENCH_DIR (default
/tmp/devlint-bench), outside the repository (a git-ignored folder inside a repository would be
skipped by devlint's own discovery, which honours .gitignore).
"""
from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

SOURCE_SUFFIXES = (".py", ".sh", ".bash")
DEFAULT_WORK = os.environ.get("DEVLINT_BENCH_DIR", "/tmp/devlint-bench")


def devlint_cmd() -> list[str]:
    return [sys.executable, "-m", "devlint"]


def copy_sources(src: Path, dst: Path, limit: int | None = None) -> int:
    """Copy the source files (.py, .sh, .bash) of src to dst, keeping the layout."""
    if dst.exists():
        shutil.rmtree(dst)
    n = 0
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if not name.endswith(SOURCE_SUFFIXES):
                continue
            s = Path(dirpath) / name
            if s.is_symlink() or not s.is_file():
                continue
            d = dst / s.relative_to(src)
            d.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(s, d)
            n += 1
            if limit and n >= limit:
                return n
    return n


def snapshot(root: Path) -> dict[str, str]:
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file():
            out[str(p.relative_to(root))] = hashlib.blake2b(p.read_bytes(), digest_size=16).hexdigest()
    return out


def _run(args, cwd=None):
    env = dict(os.environ, DEVLINT_NO_CACHE="1")
    env.pop("DEVLINT_OUTPUT_FORMAT", None)
    return subprocess.run([*devlint_cmd(), *args], capture_output=True, text=True, cwd=cwd,
                          env=env)


def _findings(p) -> list[dict]:
    try:
        return json.loads(p.stdout or "[]")
    except json.JSONDecodeError:
        raise SystemExit(f"devlint printed no JSON (exit {p.returncode}):\n{p.stderr[-3000:]}")


def _compiles(path: Path) -> str | None:
    data = path.read_bytes()
    if path.suffix in (".sh", ".bash"):
        r = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
        return None if r.returncode == 0 else r.stderr.strip()
    try:
        compile(data, str(path), "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as e:
        return f"{type(e).__name__}: {e}"
    return None


def check_tree(original: Path, work: Path, jobs: int | None = None) -> dict:
    """Fix a copy of `original` in `work` and check every property; returns the counts and
    the problems found (an empty `problems` list means the tree passed)."""
    jobs_args = ["-j", str(jobs)] if jobs else []
    problems: list[str] = []
    before_snap = snapshot(original)
    t0 = time.monotonic()
    before = _run(["--output-format", "json", "--unsafe-fixes", *jobs_args, str(work)])
    found = _findings(before)
    if before.returncode == 2:
        problems.append(f"check exit 2: {before.stderr[-2000:]}")
    fixed = _run(["--fix", "--unsafe-fixes", "--output-format", "json", *jobs_args, str(work)])
    elapsed = time.monotonic() - t0
    left = _findings(fixed)
    if fixed.returncode == 2 or "internal error" in fixed.stderr:
        problems.append(f"fix run: internal error (exit {fixed.returncode}): {fixed.stderr[-3000:]}")
    if "devlint bug" in fixed.stderr:
        problems.append("reverted fixes: " + " | ".join(
            ln for ln in fixed.stderr.splitlines() if "devlint bug" in ln)[:3000])
    after_snap = snapshot(work)
    changed = sorted(k for k in after_snap if after_snap[k] != before_snap.get(k))
    with_findings = {os.path.relpath(d["filename"], work) for d in found}
    for rel in changed:
        err = _compiles(work / rel)
        if err:
            problems.append(f"{rel}: does not compile after fixing: {err}")
        if rel not in with_findings:
            problems.append(f"{rel}: changed but had no finding")
    if set(after_snap) != set(before_snap):
        problems.append(f"files appeared or vanished: {sorted(set(after_snap) ^ set(before_snap))[:10]}")
    second = _run(["--fix", "--unsafe-fixes", "-q", *jobs_args, str(work)])
    if snapshot(work) != after_snap:
        problems.append("a second --fix run changed files: " + ", ".join(
            k for k, v in snapshot(work).items() if after_snap.get(k) != v)[:2000])
    if second.returncode == 2:
        problems.append(f"second run: exit 2: {second.stderr[-2000:]}")
    applicable = [d for d in left if d["fix"] and d["fix"]["applicability"] in ("safe", "unsafe")]
    for d in applicable:
        problems.append(f"{d['filename']}:{d['location']['row']}: {d['code']} still has an "
                        f"applicable fix after --fix")
    unfixable = collections.Counter(d["code"] for d in left)
    by_rule = collections.Counter(d["code"] for d in found)
    return {
        "files": len(before_snap),
        "python_files": sum(k.endswith(".py") for k in before_snap),
        "files_with_findings": len(with_findings),
        "findings": len(found),
        "findings_by_rule": dict(sorted(by_rule.items())),
        "fixable": sum(1 for d in found if d["fix"] and
                       d["fix"]["applicability"] in ("safe", "unsafe")),
        "fixed": len(found) - len(left),
        "changed_files": len(changed),
        "left": len(left),
        "unfixable_by_rule": dict(sorted(unfixable.items())),
        "syntax_errors": by_rule.get("DL999", 0),
        "seconds": round(elapsed, 1),
        "problems": problems,
    }


# --- the trees -------------------------------------------------------------------------------

def _pip_download(spec: str, dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", spec, "--no-deps", "-q",
                    "-d", str(dest)], check=True)
    name = spec.split("=")[0].split("<")[0].split(">")[0].lower().replace("-", "_")
    wheels = sorted(dest.glob("*.whl"), key=lambda p: p.stat().st_mtime)
    wheels = [w for w in wheels if w.name.lower().startswith(name)]
    if not wheels:
        raise SystemExit(f"pip download {spec}: no wheel in {dest}")
    return wheels[-1]


def _extract_package(wheel: Path, package: str, dest: Path) -> Path:
    target = dest / package
    if target.is_dir():
        return target
    with zipfile.ZipFile(wheel) as z:
        members = [m for m in z.namelist() if m.startswith(package + "/")]
        z.extractall(dest, members)
    return target


def vllm_tree(args, work: Path) -> Path:
    if args.vllm_dir:
        return Path(args.vllm_dir)
    wheel = _pip_download("vllm==0.33.0", work / "wheels")
    return _extract_package(wheel, "vllm", work / "vllm-0.33.0")


def torch_tree(args, work: Path) -> Path:
    if args.torch_dir:
        return Path(args.torch_dir)
    import importlib.util

    spec = importlib.util.find_spec("torch")  # located, not imported
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("torch is not installed: pip install torch==2.13.0 (or --torch-dir)")
    return Path(list(spec.submodule_search_locations)[0])


def transformers_tree(args, work: Path) -> Path:
    if args.transformers_dir:
        return Path(args.transformers_dir)
    wheel = _pip_download("transformers", work / "wheels")
    version = wheel.name.split("-")[1]
    return _extract_package(wheel, "transformers", work / f"transformers-{version}")


TREES = {"vllm": vllm_tree, "torch": torch_tree, "transformers": transformers_tree}


def table(results: dict) -> str:
    rows = ["| tree | files | files with findings | findings | fixable | fixed | changed files "
            "| left (unfixable, by rule) | syntax errors | problems |",
            "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|"]
    for name, r in results.items():
        left = ", ".join(f"{c} {n}" for c, n in r["unfixable_by_rule"].items()) or "-"
        rows.append(f"| {name} | {r['files']} | {r['files_with_findings']} | {r['findings']} | "
                    f"{r['fixable']} | {r['fixed']} | {r['changed_files']} | {r['left']} "
                    f"({left}) | {r['syntax_errors']} | {len(r['problems'])} |")
    return "\n".join(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", default=DEFAULT_WORK, help="scratch folder (default: %(default)s)")
    ap.add_argument("--trees", default="vllm,torch,transformers")
    ap.add_argument("--vllm-dir", default=os.environ.get("DEVLINT_BENCH_VLLM"),
                    help="an extracted vllm/ package (skips the download)")
    ap.add_argument("--torch-dir", help="torch's package folder (default: the installed one)")
    ap.add_argument("--transformers-dir", help="an extracted transformers/ package")
    ap.add_argument("--limit", type=int, help="at most this many files per tree")
    ap.add_argument("-j", "--jobs", type=int)
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args(argv)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    results = {}
    for name in args.trees.split(","):
        src = TREES[name](args, work)
        original = work / "fix-safety" / f"{name}.orig"
        copy = work / "fix-safety" / name
        n = copy_sources(src, original, args.limit)
        copy_sources(original, copy)
        print(f"{name}: {n} files from {src}", file=sys.stderr)
        results[name] = check_tree(original, copy, args.jobs)
        r = results[name]
        print(f"  {r['findings']} findings, {r['fixed']} fixed, {r['left']} left, "
              f"{len(r['problems'])} problems, {r['seconds']} s", file=sys.stderr)
        for p in r["problems"][:20]:
            print(f"  PROBLEM: {p}", file=sys.stderr)
    print(table(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 1 if any(r["problems"] for r in results.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
