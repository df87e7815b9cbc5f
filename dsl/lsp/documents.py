"""The server's copies of the open documents, kept as the editor keeps them.

pygls' TextDocument splits its text with `str.splitlines`, which also breaks
at a form feed, U+001C-U+001E, U+0085, U+2028 and U+2029; an editor counts
only `\\n`, `\\r\\n` and `\\r`.  An incremental edit is a range of lines and
columns, so one form feed in a comment would shift every later edit by a
line.  :class:`Document` splits with :func:`ifr.syntax.lines.split_lines`, and since
pygls applies a change (and converts positions in the encoding it agreed on
with the client) through ``lines``, every change lands where the editor made
it.

Only documents the editor opened are held.  A change to any other is dropped
(the protocol has the editor open a document before it changes it), and a
document that is not open is never read from disk by the handlers; should
anything ask for its text, it is read as the command line reads a file
(:func:`ifr.syntax.sources.read_source`: a regular file of bounded size, never a
FIFO or a device).
"""
from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import unquote

from lsprotocol import types
from pygls.workspace import TextDocument, Workspace

from ifr.syntax.lines import split_lines
from ifr.syntax.sources import MAX_SOURCE_BYTES, read_source

logger = logging.getLogger(__name__)
SYNC_KIND = types.TextDocumentSyncKind.Incremental   # the editor sends each change as a range and its text


class Document(TextDocument):
    """A document whose lines end at `\\n`, `\\r\\n` and `\\r` only."""

    _split: tuple[str, tuple[str, ...]] | None = None

    @property
    def lines(self) -> Sequence[str]:
        source = self.source
        if self._split is None or self._split[0] is not source:   # split once per text, not per question
            self._split = (source, tuple(split_lines(source, keepends=True)))
        return self._split[1]

    @property
    def source(self) -> str:
        if self._source is None and self.path is not None:   # not open: read as `ifr check` reads a file
            return read_source(Path(self.path))
        return self._source or ""


class Documents(Workspace):
    """The workspace of :class:`Document`; changes to a document that is not open are dropped."""

    @classmethod
    def like(cls, workspace: Workspace) -> Documents:
        """A workspace of the same root, folders and position encoding as ``workspace``."""
        return cls(workspace.root_uri, SYNC_KIND, list(workspace.folders.values()), workspace.position_encoding)

    def _create_text_document(self, doc_uri: str, source: str | None = None, version: int | None = None,
                              language_id: str | None = None) -> Document:
        return Document(doc_uri, source=source, version=version, language_id=language_id,
                        sync_kind=self._sync_kind, position_codec=self.position_codec)

    def open_document(self, uri: str) -> Document | None:
        """The document the editor opened at ``uri``, or None (never one read from disk)."""
        return self.text_documents.get(unquote(uri))   # pygls keys its documents by the unquoted URI

    def update_text_document(self, text_doc: types.VersionedTextDocumentIdentifier,
                             change: types.TextDocumentContentChangeEvent) -> None:
        if self.open_document(text_doc.uri) is None:
            logger.warning("a change to %s, which is not open, is dropped", text_doc.uri)
            return
        super().update_text_document(text_doc, change)


def utf8_size_over_limit(text: str) -> int | None:
    """The text's size in UTF-8 bytes if it is over MAX_SOURCE_BYTES, else None."""
    if len(text) > MAX_SOURCE_BYTES:
        return len(text.encode("utf-8", "surrogatepass"))
    if len(text) * 4 <= MAX_SOURCE_BYTES:   # at most 4 bytes a character: surely small enough
        return None
    size = len(text.encode("utf-8", "surrogatepass"))
    return size if size > MAX_SOURCE_BYTES else None
