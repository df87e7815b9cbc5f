"""`ifr export -o plan.html`: one self-contained page.  Parsed back with the
standard library's HTML parser (every table and chart of the model in it,
nothing fetched from outside, text from the model escaped) and rendered to a
PNG by headless Chromium."""
from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import pytest
from sixteen_cards import MODEL, feasible

import ifr
from ifr.exporters.html import render

ROOT = Path(__file__).resolve().parents[2]
# one uncertain (with solves), one with a table, one with solves and a scenario
MODELS = ["save_vs_recompute", "d002_kv_transfer", "pd_handoff"]


VOID = {"br", "meta", "col", "img", "link", "input", "hr", "wbr", "source", "area", "base", "embed"}


class Page(HTMLParser):
    """The elements of a page: (tag, attributes, the element's nesting of figures and tables)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict]] = []
        self.stack: list[tuple[str, dict]] = []
        self.figures: list[dict] = []       # each figure: its attributes, whether it holds an svg
        self.tables: list[dict] = []        # each table: its class, its body rows
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        self.elements.append((tag, attributes))
        if tag == "figure":
            self.figures.append({"attrs": attributes, "svg": 0, "paths": 0})
        if tag == "svg" and self.figures and any(t == "figure" for t, _ in self.stack):
            self.figures[-1]["svg"] += 1
        if tag == "path" and self.figures and any(t == "figure" for t, _ in self.stack):
            self.figures[-1]["paths"] += 1
        if tag == "table":
            self.tables.append({"class": attributes.get("class", ""), "rows": 0})
        if tag == "tr" and any(t == "tbody" for t, _ in self.stack):
            self.tables[-1]["rows"] += 1
        if tag not in VOID:     # `<path ... />` comes back as a start and an end tag
            self.stack.append((tag, attributes))

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break

    def handle_data(self, data):
        if not any(t in ("style", "svg") for t, _ in self.stack):
            self.text.append(data)


def _parse(text: str) -> Page:
    page = Page()
    page.feed(text)
    page.close()
    return page


@pytest.fixture(scope="module", params=MODELS)
def exported(request):
    model = ifr.load(str(ROOT / "models" / f"{request.param}.ifr"))
    return model, render(model)


def test_nothing_is_fetched_from_outside(exported):
    _, text = exported
    page = _parse(text)
    tags = {tag for tag, _ in page.elements}
    assert not tags & {"script", "link", "img", "iframe", "object", "embed", "image", "audio", "video", "base"}
    for tag, attrs in page.elements:
        for name, value in attrs.items():
            if name in ("src", "href", "xlink:href", "action", "srcset", "poster", "data"):
                assert (value or "").startswith("#"), (tag, name, value)
            assert "http" not in (value or "").lower(), (tag, name, value)
            assert not re.search(r"url\(\s*(?!#)", value or ""), (tag, name, value)   # only url(#clip-path)
    style = text[text.index("<style>"):text.index("</style>")]
    assert "@import" not in style and "url(" not in style and "http" not in style


def test_every_table_and_chart_of_the_model_is_in_it(exported):
    model, text = exported
    page = _parse(text)
    sweeps = [t for t in page.tables if t["class"] == "sweep"]
    assert len(sweeps) == len(model.graph.tables)
    for table, shown in zip(model.graph.tables, sweeps):
        assert shown["rows"] == len(model.table(table.name).rows)
        (figure,) = [f for f in page.figures if f["attrs"].get("data-table") == table.name]
        assert figure["svg"] == 1 and figure["paths"] > 50     # a drawn chart, not an empty frame
    uncertain = [model.graph.cells[c].name for c in model.used_cells()
                 if not model.graph.cells[c].module and model.summary(c) is not None]
    drawn = [f["attrs"]["data-cell"] for f in page.figures if "data-cell" in f["attrs"]]
    assert drawn == uncertain
    assert all(f["svg"] == 1 for f in page.figures if "data-cell" in f["attrs"])
    # every cell of the model is listed, every check shown
    listed = sum(t["rows"] for t in page.tables if t["class"] == "cells")
    assert listed == len(model.used_cells())
    checks = [t for t, a in page.elements if t == "td" and a.get("class") in ("ok", "bad")]
    assert len(checks) == len(model.check())
    assert any(t for t, a in page.elements if a.get("class") == "tornado") or not uncertain


def test_the_figures_a_reader_looks_for(tmp_path):
    # pd_handoff's handoff: 2 * 36 layers * 8 heads * 128 * 2 byte * 8192 token / 25 GB/s = 48.32 ms (000 §2)
    model = ifr.load(str(ROOT / "models" / "pd_handoff.ifr"))
    text = " ".join(_parse(render(model)).text)
    assert "t_handoff" in text and "48.32" in text
    kv = 2 * 36 * 8 * 128 * 2 * 8192
    assert f"{kv / 25e9 * 1e3:.2f}" == "48.32"
    assert "Headline results" in text and "fast_link" in text     # its scenario, side by side
    assert "closed form" in text


def test_text_from_the_model_is_escaped(tmp_path):
    f = tmp_path / "m.ifr"
    f.write_text('"""<b>Plan</b> & <script>alert(1)</script>\n\nSecond <i>paragraph</i>."""\n'
                 'x = 2 ms   # <img src=http://example.com/x.png> quoted\n'
                 'section "<style>body{}</style>"\ny = x * 2\ncheck y = 4 ms   # <a href="http://e.com">e</a>\n',
                 encoding="utf-8")
    text = render(ifr.load(str(f)))
    page = _parse(text)
    tags = [tag for tag, _ in page.elements]
    assert "script" not in tags and "img" not in tags and "b" not in tags and "i" not in tags
    assert all(a["href"].startswith("#") for tag, a in page.elements if tag == "a")   # the page's own links
    assert "<style" not in text[text.index("<body>"):].replace('<style type="text/css">', "")  # only SVGs' own
    body = " ".join(page.text)
    assert "<script>alert(1)</script>" in body and "<img src=http://example.com/x.png> quoted" in body
    assert "&lt;script&gt;" in text and "<style>body{}</style>" in body


@pytest.mark.skipif(shutil.which("chromium") is None, reason="headless Chromium is not installed")
def test_chromium_renders_it_offline(tmp_path):
    from PIL import Image
    source = tmp_path / "plan.ifr"
    source.write_text('"""A link sweep."""\nsize = 2 GB\nlink = 25 GB/s\nt = size / link in ms\n'
                      "table by_link: vary link over [5 GB/s, 25 GB/s, 50 GB/s] show t\n", encoding="utf-8")
    model = ifr.load(str(source))
    page = tmp_path / "plan.html"
    model.export(page)
    shot = tmp_path / "plan.png"
    profile = tempfile.mkdtemp(dir=tmp_path)
    subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
                    f"--user-data-dir={profile}", "--window-size=1100,2400", f"--screenshot={shot}",
                    page.as_uri()], check=True, capture_output=True, timeout=180)
    image = Image.open(shot).convert("RGB")
    assert image.size == (1100, 2400)
    colours = image.getcolors(maxcolors=1 << 20)
    # matplotlib's first colour (#1f77b4) draws the table's line: the inline SVG was drawn
    bars = sum(n for n, (r, g, b) in colours if abs(r - 0x1F) < 8 and abs(g - 0x77) < 8 and abs(b - 0xB4) < 8)
    assert bars > 500
    # the headline cards' accent (#2f5b8f): the page's own style sheet was applied
    assert any(abs(r - 0x2F) < 4 and abs(g - 0x5B) < 4 and abs(b - 0x8F) < 4 for _, (r, g, b) in colours)


LONG_UNITS = """\
\"\"\"Units longer than their column.\"\"\"
use money: USD
context  = 3000 token/request
rate     = 12.44 request/s/GPU
price    = 0.2125 USD/Mtoken
batch    = 64
tpot     = batch * 0.3 ms
fits     = batch < 100
table t: vary batch over [16, 64] show tpot, fits
"""

# Run in the page by Chromium: what a reader would see go wrong, written into the page's title.
_LAYOUT_PROBE = """<script>
window.addEventListener("load", () => {
  const spilled = [...document.querySelectorAll("table.cells td")]
    .filter(td => td.scrollWidth > td.clientWidth + 1).map(td => td.textContent.trim());
  const heads = [...document.querySelectorAll("table.sweep th")].map(th => getComputedStyle(th).textAlign);
  const value = getComputedStyle(document.querySelector("table.cells th:nth-child(2)")).textAlign;
  document.title = JSON.stringify({spilled, heads, value});
});
</script>"""


def test_a_long_unit_stays_in_its_column_and_number_headings_sit_over_their_numbers(tmp_path):
    """Rendered by Chromium: no cell of the Cells table spills into the next column (a unit
    such as request/s/GPU breaks after a `/`), and a heading over numbers is aligned as they are."""
    import json
    source = tmp_path / "units.ifr"
    source.write_text(LONG_UNITS, encoding="utf-8")
    page = tmp_path / "units.html"
    ifr.load(str(source)).export(page)
    probed = tmp_path / "probed.html"
    probed.write_text(page.read_text(encoding="utf-8").replace("</body>", _LAYOUT_PROBE + "</body>"),
                      encoding="utf-8")
    profile = tempfile.mkdtemp(dir=tmp_path)
    dom = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                          "--disable-background-networking", "--disable-component-update", "--disable-sync",
                          "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
                          f"--user-data-dir={profile}", "--window-size=1000,1600", "--dump-dom",
                          probed.as_uri()], check=True, capture_output=True, text=True, timeout=180).stdout
    found = json.loads(re.search(r"<title>(.*?)</title>", dom, re.S).group(1).replace("&quot;", '"'))
    assert found["spilled"] == []
    assert found["value"] == "right"
    assert found["heads"] == ["right", "right", "right"]   # batch, tpot and fits: each over its column


def test_a_notebook_shows_the_report():
    from ifr.exporters.markdown import render as markdown
    model = ifr.load(str(ROOT / "models" / "pd_handoff.ifr"))
    page = _parse(model._repr_html_())
    ((tag, attrs),) = [(t, a) for t, a in page.elements]
    assert tag == "iframe" and "sandbox" in attrs
    assert attrs["srcdoc"] == render(model)          # the same report, in a frame of its own
    assert model._repr_markdown_() == markdown(model)
    assert model._repr_markdown_().startswith("# PD handoff")


def test_a_search_and_a_front_are_in_the_report(tmp_path):
    f = tmp_path / "plan.ifr"
    f.write_text(MODEL)
    page = _parse(render(ifr.load(str(f))))
    searches = [t for t in page.tables if "search" in t["class"]]
    found = feasible()
    # the best ten of the search; the front: one row per batch that no other batch beats on both goals
    # (tok_per_card grows with the batch, tpot too, so every batch is on the front)
    assert [t["rows"] for t in searches] == [min(10, len(found)), 6]
    text = " ".join(page.text)
    best_tok, (tp_p, n_p, n_d, batch) = max(found, key=lambda f: f[0])   # the first of a tie is max's too
    assert (tp_p, n_p, n_d, batch) == (4, 1, 1, 64)
    assert f"{best_tok:.4g}" in text                       # 441.7 token/s per card
    assert f"{len(found)} meet every condition" in text
    (figure,) = [f for f in page.figures if f["attrs"].get("data-search") == "front"]
    assert figure["svg"] == 1 and figure["paths"] > 20      # the front drawn over the feasible points
