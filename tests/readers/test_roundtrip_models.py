"""Every input of every bundled model reads back from its workbook, whatever its
display unit (`1/s`, `%`, `GPU*s/request`, `kFLOP/token^2`, none)."""
from __future__ import annotations

import math
from pathlib import Path

import pytest
from openpyxl import load_workbook

import ifr
from ifr.errors import IfrError
from ifr.exporters.cells import display_value, exported_cells
from ifr.exporters.xlsx.workbook import cell_names
from ifr.readers.roundtrip import read_inputs, with_workbook_inputs
from ifr.semantics.units import declaring, quantity

ROOT = Path(__file__).resolve().parents[2]
MODELS = sorted((ROOT / "models").glob("*.ifr"))


def test_there_are_models():
    assert MODELS


# What a person types over every input: a tenth less (a probability stays one),
# whole numbers kept whole, first doubled (experts still split over ranks),
# else, where doubling leaves the model without a value (a latency target no
# longer met), a tenth more rounded up.
EDITS = [(0.9, lambda n: n * 2), (0.9, lambda n: math.ceil(n * 1.1))]


def edit(value, how) -> float:
    factor, whole = how
    if isinstance(value, int) or float(value).is_integer():
        return whole(int(value))
    return float(f"{value * factor:.12g}")     # twelve digits: saved and read back exactly


class Typed:
    """A number typed in a cell's display unit: a pint Quantity, or the text `3.5 USD/GPU/h` for a unit
    the model declares (pint has no Quantity of it)."""

    def __init__(self, magnitude: float, unit: str, declared):
        self.magnitude = magnitude
        self.value = f"{magnitude!r} {unit}" if declared and declared.mentions(unit) else quantity(magnitude, unit)


def computable_edit(model, inputs):
    """The first of EDITS under which the edited model still evaluates: the edit,
    the values typed (quantities in display units) and the model `with_inputs` makes of them."""
    for how in EDITS:
        with declaring(model.graph.declared_units):
            typed = {model.graph.cells[cid].name: Typed(edit(display_value(model, cid), how), model.units[cid],
                                                        model.graph.declared_units) for cid in inputs}
        try:
            return how, typed, model.with_inputs(**{name: t.value for name, t in typed.items()})
        except IfrError:
            continue
    raise AssertionError("no edit leaves the model computable")


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
def test_every_input_cell_reads_back(path, tmp_path):
    model = ifr.load(path)
    exported = tmp_path / "plan.xlsx"
    model.export(exported)
    book = load_workbook(exported)
    names = cell_names(model)
    inputs = [cid for cid in exported_cells(model) if model.graph.cells[cid].kind == "input"]
    how, typed, expected = computable_edit(model, inputs)
    for cid in inputs:
        target = at(book, names[cid])
        assert isinstance(target.value, (int, float)) and not isinstance(target.value, bool), (cid, target.value)
        target.value = edit(target.value, how)
    edited = tmp_path / "edited.xlsx"
    book.save(edited)
    saved = load_workbook(edited)
    assert {model.graph.cells[cid].name: at(saved, names[cid]).value for cid in inputs} == \
           {name: q.magnitude for name, q in typed.items()}
    changed = {name for name, q in typed.items() if q.magnitude != 0}

    assert set(read_inputs(model, edited)) == changed
    variant = with_workbook_inputs(model, edited)
    mismatches = [model.graph.cells[cid].name for cid in model.graph.cells
                  if not same(variant.values[cid], expected.values[cid])]
    assert mismatches == []
    assert [r.passed for r in variant.check()] == [r.passed for r in expected.check()]
    units = sorted({model.units[model.cell_id(name)] for name in typed})
    print(f"{path.name}: edit {EDITS.index(how)}, {len(typed)} inputs edited ({len(changed)} changed), {len(model.graph.cells)} cells "
          f"compared, 0 mismatches; units {units}")


def at(book, defined_name: str):
    (sheet, ref), = book.defined_names[defined_name].destinations
    return book[sheet][ref.replace("$", "")]


def same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    try:
        return bool(a == b) if not hasattr(a, "shape") else bool((a == b).all())
    except (TypeError, ValueError):
        return a is b
