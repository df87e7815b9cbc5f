"""`ifr explain`: a cell's formula as written, expanded to inputs, and value."""
from __future__ import annotations

from ifr.display import format_number
from ifr.queries.fit_report import fit_report, render_fit
from ifr.semantics import ir
from ifr.solving.symbolic import tree_symbols


def explain(model, cid: str) -> dict:
    cell = model.graph.cells[cid]
    failed = model.errors.get(cid)
    out = {"name": cell.name, "kind": cell.kind, "formula": cell.source, "unit": model.units[cid],
           "value": None if failed else model.value(cid), "text": None if failed else model.value_text(cid, 6),
           "description": cell.description}
    if failed is not None:
        out["error"] = f"error[{failed.code}]: {failed.message}"
    stats = model.summary(cid) if failed is None else None
    if stats is not None:
        out["interval"] = (stats.p5, stats.p95)
    if cell.fit is not None:
        out["fit"] = fit_report(model, cid)
        out["expanded"] = cell.source
        return out
    if cell.kind == "input" or _draws(cell):
        out["expanded"] = cell.source
        out["draws"] = _draws(cell)
        return out
    if cell.kind == "solve":
        sol = model.solver.solutions.get(cid)
        out["method"] = sol.note if sol else ""
        if sol is not None and sol.tree is not None:
            names = {c: model.graph.cells[c].name for c in tree_symbols(sol.tree) if c in model.graph.cells}
            out["closed_form"] = in_worker("pretty_tree", sol.tree, names)
        out["expanded"] = out.get("closed_form", "(numeric: no closed form)")
        return out
    formulas = formulas_below(model, cell.expr)
    names = {c: model.graph.cells[c].name for c in model.graph.cells}
    out["expanded"] = in_worker("expanded_text", cell.expr, formulas, names)
    if out["expanded"].startswith("(not printed: nested too deep"):   # a long chain of formulas
        out["expanded"] = (f"(not printed: it reaches {len(formulas):,} formulas, nested too deep to expand; "
                           "explain a cell nearer its inputs)")
    return out


def formulas_below(model, node) -> dict:
    """The expressions of the formula cells ``node`` reaches, down to inputs,
    solved, fitted and overridden cells (which stay symbols)."""
    formulas, stack = {}, list(ir.refs(node))
    while stack:
        c = stack.pop()
        target = model.graph.cells[c]
        if c in formulas or target.kind in ("input", "solve") or c in model.overrides or _draws(target) \
                or target.fit is not None:   # a fitted cell stays a symbol: its value is the fit's
            continue
        formulas[c] = target.expr
        stack.extend(ir.refs(target.expr))
    return formulas


def _draws(cell) -> bool:
    """Whether a cell draws from a distribution itself (an uncertain input: it stays a symbol)."""
    return cell.expr is not None and any(isinstance(n, ir.Dist) for n in ir.walk(cell.expr))


def in_worker(function: str, *args) -> str:
    """sympy's text, printed in the worker under its time limit."""
    from ifr.solving import sympy_worker
    from ifr.solving.solve import SYMPY_SECONDS
    try:
        return sympy_worker.call(function, *args, seconds=SYMPY_SECONDS)
    except sympy_worker.TimeLimit:
        return f"(not printed: sympy took over {SYMPY_SECONDS} s)"
    except sympy_worker.WorkerFailed as exc:
        return f"(not printed: {exc})"


# The units an expansion's numbers are in: each dimension's base unit (pint's: bits for
# information), the counting units included, so `2 B/token` expanded as 16 still reads per token.
_BASES = {"information": "bit", "time": "s", "length": "m", "mass": "kg", "current": "A", "temperature": "K",
          "substance": "mol", "luminosity": "cd", "compute": "FLOP", "gpu": "GPU"}


def base_units_note(model, info: dict) -> str:
    """`[base SI units]`, naming the unit of the result when it has one: `[base SI units: bit/token]`."""
    dim = model.dims.get(model.cell_id(info["name"])) if info["name"] else None
    num, den = [], []
    for base, power in (dim.items if dim is not None else ()):
        name = _BASES.get(base.strip("[]"), base.strip("[]"))
        p = abs(power)
        text = name if p == 1 else f"{name}^{int(p) if float(p).is_integer() else p}"
        (num if power > 0 else den).append(text)
    if not num and not den:
        return "[base SI units]"
    text = "*".join(num) if num else "1"
    if den:
        text += "/" + (den[0] if len(den) == 1 else "(" + "*".join(den) + ")")
    return f"[base SI units: {text}]"


def render(info: dict, model) -> str:
    unit = f" {info['unit']}" if info["unit"] else ""
    lines = [f"{info['name']} = {info['formula']}"]
    if info.get("description"):
        lines.append(f"  # {info['description']}")
    if info["kind"] == "solve":
        lines.append(f"  closed form: {info.get('closed_form', '(none)')}   [base SI units]")
        lines.append(f"  method:      {info.get('method', '')}")
    elif info.get("fit"):
        lines += render_fit(info["fit"])
    elif info["kind"] == "formula" and not info.get("draws") and "fit" not in info:
        printed = not info["expanded"].startswith(("(not printed", "(not symbolic"))
        lines.append(f"  expanded:    {info['expanded']}" + (f"   {base_units_note(model, info)}" if printed else ""))
    if info.get("error"):
        lines.append(f"  value:       #ERROR  {info['error']}")
    else:
        lines.append(f"  value:       {info['text']}")
        if info.get("interval"):
            lo, hi = info["interval"]
            lines[-1] += (f"   (the median of {model.sampling.samples:,} samples; 90% between "
                          f"{format_number(lo)} and {format_number(hi)}{unit})")
    return "\n".join(lines)
