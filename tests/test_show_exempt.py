"""`devlint check --show-exempt`: every candidate and file devlint does not report, with the
principle and its evidence (text and JSON, warm cache, the project stage); the summary's count
of files skipped as CUDA-only; `skip-cuda-only-paths`; the principles in `devlint rule`."""
from __future__ import annotations

import json
import os
import textwrap

import pytest
from _cli import run, write_package

MODEL = textwrap.dedent("""\
    import torch


    def load(t, device):
        if device.type == "cuda":
            torch.cuda.set_device("cuda:0")
        buf: torch.cuda.Stream | None = None
        return t.to("cuda")
    """)
CUDA_UTILS = 'DEVICE = "cuda"\n'
KERNEL = 'import cupy\nimport torch\n\nx = torch.zeros(2, device="cuda")\ntorch.cuda.synchronize()\n'


@pytest.fixture
def proj(tmp_path):
    (tmp_path / ".git").mkdir()  # the config search stops here
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "model.py").write_text(MODEL)
    (pkg / "cuda_utils.py").write_text(CUDA_UTILS)
    (pkg / "kernel.py").write_text(KERNEL)
    return tmp_path


def exempt_json(proj, *extra):
    r = run("check", "--output-format", "json", "--show-exempt", *extra, "pkg", cwd=proj)
    assert r.returncode == 1, r.stderr
    return json.loads(r.stdout)


def test_text_lists_each_candidate_with_principle_and_evidence(proj):
    r = run("check", "--no-cache", "--show-exempt", "pkg", cwd=proj)
    assert r.returncode == 1, r.stderr
    out = r.stdout
    findings, _, rest = out.partition("\nNot reported (")
    # the findings are untouched, and come first
    assert findings == run("check", "--no-cache", "-q", "pkg", cwd=proj).stdout
    assert "pkg/model.py:6:31: DL103 [cuda-guard] under a test that establishes CUDA " \
           "(pkg/model.py:5)\n" in rest
    assert "pkg/model.py:7:10: DL402 [not-a-device] a type annotation" in rest
    assert "pkg/cuda_utils.py: whole file not reported [cuda-only-module] its name " \
           "`cuda_utils.py` says it is CUDA-specific\n" in rest
    assert "pkg/cuda_utils.py:1:10: DL104 [cuda-only-module]" in rest
    assert "pkg/kernel.py: whole file not reported [cuda-only-module] imports `cupy` " \
           "(pkg/kernel.py:1)\n" in rest
    assert "pkg/kernel.py:4:27: DL103 [cuda-only-module] imports `cupy` (pkg/kernel.py:1)\n" in rest
    # the API rules do not look at a CUDA-only file: what they would report is listed too
    assert "pkg/kernel.py:5:1: DL401 [cuda-only-module] imports `cupy` (pkg/kernel.py:1)\n" in rest
    assert "2 files skipped as CUDA-only: listed above.\n" in rest
    # under an established CUDA guard a table API is no finding either (the guard is)
    assert "pkg/model.py:6:9: DL401 [cuda-guard] under a test that establishes CUDA " \
           "(pkg/model.py:5)\n" in rest
    assert "6 candidates not reported: listed above.\n" in rest
    # a reported place is never listed as exempt too
    assert "pkg/model.py:8:17" not in rest


def test_full_format_shows_the_source_under_each_entry(proj):
    out = run("check", "--no-cache", "--show-exempt", "--output-format", "full", "pkg",
              cwd=proj).stdout
    section = out.split("\nNot reported (", 1)[1]
    assert "pkg/model.py:6:31: DL103 [cuda-guard]" in section
    assert '    |         torch.cuda.set_device("cuda:0")\n' \
           "    |                               ^^^^^^^^\n" in section


