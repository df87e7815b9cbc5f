"""`dataclass` for the classes every run defines (syntax nodes, the IR, the graph):
the standard library's, defined in a twentieth of the time.

The standard library takes about half a millisecond to define a data class (it
checks each annotation's text for ClassVar and InitVar, compiles each method
apart, and formats the class's signature for its docstring); ifr defines a
hundred of them before a run computes anything, and a warm run makes objects
of fewer than twenty.  `dataclass` here makes the same class for the options
those classes use (`repr`, `eq`, `match_args`, `slots`; fields with a default,
a default factory or `kw_only`): the same `__init__`, `__repr__` and `__eq__`
(their source written as the standard library writes it, compiled in one piece
at the first call of any of them), the same `__hash__`, `__match_args__`,
docstring and slots, and the same `__dataclass_fields__` and
`__dataclass_params__`, so that `dataclasses.fields`, `replace`, `asdict` and
`is_dataclass` read it as theirs.  Any other option or field (frozen, order,
unsafe_hash, init=False, the class's kw_only, ClassVar, InitVar, a field left
out of `__init__`) is handed to the standard library's `dataclass`, which also
reports the mistakes (a field without a default after one with, a mutable
default).  Until its first call a method is a stub that compiles the class's
methods and calls its own: `inspect.signature` of a class no object was made
of yet reads `(*args, **kwargs)`.  `tests/test_records.py` holds the two to
the same classes.
"""
from __future__ import annotations

import dataclasses
import reprlib

field = dataclasses.field
MISSING = dataclasses.MISSING

_OURS = {"repr", "eq", "match_args", "slots", "frozen", "unsafe_hash"}
_DEFAULTS = {"init": True, "repr": True, "eq": True, "order": False, "unsafe_hash": False, "frozen": False,
             "match_args": True, "kw_only": False, "slots": False}
_PARAMS: dict[tuple, object] = {}   # (init, repr, eq, unsafe_hash, frozen) -> the standard library's __dataclass_params__
_FIELD_KIND = dataclasses._FIELD    # what marks a field as an instance field (not a ClassVar, not an InitVar)
_HAS_FACTORY = dataclasses._HAS_DEFAULT_FACTORY   # the __init__ default of a field with a default factory
# names the generated methods use for themselves: a field of one of these names is the standard library's
_RESERVED = {"self", "_HAS_FACTORY", "_return_type", "_object", "_cls"}


def dataclass(cls=None, /, **options):
    """`dataclasses.dataclass`, as a decorator with or without options."""
    def wrap(cls):
        return _process(cls, options)
    return wrap if cls is None else wrap(cls)


