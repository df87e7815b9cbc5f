"""A Pygments lexer for .ifr files (`ifr.pygments.IfrLexer`), for docs and `pygmentize -l ifr`.

It follows the TextMate grammar of the VS Code extension
(editors/vscode/syntaxes/ifr.tmLanguage.json): keywords, numbers,
percentages, quantities with their units, `in UNIT` (`in 1/s` too), strings, docstrings,
comments and operators.
"""

from pygments.lexer import RegexLexer, bygroups, words
from pygments.token import Comment, Keyword, Name, Number, Operator, Punctuation, String, Text, Whitespace

__all__ = ["IfrLexer"]

_KEYWORDS = ("use", "section", "fn", "solve", "on", "check", "within", "table", "vary", "over", "by", "to", "show",
             "scenario", "where", "maximize", "minimize", "if", "then", "else", "for", "in", "as", "na")
# Keywords only where a statement starts and a name follows (`unit node = 8 GPU`; `unit = 3` is a cell).
_STATEMENT_KEYWORDS = ("unit", "dimension")
_NOT_KEYWORD = r"(?!(?:use|section|fn|solve|on|check|within|table|vary|over|by|to|show|scenario|where|maximize|minimize|if|then|else|and|or" \
               r"|not|for|in|as|na)\b)"
_NUMBER = r"(?:\d[\d_]*(?:\.[\d_]+)?|(?<![\w.])\.\d[\d_]*)(?:[eE][+-]?\d+)?"
# After `*`, `/` or `^`: letters, digits, `^` and a dot only before a digit (`s^0.5`), so that the
# range `1 GB/s..1 TB/s` ends the unit at `s`.
_UNIT_PART = r"(?:[\w^]|\.(?=\d))+"
_UNIT = r"[^\W\d]\w*(?:[*/^]" + _UNIT_PART + r")*"
# A display unit may also be a reciprocal and bracketed: `in 1/s`, `in 1/(GPU*h)`.
_DISPLAY_UNIT = r"(?:1/)?(?:[^\W\d]\w*|\([\w*/^]+\))(?:[*/^](?:" + _UNIT_PART + r"|\([\w*/^]+\)))*"


class IfrLexer(RegexLexer):
    """Lexer for ifr capacity-planning models."""

    name = "ifr"
    aliases = ["ifr"]
    filenames = ["*.ifr"]
    url = "https://github.com/"

    tokens = {
        "root": [
            (r"[ \t]+", Whitespace),
            (r"\n", Whitespace),
            (r"\\\n", Text),
            (r"#.*?$", Comment.Single),
            (r'"""', String.Doc, "docstring"),
            (r'"[^"\n]*"', String.Double),
            (r"(in)(\s+)(" + _DISPLAY_UNIT + r"|%)(?=\s*(?:#|,|\}|\n|$))", bygroups(Keyword, Whitespace, Name.Builtin)),
            (r"(fn)(\s+)([^\W\d]\w*)", bygroups(Keyword.Declaration, Whitespace, Name.Function)),
            (r"^(unit|dimension)([ \t]+)([^\W\d]\w*)", bygroups(Keyword.Declaration, Whitespace, Name.Builtin)),
            (r"^" + _NOT_KEYWORD + r"([^\W\d]\w*)(\s*)(?==(?!=))", bygroups(Name.Variable, Whitespace)),
            (r"(" + _NUMBER + r")(\s+)" + _NOT_KEYWORD + r"(" + _UNIT + r")",
             bygroups(Number.Float, Whitespace, Name.Builtin)),
            (_NUMBER + r"%", Number),
            (_NUMBER, Number),
            (words(_KEYWORDS, suffix=r"\b"), Keyword),
            (words(("and", "or", "not"), suffix=r"\b"), Operator.Word),
            (r"[^\W\d]\w*(?=\s*\()", Name.Function),
            (r"[^\W\d]\w*", Name),
            (r"==|!=|<=|>=|<|>|\.\.|\*\*|[-+*/^=~≈]", Operator),
            (r"[()\[\]{},:.]", Punctuation),
        ],
        "docstring": [
            (r'"""', String.Doc, "#pop"),
            (r'[^"]+', String.Doc),
            (r'"', String.Doc),
        ],
    }
