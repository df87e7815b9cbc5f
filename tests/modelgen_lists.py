"""Units of one's own and named lists, for `modelgen`: `dimension money`, `unit
USD: money` (or the standard library's `use money: USD`), `unit replica`, `unit
node = 8 GPU`, quantities in them mixed into formulas; lists of values and of
records, counted, folded, indexed, comprehended, and varied over by tables
(`modelgen_plans` varies them in searches too).  The cell writers here are the
plans' as well: a cell with its description, an input of a declared unit, a
plain whole number.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from modelgen import NONE, Cell, Writer, dim

GPU, TOKEN, TIME, BYTES = dim(0, 0, 0, 0, 1), dim(0, 0, 1), dim(0, 1), dim(1)
RATE, TOKEN_RATE, BANDWIDTH = dim(0, -1), dim(0, -1, 1), dim(1, -1)
MONEY_RATE, PRICE = dim(0, -1, 0, 0, 0, 0, 1), dim(0, -1, 0, 0, -1, 0, 1)   # USD/hour, USD/GPU/hour
MONEY_PER_TOKEN, REPLICA = dim(0, 0, -1, 0, 0, 0, 1), dim(0, 0, 0, 0, 0, 0, 0, 1)
PER_CARD = dim(0, -1, 1, 0, -1)   # token/s/GPU
COMMON_LISTED = (BYTES, TIME, BANDWIDTH, TOKEN, dim(1, 0, -1))   # what a list of values holds

@dataclass
class NamedList:
    name: str
    dim: tuple | None      # None for a list of records
    items: list            # as written
    integer: bool = False  # plain whole numbers


# -- units of one's own -------------------------------------------------------------------

def declare_units(w: Writer) -> None:
    """Dollars (declared, or the standard library's), replicas, nodes and pages, and
    quantities in them mixed into formulas."""
    src = w.src
    if src.chance(0.7):
        if src.chance(0.7):
            w.declarations += ["dimension money", "unit USD: money"]
            w.kinds["unit_dimension"] += 1
        else:
            w.declarations.append("use money: USD")
            w.kinds["use_money"] += 1
        w.declared.add("USD")
    if src.chance(0.5):
        w.declarations.append("unit replica" + ("   # a count of its own" if src.chance(0.3) else ""))
        w.declared.add("replica")
        w.kinds["unit_count"] += 1
    if src.chance(0.5):
        w.declarations.append("unit node = 8 GPU" + ("        # an 8-GPU server" if src.chance(0.3) else ""))
        w.declared.add("node")
        w.spellings["GPU"] = w.spellings["GPU"] + ("node",)
        w.kinds["unit_derived"] += 1
    if src.chance(0.3):
        w.declarations.append("unit page = 16 token")
        w.spellings["token"] = w.spellings["token"] + ("page",)
        w.kinds["unit_derived"] += 1
    made = []
    if "USD" in w.declared:
        made.append(quantity(w, "price", PRICE, f"{src.choice(('1.2', '2', '2.49', '3.5'))}",
                             "USD/GPU/hour", "rent of a card"))
    if "node" in w.declared:
        made.append(quantity(w, "nodes", GPU, str(src.integer(1, 8)), src.choice(("node", "nodes"))))
    if "replica" in w.declared:
        made.append(quantity(w, "replicas", REPLICA, str(src.integer(1, 6)), "replica"))
    if "page" in w.declared:
        made.append(quantity(w, "kv_page", dim(1, 0, -1), src.choice(("2", "8", "64")), "KiB/page"))
    if not made:
        return
    price = next((c for c in made if c.dim == PRICE), None)
    cards = next((c for c in made if c.dim == GPU), None)
    if price is not None:
        cards_text = cards.name if cards else w.literal(GPU)
        formula(w, "spend", f"{cards_text} * {price.name}", MONEY_RATE,
                src.choice(("USD/hour", "kUSD/hour", "USD/min", None)))
    for _ in range(src.integer(1, 2)):   # the declared units meet the model's own cells
        w.formula_cell(depth=2)
    w.kinds["unit_quantity"] += len(made)


def line(w: Writer, text: str, kind: str, note: str = "") -> None:
    """A statement, with its description when it has one (else maybe one of `emit`'s)."""
    if note:
        w.lines.append(f"{text}   # {note}")
        w.kinds[kind] += 1
        w.kinds["description"] += 1
    else:
        w.emit(text, kind)


def quantity(w: Writer, hint: str, dimension: tuple, number: str, unit: str, note: str = "") -> Cell:
    name = w.name(hint)
    cell = Cell(name, dimension, input=True, literal=(number, unit))
    line(w, f"{name} = {number} {unit}", "input", note if w.src.chance(0.5) else "")
    w.cells.append(cell)
    return cell


def formula(w: Writer, hint: str, text: str, dimension: tuple, unit: str | None = None,
            note: str = "") -> Cell:
    name = w.name(hint)
    line(w, f"{name} = {text}" + (f"   in {unit}" if unit else ""), "formula", note)
    cell = Cell(name, dimension)
    w.cells.append(cell)
    return cell


def plain(w: Writer, hint: str, number, note: str = "") -> Cell:
    name = w.name(hint)
    cell = Cell(name, NONE, integer=True, input=True, literal=(str(number), ""))
    line(w, f"{name} = {number}", "input", note)
    w.cells.append(cell)
    return cell


# -- named lists --------------------------------------------------------------------------

def value_list(w: Writer) -> None:
    """A list of values (of an input's dimension, so a table or search can vary it over
    the list), and cells that count, fold, index and comprehend it."""
    src = w.src
    inputs = varied_candidates(w)
    x = src.choice(inputs) if inputs and src.chance(0.7) else None
    if x is not None:
        items = list(dict.fromkeys(w.literal_of(x, w.number(x.integer)) for _ in range(src.integer(2, 5))))
        named = NamedList(w.name(src.choice(("sizes", "options", "levels"))), x.dim, items, x.integer)
    elif src.chance(0.5):
        items = [str(n) for n in sorted(set(src.choice((1, 2, 4, 8, 16)) for _ in range(src.integer(2, 5))))]
        named = NamedList(w.name(src.choice(("tps", "batches", "degrees"))), NONE, items, True)
    else:
        d = src.choice(COMMON_LISTED)
        items = list(dict.fromkeys(w.literal(d) for _ in range(src.integer(2, 4))))
        named = NamedList(w.name(src.choice(("sizes", "links", "targets"))), d, items)
    w.emit(f"{named.name} = [{', '.join(named.items)}]", "list_values")
    w.lists.append(named)
    uses = [use for use in (list_count, list_fold, list_item, list_comprehension) if src.chance(0.5)]
    for use in uses or [list_fold]:
        use(w, named)
    if x is not None and src.chance(0.6):
        list_table(w, x, named)



def list_count(w: Writer, named: NamedList) -> None:
    formula(w, "count", f"count({named.name})", NONE)
    w.cells[-1].integer = True
    w.kinds["list_count"] += 1


def list_fold(w: Writer, named: NamedList) -> None:
    fold = w.src.choice(("max", "min", "sum", "mean"))
    formula(w, fold, f"{fold}({named.name})", named.dim, w.display_unit(named.dim) if w.src.chance(0.3) else None)
    w.kinds["list_fold"] += 1


def list_item(w: Writer, named: NamedList) -> None:
    formula(w, "item", f"{named.name}[{w.src.integer(1, len(named.items))}]", named.dim)
    w.kinds["list_item"] += 1


def list_comprehension(w: Writer, named: NamedList) -> None:
    """`max(e for t in L)`: the body reads the item, of the list's dimension."""
    src = w.src
    var = src.choice(("t", "each", "item"))
    fold = src.choice(("max", "min", "sum"))
    target = src.choice(COMMON_LISTED[:3] + (named.dim,))
    if named.dim == NONE:
        body, _ = w.expr(target, 1, certain=True, var=var)
        if var not in re.findall(r"\w+", body):
            body = f"{body} * {var}"
    elif target == named.dim and src.chance(0.5):
        body = f"{var} * {src.choice(('2', '0.5', '1.5'))}"
    elif src.chance(0.5):   # something of (target × item) over the item
        top, _ = w.expr(tuple(a + b for a, b in zip(target, named.dim)), 0, certain=True)
        body = f"{top} / {var}"
    else:
        per, _ = w.expr(tuple(a - b for a, b in zip(target, named.dim)), 0, certain=True)
        body = f"{var} * {per}"
    cond = ""
    if fold == "sum" and src.chance(0.4):
        cond = f" if {var} >= {named.items[0]}"
    formula(w, fold, f"{fold}({body} for {var} in {named.name}{cond})", target)
    w.kinds["list_comprehension"] += 1


def record_list(w: Writer) -> None:
    """A list of the model's records, varied over by the alias in a table (and searches)."""
    src = w.src
    items = list(w.record_names)
    if len(items) > 2 and src.chance(0.3):
        items = items[:2]
    named = NamedList(w.name(src.choice(("gpus", "cards", "links"))), None, items)
    w.emit(f"{named.name} = [{', '.join(items)}]", "list_records")
    w.lists.append(named)
    shown = shown_cells(w)
    if shown and src.chance(0.6):
        columns = list(dict.fromkeys(src.choice(shown).name for _ in range(src.integer(1, 2))))
        table = w.name("by")
        w.lines.append(f"table {table}: vary {w.alias} over {named.name} show {', '.join(columns)}")
        w.tables.append(table)
        w.kinds["table_over_list"] += 1


def list_table(w: Writer, x: Cell, named: NamedList) -> None:
    shown = shown_cells(w)
    if not shown:
        return
    columns = list(dict.fromkeys(w.src.choice(shown).name for _ in range(w.src.integer(1, 3))))
    table = w.name("by")
    w.lines.append(f"table {table}: vary {x.name} over {named.name} show {', '.join(columns)}")
    w.tables.append(table)
    w.kinds["table_over_list"] += 1
    if w.src.chance(0.5):
        column = w.src.choice(columns)
        cell = next(c for c in w.cells if c.name == column)
        formula(w, "row", f"{table}[{w.src.choice(named.items)}].{column} * 2", cell.dim)
        w.cells[-1].uncertain = cell.uncertain


def shown_cells(w: Writer) -> list[Cell]:
    return [c for c in w.cells if not c.input and "." not in c.name and not c.name.startswith("lib")]

def varied_candidates(w: Writer) -> list[Cell]:
    """Inputs a table or a search may vary over a list of values."""
    return [c for c in w.cells if c.input and "." not in c.name and c.literal and c.literal[1] != "%"]


# -- what reads a list of records (drawn after everything else, from a stream of its own) ----------

def record_list_uses(w: Writer, src) -> None:
    """Cells that read the list of records: its length, comprehensions whose variable is each
    record in turn (`max(g.hbm for g in gpus if g.bw <= gpu_2.bw)`), the positions argmax,
    argmin and first give, an item's field (`gpus[2].hbm`), and the alias read under a search
    or a scenario (`best.cur.hbm`, `best[2].cur.hbm`, `fast.cur.hbm`).  Drawn from ``src``, a
    stream of their own, after every other line, so a seed's earlier lines stay as they were."""
    named = next((n for n in w.lists if n.dim is None), None)
    if named is None or not w.record_list:
        return
    fields = dict(w.record_list[0][1])
    keep, w.src = w.src, src
    try:
        for use in (_records_count, _records_fold, _records_position, _records_item, _alias_reads):
            if src.chance(0.6):
                use(w, named, fields)
    finally:
        w.src = keep


def _condition(w: Writer, named: NamedList, fields: dict, var: str) -> str:
    """` if g.f <= gpu_1.f`: met by that record at least, so the comprehension has a value."""
    f = w.src.choice(list(fields))
    return f" if {var}.{f} {w.src.choice(('<=', '>='))} {w.src.choice(named.items)}.{f}"


def _records_count(w: Writer, named: NamedList, fields: dict) -> None:
    formula(w, "count", f"count({named.name})", NONE)
    w.cells[-1].integer = True
    w.kinds["records_count"] += 1


def _records_fold(w: Writer, named: NamedList, fields: dict) -> None:
    src = w.src
    var, fold = src.choice(("g", "r", "each")), src.choice(("max", "min", "sum", "mean"))
    f = src.choice(list(fields))
    dimension, body = fields[f], f"{var}.{f}"
    other = src.choice(list(fields))
    if src.chance(0.3):
        body = f"{var}.{f} * {src.choice(('2', '0.5', '1.5'))}"
    elif other != f and src.chance(0.4):   # two fields of the record
        dimension = tuple(a - b for a, b in zip(fields[f], fields[other]))
        body = f"{var}.{f} / {var}.{other}"
    cond = _condition(w, named, fields, var) if src.chance(0.5) else ""
    unit = w.display_unit(dimension) if src.chance(0.3) else None
    formula(w, fold, f"{fold}({body} for {var} in {named.name}{cond})", dimension, unit)
    w.kinds["records_comprehension_if" if cond else "records_comprehension"] += 1


def _records_position(w: Writer, named: NamedList, fields: dict) -> None:
    src = w.src
    var, func = src.choice(("g", "r")), src.choice(("argmax", "argmin", "first"))
    f = src.choice(list(fields))
    cond = _condition(w, named, fields, var) if func == "first" or src.chance(0.3) else ""
    body = var if func == "first" and src.chance(0.5) else f"{var}.{f}"
    formula(w, func, f"{func}({body} for {var} in {named.name}{cond})", NONE)
    w.cells[-1].integer = True
    w.kinds["records_position"] += 1


def _records_item(w: Writer, named: NamedList, fields: dict) -> None:
    f = w.src.choice(list(fields))
    formula(w, "item", f"{named.name}[{w.src.integer(1, len(named.items))}].{f}", fields[f])
    w.kinds["records_item"] += 1


def _alias_reads(w: Writer, named: NamedList, fields: dict) -> None:
    """The alias's field at a search's configuration (when the search varies it), or under a scenario."""
    src = w.src
    varying = [line.split(":")[0].split()[1] for line in w.lines
               if line.startswith(("search ", "pareto ")) and f"{w.alias} over " in line]
    for search in varying:
        f = src.choice(list(fields))
        pareto = any(line.startswith(f"pareto {search}:") for line in w.lines)
        rank = 1 if pareto or src.chance(0.6) else 2
        text = f"{search}.{w.alias}.{f}" if rank == 1 and not pareto and src.chance(0.5) else \
            f"{search}[{rank}].{w.alias}.{f}"
        reader = formula(w, "at", text, fields[f])
        w.search_reads.append((reader.name, search, rank, f"{w.alias}.{f}"))
        w.search_readers.add(reader.name)
        w.kinds["search_read_record"] += 1
    if w.scenarios and src.chance(0.7):
        f = src.choice(list(fields))
        formula(w, "under", f"{src.choice(w.scenarios)}.{w.alias}.{f}", fields[f])
        w.kinds["scenario_read_record"] += 1
