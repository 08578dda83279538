"""The stage driver: per package, the exemptions of the files with findings (stored, when
nothing in the package changed), and how a file's exemption filters its findings."""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field

from devlint.engine.cache import RACY_S
import devlint.engine.project.callees as callees
from devlint.engine.project.defaults import candidates, dead_defaults, has_candidates
from devlint.engine.project.index import Project
from devlint.engine.project.package import package_of
from devlint.engine.project.store import _read_json, _write_json
from devlint.evidence import Reason


# findings about the file itself, not a device hardcoding: never exempted
_KEEP = {"DL900", "DL902", "DL999", "DL000"}


@dataclass
class Exemption:
    """What the project stage exempts in one file: all of it, or some module-level functions."""

    module: str | None = None  # why the whole module is CUDA-only (a Reason)
    functions: dict = field(default_factory=dict)  # function name -> why (a Reason)
    # the functions only called under a platform test (not all in CUDA-only modules): like
    # code under an in-file CUDA guard, their table-API uses are still findings
    guarded: set = field(default_factory=set)
    # findings (by start offset) in a parameter default every call in the package overrides
    defaults: dict = field(default_factory=dict)
    # findings ((start offset, code) -> Reason) in bodies an imported CUDA gate covers, or
    # under a test of a value an imported function makes only on CUDA (`xgates`, `xguards`)
    gated: dict = field(default_factory=dict)
    # findings (by start offset) in a function that always calls a CUDA-requiring project
    # function (`callees`, the calls-cuda-only principle)
    callers: dict = field(default_factory=dict)
    # findings in the one module-level function or class that calls into a CUDA-only project
    # module ([first row, last row, Reason]; `Project.calls_cuda_only`)
    rows: list = field(default_factory=list)

    def __bool__(self):
        return bool(self.module or self.functions or self.defaults or self.gated
                    or self.callers or self.rows)


# --- the stage ---------------------------------------------------------------------------

def exemptions(results, cache=None, project: Project | None = None) -> dict:
    """{absolute path: Exemption} for the Python files of `results` (FileResults) that have
    findings. cache: the run's result cache, whose directory also keeps the stage's facts."""
    project = project or Project(cache)
    try:
        return _exemptions(results, project)
    finally:
        project.save()


def _exemptions(results, project: Project) -> dict:
    """Per package: the stored answer when no file of the package changed and the findings'
    functions are the same, else computed (from stored per-file facts where they hold)."""
    project.seed(results)
    packages: dict = {}  # (root, top) -> {path: (modname, scopes)}
    for res in results:
        scopes = {d.scope for d in res.diagnostics if d.code not in _KEEP}
        if not scopes or not res.path.endswith((".py", ".pyi")):
            continue
        pkg = package_of(res.path)
        if pkg is not None:
            root, modname = pkg
            packages.setdefault((root, modname.split(".")[0]), {})[
                os.path.abspath(res.path)] = (modname, sorted(scopes - {None}))
    out = {}
    for (root, top), wanted in packages.items():
        h, fresh = _package_key(project, root, top)
        h.update(json.dumps(sorted(wanted.items())).encode("utf-8", "surrogateescape"))
        memo = project.memo_file(root, top)
        stored = _read_json(memo) if memo and fresh else None
        if isinstance(stored, dict) and stored.get("key") == h.hexdigest():
            found = {p: Exemption(m and Reason.from_dict(m),
                                  {n: Reason.from_dict(r) for n, r in f.items()}, set(g),
                                  rows=[[lo, hi, Reason.from_dict(r)] for lo, hi, r in rs])
                     for p, (m, f, g, rs) in stored["exempt"].items()}
        else:
            found = {}
            for path, (modname, names) in wanted.items():
                ex = _exemption(project, path, root, modname, names)
                if ex:
                    found[path] = ex
            if memo and fresh:
                _write_json(memo, {"key": h.hexdigest(), "exempt": {
                    p: [_stored(e.module), {n: _stored(r) for n, r in e.functions.items()},
                        sorted(e.guarded), [[lo, hi, _stored(r)] for lo, hi, r in e.rows]]
                    for p, e in found.items()}})
        out.update(found)
    for path, dead in _dead_defaults(project, results).items():
        out.setdefault(path, Exemption()).defaults = dead
    # --- imported gates and guards, launched workers (xgates, xguards, xworkers) ---
    from devlint.engine.project.xgates import gated_findings
    from devlint.engine.project.xguards import guarded_findings

    def key_of(root, top):
        return _package_key(project, root, top)

    from devlint.engine.project.xworkers import worker_findings

    # --- dispatch arms whose twin a base class of another module defines (xtwins) ---
    from devlint.engine.project.xtwins import twin_arm_findings
    # --- end dispatch arms ---

    # --- skip gates reading an imported capability or GPU-library flag (xflags) ---
    from devlint.engine.project.xflags import flag_gated_findings
    # --- end imported flags ---

    # --- options that only tell the CPU from an accelerator (xswitch) ---
    from devlint.engine.project.xswitch import switch_findings
    # --- end options ---

    for found in (gated_findings(project, results, key_of),
                  switch_findings(project, results, key_of),
                  flag_gated_findings(project, results, key_of),
                  guarded_findings(project, results, key_of),
                  worker_findings(project, results),
                  twin_arm_findings(project, results, key_of)):
        for path, gated in found.items():
            ex = out.setdefault(path, Exemption())
            ex.gated = {**gated, **ex.gated}
    # --- end imported gates and guards, launched workers ---
    for path, found in callees.findings(project, results, _KEEP, key_of).items():
        out.setdefault(path, Exemption()).callers = found
    # --- functions every caller of which runs on CUDA, across modules (xcallers) ---
    from devlint.engine.project.xcallers_run import caller_findings

    for path, found in caller_findings(project, results,
                                       lambda d, p: keep(d, out.get(p)), key_of).items():
        ex = out.setdefault(path, Exemption())
        ex.gated = {**found, **ex.gated}
    # --- end functions called on CUDA across modules ---
    # --- modules every reference to which runs on CUDA only (xreach, crossmod) ---
    from devlint.engine.project.xreach import reach_findings

    for path, found in reach_findings(project, results,
                                      lambda d, p: keep(d, out.get(p)), key_of).items():
        ex = out.setdefault(path, Exemption())
        ex.gated = {**found, **ex.gated}
    # --- end modules reached on CUDA only ---
    return out


