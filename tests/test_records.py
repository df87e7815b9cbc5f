"""`ifr.records.dataclass` makes the classes the standard library's `dataclass` makes."""
from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
import sys
import textwrap
import types

import pytest

from ifr import records

SHAPES = {
    "plain": """
        @dataclass
        class C:
            a: int
            b: str = "x"
            c: list = field(default_factory=list)
    """,
    "no fields": """
        @dataclass(eq=False)
        class C:
            pass
    """,
    "slots, no eq": """
        @dataclass(eq=False, slots=True)
        class Base:
            span: tuple

        @dataclass(eq=False, slots=True)
        class C(Base):
            value: float
            text: str | None = None
            more: dict = field(default_factory=dict, repr=False)
    """,
    "slots and eq": """
        @dataclass(slots=True)
        class C:
            a: int
            b: int = 2
    """,
    "a docstring, a method, a post-init": """
        @dataclass
        class C:
            '''Its own words.'''
            a: int
            b: int = 0

            def __post_init__(self):
                self.b = self.a * 2

            def twice(self):
                return self.a * 2
    """,
    "its own repr and eq": """
        @dataclass
        class C:
            a: int

            def __repr__(self):
                return "mine"

            def __eq__(self, other):
                return True
    """,
    "its own hash": """
        @dataclass
        class C:
            a: int

            def __hash__(self):
                return 7
    """,
    "an overridden field, a field not compared": """
        @dataclass
        class Base:
            a: int
            b: int = 1

        @dataclass
        class C(Base):
            b: int = 5
            c: int = field(default=3, compare=False, repr=False)
    """,
    "a subclass without slots of one with": """
        @dataclass(eq=False, slots=True)
        class Base:
            a: int

        @dataclass(eq=False)
        class C(Base):
            b: int = 0
    """,
    "no match args, no init": """
        @dataclass(match_args=False, init=False)
        class C:
            a: int = 1
    """,
    "frozen": """
        @dataclass(frozen=True, slots=True)
        class C:
            a: int
    """,
    "frozen, no slots, a default factory": """
        @dataclass(frozen=True)
        class C:
            a: int
            b: tuple = (1, 2)
            c: list = field(default_factory=list, hash=False)
    """,
    "frozen, inherited": """
        @dataclass(frozen=True)
        class Base:
            a: int

        @dataclass(frozen=True)
        class C(Base):
            b: int = 2
            c: int = field(default=3, compare=False)
    """,
    "frozen, no eq": """
        @dataclass(frozen=True, eq=False)
        class C:
            a: int
    """,
    "unsafe hash, slots": """
        @dataclass(slots=True, unsafe_hash=True)
        class C:
            a: int
            b: str = "x"
    """,
    "frozen, its own hash": """
        @dataclass(frozen=True)
        class C:
            a: int

            def __hash__(self):
                return 7
    """,
    "a field with one underscore": """
        @dataclass
        class C:
            a: int = 0
            _b: dict = field(default_factory=dict, repr=False)
    """,
    # handed to the standard library
    "frozen from not frozen": """
        @dataclass
        class Base:
            a: int

        @dataclass(frozen=True)
        class C(Base):
            b: int = 2
    """,
    "a keyword-only field, inherited": """
        @dataclass(eq=False, slots=True)
        class Base:
            span: tuple
            text: str
            via: tuple | None = field(default=None, kw_only=True, repr=False)

        @dataclass(eq=False, slots=True)
        class C(Base):
            value: float
            unit: str | None = None
    """,
    "a field named other": """
        @dataclass
        class C:
            cond: int
            other: int = 0
    """,
    "kw_only": """
        @dataclass(kw_only=True)
        class C:
            a: int = 1
            b: int = field(default=None, repr=False)
    """,
    "a class variable": """
        @dataclass
        class C:
            a: int
            n: ClassVar[int] = 3
    """,
}
ARGS = {"plain": (1,), "no fields": (), "slots, no eq": ((1, 2), 2.5), "slots and eq": (1,),
        "a docstring, a method, a post-init": (4,), "its own repr and eq": (1,), "its own hash": (1,),
        "an overridden field, a field not compared": (1,), "a subclass without slots of one with": (1,),
        "no match args, no init": (), "frozen": (1,), "kw_only": (), "a class variable": (1,),
        "frozen, no slots, a default factory": (1,), "frozen, inherited": (1,), "frozen, no eq": (1,),
        "unsafe hash, slots": (1,), "frozen, its own hash": (1,), "a field with one underscore": (),
        "frozen from not frozen": (1,),
        "a keyword-only field, inherited": ((1, 2), "t", 2.5), "a field named other": (1, 2)}


