"""Every error code ifr reports, with what it means and the exit code it gives.

A code is the stable name of a kind of mistake (`error[unit-mismatch]`):
scripts and editors match on it, the golden tests pin it, README lists it.
Codes are written as strings where errors are made; this is the one list of
them, and tests/test_codes.py fails when a code is used that is not here or
listed here and never used.  A user's mistake exits 2 (README's exit codes);
``exit_code`` is given only where a code's differs.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ErrorCode:
    """One code: what it means in a line, and the exit code of a command that reports it."""

    meaning: str
    exit_code: int = 2


CODES: dict[str, ErrorCode] = {
    "approximate-check": ErrorCode("an approximate check (`~`) is not against a written figure alone"),
    "bad-argument": ErrorCode("a built-in function is given an argument it cannot take"),
    "bad-bracket": ErrorCode("a solve's bracket is not a range of the unknown"),
    "bad-check": ErrorCode("a check is neither `= value` nor a comparison"),
    "bad-config": ErrorCode("a model's config.json (`use \"config.json\" as m`) is not one JSON object of finite "
                            "numbers"),
    "bad-field": ErrorCode("a model's config.json gives a field a value that is not its kind (a count, true or false, "
                           "a dtype)"),
    "bad-equation": ErrorCode("a solve's equation is not an equation"),
    "bad-range": ErrorCode("a range is empty or its step is not positive"),
    "bad-unit": ErrorCode("a unit expression does not parse"),
    "bad-value": ErrorCode("a value given on the command line or in Python is no value for its cell"),
    "cache-folder": ErrorCode("the cache folder holds files ifr did not write "
                              "(a warning when a command goes on with a temporary one)"),
    "condition": ErrorCode("a condition (true or false) is given where a number is needed"),
    "cycle": ErrorCode("cells depend on each other"),
    "data-file": ErrorCode("a data table's file is not a .csv or .tsv table with a header and rows"),
    "data-header": ErrorCode("a data table's header names a column badly or gives a unit ifr does not know"),
    "data-number": ErrorCode("an entry of a data table's number column is not a number"),
    "data-ragged": ErrorCode("a row of a data table has more or fewer entries than the header has columns"),
    "data-text": ErrorCode("a formula reads a data table's text (label) column as numbers"),
    "depends-on-error": ErrorCode("a cell uses a cell that has an error"),
    "display-unit": ErrorCode("a cell's display unit is of another dimension than its value"),
    "division-by-zero": ErrorCode("a division by zero, or zero to a negative power"),
    "domain": ErrorCode("a function is applied outside its domain (a negative number to a fractional power)"),
    "empty-table": ErrorCode("a table varies a cell over no values"),
    "empty-list": ErrorCode("a named list has no items"),
    "list-dimension": ErrorCode("a named list mixes dimensions, or records and values"),
    "not-a-list": ErrorCode("count() is given something other than one named list"),
    "encoding": ErrorCode("a file is not valid UTF-8 text"),
    "fit-bound": ErrorCode("a fit ends on a bound of a cell it chooses"),
    "fit-failed": ErrorCode("a fit does not converge, or its inputs or starting values are not numbers"),
    "fit-independent": ErrorCode("a fit's formula does not depend on a cell it is to choose"),
    "fit-parameter": ErrorCode("a fit names a cell it cannot choose (a formula, a column, a cell fitted twice)"),
    "fit-table": ErrorCode("a fit names something that is not a data table"),
    "fit-underdetermined": ErrorCode("a fit has fewer rows than cells to choose, or the data cannot tell them apart"),
    "formula-in-input": ErrorCode("an edited workbook's input cell holds a formula or a text, not a number"),
    "import-cycle": ErrorCode("modules import each other"),
    "internal": ErrorCode("ifr itself failed on the file (a bug), as the editor shows it", exit_code=3),
    "invalid": ErrorCode("a table or scenario that a cell reads has an error"),
    "misplaced-docstring": ErrorCode("a docstring is written elsewhere than at the top of the file"),
    "missing-dependency": ErrorCode("an optional package the command needs is not installed"),
    "missing-field": ErrorCode("a model's config.json lacks a field the derived counts need"),
    "missing-module": ErrorCode("a `use` names a module that does not exist"),
    "nested-solve": ErrorCode("a solve would have to solve through another solve"),
    "no-files": ErrorCode("a folder given on the command line holds no .ifr file"),
    "no-inputs": ErrorCode("a sensitivity is asked of a cell that depends on no input"),
    "no-solution": ErrorCode("a solve finds no value of the unknown that makes the equation hold"),
    "no-such-file": ErrorCode("a file or folder given on the command line does not exist"),
    "no-value": ErrorCode("a `first`, `argmax` or reduction finds nothing to give"),
    "not-a-cell": ErrorCode("a name that is not a cell is used where a cell is needed"),
    "not-a-condition": ErrorCode("`prob()` is given a value, or a search's `where` is not a condition"),
    "not-available": ErrorCode("a value written `na` (`na \"OOM\"`: a published table does not give it) is read, "
                               "compared with or varied over"),
    "not-a-number": ErrorCode("a value is NaN (0/0, inf - inf), or a workbook's value is not a finite number"),
    "not-a-record": ErrorCode("a field is read of something that is not a record"),
    "not-a-value": ErrorCode("a function, table or scenario is used as a value"),
    "not-an-input": ErrorCode("an edited workbook changes a cell that only the .ifr file sets"),
    "not-here": ErrorCode("an expression cannot be computed where it is written"),
    "not-a-goal": ErrorCode("a search maximizes or minimizes a condition, not a number"),
    "not-a-search": ErrorCode("a Pareto front is read as one configuration"),
    "no-configuration": ErrorCode("no configuration of a search meets its conditions"),
    "not-plotted": ErrorCode("a table varies more values than a plot can show"),
    "not-uncertain": ErrorCode("a distribution is asked of a cell that is a single value"),
    "offset-unit": ErrorCode("an offset or logarithmic unit (degC, dB), which ifr does not compute with"),
    "overflow": ErrorCode("a value is too large to compute or to show in its unit"),
    "parameter-count": ErrorCode("a number with an attached `B` (`7B`), which reads as bytes, not a count of parameters"),
    "range-bound": ErrorCode("a range's bound is not a whole number"),
    "range-too-large": ErrorCode("a table has more rows than a table may hold"),
    "recursion": ErrorCode("a function calls itself"),
    "redefinition": ErrorCode("a name is defined twice"),
    "reserved-name": ErrorCode("a statement defines a word the language reserves, such as `na`"),
    "several-solutions": ErrorCode("a solve's equation holds for several values of the unknown"),
    "si-suffix": ErrorCode("a number is written with an SI prefix as if it were a unit (`3k`)"),
    "solve-independent": ErrorCode("a solve's equation does not depend on its unknown"),
    "syntax": ErrorCode("the text does not parse"),
    "too-deep": ErrorCode("an expression or the modules are nested too deep"),
    "too-large": ErrorCode("a number, an expansion or the model is too large"),
    "too-many-cells": ErrorCode("a workbook's sheet has no row left for a cell"),
    "too-much-work": ErrorCode("a comprehension or a Monte Carlo run would take too long"),
    "uncertain-check": ErrorCode("a check compares an uncertain value"),
    "uncertain-value": ErrorCode("an uncertain value is given where one number is needed"),
    "unclosed-bracket": ErrorCode("a bracket is never closed"),
    "unit-changed": ErrorCode("an edited workbook changes an input's unit"),
    "unit-cycle": ErrorCode("declared units are defined by each other in a cycle"),
    "unit-definition": ErrorCode("a declared unit is defined by something other than numbers and units"),
    "unit-fallback": ErrorCode("a single-letter name is read as a unit (a warning)", exit_code=0),
    "unit-mismatch": ErrorCode("the dimensions of two sides or of a value and its unit differ"),
    "unit-redefined": ErrorCode("a unit or a dimension is declared twice, or a dimension given a second unit"),
    "unit-shadows": ErrorCode("a declared unit or dimension has the name of a cell or of a known unit or dimension"),
    "unknown-column": ErrorCode("a table's row is read at a column it does not show"),
    "unknown-dimension": ErrorCode("a unit is declared of a dimension no `dimension` statement declares"),
    "unknown-field": ErrorCode("a record has no field of that name"),
    "unknown-function": ErrorCode("no function of that name"),
    "unknown-name": ErrorCode("no cell, unit or function of that name"),
    "unknown-row": ErrorCode("a table has no row of that key"),
    "unknown-scenario": ErrorCode("no scenario of that name"),
    "unknown-table": ErrorCode("no table of that name"),
    "unknown-search": ErrorCode("no search of that name"),
    "unknown-unit": ErrorCode("no unit of that name"),
    "unreadable": ErrorCode("a file or workbook cannot be read"),
    "unsupported-field": ErrorCode("a model's config.json has a field whose effect on the parameter count ifr does "
                                   "not compute"),
    "unwritable": ErrorCode("an output file cannot be written where it is asked for"),
    "usage": ErrorCode("the command line is not one ifr takes"),
    "vector-bound": ErrorCode("a range bound or a built-in's argument varies across a table's sweep"),
    "workbook-mismatch": ErrorCode("an edited workbook does not have the cells ifr wrote"),
    "workbook-too-large": ErrorCode("a workbook is larger than ifr reads"),
    "write-failed": ErrorCode("an output could not be written (a full disk)"),
    "wrong-arity": ErrorCode("a function is called with the wrong number or kind of arguments"),
}
