"""Small helpers for tests that write .ifr text inline."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import ifr
from ifr.errors import IfrError, IfrErrors


def model(tmp_path: Path, text: str, name: str = "m.ifr"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return ifr.load(path)


def error(tmp_path: Path, text: str) -> IfrError:
    """The first error of ``text``: a mistake loading it, or else the first
    cell that cannot be computed (the test fails if there is none)."""
    found = errors(tmp_path, text)
    if not found:
        raise AssertionError("no error was raised")
    return found[0]


def errors(tmp_path: Path, text: str) -> list[IfrError]:
    """The mistakes loading ``text``, or else the errors of the cells that
    cannot be computed (their own, not those of the cells depending on them)."""
    try:
        m = model(tmp_path, text)
    except IfrErrors as errs:
        return errs.errors
    except IfrError as e:
        return [e]
    return [e.error for e in m.errors.values() if e.cause is None]


def bound_graph(path: Path):
    """A file's graph as the binder leaves it, before any later phase has run
    (for tests that a phase reads the graph without changing it)."""
    from ifr.errors import Sources
    from ifr.semantics.bind import Binder
    from ifr.semantics.loader import Loader
    from ifr.syntax.parse_cache import parse
    loader = Loader(parse, Sources())
    return Binder(loader, loader.load(path, "", None, None)).bind()


# The first line of a script for `python_run` that makes `import sympy` fail.
NO_SYMPY = "import sys\nsys.modules['sympy'] = None   # `import sympy` fails\n"


def python_run(tmp_path: Path, script: str) -> str:
    """``script`` run by this Python in a process of its own (its cache folder in ``tmp_path``,
    no background work), which must succeed; its standard output, stripped."""
    env = dict(os.environ, IFR_CACHE_DIR=str(tmp_path / "cache"), IFR_NO_BACKGROUND="1")
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True,
                          env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()
