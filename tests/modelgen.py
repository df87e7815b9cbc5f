"""Models nobody here wrote: a generator of well-formed, dimension-consistent `.ifr` files.

A model is written the way an outsider would write one, over the whole
language: inputs of many dimensions (some uncertain), formulas of arithmetic,
`max`/`min`/`if`, built-ins, comprehensions nested two and three deep,
`first`, `argmax`/`argmin` (ties included), functions, records and aliases,
imports of a generated module and of the standard library, solves (closed
form and numeric, bracketed and open, through `max`/`min`/`if`), one- and
two-way tables over values and records whose rows are read in formulas,
scenarios whose values are formulas and are read in formulas, statistics,
checks of every kind, sections and descriptions, long runs of one line shape,
and cells written in any order.  Units of the model's own, named lists
(`modelgen_lists`) and searches with the cells that read them
(`modelgen_plans`) are drawn last, from a stream of their own, and what reads
a list of records after them, from a third, so a seed's other lines are those
it had before they were written; measured tables and fits (`modelgen_data`)
after them, from a fourth, their lines at the end of the file.

Every choice is drawn from a `Source`, so the same generator serves
hypothesis (`models()`: its draws shrink to small repros) and a seeded soak
(`generate(seed)`: a failing seed is its own repro).  The generator tracks
each cell's dimension, so every formula it writes is consistent; what it
cannot know is a value, so a division by zero or a solve without a root is a
legitimate cell error, which the oracle compares like any value.
"""
from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass, field

# Dimensions are exponent vectors over these bases; each base has the
# spellings a writer would use for it.
# Money and replicas are units a model declares (`dimension money`, `unit USD: money`,
# `unit replica`): only a model that declares them has cells of those dimensions.
BASES = ("B", "s", "token", "request", "GPU", "FLOP", "money", "replica")
SPELLINGS = {
    "B": ("B", "KiB", "MB", "GB", "GiB", "Gbit", "TB"),
    "s": ("s", "ms", "us", "µs", "min", "hour"),
    "token": ("token", "tok"),
    "request": ("request", "req"),
    "GPU": ("GPU",),
    "FLOP": ("FLOP", "TFLOP", "GFLOP"),
    "money": ("USD", "kUSD"),
    "replica": ("replica",),
}


def dim(*exponents: int) -> tuple:
    """A dimension from the exponents of the first bases (the others 0)."""
    return tuple(exponents) + (0,) * (len(BASES) - len(exponents))


NONE = dim()
# Dimensions a capacity plan has: sizes, times, rates, per-token sizes, ...
COMMON = tuple(dim(*d) for d in (
    (), (1,), (0, 1), (1, -1), (0, 0, 1),
    (1, 0, -1), (0, -1, 1), (0, -1, 0, 1), (0, 0, 0, 0, 1),
    (0, -1, 0, 0, 0, 1), (0, 0, 0, 0, 0, 1), (0, 1, 0, -1), (0, 0, 1, -1),
))
WORDS = ("kv", "link", "wait", "rate", "load", "share", "size", "cost", "lat", "cap", "demand", "bw",
         "ctx", "pool", "prefill", "decode", "hbm", "queue", "ttft", "tpot", "fetch", "spill")
STATEMENT_KINDS = (
    "input", "uncertain", "formula", "record", "alias", "function", "use_module", "use_stdlib",
    "section", "description", "docstring", "comprehension", "nested_comprehension", "nested_comprehension_3",
    "first", "argmax",
    "argmin_tie", "if", "max_min", "builtin", "solve_closed", "solve_numeric", "solve_bracketed",
    "solve_through_max", "table_values", "table_range", "table_records", "table_two_way", "table_read",
    "scenario", "scenario_formula", "scenario_alias", "scenario_read", "statistic", "check_equal", "check_compound",
    "check_within", "check_compare", "check_table", "check_scenario", "check_statistic", "shape_run",
    "display_unit", "shuffled",
    # written by `modelgen_plans`, from a stream of their own
    "unit_dimension", "use_money", "unit_count", "unit_derived", "unit_quantity",
    "list_values", "list_records", "list_count", "list_fold", "list_item", "list_comprehension",
    "table_over_list", "plan_cost", "plan_split", "search", "search_goals", "search_multiline",
    "search_range", "search_over_list", "search_records", "search_infeasible", "search_read",
    "search_read_rank", "check_search", "pareto", "pareto_read",
    # written last, from a stream of their own: what reads a list of records
    "records_count", "records_comprehension", "records_comprehension_if", "records_position", "records_item",
    "search_read_record", "scenario_read_record",
    # written by `modelgen_data`, from a stream of their own, at the end of the file
    "data_table", "data_csv", "data_tsv", "data_exact", "data_inexact", "data_missing", "data_label",
    "data_count", "data_aggregate", "data_row", "check_data", "fit", "fit_linear1", "fit_linear2",
    "fit_nonlinear1", "fit_nonlinear2", "fit_relative", "fit_bounded", "fit_shadow", "fit_read", "fit_se",
    "fitted_dist", "check_fit", "table_over_column", "table_refit", "scenario_fit", "solve_fit", "search_fit",
)