def test_json_is_ruffs_list_without_the_flag_and_an_object_with_it(proj):
    plain = run("check", "--no-cache", "--output-format", "json", "pkg", cwd=proj)
    listed = json.loads(plain.stdout)
    assert isinstance(listed, list) and all("code" in f for f in listed)
    data = exempt_json(proj, "--no-cache")
    assert set(data) == {"findings", "exempt"}
    assert data["findings"] == listed
    guard = [e for e in data["exempt"] if e["principle"] == "cuda-guard"]
    assert guard == [{
        "code": "DL401", "name": "torch-cuda-api", "filename": "pkg/model.py",
        "location": {"row": 6, "column": 9}, "end_location": {"row": 6, "column": 30},
        "rules": None, "principle": "cuda-guard",
        "message": "under a test that establishes CUDA", "evidence": "pkg/model.py:5"}, {
        "code": "DL103", "name": "device-literal-argument", "filename": "pkg/model.py",
        "location": {"row": 6, "column": 31}, "end_location": {"row": 6, "column": 39},
        "rules": None, "principle": "cuda-guard",
        "message": "under a test that establishes CUDA", "evidence": "pkg/model.py:5"}]
    whole = {e["filename"]: e for e in data["exempt"] if e["code"] is None}
    assert whole["pkg/cuda_utils.py"]["rules"] == "ALL"
    assert whole["pkg/cuda_utils.py"]["location"] is None
    assert whole["pkg/kernel.py"]["evidence"] == "pkg/kernel.py:1"


def test_other_formats_and_modes_are_a_usage_error(proj):
    for extra in (["--output-format", "sarif"], ["--statistics"], ["--diff"]):
        r = run("check", "--no-cache", "--show-exempt", *extra, "pkg", cwd=proj)
        assert r.returncode == 2 and "--show-exempt" in r.stderr, extra


def test_a_warm_cache_gives_the_same_exempt_entries(proj, tmp_path):
    from devlint.engine import cache as cache_mod
    from devlint.engine import runner
    from devlint.settings import Settings

    s = Settings(show_exempt=True)
    tasks = [(str(proj / "pkg" / n), "python", s) for n in ("model.py", "kernel.py")]
    cold = runner.run(tasks, "check", False, 1, cache=cache_mod.Cache(str(tmp_path / "c")))
    warm = runner.run(tasks, "check", False, 1, cache=cache_mod.Cache(str(tmp_path / "c")))
    assert all(r.cached for r in warm) and not any(r.cached for r in cold)
    assert [r.exempt for r in warm] == [r.exempt for r in cold]
    assert {e.principle for r in warm for e in r.exempt} >= {"cuda-guard", "cuda-only-module"}
    # and through the command line, twice
    a = run("check", "--show-exempt", "--cache-dir", str(tmp_path / "c2"), "pkg", cwd=proj)
    b = run("check", "--show-exempt", "--cache-dir", str(tmp_path / "c2"), "pkg", cwd=proj)
    assert a.stdout == b.stdout and "[cuda-guard]" in b.stdout


def test_the_settings_key_holds_the_flag_only_when_set():
    from devlint.settings import Settings

    plain = Settings().cache_key()
    assert "show-exempt" not in plain and "skip-cuda-only-paths" not in plain
    assert Settings(show_exempt=True).cache_key() != plain
    assert Settings(skip_cuda_only_paths=False).cache_key() != plain
    # a plain run after a --show-exempt run still counts the skipped files from its own cache


def test_plain_runs_count_the_files_skipped_as_cuda_only(proj, tmp_path):
    for _ in range(2):  # cold, then from the cache
        r = run("check", "--cache-dir", str(tmp_path / "c"), "pkg", cwd=proj)
        assert "2 files skipped as CUDA-only: see --show-exempt.\n" in r.stdout
        assert "Not reported" not in r.stdout
    full = run("check", "--no-cache", "--output-format", "full", "pkg", cwd=proj)
    assert "2 files skipped as CUDA-only: see --show-exempt.\n" in full.stdout
    # -q prints the findings only
    assert "skipped" not in run("check", "--no-cache", "-q", "pkg", cwd=proj).stdout
    # a clean run says so too
    (proj / "pkg" / "model.py").unlink()
    clean = run("check", "--no-cache", "pkg", cwd=proj)
    assert clean.returncode == 0
    assert clean.stdout == "All checks passed!\n2 files skipped as CUDA-only: see --show-exempt.\n"


def test_the_path_heuristics_can_be_turned_off(proj):
    r = run("check", "--no-cache", "--no-skip-cuda-only-paths", "pkg", cwd=proj)
    assert "pkg/cuda_utils.py:1:10: DL104" in r.stdout
    # its imports still make kernel.py CUDA-only
    assert "pkg/kernel.py" not in r.stdout
    assert "1 file skipped as CUDA-only" in r.stdout
    (proj / "pyproject.toml").write_text("[tool.devlint]\nskip-cuda-only-paths = false\n")
    r = run("check", "--no-cache", "pkg", cwd=proj)
    assert "pkg/cuda_utils.py:1:10: DL104" in r.stdout
    # the command line wins over the file
    r = run("check", "--no-cache", "--skip-cuda-only-paths", "pkg", cwd=proj)
    assert "pkg/cuda_utils.py" not in r.stdout.split("\n\n")[0]
    shown = run("check", "--show-settings", "pkg/cuda_utils.py", cwd=proj)
    assert "skip-cuda-only-paths = false" in shown.stdout
    bad = proj / "pyproject.toml"
    bad.write_text('[tool.devlint]\nskip-cuda-only-paths = "no"\n')
    r = run("check", "--no-cache", "pkg", cwd=proj)
    assert r.returncode == 2 and "skip-cuda-only-paths" in r.stderr


