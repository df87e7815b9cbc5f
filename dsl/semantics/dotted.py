"""A dotted name as a file reads it (`gpu.hbm`, `llama3_8b.layers`, `m.hidden_size`,
`db.a100.x4`) -> what it names, through records' fields and modules' names.

A scenario's assignment (`scenario big: gpu.hbm = 141 GB`) and a value set from
outside (`--set llama3_8b.layers=64`, Python's `with_inputs`) name a record's
field this way; `rich.gpu.hbm` reads one under a scenario (`ScenarioRecord`)."""
from __future__ import annotations

from ifr.errors import IfrError, Span
from ifr.records import dataclass
from ifr.semantics.graph import ModuleDef, RecordDef
from ifr.semantics.loader import UNRESOLVED
from ifr.semantics.units import suggest


def resolve(lookup, name: str, span: Span | None):
    """What ``name`` names, its first part found by ``lookup`` (a scope's or a namespace's):
    a cell id, a RecordDef, a ModuleDef, ... or UNRESOLVED (a module that could not be loaded)."""
    first, *rest = name.split(".")
    binding = lookup(first)
    if binding is None:
        raise IfrError("unknown-name", f"`{first}` is neither a cell nor a record", span,
                       hint="name a cell, or a record's field, that the file defines or imports")
    done = first
    for part in rest:
        if binding is UNRESOLVED:
            return UNRESOLVED
        if isinstance(binding, RecordDef):
            names = binding.fields
        elif isinstance(binding, ModuleDef):
            names = binding.namespace
        else:
            raise IfrError("not-a-record", f"`{done}` is not a record or a module, so it has no `{part}`", span,
                           hint=f"set `{done}` itself: {done} = ...")
        if part not in names:
            close = suggest(part, names)
            raise IfrError("unknown-field", f"`{done}` has no field `{part}`", span,
                           hint=f"did you mean {done}.{close}?" if close else
                           f"its fields are {', '.join(names)}" if isinstance(binding, RecordDef) else None)
        binding, done = names[part], f"{done}.{part}"
    return binding


@dataclass(eq=False, slots=True)
class ScenarioRecord:
    """`rich.gpu`, `best.gpu`, `best[2].gpu`: a record of the main file under a scenario (or at a
    search's configuration), whose field `rich.gpu.hbm` reads that field's cell there."""
    scenario: str       # the scenario's name, or a search's `best[2]`
    record: RecordDef
    text: str           # as written, for messages


def scenario_field(owner: ScenarioRecord, field: str, span: Span):
    """`rich.gpu.hbm`: ("scenario", the scenario, the field's cell id), as `rich.x` is for a cell."""
    if field not in owner.record.fields:
        close = suggest(field, owner.record.fields)
        raise IfrError("unknown-field", f"`{owner.text}` has no field `{field}`", span,
                       hint=f"did you mean {close}?" if close else "its fields are " + ", ".join(owner.record.fields))
    return ("scenario", owner.scenario, owner.record.fields[field])
