"""The one unit registry of ifr, and the dimension algebra used by the checker.

The registry is pint's, built from pint's default definitions with the
dimensionless ``bit`` removed and ifr's ``units.txt`` added.  Building it is
the largest fixed cost of a run, so a run asks it only about a unit spelling
it has never seen: the factors and dimensions of the units the language uses
are shipped in ``unit_table.json`` (made by `python -m ifr.build` from these
same definitions), and the answers for other spellings are kept in the
user's cache as JSON.  Only unit text that matched the grammar's unit
pattern is ever handed to pint's parser.
"""
from __future__ import annotations

import atexit
import json
import re
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from pathlib import Path

from ifr.errors import IfrError, Span
from ifr.storage import cache
from ifr.storage.cache import cache_dir

_HERE = Path(__file__).resolve().parent
_UNITS_FILE = _HERE / "units.txt"

# A unit as the grammar admits it: atoms that start with a letter, joined by
# `*` or `/`, each with an optional integer exponent.  Parentheses group.
_UNIT_TEXT = re.compile(  # `1/s` too: display units of rates; names matched whole, so linear
    r"^(?:1/)?(?:[^\W\d]\w*(?!\w)|\((?:[^\W\d]\w*(?!\w)|[*/()]|\^-?\d+|\*\*-?\d+)+\))(?:(?:\^|\*\*)-?\d+)?"
    r"(?:[*/](?:[^\W\d]\w*(?!\w)|\((?:[^\W\d]\w*(?!\w)|[*/()]|\^-?\d+|\*\*-?\d+)+\))(?:(?:\^|\*\*)-?\d+)?)*$"
)


class Dim:
    """A physical dimension: a product of base dimensions with integer (or
    rational) exponents, e.g. ``[information]/[time]``."""

    __slots__ = ("items", "_hash")

    def __init__(self, items=()):
        self.items = tuple(sorted((k, v) for k, v in dict(items).items() if v != 0))
        self._hash = hash(self.items)

    def __mul__(self, other: Dim) -> Dim:
        key = (self.items, other.items)
        found = _PRODUCTS.get(key)
        if found is None:
            d = dict(self.items)
            for k, v in other.items:
                d[k] = d.get(k, 0) + v
            found = _remember(_PRODUCTS, key, Dim(d))
        return found

    def __truediv__(self, other: Dim) -> Dim:
        key = (self.items, other.items)
        found = _QUOTIENTS.get(key)
        if found is None:
            found = _remember(_QUOTIENTS, key, self * other ** -1)
        return found

    def __pow__(self, p) -> Dim:
        if isinstance(p, float) and p.is_integer():
            p = int(p)
        return Dim({k: v * p for k, v in self.items})

    def __eq__(self, other) -> bool:
        return isinstance(other, Dim) and self.items == other.items

    def __hash__(self) -> int:
        return self._hash

    @property
    def dimensionless(self) -> bool:
        return not self.items

    def __str__(self) -> str:
        if not self.items:
            return "dimensionless"
        num = [_power(k, v) for k, v in self.items if v > 0]
        den = [_power(k, -v) for k, v in self.items if v < 0]
        text = "*".join(num) if num else "1"
        if den:
            text += "/" + ("*".join(den) if len(den) == 1 else "(" + "*".join(den) + ")")
        return text

    __repr__ = __str__


# Products and quotients of dimensions, remembered: a model multiplies the
# same few dimensions on every line, and a Dim is never changed once made.
_PRODUCTS: dict = {}
_QUOTIENTS: dict = {}


def _remember(table: dict, key, value):
    """``value``, kept in a memo of at most 4,096 entries (emptied when full)."""
    if len(table) >= 4096:
        table.clear()
    table[key] = value
    return value


def _power(name: str, p) -> str:
    if isinstance(p, float) and p.is_integer():
        p = int(p)
    return name if p == 1 else f"{name}^{p}"


DIMENSIONLESS = Dim()


def _pint_default_file() -> Path:
    """pint's default definitions, located without importing pint."""
    import importlib.util
    spec = importlib.util.find_spec("pint")
    return Path(spec.origin).resolve().parent / "default_en.txt"


@lru_cache(maxsize=1)
def _definitions() -> tuple[str, str]:
    """ifr's full definitions text and its digest (which keys every unit cache)."""
    default = _pint_default_file()
    # The combined file lives in the cache folder, so pint's own @imports are
    # inlined rather than resolved relative to it.
    text = re.sub(r"(?m)^@import\s+(\S+)\s*$",
                  lambda m: (default.parent / m.group(1)).read_text(encoding="utf-8"),
                  default.read_text(encoding="utf-8"))
    text, count = re.subn(r"(?m)^bit = \[\]\s*$", "", text)
    if count != 1:  # pint changed its file: fail loudly, not silently wrong
        raise RuntimeError("pint's default_en.txt no longer defines `bit = []`")
    combined = text + "\n" + _UNITS_FILE.read_text(encoding="utf-8")
    import hashlib
    return combined, hashlib.sha256(combined.encode()).hexdigest()[:16]


