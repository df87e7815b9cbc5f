"""Parsing a big file by the shapes of its lines.

A model a script writes repeats a few lines with other numbers in their
names (`size41 = size40 * 1.001 + 1 KiB`, then `size42 = size41 * ...`).
Such a file is parsed one line at a time: each line's *shape* (the line with
the digits of its names read as 0) is parsed once, and every line's tree is
built from its shape's tree, with the digits of its own names put back and
its spans moved to its line.  The trees are the ones the whole-file parse
makes (a test holds the two to each other on every bundled file); a file of
100,000 lines of a few shapes is parsed in seconds instead of over a minute,
and needs no syntax-cache entry.

Only a file whose every statement is one line qualifies (no bracket left open
at a line's end, no backslash continuation, at most a docstring above the
first statement); anything else is parsed whole, as before.
"""
from __future__ import annotations

import re

from ifr.errors import IfrError, Span
from ifr.syntax import nodes as syntax

# A file is parsed by shape when it has this many lines or more, and at most
# one shape per REPEATS statements: shapes are parsed again by each process
# (a file of many different lines is read back from the syntax cache faster).
MIN_LINES = 2000
REPEATS = 50

# A name with a digit in it, not the exponent or the digits of a number (`1e3`,
# `2.5`): a run of word characters that starts with a letter.  Reading its
# digits as 0 or 1 changes no token's kind (keywords have no digits).
_NAME_WITH_DIGIT = re.compile(r"(?<!\w)[^\W\d]\w*?\d\w*")
_ZEROS = str.maketrans("0123456789", "0000000000")
_NUMBER = re.compile(r"\b\d\w*")   # a word that starts with a digit: a number (`1`, `001` of 1.001, `1e3`)
_ONES = str.maketrans("0123456789", "1111111111")
_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_CONTINUED = re.compile(r"\\[\t \f]*$")


class _Unshaped(Exception):
    """A line's readings differ in more than the digits of names."""


def _zeros(m: re.Match) -> str:
    return m[0].translate(_ZEROS)


# Shape -> how to build a line's statements from it (None: a file with such a
# line is parsed whole); kept for the process (an editor parses a file again
# on each change), bounded.
_TEMPLATES: dict[str | tuple, list | None] = {}
MAX_TEMPLATES = 20_000


def parse_by_shape(text: str, file: str, min_lines: int = MIN_LINES, repeats: int = REPEATS,
                   errors: list | None = None):
    """The Program of ``text``, parsed line by line by shape; None when the
    file does not qualify (see the module's docstring) or has a syntax error:
    such a file is parsed whole, which reports every mistake.  The line of a
    syntax error met is appended to ``errors``."""
    if "\r" in text or text.count("\n") + 1 < min_lines:
        return None
    lines = text.split("\n")
    statements: list = []
    first = 0
    if '"""' in text:
        first = _docstring(text, file, statements)
        if first is None:
            return None
    keys: list = []
    seen: set = set()
    most = len(lines) // repeats + 1   # more shapes than this: not a file to parse by shape
    # A line's shape is named by the line with every digit read as 0 and the
    # numbers in it (the words that start with a digit), in order: two lines
    # alike in both have the same zero reading, the digits of their names
    # aside.  (Made without a function call per name: it is read for every line.)
    zeroed = text.translate(_ZEROS).split("\n")
    number = _NUMBER.findall
    for i in range(first, len(lines)):
        line = lines[i]
        if '"' in line:   # a line with a string is its own shape (its comment parsed with it)
            code = _STRING.sub('""', line).partition("#")[0]
            key, parsed, comment = '"' + line, line, None
        else:
            code, hash_, comment = line.partition("#")
            if not code or code.isspace():
                continue
            key, parsed, comment = (zeroed[i][:len(code)], *number(code)), code, comment.strip() if hash_ else None
        if code[:1] in (" ", "\t"):   # an indented line goes on the statement above it (a search's `where`)
            return None
        if key not in seen:   # brackets and backslashes are no digits: alike in every line of a shape
            if not _balanced(code) or ("\\" in code and _CONTINUED.search(code)):
                return None
            seen.add(key)
            if len(seen) > most:
                return None
        keys.append((i, key, parsed, comment))
    if len(seen) * repeats > max(len(keys), 1):
        return None
    builders: dict[str, object] = {}
    texts: dict[str, str] = {}   # one str per name: not one per use
    from ifr.syntax.parser import attach_descriptions
    try:
        for i, key, code, comment in keys:
            build = builders.get(key)
            if build is None:
                template = _template(key, code)
                if template is None:
                    return None
                build = builders[key] = _builder(template, file, texts.setdefault)
            made = build(i + 1, code)
            if comment:
                for stmt in made:
                    attach_descriptions(stmt, {i + 1: comment})
            statements += made
    except IfrError:   # a syntax error: parsed whole, reported there
        if errors is not None:
            errors.append(i + 1)
        return None
    except RecursionError:   # a line nested too deep: parsed whole, reported there
        return None
    program = syntax.Program(file, text, statements)
    if statements and isinstance(statements[0], syntax.Docstring):
        program.docstring = statements[0].text
    return program


