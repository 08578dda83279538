"""The runtime matrix (issue 13): every fix form executed, original against fixed.

For every rule's Invalid example (torch profile) and every snippet in cases.py, and for each
target-torch whose forms differ, devlint fixes the code (`--fix --unsafe-fixes`); worker.py
then runs the original and the fixed program on a torch (any interpreter: the test venv's
CPU-only wheel, the standard CUDA wheel on a GPU-less machine, the GPU machine's torch).
A fixed program's verdict:

  agree        the original ran; the fixed one ran and printed the same
  ran          the original failed because it demands CUDA; the fixed one ran
  needs an accelerator
               the original demanded CUDA and the fixed code fails for want of an
               accelerator on the line calling a replacement the table marks
               `needs_accelerator` (a device index, a stream: meaningless without one)
  n/a          the original failed for another reason (a device index the machine lacks,
               the same in both; a rule example's undefined names,
               an assertion that rejects the CPU on purpose): nothing to compare
  FAIL         anything else

    python tests/runtime/matrix.py [--python PY]... [--json OUT] [--markdown OUT]
"""
from __future__ import annotations

import argparse
import ast
import builtins
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "worker.py")

# an error that says the code asked for CUDA (or NCCL) on a machine without it
# (the CPU-only wheel's "Cannot access accelerator device" and "dummy base class" errors come
# from torch.cuda's stand-ins there)
# (and the CUDA wheel's memory-statistics resets without a GPU: "invalid argument to
# reset_peak_memory_stats")
_DEMANDS_CUDA = re.compile(r"(?i)cuda|nvidia|nccl|Cannot access accelerator device when none|"
                           r"Tried to instantiate dummy base class|"
                           r"invalid argument to reset_(peak|accumulated)_memory_stats")

_ORDINAL = "invalid device ordinal"

_STUB = '''class _Stub:
    def __getattr__(self, name): return _Stub()
    def __call__(self, *a, **k): return _Stub()
    def __iter__(self): return iter(())
    def __getitem__(self, k): return _Stub()
    def __enter__(self): return self
    def __exit__(self, *a): return False
'''


@dataclass
class Case:
    id: str
    kind: str  # "example" or "snippet"
    rule: str
    target: str
    original: str
    fixed: str


def _release(version: str) -> tuple:
    return tuple(int(p) for p in re.findall(r"\d+", version)[:2])


def undefined_names(source: str) -> list[str]:
    """Names a snippet reads but never binds (a rule example's `x`, `args`, `path`)."""
    tree = ast.parse(source)
    loads, binds = set(), set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            (loads if isinstance(n.ctx, ast.Load) else binds).add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            binds.add(n.name)
        elif isinstance(n, ast.arg):
            binds.add(n.arg)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            binds.update((a.asname or a.name).split(".")[0] for a in n.names)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            binds.add(n.name)
    return sorted(loads - binds - set(dir(builtins)))


def runnable(source: str) -> str:
    """The example with a stub for each name it reads but never binds."""
    names = undefined_names(source)
    if not names:
        return source
    return _STUB + "".join(f"{n} = _Stub()\n" for n in names) + source


def build_cases(targets=None) -> tuple[list[Case], list[str]]:
    """(cases, notes). One case per (example or snippet, distinct fixed text)."""
    sys.path.insert(0, HERE)
    from cases import ALL, SNIPPETS

    from devlint.api import fix_source
    from devlint.rules import registry

    only = tuple(targets) if targets else None  # else each snippet's own targets
    cases: list[Case] = []
    notes: list[str] = []

    def add(cid, kind, rule, src, profile, ts, select=None, config=""):
        seen = {}
        settings = None
        if config:
            import tempfile

            from devlint.api import settings_for

            with tempfile.TemporaryDirectory() as d:
                path = os.path.join(d, "pyproject.toml")
                with open(path, "w") as f:
                    f.write(config)
                settings = settings_for(os.path.join(d, "snippet.py"), path)
        for t in ts:
            if only is not None and t not in only:
                continue
            kw = {"select": select} if select else {}
            if settings is not None:
                from dataclasses import replace

                kw["settings"] = replace(settings, target_torch=t)
            else:
                kw.update(profile=profile, target_torch=t)
            fixed, _, failures = fix_source(src, "snippet.py", unsafe=True, **kw)
            if failures:
                raise AssertionError(f"{cid}@{t}: fix reverted: {failures}")
            if fixed == src or fixed in seen:
                continue
            seen[fixed] = t
            cases.append(Case(f"{cid}@{t}", kind, rule, t, src, fixed))

    for rule in registry.all_rules():
        if getattr(rule, "shell", False):
            continue
        for i, ex in enumerate(rule.invalid):
            if ex.fixed is None:
                continue
            if ex.profile != "torch":
                notes.append(f"{rule.code} example {i}: {ex.profile} profile (needs vllm)")
                continue
            if "from __future__" in ex.source:
                notes.append(f"{rule.code} example {i}: has a __future__ import")
                continue
            add(f"{rule.code}-example-{i}", "example", rule.code, runnable(ex.source), "torch",
                ALL, select=(rule.code,))
    for sn in SNIPPETS:
        add(sn.name, "snippet", sn.name.split("-")[0].upper(), sn.source, sn.profile,
            sn.targets, config=sn.config)
    return cases, notes