def test_the_default_shows_in_show_settings(proj):
    shown = run("check", "--show-settings", "pkg/model.py", cwd=proj)
    assert "skip-cuda-only-paths = true" in shown.stdout


# --- the project stage ------------------------------------------------------------------

GUARDED_KERNEL = textwrap.dedent("""\
    def swap(addrs):
        return addrs.to("cuda", non_blocking=True)
    """)
GUARDED_CALLER = textwrap.dedent("""\
    from vllm.platforms import current_platform

    from pkg.kernels import swap


    def select():
        if not current_platform.is_cuda():
            return None
        return swap
    """)
CHAIN = {
    "pkg/offload/cuda_mem_ops.py": "def copy_blocks(src, dst):\n    return src, dst\n",
    "pkg/offload/copy_backend.py": textwrap.dedent("""\
        from pkg.offload.cuda_mem_ops import copy_blocks


        class DmaBackend:
            def copy(self, src, dst):
                return copy_blocks(src, dst)
        """),
    "pkg/offload/worker.py": textwrap.dedent("""\
        import torch

        from pkg.offload.copy_backend import DmaBackend


        class Worker:
            def setup(self):
                self.stream = torch.cuda.Stream()
                self.backend = DmaBackend()
        """),
}


def write(root, files):
    (root / ".git").mkdir(exist_ok=True)
    write_package(root, files)


def test_project_stage_exemptions_are_listed_cold_and_warm(tmp_path):
    write(tmp_path, {"pkg/kernels.py": GUARDED_KERNEL, "pkg/worker.py": GUARDED_CALLER,
                     **CHAIN})
    # age the files past the racy window, so the stage stores its answer (engine.cache.RACY_S)
    for d, _, fs in os.walk(tmp_path / "pkg"):
        for f in fs:
            os.utime(os.path.join(d, f), (1_600_000_000, 1_600_000_000))
    cache = ["--cache-dir", str(tmp_path / "cache")]
    runs = [exempt_json_of(tmp_path, *cache) for _ in range(2)]
    assert runs[0] == runs[1]  # the second from the result cache and the stage's store
    assert runs[0] == exempt_json_of(tmp_path, "--no-cache")
    data = runs[0]
    assert data["findings"] == []
    by_file = {}
    for e in data["exempt"]:
        by_file.setdefault(e["filename"], []).append(e)
    [swap] = by_file["pkg/kernels.py"]
    assert (swap["code"], swap["principle"], swap["evidence"]) == (
        "DL101", "only-called-on-cuda", "pkg/worker.py:9")
    # the worker's one class builds the CUDA-only backend: that class is exempt, not the
    # module as a whole (one weak signal never exempts a whole file)
    [stream] = by_file["pkg/offload/worker.py"]
    assert (stream["code"], stream["principle"]) == ("DL402", "cuda-only-module")
    assert stream["evidence"] == "pkg/offload/copy_backend.py"
    assert "DmaBackend" in stream["message"]
    # no module is exempt as a whole (cuda_mem_ops.py holds no candidate: the prefilter
    # leaves it, there is nothing to skip)
    r = run("check", *cache, "pkg", cwd=tmp_path)
    assert r.returncode == 0
    assert r.stdout.startswith("All checks passed!\n") and "skipped as CUDA-only" not in r.stdout
    # the stage's store keeps each reason as Reason.to_dict()
    stores = [os.path.join(d, f) for d, _, fs in os.walk(tmp_path / "cache") for f in fs
              if f.endswith(".exempt.json")]
    stored = [json.load(open(p)) for p in stores]
    reasons = [r for s in stored for m, f, _, rows in s["exempt"].values()
               for r in ([m] if m else []) + list(f.values()) + [x[2] for x in rows]]
    assert reasons and all(set(r) == {"principle", "message", "location"} for r in reasons)