def _process(cls, options: dict):
    if any(options.get(k, v) != v for k, v in _DEFAULTS.items() if k not in _OURS) or set(options) - set(_DEFAULTS) \
            or type(cls) is not type:
        return dataclasses.dataclass(cls, **options)
    init, show, eq = options.get("init", True), options.get("repr", True), options.get("eq", True)
    match_args, slots = options.get("match_args", True), options.get("slots", False)
    frozen, unsafe_hash = options.get("frozen", False), options.get("unsafe_hash", False)
    if frozen and ("__setattr__" in cls.__dict__ or "__delattr__" in cls.__dict__):
        return dataclasses.dataclass(cls, **options)   # its TypeError
    fields = {}
    for base in cls.__mro__[-1:0:-1]:
        inherited = base.__dict__.get("__dataclass_fields__")
        if inherited is not None:
            if getattr(base.__dict__.get("__dataclass_params__"), "frozen", False) is not frozen or \
                    any(f._field_type is not _FIELD_KIND for f in inherited.values()):
                return dataclasses.dataclass(cls, **options)   # frozen from not frozen: its TypeError
            fields.update(inherited)
    declared = []   # every check first: a class handed to the standard library must be as it was written
    defaults = {f.name: f.default is not MISSING or f.default_factory is not MISSING for f in fields.values()}
    keywords = {f.name for f in fields.values() if f.kw_only}
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():
        if not isinstance(annotation, str) or "ClassVar" in annotation or "InitVar" in annotation \
                or "KW_ONLY" in annotation or name in _RESERVED or name.startswith(("__", "_dflt_", "_type_")):
            return dataclasses.dataclass(cls, **options)
        default = cls.__dict__.get(name, MISSING)
        given = isinstance(default, dataclasses.Field)
        if given and (default.kw_only not in (True, MISSING) or not default.init or default._field_type is not None):
            return dataclasses.dataclass(cls, **options)
        value = default.default if given else default
        if value is not MISSING and type(value).__hash__ is None:
            return dataclasses.dataclass(cls, **options)   # a mutable default: its error
        declared.append((name, annotation, default, given))
        defaults[name] = value is not MISSING or (given and default.default_factory is not MISSING)
        if given and default.kw_only is True:
            keywords.add(name)
        else:
            keywords.discard(name)
    positional = [has for name, has in defaults.items() if name not in keywords]
    if any(not later and earlier for earlier, later in zip(positional, positional[1:])):
        return dataclasses.dataclass(cls, **options)   # a field without a default after one with: its TypeError
    for name, annotation, default, given in declared:
        f = default if given else field(default=default)
        f.name, f.type, f._field_type, f.kw_only = name, annotation, _FIELD_KIND, name in keywords
        fields[name] = f
        if given:
            if f.default is MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, f.default)
    listed = list(fields.values())
    explicit = cls.__dict__.get("__hash__", MISSING)
    has_hash = not (explicit is MISSING or (explicit is None and "__eq__" in cls.__dict__))
    if unsafe_hash and has_hash:
        return dataclasses.dataclass(cls, **options)   # its TypeError
    cls.__dataclass_params__ = _params(init, show, eq, unsafe_hash, frozen)
    cls.__dataclass_fields__ = fields
    hashed = not has_hash and (unsafe_hash or (eq and frozen))   # the standard library's _hash_action
    generated = [name for name, wanted in (("__init__", init), ("__repr__", show), ("__eq__", eq),
                                           ("__hash__", hashed)) if wanted and (name not in cls.__dict__ or
                                                                                name == "__hash__")]
    holder = [cls, listed, hasattr(cls, "__post_init__"), generated, frozen]
    for name in generated:
        stub = _STUBS[name](holder)
        stub.__qualname__ = f"{cls.__qualname__}.{name}"
        setattr(cls, name, stub)
    if eq and not has_hash and not hashed and not frozen:
        cls.__hash__ = None
    if frozen:
        _freeze(holder, tuple(f.name for f in listed))
    if not cls.__doc__:
        shown = [_shown_parameter(f) for f in listed if not f.kw_only]
        if any(f.kw_only for f in listed):
            shown += ["*"] + [_shown_parameter(f) for f in listed if f.kw_only]
        cls.__doc__ = cls.__name__ + "(" + ", ".join(shown) + ")"
    if match_args and "__match_args__" not in cls.__dict__:
        cls.__match_args__ = tuple(f.name for f in listed if not f.kw_only)
    if slots:
        cls = holder[0] = _with_slots(cls, listed)
        if frozen:   # for pickle, as the standard library gives a frozen class with slots
            for name in ("__getstate__", "__setstate__"):
                if name not in cls.__dict__:
                    setattr(cls, name, getattr(dataclasses, f"_dataclass_{name.strip('_')}"))
    return cls


def _freeze(holder: list, names: tuple) -> None:
    """The standard library's `__setattr__` and `__delattr__` of a frozen class."""
    cls = holder[0]
    fields = frozenset(names)

    def __setattr__(self, name, value):
        own = holder[0]
        if type(self) is own or name in fields:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(own, self).__setattr__(name, value)

    def __delattr__(self, name):
        own = holder[0]
        if type(self) is own or name in fields:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(own, self).__delattr__(name)
    for method in (__setattr__, __delattr__):
        method.__qualname__ = f"{cls.__qualname__}.{method.__name__}"
        setattr(cls, method.__name__, method)


def _compiled(holder: list, name: str):
    """The class's generated methods, compiled at the first call of any of them (most of the
    classes a run defines make no object in that run); the one named."""
    cls, listed, post_init, generated, frozen = holder
    if not generated:   # compiled already (by a call in another thread)
        return cls.__dict__[name]
    namespace = {"__name__": cls.__module__, "_HAS_FACTORY": _HAS_FACTORY, "_object": object}
    source = {"__init__": lambda: _init_source(listed, namespace, post_init, frozen),
              "__repr__": lambda: _repr_source(listed), "__eq__": lambda: _eq_source(listed),
              "__hash__": lambda: _hash_source(listed)}
    exec(compile("\n".join(source[n]() for n in generated), f"<dataclass {cls.__qualname__}>", "exec"), namespace)
    for method in generated:
        fn = namespace[method]
        if method == "__init__":
            fn.__annotations__ = {**{f.name: f.type for f in listed}, "return": None}
        if method == "__repr__":
            fn = reprlib.recursive_repr()(fn)
        fn.__qualname__ = f"{cls.__qualname__}.{method}"
        setattr(cls, method, fn)
    holder[3] = []
    return cls.__dict__[name]


