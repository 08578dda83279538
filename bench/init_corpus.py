#!/usr/bin/env python3
"""The cross-project corpus scored with what `devlint init` writes for each project
(issue 19's "Done when"; docs/profiles.md, "Exactness on the cross-project corpus").

For each repository of the corpus (`cross_dev.json`), it extracts the project's tree at the
parent of its newest case from the git mirror (`git archive`), runs `devlint init --yes` there
(this interpreter's devlint, on a pristine `pyproject.toml`), then runs the corpus scorer with
every case checked under its project's configuration (`--config <tree>/pyproject.toml` in place
of `--profile torch`). Before that it scores the plain `--profile torch` row, for comparison.

    python bench/init_corpus.py                                  # both rows, per-project table
    python bench/init_corpus.py --only-init --json /tmp/after.json

Defaults: corpus /tmp/cross, cases /work/shared/corpus/cross_dev.json, mirrors
/work/.mirror/<owner>+<name>/repo, scorer /work/shared/corpus/score.py, work folder
$DEVLINT_BENCH_DIR/init-corpus (default /tmp/devlint-bench). Nothing it extracts is committed.
`--wrap WORK ...` is the mode the scorer calls (it stands for `devlint`).
"""
from __future__ import annotations

import argparse
import collections
import hashlib
import io
import json
import os
import re
import shlex
import subprocess
import sys
import tarfile

HERE = os.path.abspath(__file__)
DEFAULT_WORK = os.path.join(os.environ.get("DEVLINT_BENCH_DIR", "/tmp/devlint-bench"),
                            "init-corpus")


def _repos(cases: list, mirrors: str) -> dict:
    """repo -> the commit to run init on: the parent of its newest case (by the fix commit's
    commit time; the project as the maintainers had it just before their last fix in the
    corpus)."""
    newest: dict = {}
    for c in cases:
        mirror = os.path.join(mirrors, c["repo"].replace("/", "+"), "repo")
        when = int(subprocess.run(["git", f"--git-dir={mirror}", "log", "-1", "--format=%ct",
                                   c["sha"]], capture_output=True, text=True,
                                  check=True).stdout)
        if c["repo"] not in newest or when > newest[c["repo"]][0]:
            newest[c["repo"]] = (when, c)
    return {r: c["parent"] for r, (_, c) in sorted(newest.items())}


