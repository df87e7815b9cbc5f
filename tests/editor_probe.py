"""`python tests/editor_probe.py FILE`: the editor's analysis of FILE as JSON on stdout (its
diagnostics and its cells' values), for the oracle: run in a process of its own, with a cache
folder of its own, as an editor first meets a file (nothing of it parsed or solved before)."""
from __future__ import annotations

import json
import sys
from pathlib import Path


def main(path: str) -> int:
    from ifr.lsp.analysis import analyse
    result = analyse(path, Path(path).read_text(encoding="utf-8"), {})
    json.dump({"diagnostics": [{"line": d.span.line, "column": d.span.column, "code": d.code,
                                "severity": d.severity, "message": d.message, "related": bool(d.related)}
                               for d in result.diagnostics],
               "cells": [{"name": c.name, "value": c.value, "unit": c.unit} for c in result.cells.values()]},
              sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