def _init_stub(holder):
    def __init__(self, *args, **kwargs):
        return _compiled(holder, "__init__")(self, *args, **kwargs)
    return __init__


def _repr_stub(holder):
    def __repr__(self):
        return _compiled(holder, "__repr__")(self)
    return __repr__


def _eq_stub(holder):
    def __eq__(self, other):
        return _compiled(holder, "__eq__")(self, other)
    return __eq__


def _hash_stub(holder):
    def __hash__(self):
        return _compiled(holder, "__hash__")(self)
    return __hash__


_STUBS = {"__init__": _init_stub, "__repr__": _repr_stub, "__eq__": _eq_stub, "__hash__": _hash_stub}


def _params(init: bool, show: bool, eq: bool, unsafe_hash: bool = False, frozen: bool = False):
    key = (init, show, eq, unsafe_hash, frozen)
    if key not in _PARAMS:   # the standard library's own record of these options, from a class it made
        _PARAMS[key] = dataclasses.dataclass(type("probe", (), {}), init=init, repr=show, eq=eq,
                                             unsafe_hash=unsafe_hash, frozen=frozen).__dataclass_params__
    return _PARAMS[key]


def _init_source(fields, namespace: dict, post_init: bool, frozen: bool = False) -> str:
    """The standard library's `__init__`: the keyword-only fields' parameters after a `*`; a
    frozen class's sets each field through `object.__setattr__`."""
    parameters, keywords, body = [], [], []

    def assign(name: str, value: str) -> str:
        return f"  _object.__setattr__(self, {name!r}, {value})" if frozen else f"  self.{name} = {value}"
    for f in fields:
        into = keywords if f.kw_only else parameters
        if f.default_factory is not MISSING:
            namespace[f"_dflt_{f.name}"] = f.default_factory
            into.append(f"{f.name}=_HAS_FACTORY")
            body.append(assign(f.name, f"_dflt_{f.name}() if {f.name} is _HAS_FACTORY else {f.name}"))
            continue
        if f.default is not MISSING:
            namespace[f"_dflt_{f.name}"] = f.default
            into.append(f"{f.name}=_dflt_{f.name}")
        else:
            into.append(f.name)
        body.append(assign(f.name, f.name))
    if keywords:
        parameters += ["*", *keywords]
    if post_init:
        body.append("  self.__post_init__()")
    return f"def __init__(self, {', '.join(parameters)}):\n" + ("\n".join(body) or "  pass")


def _repr_source(fields) -> str:
    shown = ", ".join(f"{f.name}={{self.{f.name}!r}}" for f in fields if f.repr)
    return f'def __repr__(self):\n  return self.__class__.__qualname__ + f"({shown})"'


def _eq_source(fields) -> str:
    compared = [f"self.{f.name}," for f in fields if f.compare]
    theirs = [f"other.{f.name}," for f in fields if f.compare]
    return ("def __eq__(self, other):\n  if other.__class__ is self.__class__:\n"
            f"    return ({''.join(compared)}) == ({''.join(theirs)})\n  return NotImplemented")


def _hash_source(fields) -> str:
    """The standard library's `__hash__`: the hash of the tuple of the fields it compares."""
    hashed = "".join(f"self.{f.name}," for f in fields if (f.compare if f.hash is None else f.hash))
    return f"def __hash__(self):\n  return hash(({hashed}))"


def _shown_parameter(f) -> str:
    text = f"{f.name}: {f.type!r}"
    if f.default_factory is not MISSING:
        return text + " = <factory>"
    return text if f.default is MISSING else f"{text} = {f.default!r}"


def _with_slots(cls, fields):
    """The class again, with a slot for each field (as the standard library's `slots=True` makes it)."""
    namespace = dict(cls.__dict__)
    names = tuple(f.name for f in fields)
    inherited = set()
    for base in cls.__mro__[1:-1]:
        found = base.__dict__.get("__slots__")
        if found is None:
            continue
        inherited.update([found] if isinstance(found, str) else found)
    namespace["__slots__"] = tuple(n for n in names if n not in inherited)
    for name in names:
        namespace.pop(name, None)
    namespace.pop("__dict__", None)
    namespace.pop("__weakref__", None)
    qualname = getattr(cls, "__qualname__", None)
    cls = type(cls)(cls.__name__, cls.__bases__, namespace)
    if qualname is not None:
        cls.__qualname__ = qualname
    return cls
