"""Defined names for cells: mangled deterministically into names Excel accepts.

Excel's rules for a defined name, as far as a workbook must survive both
Excel and LibreOffice:

- letters, digits and `_` (Excel also takes `.` and `\\`, which we avoid);
  the first character a letter or `_`; at most 255 characters;
- case-insensitive: `Link` and `link` are the same name;
- never something Excel could read as a cell reference: A1-style (`KV1`,
  `AB12`, anything of one to three letters and digits) or R1C1-style (`R`,
  `C`, `RC`, `R1C1`, `R2`, `C3`). Excel refuses such names even where
  LibreOffice accepts them;
- not `TRUE`/`FALSE`, not one of Excel's built-in names (`Print_Area`...),
  and not starting with `_xl`, which Excel keeps for itself.

`assign_names` turns ifr cell names into such names, first come first
served, so the same model always gets the same names.
"""
from __future__ import annotations

import re
import unicodedata

MAX_NAME_CHARS = 255

# Letters, digits and `_`, not opening with a digit, and not the whole of an
# A1-style reference (`KV1`) nor an R1C1-style one (`R`, `RC`, `R1C1`, `C3`).
_ALLOWED = re.compile(r"(?![A-Za-z]{1,3}[0-9]+\Z|[Rr][0-9]*(?:[Cc][0-9]*)?\Z|[Cc][0-9]*\Z)[A-Za-z_][A-Za-z0-9_]*")
_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9_]")
_BUILT_IN = frozenset(name.lower() for name in (
    "TRUE", "FALSE", "Print_Area", "Print_Titles", "Criteria", "Database", "Extract",
    "Consolidate_Area", "Sheet_Title", "Auto_Open", "Auto_Close", "Auto_Activate",
    "Auto_Deactivate", "Recorder", "Data_Form", "FilterDatabase",
))


def is_excel_name(name: str) -> bool:
    """Whether Excel (and LibreOffice) accept `name` as a defined name."""
    if not 0 < len(name) <= MAX_NAME_CHARS or _ALLOWED.fullmatch(name) is None:
        return False
    lowered = name.lower()
    return lowered not in _BUILT_IN and not lowered.startswith("_xl")


def mangle(name: str) -> str:
    """A valid defined name for an ifr name (`a100.bf16_flops` -> `a100_bf16_flops`)."""
    if len(name) < MAX_NAME_CHARS and is_excel_name(name):
        return name      # what the steps below leave unchanged
    text = name if name.isascii() else "".join(_ascii(ch) for ch in name)
    text = _NOT_ALLOWED.sub("_", text) or "_"
    if not (text[0].isalpha() or text[0] == "_"):
        text = "_" + text
    if text.lower().startswith("_xl"):
        text = "_" + text
    text = text[:MAX_NAME_CHARS - 1]
    if not is_excel_name(text):
        text += "_"      # KV1 -> KV1_, R -> R_, TRUE -> TRUE_
    return text


def _ascii(ch: str) -> str:
    """An ASCII spelling of one character: `α` -> `alpha`, `é` -> `e`."""
    if ch.isascii():
        return ch
    decomposed = unicodedata.normalize("NFKD", ch)
    plain = "".join(c for c in decomposed if c.isascii())
    if plain:
        return plain
    uname = unicodedata.name(decomposed[:1] or ch, "")
    if "GREEK" in uname and "LETTER" in uname:
        word = uname.split()[-1].lower()
        return word.capitalize() if "CAPITAL" in uname else word
    if ch.isalnum():
        return f"u{ord(ch):04x}"
    return "_"


def assign_names(candidates: list[tuple[str, list[str]]]) -> dict[str, str]:
    """A unique defined name per key, from its candidate spellings in order.

    Each key takes the first of its candidates (mangled) that no earlier key
    took, comparing case-insensitively as Excel does; when all are taken the
    last one gets a numeric suffix (`link_2`). Deterministic for a given input.
    """
    taken: set[str] = set()
    out: dict[str, str] = {}
    for key, spellings in candidates:
        for spelling in spellings:
            chosen = mangle(spelling)       # a valid name
            lowered = chosen.lower()
            if lowered not in taken:
                break
        else:
            base, suffix = mangle(spellings[-1]), 2
            while True:
                ending = f"_{suffix}"
                chosen = base[:MAX_NAME_CHARS - len(ending)] + ending
                lowered = chosen.lower()
                if lowered not in taken:
                    break
                suffix += 1
            assert is_excel_name(chosen), chosen
        taken.add(lowered)
        out[key] = chosen
    return out
