"""`python tests/editor_probe.py FILE`: the editor's analysis of FILE as JSON on stdout (its
diagnostics and its cells' values), for the oracle: in a process of its own, as an editor first
meets a file it is typing: no syntax tree of it read back from the cache (the commands run before
cached it), so the editor parses it its own way; units and closed forms come from the cache."""
from __future__ import annotations

import json
import sys
from pathlib import Path


def main(path: str) -> int:
    from ifr.lsp.analysis import analyse
    from ifr.storage import cache
    stored = cache.load

    def load(where, kind, key, **options):
        if kind == "syntax" and not options.get("shipped"):
            return None
        return stored(where, kind, key, **options)
    cache.load = load
    result = analyse(path, Path(path).read_text(encoding="utf-8"), {})
    json.dump({"diagnostics": [{"line": d.span.line, "column": d.span.column, "code": d.code,
                                "severity": d.severity, "message": d.message, "related": bool(d.related)}
                               for d in result.diagnostics],
               "cells": [{"name": c.name, "value": c.value, "unit": c.unit} for c in result.cells.values()]},
              sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
