"""The project stage's store: per-file facts kept in the cache directory, keyed by each
file's stat, and the JSON helpers it writes them with."""
from __future__ import annotations

import hashlib
import json
import os
import time

from devlint.engine.atomic import write_atomic
from devlint.engine.cache import RACY_S


class FactStore:
    """Per-file facts of the project stage, kept across runs in the cache directory and keyed
    by each file's stat (like the result cache): `imports`, a module's own CUDA-only reason,
    the imported names it calls unconditionally, where it uses a name. A warm run re-reads
    none of the package's files."""

    def __init__(self, path: str | None):
        self.path = path
        self.entries: dict = {}  # abs path -> [mtime_ns, size, ino, {fact: value}]
        self.dirty = False
        self.now = time.time()
        if path:
            try:
                with open(path, "rb") as f:
                    data = json.loads(f.read())
                if isinstance(data, dict):
                    self.entries = data
            except (OSError, ValueError):
                pass

    def facts(self, path: str, st=None) -> dict:
        """The facts recorded for the file as it is now (a fresh dict when it changed)."""
        if st is None:
            try:
                st = os.stat(path)
            except OSError:
                return {}
        return self.facts_at(path, (st.st_mtime_ns, st.st_size, st.st_ino))

    def facts_at(self, path: str, stat_key, read_at: float | None = None) -> dict:
        """The facts of the file as it was at `stat_key` (mtime_ns, size, inode), read at
        `read_at` (default: when the store was opened, before this run read anything)."""
        key = list(stat_key)
        e = self.entries.get(path)
        if isinstance(e, list) and len(e) == 4 and e[:3] == key and isinstance(e[3], dict):
            return e[3]
        facts: dict = {}
        # a file modified within RACY_S of its read may change again within the same mtime
        # tick, keeping its stat: such facts are not kept
        if (self.now if read_at is None else read_at) - key[0] / 1e9 >= RACY_S:
            self.entries[path] = key + [facts]
        return facts

    def save(self, present=None) -> None:
        """Write the store if it changed; `present`: every file the package has now (entries
        of the others, deleted or renamed, are dropped)."""
        if present is not None:
            gone = [p for p in self.entries if p not in present]
            for p in gone:
                del self.entries[p]
            self.dirty = self.dirty or bool(gone)
        if self.path and self.dirty:
            _write_json(self.path, self.entries)


def _key_hash(key: str) -> str:
    return hashlib.blake2b(key.encode("utf-8", "surrogateescape"), digest_size=10).hexdigest()


def _read_json(path: str):
    try:
        with open(path, "rb") as f:
            return json.loads(f.read())
    except (OSError, ValueError):
        return None


def _write_json(path: str, data) -> None:
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        write_atomic(path, json.dumps(data, separators=(",", ":")).encode("utf-8"),
                     keep_mode=False, fsync=False, prefix=".tmp-")
    except OSError:
        pass
