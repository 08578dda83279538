#!/usr/bin/env python3
"""devlint's performance benchmark on vLLM 0.33.0's `vllm/` tree (3,231 Python files).

Prints one table: devlint cold (empty cache), devlint warm (cache filled, nothing changed),
devlint on 10 files and on 1 clean file, `ruff check --select ALL --no-cache`,
`ruff check --select E,F --no-cache` and TorchFix 0.7, each the median of several runs taken
in alternation (A B C A B C ...), so that load from other processes spreads over all of them.
Ratios are the result (time of the other tool / time of devlint: above 1 means devlint is
faster); absolute seconds are context. It also reports devlint's peak memory and checks that
the findings are identical with and without the cache and with 1 and N jobs.

    python bench/bench.py                          # downloads the vLLM wheel, installs the tools
    python bench/bench.py --vllm-dir /tmp/vllm033/vllm --runs 5 --torchfix-subset 200
    python bench/bench.py --torchfix-full          # TorchFix on the whole tree (~11 min)

Everything it downloads or installs goes to $DEVLINT_BENCH_DIR (default /tmp/devlint-bench):
the vLLM wheel and its extraction (reused when present; or pass --vllm-dir / $DEVLINT_BENCH_VLLM),
a venv with ruff, a venv with TorchFix 0.7 (it pins libcst<1.6, so it gets its own), and a venv
with devlint installed from this checkout (so that edits during the run change nothing).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from fix_safety import _extract_package, _pip_download  # noqa: E402

DEFAULT_WORK = os.environ.get("DEVLINT_BENCH_DIR", "/tmp/devlint-bench")
RUFF_SPEC = "ruff"
TORCHFIX_SPEC = "torchfix==0.7.0"


# --- tools -----------------------------------------------------------------------------------

def venv_with(work: Path, name: str, spec: str, exe: str) -> Path:
    """A venv under work with spec installed; returns the path of its `exe`."""
    venv = work / f"venv-{name}"
    bin_dir = venv / ("Scripts" if os.name == "nt" else "bin")
    if not (bin_dir / exe).exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "-q", spec], check=True)
    return bin_dir / exe


def devlint_exe(work: Path) -> list[str]:
    """devlint from this checkout, installed (not editable) in a venv of its own: the code
    cannot change under the benchmark (an edit would also invalidate the warm cache), and the
    console script runs without a pyenv shim in front of it."""
    venv = work / "venv-devlint"
    bin_dir = venv / ("Scripts" if os.name == "nt" else "bin")
    if not (bin_dir / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "-q", str(HERE.parent)],
                   check=True)
    return [str(bin_dir / "devlint")]


def vllm_sources(args, work: Path) -> Path:
    if args.vllm_dir:
        return Path(args.vllm_dir)
    wheel = _pip_download("vllm==0.33.0", work / "wheels")
    return _extract_package(wheel, "vllm", work / "vllm-0.33.0")


def python_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if p.is_file())


# --- measuring -------------------------------------------------------------------------------

def _tree_rss_kb(pid: int) -> int:
    """Resident memory of pid and all its descendants, from /proc (Linux)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            ppid = int(fields[1])
            with open(f"/proc/{entry}/statm") as f:
                pages = int(f.read().split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
        rss[int(entry)] = pages * (os.sysconf("SC_PAGE_SIZE") // 1024)
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        total += rss.get(p, 0)
        todo.extend(children.get(p, []))
    return total


def measure(cmd: list[str], cwd: str | None = None, sample_rss: bool = False) -> dict:
    """Wall time, CPU time and peak memory of one run of cmd (output discarded)."""
    env = dict(os.environ)
    env.pop("DEVLINT_OUTPUT_FORMAT", None)
    env.pop("PRE_COMMIT", None)
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=cwd,
                            env=env)
    peak_tree = [0]
    stop = threading.Event()

    def sampler():
        while not stop.is_set():
            peak_tree[0] = max(peak_tree[0], _tree_rss_kb(proc.pid))
            stop.wait(0.02)

    thread = threading.Thread(target=sampler, daemon=True) if sample_rss else None
    if thread:
        thread.start()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if thread:
        stop.set()
        thread.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}:\n{err[-3000:]}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
            # ru_maxrss of wait4: the largest single process of the tree, in KB on Linux
            "max_process_rss_mb": usage.ru_maxrss / 1024,
            "tree_rss_mb": peak_tree[0] / 1024 if sample_rss else None}


