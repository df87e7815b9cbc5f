"""Source text -> syntax tree, with lark.  Lark's exceptions become IfrErrors here.

Imported only when a text is not in the syntax cache (parse_cache.parse).
"""
from __future__ import annotations

import re
from functools import lru_cache

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, VisitError

from ifr.errors import IfrError, Span
from ifr.syntax import nodes as syntax
from ifr.syntax.grammar import GRAMMAR, MAX_DEPTH
from ifr.syntax.lines import split_lines

_OPENERS = {"LPAR": "RPAR", "LSQB": "RSQB", "LBRACE": "RBRACE"}
_CLOSERS = {v: k for k, v in _OPENERS.items()}
_READABLE = {
    "NAME": "a name", "NUMBER": "a number", "UNIT": "a unit", "RECIPROCAL_UNIT": "a unit",
    "PERCENT_SIGN": "`%`", "STRING": 'a string "..."',
    "_NL": "the end of the line", "$END": "the end of the file", "EQUAL": "`=`",
    "LPAR": "`(`", "RPAR": "`)`", "LSQB": "`[`", "RSQB": "`]`", "LBRACE": "`{`",
    "RBRACE": "`}`", "COMMA": "`,`", "COLON": "`:`", "DOT": "`.`", "ADD_OP": "`+` or `-`",
    "MUL_OP": "`*` or `/`", "POW_OP": "`^`", "COMP_OP": "a comparison", "PERCENT": "a percentage",
    "LONG_STRING": 'a docstring """..."""', "_CONT": "an indented line of the search", "SEARCH_WORD": "`search`", "MINUS": "`-`", "PLUS": "`+`", "__ANON_0": "`..`",
}


class _Brackets:
    """Postlexer: newlines inside (), [] and {} do not end a statement, and a
    keyword is a word of its own.

    Lark's contextual lexer tries only the terminals the parser can take next,
    so where no name can follow (`2 GB token`) it matched the keyword `to` at
    the start of `token` and went on with `ken`.  A keyword that the next
    token continues (no space between, a letter, digit or `_` next) stops the
    parse: `_syntax` reports the whole word where it stands."""

    always_accept = ("_NL",)

    def __init__(self):
        self.stack: list[Token] = []

    def process(self, stream):
        self.stack = []
        keyword = None
        for tok in stream:
            if keyword is not None and tok.start_pos == keyword.end_pos and _WORD_CHAR.match(tok.value):
                raise GluedKeyword(keyword, tok)
            keyword = tok if _is_keyword(tok) else None
            if tok.type in _OPENERS:
                self.stack.append(tok)
            elif tok.type in _CLOSERS and self.stack and self.stack[-1].type == _CLOSERS[tok.type]:
                self.stack.pop()
            if tok.type == "_NL" and self.stack:
                continue
            yield tok


class GluedKeyword(Exception):
    """A keyword the next token continues: `to` + `ken` of `token`."""

    def __init__(self, keyword: Token, rest: Token):
        super().__init__(keyword.value + rest.value)
        self.word = Token.new_borrow_pos("NAME", keyword.value + rest.value, keyword)


def _is_keyword(tok: Token) -> bool:
    """A keyword's token: lark names a literal word's terminal after it (`to` -> TO)."""
    return tok.type not in ("NAME", "UNIT") and tok.type == tok.value.upper() and tok.value.isidentifier()


_WORD_CHAR = re.compile(r"\w")
_WORD = re.compile(r"\w+")


# The parser's tables, built from grammar.lark by `python -m ifr.build` and
# shipped beside it as a module of Python literals (package code, read from
# its bytecode as fast as any module; never a pickle): building them from the
# grammar is most of the cost of a first parse.  The module also holds each
# lexer pattern compiled to the regular-expression engine's code, so that a
# first parse does not compile the lexer's hundred patterns again (`_Patterns`).
PARSER_TABLES = GRAMMAR.with_name("parser_tables.py")
_OPTIONS = dict(parser="lalr", lexer="contextual", start=["start", "value"], propagate_positions=True,
                maybe_placeholders=True)


def grammar_digest(grammar_text: str) -> str:
    import hashlib
    return hashlib.sha256(grammar_text.encode("utf-8")).hexdigest()


@lru_cache(maxsize=1)
def _parser() -> tuple[Lark, _Brackets, list]:
    comments: list[Token] = []
    brackets = _Brackets()
    hooks = dict(postlex=brackets, lexer_callbacks={"COMMENT": comments.append})
    grammar = GRAMMAR.read_text(encoding="utf-8")
    shipped = shipped_tables(grammar)
    if shipped is not None:
        lark = Lark.__new__(Lark)._load(shipped, **hooks)
        from ifr.syntax import parser_tables
        _set_patterns(lark, _Patterns(parser_tables.PATTERNS if parser_tables.ENGINE == _engine() else {}))
    else:  # the grammar changed since `python -m ifr.build`: build its tables (slower, same parser)
        lark = Lark(grammar, **_OPTIONS, **hooks)
    return lark, brackets, comments


def _lexers(lark: Lark) -> list:
    """The contextual lexer's lexers: one per parser state, and the one for any terminal."""
    contextual = lark.parser.lexer
    contextual = getattr(contextual, "lexer", contextual)   # behind the postlexer
    return [*contextual.lexers.values(), contextual.root_lexer]


def _set_patterns(lark: Lark, patterns) -> None:
    """Make every lexer compile its patterns through ``patterns`` (an `re` for lark's lexer)."""
    lark.lexer_conf.re_module = patterns
    for lexer in _lexers(lark):
        lexer.re = patterns


