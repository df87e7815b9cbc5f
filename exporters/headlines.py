"""The model's answers, as a plan's "Results at a glance" lists them.

In order, without repeats, of the main file's cells:

1. the cells the writer marks: every cell of a section whose title starts
   with "Headline" (`section "Headline"`, `section "Headline results"`; any
   case);
2. solved cells (`solve x: ...`): what the model was asked to find;
3. the cells a check compares, inputs left out: first those checked against
   a figure (the source's) that no other cell uses, then the other checked
   against a figure, then those a check only compares;
4. only when none of those exist: the formulas no other cell uses.

A record's fields are never headlines by being unused (a model record's
`ffn` or `vocab`); they are when the writer marks them, solves or checks them.
"""
from __future__ import annotations

from ifr.semantics import ir

HEADLINE_SECTION = "headline"   # a section whose title starts so (any case) holds marked cells
MOST = 15                       # at most this many answers


def is_headline_section(title: str | None) -> bool:
    return bool(title) and title.strip().lower().startswith(HEADLINE_SECTION)


def headline_cells(model, cids: list[str] | None = None, most: int = MOST) -> list[str]:
    """The answers among ``cids`` (the model's used cells by default), at most ``most``."""
    graph = model.graph
    cids = model.used_cells() if cids is None else cids
    own = [cid for cid in cids if not graph.cells[cid].module]
    marked = [cid for cid in own if is_headline_section(graph.cells[cid].section)]
    solved = [cid for cid in own if graph.cells[cid].kind == "solve"]
    figures = {ref for check in graph.checks if check.expr is not None and check.expected is not None
               for ref in ir.refs(check.expr)}
    checked_refs = figures | {ref for check in graph.checks if check.expr is not None for ref in ir.refs(check.expr)}
    used = {ref for cid in graph.cells for ref in graph.relations.refs.get(cid, ()) if ref != cid}
    checked = [cid for cid in own if cid in checked_refs and graph.cells[cid].kind != "input"]
    # a result checked against the source's figure and used by no other cell is an
    # answer; one used further on is a step to it; one only compared is last
    checked.sort(key=lambda cid: (cid not in figures, cid in used))
    found = list(dict.fromkeys(marked + solved + checked))
    if not found:
        found = [cid for cid in own if graph.cells[cid].kind != "input" and cid not in used
                 and graph.cells[cid].record is None]
    return [cid for cid in found if cid not in model.overrides][:most]
