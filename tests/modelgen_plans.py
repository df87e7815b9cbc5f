"""Plans that search, for `modelgen`: `search` and `pareto` statements, and the
cells and checks that read their results (`best.x`, `best[2].x`, `front[1].x`).

`write_plans` runs after every other draw of a model, from a stream of its own
(`generate(seed)` seeds it apart), so a seed's model keeps every line it had
before these kinds existed and gains the new ones.  Two plans are written as a
newcomer writes them from README: the cheapest serving configuration under a
TPOT target and a demand (in dollars when the model declares them), and the
split of a cluster's cards between prefill and decode with the most tokens per
card, with its Pareto front.  Other searches vary the model's own inputs under
conditions on its own cells; one may leave no configuration, a legitimate
`no-configuration` error of every cell that reads it.
"""
from __future__ import annotations

import re

from modelgen import NONE, Cell, Writer
from modelgen_lists import (
    BANDWIDTH,
    BYTES,
    GPU,
    MONEY_PER_TOKEN,
    MONEY_RATE,
    PER_CARD,
    PRICE,
    RATE,
    REPLICA,
    TIME,
    TOKEN,
    TOKEN_RATE,
    NamedList,
    declare_units,
    formula,
    plain,
    quantity,
    record_list,
    record_list_uses,
    value_list,
    varied_candidates,
)

MAX_CONFIGURATIONS = 2000   # a generated search stays quick: it runs in every command


def write_plans(w: Writer, src, sections: bool, records=None) -> None:
    """Units, lists, plans and searches, drawn from `src`, appended to `w`; what reads a list of
    records, last, from `records` (or `src`)."""
    w.src = src
    if src.chance(0.45):
        declare_units(w)
    if src.chance(0.5):
        for _ in range(src.integer(1, 2)):
            value_list(w)
        if w.alias and w.record_names and src.chance(0.6):
            record_list(w)
    plans = [plan for plan, p in ((cost_plan, 0.35), (split_plan, 0.3)) if src.chance(p)]
    if sections and plans:
        w.lines.append('section "Plan"')
    for plan in plans:
        plan(w)
    for _ in range(src.integer(0, 2)):
        model_search(w)
    record_list_uses(w, records or src)



# -- the plans ----------------------------------------------------------------------------

def cost_plan(w: Writer) -> None:
    """The cheapest serving configuration under a TPOT target and a demand."""
    src = w.src
    usd, replica, node = "USD" in w.declared, "replica" in w.declared, "node" in w.declared
    tp = plain(w, "tp", src.choice((1, 2, 4, 8)), "TP degree of a replica")
    batch = plain(w, "batch", src.choice((8, 16, 32, 64)), "requests in a decode step")
    if replica:
        reps = quantity(w, "replicas", REPLICA, str(src.integer(1, 4)), "replica")
    else:
        reps = plain(w, "replicas", src.integer(1, 4))
    weights = reused(w, BYTES) or quantity(w, "weights", BYTES, str(src.choice((16, 70, 140))), "GB",
                                           "the model's weights")
    kv = quantity(w, "kv", BYTES, src.choice(("0.1", "0.25", "0.5", "1", "2")), "GB", "KV of one request")
    bw = stdlib_field(w, "hbm_bandwidth") or quantity(w, "hbm_bw", BANDWIDTH,
                                                        src.choice(("2", "3.35", "4.8")), "TB/s")
    hbm = stdlib_field(w, "hbm_capacity") or quantity(w, "hbm", BYTES, src.choice(("80", "141", "192")), "GB")
    demand = quantity(w, "demand", TOKEN_RATE, src.choice(("500", "2000", "10000")), "token/s")
    infeasible = src.chance(0.12)
    slo = quantity(w, "tpot_target", TIME, "0.05" if infeasible else src.choice(("30", "50", "100")), "ms")
    tpot = formula(w, "tpot", f"({weights.name} / {tp.name} + {batch.name} * {kv.name} / {tp.name}) / {bw.name}",
                   TIME, "ms")
    mem = formula(w, "mem", f"({weights.name} + {batch.name} * {kv.name}) / {tp.name}", BYTES, "GB", "per card")
    per_replica = " / replica" if replica else ""
    rate = formula(w, "rate", f"{reps.name} * {batch.name} * token / {tpot.name}{per_replica}", TOKEN_RATE,
                   "token/s")
    gpus = formula(w, "gpus", f"{reps.name} * {tp.name} * GPU{per_replica}", GPU,
                   src.choice(("node", "GPU")) if node else None)
    goals = [("minimize", gpus)]
    if usd:
        price = next((c for c in w.cells if c.dim == PRICE), None) or \
            quantity(w, "price", PRICE, src.choice(("2", "2.49")), "USD/GPU/hour")
        cost = formula(w, "cost", f"{gpus.name} * {price.name}", MONEY_RATE, src.choice(("USD/hour", "kUSD/hour")))
        per_mtok = formula(w, "per_mtok", f"{cost.name} / {rate.name}", MONEY_PER_TOKEN, "USD/Mtoken")
        goals = [("minimize", src.choice((cost, per_mtok)))]
    if src.chance(0.35):
        goals.append(("maximize", rate))
    conditions = [f"{tpot.name} <= {slo.name}", f"{rate.name} >= {demand.name}", f"{mem.name} <= {hbm.name}"]
    conditions = conditions[:src.integer(2, 3)]
    axes = [f"{tp.name} over {tp_values(w)}", f"{batch.name} over {src.choice(('1..64', '8..64 by 8', '[8, 16, 32, 64, 128]'))}",
            f"{reps.name} over " + (src.choice(("1 replica..4 replica by 1 replica", "[1 replica, 2 replica, 4 replica]"))
                                    if replica else src.choice(("1..4", "[1, 2, 3, 4]")))]
    w.kinds["search_range"] += 1
    name = w.name("cheapest")
    search_statement(w, name, axes, conditions, goals, pareto=False)
    w.kinds["plan_cost"] += 1
    w.kinds["search_infeasible"] += infeasible
    goal = goals[0][1]
    read(w, name, 1, goal)
    read(w, name, 1, tp)
    if src.chance(0.6):
        read(w, name, 2, goal)
    if src.chance(0.5):
        formula(w, "gain", f"{name}.{rate.name} / {rate.name}", NONE, note="against the configuration above")
        w.kinds["search_read"] += 1
    w.checks.append(f"check {name}.{tpot.name} <= {slo.name}")
    w.checks.append(f"check {name}.{goal.name} <= {name}[2].{goal.name}")
    w.kinds["check_search"] += 2


