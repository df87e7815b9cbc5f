"""Units and dimensions a file declares: `dimension money`, `unit USD: money`,
`unit replica`, `unit node = 8 GPU`.

They are part of one analysis, not of pint's registry: two models in one
process may each declare `node` their own way.  `collect` checks every
declaration of the files an analysis loads and returns a `DeclaredUnits`,
which answers a unit text that names a declared unit (its factor to base
units and its dimension) beside pint's answers for the rest; `units.unit`
asks it while `units.declaring(table)` is in force.

Spellings: a declared unit is also read with a metric prefix of a count
(k M G T P: `kUSD`, `MUSD`, `knode`) and, when its name is a lower-case word
not ending in s, with a plural s (`nodes`, `replicas`, `pages`).  Prefixes
below one (`mUSD`) are not read: they name nothing a plan counts.
"""
from __future__ import annotations

import hashlib
import re

from ifr.errors import IfrError, Span
from ifr.records import dataclass, field
from ifr.semantics.units import DIMENSIONLESS, Dim, suggest, unit
from ifr.syntax import nodes as syntax

PREFIXES = {"k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}

_TOKEN = re.compile(r"\s*(1/|[^\W\d]\w*|\(|\)|(?:\^|\*\*)-?\d+|[*/])")
_ATOM = re.compile(r"[^\W\d]\w*")


@dataclass(frozen=True)
class Declared:
    """One declared unit: where it was written, its factor to base units and its dimension."""
    name: str
    span: Span
    factor: float
    dim: Dim
    description: str = ""
    definition: str = ""      # `8 GPU`, or `money` for the unit of a dimension, or "" for a count


@dataclass
class DeclaredUnits:
    """The declared units of one analysis: every spelling -> (factor, dimension)."""
    units: dict[str, Declared] = field(default_factory=dict)          # by name
    dimensions: dict[str, Span] = field(default_factory=dict)         # `[money]` -> where declared
    spellings: dict[str, tuple[float, Dim, str]] = field(default_factory=dict)  # text -> factor, dim, name
    base_units: dict[str, str] = field(default_factory=dict)          # `[money]` -> `USD`
    broken: dict[str, Span] = field(default_factory=dict)             # units whose definition has a mistake
    visible: dict[str, frozenset[str]] = field(default_factory=dict)  # a file -> the files whose units it knows
    key: str = ""             # a digest of the declarations: part of every cache key that holds a factor

    def __bool__(self) -> bool:
        return bool(self.spellings or self.broken)

    def mentions(self, text: str) -> bool:
        """Whether a unit text names a declared unit (or one whose definition has a mistake)."""
        return any(atom in self.spellings or atom in self.broken for atom in _ATOM.findall(text))

    def resolve(self, text: str) -> tuple[float, Dim] | None:
        """The factor and dimension of a unit text that names a declared unit
        (None when it names none: pint answers it alone)."""
        if not self.mentions(text):
            return None
        return _Reader(text, self).read()

    def hidden(self, text: str, file: str) -> Declared | None:
        """The first declared unit of ``text`` that ``file`` does not know: declared in a
        file it neither is nor uses (directly or through the modules it uses)."""
        known = self.visible.get(file)
        if known is None:
            return None   # a value given at run time (`--set`) is the main file's
        for atom in _ATOM.findall(text):
            found = self.spellings.get(atom)
            if found is not None and self.units[found[2]].span.file not in known:
                return self.units[found[2]]
        return None

    def base_unit(self, dim_key: str) -> str | None:
        return self.base_units.get(dim_key)

    def to_data(self) -> dict:
        """Plain data (for the editor's worker to send): spelling -> [factor, [[dimension, exponent]], name]."""
        return {text: [f, [list(kv) for kv in d.items], name] for text, (f, d, name) in self.spellings.items()}

    @classmethod
    def from_data(cls, data: dict) -> DeclaredUnits:
        table = cls()
        for text, (f, items, name) in data.items():
            table.spellings[text] = (float(f), Dim({k: v for k, v in items}), name)
        table.key = hashlib.sha256(repr(sorted(data.items())).encode()).hexdigest()[:16]
        return table


NONE = DeclaredUnits()


class _Reader:
    """A unit text read atom by atom, as pint reads one: `a/b*c` is (a/b)*c."""

    def __init__(self, text: str, table: DeclaredUnits):
        self.tokens, pos = [], 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None:
                raise IfrError("bad-unit", f"`{text}` is not a unit expression", None)
            self.tokens.append(m.group(1))
            pos = m.end()
        self.text, self.table, self.at = text, table, 0

    def read(self) -> tuple[float, Dim]:
        found = self._product()
        if self.at != len(self.tokens):
            raise IfrError("bad-unit", f"`{self.text}` is not a unit expression", None)
        return found

    def _peek(self):
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def _product(self) -> tuple[float, Dim]:
        if self._peek() == "1/":
            self.at += 1
            f, d = self._power()
            f, d = 1 / f, d ** -1
        else:
            f, d = self._power()
        while self._peek() in ("*", "/"):
            op = self.tokens[self.at]
            self.at += 1
            g, e = self._power()
            f, d = (f * g, d * e) if op == "*" else (f / g, d / e)
        return f, d

    def _power(self) -> tuple[float, Dim]:
        token = self._peek()
        self.at += 1
        if token == "(":
            f, d = self._product()
            if self._peek() != ")":
                raise IfrError("bad-unit", f"`{self.text}` is not a unit expression", None)
            self.at += 1
        elif token is not None and _ATOM.fullmatch(token):
            found = self.table.spellings.get(token)
            if found is None and token in self.table.broken:
                raise IfrError("unit-definition", f"unit `{token}` has a mistake in its definition", None,
                               related=[(self.table.broken[token], "defined here")])
            f, d = found[:2] if found is not None else unit(token)
        else:
            raise IfrError("bad-unit", f"`{self.text}` is not a unit expression", None)
        following = self._peek()
        if following is not None and following[0] in "^*" and following not in ("*",):
            self.at += 1
            p = int(following.lstrip("^*"))
            f, d = f ** p, d ** p
        return f, d


def spellings_of(name: str) -> list[tuple[str, float]]:
    """Every spelling of a declared unit, with its factor to the unit itself."""
    forms = [name]
    if name.isalpha() and name.islower() and not name.endswith("s"):
        forms.append(name + "s")
    return [(p + form, scale) for form in forms for p, scale in (("", 1.0), *PREFIXES.items())]


def collect(programs: list[syntax.Program], uses: dict[str, list[str]] | None = None
            ) -> tuple[DeclaredUnits, list[IfrError]]:
    """The declared units of the files of one analysis, and the mistakes in them;
    ``uses`` gives the files each file uses, for which units it may read."""
    table, errors = _Collector(programs).run()
    if table is not NONE and uses is not None:
        table.visible = {file: _reachable(file, uses) for file in uses}
    return table, errors


def _reachable(file: str, uses: dict[str, list[str]]) -> frozenset[str]:
    seen, stack = {file}, [file]
    while stack:
        for used in uses.get(stack.pop(), ()):
            if used not in seen:
                seen.add(used)
                stack.append(used)
    return frozenset(seen)


class _Collector:
    def __init__(self, programs: list[syntax.Program]):
        self.programs = programs
        self.errors: list[IfrError] = []
        self.table = DeclaredUnits()
        self.statements: dict[str, syntax.UnitDef] = {}
        self.cells: dict[str, Span] = {}
        self.done: dict[str, tuple[float, Dim] | None] = {}
        self.stack: list[str] = []

    def run(self) -> tuple[DeclaredUnits, list[IfrError]]:
        declarations = [s for p in self.programs for s in p.statements
                        if isinstance(s, (syntax.DimensionDef, syntax.UnitDef))]
        if not declarations:
            return NONE, []
        for program in self.programs:
            for s in program.statements:
                if isinstance(s, (syntax.Cell, syntax.SolveCell, syntax.Record, syntax.FnDef)):
                    self.cells.setdefault(s.name, s.name_span)
        for s in declarations:
            if isinstance(s, syntax.DimensionDef):
                self._guard(self._dimension, s)
        for s in declarations:
            if isinstance(s, syntax.UnitDef):
                self._guard(self._name, s)
        for name in list(self.statements):
            self._guard(self._unit, name)
        self.table.key = hashlib.sha256(repr(sorted(
            (d.name, d.factor, d.dim.items) for d in self.table.units.values())).encode()).hexdigest()[:16]
        return self.table, self.errors

    def _guard(self, step, arg) -> None:
        try:
            step(arg)
        except _Reported:
            pass
        except IfrError as e:
            self.errors.append(e)

    def _dimension(self, s: syntax.DimensionDef) -> None:
        key = f"[{s.name}]"
        first = self.table.dimensions.get(key)
        if first is not None:
            raise IfrError("unit-redefined", f"dimension `{s.name}` is declared twice", s.name_span,
                           related=[(first, "first declared here")], hint="declare it once")
        if _pint_dimension(key):
            raise IfrError("unit-shadows", f"`{s.name}` is already a dimension, {key}", s.name_span,
                           hint=f"its units are known already; choose another name, such as `{s.name}_count`")
        self.table.dimensions[key] = s.name_span

    def _name(self, s: syntax.UnitDef) -> None:
        first = self.statements.get(s.name)
        if first is not None:
            raise IfrError("unit-redefined", f"unit `{s.name}` is defined twice", s.name_span,
                           related=[(first.name_span, "first defined here")], hint="define it once")
        if s.name in self.cells:
            raise IfrError("unit-shadows", f"unit `{s.name}` has the name of a cell", s.name_span,
                           related=[(self.cells[s.name], "the cell")],
                           hint="a cell comes first where a name is read: give the unit or the cell another name")
        if _pint_unit(s.name):
            raise IfrError("unit-shadows", f"`{s.name}` is already a unit", s.name_span,
                           hint=f"use it as it is, or declare another name, such as `unit my_{s.name} = 1 {s.name}`")
        self.statements[s.name] = s

    def _unit(self, name: str) -> tuple[float, Dim] | None:
        """A unit's factor and dimension, its definition read first (a cycle is reported)."""
        if name in self.done:
            return self.done[name]
        s = self.statements[name]
        if name in self.stack:
            cycle = " -> ".join([*self.stack[self.stack.index(name):], name])
            self.done[name] = None
            raise IfrError("unit-cycle", f"units defined in a cycle: {cycle}", s.name_span,
                           hint="define one of them by a number and a unit of another dimension")
        self.stack.append(name)
        try:
            self.done[name] = found = self._definition(s)
        except (IfrError, _Reported):
            self.done[name] = None
            for text, _ in spellings_of(name):
                self.table.broken[text] = s.name_span
            raise
        finally:
            self.stack.pop()
        factor, dim = found
        definition = s.source or (s.dimension or "")
        self.table.units[name] = Declared(name, s.name_span, factor, dim, s.description, definition)
        for text, scale in spellings_of(name):
            if text not in self.statements or text == name:
                self.table.spellings[text] = (factor * scale, dim, name)
        if s.expr is None:
            key = dim.items[0][0]
            self.table.base_units.setdefault(key, name)
        return found

    def _definition(self, s: syntax.UnitDef) -> tuple[float, Dim] | None:
        if s.expr is None and s.dimension is None:
            key = f"[{s.name}]"
            if _pint_dimension(key):
                raise IfrError("unit-shadows", f"`{s.name}` would be a dimension of its own, and {key} is one "
                               "already", s.name_span, hint=f"define it by another unit: unit {s.name} = 1 ...")
            return 1.0, Dim({key: 1})
        if s.expr is None:
            key = f"[{s.dimension}]"
            if key not in self.table.dimensions:
                close = suggest(s.dimension, [k[1:-1] for k in self.table.dimensions])
                raise IfrError("unknown-dimension", f"`{s.dimension}` is not a declared dimension",
                               s.dimension_span, hint=f"did you mean {close}?" if close else
                               f"declare it first: `dimension {s.dimension}`; or define the unit by others: "
                               f"unit {s.name} = 1 ...")
            owner = next((u for u in self.statements.values() if u.expr is None and u.dimension == s.dimension),
                         None)
            if owner is not s:
                raise IfrError("unit-redefined", f"dimension `{s.dimension}` has its unit already, `{owner.name}`",
                               s.name_span, related=[(owner.name_span, "its unit")],
                               hint=f"define this one by it: unit {s.name} = ... {owner.name}")
            return 1.0, Dim({key: 1})
        factor, dim = self._value(s.expr, s)
        if not factor > 0 or factor == float("inf"):
            raise IfrError("unit-definition", f"unit `{s.name}` must be a positive, finite amount", s.expr.span,
                           hint=f"write it as a number and a unit: unit {s.name} = 8 GPU")
        return factor, dim

    def _value(self, node: syntax.Expr, s: syntax.UnitDef) -> tuple[float, Dim]:
        """A unit definition's value: numbers and units, multiplied, divided, raised to a number."""
        if isinstance(node, syntax.Number):
            return node.value, DIMENSIONLESS
        if isinstance(node, syntax.Quantity):
            return _scaled(node.value, self._text(node.unit, node.span))
        if isinstance(node, syntax.Name):
            return self._text(node.id, node.span)
        if isinstance(node, syntax.BinOp) and node.op in ("*", "/"):
            (f, d), (g, e) = self._value(node.left, s), self._value(node.right, s)
            return (f * g, d * e) if node.op == "*" else (f / g, d / e)
        if isinstance(node, syntax.BinOp) and node.op in ("^", "**") and isinstance(node.right, syntax.Number) \
                and node.right.value.is_integer():
            f, d = self._value(node.left, s)
            return f ** node.right.value, d ** int(node.right.value)
        raise IfrError("unit-definition", f"unit `{s.name}` is defined by numbers and units only", node.span,
                       hint=f"write e.g. unit {s.name} = 8 GPU (a cell's value belongs in a cell)")

    def _text(self, text: str, span: Span) -> tuple[float, Dim]:
        """A unit text of a definition, its declared atoms defined first."""
        for atom in _ATOM.findall(text):
            if atom in self.cells and atom == text:
                raise IfrError("unit-definition", f"`{atom}` is a cell: a unit is defined by numbers and units",
                               span, hint="write the amount, e.g. unit node = 8 GPU")
            base = self._declared_name(atom)
            if base is not None and self._unit(base) is None:
                raise _Reported()   # the mistake is the other unit's, reported there
        try:
            found = self.table.resolve(text)
            return found if found is not None else unit(text, span)
        except IfrError as e:
            e.span = e.span or span
            raise

    def _declared_name(self, atom: str) -> str | None:
        if atom in self.statements:
            return atom
        for name in self.statements:
            if any(text == atom for text, _ in spellings_of(name)):
                return name
        return None


class _Reported(Exception):
    """A unit's definition reads a unit whose own mistake is reported already."""


def _scaled(value: float, found: tuple[float, Dim]) -> tuple[float, Dim]:
    return value * found[0], found[1]


def _pint_unit(name: str) -> bool:
    """Whether pint (with ifr's units) reads ``name`` as a unit."""
    from ifr.semantics.units import is_unit
    return is_unit(name)


def _pint_dimension(key: str) -> bool:
    from ifr.semantics.units import base_dimensions
    return key in base_dimensions()