def _package_key(project: Project, root: str, top: str):
    """(a hash of the stat of every file of the package, whether none changed within
    RACY_S: a file changed that recently could change again unseen, so no answer is reused)."""
    memo = project.__dict__.setdefault("_package_keys", {})
    if (root, top) not in memo:  # four passes ask it per package: hashed once per run
        h = hashlib.blake2b(digest_size=16)
        for path, st in project.files(root, top) + project.sources(root, top):
            h.update(f"{path}\0{st.st_mtime_ns}\0{st.st_size}\0{st.st_ino}\n".encode(
                "utf-8", "surrogateescape"))
        fresh = all(project.now - st.st_mtime_ns / 1e9 >= RACY_S
                    for _, st in project.files(root, top))
        memo[(root, top)] = h, fresh
    h, fresh = memo[(root, top)]
    return h.copy(), fresh  # the callers add their own parts to it


def _dead_defaults(project: Project, results) -> dict:
    """{absolute path: {finding start: Reason}} of the findings in dead parameter defaults
    (`defaults.dead_defaults`). Per package, the answer is stored beside the stage's own,
    keyed by the package's files and the candidate findings' places (and the paths as the
    run names them, which the reasons quote): a warm re-run parses nothing."""
    packages: dict = {}  # (root, top) -> [FileResult with a candidate]
    for res in results:
        if res.diagnostics and res.path.endswith(".py") and has_candidates(res):
            pkg = package_of(res.path)
            if pkg is not None:
                packages.setdefault((pkg[0], pkg[1].split(".")[0]), []).append(res)
    out = {}
    for (root, top), found in packages.items():
        h, fresh = _package_key(project, root, top)
        h.update(json.dumps([[r.path, candidates(r)] for r in found]).encode(
            "utf-8", "surrogateescape"))
        memo = project.memo_file(root, top)
        memo = memo and memo[:-len(".exempt.json")] + ".defaults.json"
        stored = _read_json(memo) if memo and fresh else None
        if isinstance(stored, dict) and stored.get("key") == h.hexdigest():
            for path, dead in stored["defaults"].items():
                out[path] = {int(start): Reason.from_dict(r) for start, r in dead}
            continue
        answer = {}
        for res in found:
            dead = dead_defaults(project, res)
            if dead:
                answer[os.path.abspath(res.path)] = dead
        if memo and fresh:
            _write_json(memo, {"key": h.hexdigest(), "defaults": {
                p: [[start, _stored(r)] for start, r in dead.items()]
                for p, dead in answer.items()}})
        out.update(answer)
    return out