class Source:
    """Where choices come from: a seeded `random.Random`."""

    def __init__(self, rng: random.Random):
        self.rng = rng

    def integer(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def choice(self, options):
        options = list(options)
        return options[self.integer(0, len(options) - 1)]

    def chance(self, p: float) -> bool:
        return self.integer(0, 999) < p * 1000


class HypothesisSource(Source):
    """Choices drawn by hypothesis, so a failing model shrinks."""

    def __init__(self, draw):
        self.draw = draw

    def integer(self, lo: int, hi: int) -> int:
        from hypothesis import strategies as st
        return self.draw(st.integers(lo, hi))


@dataclass
class Cell:
    name: str             # as a formula reads it (`lib.x`, `cur.bw`)
    dim: tuple
    uncertain: bool = False
    integer: bool = False
    input: bool = False   # a plain input a table, a scenario or a solve may vary
    literal: tuple | None = None   # (number, unit) of an input
    sampled: bool = False   # a statistic of an uncertain cell: one value, but no search may read it


@dataclass
class Generated:
    """A generated model: its files (name -> text; `main.ifr` is the model) and what it covers."""
    files: dict
    kinds: Counter
    seed: object = None
    tables: list = field(default_factory=list)     # table names
    cells: list = field(default_factory=list)      # names of the main file's cells (explain, sensitivity)
    uncertain: list = field(default_factory=list)  # names of uncertain cells (hist)
    inputs: list = field(default_factory=list)     # names of plain inputs (solve)
    searches: list = field(default_factory=list)   # search and pareto names
    search_reads: list = field(default_factory=list)   # (cell, search, rank, column): `cell = search[rank].column`
    fits: list = field(default_factory=list)       # modelgen_data.MeasuredFit
    expected: list = field(default_factory=list)   # (cell, value, unit): what a cell reading a data table shows

    @property
    def main(self) -> str:
        return self.files["main.ifr"]


def add(a: tuple, b: tuple, sign: int = 1) -> tuple:
    return tuple(x + sign * y for x, y in zip(a, b))


class Writer:
    """Writes one module; `main()` writes the model with its imports."""

    def __init__(self, src: Source, prefix: str = "", uncertain: bool = False):
        self.src = src
        self.prefix = prefix
        self.allow_uncertain = uncertain
        self.cells: list[Cell] = []
        self.lines: list[str] = []
        self.kinds: Counter = Counter()
        self.functions: list[tuple[str, tuple, tuple, tuple]] = []   # name, dim a, dim b, result dim
        self.record_list: list[tuple[str, dict]] = []     # name, field -> dim
        self.alias: str | None = None
        self.record_names: list[str] = []
        self.tables: list[str] = []
        self.scenarios: list[str] = []
        self.checks: list[str] = []
        self.used_names: set[str] = set()
        self.spellings = dict(SPELLINGS)   # and the units a model declares (`node` of GPU, `page` of token)
        self.declarations: list[str] = []   # `dimension`, `unit` and `use money` lines
        self.declared: set[str] = set()
        self.lists: list = []            # modelgen_plans.NamedList
        self.searches: list[str] = []
        self.search_reads: list[tuple] = []
        self.search_readers: set[str] = set()   # cells that read a search's result

    # -- names, numbers, units ------------------------------------------------------------

    def name(self, hint: str = "") -> str:
        while True:
            word = hint or self.src.choice(WORDS)
            if self.src.chance(0.5):
                candidate = f"{self.prefix}{word}_{self.src.integer(0, 99)}"
            else:
                candidate = f"{self.prefix}{word}_{''.join(self.src.choice('abcdefghkmpqrsuvwxyz') for _ in range(2))}"
            if candidate not in self.used_names:
                self.used_names.add(candidate)
                return candidate

    def number(self, integer: bool = False) -> str:
        if integer:
            return str(self.src.choice((1, 2, 3, 4, 8, 16, 32, 64, 100, 1024, 4096)))
        mantissa = self.src.integer(1, 999)
        digits = self.src.integer(0, 2)
        value = mantissa / 10 ** digits
        scale = self.src.choice(("", "", "", "e3", "e-3", "e6"))
        text = f"{value:g}" if not scale else f"{value:g}{scale}"
        if self.src.chance(0.05):
            text = f"{mantissa}_000"
        return text

    def unit(self, dim: tuple) -> str:
        """A spelling of `dim` as a writer would type it (never all-denominator: see `quantity`)."""
        num, den = [], []
        for base, exp in zip(BASES, dim):
            if exp == 0:
                continue
            spelled = self.src.choice(self.spellings[base])
            power = spelled if abs(exp) == 1 else f"{spelled}^{abs(exp)}"
            (num if exp > 0 else den).append(power)
        return "*".join(num) + "".join("/" + d for d in den)

    def quantity(self, dim: tuple, integer: bool = False) -> tuple[str, str]:
        """A literal of `dim`: (number, unit); the unit is '' for a plain number, '%' for a share."""
        if dim == NONE:
            if not integer and self.src.chance(0.25):
                return str(self.src.integer(1, 95)), "%"
            return self.number(integer), ""
        if all(e <= 0 for e in dim):   # `3 1/s` cannot be written: divide by a quantity of the inverse
            return self.number(), self.unit(tuple(-e for e in dim))
        return self.number(integer), self.unit(dim)

    def literal(self, dim: tuple, integer: bool = False) -> str:
        number, unit = self.quantity(dim, integer)
        if dim != NONE and all(e <= 0 for e in dim):
            return f"({number} / (1 {unit}))"
        return f"{number}{unit}" if unit == "%" else f"{number} {unit}".strip()

    def display_unit(self, dim: tuple) -> str | None:
        if dim == NONE:
            return "%" if self.src.chance(0.3) else None
        if all(e <= 0 for e in dim):
            return None
        return self.unit(dim)

    # -- cells -----------------------------------------------------------------------------

    def emit(self, line: str, kind: str) -> None:
        if self.src.chance(0.2) and not line.startswith(("check", "table", "scenario", "section", "use")):
            line += f"   # {self.src.choice(('from the datasheet', 'per request', 'assumed', '例如 8 卡'))}"
            self.kinds["description"] += 1
        self.lines.append(line)
        self.kinds[kind] += 1

    def of_dim(self, dim: tuple, certain: bool = False) -> list[Cell]:
        return [c for c in self.cells if c.dim == dim and not (certain and c.uncertain)]

    def input_cell(self) -> Cell:
        dim = self.src.choice(COMMON)
        integer = dim == NONE and self.src.chance(0.3)
        name = self.name()
        if self.allow_uncertain and not integer and self.src.chance(0.25) and not all(e <= 0 for e in dim) \
                and dim != NONE:
            lo, unit = self.quantity(dim)
            hi = f"{float(lo) * self.src.choice((1.5, 2, 3)):g}"
            form = self.src.choice(("to", "uniform", "normal", "triangular"))
            if form == "to":
                text = f"{lo} {unit} to {hi} {unit}"
            elif form == "uniform":
                text = f"uniform({lo} {unit}, {hi} {unit})"
            elif form == "normal":
                text = f"normal({hi} {unit}, {float(lo) / 10:g} {unit})"
            else:
                text = f"triangular({lo} {unit}, {hi} {unit}, {float(hi) * 1.5:g} {unit})"
            cell = Cell(name, dim, uncertain=True)
            self.emit(f"{name} = {text}", "uncertain")
        else:
            number, unit = self.quantity(dim, integer)
            cell = Cell(name, dim, integer=integer, input=True, literal=(number, unit))
            self.emit(f"{name} = {self.literal_of(cell)}", "input")
        self.cells.append(cell)
        return cell

    @staticmethod
    def literal_of(cell: Cell, number: str | None = None) -> str:
        number = cell.literal[0] if number is None else number
        unit = cell.literal[1]
        if unit == "%":
            return f"{number}%"
        if cell.dim != NONE and all(e <= 0 for e in cell.dim):
            return f"({number} / (1 {unit}))"
        return f"{number} {unit}".strip()

    def formula_cell(self, depth: int = 2) -> Cell:
        dim = self.src.choice([c.dim for c in self.cells] + list(COMMON[:6]))
        text, uncertain = self.expr(dim, depth)
        name = self.name()
        unit = self.display_unit(dim) if self.src.chance(0.4) else None
        if unit:
            self.kinds["display_unit"] += 1
        self.emit(f"{name} = {text}" + (f"   in {unit}" if unit else ""), "formula")
        cell = Cell(name, dim, uncertain=uncertain)
        self.cells.append(cell)
        return cell

    # -- expressions -----------------------------------------------------------------------

    def leaf(self, dim: tuple, certain: bool = False) -> tuple[str, bool]:
        found = self.of_dim(dim, certain)
        if found and self.src.chance(0.75):
            cell = self.src.choice(found)
            return cell.name, cell.uncertain
        return self.literal(dim), False

    def expr(self, dim: tuple, depth: int, certain: bool = False, var: str | None = None) -> tuple[str, bool]:
        """An expression of dimension `dim` (and whether it is uncertain); `var` is a
        comprehension's variable, a plain number, that may appear in it."""
        if depth <= 0 or self.src.chance(0.25):
            if var and dim == NONE and self.src.chance(0.5):
                return var, False
            return self.leaf(dim, certain)
        form = self.src.integer(0, 13)
        sub = depth - 1
        if form <= 2:
            (a, ua), (b, ub) = self.expr(dim, sub, certain, var), self.expr(dim, sub, certain, var)
            return f"({a} {self.src.choice('+-')} {b})", ua or ub
        if form <= 4:
            other = self.src.choice(COMMON)
            (a, ua), (b, ub) = self.expr(other, sub, certain, var), self.expr(add(dim, other, -1), sub, certain, var)
            return f"{a} * {b}", ua or ub
        if form <= 6:
            other = self.src.choice(COMMON)
            (a, ua), (b, ub) = self.expr(add(dim, other), sub, certain, var), self.expr(other, sub, certain, var)
            return f"{a} / ({b})", ua or ub
        if form == 7:
            self.kinds["max_min"] += 1
            parts = [self.expr(dim, sub, certain, var) for _ in range(self.src.integer(2, 3))]
            return f"{self.src.choice(('max', 'min'))}({', '.join(p for p, _ in parts)})", any(u for _, u in parts)
        if form == 8:
            self.kinds["if"] += 1
            other = self.src.choice(COMMON)
            (c1, u1), (c2, u2) = self.expr(other, sub, certain, var), self.expr(other, sub, certain, var)
            (a, ua), (b, ub) = self.expr(dim, sub, certain, var), self.expr(dim, sub, certain, var)
            op = self.src.choice(("<", "<=", ">", ">=", "==", "!="))
            cond = f"{c1} {op} {c2}"
            if self.src.chance(0.3):
                (c3, u3), (c4, u4) = self.expr(other, 0, certain, var), self.expr(other, 0, certain, var)
                cond = f"{cond} {self.src.choice(('and', 'or'))} not {c3} > {c4}"
                u1 = u1 or u3 or u4
            return f"(if {cond} then {a} else {b})", u1 or u2 or ua or ub
        if form == 9 and dim == NONE:
            self.kinds["builtin"] += 1
            (a, ua) = self.expr(NONE, sub, certain, var)
            fn = self.src.choice(("ceil", "floor", "round", "abs", "sqrt_abs", "ln1p", "log2_1p", "log10_1p",
                                  "exp_neg"))
            text = {"sqrt_abs": f"sqrt(abs({a}))", "ln1p": f"ln(1 + abs({a}))", "log2_1p": f"log2(1 + abs({a}))",
                    "log10_1p": f"log10(1 + abs({a}))", "exp_neg": f"exp(-abs({a}) / 1000)"}.get(fn, f"{fn}({a})")
            return text, ua
        if form == 10 and var is None:
            return self.comprehension(dim, sub, certain)
        if form == 11 and self.functions:
            fname, da, db, dr = self.src.choice(self.functions)
            scale = add(dim, dr, -1)
            (a, ua), (b, ub) = self.expr(da, sub, certain, var), self.expr(db, sub, certain, var)
            call = f"{fname}({a}, {b})"
            if scale == NONE:
                return call, ua or ub
            (k, uk) = self.expr(scale, 0, certain, var)
            return f"{call} * {k}", ua or ub or uk
        if form == 12 and dim == NONE and var is None:
            return self.search(sub, certain)
        if form == 13 and all(e % 2 == 0 for e in dim):
            half = tuple(e // 2 for e in dim)
            (a, ua) = self.expr(half, sub, certain, var)
            return f"({a})^2", ua
        return self.leaf(dim, certain)

    def comprehension(self, dim: tuple, depth: int, certain: bool) -> tuple[str, bool]:
        var = self.src.choice(("n", "k", "i"))
        hi = self.src.integer(1, 8)
        body, u = self.expr(dim, depth, certain, var=var)
        if var not in body:
            body = f"{body} * {var}" if self.src.chance(0.5) else f"{body} / {var}"
        if self.src.chance(0.3) and depth > 0:   # nested: the inner one reads the outer variable
            inner_var = "m" if var != "m" else "j"
            inner, ui = self.expr(dim, depth - 1, certain, var=inner_var)
            if self.src.chance(0.4):   # three deep: the innermost reads both variables around it
                (leaf, ul) = self.leaf(dim, certain)
                inner = f"{self.src.choice(('sum', 'max', 'min'))}({leaf} * j2 + {inner} for j2 in {inner_var}..{var})"
                ui = ui or ul
                self.kinds["nested_comprehension_3"] += 1
            fold = self.src.choice(("sum", "max", "min"))
            body = f"{fold}({inner} * {inner_var} + {body} for {inner_var} in 1..{var})"
            u = u or ui
            self.kinds["nested_comprehension"] += 1
        cond = f" if {var} != {self.src.integer(1, hi)}" if self.src.chance(0.3) and hi > 1 else ""
        self.kinds["comprehension"] += 1
        return f"{self.src.choice(('sum', 'max', 'min'))}({body} for {var} in 1..{hi}{cond})", u

    def search(self, depth: int, certain: bool) -> tuple[str, bool]:
        """`argmax`/`argmin` (with ties) or `first`: a dimensionless count."""
        var = self.src.choice(("n", "k"))
        hi = self.src.integer(2, 12)
        if self.src.chance(0.4):
            # min(n / a, (cards - n) / b): equal a and b tie at the middle, as a split of cards does
            cards = self.src.integer(2, 12)
            dim = self.src.choice(COMMON[1:6])
            (per, u) = self.leaf(dim, certain=True)
            self.kinds["argmin_tie"] += 1
            fn = self.src.choice(("argmax", "argmin"))
            inner = "min" if fn == "argmax" else "max"
            return (f"{fn}({inner}({var} / ({per}), ({cards} - {var}) / ({per})) for {var} in 1..{max(1, cards - 1)})",
                    u)
        if self.src.chance(0.5):
            body, u = self.expr(NONE, depth, certain=True, var=var)
            self.kinds["argmax"] += 1
            return f"{self.src.choice(('argmax', 'argmin'))}({body} for {var} in 1..{hi})", u
        dim = self.src.choice(COMMON)
        (a, ua) = self.expr(dim, depth, certain=True, var=None)
        (b, ub) = self.leaf(dim, certain=True)
        self.kinds["first"] += 1
        return f"first({var} for {var} in 1..{hi * 50} if {var} * {a} >= {b})", ua or ub

    # -- statements beyond cells -----------------------------------------------------------

    def function(self) -> None:
        da, db = self.src.choice(COMMON), self.src.choice(COMMON)
        name = self.name("fn")
        body_forms = (("a * b", add(da, db)), ("a / b", add(da, db, -1)), ("a * b + a * b", add(da, db)),
                      ("max(a, a * 2) * b", add(da, db)))
        body, dr = self.src.choice(body_forms)
        self.emit(f"fn {name}(a, b) = {body}", "function")
        self.functions.append((name, da, db, dr))

    def records(self) -> None:
        """Two or three records with the same fields, and an alias of one."""
        fields = {f"{self.src.choice(WORDS)}_{i}": self.src.choice(COMMON[1:8]) for i in range(self.src.integer(1, 3))}
        names = []
        for _ in range(self.src.integer(2, 3)):
            name = self.name("gpu")
            parts = []
            for f, dim in fields.items():
                parts.append(f"{f} = {self.literal(dim)}")
            if self.src.chance(0.3) and len(fields) > 1:
                first, second = list(fields)[:2]
                if fields[first] == fields[second]:
                    parts[1] = f"{second} = {first} * 2"
            sep = ",\n    " if self.src.chance(0.5) else ", "
            body = ("{\n    " + sep.join(parts) + ",\n}") if sep.startswith(",\n") else "{ " + sep.join(parts) + " }"
            self.emit(f"{name} = {body}", "record")
            names.append(name)
            self.record_list.append((name, fields))
        self.alias = self.name("cur")
        self.emit(f"{self.alias} = {names[0]}", "alias")
        for f, dim in fields.items():
            self.cells.append(Cell(f"{self.alias}.{f}", dim))
        self.record_names = names

    def solve(self) -> None:
        candidates = [c for c in self.cells if c.input and not c.integer and "." not in c.name]
        if not candidates:
            return
        x = self.src.choice(candidates)
        target = self.src.choice(COMMON[1:6])
        scale = add(target, x.dim, -1)
        (k, uk) = self.expr(scale, 1)
        (c, uc) = self.expr(target, 0)
        style = self.src.integer(0, 3)
        if style == 0:
            lhs, kind = f"{x.name} * {k} + {c}", "solve_closed"
        elif style == 1:
            lhs, kind = f"max({x.name} * {k}, {c})", "solve_through_max"
        elif style == 2:
            lhs, kind = f"({x.name} * {k})^2 / ({c})", "solve_numeric"
        else:
            lhs, kind = f"(if {x.name} * {k} > {c} then {x.name} * {k} else {x.name} * {k} * 2)", "solve_through_max"
        if self.src.chance(0.8):   # the left side where x is 1.5 times its value: a root there
            moved = self.literal_of(x, f"{float(x.literal[0].replace('_', '')) * 1.5:g}")
            r, ur = re.sub(rf"(?<![\w.]){re.escape(x.name)}(?!\w)", lambda _: moved, lhs), False
        else:
            (r, ur) = self.expr(target, 1)
        bracket = ""
        if self.src.chance(0.4) or style == 2:
            number = float(x.literal[0].replace("_", ""))
            lo, hi = f"{number / 1000:g}", f"{number * 1000:g}"
            bracket = f" on {self.literal_of(x, lo)}..{self.literal_of(x, hi)}"
            self.kinds["solve_bracketed"] += 1
        name = self.name("even")
        self.emit(f"{name} = solve {x.name}{bracket}: {lhs} = {r}", kind)
        self.cells.append(Cell(name, x.dim, uncertain=uk or uc or ur))

    def table(self) -> None:
        shown = [c for c in self.cells if not c.input and "." not in c.name and not c.name.startswith("lib")]
        inputs = [c for c in self.cells if c.input and "." not in c.name and c.literal[1] != "%"]
        if not shown or not inputs:
            return
        columns = list(dict.fromkeys(self.src.choice(shown).name for _ in range(self.src.integer(1, 3))))
        name = self.name("by")
        style = self.src.integer(0, 3)
        x = self.src.choice(inputs)
        values = [self.literal_of(x, self.number(x.integer)) for _ in range(self.src.integer(2, 4))]
        values = list(dict.fromkeys(values))
        if style == 1 and x.dim == NONE:
            hi = self.src.integer(2, 6)
            vary, kind, keys = f"{x.name} over 1..{hi} by 1", "table_range", [str(self.src.integer(1, hi))]
        elif style == 2 and self.alias:
            vary, kind = f"{self.alias} over [{', '.join(self.record_names)}]", "table_records"
            keys = [self.src.choice(self.record_names)]
        elif style == 3 and len(inputs) > 1:
            y = self.src.choice([c for c in inputs if c is not x])
            others = list(dict.fromkeys(self.literal_of(y, self.number(y.integer)) for _ in range(2)))
            vary, kind = f"{x.name} over [{', '.join(values)}], {y.name} over [{', '.join(others)}]", "table_two_way"
            keys = [self.src.choice(values), self.src.choice(others)]
        else:
            vary, kind, keys = f"{x.name} over [{', '.join(values)}]", "table_values", [self.src.choice(values)]
        self.lines.append(f"table {name}: vary {vary} show {', '.join(columns)}")
        self.kinds[kind] += 1
        self.tables.append(name)
        column = self.src.choice(columns)
        cell = next(c for c in self.cells if c.name == column)
        ref = f"{name}[{', '.join(keys)}].{column}"
        if self.src.chance(0.5):
            reader = self.name("row")
            self.emit(f"{reader} = {ref} * 2", "table_read")
            self.cells.append(Cell(reader, cell.dim, uncertain=cell.uncertain))
        elif not cell.uncertain:
            self.checks.append(f"check {ref} > {self.literal(cell.dim)}" if not all(e <= 0 for e in cell.dim)
                               else f"check {ref} >= {ref}")
            self.kinds["check_table"] += 1

    def scenario(self) -> None:
        inputs = [c for c in self.cells if c.input and "." not in c.name]
        if not inputs:
            return
        name = self.name("case")
        parts = []
        for x in list(dict.fromkeys(self.src.choice(inputs).name for _ in range(self.src.integer(1, 2)))):
            cell = next(c for c in inputs if c.name == x)
            others = [c for c in self.cells if c.dim == cell.dim and c.name != x and not c.uncertain
                      and "." not in c.name]
            if others and self.src.chance(0.4):
                parts.append(f"{x} = {self.src.choice(others).name} * 2")
                self.kinds["scenario_formula"] += 1
            else:
                parts.append(f"{x} = {self.literal_of(cell, self.number(cell.integer))}")
        if self.alias and self.src.chance(0.3):
            parts.append(f"{self.alias} = {self.src.choice(self.record_names)}")
            self.kinds["scenario_alias"] += 1
        self.lines.append(f"scenario {name}: {', '.join(parts)}")
        self.kinds["scenario"] += 1
        self.scenarios.append(name)
        shown = [c for c in self.cells if not c.input and "." not in c.name and not c.uncertain]
        if shown:
            cell = self.src.choice(shown)
            if self.src.chance(0.5):
                reader = self.name("vs")
                self.emit(f"{reader} = {name}.{cell.name} - {cell.name}", "scenario_read")
                self.cells.append(Cell(reader, cell.dim))
            else:
                self.checks.append(f"check {name}.{cell.name} >= {cell.name}")
                self.kinds["check_scenario"] += 1

    def statistic(self) -> None:
        uncertain = [c for c in self.cells if c.uncertain]
        if not uncertain:
            return
        cell = self.src.choice(uncertain)
        form = self.src.choice(("mean", "median", "sd", "percentile", "prob"))
        name = self.name("stat")
        if form == "percentile":
            text = f"percentile({cell.name}, {self.src.choice(('95', '5', '50%', '90%'))})"
            dim = cell.dim
        elif form == "prob":
            text, dim = f"prob({cell.name} > {self.literal(cell.dim)})", NONE
        else:
            text, dim = f"{form}({cell.name})", cell.dim
        self.emit(f"{name} = {text}", "statistic")
        self.cells.append(Cell(name, dim, sampled=True))
        if self.src.chance(0.5):
            stat = text if form != "prob" else f"median({cell.name})"
            bound = self.literal(dim if form != "prob" else cell.dim)
            self.checks.append(f"check {stat} > {bound}" if not all(e <= 0 for e in cell.dim) or form == "prob"
                               else f"check {stat} >= {stat}")
            self.kinds["check_statistic"] += 1

    def shape_run(self) -> None:
        """A long run of one line shape, as a script writes a model of many layers."""
        dim = self.src.choice(COMMON[1:6])
        word = self.src.choice(WORDS)
        step = self.literal(dim)
        self.emit(f"{word}_layer0 = {self.literal(dim)}", "shape_run")
        for i in range(1, self.src.integer(20, 60)):
            self.lines.append(f"{word}_layer{i} = {word}_layer{i - 1} * 1.01 + {step}")
        last = Cell(f"{word}_layer{i}", dim)
        self.cells.append(last)

    def check(self) -> None:
        certain = [c for c in self.cells if not c.uncertain]
        if not certain:
            return
        cell = self.src.choice(certain)
        style = self.src.integer(0, 2)
        if style == 0 and not all(e <= 0 for e in cell.dim) or (style == 0 and cell.dim == NONE):
            self.checks.append(f"check {cell.name} = {self.literal(cell.dim)}")
            self.kinds["check_equal"] += 1
        elif style == 1 and not all(e <= 0 for e in cell.dim) or (style == 1 and cell.dim == NONE):
            self.checks.append(f"check {cell.name} = {self.literal(cell.dim)} within {self.src.choice(('50%', '1%'))}")
            self.kinds["check_within"] += 1
        elif self.src.chance(0.25):
            (a, _), (b, _) = self.expr(cell.dim, 0, certain=True), self.expr(cell.dim, 0, certain=True)
            self.checks.append(f"check {cell.name} >= {a} {self.src.choice(('and', 'or'))} not {cell.name} > {b}")
            self.kinds["check_compound"] += 1
        else:
            (other, _) = self.expr(cell.dim, 1, certain=True)
            self.checks.append(f"check {cell.name} {self.src.choice(('<', '<=', '>', '>='))} {other}")
            self.kinds["check_compare"] += 1


def library(src: Source) -> tuple[str, list[Cell], list, Counter]:
    """A module for the model to import: a few inputs and formulas, maybe a function."""
    w = Writer(src, prefix="lib_")
    w.lines.append('"""A module of shared figures."""')
    for _ in range(src.integer(2, 4)):
        w.input_cell()
    for _ in range(src.integer(1, 3)):
        w.formula_cell(depth=1)
    if src.chance(0.5):
        w.function()
    return "\n".join(w.lines) + "\n", w.cells, w.functions, w.kinds


STDLIB_FIELDS = {
    "hardware": {"a100": {"hbm_bandwidth": dim(1, -1), "bf16_flops": dim(0, -1, 0, 0, 0, 1),
                          "hbm_capacity": dim(1)},
                 "h100": {"hbm_bandwidth": dim(1, -1), "bf16_flops": dim(0, -1, 0, 0, 0, 1),
                          "hbm_capacity": dim(1)},
                 "nic_200g": {"bandwidth": dim(1, -1)}},
    "llm": {"qwen3_8b": {"layers": NONE, "kv_heads": NONE, "head_dim": NONE}},
}


def write(src: Source, extra: Source | None = None, records: Source | None = None,
          data: Source | None = None) -> Generated:
    """One model (and the module it imports), drawn from `src`; the plans that search,
    lists and declared units are drawn last, from `extra` (or `src` when not given),
    what reads a list of records after them, from `records` (or `extra`), and measured
    tables and fits after those, from `data` (`modelgen_data`), their lines at the end."""
    uncertain = src.chance(0.35)
    w = Writer(src, uncertain=uncertain)
    files = {}
    header = []
    if src.chance(0.7):
        header.append(f'"""A plan of {src.choice(WORDS)} capacity.\n\nWritten by someone new to ifr."""')
        w.kinds["docstring"] += 1
    if src.chance(0.4):
        text, cells, functions, kinds = library(src)
        files["lib_shared.ifr"] = text
        w.kinds.update(kinds)
        if src.chance(0.5):
            imported = [c for c in cells if "." not in c.name]
            header.append("use lib_shared: " + ", ".join(c.name for c in imported))
            w.cells += imported
            w.functions += functions
            header[-1] += "".join(f", {f[0]}" for f in functions)
        else:
            header.append('use "lib_shared.ifr" as shared')
            w.cells += [Cell(f"shared.{c.name}", c.dim, c.uncertain, c.integer) for c in cells]
        w.used_names |= {c.name for c in cells}
        w.kinds["use_module"] += 1
    if src.chance(0.3):
        module = src.choice(sorted(STDLIB_FIELDS))
        record = src.choice(sorted(STDLIB_FIELDS[module]))
        header.append(f"use {module}: {record}")
        w.cells += [Cell(f"{record}.{f}", dim) for f, dim in STDLIB_FIELDS[module][record].items()]
        w.kinds["use_stdlib"] += 1
    sections = src.chance(0.5)
    if sections:
        w.lines.append('section "Inputs"')
        w.kinds["section"] += 1
    for _ in range(src.integer(2, 7)):
        w.input_cell()
    if src.chance(0.35):
        w.records()
    if src.chance(0.3):
        w.function()
    if sections:
        w.lines.append('section "Formulas"')
    for _ in range(src.integer(2, 9)):
        w.formula_cell(depth=src.integer(1, 3))
    if src.chance(0.1):
        w.shape_run()
    for _ in range(src.integer(0, 2)):
        w.solve()
    for _ in range(src.integer(0, 2)):
        w.statistic()
    for _ in range(src.integer(0, 2)):
        w.table()
    for _ in range(src.integer(0, 2)):
        w.scenario()
    for _ in range(src.integer(1, 4)):
        w.check()
    body = list(w.lines)
    shuffled = src.chance(0.25) and not sections
    if shuffled:
        # cells in any order, as in a spreadsheet: keep records' lines together
        for i in range(len(body) - 1, 0, -1):
            j = src.integer(0, i)
            body[i], body[j] = body[j], body[i]
        w.kinds["shuffled"] += 1
    from modelgen_plans import write_plans
    before = len(w.lines)
    write_plans(w, extra or src, sections, records)
    added = w.declarations + w.lines[before:]
    if shuffled:   # the plans' lines too, anywhere: a unit may be declared after its use
        for line in added:
            body.insert(w.src.integer(0, len(body)), line)
    else:
        header += w.declarations
        body += w.lines[before:]
    text = "\n".join(header + body + w.checks) + "\n"
    from modelgen_data import write_data
    before, checks = len(w.lines), len(w.checks)
    files.update(write_data(w, data or extra or src, sections))
    appended = w.lines[before:] + w.checks[checks:]   # at the end: the text before is what it was
    text += "".join(line + "\n" for line in appended)
    files["main.ifr"] = text
    own = [c.name for c in w.cells if "." not in c.name and not c.name.startswith("lib_")]
    return Generated(files, w.kinds, tables=list(w.tables), cells=own,
                     uncertain=[c.name for c in w.cells if c.uncertain and c.name in own],
                     inputs=[c.name for c in w.cells if c.input and c.name in own],
                     searches=list(w.searches), search_reads=list(w.search_reads),
                     fits=list(getattr(w, "data_fits", [])), expected=list(getattr(w, "expected", [])))


def generate(seed) -> Generated:
    """The model of a seed: the same seed, the same model."""
    model = write(Source(random.Random(f"ifr-model:{seed}")), Source(random.Random(f"ifr-plan:{seed}")),
                  Source(random.Random(f"ifr-records:{seed}")), Source(random.Random(f"ifr-data:{seed}")))
    model.seed = seed
    return model


def models():
    """A hypothesis strategy of generated models (they shrink to small ones)."""
    from hypothesis import strategies as st
    return st.composite(lambda draw: write(HypothesisSource(draw)))()
