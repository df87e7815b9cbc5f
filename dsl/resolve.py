"""Syntax trees of a file and its imports -> one resolved model graph.

Binds every name to a cell, a record, a function, a module or a unit (cells
first, units last), expands functions inline, turns `link = nic_200g` into a
record alias, and orders the cells with ``graphlib`` (cycles are errors).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from . import ir
from . import syntax as ast
from .errors import DEFAULT_SOURCES, IfrError, Sources, Span
from .lines import split_lines
from .units import suggest

STDLIB = Path(__file__).resolve().parent.parent / "stdlib"


def _stdlib_dir() -> Path:
    try:  # installed (or editable): ifr.stdlib is a package beside ifr
        import ifr.stdlib as pkg
        return Path(pkg.__file__).resolve().parent
    except ImportError:
        return STDLIB


# --- what the graph holds ------------------------------------------------------

@dataclass(eq=False, slots=True)
class CellDef:
    id: str
    name: str               # as the user reads it: kv_state, a100.bf16_flops
    module: str             # "" for the main file, else the module's key
    kind: str               # input | formula | solve
    span: Span
    source: str
    description: str
    section: str
    display: str | None
    display_span: Span | None
    record: str | None = None
    expr: ir.Node | None = None
    # solve cells
    unknown: str | None = None
    lhs: ir.Node | None = None
    rhs: ir.Node | None = None
    bracket: tuple[ir.Node, ir.Node] | None = None
    # a cell made from its line shape's template (shape_ir.py): (the Template,
    # the cells it reads in order, its line, its file's SourceText)
    template: tuple | None = None


class ShapedCellDef(CellDef):
    """The cell of a line read by shape (syntax.ShapedCell).  Made from its
    shape's template, its IR is made when first read: most cells of a big
    model are checked, computed and listed through their template."""

    __slots__ = ()

    expr = ast.MadeWhenRead(CellDef, "expr", lambda cell: _from_template(*cell.template)
                            if cell.template is not None else None)


def _from_template(template, cells: list[str], line: int, text) -> ir.Node:
    return template.make(line, cells, text)


@dataclass(eq=False)
class RecordDef:
    id: str
    name: str
    module: str
    fields: dict[str, str]  # field name -> cell id
    span: Span
    description: str = ""
    section: str = ""
    alias_of: str | None = None


@dataclass(eq=False)
class FnBinding:
    node: ast.FnDef
    module: "ModuleDef"


@dataclass(eq=False)
class ModuleDef:
    key: str
    file: str
    program: ast.Program
    namespace: dict = field(default_factory=dict)   # name -> str (cell id) | RecordDef | FnBinding | ModuleDef
    origin: dict = field(default_factory=dict)      # name -> Span of its definition


@dataclass(eq=False)
class CheckDef:
    span: Span
    source: str
    description: str
    expr: ir.Node
    expected: ir.Node | None
    tolerance: ir.Node | None
    error: IfrError | None = None      # a mistake found before evaluation


@dataclass(eq=False)
class TableDef:
    name: str
    span: Span
    var: str                       # a cell id, or a record alias id
    var_is_record: bool
    values: list                   # ir nodes, or RecordDefs
    range: tuple | None            # (lo, hi, step) ir nodes
    show: list[str]                # cell ids
    description: str = ""
    error: IfrError | None = None
    more: list = field(default_factory=list)   # further varied cells (TableDefs without show): every combination

    @property
    def axes(self) -> list:
        """Every varied cell of the table (itself first)."""
        return [self, *self.more]


@dataclass(eq=False)
class ScenarioDef:
    name: str
    span: Span
    overrides: list[tuple[str, ir.Node, Span]]
    description: str = ""


@dataclass(eq=False)
class ScenarioName:
    """A scenario's name in the main file's namespace: `fast.t_exp` reads a cell under it."""
    name: str


@dataclass(eq=False)
class FunctionDef:
    """A function's body bound on its own (parameters as ir.Param), for checking."""
    name: str
    span: Span
    module: str
    body: ir.Node


@dataclass(eq=False)
class Graph:
    main: ModuleDef
    modules: dict[str, ModuleDef]
    cells: dict[str, CellDef]        # in source order, main file first
    records: dict[str, RecordDef]
    order: list[str]                 # evaluation order
    deps: dict[str, set[str]]
    checks: list[CheckDef]
    tables: list[TableDef]
    scenarios: dict[str, ScenarioDef]
    sections: list[str]
    functions: list[FunctionDef]
    cell_errors: dict[str, IfrError]   # cells whose definition has a mistake
    relations: object = None           # dependencies.Dependencies: who needs whom, computed once
    uncertain: set = field(default_factory=set)   # cells holding Monte Carlo samples (uncertain.annotate)
    distributions: int = 1                        # how many distributions the files write (0: none)


# --- loading modules -----------------------------------------------------------

# A model is text a person wrote: anything bigger is not one (and reading it
# whole would cost the memory of a file such as /dev/zero).
MAX_SOURCE_BYTES = 8 * 1024 * 1024