def line_by_shape(line_number: int, line: str, file: str) -> list | None:
    """The statements of one line built from its shape's tree, if that shape
    was parsed already in this process (and the line is one parse_by_shape
    builds so); None otherwise: the line is for the parser.  The error
    recovery of a file being edited reads its unchanged lines so."""
    if "\\" in line:
        return None
    if '"' in line:   # a line with a string is its own shape, its comment parsed with it
        if '"""' in line:
            return None
        template = _TEMPLATES.get('"' + line)
        return _builder(template, file, {}.setdefault)(line_number, line) if template else None
    code, hash_, comment = line.partition("#")
    if not code or code.isspace():
        return []   # a comment or a blank line: no statement
    if not _balanced(code):
        return None
    template = _TEMPLATES.get((code.translate(_ZEROS), *_NUMBER.findall(code)))
    if not template:
        return None
    from ifr.syntax.parser import attach_descriptions
    made = _builder(template, file, {}.setdefault)(line_number, code)
    comment = comment.strip() if hash_ else None
    if comment:
        for stmt in made:
            attach_descriptions(stmt, {line_number: comment})
    return made


def _docstring(text: str, file: str, statements: list) -> int | None:
    """Parse a docstring that opens the file (and nothing else on its lines)
    into ``statements``; the index of the line after it, or None when the file
    has another or a misplaced one."""
    start = text.index('"""')
    end = text.find('"""', start + 3)
    if text[:start].strip() or end < 0 or '"""' in text[end + 3:]:
        return None
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    rest = text[end + 3:line_end]
    if rest.strip() and not rest.strip().startswith("#"):
        return None
    from ifr.syntax.parser import parse_statements
    try:
        statements += parse_statements(text[:line_end] + "\n", file)
    except IfrError:
        return None
    return text.count("\n", 0, line_end) + 1


def _balanced(code: str) -> bool:
    """Whether a line closes as many brackets as it opens (its shape's parse
    then holds that they nest: a line alone that leaves one open is a syntax
    error, and the file is parsed whole)."""
    return code.count("(") == code.count(")") and code.count("[") == code.count("]") \
        and code.count("{") == code.count("}")


