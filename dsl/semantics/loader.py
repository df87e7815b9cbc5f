"""Syntax trees of a file and its imports -> one resolved model graph.

Reads each file (only a regular .ifr file, bounded), parses it, loads the
modules it uses, and hands the programs to the binder, which binds every name
to a cell, a record, a function, a module or a unit (cells first, units last),
expands functions inline, and orders the cells with ``graphlib``.  The graph's
types are in `ifr.semantics.graph`.
"""
from __future__ import annotations

from pathlib import Path

from ifr.errors import DEFAULT_SOURCES, IfrError, Sources, Span
from ifr.semantics.graph import ModuleDef
from ifr.semantics.units import suggest
from ifr.syntax import nodes as syntax
from ifr.syntax.sources import (
    LONE_SURROGATE,
    display_path,
    ifr_file,
    not_an_ifr_file,
    read_source,
    surrogate_error,
    surrogates_replaced,
)

STDLIB = Path(__file__).resolve().parents[2] / "stdlib"


def _stdlib_dir() -> Path:
    try:  # installed (or editable): ifr.stdlib is a package beside ifr
        import ifr.stdlib as pkg
        return Path(pkg.__file__).resolve().parent
    except ImportError:
        return STDLIB


# --- loading modules -----------------------------------------------------------


# How deep `use` may nest (a model uses a module that uses another ...).
MAX_MODULE_DEPTH = 64


class Unresolved:
    """What a name from a module that could not be loaded is bound to: its
    uses are placeholders, not new errors (the `use` line already has one)."""

    def __repr__(self):
        return "<unresolved>"


UNRESOLVED = Unresolved()


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
            raise not_an_ifr_file(Path(display_path(given)), path, span)
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
        name = display_path(path) if key else self.main_name
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
        lone = LONE_SURROGATE.search(text)
        if lone is not None:   # an editor's text (JSON can carry one) or a caller's: no file holds one
            self.sources.put(name, surrogates_replaced(text), quote=quote)
            raise surrogate_error(name, text, lone.start())
        self.sources.put(name, text, quote=quote)
        program = self.parse(text, name)
        self.diagnostics += program.diagnostics
        while key in self.modules:
            key = key + "_"
        module = ModuleDef(key, program.file, program)
        self.loading.append((path, span))
        try:
            for stmt in program.statements:
                if isinstance(stmt, syntax.Use):
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

    def _use(self, module: ModuleDef, path: Path, stmt: syntax.Use) -> None:
        if stmt.path is not None:
            target = (path.parent / stmt.path)
            if target.suffix == ".json":   # a model's config.json (hf_config.py)
                stmt.loaded = self.load_config(target, stmt.alias, stmt.span)
                return
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

    def load_config(self, path: Path, key: str, span: Span) -> ModuleDef:
        """A Hugging Face config.json as a module of one record (hf_config.py), read like a module:
        from an editor's buffer before the disk, once per file, its text kept under its name."""
        from ifr.semantics import hf_config
        try:
            resolved = path.resolve()
        except (RuntimeError, OSError, ValueError):
            raise IfrError("unreadable", f"cannot read {path}", span) from None
        if resolved in self.by_path:
            return self.by_path[resolved]
        name = display_path(resolved)
        text = self.sources.buffers.get(str(resolved))
        if text is None:
            text = hf_config.read_config(path, span)
        source = hf_config.module_text(text, name, span)
        self.sources.put(name, source, quote=False)
        program = self.parse(source, name)
        self.diagnostics += program.diagnostics
        while key in self.modules:
            key = key + "_"
        module = ModuleDef(key, program.file, program, as_record=True)
        self.modules[key] = module
        self.by_path[resolved] = module
        return module

    def _present(self, path: Path) -> bool:
        """Whether there is something at ``path`` to load (a link that loops or
        leads nowhere included: loading it says what is wrong), on disk or in a buffer."""
        import os
        try:
            return os.path.lexists(path) or str(path.resolve()) in self.sources.buffers
        except (OSError, RuntimeError, ValueError):   # a link that loops, a NUL in the name
            return True