# How deep `use` may nest (a model uses a module that uses another ...).
MAX_MODULE_DEPTH = 64


class Unresolved:
    """What a name from a module that could not be loaded is bound to: its
    uses are placeholders, not new errors (the `use` line already has one)."""

    def __repr__(self):
        return "<unresolved>"


UNRESOLVED = Unresolved()


def ifr_file(path: Path) -> Path | None:
    """The regular file named .ifr that ``path`` leads to once its symbolic links
    are followed, or None: a folder, a device, a link that loops or leads nowhere,
    a file of another name (a link `x.ifr` to `.env` is not a model)."""
    import os
    import stat
    try:
        real = Path(os.path.realpath(path, strict=True))
        return real if real.suffix == ".ifr" and stat.S_ISREG(real.stat().st_mode) else None
    except (OSError, RuntimeError, ValueError):
        return None


def not_an_ifr_file(path: Path, real: Path, span: Span | None) -> IfrError:
    """The error for a file reached as ``path`` that is ``real``, not named .ifr."""
    import os
    through = "" if os.path.abspath(path) == str(real) else f" (a link to {_display_path(real)})"
    return IfrError("unreadable", f"{path} is not an .ifr file{through}", span,
                    hint="ifr reads models and modules from files named .ifr only")


def read_source(path: Path, span: Span | None = None) -> str:
    """A file's text: only a regular file named .ifr (the name of what its links
    lead to, not the name as written), of at most MAX_SOURCE_BYTES, in UTF-8.

    A file of another name, a FIFO, a device or a folder is refused before
    anything is read from it; its content is never quoted.
    """
    import errno
    import os
    import stat
    try:
        real = Path(os.path.realpath(path))
    except ValueError:   # a NUL in the name
        raise IfrError("unreadable", f"cannot read {path}: a file's name cannot hold a NUL character", span) from None
    # O_NOFOLLOW: the file opened is the one whose name was checked, not a link swapped in since
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(real, flags)
    except FileNotFoundError:
        raise IfrError("no-such-file", f"no such file: {path}", span, hint="check the path") from None
    except IsADirectoryError:
        raise IfrError("unreadable", f"{path} is a directory, not an .ifr file", span) from None
    except OSError as exc:
        why = "a symbolic link that loops" if exc.errno == errno.ELOOP else exc.strerror
        raise IfrError("unreadable", f"cannot read {path}: {why}", span) from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IfrError("unreadable", f"{path} is a directory, not an .ifr file", span)
        if not stat.S_ISREG(st.st_mode):
            raise IfrError("unreadable", f"{path} is not a regular file (a device, a pipe or a socket)", span,
                           hint="give the path of an .ifr file")
        if real.suffix != ".ifr":
            raise not_an_ifr_file(path, real, span)
        if st.st_size > MAX_SOURCE_BYTES:
            raise IfrError("too-large", f"{path} has {st.st_size:,} bytes; an .ifr file may have at most "
                           f"{MAX_SOURCE_BYTES:,}", span, hint="split the model into modules")
        with os.fdopen(fd, "rb") as f:
            fd = None
            data = f.read(MAX_SOURCE_BYTES + 1)
    except OSError as exc:
        raise IfrError("unreadable", f"cannot read {path}: {exc.strerror}", span) from None
    finally:
        if fd is not None:
            os.close(fd)
    if len(data) > MAX_SOURCE_BYTES:
        raise IfrError("too-large", f"{path} has more than {MAX_SOURCE_BYTES:,} bytes", span)
    if data.startswith(b"\xef\xbb\xbf"):   # a UTF-8 byte-order mark, as some editors save
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        error = IfrError("encoding", f"{path} is not valid UTF-8 (byte 0x{data[exc.start]:02x})",
                         Span(str(path), line, col, line, col + 1), hint="save the file as UTF-8")
        error.text = data.decode("utf-8", errors="replace")   # to quote the line, for an .ifr file
        raise error from None


# A UTF-16 surrogate on its own is no character: UTF-8 cannot encode it (hashing the text would fail).
_SURROGATE = re.compile("[\ud800-\udfff]")


def surrogates_replaced(text: str) -> str:
    """``text`` with each lone surrogate as U+FFFD: the same length, in characters and in UTF-16 units."""
    return _SURROGATE.sub("\ufffd", text)


def _surrogate_error(name: str, text: str, at: int) -> IfrError:
    lines = split_lines(text[:at] + "\ufffd")
    line, column = len(lines), len(lines[-1])
    return IfrError("encoding", f"{name} holds a lone UTF-16 surrogate (U+{ord(text[at]):04X}), which is no character",
                    Span(name, line, column, line, column + 1), hint="delete it, and type the character again")


