"""The folder ifr keeps its caches in, and how entries are written and read.

A cache only saves time, so nothing in it is trusted beyond what this user
wrote: the folder must belong to the user and be writable by nobody else
(another user could otherwise plant an entry), entries are plain JSON that
carry a format version and the key they were written under (checked on
read), and an entry that is missing, corrupt or for another key is ignored
and rebuilt.  Entries are written to a private temporary file and renamed, so
a reader never sees half of one.
"""
from __future__ import annotations

import atexit
import json
import os
import shutil
import stat
import tempfile
from functools import lru_cache
from pathlib import Path

FORMAT = 1   # bump when the layout of any entry changes

# The most the cache may hold; past it the entries used least recently go
# (when a run that wrote to it ends).  $IFR_CACHE_MAX_MB sets another size.
DEFAULT_MAX_MB = 256


def _is_private(path: Path) -> bool:
    """A folder (not a link to one) of this user's that group and others cannot write."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    if not stat.S_ISDIR(st.st_mode):
        return False
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return False
    return not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _make_private(path: Path) -> bool:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.mkdir(mode=0o700)
    except FileExistsError:
        pass
    except OSError:
        return False
    return _is_private(path) and os.access(path, os.W_OK | os.X_OK)


@lru_cache(maxsize=1)
def cache_dir() -> Path:
    """Where ifr keeps its caches (unit lookups, syntax trees, solutions).

    ``$IFR_CACHE_DIR``, else ``$XDG_CACHE_HOME/ifr`` or ``~/.cache/ifr``, made
    0700 when ifr creates it.  A folder that belongs to someone else, that group
    or others may write, or that cannot be made is not used: the run gets a
    fresh private folder (``tempfile.mkdtemp``) that is removed at exit.
    """
    root = os.environ.get("IFR_CACHE_DIR")
    if root:
        path = Path(root)
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        path = Path(base) / "ifr"
    if _make_private(path):
        return path
    scratch = Path(tempfile.mkdtemp(prefix="ifr-cache-"))
    atexit.register(shutil.rmtree, scratch, True)
    return scratch


def write_atomic(path: Path, data: str) -> None:
    """Write ``data`` to ``path`` as every file ifr writes (`ifr.safe_write`),
    private to the user and without an fsync: an entry torn by a power cut
    fails its check on read and is rebuilt.

    Failures are swallowed: a cache that cannot be written only costs time.
    """
    from .errors import IfrError
    from .safe_write import write_file
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        write_file(path, data, mode=0o600, durable=False)
    except (OSError, IfrError):
        pass


def save(path: Path, kind: str, key: str, payload) -> None:
    """Keep ``payload`` (plain JSON data) as the entry of ``kind`` under ``key``."""
    write_atomic(path, entry_text(kind, key, payload))
    _evict_at_exit()


def entry_text(kind: str, key: str, payload) -> str:
    """An entry as it is stored (also the form of the entries ifr ships)."""
    return json.dumps({"format": FORMAT, "kind": kind, "key": key, "payload": payload}, separators=(",", ":"))


@lru_cache(maxsize=1)
def _evict_at_exit() -> None:
    atexit.register(evict)


def max_bytes() -> int:
    """The cache's size cap in bytes: ``$IFR_CACHE_MAX_MB`` when it is a finite
    number of at least 0, else the default (a cap read at exit must not fail)."""
    import math
    try:
        megabytes = float(os.environ.get("IFR_CACHE_MAX_MB", DEFAULT_MAX_MB))
    except ValueError:
        megabytes = DEFAULT_MAX_MB
    if not math.isfinite(megabytes) or megabytes < 0:
        megabytes = DEFAULT_MAX_MB
    return int(megabytes * 1024 * 1024)


def entries(folder: Path | None = None) -> list[tuple[Path, os.stat_result]]:
    """Every file in the cache folder, with its size and time of last use."""
    folder = folder or cache_dir()
    found = []
    for root, _dirs, files in os.walk(folder):
        for name in files:
            path = Path(root) / name
            try:
                found.append((path, path.lstat()))
            except OSError:
                pass
    return found


def evict(limit: int | None = None) -> int:
    """Delete the entries used least recently until the cache holds at most
    80% of ``limit`` bytes (when it holds more than ``limit``).  Returns the
    number deleted."""
    limit = max_bytes() if limit is None else limit
    found = entries()
    total = sum(st.st_size for _, st in found)
    if total <= limit:
        return 0
    deleted = 0
    for path, st in sorted(found, key=lambda e: e[1].st_mtime):
        if total <= 0.8 * limit:
            break
        try:
            path.unlink()
            total -= st.st_size
            deleted += 1
        except OSError:
            pass
    return deleted


def clear() -> int:
    """Delete every entry; returns how many there were."""
    found = entries()
    for path, _ in found:
        try:
            path.unlink()
        except OSError:
            pass
    return len(found)


def load(path: Path, kind: str, key: str, object_hook=None, shipped: bool = False):
    """The payload saved under ``key``, or None if the entry is missing, corrupt
    or another's.  ``object_hook`` builds objects while the JSON is read; it
    raises ValueError on data it does not accept.  A ``shipped`` entry (one of
    ifr's own files, not the cache's) is read without marking it used."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        entry = json.loads(path.read_text(encoding="utf-8"), object_hook=object_hook)
    except (OSError, ValueError, TypeError, UnicodeDecodeError, RecursionError):
        return None
    if (not isinstance(entry, dict) or entry.get("format") != FORMAT or entry.get("kind") != kind
            or entry.get("key") != key or "payload" not in entry):
        return None
    if shipped:
        return entry["payload"]
    try:
        os.utime(path)   # a use: the entries used least recently are the first evicted
    except OSError:
        pass
    return entry["payload"]