def _engine() -> tuple:
    """What a compiled pattern's code is valid for: this Python's regular-expression engine."""
    import _sre
    import sys
    from re import _constants
    return (sys.implementation.cache_tag, _constants.MAGIC, _sre.CODESIZE, _sre.MAXGROUPS)


class _Patterns:
    """`re` as lark's lexer uses it (`compile`, `match`, `error`), each pattern made from
    the code `python -m ifr.build` compiled it to (`re._compiler.compile`'s last step) where
    the shipped table has it for this engine, else compiled as `re` compiles it."""

    error = re.error

    def __init__(self, table: dict):
        self.table, self.made = table, {}

    def compile(self, pattern, flags=0):
        found = self.made.get((pattern, flags))
        if found is None:
            entry = self.table.get((pattern, flags))
            if entry is not None:
                import _sre
                try:
                    found = _sre.compile(pattern, *entry)
                except (RuntimeError, TypeError, ValueError):   # code this engine does not take
                    found = None
            if found is None:
                found = re.compile(pattern, flags)
            self.made[(pattern, flags)] = found
        return found

    def match(self, pattern, string, flags=0):
        return self.compile(pattern, flags).match(string)


class _Recorder:
    """`re` for lark's lexer that notes every pattern compiled through it."""

    error = re.error

    def __init__(self):
        self.seen: dict = {}

    def compile(self, pattern, flags=0):
        self.seen[(pattern, flags)] = None
        return re.compile(pattern, flags)

    def match(self, pattern, string, flags=0):
        return self.compile(pattern, flags).match(string)


def lexer_patterns(lark: Lark) -> dict:
    """Every pattern the lexers of ``lark`` compile, as the engine's code: (pattern, flags) ->
    the arguments after the pattern of `_sre.compile`, made as `re._compiler.compile` makes them."""
    from re import _compiler
    from re import _parser as sre_parse
    recorder = _Recorder()
    _set_patterns(lark, recorder)
    for lexer in _lexers(lark):
        lexer._scanner = None
        lexer.scanner   # noqa: B018 - builds the scanner, compiling its patterns
    table = {}
    for pattern, flags in recorder.seen:
        parsed = sre_parse.parse(pattern, flags)
        code = _compiler._code(parsed, flags)
        index = [None] * parsed.state.groups
        for name, i in parsed.state.groupdict.items():
            index[i] = name
        table[(pattern, flags)] = (flags | parsed.state.flags, [int(c) for c in code], parsed.state.groups - 1,
                                   dict(parsed.state.groupdict), tuple(index))
    return table


def keywords(lark: Lark) -> frozenset[str]:
    """The grammar's keywords: its literal words (`to`, `if`, `check`, ...)."""
    from lark.lexer import PatternStr
    return frozenset(t.pattern.value for t in lark.terminals
                     if isinstance(t.pattern, PatternStr) and t.pattern.value.isidentifier())


def name_rule() -> tuple[str, frozenset[str]]:
    """The lexer's pattern of a name (a regular expression) and the grammar's keywords: its literal
    words that the pattern would match, which no name may be."""
    lark = _parser()[0]
    name = next(t.pattern.to_regexp() for t in lark.terminals if t.name == "NAME")
    return name, frozenset(w for w in keywords(lark) if re.fullmatch(name, w))


def shipped_tables(grammar: str) -> dict | None:
    """The shipped tables, if they were built from this grammar by this lark."""
    import lark as lark_module
    try:
        from ifr.syntax import parser_tables
    except (ImportError, SyntaxError):
        return None
    if getattr(parser_tables, "GRAMMAR", None) != grammar_digest(grammar) or \
            getattr(parser_tables, "LARK", None) != lark_module.__version__:
        return None
    return {"data": parser_tables.DATA, "memo": parser_tables.MEMO}


def parser_tables() -> str:
    """The parser's tables, built from grammar.lark, as the module's text shipped in
    PARSER_TABLES (what `python -m ifr.build` writes): Python literals only."""
    import lark as lark_module
    from lark.grammar import Rule
    from lark.lexer import TerminalDef
    grammar = GRAMMAR.read_text(encoding="utf-8")
    lark = Lark(grammar, **_OPTIONS)
    data, memo = lark.memo_serialize([TerminalDef, Rule])
    data["options"] = {k: v for k, v in data["options"].items() if k in _OPTIONS or k not in _RUN_TIME_OPTIONS}
    # the patterns of the lexers a run makes: from these tables, with the run's postlexer (which
    # adds the terminals it always accepts to every state's lexer)
    loaded = Lark.__new__(Lark)._load({"data": data, "memo": memo}, postlex=_Brackets(),
                                      lexer_callbacks={"COMMENT": [].append})
    parts = [
        '"""The parser\'s tables and its lexer\'s compiled patterns: written by `python -m ifr.build`\n'
        'from grammar.lark (do not edit; see ifr.syntax.parser)."""',
        f"GRAMMAR = {grammar_digest(grammar)!r}",
        f"LARK = {lark_module.__version__!r}",
        f"ENGINE = {_engine()!r}",
        f"DATA = {data!r}",
        f"MEMO = {memo!r}",
        f"PATTERNS = {lexer_patterns(loaded)!r}",
    ]
    return "\n".join(parts) + "\n"


# Options given when the tables are loaded, not stored with them.
_RUN_TIME_OPTIONS = {"postlex", "lexer_callbacks", "transformer", "tree_class", "cache", "_plugins",
                     "import_paths", "source_path", "edit_terminals"}


