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
    python bench/bench.py --vllm-dir D --torch-dir /path/to/site-packages/torch --fixit-subset 50

Issue 17's targets are checked at the end, in the same run: devlint cold <= 2.5x
`ruff --select E,F` (wall and CPU), warm <= 0.3 s, one clean file <= 0.1 s, peak memory
<= 400 MB; with --torch-dir (a copy of torch's Python sources is made under the work folder)
devlint cold <= 1x `ruff --select ALL` and `--fix` (on a fresh copy each run) <= 3x the cold
check with <= 400 MB; a generated 50k-line file fixed in <= 5 s. Fixit (the other LibCST
linter, `fixit` from PyPI, in a venv of its own) runs on the same subset as TorchFix when
--fixit-subset is given and it installs.

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
FIXIT_SPEC = "fixit"
LARGE_BLOCK = (
    "def f{i}(x):\n"
    "    if torch.cuda.is_available():\n"
    "        x = x.to(\"cuda\")\n"
    "    y = torch.zeros(3, device=\"cuda\")\n"
    "    torch.cuda.synchronize()\n"
    "    return x + y\n\n"
)


def large_file(path: Path, lines: int) -> Path:
    """A generated module of `lines` lines: functions with a guard, a `.to("cuda")`, a
    `device="cuda"` and a `torch.cuda.synchronize()` each."""
    n = max(1, (lines - 2) // LARGE_BLOCK.count("\n"))
    path.write_text("import torch\n\n" + "".join(LARGE_BLOCK.format(i=i) for i in range(n)))
    return path


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


def measure(cmd: list[str], cwd: str | None = None, sample_rss: bool = False,
            ok=(0, 1)) -> dict:
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
    if ok is not None and proc.returncode not in ok:
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
    ap.add_argument("--torch-dir", help="torch's package folder (e.g. site-packages/torch): "
                                        "also measure devlint cold and --fix there against ruff ALL")
    ap.add_argument("--fixit-subset", type=int, default=0, metavar="N",
                    help="run Fixit (PyPI `fixit`, its own venv) and devlint on N files")
    ap.add_argument("--large-lines", type=int, default=50000,
                    help="lines of the generated large file (0: skip; default: %(default)s)")
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
    fixit = None
    fx_n = min(args.fixit_subset, len(files))
    fx_subset = [str(p) for p in files[::max(1, len(files) // fx_n)][:fx_n]] if fx_n else []
    if fx_subset:
        try:
            fixit = str(venv_with(work, "fixit", FIXIT_SPEC, "fixit"))
        except (OSError, subprocess.CalledProcessError) as e:
            print(f"Fixit not installed ({e}): skipped", file=sys.stderr)
    if fixit:
        cases[f"devlint, Fixit's {fx_n}-file subset (no cache)"] = lambda: measure(
            [*devlint, "check", "-q", "--no-cache", *fx_subset])
        cases[f"Fixit, {fx_n}-file subset"] = lambda: measure(
            [fixit, "lint", *fx_subset], ok=None)
    torch_tree = None
    if args.torch_dir:
        torch_tree = work / "torch-src" / "torch"
        if not torch_tree.exists():
            shutil.copytree(args.torch_dir, torch_tree,
                            ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.so.*"))
        torch_copy = work / "torch-fix" / "torch"

        def torch_fix():
            shutil.rmtree(torch_copy.parent, ignore_errors=True)
            shutil.copytree(torch_tree, torch_copy)
            return measure([*devlint, "check", "-q", "--no-cache", "--fix", str(torch_copy)],
                           sample_rss=True)

        cases["devlint cold, torch sources (no cache)"] = lambda: measure(
            [*devlint, "check", "-q", "--no-cache", str(torch_tree)], sample_rss=True)
        cases["ruff check --select ALL --no-cache, torch sources"] = lambda: measure(
            [ruff, "check", "--isolated", "--select", "ALL", "--no-cache", "-q", "--exit-zero",
             str(torch_tree)])
        cases["devlint --fix, torch sources (a fresh copy)"] = torch_fix
    if args.large_lines:
        big = large_file(work / "large.py", args.large_lines)
        big_copy = work / "large-fix" / "large.py"

        def large_fix():
            big_copy.parent.mkdir(exist_ok=True)
            shutil.copyfile(big, big_copy)
            return measure([*devlint, "check", "-q", "--no-cache", "--fix", str(big_copy)],
                           sample_rss=True)

        cases[f"devlint, a {args.large_lines}-line file (no cache)"] = lambda: measure(
            [*devlint, "check", "-q", "--no-cache", str(big)], sample_rss=True)
        cases[f"devlint --fix, a {args.large_lines}-line file"] = large_fix

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
        elif name.startswith("Fixit"):
            ref = med[f"devlint, Fixit's {fx_n}-file subset (no cache)"]
            ratio = f"{med[name] / ref:.0f}x (vs devlint on the same files)"
        elif "torch sources" in name:
            ref = med["devlint cold, torch sources (no cache)"]
            ratio = "-" if name.startswith("devlint cold") else f"{med[name] / ref:.2f}x"
        elif "-line file" in name:
            ratio = "-"
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
    print("\n" + "\n".join(targets(med, cpu, runs, torch_tree is not None, args.large_lines)))
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"runs": runs, "median_wall": med, "median_cpu": cpu, "load": load,
             "files": len(files), "identical_findings": identical,
             "torchfix_full": full}, indent=2))
    return 0 if identical else 1


def targets(med: dict, cpu: dict, runs: dict, torch: bool, large: int) -> list[str]:
    """Issue 17's targets against this run's medians (ratios of the same alternated run, in
    wall and in CPU time: on a loaded machine the CPU ratio is the steadier one)."""
    def peak(name):
        return max(max(r["max_process_rss_mb"], r["tree_rss_mb"] or 0) for r in runs[name])

    def line(what, value, limit, unit=""):
        return f"| {what} | {value:.2f}{unit} | {limit}{unit} | {'met' if value <= limit else 'NOT met'} |"

    cold, ef = "devlint cold (empty cache)", "ruff check --select E,F --no-cache"
    out = ["| issue 17 target | this run | limit | |", "|---|---:|---:|---|",
           line("cold / ruff E,F (wall)", med[cold] / med[ef], 2.5, "x"),
           line("cold / ruff E,F (CPU)", cpu[cold] / cpu[ef], 2.5, "x"),
           line("warm re-run (wall s)", med["devlint warm (cache, nothing changed)"], 0.3),
           line("warm re-run (CPU s)", cpu["devlint warm (cache, nothing changed)"], 0.3),
           line("one clean file (wall s)", med["devlint, 1 clean file (no cache)"], 0.1),
           line("one clean file (CPU s)", cpu["devlint, 1 clean file (no cache)"], 0.1),
           line("peak memory, vLLM cold (MB)", peak(cold), 400)]
    if torch:
        tc = "devlint cold, torch sources (no cache)"
        ra = "ruff check --select ALL --no-cache, torch sources"
        fx = "devlint --fix, torch sources (a fresh copy)"
        out += [line("torch: cold / ruff ALL (wall)", med[tc] / med[ra], 1, "x"),
                line("torch: cold / ruff ALL (CPU)", cpu[tc] / cpu[ra], 1, "x"),
                line("torch: --fix / cold (wall)", med[fx] / med[tc], 3, "x"),
                line("torch: --fix / cold (CPU)", cpu[fx] / cpu[tc], 3, "x"),
                line("torch: --fix peak memory (MB)", peak(fx), 400)]
    if large:
        fx = f"devlint --fix, a {large}-line file"
        out += [line(f"{large}-line file fixed (wall s)", med[fx], 5),
                line(f"{large}-line file fixed (CPU s)", cpu[fx], 5)]
    return out


if __name__ == "__main__":
    sys.exit(main())