def split_plan(w: Writer) -> None:
    """How to split a cluster's cards between prefill and decode for the most tokens per card,
    and the front of tokens per card against the time per token."""
    src = w.src
    node = "node" in w.declared
    cards = quantity(w, "cards", GPU, *(src.choice((("2", "node"), ("4", "node"))) if node else
                                       (src.choice(("16", "32")), "GPU")), "the cluster")
    tp_p = plain(w, "tp_p", 8, "TP degree of a prefill instance")
    n_p = plain(w, "n_p", 1, "prefill instances")
    n_d = plain(w, "n_d", 1, "decode instances")
    tp_d = plain(w, "tp_d", 8, "TP degree of a decode instance")
    batch = plain(w, "batch", 32, "requests per decode step")
    prefill = quantity(w, "prefill", TIME, src.choice(("300", "725", "1500")), "ms", "one prompt on one card")
    out = quantity(w, "out_len", TOKEN, src.choice(("256", "512", "1024")), "token")
    weights = quantity(w, "weights", BYTES, src.choice(("8.75", "16", "70")), "GB")
    kv = quantity(w, "kv", BYTES, src.choice(("0.084", "0.25", "0.5")), "GB", "per request")
    bw = quantity(w, "hbm_bw", BANDWIDTH, src.choice(("1.17", "2", "3.35")), "TB/s")
    ttft = formula(w, "ttft", f"{prefill.name} / {tp_p.name}", TIME, "ms")
    tpot = formula(w, "tpot", f"({weights.name} + {batch.name} * {kv.name}) / ({tp_d.name} * {bw.name})", TIME, "ms")
    rate = formula(w, "rate", f"min({n_p.name} / {ttft.name}, {n_d.name} * {batch.name} * token / "
                              f"({tpot.name} * {out.name}))", RATE, "1/s")
    used = formula(w, "used", f"({n_p.name} * {tp_p.name} + {n_d.name} * {tp_d.name}) * GPU", GPU,
                   "node" if node and src.chance(0.5) else None)
    per_card = formula(w, "per_card", f"{rate.name} * {out.name} / {used.name}", PER_CARD, "token/s/GPU")
    target = quantity(w, "ttft_target", TIME, src.choice(("200", "400")), "ms")
    k = src.integer(2, 6)
    axes = [f"{tp_p.name} over [2, 4, 8]", f"{n_p.name} over 1..{k}", f"{n_d.name} over 1..{k}"]
    if src.chance(0.5):
        axes.append(f"{batch.name} over [16, 32, 64, 128]")
    name = w.name("best")
    search_statement(w, name, axes, [f"{ttft.name} <= {target.name}", f"{used.name} <= {cards.name}"],
                     [("maximize", per_card)], pareto=False)
    w.kinds["plan_split"] += 1
    read(w, name, 1, n_p)
    read(w, name, 1, per_card)
    if src.chance(0.5):
        read(w, name, 2, per_card)
    formula(w, "split", f"{name}.{n_d.name} * {tp_d.name} / ({name}.{n_p.name} * {name}.{tp_p.name})", NONE,
            note="decode cards per prefill card at the best")
    w.kinds["search_read"] += 1
    w.checks.append(f"check {name}.{used.name} <= {cards.name}")
    w.kinds["check_search"] += 1
    if src.chance(0.7):
        front = w.name("front")
        more = [f"{tp_p.name} over [4, 8]"] if src.chance(0.4) else []
        search_statement(w, front, [f"{batch.name} over [8, 16, 32, 64, 128, 256]"] + more,
                         [f"{used.name} <= {cards.name}"] if src.chance(0.3) else [],
                         [("maximize", per_card), ("minimize", tpot)], pareto=True)
        read(w, front, 1, tpot, pareto=True)
        read(w, front, src.integer(1, 3), per_card, pareto=True)
        w.checks.append(f"check {front}[1].{per_card.name} >= {front}[2].{per_card.name}")
        w.kinds["check_search"] += 1


