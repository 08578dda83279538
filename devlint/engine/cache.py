"""The result cache: each file's check-mode diagnostics, keyed by its content hash, devlint's own
code and the effective settings, so a re-run over an unchanged tree reads no source at all.

Layout: `<cache dir>/<engine key>/<settings key>/<shard>.json`, one shard per source directory
(the walk visits files directory by directory, so a run opens few shards). An entry maps a file
name and kind to the stat it was read with, the BLAKE2 digest of its bytes and its diagnostics:
- an unchanged stat (mtime, size, inode) is trusted without reading the file, except when the
  file was modified less than `RACY_S` seconds before the entry was written (a write in the same
  clock tick could leave the stat unchanged): then, and whenever the stat changed, the file is
  read and its digest decides;
- shards are written whole to a temp file and renamed over the old one, merged with what is on
  disk at that moment: concurrent runs never see a partial shard, at worst one run's new entries
  are lost and recomputed next time;
- a shard or an entry that does not decode is ignored (a miss) and rewritten.
Entries are JSON (never pickle: a cache dir may be shared, and loading it must not run code).
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sys
from enum import Enum

from devlint.engine.atomic import write_atomic

FORMAT = 2
RACY_S = 2.0
DIR_NAME = ".devlint_cache"


def digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def stat_key(st: os.stat_result) -> tuple:
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def default_dir() -> str:
    return os.environ.get("DEVLINT_CACHE_DIR") or DIR_NAME


_engine_key: str | None = None


def engine_key() -> str:
    """devlint's version and the stat of every file of the installed package: editing a rule or
    a data table in a development checkout invalidates the cache without a version bump."""
    global _engine_key
    if _engine_key is None:
        from devlint import _version

        root = os.path.dirname(os.path.abspath(_version.__file__))
        h = hashlib.blake2b(digest_size=8)
        h.update(f"{FORMAT} {_version.__version__} {sys.version_info[:2]}".encode())
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(filenames):
                if name.endswith((".pyc", ".pyo")):
                    continue
                full = os.path.join(dirpath, name)
                try:
                    st = os.stat(full)
                except OSError:
                    continue
                h.update(f"{os.path.relpath(full, root)} {st.st_size} {st.st_mtime_ns}\n".encode())
        _engine_key = f"{_version.__version__}-{h.hexdigest()}"
    return _engine_key


def settings_key(settings) -> str:
    """The effective settings' key, plus the directory their relative globs are anchored at."""
    raw = f"{settings.cache_key()}\0{getattr(settings, 'root', '')}"
    return hashlib.blake2b(raw.encode("utf-8", "surrogateescape"), digest_size=8).hexdigest()


# --- diagnostics <-> JSON ------------------------------------------------------------------

def _classes() -> dict:
    from devlint.diagnostics import Applicability, Diagnostic, Edit, Exempt, Fix

    return {c.__name__: c for c in (Diagnostic, Fix, Edit, Applicability, Exempt)}


