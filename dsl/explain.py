"""`ifr explain`: a cell's formula as written, expanded to inputs, and value."""
from __future__ import annotations

from .display import format_number
from .symbolic import NotSymbolic, to_sympy, tree_symbols


def explain(model, cid: str) -> dict:
    cell = model.graph.cells[cid]
    out = {"name": cell.name, "kind": cell.kind, "formula": cell.source, "unit": model.units[cid],
           "value": model.value(cid), "description": cell.description}
    if cell.kind == "input":
        out["expanded"] = cell.source
        return out
    import sympy as sp
    if cell.kind == "solve":
        sol = model.solver.solutions.get(cid)
        out["method"] = sol.note if sol else ""
        if sol is not None and sol.tree is not None:
            out["closed_form"] = _closed_form_text(sol.tree, model)
        out["expanded"] = out.get("closed_form", "(numeric: no closed form)")
        return out
    cache: dict[str, object] = {}

    def ref(c):
        target = model.graph.cells[c]
        if target.kind in ("input", "solve") or c in model.overrides:
            return sp.Symbol(c, real=True)
        if c not in cache:
            cache[c] = to_sympy(target.expr, ref)
        return cache[c]
    try:
        expr = to_sympy(cell.expr, ref)
        out["expanded"] = _pretty(expr, model)
    except NotSymbolic as exc:
        out["expanded"] = f"(not symbolic: {exc})"
    return out


def _closed_form_text(tree: list, model) -> str:
    """The closed form as sympy prints it, in the worker (under its time limit)."""
    from . import sympy_worker
    from .solve import SYMPY_SECONDS
    names = {cid: model.graph.cells[cid].name for cid in tree_symbols(tree) if cid in model.graph.cells}
    try:
        return sympy_worker.call("pretty_tree", tree, names, seconds=SYMPY_SECONDS)
    except (sympy_worker.TimeLimit, sympy_worker.WorkerFailed) as exc:
        return f"(not printed: {exc or 'sympy took too long'})"


def _pretty(expr, model) -> str:
    """sympy's text with cell ids shown as the user's names, in base SI units."""
    import sympy as sp
    names = {s: sp.Symbol(model.graph.cells[s.name].name if s.name in model.graph.cells else s.name)
             for s in expr.free_symbols}
    return sp.sstr(expr.xreplace(names))


def render(info: dict, model) -> str:
    unit = f" {info['unit']}" if info["unit"] else ""
    lines = [f"{info['name']} = {info['formula']}"]
    if info.get("description"):
        lines.append(f"  # {info['description']}")
    if info["kind"] == "solve":
        lines.append(f"  closed form: {info.get('closed_form', '(none)')}   [base SI units]")
        lines.append(f"  method:      {info.get('method', '')}")
    elif info["kind"] == "formula":
        lines.append(f"  expanded:    {info['expanded']}   [base SI units]")
    lines.append(f"  value:       {format_number(info['value'], 6)}{unit}")
    return "\n".join(lines)