def parse_uncached(text: str, file: str, broken_known: bool = False, line_parser=None) -> syntax.Program:
    """Parse one file's text; syntax errors are in ``program.diagnostics``.

    With ``broken_known`` (the text has a syntax error) the whole-file parse
    is not tried; ``line_parser(line_number, line, file)`` may give the
    statements of a one-line statement (or None) in the statement-by-statement
    parse that reports every mistake: the same trees, without the parser."""
    source = text if text.endswith("\n") else text + "\n"
    diagnostics: list[IfrError] = []
    broken: list[str] = []
    try:
        if broken_known:
            raise IfrError("syntax", "the text has a syntax error", None)
        statements = parse_statements(source, file)
    except IfrError:
        # Parse again one statement at a time, so every mistake is found.
        statements = []
        for start, end in split_statements(source):
            line = source.count("\n", 0, start)
            chunk = source[start:end]
            if line_parser is not None and "\n" not in chunk.rstrip("\n"):
                made = line_parser(line + 1, chunk.rstrip("\n"), file)
                if made is not None:
                    statements += made
                    continue
            try:
                statements += parse_statements("\n" * line + chunk, file)
            except IfrError as e:
                diagnostics.append(e)
                defined = _DEFINES.match(source, start)
                if defined:
                    broken.append(next(g for g in defined.groups() if g))
    program = syntax.Program(file, text, statements)
    if statements and isinstance(statements[0], syntax.Docstring):
        program.docstring = statements[0].text
    for stmt in statements[1:]:
        if isinstance(stmt, syntax.Docstring):
            diagnostics.append(IfrError("misplaced-docstring", "a docstring may only open the file", stmt.span,
                                        hint="use a # comment here, or move the docstring to the first line"))
    program.statements = [s for s in statements if not isinstance(s, syntax.Docstring) or s is statements[0]]
    program.diagnostics = diagnostics
    program.broken = broken
    return program


def _syntax(source: str, file: str, start: str):
    """The syntax tree of ``source`` from the grammar's ``start`` symbol, and the
    comments by line; raises the first syntax error as an IfrError."""
    lark, brackets, comments = _parser()
    comments.clear()
    try:
        tree = lark.parse(source, start=start)
    except UnexpectedInput as exc:
        raise _syntax_error(exc, source, file, brackets) from None
    except GluedKeyword as glued:
        raise _glued_keyword(glued.word, source, file) from None
    by_line = {c.line: c.value[1:].strip() for c in comments}
    try:
        return _ToAst(file, source).transform(tree), by_line
    except VisitError as exc:
        if isinstance(exc.orig_exc, IfrError):
            raise exc.orig_exc from None
        raise


def parse_statements(source: str, file: str) -> list:
    """The statements of ``source``; raises the first syntax error."""
    statements, by_line = _syntax(source, file, "start")
    for stmt in statements:
        attach_descriptions(stmt, by_line)
        _check_depth(stmt)
    return statements


