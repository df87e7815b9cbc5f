"""The .ifr files under the workspace folders, for rename and references across files not open.

A walk is bounded: at most MAX_FILES files and MAX_DEPTH folders deep, hidden
folders and the usual folders of other tools (virtual environments, build
output, version control) skipped, links not followed into folders; a file is
one :func:`ifr.syntax.sources.ifr_file` accepts (a regular file named .ifr
once its links are followed).  Only files whose text names the word being
renamed are analysed, which keeps a rename in a big workspace to the files
that can hold it.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from ifr.errors import IfrError
from ifr.syntax.sources import ifr_file, read_source

MAX_FILES = 2000
MAX_DEPTH = 12
_SKIPPED = {"node_modules", "__pycache__", "build", "dist", "venv", ".venv", "site-packages"}


def ifr_files(folders: list[str]) -> list[str]:
    """The absolute paths of the .ifr files under ``folders`` (within the bounds), sorted."""
    found: set[str] = set()
    for folder in folders:
        top = os.path.abspath(folder)
        if not os.path.isdir(top):
            continue
        base = top.count(os.sep)
        for here, dirs, files in os.walk(top, followlinks=False):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIPPED
                             and here.count(os.sep) - base < MAX_DEPTH)
            for name in sorted(files):
                if name.endswith(".ifr") and ifr_file(Path(here) / name) is not None:
                    found.add(os.path.join(here, name))
                    if len(found) >= MAX_FILES:
                        return sorted(found)
    return sorted(found)


def naming(files: list[str], word: str) -> list[tuple[str, str]]:
    """(path, text) of the files whose text has ``word`` as a whole word; unreadable ones are left out."""
    pattern = re.compile(r"(?<![\w])" + re.escape(word) + r"(?![\w])")
    out = []
    for path in files:
        try:
            text = read_source(Path(path))
        except IfrError:
            continue
        if pattern.search(text):
            out.append((path, text))
    return out