def findings(cmd: list[str], cwd=None) -> list:
    env = dict(os.environ)
    env.pop("DEVLINT_OUTPUT_FORMAT", None)
    p = subprocess.run([*cmd, "--output-format", "json"], capture_output=True, text=True,
                       cwd=cwd, env=env)
    return json.loads(p.stdout)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", default=DEFAULT_WORK, help="scratch folder (default: %(default)s)")
    ap.add_argument("--vllm-dir", default=os.environ.get("DEVLINT_BENCH_VLLM"),
                    help="an extracted vllm/ package folder (skips the download)")
    ap.add_argument("--runs", type=int, default=5, help="runs per case (default: %(default)s)")
    ap.add_argument("--torchfix-subset", type=int, default=100, metavar="N",
                    help="run TorchFix (and devlint, for the ratio) on the same N files "
                         "(default: %(default)s; 0: skip)")
    ap.add_argument("--torchfix-full", action="store_true",
                    help="also run TorchFix once over the whole tree (~11 minutes)")
    ap.add_argument("--ruff", help="a ruff executable (default: a venv with ruff from PyPI)")
    ap.add_argument("--torchfix", help="a torchfix executable (default: a venv with TorchFix 0.7)")
    ap.add_argument("--devlint", help="a devlint executable (default: this checkout, installed "
                                      "in a venv under the work folder)")
    ap.add_argument("--json", help="also write the raw results here")
    args = ap.parse_args(argv)

    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    tree = vllm_sources(args, work)
    files = python_files(tree)
    ruff = args.ruff or str(venv_with(work, "ruff", RUFF_SPEC, "ruff"))
    torchfix = None
    if args.torchfix_subset or args.torchfix_full:
        torchfix = args.torchfix or str(venv_with(work, "torchfix", TORCHFIX_SPEC, "torchfix"))
    devlint = [args.devlint] if args.devlint else devlint_exe(work)
    cache_dir = work / "devlint-cache"
    step = max(1, len(files) // 10)
    ten = [str(p) for p in files[::step][:10]]
    clean = work / "clean.py"
    clean.write_text("import os\n\n\ndef main():\n    return os.getcwd()\n")
    sub_n = min(args.torchfix_subset, len(files)) if args.torchfix_subset else 0
    subset = [str(p) for p in files[::max(1, len(files) // sub_n)][:sub_n]] if sub_n else []

    def cold():
        shutil.rmtree(cache_dir, ignore_errors=True)
        return measure([*devlint, "check", "-q", "--cache-dir", str(cache_dir), str(tree)],
                       sample_rss=True)

    cases = {
        "devlint cold (empty cache)": cold,
        "devlint warm (cache, nothing changed)": lambda: measure(
            [*devlint, "check", "-q", "--cache-dir", str(cache_dir), str(tree)], sample_rss=True),
        "devlint, 10 files (no cache)": lambda: measure(
            [*devlint, "check", "-q", "--no-cache", *ten]),
        "devlint, 1 clean file (no cache)": lambda: measure(
            [*devlint, "check", "-q", "--no-cache", str(clean)]),
        "ruff check --select ALL --no-cache": lambda: measure(
            [ruff, "check", "--isolated", "--select", "ALL", "--no-cache", "-q", "--exit-zero",
             str(tree)]),
        "ruff check --select E,F --no-cache": lambda: measure(
            [ruff, "check", "--isolated", "--select", "E,F", "--no-cache", "-q", "--exit-zero",
             str(tree)]),
    }
    if subset:
        cases[f"devlint, TorchFix's {sub_n}-file subset (no cache)"] = lambda: measure(
            [*devlint, "check", "-q", "--no-cache", *subset])
        cases[f"TorchFix 0.7, {sub_n}-file subset"] = lambda: measure([torchfix, *subset])

    # warm-up: fill the OS page cache and the devlint cache once, unmeasured
    measure([*devlint, "check", "-q", "--cache-dir", str(cache_dir), str(tree)])
    load = [os.getloadavg()[0]]
    runs: dict[str, list[dict]] = {name: [] for name in cases}
    for i in range(args.runs):
        for name, fn in cases.items():
            if name.startswith("devlint warm") and not cache_dir.exists():
                cold()
            runs[name].append(fn())
        load.append(os.getloadavg()[0])
        print(f"run {i + 1}/{args.runs} done (load {load[-1]:.2f})", file=sys.stderr)
    full = None
    if args.torchfix_full:
        full = measure([torchfix, str(tree)])
        load.append(os.getloadavg()[0])

    # findings must not depend on the cache or the number of jobs
    base = [*devlint, "check", str(tree)]
    shutil.rmtree(cache_dir, ignore_errors=True)
    variants = {
        "-j1 --no-cache": findings([*base, "-j", "1", "--no-cache"]),
        f"-j{os.cpu_count()} --no-cache": findings([*base, "-j", str(os.cpu_count()), "--no-cache"]),
        "cold cache": findings([*base, "--cache-dir", str(cache_dir)]),
        "warm cache": findings([*base, "--cache-dir", str(cache_dir)]),
    }
    reference = next(iter(variants.values()))
    identical = all(v == reference for v in variants.values())

    med = {name: statistics.median(r["wall"] for r in rs) for name, rs in runs.items()}
    cpu = {name: statistics.median(r["cpu"] for r in rs) for name, rs in runs.items()}
    dl = med["devlint cold (empty cache)"]
    rows = ["| case | median wall s | median CPU s | ratio to devlint cold |",
            "|---|---:|---:|---:|"]
    for name in cases:
        if name.startswith("TorchFix"):
            ref = med[f"devlint, TorchFix's {sub_n}-file subset (no cache)"]
            ratio = f"{med[name] / ref:.0f}x (vs devlint on the same files)"
        elif name.startswith("devlint"):
            ratio = "-" if name.startswith("devlint cold") else f"{med[name] / dl:.2f}x"
        else:
            ratio = f"{med[name] / dl:.2f}x"
        rows.append(f"| {name} | {med[name]:.2f} | {cpu[name]:.2f} | {ratio} |")
    if full:
        rows.append(f"| TorchFix 0.7, whole tree (1 run) | {full['wall']:.1f} | {full['cpu']:.1f} "
                    f"| {full['wall'] / dl:.0f}x |")
    cold_runs = runs["devlint cold (empty cache)"]
    print(f"vLLM 0.33.0 vllm/: {len(files)} Python files; {args.runs} alternated runs per case; "
          f"{os.cpu_count()} CPUs; load average {min(load):.2f}-{max(load):.2f}")
    print("\n".join(rows))
    print(f"\ndevlint cold peak memory: {max(r['max_process_rss_mb'] for r in cold_runs):.0f} MB "
          f"in the largest process (ru_maxrss), "
          f"{max(r['tree_rss_mb'] for r in cold_runs):.0f} MB summed over the process tree "
          f"(sampled every 20 ms)")
    print(f"findings identical across {', '.join(variants)}: "
          f"{'yes' if identical else 'NO'} ({len(reference)} findings)")
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"runs": runs, "median_wall": med, "median_cpu": cpu, "load": load,
             "files": len(files), "identical_findings": identical,
             "torchfix_full": full}, indent=2))
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
