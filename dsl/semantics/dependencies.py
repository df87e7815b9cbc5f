"""The dependency relations of a model graph, computed once.

Two relations matter: what a formula refers to (the edges a goal seek walks
back to its unknown), and what a cell needs to be evaluated (formulas, and
for a solve the cells of its equation and its unknown).  Everything else is
a reachability question over one of them.
"""
from __future__ import annotations


def reachable(start, edges: dict[str, set[str]]) -> set[str]:
    """``start`` (a node or several) and every node reachable along ``edges``."""
    starts = [start] if isinstance(start, str) else list(start)
    seen, stack = set(starts), list(starts)
    while stack:
        for d in edges.get(stack.pop(), ()):
            if d not in seen:
                seen.add(d)
                stack.append(d)
    return seen


def _reverse(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for node, targets in edges.items():
        for t in targets:
            out.setdefault(t, set()).add(node)
    return out


class Dependencies:
    """``refs``: cell -> the cells its formula names (solves excluded);
    ``needs``: cell -> the cells it is evaluated after (set once ordered)."""

    def __init__(self, refs: dict[str, set[str]]):
        self.refs = refs
        self._formula_users: dict[str, set[str]] | None = None   # made when first asked (goal seeks, tables)
        self.needs: dict[str, set[str]] = {}
        self._users: dict[str, set[str]] | None = None

    def set_needs(self, needs: dict[str, set[str]]) -> None:
        self.needs = needs
        self._users = None

    def formula_users(self) -> dict[str, set[str]]:
        """cell -> the formulas that name it."""
        if self._formula_users is None:
            self._formula_users = _reverse(self.refs)
        return self._formula_users

    def through_formulas(self, cid: str) -> set[str]:
        """``cid`` and every formula that depends on it (what a goal seek on
        ``cid`` sets aside and recomputes)."""
        return reachable(cid, self.formula_users())

    def affected(self, cid: str) -> set[str]:
        """Every cell whose value depends on ``cid``, through formulas and solves."""
        if self._users is None:
            self._users = _reverse(self.needs)
        return reachable(cid, self._users)

    def ancestors(self, cids) -> set[str]:
        """The cells and every cell they need, transitively."""
        return reachable(cids, self.needs)

    def needed_for(self, varied, shown) -> set[str]:
        """The cells to recompute when ``varied`` change and only ``shown`` are read."""
        changed = set()
        for v in varied:
            changed |= self.affected(v)
        return changed & self.ancestors(shown)
