"""A table row's formulas from the IR, without sympy.

A table sheet's row computes each shown cell again with the varied cell
replaced by the row's first cell: the shown cell's IR expression with every
cell the varied one affects expanded inline (a solve by its closed form's IR,
as the Model sheet prints it), the varied cell a reference to the row's
value in the table's unit, printed by the IR printer (`ir_formula`).

`NotFromIr` means this path has no rule for a part (a comprehension, a
truth value read as a number, a solve whose closed form has no IR, a
formula the printer refuses): the table sheet then builds the row through
sympy (`FormulaBuilder.expanded`), which decides as before.
"""
from __future__ import annotations

from collections import ChainMap

from ifr.exporters.excel import loop_ir
from ifr.exporters.excel.ir_formula import IrPrinter, NotPrintable
from ifr.exporters.excel.numbers import NotExcel
from ifr.exporters.xlsx.formulas import MAX_EXPANDED_NODES, BranchesFormula, IrFormula, first_node
from ifr.exporters.xlsx.live import NotLive
from ifr.semantics import ir

# The name a row's formulas read the row's value by (the varied column's cell in `refs`).
ROW = "__row"


class NotFromIr(Exception):
    """This path has no rule for the row's formula; the sympy path takes it."""


def row_printer(model, unit_text: str) -> IrPrinter:
    """An IR printer for a table's rows: the model's display units, and the row's
    value (`ROW`) in the table's unit."""
    return IrPrinter(ChainMap({ROW: unit_text}, model.units))


def value_binding(var: str, span) -> dict[str, ir.Node]:
    """The varied cell read from the row's first cell."""
    return {var: ir.Ref(span, ROW, ROW)}


class RowExpansion:
    """The IR of one row's shown cells: `binding` maps a cell to what replaces it
    in this row (an IR node, or None where the row has nothing for it), and every
    cell in `affected` is expanded inline; the expansions are shared by the row's
    cells (and by rows of one binding)."""

    def __init__(self, writer, binding: dict[str, ir.Node | None], affected: set[str]):
        self.w = writer
        self.binding = binding
        self.affected = affected
        self.memo: dict[str, ir.Node] = {}
        self._sizes: dict[int, tuple[ir.Node, int]] = {}   # id -> (the node, kept alive; its size)

    def formula(self, printer: IrPrinter, cid: str, refs) -> str:
        """`=...` for shown cell `cid` in its display unit; raises NotLive where the
        row cannot be live, NotFromIr where the sympy path decides."""
        if any(v is None for v in self.binding.values()):
            raise NotLive("the row's record lacks a field the varied record has; values computed by ifr.")
        node = self.node(cid)
        try:
            return printer.formula(node, cid, refs)
        except (NotPrintable, NotExcel) as exc:
            raise NotFromIr(str(exc)) from None

    def node(self, cid: str) -> ir.Node:
        """`cid`'s IR in this row (base SI, as every IR expression)."""
        found = self.binding.get(cid)
        if found is not None:
            return found
        if cid not in self.affected:
            return ir.Ref(None, cid, cid)
        found = self.memo.get(cid)
        if found is None:
            found = self.memo[cid] = self._expanded(cid)
        return found

    def _expanded(self, cid: str) -> ir.Node:
        cell = self.w.model.graph.cells[cid]
        if cell.fit is not None:   # its formula is its starting value: each row fits again, in ifr
            raise NotLive(f"`{cell.name}` is fitted again by ifr for each row; values computed by ifr.")
        if cell.kind == "solve":
            built = self.w.formulas.get(cid)
            # the closed form's IR the Model sheet prints (its branches checked to give ifr's root)
            if type(built) not in (IrFormula, BranchesFormula):
                raise NotFromIr(f"`{cell.name}` has no closed form as IR")
            node = built.node
        else:
            node = cell.expr
            if not self.w.builder.prints_from_ir(node):
                # comprehensions over a few values known before any cell is read, in line
                inline = loop_ir.unrolled(node) if first_node(node, ir.Reduce) is not None else None
                if inline is None or not self.w.builder.prints_from_ir(inline):
                    raise NotFromIr(f"`{cell.name}` does not print from its IR")
                node = inline
        expanded = ir.replace(node, ir.Ref, lambda ref: self.node(ref.cell))
        if self._size(expanded) > MAX_EXPANDED_NODES:
            raise NotLive(f"`{cell.name}` expands to a formula too large to write per row; "
                          "values computed by ifr.")
        return expanded

    def _size(self, node: ir.Node) -> int:
        """Nodes of an expression counted as printed (shared parts counted each time)."""
        found = self._sizes.get(id(node))
        if found is None:
            size = 1 + sum(self._size(n) for n in ir.children(node))
            found = self._sizes[id(node)] = (node, size)
        return found[1]