def _extract(mirror: str, commit: str, dest: str) -> None:
    stamp = os.path.join(dest, ".init-corpus-commit")
    if os.path.isfile(stamp) and open(stamp).read().strip() == commit:
        return
    if os.path.isdir(dest):
        subprocess.run(["rm", "-rf", dest], check=True)
    os.makedirs(dest)
    data = subprocess.run(["git", f"--git-dir={mirror}", "archive", commit],
                          capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(dest, filter="data") if hasattr(tarfile, "data_filter") \
            else tar.extractall(dest)
    pristine = os.path.join(dest, "pyproject.toml")
    if os.path.isfile(pristine):
        os.replace(pristine, pristine + ".pristine")
    with open(stamp, "w") as f:
        f.write(commit + "\n")


def run_init(args, repos: dict) -> None:
    for repo, commit in repos.items():
        name = repo.split("/")[1]
        dest = os.path.join(args.work, name)
        mirror = os.path.join(args.mirrors, repo.replace("/", "+"), "repo")
        _extract(mirror, commit, dest)
        pp = os.path.join(dest, "pyproject.toml")
        if os.path.isfile(pp + ".pristine"):
            with open(pp + ".pristine", "rb") as f, open(pp, "wb") as g:
                g.write(f.read())
        elif os.path.exists(pp):
            os.remove(pp)
        p = subprocess.run([sys.executable, "-m", "devlint", "init", "--yes"], cwd=dest,
                           capture_output=True, text=True)
        with open(os.path.join(args.work, f"init-{name}.txt"), "w") as f:
            f.write(p.stdout + p.stderr)
        print(f"init {repo} @ {commit[:10]}: exit {p.returncode}", file=sys.stderr)


def score(args, wrap: bool, out_json: str) -> dict:
    dl = f"{shlex.quote(sys.executable)} -m devlint"
    if wrap:
        dl = f"{shlex.quote(sys.executable)} {shlex.quote(HERE)} --wrap {shlex.quote(args.work)}"
    cmd = [sys.executable, args.score, args.corpus, "--devlint", dl, "--profile", "torch",
           "--json", out_json]
    env = dict(os.environ)
    if args.target_torch:
        env["DEVLINT_INIT_CORPUS_TARGET"] = args.target_torch
    subprocess.run(cmd, check=True, env=env)
    with open(out_json) as f:
        return json.load(f)


def per_repo(corpus: str, before: dict | None, after: dict) -> str:
    repo = {}
    for d in os.listdir(corpus):
        cj = os.path.join(corpus, d, "case.json")
        if os.path.isfile(cj):
            repo[d] = json.load(open(cj))["repo"]
    agg: dict = collections.OrderedDict()
    b_cases = {c["name"]: c for c in (before or {"cases": []})["cases"]}
    for n in after["cases"]:
        b = b_cases.get(n["name"], {})
        a = agg.setdefault(repo[n["name"]], [0, 0, 0, 0, 0, 0])
        a[0] += 1
        a[1] += int(bool(b.get("fixed")))
        a[2] += int(bool(n.get("fixed")))
        a[3] += b.get("exact", 0)
        a[4] += n.get("exact", 0)
        a[5] += n.get("after_lines", 0)
    lines = ["| repository | cases | fixed (torch) | fixed (init) | exact lines (torch) | "
             "exact lines (init) | fixed lines (upstream) |", "|---|---|---|---|---|---|---|"]
    for r, a in sorted(agg.items()):
        lines.append(f"| {r} | " + " | ".join(map(str, a)) + " |")
    t = [sum(a[i] for a in agg.values()) for i in range(6)]
    lines.append("| **all** | " + " | ".join(map(str, t)) + " |")
    return "\n".join(lines)


# ------------------------------------------------------------------ the scorer's `devlint`


def _case_index(corpus: str) -> dict:
    by_path: dict = {}
    by_hash: dict = {}
    for d in sorted(os.listdir(corpus)):
        cj = os.path.join(corpus, d, "case.json")
        if not os.path.isfile(cj):
            continue
        case = json.load(open(cj))
        name = case["repo"].split("/")[1]
        by_path.setdefault(case["path"], set()).add(name)
        ext = os.path.splitext(case["path"])[1]
        for which in ("before", "after"):
            with open(os.path.join(corpus, d, which + ext), "rb") as f:
                by_hash[hashlib.sha1(f.read()).hexdigest()] = name
    return {"path": {k: sorted(v) for k, v in by_path.items()}, "hash": by_hash}


def wrap(work: str, argv: list) -> None:
    """`devlint ARGS... FILE` as the scorer runs it, with the case's project configuration:
    the project is found from the file's path in the corpus (or its content, where two
    projects share a path)."""
    path = argv[-1]
    index_path = os.path.join(work, "case-index.json")
    corpus = os.environ.get("DEVLINT_INIT_CORPUS", "/tmp/cross")
    if not os.path.isfile(index_path):
        with open(index_path, "w") as f:
            json.dump(_case_index(corpus), f)
    with open(index_path) as f:
        index = json.load(f)
    m = re.search(r"/dlscore-[^/]+/[baf]/(.*)$", path)
    name = None
    if m:
        names = index["path"].get(m.group(1), [])
        if len(names) == 1:
            name = names[0]
        else:
            with open(path, "rb") as f:
                name = index["hash"].get(hashlib.sha1(f.read()).hexdigest())
    cfg = os.path.join(work, name or "", "pyproject.toml")
    args = list(argv)
    if name and os.path.isfile(cfg):
        out, skip = [], False
        for a in args[:-1]:
            if skip:
                skip = False
            elif a == "--profile":
                skip = True
            else:
                out.append(a)
        target = os.environ.get("DEVLINT_INIT_CORPUS_TARGET")
        args = out + ["--config", cfg] + (["--target-torch", target] if target else []) \
            + [args[-1]]
    os.execv(sys.executable, [sys.executable, "-m", "devlint", *args])


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--wrap"]:
        wrap(argv[1], argv[2:])
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", default="/tmp/cross")
    ap.add_argument("--cases", default="/work/shared/corpus/cross_dev.json")
    ap.add_argument("--mirrors", default="/work/.mirror")
    ap.add_argument("--score", default="/work/shared/corpus/score.py")
    ap.add_argument("--work", default=DEFAULT_WORK)
    ap.add_argument("--only-init", action="store_true", help="skip the --profile torch row")
    ap.add_argument("--skip-init", action="store_true", help="reuse the configurations "
                    "written by the last run")
    ap.add_argument("--target-torch", help="force target-torch (what the roles alone do)")
    ap.add_argument("--json", help="write the init row's per-case results here")
    args = ap.parse_args(argv)
    os.makedirs(args.work, exist_ok=True)
    os.environ["DEVLINT_INIT_CORPUS"] = args.corpus
    with open(args.cases) as f:
        repos = _repos(json.load(f), args.mirrors)
    if not args.skip_init:
        run_init(args, repos)
    before = None
    if not args.only_init:
        before = score(args, False, os.path.join(args.work, "score-torch.json"))
        print("torch profile:", json.dumps(before["summary"]))
    after = score(args, True, args.json or os.path.join(args.work, "score-init.json"))
    print("devlint init: ", json.dumps(after["summary"]))
    print(per_repo(args.corpus, before, after))
    return 0


if __name__ == "__main__":
    sys.exit(main())