def tp_values(w: Writer) -> str:
    """TP degrees: written out, or a named list of them (made here when there is none)."""
    named = next((n for n in w.lists if n.integer and n.dim == NONE), None)
    if named is None and w.src.chance(0.4):
        named = NamedList(w.name("tps"), NONE, ["1", "2", "4", "8"], True)
        w.emit(f"{named.name} = [{', '.join(named.items)}]", "list_values")
        w.lists.append(named)
    if named is not None:
        w.kinds["search_over_list"] += 1
        return named.name
    return "[1, 2, 4, 8]"


def reused(w: Writer, dimension: tuple) -> Cell | None:
    """A cell of the model of this dimension, sometimes, where a search may read it."""
    found = [c for c in w.cells if c.dim == dimension and searchable(w, c, nested=False) and "." not in c.name]
    return w.src.choice(found) if found and w.src.chance(0.3) else None


def stdlib_field(w: Writer, field: str) -> Cell | None:
    found = [c for c in w.cells if c.name.endswith(f".{field}") and not c.name.startswith(("shared.", "cur"))]
    return found[0] if found and w.src.chance(0.7) else None


# -- searches over the model's own cells ----------------------------------------------------

def model_search(w: Writer) -> None:
    """A search (or Pareto front) that varies the model's inputs, under conditions on its cells."""
    src = w.src
    inputs = [c for c in varied_candidates(w) if searchable(w, c)]
    nested = src.chance(0.1)   # a goal or a condition that reads another search's result, sometimes
    goals = [c for c in w.cells if not c.input and searchable(w, c, nested)]
    if not inputs or not goals:
        return
    axes, size, bounds = [], 1, []
    for x in list(dict.fromkeys(src.choice(inputs).name for _ in range(src.integer(1, 3)))):
        cell = next(c for c in inputs if c.name == x)
        text, count, some = axis(w, cell)
        if size * count > MAX_CONFIGURATIONS:
            break
        axes.append(text)
        bounds.append(f"{cell.name} {src.choice(('<=', '>='))} {some}")   # met by some of its values
        size *= count
    if w.alias and w.record_names and src.chance(0.3):
        named = next((n for n in w.lists if n.dim is None), None)
        axes.append(f"{w.alias} over " + (named.name if named else f"[{', '.join(w.record_names)}]"))
        w.kinds["search_records"] += 1
        if named:
            w.kinds["search_over_list"] += 1
    pareto = src.chance(0.3)
    chosen = list(dict.fromkeys(src.choice(goals).name for _ in range(2 if pareto else src.integer(1, 2))))
    if pareto and len(chosen) < 2:
        pareto = False
    chosen = [next(c for c in goals if c.name == n) for n in chosen]
    directions = [(src.choice(("maximize", "minimize")), c) for c in chosen]
    conditions = []
    for _ in range(src.integer(0, 2)):
        if src.chance(0.5):
            conditions.append(src.choice(bounds))
            continue
        cell = src.choice(goals)
        if cell.dim != NONE and all(e <= 0 for e in cell.dim):
            bound = w.literal(cell.dim)
        else:
            bound, _ = w.leaf(cell.dim, certain=True)
        if not searchable_text(w, bound, nested):
            continue
        conditions.append(f"{cell.name} {src.choice(('<', '<=', '>', '>='))} {bound}")
    name = w.name("front" if pareto else "best")
    search_statement(w, name, axes, conditions, directions, pareto)
    for direction, cell in directions[:1]:
        read(w, name, 1, cell, pareto)
        if src.chance(0.5):
            read(w, name, 2, cell, pareto)
            op = ">=" if direction == "maximize" else "<="
            if not pareto and "." not in cell.name:
                w.checks.append(f"check {name}.{cell.name} {op} {name}[2].{cell.name}")
                w.kinds["check_search"] += 1