def exempt_json_of(root, *extra):
    r = run("check", "--output-format", "json", "--show-exempt", *extra, "pkg", cwd=root)
    assert r.returncode in (0, 1), r.stderr
    return json.loads(r.stdout)


def test_a_reason_round_trips_through_its_dict():
    from devlint.evidence import Reason

    r = Reason("cuda-guard", "under a test", "/a/b.py", 3)
    back = Reason.from_dict(r.to_dict())
    assert (back.principle, back.text, back.path, back.line) == ("cuda-guard", "under a test",
                                                                  "/a/b.py", 3)
    assert Reason.from_dict(Reason("x", "t", "dir").to_dict()).location == "dir"
    assert Reason.from_dict("old text").principle == "exempt"


# --- the principles each rule honours ---------------------------------------------------

def test_rule_docs_list_the_principles_from_the_evidence_layer():
    from devlint.evidence import PRINCIPLES, principle_summary

    r = run("rule", "DL103", cwd=".")
    assert "## Not reported" in r.stdout
    for p in ("cuda-guard", "platform-ladder", "cuda-only-module", "only-called-on-cuda"):
        assert f"- `{p}`: {principle_summary(p)}" in r.stdout
    table = json.loads(run("rule", "DL401", "--output-format", "json", cwd=".").stdout)
    names = [p["principle"] for p in table["principles"]]
    # under an established guard a table API is no finding either: the guard is
    assert "cuda-guard" in names and "not-a-device" in names and "redundant-seed" in names
    assert "No principle exempts" in run("rule", "DL900", cwd=".").stdout
    for name in PRINCIPLES:
        assert principle_summary(name) and not principle_summary(name).startswith("Principle")


def test_every_principle_recorded_for_a_rule_is_one_it_declares():
    """What --show-exempt reports for each rule's examples (and for them in a CUDA-only file)
    is among the principles its documentation lists."""
    from devlint.engine.linter import lint_text
    from devlint.evidence import PRINCIPLES
    from devlint.reporters import documented_rules
    from devlint.settings import Settings

    seen = {}
    for rule in documented_rules():
        if getattr(rule, "shell", False):
            continue
        assert set(rule.exempt_by) <= set(PRINCIPLES), rule.code
        for ex in [*rule.valid, *rule.invalid]:
            for path in (ex.path, "cuda/" + ex.path):
                out = {}
                s = Settings(select=(rule.code,), profile=ex.profile, show_exempt=True)
                lint_text(path, ex.source, s, frozenset({rule.code}), out)
                for e in out.get("exempt", []):
                    if e.code is not None:
                        assert e.code == rule.code
                        assert e.principle in rule.exempt_by, (rule.code, e.principle, ex.source)
                        seen.setdefault(rule.code, set()).add(e.principle)
    # the examples exercise the principles (not a vacuous check)
    assert {"cuda-guard", "platform-ladder", "cuda-only-module"} <= set().union(*seen.values())


TABLE_SILENCES = textwrap.dedent("""\
    import logging

    import torch

    logger = logging.getLogger(__name__)


    def report(rank):
        logger.info(f"rank {rank} peak {torch.cuda.max_memory_allocated()}")


    def seed(s):
        torch.manual_seed(s)
        torch.cuda.manual_seed(s)


    def props():
        if torch.cuda.is_available():
            return torch.cuda.get_device_properties(0)
    """)


def test_the_table_rules_list_each_silence_of_their_own(tmp_path):
    # a query only logged, a redundant seed and the test of CUDA-only code were left out
    # without a word before: every candidate not reported is listed with its principle
    (tmp_path / ".git").mkdir()
    (tmp_path / "stats.py").write_text(TABLE_SILENCES)
    r = run("check", "--no-cache", "--show-exempt", "--exit-zero", "stats.py", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    _, _, rest = r.stdout.partition("\nNot reported (")
    assert "stats.py:9:37: DL401 [print-only] the answer is only reported (an argument of " \
           "`info(...)`)\n" in rest
    assert "stats.py:14:5: DL404 [redundant-seed]" in rest and "(stats.py:13)\n" in rest
    assert "stats.py:18:8: DL401 [cuda-guard] the test guards code with no device-generic " \
           "form" in rest and "(stats.py:19)\n" in rest
    assert "stats.py:19:16: DL401 [cuda-guard] under a test that establishes CUDA " \
           "(stats.py:18)\n" in rest
    assert "4 candidates not reported: listed above.\n" in rest
    assert "All checks passed!" in r.stdout
