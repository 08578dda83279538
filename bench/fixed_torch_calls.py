#!/usr/bin/env python3
"""The torch calls devlint's fixes write in a real corpus, checked against each torch release.

tests/test_torch_surface.py does this for the code CI has (rule examples, runtime snippets,
fixtures/); this script does it for the corpora that CI does not have. For every case's
`before` file, at every target-torch from 2.6 to the newest release with surface data
(tests/data/torch_surface), it fixes the file (`--fix --unsafe-fixes`, the given profile) and
looks up every torch call the fix wrote in the surface of the target release and each newer
one (tools/torch_surface.py). Exit 1 if any call is missing or refuses its arguments.

    python bench/fixed_torch_calls.py /tmp/cross --profile torch
    python bench/fixed_torch_calls.py /tmp/devlint-corpus --profile vllm
    python bench/fixed_torch_calls.py /tmp/cross --init-work /tmp/devlint-bench/init-corpus

`--init-work` uses the configuration bench/init_corpus.py had `devlint init` write for each
case's project (its profile, with `target-torch` still varied here).
"""
from __future__ import annotations

import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import torch_surface  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("corpus", nargs="+", help="extracted corpus folders (case.json per case)")
    ap.add_argument("--profile", default="torch")
    ap.add_argument("--init-work", help="bench/init_corpus.py's work folder: use each "
                    "project's configuration")
    ap.add_argument("--data", default=os.path.join(ROOT, "tests", "data", "torch_surface"))
    args = ap.parse_args(argv)

    from dataclasses import replace

    from devlint.api import fix_source, settings_for

    surfaces = torch_surface.load_surfaces(args.data)
    problems, calls, fixes = [], 0, 0
    for corpus in args.corpus:
        for name in sorted(os.listdir(corpus)):
            cj = os.path.join(corpus, name, "case.json")
            if not os.path.isfile(cj):
                continue
            case = json.load(open(cj))
            if not case["path"].endswith(".py"):
                continue
            with open(os.path.join(corpus, name, "before.py"), encoding="utf-8",
                      errors="surrogateescape") as f:
                source = f.read()
            base = None
            if args.init_work:
                cfg = os.path.join(args.init_work, case["repo"].split("/")[1], "pyproject.toml")
                if os.path.isfile(cfg):
                    base = settings_for(os.path.join(os.path.dirname(cfg), case["path"]), cfg)
            for release in surfaces:
                target = f"{release[0]}.{release[1]}"
                if base is not None:
                    settings = replace(base, target_torch=target)
                    fixed, _, failures = fix_source(source, case["path"], settings=settings,
                                                    unsafe=True)
                else:
                    fixed, _, failures = fix_source(source, case["path"], unsafe=True,
                                                    profile=args.profile, target_torch=target)
                if fixed == source:
                    continue
                fixes += 1
                calls += len(torch_surface.new_calls(source, fixed))
                for rel, call, why in torch_surface.check_fix(source, fixed, release, surfaces):
                    problems.append(f"{name} @ target {target}, torch {rel[0]}.{rel[1]}: "
                                    f"{call}: {why}")
    print(f"{fixes} fixed files (case x target), {calls} torch calls written by fixes, "
          f"{len(problems)} problems; releases "
          + ", ".join(f"{a}.{b}" for a, b in surfaces))
    for p in problems:
        print("  " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
