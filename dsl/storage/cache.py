"""The folder ifr keeps its caches in, and how entries are written and read.

A cache only saves time, so nothing in it is trusted beyond what this user
wrote: the folder must belong to the user and be writable by nobody else
(another user could otherwise plant an entry), entries are plain JSON that
carry a format version and the key they were written under (checked on
read), and an entry that is missing, corrupt or for another key is ignored
and rebuilt.  Entries are written to a private temporary file and renamed, so
a reader never sees half of one.

The folder is ifr's only when it says so: ifr tags it with a `CACHEDIR.TAG`
(https://bford.info/cachedir/: the standard signature line, then a line
naming ifr's cache format) when it makes the folder or finds it empty, or
holding nothing but entries of ifr's own names (a cache of an earlier
version).  A folder that holds anything else (`IFR_CACHE_DIR=~/.cache`, a
project) is not used: the run takes a private temporary cache and says so
once on stderr.  Eviction and `ifr cache clear` delete only regular files
(never a link, nor what it leads to) whose names are ifr's entry names, at
the top of a tagged folder or in ifr's own subfolders of it; what else is
in the folder is never touched.
"""
from __future__ import annotations

import atexit
import json
import os
import re
import stat
import sys
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


# The cache directory tag: its first line is the standard's, the last names ifr's layout.
TAG = "CACHEDIR.TAG"
SIGNATURE = "Signature: 8a477f597d28d172789f06886806bc55"
TAG_TEXT = (f"{SIGNATURE}\n# This file is a cache directory tag created by ifr.\n"
            "# For information about cache directory tags, see https://bford.info/cachedir/\n"
            f"# ifr cache: JSON entries, format {FORMAT}\n")
_IFR_LINE = "\n# ifr cache: "

# ifr's entry names: at the top of the folder, and in each of its subfolders (a key is a sha256; a
# temporary file is write_atomic's `.<name>.<random>.tmp` or the closed forms' `<key>.<pid>.tmp`).
_TOP = re.compile(r"(units-[0-9a-f]{16}\.txt|units-(?:lookups|digest)\.json)"
                  r"|\.(units-[0-9a-f]{16}\.txt|units-(?:lookups|digest)\.json|CACHEDIR\.TAG)\.\w+\.tmp")
_ENTRY = re.compile(r"[0-9a-f]{64}\.(json|pickle)|\.[0-9a-f]{64}\.json\.\w+\.tmp|[0-9a-f]{64}\.\d+\.tmp")
SUBFOLDERS = ("syntax", "solutions", "montecarlo")
# What versions before the tag left (pint's and lark's pickles): a folder holding them is still
# ifr's, but they are neither read nor deleted.
_EARLIER = {"parser.lark.cache", "pint"}

# Whether cache_dir() says on stderr that it refused a folder (`ifr cache` reports it itself).
WARN = True
_REFUSED: list[Path] = []


@lru_cache(maxsize=1)
def cache_dir() -> Path:
    """Where ifr keeps its caches (unit lookups, syntax trees, solutions).

    ``$IFR_CACHE_DIR``, else ``$XDG_CACHE_HOME/ifr`` or ``~/.cache/ifr``, made
    0700 when ifr creates it.  A folder that belongs to someone else, that group
    or others may write, or that cannot be made is not used, nor one that holds
    files ifr did not write (it says so once on stderr): the run gets a fresh
    private folder (``tempfile.mkdtemp``) that is removed at exit.
    """
    root = os.environ.get("IFR_CACHE_DIR")
    if root:
        path = Path(root)
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        path = Path(base) / "ifr"
    if _make_private(path):
        if _claim(path):
            return path
        _REFUSED.append(path)
        if WARN:
            print(refusal(path, "warning"), file=sys.stderr)
    import shutil
    import tempfile
    scratch = Path(tempfile.mkdtemp(prefix="ifr-cache-"))
    atexit.register(shutil.rmtree, scratch, True)
    _claim(scratch)
    return scratch


def refused() -> Path | None:
    """The folder asked for that this process does not use because it holds files ifr did not write."""
    cache_dir()
    return _REFUSED[-1] if _REFUSED else None


def refusal(path: Path, severity: str) -> str:
    """What ifr says of a cache folder it does not use for holding files it did not write."""
    from ifr.errors import IfrError, render
    then = "; using a temporary cache for this run" if severity == "warning" else "; ifr deletes nothing there"
    return render(IfrError("cache-folder", f"{path} holds files ifr did not write{then}", None,
                           hint="point IFR_CACHE_DIR at an empty or new folder", severity=severity))


def _claim(path: Path) -> bool:
    """Whether ``path`` is ifr's cache folder: tagged as one, or holding nothing but
    ifr's entries (an empty folder, a cache of an earlier version), which is then tagged."""
    if _tagged(path):
        return True
    if not _only_ifrs(path):
        return False
    write_atomic(path / TAG, TAG_TEXT)
    return True


def _tagged(path: Path) -> bool:
    """Whether ``path`` holds ifr's tag: a regular file (a link there is not followed)."""
    try:
        fd = os.open(path / TAG, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return False
    with os.fdopen(fd, "rb") as f:
        try:
            text = f.read(1024).decode("utf-8", "replace") if stat.S_ISREG(os.fstat(fd).st_mode) else ""
        except OSError:
            return False
    return text.startswith(SIGNATURE) and _IFR_LINE in text


def _only_ifrs(path: Path) -> bool:
    """Whether every file in ``path`` has one of ifr's names, in its place (links are not ifr's)."""
    try:
        with os.scandir(path) as found:
            for entry in found:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name in _EARLIER:
                        continue
                    if entry.name not in SUBFOLDERS or len(_files(Path(entry.path), _ENTRY)) != _count(entry.path):
                        return False
                elif not (entry.is_file(follow_symlinks=False)
                          and (_TOP.fullmatch(entry.name) or entry.name in _EARLIER or entry.name == TAG)):
                    return False
    except OSError:
        return False
    return True


def _count(folder) -> int:
    with os.scandir(folder) as found:
        return sum(1 for _ in found)


def _files(folder: Path, names: re.Pattern) -> list[tuple[Path, os.stat_result]]:
    """The regular files (not links) directly in ``folder`` whose names ``names`` matches."""
    out = []
    try:
        with os.scandir(folder) as found:
            for entry in found:
                if names.fullmatch(entry.name):
                    st = entry.stat(follow_symlinks=False)
                    if stat.S_ISREG(st.st_mode):
                        out.append((Path(entry.path), st))
    except OSError:
        pass
    return out


def write_atomic(path: Path, data: str) -> None:
    """Write ``data`` to ``path`` as every file ifr writes (`ifr.storage.safe_write`),
    private to the user and without an fsync: an entry torn by a power cut
    fails its check on read and is rebuilt.

    Failures are swallowed: a cache that cannot be written only costs time.
    """
    from ifr.errors import IfrError
    from ifr.storage.safe_write import write_file
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
    """Every entry of ifr's in the cache folder, with its size and time of last use: the files
    of ifr's names at its top and in ifr's subfolders (none in a folder not tagged as ifr's)."""
    folder = folder or cache_dir()
    if not _tagged(folder):
        return []
    found = _files(folder, _TOP)
    for sub in SUBFOLDERS:
        try:
            if stat.S_ISDIR(os.lstat(folder / sub).st_mode):   # a link in its place is not followed
                found += _files(folder / sub, _ENTRY)
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