def _make(shape: str, decorator, module: str):
    source = "from __future__ import annotations\nfrom typing import ClassVar\n" + textwrap.dedent(SHAPES[shape])
    namespace = types.ModuleType(module)
    namespace.__dict__.update(dataclass=decorator, field=dataclasses.field)
    sys.modules[module] = namespace   # for pickle, which finds a class by its module
    exec(compile(source, module, "exec"), namespace.__dict__)
    return namespace.C


def _attempt(what):
    try:
        return what()
    except Exception as exc:   # the same failure either way is the same class
        return type(exc).__name__, str(exc)


def _described(cls, args):
    one, two = cls(*args), cls(*args)
    fields = [(f.name, f.type, f.default, f.default_factory, f.init, f.repr, f.compare, f.hash, f.kw_only,
               f._field_type) for f in dataclasses.fields(cls)]
    found = {
        "fields": fields, "params": repr(cls.__dataclass_params__), "doc": cls.__doc__,
        "signature": str(inspect.signature(cls)), "repr": repr(one), "eq": one == two, "ne": one != two,
        "hash": cls.__hash__ is None, "match": getattr(cls, "__match_args__", "none"),
        "slots": cls.__dict__.get("__slots__", "none"), "dict": hasattr(one, "__dict__"),
        "class attrs": sorted(k for k in cls.__dict__ if not k.startswith("__") and k != "twice"),
        "asdict": dataclasses.asdict(one), "replace": _attempt(lambda: repr(dataclasses.replace(one))),
        "is": dataclasses.is_dataclass(cls) and dataclasses.is_dataclass(one),
        "pickled": repr(pickle.loads(pickle.dumps(one))), "copied": repr(copy.deepcopy(one)),
        "qualname": (cls.__qualname__, cls.__init__.__qualname__, cls.__repr__.__qualname__),
        "init annotations": cls.__init__.__annotations__ if "__init__" in cls.__dict__ else None,
    }
    if found["hash"] is False:
        found["hashed"] = (hash(one) == hash(two), "by identity" if cls.__hash__ is object.__hash__ else hash(one))
    name = next(iter(cls.__dataclass_fields__), "a")
    found["set"] = _attempt(lambda: setattr(one, name, 5) or getattr(one, name))
    found["del"] = _attempt(lambda: delattr(two, name) or hasattr(two, name))
    return found


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_the_same_class_as_the_standard_librarys(shape):
    ours = _attempt(lambda: _described(_make(shape, records.dataclass, "records_ours"), ARGS[shape]))
    theirs = _attempt(lambda: _described(_make(shape, dataclasses.dataclass, "records_theirs"), ARGS[shape]))
    assert ours == theirs


def test_the_same_mistakes():
    for source in ("@dataclass\nclass C:\n    a: int = 1\n    b: int\n",
                   "@dataclass\nclass C:\n    a: list = []\n"):
        for decorator in (records.dataclass, dataclasses.dataclass):
            with pytest.raises((TypeError, ValueError)) as raised:
                exec(source, {"dataclass": decorator})
            assert "default" in str(raised.value)


def test_the_classes_of_a_run_are_made_here():
    """The syntax tree's, the IR's and the graph's classes (those the standard library
    is not handed) are defined by `records`, their methods compiled in one piece."""
    from ifr.semantics import graph, ir
    from ifr.syntax import nodes
    for module in (nodes, ir, graph):
        made = [c for c in vars(module).values() if isinstance(c, type) and c.__module__ == module.__name__
                and "__dataclass_fields__" in c.__dict__]
        stub = records._init_stub([]).__code__
        assert made and all(c.__init__.__code__ is stub or c.__init__.__code__.co_filename.startswith("<dataclass ")
                            for c in made)


def test_methods_are_compiled_at_their_first_call():
    cls = _make("slots and eq", records.dataclass, "records_lazy")
    assert cls.__init__.__code__ is records._init_stub([]).__code__
    one = cls(1)
    assert cls.__init__.__code__.co_filename == "<dataclass C>"
    assert (repr(one), one == cls(1), one == cls(1, 3)) == ("C(a=1, b=2)", True, False)


@pytest.mark.parametrize("shape", ["frozen", "frozen, inherited", "unsafe hash, slots", "a field with one underscore"])
def test_frozen_and_hashed_classes_are_made_here(shape):
    cls = _make(shape, records.dataclass, "records_frozen")
    assert cls.__init__.__code__ is records._init_stub([]).__code__   # not the standard library's