DIGEST = "units-digest.json"   # in the cache folder: the digest, and the files it was made from


@lru_cache(maxsize=1)
def _digest() -> str:
    """`_definitions()`'s digest, which keys every unit lookup: kept in the cache with the
    sizes and times of the files it was made from (pint's definitions, units.txt), and
    made again (reading and hashing them) only when one of them is not as it was."""
    import os
    default = _pint_default_file()
    try:
        with os.scandir(default.parent) as found:
            stamp = sorted((e.name, e.stat().st_size, e.stat().st_mtime_ns) for e in found if e.name.endswith(".txt"))
        mine = os.stat(_UNITS_FILE)
    except OSError:
        return _definitions()[1]
    stamp.append((str(default), str(_UNITS_FILE), mine.st_size, mine.st_mtime_ns))
    import hashlib
    key = hashlib.sha256(repr(stamp).encode()).hexdigest()
    path = cache_dir() / DIGEST
    kept = cache.load(path, "unit-digest", key)
    if isinstance(kept, str) and re.fullmatch(r"[0-9a-f]{16}", kept):
        return kept
    digest = _definitions()[1]
    cache.save(path, "unit-digest", key, digest)
    return digest


@lru_cache(maxsize=1)
def registry():
    """The pint registry, built once per process, from ifr's definitions.

    Its definitions file is written to the user's private cache folder and
    used only if it holds exactly ifr's definitions.  pint's own disk cache
    (pickles) is not used: nothing is unpickled from a folder a user writes.
    """
    import pint

    combined, digest = _definitions()
    path = cache_dir() / f"units-{digest}.txt"
    try:
        current = path.read_text(encoding="utf-8") == combined
    except (OSError, UnicodeDecodeError):
        current = False
    if not current:
        cache.write_atomic(path, combined)
    ureg = pint.UnitRegistry(str(path), cache_folder=None, autoconvert_offset_to_baseunit=True)
    pint.set_application_registry(ureg)
    return ureg


class OffsetUnit(Exception):
    """A unit with an offset or a logarithm (degC, dBm): a product of it means nothing."""


UNIT_TABLE = _HERE / "unit_table.json"


