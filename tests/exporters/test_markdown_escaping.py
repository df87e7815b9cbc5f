"""Markdown export shows what the model's author wrote as text: a renderer
(markdown-it, CommonMark with tables, raw HTML allowed as most renderers
allow it) makes no element, attribute or link of a title, docstring,
description, section, check or table, and ordinary text reads as written."""
from __future__ import annotations

import html
import re
import textwrap

import pytest

import ifr
from ifr.exporters.markdown import render

markdown_it = pytest.importorskip("markdown_it")

HOSTILE = '''\
    """Plan <script>alert(1)</script> [x](javascript:alert(2))

    <img src=x onerror=alert(3)> and <a href="javascript:alert(4)">link</a>
    # not a heading, a < b, x * y, _under_, a | b
    - not a list
    1. not a list either
    [ref]: javascript:alert(5)
    see [ref] and <javascript:alert(6)> and ![i](javascript:alert(7))
    """
    section "<script>alert(8)</script> `code <b>`"
    x = 2 GB      # <img src=x onerror=alert(9)> a < b, x * y, _under_, a | b, [c](javascript:alert(10))
    y = x * 2     # `x | <b>` in code &amp; &lt;script&gt;
    check y = 4 GB   # <script>alert(11)</script>
    table t: vary x over [1 GB, 2 GB] show y
    scenario big: x = 3 GB   # <script>alert(12)</script> _under_
'''


def rendered(tmp_path, text=HOSTILE) -> tuple[str, str]:
    path = tmp_path / "h.ifr"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    md = render(ifr.load(path))
    return md, markdown_it.MarkdownIt("commonmark").enable("table").render(md)


def test_no_html_or_javascript_link_survives_rendering(tmp_path):
    _, out = rendered(tmp_path)
    assert "<script" not in out and "<img" not in out and "<b>" not in out
    assert not re.search(r"<[^>]*\bonerror\s*=", out)
    assert not re.search(r"href\s*=\s*\"\s*javascript:", out, re.I)
    assert not re.search(r"src\s*=\s*\"\s*javascript:", out, re.I)
    assert "<h1>" in out and out.count("<h1>") == 1        # only the title is a heading
    assert "<li>not a list" not in out and "<ol>" not in out and "<em>" not in out


def test_the_text_still_reads_as_written(tmp_path):
    md, out = rendered(tmp_path)
    text = html.unescape(re.sub(r"<[^>]+>", "", out))      # what a reader sees
    assert "Plan <script>alert(1)</script> [x](javascript:alert(2))" in text
    assert "# not a heading, a < b, x * y, _under_, a | b" in text
    assert "- not a list" in text and "1. not a list either" in text
    assert "a < b, x * y, _under_, a | b, [c](javascript:alert(10))" in text   # the description, in its cell
    assert "<code>x | &lt;b&gt;</code> in code &amp;amp; &amp;lt;script&amp;gt;" in out   # code stays code
    assert "<td>x</td>" in out and "<td>y</td>" in out     # names and the table's rows in their cells
    assert "big: x = 3 GB (<script>alert(12)</script> _under_)" in text      # a scenario and its description
    assert "| x | 2 | GB |" in md and "x * y" in md          # and the Markdown itself stays readable


def test_names_with_underscores_are_written_plainly(tmp_path):
    md, out = rendered(tmp_path, "kv_state = 2 GB\nt_load_p95 = kv_state * 2\n")
    assert "| kv_state |" in md and "| t_load_p95 |" in md
    assert "<td>kv_state</td>" in out and "<em>" not in out
