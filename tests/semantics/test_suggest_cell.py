"""The did-you-mean of an unknown name: a cell one letter off is meant before a unit."""
from __future__ import annotations

import pytest

from ifr.errors import IfrError, IfrErrors
from ifr.model import Options, analyse


def _hint(tmp_path, text: str) -> str | None:
    path = tmp_path / "m.ifr"
    path.write_text(text, encoding="utf-8")
    try:
        analysis = analyse(str(path), options=Options(text))
        errors = analysis.errors
    except IfrErrors as exc:
        errors = list(exc.errors)
    except IfrError as exc:
        errors = [exc]
    found = [e for e in errors if e.code == "unknown-name"]
    assert len(found) == 1, [e.code for e in errors]
    return found[0].hint


@pytest.mark.parametrize("text, hint", [
    ("ctx = 4096 token\ny = ctz * 2\n", "did you mean ctx?"),      # not the unit ct
    ("batch_size = 8\ny = batch_sise * 2\n", "did you mean batch_size?"),
    ("q = 8\ny = pri * 2\n", "did you mean pi?"),                  # no cell is close: the unit
    ("abc = 1\ny = qwxzv * 2\n", None),
])
def test_an_unknown_name_suggests_a_close_cell_before_a_unit(tmp_path, text, hint):
    assert _hint(tmp_path, text) == hint