class _Lookups:
    """Unit text -> (factor, dimension), without pint when it can be.

    The spellings the language and its models use are answered from the table
    shipped with ifr (when it was made from the definitions in force); the
    others are asked of pint once and remembered in the user's cache.  Both are
    keyed by the digest of the definitions, so a change to units.txt or to
    pint is never answered from an old table.
    """

    def __init__(self):
        self.table: dict[str, tuple[float, Dim]] | None = None
        self.shipped: dict[str, list] = {}   # text -> its JSON entry, decoded when first used
        self.shipped_read = False   # the shipped table (270 kB of JSON) is read on the first miss only
        self.dirty = False
        self.known: dict[str, tuple[float, Dim]] = {}   # unit as written -> its answer, in this process (bounded)
        self.absent: set[str] = set()   # names pint does not read (a model's own units: `node`, `USD`)

    def path(self) -> Path:
        return cache_dir() / "units-lookups.json"

    def _load(self) -> None:
        """The lookups this user's runs made, the shipped ones they used included:
        a warm run reads the few it needs from there, not the whole shipped table."""
        saved = cache.load(self.path(), "unit-lookups", self.key())
        saved = saved if isinstance(saved, dict) else {}
        self.table = _decode(saved.get("found")) or {}
        self.absent = _names(saved.get("absent"))

    def _load_shipped(self) -> None:
        if self.shipped_read:
            return
        self.shipped_read = True
        try:
            shipped = json.loads(UNIT_TABLE.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            shipped = {}
        if isinstance(shipped, dict) and shipped.get("key") == self.key() and isinstance(shipped.get("units"), dict):
            self.shipped = shipped["units"]
            self.absent |= _names(shipped.get("absent"))

    def get(self, text: str):
        if self.table is None:
            self._load()
        found = self.table.get(text)
        if found is None:
            self._load_shipped()
            if text in self.shipped:
                found = (_decode({text: self.shipped[text]}) or {}).get(text)
                if found is not None:
                    self.table[text] = found
                    self.changed()   # kept in the user's cache for the next run
        if found is None:
            found = _lookup(text)
            self.table[text] = found
            self.changed()
        return found

    def changed(self) -> None:
        if not self.dirty:
            self.dirty = True
            atexit.register(self.save)

    def is_unit(self, name: str) -> bool:
        """Whether pint reads ``name`` as a unit; a name it does not read is remembered."""
        if self.table is None:
            self._load()
        if name in self.absent:
            return False
        if name not in self.table:
            self._load_shipped()
            if name in self.absent:
                return False
        try:
            unit(name)
            return True
        except IfrError:
            self.absent.add(name)
            self.changed()
            return False

    def save(self) -> None:
        cache.save(self.path(), "unit-lookups", self.key(),
                   {"found": encode_lookups(self.table), "absent": sorted(self.absent)})

    # Bumped when the rules of a lookup change (2: offset units are refused; 3: names that are no unit kept).
    RULES = 3

    def key(self) -> str:
        return f"{_digest()}-{self.RULES}"


def encode_lookups(table: dict) -> dict:
    """Lookups as JSON data: text -> [factor, [[dimension, exponent], ...]]."""
    return {t: [f, [[k, v] for k, v in d.items]] for t, (f, d) in sorted(table.items())
            if all(float(v).is_integer() for _, v in d.items)}


def _decode(raw) -> dict | None:
    try:
        return {str(text): (float(factor), Dim({str(k): int(v) for k, v in items}))
                for text, (factor, items) in (raw or {}).items()}
    except (ValueError, TypeError, AttributeError):
        return None


def _names(raw) -> set[str]:
    return {n for n in raw if isinstance(n, str)} if isinstance(raw, list) else set()


def unit_table(texts, declared=()) -> str:
    """The JSON text of the shipped table (what `python -m ifr.build` writes):
    pint's answer for each unit spelling of ``texts`` that it knows, and which
    of the ``declared`` names (the bundled files' own units) it does not."""
    found, absent = {}, []
    for text in texts:
        try:
            found[text] = _lookup(text)
        except Exception:
            continue   # not a unit, or an offset unit: pint is asked at run time
    for name in sorted(set(declared)):
        try:
            _lookup(name)
        except Exception:
            absent.append(name)
    return json.dumps({"key": _LOOKUPS.key(), "units": encode_lookups(found), "absent": absent},
                      indent=0, sort_keys=True) + "\n"


def is_unit(name: str) -> bool:
    """Whether pint (with units.txt) reads ``name`` as a unit: asked once, the
    names it does not read shipped and cached, so that a model declaring its
    own units (`unit node = 8 GPU`) builds no registry to learn that."""
    return _LOOKUPS.is_unit(name)


_LOOKUPS = _Lookups()


@contextmanager
def recording_lookups():
    """Within it, every unit is asked of pint (nothing is read from the shipped
    table or the cache, nor written to the cache); yields the texts looked up."""
    global _LOOKUPS
    recorder = _Lookups()
    recorder.table, recorder.dirty, recorder.shipped_read = {}, True, True
    saved, _LOOKUPS = _LOOKUPS, recorder
    try:
        yield recorder.table
    finally:
        _LOOKUPS = saved


@lru_cache(maxsize=4096)
def _lookup(text: str):
    ureg = registry()
    units = ureg.parse_units(text)
    for name in units._units:
        if not ureg._units[name].converter.is_multiplicative:
            raise OffsetUnit(name)
    factor, _ = ureg.get_base_units(units)
    dims = ureg.get_dimensionality(units)
    return float(factor), Dim({k: v for k, v in dims.items()})


def unit(text: str, span: Span | None = None) -> tuple[float, Dim]:
    """The factor to base SI and the dimension of a unit written as text.

    Raises an IfrError (``unknown-unit``) when pint does not know it.
    """
    declared = _IN_FORCE.get()
    if declared is not None and declared.mentions(text):   # a unit of the model's own, before pint's
        try:
            return declared.resolve(normalize_unit_text(text))
        except IfrError as e:
            e.span = e.span or span
            raise
    lookups = _LOOKUPS
    found = lookups.known.get(text)
    if found is not None:   # a unit written again (a big model writes a few, on every line)
        return found
    written = text
    text = normalize_unit_text(text)
    if not _UNIT_TEXT.match(text):
        raise IfrError("bad-unit", f"`{text}` is not a unit expression", span,
                       hint="write units like GB/s, KiB/token, GPU*s/request, m^2")
    _digest()  # a broken definitions file is ifr's bug, not an unknown unit
    try:
        return _remember(lookups.known, written, lookups.get(text))
    except OffsetUnit:
        raise IfrError("offset-unit", f"`{text}` is an offset or logarithmic unit, which ifr does not compute "
                       "with", span, hint="use a unit that scales: K for temperatures, W or mW for powers") from None
    except Exception:  # pint's parser raises many types (even AssertionError) on odd text
        raise unknown_unit(text, span) from None


# The units the analysis at hand declares (`unit node = 8 GPU`): one table per
# analysis, in force while it is bound, evaluated, shown or exported.
_IN_FORCE: ContextVar = ContextVar("declared_units", default=None)


@contextmanager
def declaring(table):
    """Within it, ``unit`` reads the declared units of ``table`` (a
    `declared_units.DeclaredUnits`) beside pint's."""
    token = _IN_FORCE.set(table if table else None)
    try:
        yield
    finally:
        _IN_FORCE.reset(token)


def declared_here(text: str, span: Span | None) -> None:
    """Raises unknown-unit when ``text`` names a declared unit that the file of ``span``
    does not know: declared in a file it does not use (`use money` brings USD)."""
    declared = _IN_FORCE.get()
    if declared is None or span is None:
        return
    hidden = declared.hidden(text, span.file)
    if hidden is not None:
        module = Path(hidden.span.file).stem
        raise IfrError("unknown-unit", f"unknown unit `{hidden.name}`: it is declared in {module}, which this file "
                       "does not use", span, hint=f"use {module}: {hidden.name}")


def with_model_units(function):
    """``function`` of a model (its first argument), run with the model's declared units in force:
    an exporter's entry point reads `node` as its model says, whoever calls it."""
    import functools

    @functools.wraps(function)
    def run(model, *args, **kwargs):
        with declaring(model.graph.declared_units):
            return function(model, *args, **kwargs)
    return run


def in_force():
    """The declared units in force (None when there are none)."""
    return _IN_FORCE.get()


@lru_cache(maxsize=1)
def base_dimensions() -> frozenset[str]:
    """Every dimension pint and units.txt name (`[length]`, `[token]`, `[area]`), read from the
    definitions text: no registry is built."""
    return frozenset(re.findall(r"\[\w+\]", _definitions()[0]))


def normalize_unit_text(text: str) -> str:
    text = text.replace("μ", "µ")
    return "percent" if text == "%" else text


def unknown_unit(text: str, span: Span | None) -> IfrError:
    atoms = re.findall(r"[^\W\d]\w*", text)
    bad = [a for a in atoms if not _atom_known(a)]
    what = bad[0] if bad else text
    hint = None
    close = suggest_unit(what)
    if close:
        hint = f"did you mean {close}?"
    return IfrError("unknown-unit", f"unknown unit `{what}`", span, hint=hint)


def _atom_known(atom: str) -> bool:
    try:
        registry().parse_units(atom)
        return True
    except Exception:
        return False


@lru_cache(maxsize=1)
def unit_names() -> tuple[str, ...]:
    ureg = registry()
    names = set(ureg._units.keys())
    for prefix in ("k", "M", "G", "T", "P", "Ki", "Mi", "Gi", "Ti", "m", "µ", "n"):
        for base in ("B", "byte", "bit", "FLOP", "s", "W"):
            names.add(prefix + base)
    return tuple(sorted(names))


_COMMON = ("B", "byte", "bit", "b", "FLOP", "FLOPS", "s", "W", "J", "Hz", "m", "g", "token", "request", "req",
           "GPU", "step", "batch", "layer", "expert", "min", "h", "day", "percent")
_PREFIXES = ("", "k", "K", "M", "G", "T", "P", "Ki", "Mi", "Gi", "Ti", "Pi", "m", "µ", "u", "n")


def suggest_unit(word: str) -> str | None:
    """The unit a misspelling most likely meant: common units of the field first."""
    common = {p + u for p in _PREFIXES for u in ("B", "bit", "FLOP", "FLOPS", "s", "W", "Hz")}
    common |= set(_COMMON) | {"Gbps", "GBps", "Mbps", "TFLOPS", "Gb", "Mb", "Tb", "KB"}
    common |= {a + "/" + b for a in ("GB", "GiB", "MB", "Gbit", "TB", "TFLOP", "KiB", "MiB") for b in ("s", "token")}
    return suggest(word, sorted(common)) or suggest(word, unit_names())


def suggest(word: str, candidates, cutoff: float = 0.75) -> str | None:
    """The closest candidate to a misspelled word, if any is close (difflib's ratio at least ``cutoff``)."""
    import difflib

    found = difflib.get_close_matches(word, list(candidates), n=1, cutoff=cutoff)
    return found[0] if found else None


def quantity(value: float, unit_text: str):
    """A pint Quantity of ``value`` expressed in ``unit_text``."""
    return registry().Quantity(value, normalize_unit_text(unit_text))