def _display_path(path: Path) -> str:
    """A module's path as messages show it: relative to the working folder when inside it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


class Loader:
    """Parses the main file and, depth first, every module it uses.

    Mistakes do not stop it: each is a diagnostic, and a module that cannot be
    loaded leaves its `use` line unresolved.  Texts come from ``sources``
    (an editor's unsaved buffers) before the disk.
    """

    def __init__(self, parse_fn, sources: Sources | None = None):
        self.parse = parse_fn
        self.sources = sources if sources is not None else DEFAULT_SOURCES
        self.modules: dict[str, ModuleDef] = {}
        self.by_path: dict[Path, ModuleDef] = {}
        self.loading: list[tuple[Path, Span | None]] = []
        self.diagnostics: list[IfrError] = []

    main_name = ""

    def load(self, path: Path, key: str, span: Span | None, text: str | None = None) -> ModuleDef:
        given = path
        try:
            path = path.resolve()
        except (RuntimeError, OSError):   # a symbolic link that loops
            raise IfrError("unreadable", f"cannot read {given}: a symbolic link that loops", span) from None
        except ValueError:   # a NUL in the name (a document's address in an editor may carry one)
            raise IfrError("unreadable", f"cannot read {given}: a file's name cannot hold a NUL character",
                           span) from None
        if key and path.suffix != ".ifr":   # a module from an editor's buffer: read_source checks the others
            raise not_an_ifr_file(Path(_display_path(given)), path, span)
        if len(self.loading) >= MAX_MODULE_DEPTH:
            raise IfrError("too-deep", f"modules are nested more than {MAX_MODULE_DEPTH} deep", span,
                           hint="import the modules a model needs from the model itself")
        if path in self.by_path:
            return self.by_path[path]
        stack_paths = [p for p, _ in self.loading]
        if path in stack_paths:
            chain = [p.stem for p in stack_paths[stack_paths.index(path):]] + [path.stem]
            raise IfrError("import-cycle", "modules import each other: " + " -> ".join(chain), span,
                           hint="move what both need into a third module")
        if text is None:
            text = self.sources.buffers.get(str(path))
        name = _display_path(path) if key else self.main_name
        if text is None:
            try:
                text = read_source(given if not key else path, span)
            except IfrError as e:
                if hasattr(e, "text") and path.suffix == ".ifr":
                    self.sources.put(name, e.text)
                    e.span = Span(name, e.span.line, e.span.column, e.span.end_line, e.span.end_column)
                raise
        if text.startswith("\ufeff"):
            text = text[1:]
        quote = path.suffix == ".ifr" or str(path) in self.sources.buffers
        lone = _SURROGATE.search(text)
        if lone is not None:   # an editor's text (JSON can carry one) or a caller's: no file holds one
            self.sources.put(name, surrogates_replaced(text), quote=quote)
            raise _surrogate_error(name, text, lone.start())
        self.sources.put(name, text, quote=quote)
        program = self.parse(text, name)
        self.diagnostics += program.diagnostics
        while key in self.modules:
            key = key + "_"
        module = ModuleDef(key, program.file, program)
        self.loading.append((path, span))
        try:
            for stmt in program.statements:
                if isinstance(stmt, ast.Use):
                    try:
                        self._use(module, path, stmt)
                    except IfrError as e:
                        self.diagnostics.append(e)
                        stmt.loaded = None
        finally:
            self.loading.pop()
        self.modules[key] = module
        self.by_path[path] = module
        return module

    def _use(self, module: ModuleDef, path: Path, stmt: ast.Use) -> None:
        if stmt.path is not None:
            target = (path.parent / stmt.path)
            if target.suffix != ".ifr" and ifr_file(target) is None:   # a link `x.txt` to an .ifr file is one
                raise IfrError("missing-module", f"`{stmt.path}` is not an .ifr file", stmt.span,
                               hint="a module is an .ifr file: use \"lib/name.ifr\" as name")
            if not self._present(target):
                raise IfrError("missing-module", f"no module file `{stmt.path}`", stmt.span,
                               hint=f"the path is relative to {path.parent}")
            stmt.loaded = self.load(target, stmt.alias, stmt.span)
            return
        rel = Path(*stmt.module.split(".")).with_suffix(".ifr")
        for folder in (path.parent, _stdlib_dir()):
            candidate = folder / rel
            if self._present(candidate):
                stmt.loaded = self.load(candidate, stmt.module.replace(".", "_"), stmt.span)
                return
        known = sorted({p.stem for p in _stdlib_dir().glob("*.ifr")} | {p.stem for p in path.parent.glob("*.ifr")})
        close = suggest(stmt.module, known)
        hint = f"did you mean {close}?" if close else (
            "modules are found beside the file, then in the standard library: " + ", ".join(known))
        raise IfrError("missing-module", f"no module named `{stmt.module}`", stmt.span, hint=hint)

    def _present(self, path: Path) -> bool:
        """Whether there is something at ``path`` to load (a link that loops or
        leads nowhere included: loading it says what is wrong), on disk or in a buffer."""
        import os
        try:
            return os.path.lexists(path) or str(path.resolve()) in self.sources.buffers
        except (OSError, RuntimeError, ValueError):   # a link that loops, a NUL in the name
            return True