def _check_depth(stmt) -> None:
    """Refuse a statement nested deeper than MAX_DEPTH, at its deepest point."""
    import dataclasses
    stack = [(stmt, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise IfrError("too-deep", f"this expression is nested more than {MAX_DEPTH} levels deep", node.span,
                           hint="split it into cells")
        values = [getattr(node, f.name) for f in dataclasses.fields(node)]
        while values:
            item = values.pop()
            if isinstance(item, (list, tuple)):
                values.extend(item)
            elif dataclasses.is_dataclass(item) and not isinstance(item, Span):
                stack.append((item, depth + 1))


# The name a statement that failed to parse would have defined, so that its
# uses are not reported again.
_DEFINES = re.compile(r"[ \t]*(?:(?:table|scenario|fn)[ \t]+([^\W\d]\w*)|([^\W\d]\w*)[ \t]*=)")
_STATEMENT_START = re.compile(r"(?:[^\W\d]\w*[ \t]*=|(?:use|section|fn|check|table|scenario)\b)")


@lru_cache(maxsize=1)
def _continued_line() -> re.Pattern:
    """The grammar's _CONT: a newline (past blank lines) into an indented line that goes on
    a search (`    where ...`, `    maximize ...`, `    n_d over 1..8`)."""
    return re.compile(next(t.pattern.to_regexp() for t in _parser()[0].terminals if t.name == "_CONT"))


def split_statements(source: str) -> list[tuple[int, int]]:
    """The logical lines of a source as (start, end) offsets: a line goes on
    while a bracket is open, after a trailing backslash, or into an indented
    line that goes on a search (the grammar's _CONT).  An unindented line
    that starts a statement ends a bracket left open above it, so one unclosed
    `(` does not swallow the rest of the file."""
    chunks, start, depth, i, n = [], 0, 0, 0, len(source)
    continued = _continued_line().match
    while i < n:
        c = source[i]
        if source.startswith('"""', i):
            j = source.find('"""', i + 3)
            i = n if j < 0 else j + 3
            continue
        if c == '"':
            j = i + 1
            while j < n and source[j] not in '"\n':
                j += 2 if source[j] == "\\" else 1
            i = j + 1 if j < n and source[j] == '"' else j
            continue
        if c == "#":
            j = source.find("\n", i)
            i = n if j < 0 else j
            continue
        if c == "\\" and source[i + 1: i + 2] in ("\n", "\r"):
            i = source.find("\n", i) + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth = max(0, depth - 1)
        elif c == "\n":
            if depth and _STATEMENT_START.match(source, i + 1):
                depth = 0
            if not depth and not continued(source, i):   # (a search's indented `where`, goal...)
                chunks.append((start, i + 1))
                start = i + 1
        i += 1
    if start < n:
        chunks.append((start, n))
    return chunks


def attach_descriptions(stmt, by_line: dict[int, str]) -> None:
    """Give a statement (and a record's fields) the comment of its line as
    its description; ``by_line`` holds the comments by line number."""
    if isinstance(stmt, syntax.Record):
        first_field_line = stmt.fields[0].span.line if stmt.fields else None
        if first_field_line != stmt.span.line:
            stmt.description = by_line.get(stmt.span.line, "")
        for f in stmt.fields:
            f.description = by_line.get(f.span.end_line, by_line.get(f.span.line, ""))
    elif hasattr(stmt, "description"):
        stmt.description = by_line.get(stmt.span.end_line, by_line.get(stmt.span.line, ""))


def _is_figure(node) -> bool:
    """A number, quantity or percentage as written, perhaps negated: what `~` compares with."""
    while isinstance(node, syntax.Neg):
        node = node.operand
    return isinstance(node, (syntax.Number, syntax.Quantity, syntax.Percent))


def _syntax_error(exc: UnexpectedInput, source: str, file: str, brackets: _Brackets) -> IfrError:
    line, column = getattr(exc, "line", 1) or 1, getattr(exc, "column", 1) or 1
    if isinstance(exc, UnexpectedCharacters):
        glued = _glued_keyword_at(exc.pos_in_stream, source, file)
        if glued is not None:
            return glued
        ch = source[exc.pos_in_stream] if exc.pos_in_stream < len(source) else ""
        span = Span(file, line, column, line, column + 1)
        if ch == '"':
            return IfrError("syntax", "unterminated string", span, hint='close the string with "')
        hint = None
        if ch in "$;'`@!?&|":
            hint = "ifr has no such operator; see the grammar in README's language reference"
        return IfrError("syntax", f"unexpected character `{ch}`", span, hint=hint)
    tok = getattr(exc, "token", None)
    if isinstance(exc, UnexpectedEOF) or (tok is not None and tok.type == "$END"):
        if brackets.stack:
            return _unclosed(brackets.stack[-1], file)
        return IfrError("syntax", "the file ends in the middle of a statement",
                        Span(file, line, column, line, column + 1))
    if brackets.stack and tok is not None:
        opener = brackets.stack[-1]
        mismatched = tok.type in _CLOSERS and _CLOSERS[tok.type] != opener.type
        if mismatched or tok.type in ("_NL", "$END") or tok.line > opener.line:
            return _unclosed(opener, file)
    if tok is not None and tok.start_pos is not None and tok.type != "$END":
        # the parse stopped after a keyword that the word goes on from (`in2`), or at one (`by2`)
        glued = _glued_keyword_at(tok.end_pos if _is_keyword(tok) else tok.start_pos, source, file)
        if glued is not None:
            return glued
    attached = _attached_prefix(tok, source, file)
    if attached is not None:
        return attached
    if tok is not None and tok.type == "NUMBER" and "RECIPROCAL_UNIT" in getattr(exc, "expected", ()):
        return _numeric_display_unit(tok, source, file)
    value = tok.value if tok is not None else ""
    width = max(1, len(value.split("\n")[0])) if tok is not None and tok.type != "_NL" else 1
    span = Span(file, line, column, line, column + width)
    what = "end of the line" if tok is not None and tok.type == "_NL" else f"`{value}`"
    expected = sorted({_READABLE.get(t, f"`{t.lower()}`" if t.isupper() and not t.startswith("_") else t)
                       for t in getattr(exc, "expected", set()) if not t.startswith("__")})
    hint = _hint_for(tok, expected, source)
    if hint is None and expected and len(expected) <= 6:
        hint = "expected " + ", ".join(expected)
    return IfrError("syntax", f"unexpected {what}", span, hint=hint)


# The end of a line's text that is a quantity: its number, the space before its unit, its unit.
_QUANTITY_BEFORE = re.compile(r"(?<![\w.])(\d[\d_]*(?:\.\d[\d_]*)?(?:[eE][+-]?\d+)?|\.\d[\d_]*)(\s*)"
                              r"([^\W\d][\w*/^()]*)\s+$")


def _glued_keyword_at(pos: int, source: str, file: str) -> IfrError | None:
    """The error for a word that goes on at ``pos`` from a keyword before it
    (`in` + `2`), or None."""
    start = pos
    while start > 0 and _WORD_CHAR.match(source, start - 1):
        start -= 1
    if start == pos or not _WORD_CHAR.match(source, pos) or source[start:pos] not in name_rule()[1]:
        return None
    word = _WORD.match(source, start).group()
    line_start = source.rfind("\n", 0, start) + 1
    line, column = source.count("\n", 0, start) + 1, start - line_start + 1
    return _glued_keyword(Token("NAME", word, start, line, column, line, column + len(word), start + len(word)),
                          source, file)


def _glued_keyword(word: Token, source: str, file: str) -> IfrError:
    """The error for a word that starts with a keyword, where no name may be."""
    attached = _attached_prefix(word, source, file)
    if attached is not None:
        return attached
    span = Span(file, word.line, word.column, word.line, word.column + len(word.value))
    return IfrError("syntax", f"unexpected `{word.value}`", span, hint=_hint_for(word, [], source))


def _attached_prefix(tok: Token | None, source: str, file: str) -> IfrError | None:
    """`32k token`, `608B token`: a word after a number with an attached prefix
    or `B` is that number's mistake (si-suffix, parameter-count), not the word's."""
    if tok is None or tok.type not in ("NAME", "UNIT"):
        return None
    line_start = source.rfind("\n", 0, tok.start_pos) + 1
    found = _QUANTITY_BEFORE.search(source, line_start, tok.start_pos)
    if found is None or found.group(2) or not (found.group(3) in _SI_SUFFIXES or found.group(3) == "B"):
        return None
    column = found.start(1) - line_start + 1
    num = Token("NUMBER", found.group(1), found.start(1), tok.line, column, tok.line,
                column + len(found.group(1)), found.end(1))
    unit = Token("UNIT", found.group(3), found.start(3), tok.line, num.end_column, tok.line,
                 num.end_column + len(found.group(3)), found.end(3))
    return _si_suffix(num, unit, file) if unit in _SI_SUFFIXES else _parameter_count(num, unit, file)


# What follows `in` when it starts with a digit: up to the end of the line, a comment or a comma.
_DISPLAY_TEXT = re.compile(r"[^\n#,}]*")


def _numeric_display_unit(tok: Token, source: str, file: str) -> IfrError:
    """`in 2/s`, `in 1/`, `in 1 / s`: a display unit starts with a letter, or is a reciprocal `1/UNIT`."""
    written = _DISPLAY_TEXT.match(source, tok.start_pos).group().rstrip()
    span = Span(file, tok.line, tok.column, tok.line, tok.column + len(written))
    reciprocal = re.fullmatch(r"1\s*/\s*(.*)", written)
    if reciprocal is None:
        hint = "a display unit starts with a letter (in GB/s), or is a reciprocal written `1/UNIT` " \
               "(in 1/s, in 1/(GPU*h)); any other number belongs in the formula"
    elif not reciprocal.group(1):
        hint = "`1/` is followed by the unit it divides, without a space: in 1/s, in 1/(GPU*h)"
    elif " " in written:
        hint = f"a unit is written without inner spaces: in 1/{reciprocal.group(1).replace(' ', '')}"
    else:
        hint = "`1/` is followed by a unit, not a number: in 1/s, in 1/ms, in 1/(GPU*h)"
    return IfrError("bad-unit", f"`{written}` is not a display unit", span, hint=hint)


def _hint_for(tok: Token | None, expected: list[str], source: str) -> str | None:
    if tok is None:
        return None
    if tok.type == "RECIPROCAL_UNIT":   # `5 1/s`: a reciprocal is a display unit only
        return f"a reciprocal unit is shown with `in` (x = ... in {tok.value}); a rate is written " \
               f"with a division: 5 / {tok.value[2:]}"
    if tok.type == "NAME" and tok.value and "a unit" not in expected:
        prev = source[: tok.start_pos].rstrip()
        if prev and prev[-1].isdigit():
            return "write a quantity as a number, a space and a unit without spaces (25 GB/s); to multiply, use *"
    if "a number" in expected and "a name" in expected and tok.type in ("MUL_OP", "POW_OP", "RPAR", "COMMA", "_NL"):
        return "expected a value here: a number, a quantity, a name or `(`"
    if tok.value == "step" and ".." in source[: tok.start_pos].rsplit("\n", 1)[-1]:
        return "a range's step is written with `by`: 1 GB..4 GB by 1 GB"
    before = source[: tok.start_pos].rsplit("\n", 1)[-1].split("=", 1)[-1].strip()
    if before in ("between", "from", "range"):   # `bw = between 4 GB/s and 6.5 GB/s`
        return "a value known to lie in a range is written with `to`: 4 GB/s to 6.5 GB/s (its 5th and 95th " \
               "percentiles); uniform(lo, hi) spreads it evenly"
    if tok.type == "STRING" and "=" in source[: tok.start_pos].rsplit("\n", 1)[-1]:
        return "a cell's value is a number, a quantity or a condition, not text; a label goes in a # comment"
    if tok.type == "COMP_OP" and tok.value == "==":
        return "a cell is defined with a single `=`"
    if source[: tok.start_pos].rsplit("\n", 1)[-1].strip() == "section":
        title = source[tok.start_pos:].split("\n", 1)[0].split("#", 1)[0].strip()
        return f'a section\'s title is written in quotes: section "{title}"'
    after_quantity = _QUANTITY_BEFORE.search(source[: tok.start_pos].rsplit("\n", 1)[-1])
    if tok.type in ("NAME", "UNIT") and after_quantity:
        unit = after_quantity.group(3)
        return f"a unit is written without inner spaces ({unit}*{tok.value}, {unit}/{tok.value}); " \
               f"to multiply by a cell, use *"
    if tok.type == "UNIT" or (tok.type == "NAME" and "`=`" in expected):
        return "a statement starts with a name and `=`, or with a keyword (use, section, fn, check, table, scenario, unit, dimension)"
    return None


def _unclosed(opener: Token, file: str) -> IfrError:
    close = {"LPAR": ")", "LSQB": "]", "LBRACE": "}"}[opener.type]
    span = Span(file, opener.line, opener.column, opener.line, opener.column + 1)
    return IfrError("unclosed-bracket", f"`{opener.value}` is never closed", span,
                    hint=f"add the matching `{close}`")


# Prefixes that are no unit by themselves: `64k` would otherwise be 64
# Boltzmann constants, `2M` two molar, `1G` one gauss-less accident.
_SI_SUFFIXES = {"k": 1, "K": 1, "M": 2, "G": 3, "T": 4, "P": 5, "Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4}


def _si_suffix(num: Token, unit: Token, file: str) -> IfrError:
    power = _SI_SUFFIXES[str(unit)]
    value = _number(str(num))
    decimal, binary = value * 1000 ** power, value * 1024 ** power
    fmt = lambda v: f"{int(v):_}" if float(v).is_integer() else f"{v:g}"
    written = f"{num}{unit}" if unit.start_pos == num.end_pos else f"{num} {unit}"
    span = Span(file, num.line, num.column, unit.end_line, unit.end_column)
    return IfrError("si-suffix", f"`{written}` is not a number: a prefix is not a unit", span,
                    hint=f"write {fmt(decimal)} or {fmt(binary)}; with a unit, write it whole ({num} {unit}B, "
                         f"{num} {unit}B/s)")


def _parameter_count(num: Token, unit: Token, file: str) -> IfrError:
    """`7B` is, in this field, seven billion parameters; pint would read seven bytes."""
    span = Span(file, num.line, num.column, unit.end_line, unit.end_column)
    return IfrError("parameter-count", f"`{num}{unit}` reads as {num} bytes, not {num} billion", span,
                    hint=f"write {num}e9 for {num} billion (parameters, or {num}e9 token with a unit), "
                         f"or {num} B, with a space, for bytes")


def _refuse_repeated(func: str, keywords: list[tuple[str, syntax.Expr]]) -> None:
    """A named argument given twice is a mistake (as in Python), not the last one winning."""
    first: dict[str, syntax.Expr] = {}
    for key, value in keywords:
        if key in first:
            raise IfrError("wrong-arity", f"{func}() is given `{key}` twice", value.span,
                           hint=f"give `{key}=` once", related=[(first[key].span, f"`{key}` is first given here")])
        first[key] = value


# Words the grammar reads as values where a name could stand, so no statement may define them.
RESERVED_NAMES = {"na": 'the value that is not available (`x = na "OOM"`)'}


def _unquote(text: str) -> str:
    body = text[1:-1]
    return body.replace('\\"', '"').replace("\\\\", "\\")


def _number(text: str) -> float:
    return float(text.replace("_", ""))


@v_args(meta=True)
class _ToAst(Transformer):
    def __init__(self, file: str, source: str):
        super().__init__()
        self.file = file
        self.source = source

    def _span(self, meta) -> Span:
        return Span(self.file, meta.line, meta.column, meta.end_line, meta.end_column)

    def _tok_span(self, tok: Token) -> Span:
        return Span(self.file, tok.line, tok.column, tok.end_line, tok.end_column)

    def _slice(self, meta) -> str:
        return self.source[meta.start_pos: meta.end_pos]

    # --- statements
    def start(self, meta, items):
        return [i for i in items if i is not None]

    def docstring(self, meta, items):
        return syntax.Docstring(self._span(meta), items[0][3:-3].strip())

    def dotted_name(self, meta, items):
        return ".".join(items)

    def use_module(self, meta, items):
        return syntax.Use(self._span(meta), items[0], None, None, None)

    def use_names(self, meta, items):
        names = [(str(t), self._tok_span(t)) for t in items[1:]]
        return syntax.Use(self._span(meta), items[0], None, None, names)

    def use_path(self, meta, items):
        return syntax.Use(self._span(meta), None, _unquote(items[0]), str(items[1]), None)

    def section(self, meta, items):
        return syntax.Section(self._span(meta), _unquote(items[0]))

    def display(self, meta, items):
        return items[0]

    def _defined_name(self, tok: Token) -> str:
        """A name a statement defines; `na` is the value that is not available, never a name."""
        if str(tok) in RESERVED_NAMES:
            raise IfrError("reserved-name", f"`{tok}` cannot name a cell: it is {RESERVED_NAMES[str(tok)]}",
                           self._tok_span(tok), hint=f"choose another name, such as `{tok}_value`")
        return str(tok)

    def cell(self, meta, items):
        name, expr, display = items
        self._defined_name(name)
        src = self._definition_source(meta, name, display)
        return syntax.Cell(self._span(meta), str(name), self._tok_span(name), expr,
                        str(display) if display is not None else None,
                        self._tok_span(display) if display is not None else None, src)

    field = cell

    def _definition_source(self, meta, name: Token, display: Token | None) -> str:
        """The text after `name =`, without a trailing `in UNIT`."""
        end = meta.end_pos
        if display is not None:
            end = self.source.rindex("in", name.end_pos, display.start_pos)
        text = self.source[name.end_pos: end].strip()
        return " ".join(text[1:].split()) if text.startswith("=") else text

    def _expr_source(self, meta, expr) -> str:
        s = expr.span
        lines = split_lines(self.source)   # as lark counts lines: a form feed in a comment is not a line end
        if s.line == s.end_line:
            return lines[s.line - 1][s.column - 1: s.end_column - 1]
        parts = [lines[s.line - 1][s.column - 1:]] + lines[s.line: s.end_line - 1] + [lines[s.end_line - 1][: s.end_column - 1]]
        return " ".join(p.strip() for p in parts)

    def record(self, meta, items):
        name, *fields = items
        self._defined_name(name)
        fields = [f for f in fields if f is not None]
        return syntax.Record(self._span(meta), str(name), self._tok_span(name), fields)

    def solve_cell(self, meta, items):
        name, unknown, bracket, lhs, rhs, display = items
        self._defined_name(name)
        src = self._definition_source(meta, name, display)
        return syntax.SolveCell(self._span(meta), str(name), self._tok_span(name), str(unknown),
                             self._tok_span(unknown), bracket, lhs, rhs,
                             str(display) if display is not None else None,
                             self._tok_span(display) if display is not None else None, src)

    def fn_def(self, meta, items):
        name, *rest = items
        body = rest[-1]
        params = [p for p in rest[:-1] if p is not None]
        for tok in [name, *params]:
            self._defined_name(tok)
        return syntax.FnDef(self._span(meta), str(name), self._tok_span(name), [str(p) for p in params], body,
                         self._expr_source(meta, body), [self._tok_span(p) for p in params])

    def check_equal(self, meta, items):
        expr, expected, tol = items
        return syntax.Check(self._span(meta), expr, expected, tol, self._slice(meta)[5:].strip())

    def check_approx(self, meta, items):
        expr, op, expected, tol = items
        if tol is not None:
            x, fig, within = (self._expr_source(meta, n) for n in (expr, expected, tol))
            raise IfrError("approximate-check", f"`{op}` and `within` both say how close the value must be",
                           tol.span, hint=f"keep one: `check {x} {op} {fig}` (as precise as the figure is "
                           f"written) or `check {x} = {fig} within {within}`")
        if not _is_figure(expected):
            raise IfrError("approximate-check", f"`{op}` compares with a written figure, and "
                           f"`{self._expr_source(meta, expected)}` is an expression", expected.span,
                           hint="write the figure (`~ 8000 token`), or use `=` with `within` for a computed value")
        return syntax.Check(self._span(meta), expr, expected, None, self._slice(meta)[5:].strip(), approximate=True)

    def check_true(self, meta, items):
        return syntax.Check(self._span(meta), items[0], None, None, self._slice(meta)[5:].strip())

    def table(self, meta, items):
        name, *rest = items
        axes = [a for a in rest if isinstance(a, tuple)]
        show = [s for s in rest if not isinstance(s, tuple)]
        (var, values), more = axes[0], axes[1:]
        return syntax.Table(self._span(meta), str(name), self._tok_span(name), str(var), self._tok_span(var),
                         values, [(str(s), self._tok_span(s)) for s in show],
                         more=[(str(v), self._tok_span(v), vals) for v, vals in more])

    def axis(self, meta, items):
        return (items[0], items[1])

    def list(self, meta, items):
        return syntax.ListExpr(self._span(meta), [i for i in items if i is not None])

    def list_name(self, meta, items):
        return syntax.Name(self._span(meta), str(items[0]))

    def list_cell(self, meta, items):
        name, items_ = items
        self._defined_name(name)
        return syntax.ListCell(self._span(meta), str(name), self._tok_span(name), items_,
                               self._definition_source(meta, name, None))

    def range_step(self, meta, items):
        return syntax.RangeExpr(self._span(meta), items[0], items[1], items[2])

    def range(self, meta, items):
        return syntax.RangeExpr(self._span(meta), items[0], items[1], None)

    def scenario(self, meta, items):
        name, *assignments = items
        return syntax.Scenario(self._span(meta), str(name), self._tok_span(name), assignments)

    def dimension_def(self, meta, items):
        return syntax.DimensionDef(self._span(meta), str(items[1]), self._tok_span(items[1]))

    def unit_base(self, meta, items):
        _, name, dimension = items
        return syntax.UnitDef(self._span(meta), str(name), self._tok_span(name),
                              str(dimension) if dimension is not None else None,
                              self._tok_span(dimension) if dimension is not None else None)

    def unit_derived(self, meta, items):
        _, name, expr = items
        return syntax.UnitDef(self._span(meta), str(name), self._tok_span(name), expr=expr,
                              source=self._expr_source(meta, expr))

    def assignment(self, meta, items):
        *names, value = items   # `x = v`, or a record's field: `gpu.hbm = v`
        first, last = self._tok_span(names[0]), self._tok_span(names[-1])
        span = Span(self.file, first.line, first.column, last.end_line, last.end_column)
        return (".".join(str(n) for n in names), span, value)

    def search(self, meta, items):
        word, name, *rest = items
        axes = [(str(v), self._tok_span(v), values) for v, values in (a for a in rest if isinstance(a, tuple))]
        goals = [g for g in rest if isinstance(g, list)]
        parts = [x for x in rest if x is not None and not isinstance(x, (tuple, list))]
        where = parts[0] if len(parts) == 1 else syntax.BoolOp(
            Span(parts[0].span.file, parts[0].span.line, parts[0].span.column, parts[-1].span.end_line,
                 parts[-1].span.end_column), "and", parts) if parts else None
        return syntax.Search(self._span(meta), str(name), self._tok_span(name), axes, where,
                             [(direction, expr) for direction, expr in goals], pareto=str(word) == "pareto")

    def search_axis(self, meta, items):
        return (items[0], items[1])

    def maximize(self, meta, items):
        return ["maximize", items[0]]

    def minimize(self, meta, items):
        return ["minimize", items[0]]

    def data_table(self, meta, items):
        name, word, path = items
        if str(word) != "data":
            raise IfrError("syntax", f"`{word} \"...\"`: a name followed by a string", self._tok_span(word),
                           hint='a measured table is read with `name = data "file.csv"`')
        self._defined_name(name)
        return syntax.DataTable(self._span(meta), str(name), self._tok_span(name), _unquote(path),
                                self._tok_span(path))

    def fit(self, meta, items):
        word = items[0]
        params = [x for x in items if isinstance(x, syntax.FitParam)]
        table, mode, target, expr = items[1 + len(params):]
        if str(word) != "fit":
            raise IfrError("syntax", f"`{word}` does not start a statement", self._tok_span(word),
                           hint="a cell is `name = value`; a fit is `fit a, b to table: column = formula`")
        residual = "absolute" if mode is None else str(mode)
        if residual not in ("absolute", "relative"):
            raise IfrError("syntax", f"`{mode}`: a fit's residuals are `relative` or `absolute`",
                           self._tok_span(mode), hint=f"write `to {table} relative:` or `to {table}:`")
        return syntax.Fit(self._span(meta), params, str(table), self._tok_span(table), residual, str(target),
                          self._tok_span(target), expr, self._expr_source(meta, expr))

    def fit_param(self, meta, items):
        name, bounds = items
        lo, hi = bounds if bounds is not None else (None, None)
        return syntax.FitParam(str(name), self._tok_span(name), lo, hi)

    def fit_range(self, meta, items):
        return (items[0], items[1])

    # --- expressions
    def number(self, meta, items):
        return syntax.Number(self._span(meta), _number(items[0]), str(items[0]))

    def value(self, meta, items):
        return items[0]

    def percent(self, meta, items):
        text = str(items[0])
        return syntax.Percent(self._span(meta), _number(text[:-1]) / 100.0, text)

    def percent_spaced(self, meta, items):
        text = str(items[0])
        return syntax.Percent(self._span(meta), _number(text) / 100.0, text + "%")

    def quantity(self, meta, items):
        num, unit = items
        if str(unit) in _SI_SUFFIXES:
            raise _si_suffix(num, unit, self.file)
        if str(unit) == "B" and unit.start_pos == num.end_pos:
            raise _parameter_count(num, unit, self.file)
        return syntax.Quantity(self._span(meta), _number(num), str(num), str(unit))

    def paren(self, meta, items):
        """A bracketed expression is its inner node, spanning the brackets too
        (so messages quote `(a + b)` whole)."""
        node = items[0]
        node.span = self._span(meta)
        return node

    def not_available(self, meta, items):
        reason = items[0]
        return syntax.NotAvailable(self._span(meta), None if reason is None else _unquote(reason))

    def name(self, meta, items):
        return syntax.Name(self._span(meta), str(items[0]))

    def field_access(self, meta, items):
        return syntax.FieldAccess(self._span(meta), items[0], str(items[1]))

    def index(self, meta, items):
        return syntax.Index(self._span(meta), items[0], items[1], list(items[2:]))

    def _chain(self, meta, items, make):
        left = items[0]
        for i in range(1, len(items), 2):
            op, right = items[i], items[i + 1]
            span = Span(self.file, left.span.line, left.span.column, right.span.end_line, right.span.end_column)
            left = make(span, str(op), left, right)
        return left

    def sum(self, meta, items):
        return self._chain(meta, items, lambda s, op, a, b: syntax.BinOp(s, op, a, b))

    product = sum

    def power(self, meta, items):
        base, op, exponent = items
        if isinstance(base, syntax.Quantity) and not self.source.startswith("(", meta.start_pos):
            raise self._quantity_power(meta, base, op, exponent)
        return syntax.BinOp(self._span(meta), "^", base, exponent)

    def _quantity_power(self, meta, base: syntax.Quantity, op: Token, exponent) -> IfrError:
        """`1 m^2^3` (and `2 m ^ 2`) would raise the whole quantity, number and all, left to right,
        where `2^2^3` is right-associative: the reader's meaning is asked for in brackets."""
        written = " ".join(self._slice(meta).split())
        power = f"{op}{self._expr_source(None, exponent)}"
        return IfrError("syntax", f"`{written}` is ambiguous: a power of a quantity needs brackets", self._span(meta),
                        hint=f"write ({base.number_text} {base.unit}){power} to raise the number and the unit "
                             "together, or give the unit a single exponent")

    def comparison(self, meta, items):
        return syntax.Compare(self._span(meta), str(items[1]), items[0], items[2])

    def or_test(self, meta, items):
        return syntax.BoolOp(self._span(meta), "or", list(items))

    def and_test(self, meta, items):
        return syntax.BoolOp(self._span(meta), "and", list(items))

    def not_(self, meta, items):
        return syntax.Not(self._span(meta), items[0])

    def neg(self, meta, items):
        return syntax.Neg(self._span(meta), items[0])

    def unary(self, meta, items):  # unary plus
        return items[-1]

    def ifelse(self, meta, items):
        return syntax.IfElse(self._span(meta), *items)

    def between(self, meta, items):
        """`a to b`: an uncertain value, the lognormal with 5th and 95th percentiles a and b."""
        lo, hi = items
        return syntax.Call(self._span(meta), "to", self._span(meta), [lo, hi], [])

    def call(self, meta, items):
        name, *args = items
        args = [a for a in args if a is not None]
        positional = [a for a in args if not isinstance(a, tuple)]
        keywords = [a for a in args if isinstance(a, tuple)]
        _refuse_repeated(str(name), keywords)
        return syntax.Call(self._span(meta), str(name), self._tok_span(name), positional, keywords)

    def qualified_call(self, meta, items):
        owner, name, *args = items
        call = self.call(meta, [name] + args)
        call.owner = owner
        return call

    def keyword(self, meta, items):
        return (str(items[0]), items[1])

    def comprehension(self, meta, items):
        func, body, var, rng, cond = items
        if isinstance(rng, syntax.Name):   # `for t in tps`: a named list
            return syntax.Comprehension(self._span(meta), str(func), self._tok_span(func), body, str(var),
                                        rng, rng, cond, self._tok_span(var), over=rng)
        return syntax.Comprehension(self._span(meta), str(func), self._tok_span(func), body, str(var),
                                 rng.lo, rng.hi, cond, self._tok_span(var))


def parse_expression(text: str, file: str = "<command line>") -> syntax.Expr:
    """Parse a lone expression (a --set value, a --for side) with the grammar's
    `value` start symbol; raises IfrError on a syntax error."""
    expr, _ = _syntax(text if text.endswith("\n") else text + "\n", file, "value")
    _check_depth(expr)
    return expr