def _template(key: str | tuple, code: str) -> list | None:
    """How a shape's statements are built: a recipe per statement (see
    _recipe); None when its readings differ in more than the digits of names
    (the file is parsed whole).  Raises IfrError on a syntax error."""
    found = _TEMPLATES.get(key, False)
    if found is not False:
        return found
    from ifr.syntax.parser import parse_statements
    literal = type(key) is str   # a line with a string is its own shape: nothing in it varies
    zero = code if literal else _NAME_WITH_DIGIT.sub(_zeros, code)
    names = [] if literal else [m.span() for m in _NAME_WITH_DIGIT.finditer(zero)]
    # One more reading per name: its digits read as 1, the others' as 0.  A
    # text that changes with exactly the names it spans is a slice of the line.
    probes = [zero[:a] + zero[a:b].translate(_ONES) + zero[b:] for a, b in names]
    tree = parse_statements(zero + "\n", "")
    readings = [parse_statements(probe + "\n", "") for probe in probes]
    try:
        if any(len(r) != len(tree) for r in readings):
            raise _Unshaped
        found = [_recipe(t, [r[k] for r in readings], zero, probes, names) for k, t in enumerate(tree)]
    except _Unshaped:
        found = None
    if len(_TEMPLATES) >= MAX_TEMPLATES:
        _TEMPLATES.clear()
    _TEMPLATES[key] = found
    return found


# The kinds of a recipe's parts (the first item of each), read also by the
# shape-level IR (semantics/shape_ir.py), which finds a shape's names in them.
RECIPE_LITERAL, RECIPE_SPAN, RECIPE_SLICE, RECIPE_PATCH, RECIPE_LIST, RECIPE_TUPLE, RECIPE_NODE = range(7)


def _recipe(a, others: list, zero: str, probes: list[str], names: list[tuple[int, int]]):
    """The recipe of one value of a shape's tree, from its readings (``a``
    with every name's digits as 0, ``others`` with one name's as 1): a
    literal, a span (moved to the line), a slice of the line (a text with
    names in it), or a node, list or tuple of recipes."""
    if any(type(b) is not type(a) for b in others):
        raise _Unshaped
    if isinstance(a, Span):
        where = (1, a.column, 1, a.end_column)
        if (a.line, a.column, a.end_line, a.end_column) != where or any(
                (b.line, b.column, b.end_line, b.end_column) != where for b in others):
            raise _Unshaped
        return (RECIPE_SPAN, a.column, a.end_column)
    if isinstance(a, str):
        changed = {j for j, b in enumerate(others) if b != a}
        if not changed:
            return (RECIPE_LITERAL, a)
        size = len(a)
        at = [k for k in range(len(zero) - size + 1)
              if zero.startswith(a, k)
              and all((k <= names[j][0] and names[j][1] <= k + size) == (j in changed) for j in range(len(names)))
              and all(probes[j].startswith(others[j], k) for j in changed)]
        if len(at) == 1:
            return (RECIPE_SLICE, at[0], at[0] + size)
        return (RECIPE_PATCH, a, _patches(a, others, changed, zero, probes, names))
    if a is None or isinstance(a, (bool, int, float)):
        if any(b != a and not (a != a and b != b) for b in others):   # NaN is its own reading
            raise _Unshaped
        return (RECIPE_LITERAL, a)
    if isinstance(a, (list, tuple)):
        if any(len(b) != len(a) for b in others):
            raise _Unshaped
        return (RECIPE_LIST if isinstance(a, list) else RECIPE_TUPLE,
                [_recipe(x, [b[k] for b in others], zero, probes, names) for k, x in enumerate(a)])
    if not hasattr(a, "__dataclass_fields__") or type(a) is syntax.Program:
        raise _Unshaped   # nothing a syntax node holds (the test of every bundled file says so)
    fields = syntax._FIELDS.get(type(a)) or syntax._fields(type(a))
    return (RECIPE_NODE, type(a), [_recipe(getattr(a, f), [getattr(b, f) for b in others], zero, probes, names)
                             for f in fields])


def _patches(a: str, others: list, changed: set, zero: str, probes: list[str], names: list) -> tuple:
    """Where a text made from the line but not sliced from it (a formula with
    its spaces evened out) holds the digits of names: (position in the text,
    position in the line) pairs, checked on every reading."""
    pairs = []
    for j in changed:
        if len(others[j]) != len(a):
            raise _Unshaped
        held = [i for i in range(len(a)) if a[i] != others[j][i]]
        digits = [i for i in range(*names[j]) if zero[i] != probes[j][i]]
        if not digits or len(held) % len(digits):
            raise _Unshaped
        pairs += [(at, digits[n % len(digits)]) for n, at in enumerate(held)]
    pairs = tuple(pairs)
    if any(_patched(a, pairs, probes[j]) != b for j, b in enumerate(others)):
        raise _Unshaped
    return pairs


