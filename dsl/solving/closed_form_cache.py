"""The closed forms sympy found, on disk, keyed by the equation's structure.

An entry is what `closed_form.closed_forms` answered, which depends on the
structure of the equation only (never on values): ``{"candidates": [...],
"complete": bool, "flat": [...], "flat_regions": [...]}``, or ``{"none": why}`` for an equation sympy cannot solve.
Whether a candidate is the root for given values is decided at each run, so a
what-if under which the equation has no root leaves the entry as it is.

A search that sympy did not finish within the time limit is kept too, as
``{"none": why, "timed_out": seconds}``: waiting for it again on every command
would cost the limit each time for the same answer.  A later search with a
longer limit than the one that timed out asks again (`ifr cache clear` forgets
it).  A worker that failed (could not start, ran out of memory) is remembered
for the process only (`TIMED_OUT`), never written.

On disk an entry is `storage.cache`'s (its format, its kind and the key it was
written under, checked on read) around what sympy answered, itself checked
for its shape; nothing else in it is read.

Beside them, a `crossing` entry keeps where the numeric search's scan found
its one sign change for one equation and the values it read (`Solver._quick`):
two floats, from which the next run with the same values finds and verifies
the root again without the scan.  A process writes a few of them at most (a
table's rows or a sweep of what-ifs are values no later run is likely to repeat).
"""
from __future__ import annotations

import hashlib
import json
import math
from functools import lru_cache
from pathlib import Path

from ifr.semantics import ir

VERSION = "closed-forms-4"   # part of every key: entries of another layout are never read

TIMED_OUT: dict[str, str] = {}   # key -> why the worker failed, for this process only
KIND = "closed-forms"            # the kind of the cache's entries
CROSSING = "crossing"            # the kind of the numeric search's entries (`ClosedFormCache.crossing`)


def equation_key(unknown: str, lhs: ir.Node, rhs: ir.Node, chain: dict[str, ir.Node]) -> str:
    """A hash of everything sympy is given: the unknown, both sides and the
    expressions of the cells between them and the unknown."""
    parts = [VERSION, unknown, fingerprint(lhs), fingerprint(rhs)]
    parts += [cid + "=" + fingerprint(node) for cid, node in chain.items()]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def fingerprint(node: ir.Node) -> str:
    """A structural rendering of an expression, independent of spans."""
    if isinstance(node, ir.Const):
        return f"{node.value!r}:{node.number_text}:{node.unit}"
    if isinstance(node, ir.Ref):
        return "@" + node.cell
    if isinstance(node, ir.Var):
        return "$" + node.name
    head = type(node).__name__ + ":" + str(getattr(node, "op", getattr(node, "name", getattr(node, "func", ""))))
    return head + "(" + ",".join(fingerprint(c) for c in ir.children(node)) + ")"


# The closed forms of the equations of the standard library and the bundled
# models, found by `python -m ifr.build` and shipped with ifr (package data,
# JSON), so that checking them right after installing does not wait for sympy.
SHIPPED = Path(__file__).resolve().parent / "closed_forms.json"


@lru_cache(maxsize=1)
def shipped() -> dict[str, dict]:
    """The shipped entries, if made by this layout of keys and entries."""
    try:
        table = json.loads(SHIPPED.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(table, dict) or table.get("version") != VERSION or not isinstance(table.get("entries"), dict):
        return {}
    return {k: v for k, v in table["entries"].items() if _well_formed(v)}


def shipped_table(entries: dict[str, dict]) -> str:
    """The JSON text of the shipped table (what `python -m ifr.build` writes)."""
    return json.dumps({"version": VERSION, "entries": dict(sorted(entries.items()))}, indent=0,
                      sort_keys=True) + "\n"


class ClosedFormCache:
    """One JSON file per equation structure, in ``cache_dir()/solutions``, after
    the shipped ones.  ``recording`` (for the build) asks sympy afresh about
    every equation and keeps what it said."""

    recording: dict[str, dict] | None = None

    def __init__(self):
        from ifr.semantics.units import cache_dir
        self.folder = cache_dir() / "solutions"
        self.memory: dict[str, dict] = {}

    def get(self, key: str) -> dict | None:
        if self.recording is not None:
            return self.recording.get(key)
        if key in self.memory:
            return self.memory[key]
        entry = shipped().get(key)
        if entry is not None:
            return entry
        from ifr.storage.cache import load
        entry = load(self.folder / f"{key}.json", KIND, key)
        if not _well_formed(entry):
            return None
        self.memory[key] = entry
        return entry

    def put(self, key: str, entry: dict) -> None:
        if self.recording is not None:
            if "timed_out" not in entry:   # what a busy machine did not finish is not shipped
                self.recording[key] = entry
            return
        self.memory[key] = entry
        from ifr.storage.cache import save
        save(self.folder / f"{key}.json", KIND, key, entry)   # a failure only costs time


    # --- where the numeric search crossed zero, for one equation and its values (`Solver._quick`)
    written = 0                     # crossing entries this process wrote (a table's rows write none past the cap)
    MAX_WRITTEN = 16

    def crossing(self, key: str) -> tuple[float, float] | None:
        """The two points of the scan between which it found its one sign change, or None."""
        if self.recording is not None:
            return None
        from ifr.storage.cache import load
        ends = load(self.folder / f"{key}.json", CROSSING, key)
        if not (isinstance(ends, list) and len(ends) == 2 and all(type(e) is float and math.isfinite(e) for e in ends)
                and ends[0] < ends[1]):
            return None
        return ends[0], ends[1]

    def put_crossing(self, key: str, ends: tuple[float, float]) -> None:
        if self.recording is not None or ClosedFormCache.written >= self.MAX_WRITTEN:
            return
        ClosedFormCache.written += 1
        from ifr.storage.cache import save
        save(self.folder / f"{key}.json", CROSSING, key, [float(ends[0]), float(ends[1])])


def timed_out(seconds: float) -> dict:
    """The entry of a search sympy did not finish within ``seconds``."""
    return {"none": f"sympy found none within {seconds:g} s", "timed_out": seconds}


def _well_formed(entry) -> bool:
    if not isinstance(entry, dict):
        return False
    if "none" in entry:
        seconds = entry.get("timed_out", 0)
        return isinstance(entry["none"], str) and type(seconds) in (int, float) and 0 <= seconds < 1e6
    candidates = entry.get("candidates")
    return isinstance(candidates, list) and all(isinstance(c, list) and len(c) == 2 for c in candidates)