def _stored(reason):
    """A reason as the JSON store keeps it (`Reason.to_dict()`; None stays None)."""
    if not reason:
        return None
    return reason.to_dict() if isinstance(reason, Reason) else Reason.from_dict(reason).to_dict()


def _exemption(project: Project, path: str, root: str, modname: str, names) -> Exemption:
    ex = Exemption(project.calls_cuda_only(path, modname, root)
                   or project.double_of(path, modname, root)
                   or project.kernel_package(path, root, modname))
    if not ex.module and path in project.scoped:
        reason, (_, lo, hi) = project.scoped[path]
        ex.rows = [[lo, hi, reason]]
    if ex.module or not names:
        return ex
    found = project.cuda_callers_only(path, modname, root, names)
    ex.functions = {n: why for n, (why, _) in found.items()}
    ex.guarded = {n for n, (_, by_test) in found.items() if by_test}
    return ex


def keep(diag, ex: Exemption | None) -> bool:
    """Whether a finding survives its file's exemption."""
    if not ex or diag.code in _KEEP:
        return True
    if ex.module or diag.start in ex.defaults or (diag.start, diag.code) in ex.gated \
            or diag.start in ex.callers \
            or any(lo <= diag.location[0] <= hi for lo, hi, _ in ex.rows):
        return False
    if diag.scope not in ex.functions:
        return True
    return diag.table_api and diag.scope in ex.guarded


def filtered(diags, ex: Exemption | None) -> list:
    """The findings that survive their file's exemption."""
    return [d for d in diags if keep(d, ex)] if ex else diags


def fix_filter(lint, ex: Exemption | None):
    """`lint` for the fix loop, with the file's exemption applied. The exemption names some
    findings by their place in the text the stage read (`defaults`, `gated`); a fix elsewhere
    in the file moves them, so the findings it drops from that text are followed by what they
    say (code and source) through the later rounds, and dropped there too."""
    if not ex:
        return lint
    dropped: list = []  # [(code, source)] dropped from the first text, still to be met
    first = [True]

    def drop(diags, text):
        """The findings of a later text that the first text's exemption drops."""
        left = list(dropped)
        out = []
        for d in filtered(diags, ex):
            k = (d.code, text[d.start:d.end])
            if k in left:
                left.remove(k)
                continue
            out.append(d)
        return out

    def run(text):
        diags = lint(text)
        if first[0]:
            first[0] = False
            kept = filtered(diags, ex)
            ids = {id(d) for d in kept}
            dropped.extend((d.code, text[d.start:d.end]) for d in diags if id(d) not in ids)
            return kept
        return drop(diags, text)

    run.drop = drop
    return run


def apply(results, exempt: dict) -> int:
    """Drop exempted findings from `results` in place (each one becomes an exempt entry of
    its result, for `--show-exempt`; a module exempt as a whole also a whole-file entry);
    returns how many were dropped."""
    from devlint.diagnostics import ALL_RULES, exempt_from_reason

    dropped = 0
    for res in results:
        ex = exempt.get(os.path.abspath(res.path)) if res.diagnostics else None
        if ex and res.changed and (ex.defaults or ex.gated or ex.rows):
            # fixed: the findings named by their place were dropped by the fix pass
            # (`fix_filter`), and the places have moved
            ex = Exemption(ex.module, ex.functions, ex.guarded)
        if ex:
            kept = filtered(res.diagnostics, ex)
            kept_ids = {id(d) for d in kept}
            gone = [d for d in res.diagnostics if id(d) not in kept_ids]
            if ex.module and not any(e.whole_file and e.rules == ALL_RULES
                                     for e in getattr(res, "exempt", ())):
                res.exempt.insert(0, exempt_from_reason(ex.module, None, "", res.path,
                                                        rules=ALL_RULES))
            for d in gone:
                why = ex.module or ex.defaults.get(d.start) or ex.gated.get(
                    (d.start, d.code)) or ex.callers.get(d.start) or next(
                    (r for lo, hi, r in ex.rows if lo <= d.location[0] <= hi), None) \
                    or ex.functions[d.scope]
                e = exempt_from_reason(why, d.code, d.name,
                                       res.path, d.start, d.end)
                e.location, e.end_location = d.location, d.end_location
                res.exempt.append(e)
            res.diagnostics = kept
            dropped += len(gone)
    return dropped
