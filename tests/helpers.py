"""Small helpers for tests that write .ifr text inline."""
from __future__ import annotations

import textwrap
from pathlib import Path

import ifr
from ifr.errors import IfrError, IfrErrors


def model(tmp_path: Path, text: str, name: str = "m.ifr"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return ifr.load(path)


def error(tmp_path: Path, text: str) -> IfrError:
    """The first error loading ``text`` raises (the test fails if none does)."""
    try:
        model(tmp_path, text)
    except IfrErrors as errs:
        return errs.errors[0]
    except IfrError as e:
        return e
    raise AssertionError("no error was raised")


def errors(tmp_path: Path, text: str) -> list[IfrError]:
    try:
        model(tmp_path, text)
    except IfrErrors as errs:
        return errs.errors
    except IfrError as e:
        return [e]
    return []
