"""A model's text, read as untrusted input: only a regular file named .ifr
(the name its links lead to), of bounded size, in UTF-8, with no lone
surrogate.  Every front end reads a model through `read_source`."""
from __future__ import annotations

import re
from pathlib import Path

from ifr.errors import IfrError, Span
from ifr.syntax.lines import split_lines

# A model is text a person wrote: anything bigger is not one (and reading it
# whole would cost the memory of a file such as /dev/zero).
MAX_SOURCE_BYTES = 8 * 1024 * 1024

def ifr_file(path: Path) -> Path | None:
    """The regular file named .ifr that ``path`` leads to once its symbolic links
    are followed, or None: a folder, a device, a link that loops or leads nowhere,
    a file of another name (a link `x.ifr` to `.env` is not a model)."""
    import os
    import stat
    try:
        real = Path(os.path.realpath(path, strict=True))
        return real if real.suffix == ".ifr" and stat.S_ISREG(real.stat().st_mode) else None
    except (OSError, RuntimeError, ValueError):
        return None


def not_an_ifr_file(path: Path, real: Path, span: Span | None) -> IfrError:
    """The error for a file reached as ``path`` that is ``real``, not named .ifr."""
    import os
    through = "" if os.path.abspath(path) == str(real) else f" (a link to {display_path(real)})"
    return IfrError("unreadable", f"{path} is not an .ifr file{through}", span,
                    hint="ifr reads models and modules from files named .ifr only")


def read_source(path: Path, span: Span | None = None, suffixes: tuple[str, ...] = (".ifr",),
                max_bytes: int = MAX_SOURCE_BYTES) -> str:
    """A file's text: only a regular file named .ifr (the name of what its links
    lead to, not the name as written), of at most MAX_SOURCE_BYTES, in UTF-8.
    A data table's file is read by the same rules, with its own ``suffixes``
    (`.csv`, `.tsv`) and size limit.

    A file of another name, a FIFO, a device or a folder is refused before
    anything is read from it; its content is never quoted.
    """
    kind = "an .ifr file" if suffixes == (".ifr",) else "a " + " or ".join(suffixes) + " file"
    import errno
    import os
    import stat
    try:
        real = Path(os.path.realpath(path))
    except ValueError:   # a NUL in the name
        raise IfrError("unreadable", f"cannot read {path}: a file's name cannot hold a NUL character", span) from None
    # O_NOFOLLOW: the file opened is the one whose name was checked, not a link swapped in since
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(real, flags)
    except FileNotFoundError:
        raise IfrError("no-such-file", f"no such file: {path}", span, hint="check the path") from None
    except IsADirectoryError:
        raise IfrError("unreadable", f"{path} is a directory, not {kind}", span) from None
    except OSError as exc:
        why = "a symbolic link that loops" if exc.errno == errno.ELOOP else exc.strerror
        raise IfrError("unreadable", f"cannot read {path}: {why}", span) from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IfrError("unreadable", f"{path} is a directory, not {kind}", span)
        if not stat.S_ISREG(st.st_mode):
            raise IfrError("unreadable", f"{path} is not a regular file (a device, a pipe or a socket)", span,
                           hint=f"give the path of {kind}")
        if real.suffix not in suffixes:
            if suffixes == (".ifr",):
                raise not_an_ifr_file(path, real, span)
            raise IfrError("unreadable", f"{path} is not {kind} (a link to {display_path(real)})", span)
        if st.st_size > max_bytes:
            raise IfrError("too-large", f"{path} has {st.st_size:,} bytes; {kind} may have at most "
                           f"{max_bytes:,}", span, hint="split the model into modules" if suffixes == (".ifr",)
                           else "keep the rows the model needs")
        with os.fdopen(fd, "rb") as f:
            fd = None
            data = f.read(max_bytes + 1)
    except OSError as exc:
        raise IfrError("unreadable", f"cannot read {path}: {exc.strerror}", span) from None
    finally:
        if fd is not None:
            os.close(fd)
    if len(data) > max_bytes:
        raise IfrError("too-large", f"{path} has more than {max_bytes:,} bytes", span)
    if data.startswith(b"\xef\xbb\xbf"):   # a UTF-8 byte-order mark, as some editors save
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        error = IfrError("encoding", f"{path} is not valid UTF-8 (byte 0x{data[exc.start]:02x})",
                         Span(str(path), line, col, line, col + 1), hint="save the file as UTF-8")
        error.text = data.decode("utf-8", errors="replace")   # to quote the line, for an .ifr file
        raise error from None


# A UTF-16 surrogate on its own is no character: UTF-8 cannot encode it (hashing the text would fail).
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def surrogates_replaced(text: str) -> str:
    """``text`` with each lone surrogate as U+FFFD: the same length, in characters and in UTF-16 units."""
    return LONE_SURROGATE.sub("\ufffd", text)


def surrogate_error(name: str, text: str, at: int) -> IfrError:
    lines = split_lines(text[:at] + "\ufffd")
    line, column = len(lines), len(lines[-1])
    return IfrError("encoding", f"{name} holds a lone UTF-16 surrogate (U+{ord(text[at]):04X}), which is no character",
                    Span(name, line, column, line, column + 1), hint="delete it, and type the character again")


def display_path(path: Path) -> str:
    """A module's path as messages show it: relative to the working folder when inside it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


