"""The one unit registry of ifr, and the dimension algebra used by the checker.

The registry is pint's, built from pint's default definitions with the
dimensionless ``bit`` removed and ifr's ``units.txt`` added.  It is built
lazily and cached on disk (pint's ``cache_folder``), because building it is
the largest fixed cost of a run.  Only unit text that matched the grammar's
unit pattern is ever handed to pint's parser.
"""
from __future__ import annotations

import atexit
import hashlib
import re
from functools import lru_cache
from pathlib import Path

from .cache import cache_dir
from . import cache
from .errors import IfrError, Span

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

    def __mul__(self, other: "Dim") -> "Dim":
        d = dict(self.items)
        for k, v in other.items:
            d[k] = d.get(k, 0) + v
        return Dim(d)

    def __truediv__(self, other: "Dim") -> "Dim":
        return self * other ** -1

    def __pow__(self, p) -> "Dim":
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
    return combined, hashlib.sha256(combined.encode()).hexdigest()[:16]


@lru_cache(maxsize=2)
def registry(fresh: bool = False):
    """The pint registry, built once per process.

    Its definitions file and pint's own cache live in the user's private cache
    folder; the definitions file is used only if it holds exactly ifr's
    definitions.  ``fresh=True`` builds it without pint's cache, for when a
    cached registry does not know a unit it should (a cache cut short).
    """
    import pint

    combined, digest = _definitions()
    folder = cache_dir()
    path = folder / f"units-{digest}.txt"
    try:
        current = path.read_text(encoding="utf-8") == combined
    except (OSError, UnicodeDecodeError):
        current = False
    if not current:
        cache.write_atomic(path, combined)
    pint_cache = None if fresh else str(folder / "pint")
    try:
        ureg = pint.UnitRegistry(str(path), cache_folder=pint_cache, autoconvert_offset_to_baseunit=True)
    except Exception:  # a corrupt pint cache: build from the definitions alone
        if fresh:
            raise
        return registry(fresh=True)
    pint.set_application_registry(ureg)
    return ureg


class OffsetUnit(Exception):
    """A unit with an offset or a logarithm (degC, dBm): a product of it means nothing."""


class _Lookups:
    """Unit text -> (factor, dimension), remembered on disk between runs.

    Most runs use a handful of unit spellings; answering them from this table
    spares importing pint and building its registry, the largest fixed cost of
    a run.  The table is keyed by the digest of the definitions, so a change to
    units.txt or to pint starts a new one.
    """

    def __init__(self):
        self.table: dict[str, tuple[float, Dim]] | None = None
        self.dirty = False

    def path(self) -> Path:
        return cache_dir() / "units-lookups.json"

    def _load(self) -> None:
        self.table = {}
        raw = cache.load(self.path(), "unit-lookups", self.key())
        try:
            for text, (factor, items) in (raw or {}).items():
                self.table[text] = (float(factor), Dim({str(k): int(v) for k, v in items}))
        except (ValueError, TypeError, AttributeError):
            self.table = {}

    def get(self, text: str):
        if self.table is None:
            self._load()
        found = self.table.get(text)
        if found is None:
            found = _lookup(text)
            self.table[text] = found
            if not self.dirty:
                self.dirty = True
                atexit.register(self.save)
        return found

    def save(self) -> None:
        data = {t: [f, [[k, v] for k, v in d.items]] for t, (f, d) in self.table.items()
                if all(float(v).is_integer() for _, v in d.items)}
        cache.save(self.path(), "unit-lookups", self.key(), data)

    # Bumped when the rules of a lookup change (2: offset units are refused).
    RULES = 2

    def key(self) -> str:
        return f"{_definitions()[1]}-{self.RULES}"


_LOOKUPS = _Lookups()


@lru_cache(maxsize=4096)
def _lookup(text: str):
    ureg = registry()
    try:
        units = ureg.parse_units(text)
    except Exception:  # a registry from a cache cut short may miss ifr's units: retry without it
        ureg = registry(fresh=True)
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
    text = normalize_unit_text(text)
    if not _UNIT_TEXT.match(text):
        raise IfrError("bad-unit", f"`{text}` is not a unit expression", span,
                       hint="write units like GB/s, KiB/token, GPU*s/request, m^2")
    _definitions()  # a broken definitions file is ifr's bug, not an unknown unit
    try:
        return _LOOKUPS.get(text)
    except OffsetUnit:
        raise IfrError("offset-unit", f"`{text}` is an offset or logarithmic unit, which ifr does not compute "
                       "with", span, hint="use a unit that scales: K for temperatures, W or mW for powers") from None
    except Exception:  # pint's parser raises many types (even AssertionError) on odd text
        raise unknown_unit(text, span) from None


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


def suggest(word: str, candidates) -> str | None:
    """The closest candidate to a misspelled word, if any is close."""
    import difflib

    found = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.75)
    return found[0] if found else None


def quantity(value: float, unit_text: str):
    """A pint Quantity of ``value`` expressed in ``unit_text``."""
    return registry().Quantity(value, normalize_unit_text(unit_text))
