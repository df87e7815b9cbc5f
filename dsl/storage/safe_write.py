"""Writing a file without ever leaving half of it, or writing through a trap.

Every file ifr writes (a formatted model, an export, a plot, a shipped data
file, a cache entry) goes through `atomic_output`.  The new content is written
to a temporary file created exclusively in the target's folder
(`tempfile.mkstemp`: an unpredictable name, opened with O_EXCL, so a link
planted in a shared folder is never followed), through the descriptor that
created it, given the old file's permissions (else what the umask allows),
flushed to disk and renamed over the target.  On any failure, Ctrl-C or
SIGTERM the temporary file is removed and the old file is left as it was; an
OSError (a full disk, a read-only folder) is the user's `write-failed` error,
not a traceback.

A target that is a symbolic link of the user's own is written where it points,
so the link stays a link (an editor's or a build's link to a model).  A link
owned by someone else (one planted in /tmp) is never followed: the rename
replaces the link itself.  A target that is a folder, a device, a pipe or a
socket is refused before anything is written (a rename over /dev/null would
replace the device).
"""
from __future__ import annotations

import errno
import os
import signal
import stat
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path

from ifr.errors import IfrError

# At most this many links are followed from a target, as the kernel does (SYMLOOP_MAX).
MAX_LINKS = 40


@contextmanager
def atomic_output(path: Path, mode: int | None = None, durable: bool = True):
    """A binary stream for `path`'s new content; it replaces the file only when
    the block succeeds.

    ``mode`` forces the permissions (a private cache entry: 0o600); by default
    the old file's are kept.  ``durable=False`` skips the fsync, for a file
    whose torn copy after a power cut is detected and rebuilt (a cache entry).
    Raises IfrError: `unwritable` for a target that cannot be a file, or
    `write-failed`."""
    path = own_link_target(Path(path))
    folder = path.parent
    if not folder.is_dir():
        raise IfrError("unwritable", f"cannot write {path}: no folder {folder}", None,
                       hint="create the folder first, or choose another path")
    old = _old_file(path)
    try:
        fd, name = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise write_failed(path, exc, old is not None) from None
    temporary, replaced = Path(name), False
    try:
        with _terminate_raises(), os.fdopen(fd, "wb") as stream:
            yield stream
            stream.flush()
            _keep_attributes(stream.fileno(), old, mode)
            if durable:
                os.fsync(stream.fileno())
        os.replace(temporary, path)
        replaced = True
    except OSError as exc:
        raise write_failed(path, exc, old is not None) from None
    finally:
        if not replaced:
            try:
                temporary.unlink()
            except OSError:
                pass


def write_file(path: Path, data: bytes | str, mode: int | None = None, durable: bool = True) -> None:
    """Replace `path`'s content with `data` (a str is written as UTF-8), as `atomic_output` does."""
    with atomic_output(path, mode=mode, durable=durable) as stream:
        stream.write(data.encode("utf-8") if isinstance(data, str) else data)


def own_link_target(path: Path) -> Path:
    """Where writing `path` lands: the file its links point to while each link
    is this user's, else the first link that is not (which is replaced, never followed)."""
    uid = os.getuid() if hasattr(os, "getuid") else None
    for _ in range(MAX_LINKS):
        try:
            st = os.lstat(path)
        except OSError:
            return path
        if not stat.S_ISLNK(st.st_mode) or (uid is not None and st.st_uid != uid):
            return path
        path = path.parent / os.readlink(path)
    return path


def _old_file(path: Path) -> os.stat_result | None:
    """The target's status if it exists; refuses a target that is not a regular file."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISDIR(st.st_mode):
        raise IfrError("unwritable", f"cannot write {path}: it is a folder", None,
                       hint="give the path of a file, not of a folder")
    if not stat.S_ISREG(st.st_mode) and not stat.S_ISLNK(st.st_mode):
        raise IfrError("unwritable", f"cannot write {path}: it is not a regular file (a device, a pipe or a socket)",
                       None, hint="give the path of a file to write")
    return st if stat.S_ISREG(st.st_mode) else None


def _keep_attributes(fd: int, old: os.stat_result | None, mode: int | None) -> None:
    """The new file gets ``mode``, else the old file's permissions and, where
    allowed, its owner and group; a new file what the umask allows (mkstemp's
    own 0600 would hide a shared plan from its readers)."""
    if mode is None and old is not None:
        mode = stat.S_IMODE(old.st_mode)
        try:
            os.fchown(fd, old.st_uid, old.st_gid)
        except OSError:   # only root gives a file away; the writer's own file keeps its owner anyway
            pass
    if mode is None:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    os.fchmod(fd, mode)


def write_failed(path: Path, exc: OSError, existed: bool) -> IfrError:
    """The `write-failed` error for an OSError met while writing `path`."""
    reason = exc.strerror or str(exc)
    kept = f"{path.name} was left as it was" if existed else "nothing was written"
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        hint = f"free some space, or write to another disk ({kept})"
    else:
        hint = f"check that {path.parent} is writable and {path.name} is not open elsewhere ({kept})"
    return IfrError("write-failed", f"could not write {path}: {reason}", None, hint=hint)


class Terminated(SystemExit):
    """SIGTERM, raised so that cleanup (`finally`) runs before the process ends."""

    def __init__(self):
        super().__init__(128 + signal.SIGTERM)


@contextmanager
def _terminate_raises():
    """While writing, SIGTERM raises `Terminated` instead of ending the process
    at once (signal handlers can only be set in the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum, frame):
        raise Terminated()
    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
