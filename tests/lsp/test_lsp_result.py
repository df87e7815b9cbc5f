"""What the editor's analysis process sends the server: a Result that pickles
back to an equal one (spans and the server's records are pickled as their
fields, rebuilt by their constructors)."""
from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from ifr.errors import Span
from ifr.lsp.analysis import analyse

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", ["pd_handoff", "ch9_kv_sharing", "pd_config_search"])
def test_a_result_pickles_back_to_an_equal_one(name):
    path = ROOT / "models" / f"{name}.ifr"
    text = path.read_text(encoding="utf-8")
    for edited in (text, text.replace("=", "= unknown_name +", 1)):   # and one with mistakes
        result = analyse(str(path), edited, {})
        back = pickle.loads(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
        assert back == result
        assert back.cells and back.occurrences and back.symbols
    assert result.diagnostics   # the second text had a mistake


def test_a_span_pickles_as_itself():
    span = Span("a.ifr", 3, 5, 3, 9)
    back = pickle.loads(pickle.dumps(span))
    assert back == span and type(back) is Span and hash(back) == hash(span)


def test_a_bug_met_after_the_diagnostics_is_a_diagnostic_not_a_lost_result(tmp_path, monkeypatch):
    """A failure of ifr while the cells' values are gathered comes back as an `internal`
    diagnostic beside the file's own, in a Result that still pickles (before, it ended the
    analysis process, and the editor had no hover, completion or word of why)."""
    from ifr.lsp import analysis

    def broken(*_args):
        raise RuntimeError("a bug")
    monkeypatch.setattr(analysis, "_cells", broken)
    path = tmp_path / "m.ifr"
    text = "a = 2 GB\nb = a / (1 GB/s) in s\nc = b + 1 GB\n"   # one mistake of the file's own
    result = analyse(str(path), text, {})
    codes = [d.code for d in result.diagnostics]
    assert codes == ["unit-mismatch", "internal"]
    assert "internal error: RuntimeError: a bug" in result.diagnostics[1].message
    assert pickle.loads(pickle.dumps(result)) == result
