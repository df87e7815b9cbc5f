"""The editor's analysis in stages: its diagnostics from the cells the file reaches, the other
imported cells computed after they are sent, and across edits in one process (imported
modules' indexes and solves' closed forms kept from one edit to the next), each result
equal to a fresh, whole analysis of the same text, evaluated at once."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

from ifr.lsp.analysis import Staged, analyse, forget
from ifr.lsp.worker import AnalysisWorker
from ifr.model import Analysis

ROOT = Path(__file__).resolve().parents[2]
MODELS = sorted((ROOT / "models").glob("*.ifr"))


@pytest.fixture
def whole(monkeypatch):
    """The analysis with every cell computed in one evaluation, as before it was staged, and made
    from nothing kept from an earlier one."""
    evaluate = Analysis.evaluate

    def at_once(self, *args, reached_first=False, **kwargs):
        return evaluate(self, *args, **kwargs)

    def run(path, text, buffers=None):
        forget()
        with monkeypatch.context() as patch:
            patch.setattr(Analysis, "evaluate", at_once)
            return analyse(str(path), text, buffers or {})
    return run


def _same(a, b) -> None:
    """Two results equal, a value that is not a number equal to itself."""
    assert a.diagnostics == b.diagnostics
    assert list(a.cells) == list(b.cells)
    for key, cell in a.cells.items():
        other = b.cells[key]
        if cell.value is not None and math.isnan(cell.value):
            assert other.value is not None and math.isnan(other.value), key
            other = type(other)(**{**vars(other), "value": cell.value})
        assert cell == other, key
    assert (a.checks, a.symbols, a.occurrences, a.scope, a.sections, a.texts, a.files, a.declared_units) == \
        (b.checks, b.symbols, b.occurrences, b.scope, b.sections, b.texts, b.files, b.declared_units)


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
def test_a_staged_analysis_of_each_bundled_model_is_the_whole_one(path, whole):
    text = path.read_text(encoding="utf-8")
    reference = whole(path, text)
    staged = Staged(str(path), text, {})
    assert staged.diagnostics == reference.diagnostics   # before the rest is computed
    _same(staged.result(), reference)


def test_the_cells_a_file_does_not_reach_are_computed_after_its_diagnostics(tmp_path):
    (tmp_path / "lib.ifr").write_text("a = 2 GB\nb = a * 3\nunread = a / 0 s\nc = 5 s\n", encoding="utf-8")
    main = tmp_path / "m.ifr"
    staged = Staged(str(main), "use lib\ny = lib.b * 2\ncheck y = 12 GB\n", {})
    model = staged.run.model
    assert {"lib.a", "lib.b", "y"} <= set(model.values) and "lib.c" not in model.values   # not yet
    assert staged.diagnostics == []
    result = staged.result()
    values = {c.name: (c.value, c.unit) for c in result.cells.values()}
    assert values["lib.c"] == (5, "s") and values["y"] == (12, "GB")
    assert values["lib.unread"][0] is None   # its error: a division by zero
    assert result.diagnostics == []   # an imported cell's error the file does not read is not the file's


MODULE = "width = 4096\nlayers = 32\nbytes = 2 B\nper_token = 2 * width * layers * bytes\n"
EDITS = [   # (the module's text, the main file's text)
    (MODULE, "use lib\ntokens = 1000\nkv = lib.per_token * tokens in MB\ncheck kv > 0 B\n"),
    # a cell's dimension changes (kv becomes a rate), and the check no longer fits it
    (MODULE, "use lib\ntokens = 1000 / 1 s\nkv = lib.per_token * tokens in MB/s\ncheck kv > 0 B\n"),
    # the check fixed; a cell added
    (MODULE, "use lib\ntokens = 1000 / 1 s\nkv = lib.per_token * tokens in MB/s\nextra = kv * 2 s\n"
     "check kv > 0 B/s\n"),
    # an unknown name introduced in the module, and a division by zero in the main file
    (MODULE.replace("2 * width", "2 * widht"), "use lib\ntokens = 1000 / 1 s\nkv = lib.per_token * tokens in MB/s\n"
     "idle = 0 s\nextra = 1 GB / idle\n"),
    # both fixed; the added cell removed; a module cell the file does not read added
    (MODULE + "spare = width * 3\n", "use lib\ntokens = 1000\nkv = lib.per_token * tokens in MB\ncheck kv > 0 B\n"),
    # a half-typed line, then the text before it again
    (MODULE, "use lib\ntokens = 1000\nkv = lib.per_token * tokens in MB\ncheck kv > 0 B\nnew = (kv +\n"),
    (MODULE, "use lib\ntokens = 1000\nkv = lib.per_token * tokens in MB\ncheck kv > 0 B\n"),
]


def test_edits_analysed_one_after_another_in_one_process_are_each_a_fresh_analysis(tmp_path, whole):
    lib, main = tmp_path / "lib.ifr", tmp_path / "m.ifr"
    lib.write_text(MODULE, encoding="utf-8")
    worker = AnalysisWorker()
    try:
        codes = []
        for module, text in EDITS:
            buffers = {str(lib): module}
            early = []
            result = worker.analyse(str(main), text, buffers, on_diagnostics=lambda _t, found: early.append(found))
            fresh = whole(main, text, buffers)
            _same(result, fresh)
            assert early[0].diagnostics == fresh.diagnostics
            codes.append(sorted(d.code for d in result.diagnostics))
    finally:
        worker.close()
    # the edits did what they say (worked out from the texts, not from the analysis)
    assert codes[0] == [] and codes[2] == [] and codes[4] == [] and codes[6] == []
    assert codes[1] == ["unit-mismatch"]
    assert "unknown-name" in codes[3] and "division-by-zero" in codes[3]
    assert codes[5] and codes[5][0] in ("syntax", "unclosed-bracket")


def test_a_solves_closed_form_and_method_are_what_explain_says():
    seen = 0
    for path in MODELS:
        staged = Staged(str(path), path.read_text(encoding="utf-8"), {})
        result = staged.result()
        model = staged.run.model
        for cell in result.cells.values():
            if cell.kind != "solve" or cell.id in model.errors:
                continue
            explained = model.explain(cell.id)
            assert (cell.closed_form, cell.method) == (explained.get("closed_form"), explained.get("method")), cell.id
            seen += cell.closed_form is not None
    assert seen >= 3   # the bundled models have closed forms to compare


def test_the_rest_of_an_analysis_no_longer_wanted_is_not_made(tmp_path):
    staged = Staged(str(tmp_path / "m.ifr"), "a = 2 GB\nb = a * 2\n", {})
    asked = []
    assert staged.result(stop=lambda: asked.append(1) or True) is None and asked == [1]
    assert staged.result(stop=lambda: False).cells["cell:b"].value == 4