def encode(value):
    """Plain JSON for Diagnostic and what it holds (dataclasses, enums, tuples)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {"@": type(value).__name__}
        for f in dataclasses.fields(value):
            if f.name != "path":
                out[f.name] = encode(getattr(value, f.name))
        return out
    if isinstance(value, tuple):
        return {"@t": [encode(v) for v in value]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, Enum):
        return {"@e": type(value).__name__, "v": value.value}
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(f"cannot cache a {type(value).__name__}")


_NESTED = (list, dict)  # the JSON values decode has to look into (the others are as stored)
_HAS_PATH: dict = {}  # class -> whether it has a `path` field (the entry's file, not stored)


def decode(value, path: str, classes: dict):
    if isinstance(value, list):
        return [decode(v, path, classes) if type(v) in _NESTED else v for v in value]
    if isinstance(value, dict):
        if "@t" in value:
            return tuple(decode(v, path, classes) if type(v) in _NESTED else v
                         for v in value["@t"])
        if "@e" in value:
            return classes[value["@e"]](value["v"])
        cls = classes[value["@"]]
        kwargs = {k: decode(v, path, classes) if type(v) in _NESTED else v
                  for k, v in value.items() if k != "@"}
        has_path = _HAS_PATH.get(cls)
        if has_path is None:
            has_path = _HAS_PATH[cls] = any(f.name == "path" for f in dataclasses.fields(cls))
        if has_path:
            kwargs["path"] = path
        return cls(**kwargs)
    return value


class Cache:
    """One run's view of the cache directory. Not shared between processes: workers return
    what they computed, the main process records it and saves once at the end."""

    def __init__(self, directory: str | None = None):
        self.directory = directory or default_dir()
        self._base = os.path.join(self.directory, engine_key())
        self._shards: dict = {}  # shard file -> {entry key: entry}
        self._dirty: dict = {}  # shard file -> {entry key: entry} written by this run
        self._settings_keys: dict = {}
        self._shard_of: dict = {}  # (directory as given, settings key) -> shard file
        self._classes = None
        self._last = None  # (path, kind, settings, entry) of the last entry found
        self._stats: dict = {}  # path as given -> the stat `lookup` was given
        self._abs_stats: dict | None = None
        self._abs_from = 0  # len(self._stats) when _abs_stats was built
        self.hits = 0
        self.misses = 0

    def side_file(self, *parts: str) -> str:
        """A file of another stage's own data, under this engine's cache directory."""
        return os.path.join(self._base, *parts)

    # entry: [mtime_ns, size, ino, digest, time the file was read, encoded diagnostics,
    #         encoded exempt entries (devlint.diagnostics.Exempt)]
    def _where(self, path: str, kind: str, settings) -> tuple[str, str]:
        skey = self._settings_keys.get(id(settings))
        if skey is None or skey[0] is not settings:
            skey = self._settings_keys[id(settings)] = (settings, settings_key(settings))
        d, name = os.path.split(path)
        shard = self._shard_of.get((d, skey[1]))
        if shard is None:
            ad = os.path.abspath(d or ".")
            h = hashlib.blake2b(ad.encode("utf-8", "surrogateescape"), digest_size=10).hexdigest()
            shard = self._shard_of[(d, skey[1])] = os.path.join(self._base, skey[1], h[:2],
                                                                 h + ".json")
        return shard, f"{name}\0{kind}"

    def _load(self, shard: str) -> dict:
        entries = self._shards.get(shard)
        if entries is None:
            entries = _read_shard(shard)
            self._shards[shard] = entries
        return entries

    def _entry(self, path, kind, settings):
        # a hit is asked for twice in a row (its diagnostics, then its exempt entries): the
        # last entry found is kept, until this run stores one
        last = self._last
        if last is not None and last[0] == path and last[1] == kind and last[2] is settings:
            return last[3]
        shard, key = self._where(path, kind, settings)
        e = self._load(shard).get(key)
        if not (isinstance(e, list) and len(e) == 7):
            return None
        self._last = (path, kind, settings, e)
        return e

    def lookup(self, path: str, kind: str, settings, st: os.stat_result | None):
        """(diagnostics, None) when the stat proves the entry current; else (None, digest) of
        the entry to confirm by content, or (None, None) when there is none."""
        if st is not None:
            self._stats[path] = st
        e = self._entry(path, kind, settings)
        if e is None:
            return None, None
        if st is not None and list(stat_key(st)) == e[:3] and isinstance(e[4], (int, float)) \
                and e[4] - st.st_mtime_ns / 1e9 >= RACY_S:
            diags = self._decode(e, path)
            if diags is not None:
                return diags, None
        return None, e[3] if isinstance(e[3], str) else None

    def stats(self) -> dict:
        """{absolute path: stat} of the files this run looked up, as the runner took them
        before linting: the project stage lists its packages with them rather than a stat of
        each file again."""
        # rebuilt when a lookup added a path since (the count of paths as given: two spellings
        # of one file make one absolute path, and must not make every call rebuild it)
        if self._abs_stats is None or self._abs_from != len(self._stats):
            self._abs_stats = {p if os.path.isabs(p) else os.path.abspath(p): st
                               for p, st in self._stats.items()}
            self._abs_from = len(self._stats)
        return self._abs_stats

    def confirmed(self, path: str, kind: str, settings, stamp) -> list | None:
        """The entry's diagnostics once a worker read the file and found the same digest."""
        e = self._entry(path, kind, settings)
        if e is None:
            return None
        diags = self._decode(e, path)
        if diags is not None:
            self._put(path, kind, settings, stamp, e[5], e[6])
        return diags

    def exempt_of(self, path: str, kind: str, settings) -> list:
        """The exempt entries stored with the current entry's diagnostics (`--show-exempt`;
        the whole-file ones always)."""
        e = self._entry(path, kind, settings)
        found = self._decode(e, path, 6) if e is not None else None
        return found or []

    def _decode(self, e, path, field=5):
        if e[field] == []:
            return []  # (most entries: no finding, nothing exempt)
        if self._classes is None:
            self._classes = _classes()
        try:
            diags = decode(e[field], path, self._classes)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError):
            return None
        return diags if isinstance(diags, list) else None

    def store(self, path: str, kind: str, settings, stamp, diagnostics, exempt=()) -> None:
        """Record check-mode diagnostics (and what was exempt) for stamp = (stat key,
        digest, time it was read)."""
        try:
            payload = encode(list(diagnostics))
            held = encode(list(exempt))
        except TypeError:
            return
        self._put(path, kind, settings, stamp, payload, held)

    def _put(self, path, kind, settings, stamp, payload, held):
        (mtime_ns, size, ino), dig, read_at = stamp
        shard, key = self._where(path, kind, settings)
        entry = [mtime_ns, size, ino, dig, read_at, payload, held]
        self._last = None
        self._load(shard)[key] = entry
        self._dirty.setdefault(shard, {})[key] = entry

    def save(self) -> None:
        """Write the shards this run changed, each merged with its current file. Never raises:
        a cache that cannot be written only makes the next run slower."""
        for shard, mine in self._dirty.items():
            try:
                os.makedirs(os.path.dirname(shard), exist_ok=True)
                entries = _read_shard(shard)
                entries.update(mine)
                write_atomic(shard, json.dumps(entries, separators=(",", ":")).encode("utf-8"),
                             keep_mode=False, fsync=False, prefix=".tmp-")
            except OSError:
                continue
        self._dirty.clear()
        try:
            _mark_cache_dir(self.directory)
        except OSError:
            pass


def _read_shard(shard: str) -> dict:
    try:
        with open(shard, "rb") as f:
            data = json.loads(f.read())
    except (OSError, ValueError):  # missing, unreadable or corrupt: start afresh
        return {}
    return data if isinstance(data, dict) else {}


def _mark_cache_dir(directory: str) -> None:
    """Like ruff's cache: ignored by git and by backup tools, without any setup."""
    for name, text in ((".gitignore", "# Automatically created by devlint.\n*\n"),
                       ("CACHEDIR.TAG", "Signature: 8a477f597d28d172789f06886806bc55\n"
                                        "# This file is a cache directory tag created by devlint.\n")):
        p = os.path.join(directory, name)
        if not os.path.exists(p):
            with open(p, "w", encoding="utf-8") as f:
                f.write(text)