def run_worker(python: str, items: list[dict], timeout: int = 1800) -> tuple[dict, dict]:
    """(torch info, id -> result) for running `items` with `python`."""
    p = subprocess.run([python, WORKER], input=json.dumps(items), capture_output=True,
                       text=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"{python} {WORKER} failed:\n{p.stderr[-3000:]}")
    results = json.loads(p.stdout)
    info = results[0]
    return info, {r["id"]: r for r in results[1:]}


def run_matrix(python: str, cases: list[Case]) -> tuple[dict, list[dict]]:
    """Runs every case's original and fixed program on `python`'s torch: (torch info,
    rows). A case whose target is newer than that torch is not run (its forms are not
    offered to older releases)."""
    info, _ = run_worker(python, [])
    rel = _release(info.get("version", "0.0"))
    todo = [c for c in cases if _release(c.target) <= rel]
    items, seen = [], set()
    for c in todo:
        for key, src in (("o:" + c.original, c.original), ("f:" + c.fixed, c.fixed)):
            if key not in seen:
                seen.add(key)
                items.append({"id": key, "source": src})
    info, res = run_worker(python, items)
    rows = []
    for c in todo:
        o, f = res["o:" + c.original], res["f:" + c.fixed]
        rows.append({"id": c.id, "rule": c.rule, "kind": c.kind, "target": c.target,
                     "verdict": verdict(o, f, c.fixed), "original": o, "fixed": f})
    return info, rows


_NO_ACCELERATOR = re.compile(r"Cannot access accelerator device when none is available|"
                             r"Found no NVIDIA driver|CUDA driver version is insufficient|"
                             r"backend doesn't support|no accelerator|"
                             # torch.get_device_module() is torch.cpu without an accelerator
                             r"module 'torch\.cpu' has no attribute", re.I)


def _needs_accelerator_calls() -> tuple:
    """`.accelerator.current_device_index(`-style texts of the replacements the table marks
    needs_accelerator (the part after the torch module's local name;
    `.get_device_module().mem_get_info(` for a device module's function)."""
    from devlint.profiles.torch_api import load_table

    return tuple(sorted({e.callee()[len("torch"):] + "(" for e in load_table()
                         if e.needs_accelerator and e.replacement}))


def verdict(o: dict, f: dict, fixed_source: str = "") -> str:
    if not o["ok"] and _DEMANDS_CUDA.search(o["error"]) and not f["ok"] \
            and _NO_ACCELERATOR.search(f["error"]):
        m = re.search(r"\(line (\d+)\)$", f["error"])
        lines = fixed_source.splitlines()
        if m and int(m.group(1)) <= len(lines):
            calls = _needs_accelerator_calls()
            line = lines[int(m.group(1)) - 1]
            # or a method of an object such a call made (`e = torch.Event(); e.record()`)
            made = {mm.group(1) for ln in lines for mm in [re.match(r"\s*(\w+) = ", ln)]
                    if mm and any(c in ln for c in calls)}
            if any(c in line for c in calls) or any(f"{n}." in line for n in made):
                return "needs an accelerator"
    if o["ok"]:
        if not f["ok"]:
            return "FAIL: the original ran, the fixed code failed: " + f["error"]
        if o["stdout"] != f["stdout"]:
            return f"FAIL: outputs differ: {o['stdout']!r} != {f['stdout']!r}"
        return "agree"
    if _ORDINAL in o["error"] and not f["ok"] and _ORDINAL in f["error"]:
        # both ask for a device index this machine lacks (`.cuda(1)` on one GPU): the same
        # failure, for want of a second device, not of CUDA
        return "n/a"
    if not f["ok"] and f["error"] == o["error"] and not _NO_ACCELERATOR.search(o["error"]):
        # the fix left the failure as it was, and it is not for want of an accelerator (a rule
        # example's stub where a stream should be, on a machine that has CUDA)
        return "n/a"
    if _DEMANDS_CUDA.search(o["error"]):
        if f["ok"]:
            return "ran"
        return "FAIL: the original demanded CUDA, the fixed code failed: " + f["error"]
    return "n/a"


def summary(info: dict, rows: list[dict]) -> str:
    counts: dict = {}
    for r in rows:
        key = r["verdict"].split(":")[0]
        counts[key] = counts.get(key, 0) + 1
    where = (f"torch {info.get('version')} (CUDA build {info.get('cuda_build')}, "
             f"CUDA available: {info.get('cuda_available')}"
             + (f", {info['device_name']}" if info.get("device_name") else "") + ")")
    return where + ": " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--python", action="append", help="interpreter(s) to run on (default: "
                    "this one)")
    ap.add_argument("--json", help="write every row to this file")
    ap.add_argument("--markdown", help="write the summary and failures as Markdown")
    args = ap.parse_args(argv)
    cases, notes = build_cases()
    out, lines, failed = [], [], 0
    for py in args.python or [sys.executable]:
        info, rows = run_matrix(py, cases)
        out.append({"torch": info, "rows": rows})
        lines.append("- " + summary(info, rows))
        for r in rows:
            if r["verdict"].startswith("FAIL"):
                failed += 1
                lines.append(f"  - {r['id']}: {r['verdict']}")
    print(f"{len(cases)} fixed programs ({sum(c.kind == 'example' for c in cases)} from rule "
          f"examples); {len(notes)} examples not runnable here")
    print("\n".join(lines))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"runs": out, "not_runnable": notes}, f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
