"""Diagnostics of the files not open that read an open one, for `workspace/diagnostic` (LSP 3.17).

Diagnostics are pushed for the documents open in the editor only, as most
servers do: a pushed diagnostic of a file the user never opened stays in the
problem list with no edit of theirs to clear it.  A client that asks for
workspace diagnostics (a pull the client makes when it wants them) is
answered with the closed files of the workspace folders that read an open
document, analysed with the open buffers: an edit that breaks a closed
importer shows in its problem list.  A file is a candidate when its text
names an open module's file stem as a whole word (a `use` of it must); it
is reported when its analysis read an open document.  Each report has a
result id made from the texts analysed, so a pull that finds nothing changed
is answered "unchanged" without an analysis.
"""
from __future__ import annotations

import hashlib
import os

from ifr.lsp.workspace_files import ifr_files, naming

MAX_IMPORTERS = 50   # closed files analysed for one pull: the rest wait for the next one


def candidates(folders: list[str], open_paths: set[str]) -> list[tuple[str, str]]:
    """(path, text) of the closed .ifr files under ``folders`` whose text names an open file's stem."""
    closed = [f for f in ifr_files(folders) if os.path.abspath(f) not in open_paths]
    found: dict[str, str] = {}
    for stem in sorted({os.path.splitext(os.path.basename(p))[0] for p in open_paths}):
        for path, text in naming([f for f in closed if f not in found], stem):
            found[path] = text
    return sorted(found.items())[:MAX_IMPORTERS]


def result_id(text: str, buffers: dict[str, str]) -> str:
    """An id of one analysis's input: the file's text and the open buffers it could read."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass"))
    for path in sorted(buffers):
        digest.update(b"\0" + path.encode("utf-8", "surrogatepass") + b"\0" +
                      buffers[path].encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:32]


def reads_open(files: set[str], path: str, open_paths: set[str]) -> bool:
    """Whether an analysis of ``path`` that read ``files`` read an open document."""
    return any(os.path.abspath(f) in open_paths for f in files if os.path.abspath(f) != os.path.abspath(path))