def _patched(text: str, pairs: tuple, code: str) -> str:
    chars = list(text)
    for at, digit in pairs:
        chars[at] = code[digit]
    return "".join(chars)


class Shape:
    """What the cells of the lines of one shape share: how a line's expression
    tree is made (``make(line, code)``) and the recipe it is made by."""

    __slots__ = ("make", "recipe", "root")

    def __init__(self, make, recipe):
        self.make = make
        self.recipe = recipe
        self.root = recipe[1] if recipe[0] == RECIPE_NODE else type(recipe[1])   # the class of the tree's root


def _builder(template: list, file: str, intern):
    """A function (line number, the line's code) -> the line's statements."""
    makers = [_cell_maker(r, file, intern) if r[0] == RECIPE_NODE and r[1] is syntax.Cell else _maker(r, file, intern)
              for r in template]
    if len(makers) == 1:   # a line of one statement: most are
        only = makers[0]
        return lambda line, code: [only(line, code)]
    return lambda line, code: [make(line, code) for make in makers]


def _cell_maker(recipe, file: str, intern):
    """A cell's maker: the cell (a ShapedCell) now, its expression's tree when it is read."""
    parts = list(recipe[2])
    at = syntax._fields(syntax.Cell).index("expr")
    shape = Shape(_maker(parts[at], file, intern), parts[at])
    parts[at] = (RECIPE_LITERAL, None)
    # (a cell's name and formula are its own: not kept in ``intern``, a text per name, as its tree's names are)
    make = _maker((RECIPE_NODE, syntax.ShapedCell, parts), file, {}.get)

    def cell(line: int, code: str):
        made = make(line, code)
        made.shape, made.line, made.code = shape, line, code
        return made
    return cell


def _maker(recipe, file: str, intern):
    """A function (line number, code) -> the value a recipe describes."""
    kind = recipe[0]
    if kind == RECIPE_LITERAL:
        value = recipe[1]
        return lambda line, code: value
    if kind == RECIPE_SPAN:
        column, end_column = recipe[1], recipe[2]
        return lambda line, code: Span(file, line, column, line, end_column)
    if kind == RECIPE_SLICE:
        start, end = recipe[1], recipe[2]
        def text(line: int, code: str) -> str:
            found = code[start:end]
            return intern(found, found)
        return text
    if kind == RECIPE_PATCH:
        template, pairs = recipe[1], recipe[2]

        def patched(line: int, code: str) -> str:
            found = _patched(template, pairs, code)
            return intern(found, found)
        return patched
    if kind in (RECIPE_LIST, RECIPE_TUPLE):
        parts = [_maker(r, file, intern) for r in recipe[1]]
        if kind == RECIPE_LIST:
            return lambda line, code: [p(line, code) for p in parts]
        return lambda line, code: tuple(p(line, code) for p in parts)
    cls, parts = recipe[1], recipe[2]
    fixed = [r[1] if r[0] == RECIPE_LITERAL else None for r in parts]
    # Spans and slices are made here, not by a function of their own: this
    # runs for every node of every line.
    moving = [(k, r[0], r[1], r[2]) if r[0] in (RECIPE_SPAN, RECIPE_SLICE) else (k, RECIPE_NODE, _maker(r, file, intern), None)
              for k, r in enumerate(parts) if r[0] != RECIPE_LITERAL]

    def node(line: int, code: str):
        values = fixed.copy()
        for k, kind, a, b in moving:
            if kind == RECIPE_SPAN:
                values[k] = Span(file, line, a, line, b)
            elif kind == RECIPE_SLICE:
                found = code[a:b]
                values[k] = intern(found, found)
            else:
                values[k] = a(line, code)
        return cls(*values)
    return node
