"""The parts of an .xlsx file, read as untrusted input.

The zip's central directory is checked before anything is unpacked: the
number of parts, each part's uncompressed size and their sum are capped, so
a 0.5 MB file that would inflate to 500 MB is refused unread. Reading a part
stops at the size the directory gave (zipfile's own limit, checked again
here), so a directory that understates a part fails the CRC check instead of
buying memory. XML is parsed with expat and streamed as events; a DOCTYPE is
refused, so no entity is ever expanded, and so is nesting deeper than any
workbook needs.
"""
from __future__ import annotations

import struct
import zipfile
import zlib
from pathlib import Path
from xml.parsers import expat

from ifr.errors import IfrError

MAX_PARTS = 10_000
MAX_PART_BYTES = 64 * 2 ** 20       # an exported sheet is well under 10 MB
MAX_TOTAL_BYTES = 256 * 2 ** 20
MAX_FILE_BYTES = 256 * 2 ** 20
MAX_DEPTH = 64                      # SpreadsheetML nests a dozen elements deep at most
HINT = "give the workbook that `ifr export` wrote, saved as .xlsx"
_CHUNK = 64 * 1024

# What zipfile and the decompressors under it raise for a damaged archive: bad
# deflate data (zlib.error), a bad CRC or header (BadZipFile), data cut short
# (EOFError), an unsupported or mislabelled method (NotImplementedError, OSError
# from bz2, LZMAError, which is an Exception), an encrypted member (RuntimeError),
# fields out of range (struct.error, OverflowError, ValueError), a name missing
# from the directory (KeyError). Any of them makes the file unreadable, not a bug.
try:
    from lzma import LZMAError
except ImportError:                 # a Python built without lzma cannot open such a member at all
    LZMAError = zlib.error
DAMAGED = (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, LZMAError, EOFError, OSError, ValueError,
           NotImplementedError, RuntimeError, struct.error, OverflowError, KeyError, IndexError)


class Parts:
    """An .xlsx zip whose parts are read as streams of XML events, within the caps."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._zip = _open_zip(self.path)
        self._infos = {info.filename.lower(): info for info in self._zip.infolist()}
        self._budget = MAX_TOTAL_BYTES

    def close(self) -> None:
        self._zip.close()

    def error(self, code: str, message: str, hint: str = HINT) -> IfrError:
        return IfrError(code, f"{self.path}: {message}", None, hint=hint)

    def has(self, part: str | None) -> bool:
        return part is not None and part.lower() in self._infos

    def events(self, part: str):
        """(event, tag, attributes, text) of an XML part, streamed: `start` and
        `end` events with local tag and attribute names; `text` is set on `end` only."""
        info = self._infos.get(part.lower())
        if info is None:
            raise self.error("unreadable", f"the part {part} is missing")
        self._budget -= info.file_size
        if self._budget < 0:
            raise self.error("workbook-too-large", f"its parts add up to more than "
                             f"{MAX_TOTAL_BYTES // 2 ** 20} MB uncompressed")
        return self._events(part, info)

    def _events(self, part: str, info: zipfile.ZipInfo):
        handler = _Handler()
        read = 0
        try:
            with self._zip.open(info) as stream:
                while True:
                    chunk = stream.read(_CHUNK)
                    read += len(chunk)
                    if read > info.file_size:      # never more than the directory promised
                        raise zipfile.BadZipFile("part larger than its directory entry")
                    handler.parser.Parse(chunk, not chunk)
                    yield from handler.events
                    handler.events.clear()
                    if not chunk:
                        return
        except expat.ExpatError as exc:
            raise self.error("unreadable", f"the part {part} is not well-formed XML "
                             f"({expat.ErrorString(exc.code)}, line {exc.lineno}, column {exc.offset + 1})") from None
        except _RefuseDoctype:
            raise self.error("unreadable", f"the part {part} declares a DOCTYPE, which no .xlsx part has") from None
        except _TooDeep:
            raise self.error("unreadable", f"the part {part} nests elements more than {MAX_DEPTH} deep") from None
        except DAMAGED as exc:
            raise self.error("unreadable", f"the part {part} cannot be unpacked ({_reason(exc)})") from None


class _RefuseDoctype(Exception):
    pass


class _TooDeep(Exception):
    pass


class _Handler:
    """expat callbacks that collect events, namespaces stripped."""

    def __init__(self):
        self.events: list = []
        self._texts: list[list[str]] = []
        self._attributes: list[dict] = []
        parser = expat.ParserCreate(namespace_separator="}")
        parser.StartElementHandler, parser.EndElementHandler = self._start, self._end
        parser.CharacterDataHandler = self._characters
        parser.StartDoctypeDeclHandler = parser.EntityDeclHandler = self._refuse
        parser.buffer_text = True
        self.parser = parser

    def _start(self, name, attributes):
        if len(self._attributes) >= MAX_DEPTH:    # each open element costs memory: a nesting bomb is refused
            raise _TooDeep()
        local = {key.rpartition("}")[2]: value for key, value in attributes.items()}
        self.events.append(("start", name.rpartition("}")[2], local, None))
        self._attributes.append(local)
        self._texts.append([])

    def _end(self, name):
        self.events.append(("end", name.rpartition("}")[2], self._attributes.pop(), "".join(self._texts.pop())))

    def _characters(self, data):
        if self._texts:
            self._texts[-1].append(data)

    def _refuse(self, *_):
        raise _RefuseDoctype()


def _open_zip(path: Path) -> zipfile.ZipFile:
    if not path.is_file():
        raise IfrError("no-such-file", f"no such workbook: {path}", None, hint="check the path")
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise IfrError("workbook-too-large", f"{path} is {size // 2 ** 20} MB; ifr reads workbooks up to "
                       f"{MAX_FILE_BYTES // 2 ** 20} MB", None, hint=HINT)
    try:
        archive = zipfile.ZipFile(path)
    except DAMAGED as exc:
        raise IfrError("unreadable", f"cannot read {path}: it is not an .xlsx workbook ({_reason(exc)})", None,
                       hint=HINT) from None
    infos = archive.infolist()
    if len(infos) > MAX_PARTS:
        archive.close()
        raise IfrError("workbook-too-large", f"{path} has {len(infos)} parts; an .xlsx workbook has a few dozen",
                       None, hint=HINT)
    for info in infos:
        if info.file_size > MAX_PART_BYTES:
            archive.close()
            raise IfrError("workbook-too-large", f"{path}: the part {info.filename} would be "
                           f"{info.file_size // 2 ** 20} MB uncompressed; ifr reads parts up to "
                           f"{MAX_PART_BYTES // 2 ** 20} MB", None, hint=HINT)
    return archive


def _reason(exc: BaseException) -> str:
    """What went wrong, in a few words: the exception's own text, or its kind when it has none."""
    text = str(exc).strip()
    return text[:200] if text else type(exc).__name__