def axis(w: Writer, x: Cell) -> tuple[str, int, str]:
    """`x over ...` for a search, how many values it has, and one of them."""
    src = w.src
    named = [n for n in w.lists if n.dim == x.dim and n.integer == x.integer and n.dim is not None]
    if named and src.chance(0.5):
        chosen = src.choice(named)
        w.kinds["search_over_list"] += 1
        return f"{x.name} over {chosen.name}", len(chosen.items), src.choice(chosen.items)
    if x.integer and src.chance(0.5):
        hi = src.integer(2, 12)
        w.kinds["search_range"] += 1
        return f"{x.name} over 1..{hi}" + ("" if src.chance(0.5) else " by 1"), hi, str(src.integer(1, hi))
    if not x.integer and x.dim != NONE and src.chance(0.3):
        step = float(x.literal[0].replace("_", ""))
        count = src.integer(2, 5)
        lo, hi, by = (w.literal_of(x, f"{step * k:g}") for k in (1, count, 1))
        w.kinds["search_range"] += 1
        return f"{x.name} over {lo}..{hi} by {by}", count, src.choice((lo, hi))
    values = list(dict.fromkeys(w.literal_of(x, w.number(x.integer)) for _ in range(src.integer(2, 4))))
    return f"{x.name} over [{', '.join(values)}]", len(values), src.choice(values)


def search_statement(w: Writer, name: str, axes: list, conditions: list, goals: list, pareto: bool) -> None:
    """`search NAME: vary ... where ... maximize ...`, on one line or several."""
    src = w.src
    word = "pareto" if pareto else "search"
    head = f"{word} {name}: vary "
    multiline = src.chance(0.4)
    goal_text = [f"{d} {c.name}" for d, c in goals]
    if not multiline:
        text = head + ", ".join(axes) + (f" where {' and '.join(conditions)}" if conditions else "") \
            + " " + ", ".join(goal_text)
    else:
        pad = " " * len(head)
        cut = src.integer(1, len(axes))
        text = head + ", ".join(axes[:cut]) + ("".join(f",\n{pad}{a}" for a in axes[cut:]))
        if conditions:
            text += f"\n    where {conditions[0]}" + "".join(
                f"\n      and {c}" if src.chance(0.5) else f" and {c}" for c in conditions[1:])
        text += "\n    " + (",\n    ".join(goal_text) if src.chance(0.3) else ", ".join(goal_text))
        w.kinds["search_multiline"] += 1
    w.lines.append(text)
    w.searches.append(name)
    w.kinds["pareto" if pareto else "search"] += 1
    if len(goals) > 1 and not pareto:
        w.kinds["search_goals"] += 1


def read(w: Writer, search: str, rank: int, cell: Cell, pareto: bool = False) -> None:
    """A cell that reads `search[rank].cell` (`search.cell` for the first), which `ifr search`
    shows too when the cell is varied, a goal or a condition's left side."""
    if "." in cell.name:   # `best.gpu.hbm`: written by `record_list_uses`, last, so earlier seeds keep their lines
        return
    ref = f"{search}.{cell.name}" if rank == 1 and not pareto and w.src.chance(0.6) else \
        f"{search}[{rank}].{cell.name}"
    unit = w.display_unit(cell.dim) if w.src.chance(0.3) else None
    reader = formula(w, "at", ref, cell.dim, unit)
    reader.integer = cell.integer
    w.search_reads.append((reader.name, search, rank, cell.name))
    w.search_readers.add(reader.name)
    w.kinds[("pareto_read" if pareto else "search_read_rank" if rank > 1 else "search_read")] += 1


# -- what a search may read -------------------------------------------------------------------
_NAME = re.compile(r"[^\W\d][\w.]*")


def definitions(w: Writer) -> dict[str, str]:
    """Each cell's defining text, by name (a record's fields under the alias that reads them)."""
    found = {}
    for line in w.lines:
        m = re.match(r"([^\W\d][\w]*) = (.*)", line, re.S)
        if m:
            found[m.group(1)] = m.group(2)
    return found


def searchable(w: Writer, cell: Cell, nested: bool = True) -> bool:
    """Whether a search may read the cell: nothing it depends on is uncertain or sampled
    (and, unless `nested`, nothing reads another search)."""
    return not cell.uncertain and not cell.sampled and searchable_text(w, cell.name, nested)


def searchable_text(w: Writer, text: str, nested: bool = True) -> bool:
    bad = {c.name for c in w.cells if c.uncertain or c.sampled} | (set() if nested else w.search_readers)
    defs = definitions(w)
    seen, todo = set(), _NAME.findall(text)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in bad:
            return False
        todo += _NAME.findall(defs.get(name, ""))
    return True
