"""Writing an export without ever leaving half a file, or writing through a trap.

The file is written to a temporary file created exclusively in the target's
folder (`tempfile.mkstemp`: an unpredictable name, opened with O_EXCL, so a
link planted in a shared folder is never followed), through the descriptor
that created it, flushed to disk, and renamed over the target. On any
failure, Ctrl-C or SIGTERM the temporary file is removed and the old target
is left as it was; an OSError (a full disk, a read-only folder) is the
user's `write-failed` error, not a traceback.
"""
from __future__ import annotations

import errno
import os
import signal
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path

from ifr.errors import IfrError


@contextmanager
def atomic_output(path: Path):
    """A binary file to write `path`'s new content to; it replaces `path` only
    when the block succeeds."""
    path = Path(path)
    folder = path.parent
    if not folder.is_dir():
        raise IfrError("unwritable", f"cannot write {path}: no folder {folder}", None,
                       hint="create the folder first, or choose another path")
    existed, mode = path.exists(), _mode_for(path)
    try:
        fd, name = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise write_failed(path, exc, existed) from None
    temporary, replaced = Path(name), False
    try:
        with _terminate_raises(), os.fdopen(fd, "wb") as stream:
            yield stream
            stream.flush()
            os.fchmod(stream.fileno(), mode)
            os.fsync(stream.fileno())
        os.replace(temporary, path)
        replaced = True
    except OSError as exc:
        raise write_failed(path, exc, existed) from None
    finally:
        if not replaced:
            try:
                temporary.unlink()
            except OSError:
                pass


def write_failed(path: Path, exc: OSError, existed: bool) -> IfrError:
    reason = exc.strerror or str(exc)
    kept = f"{path.name} was left as it was" if existed else "nothing was written"
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        hint = f"free some space, or export to another disk ({kept})"
    else:
        hint = f"check that {path.parent} is writable and {path.name} is not open elsewhere ({kept})"
    return IfrError("write-failed", f"could not write {path}: {reason}", None, hint=hint)


def _mode_for(path: Path) -> int:
    """The permissions the file gets: the old file's, else what the umask allows
    (mkstemp's own 0600 would hide a shared plan from its readers)."""
    try:
        return path.stat().st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


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
