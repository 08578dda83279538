"""The project stage's answers for the modules of namespace packages (folders without
`__init__.py`), which `xgates.per_package` cannot group by package: stored per file, so a
warm run answers none of them again (sglang's `python/sglang/` is such a package: its warm
run re-walked every caller of every function with a finding, 18 CPU s)."""
from __future__ import annotations

import json
import os

from devlint.engine.project.xgates import _stat
from devlint.evidence import Reason


class NamespaceAnswers:
    """The answers for the modules of namespace packages (no `__init__.py` above them), which
    `per_package` cannot group: stored per file, in a memo of its folder beside the stage's,
    keyed by the file's stat and the digest of its text (as the result cache keys its
    entries: a content change that keeps the stat is seen), the package its absolute imports name (`_State.module`: the
    files `_function_sites` reads are that package's), that package's key (`key_of`: the stat
    of each of its files) and the places of the findings left; a warm run walks no caller."""

    def __init__(self, project, key_of, module_of, compute, suffix="xcallers"):
        self.suffix = suffix  # the memo's name: one per pass (`xcallers`, `xreach`)
        self.project, self.key_of = project, key_of
        self.module_of = module_of  # path -> (root, dotted module) | None
        self.compute = compute  # (path, FileResult-like) -> {(start, code): Reason}
        self.memos: dict = {}  # memo path -> {path: entry}
        self.dirty: set = set()

    def _memo(self, path):
        if self.key_of is None:
            return None
        memo = self.project.memo_file(os.path.dirname(path), "")
        if memo is None:
            return None
        memo = memo[:-len(".exempt.json")] + f".{self.suffix}.json"
        if memo not in self.memos:
            from devlint.engine.project.store import _read_json

            data = _read_json(memo)
            self.memos[memo] = data if isinstance(data, dict) else {}
        return memo

    def _key(self, root, top, res):
        h, fresh = self.key_of(root, top)
        h.update(json.dumps([res.path, sorted((d.start, d.code) for d in res.diagnostics)])
                 .encode("utf-8", "surrogateescape"))
        return h.hexdigest() if fresh else None

    def _digest(self, path):
        """The digest of the file's text as the stage reads it (what `compute` answers
        from): an answer is reused only for the same content, whatever its stat says."""
        from devlint.engine.cache import digest

        text = self.project.text(path)
        return None if text is None else digest(text.encode("utf-8", "surrogateescape"))

    def answer(self, path, res) -> dict:
        memo = self._memo(path)
        st = _stat(path)
        entry = self.memos[memo].get(path) if memo else None
        if isinstance(entry, dict) and st is not None and entry.get("stat") == st \
                and entry.get("digest") is not None \
                and entry.get("digest") == self._digest(path) \
                and isinstance(entry.get("pkg"), list) and len(entry["pkg"]) == 2 \
                and isinstance(entry.get("called"), list):
            key = self._key(*entry["pkg"], res)
            if key is not None and entry.get("key") == key:
                return {(start, code): Reason.from_dict(r)
                        for start, code, r in entry["called"]}
        found = self.compute(path, res)
        pkg = self.module_of(path)
        if memo and pkg is not None and st is not None:
            root, top = pkg[0], pkg[1].split(".")[0]
            key = self._key(root, top, res) \
                if path.startswith(os.path.join(root, top) + os.sep) else None
            if key is not None:
                self.memos[memo][path] = {"stat": st, "digest": self._digest(path),
                                          "pkg": [root, top], "key": key, "called": [
                    [start, code, r.to_dict()] for (start, code), r in found.items()]}
                self.dirty.add(memo)
        return found

    def save(self):
        from devlint.engine.project.store import _write_json

        for memo in sorted(self.dirty):
            _write_json(memo, self.memos[memo])
