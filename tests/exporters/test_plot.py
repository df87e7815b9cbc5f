"""The charts people read: one panel per unit, a log axis past two decades,
integer histograms on integer bins, a tornado in two colours with its ends'
input values and no empty rows.  Figures are real matplotlib figures, read
back from their artists."""
from __future__ import annotations

import numpy as np
import pytest

import ifr
from ifr.exporters.plot import histogram_figure, integer_edges, table_figure, tornado_figure
from ifr.queries.sensitivity import sensitivity


def _model(tmp_path, text: str):
    f = tmp_path / "m.ifr"
    f.write_text(text, encoding="utf-8")
    return ifr.load(str(f))


ROOFLINE = """\
batch  = 8
bytes  = 16 GB
flops  = 2 TFLOP
bw     = 3.35 TB/s
peak   = 990 TFLOP/s
t_mem  = bytes / bw in ms
t_comp = batch * flops / peak in ms
need   = batch * 2 GB in GB
table roof: vary batch over [1, 8, 64, 512, 4096] show t_mem, t_comp, need
"""


def test_cells_of_one_unit_share_a_panel(tmp_path):
    table = _model(tmp_path, ROOFLINE).table("roof")
    fig, plt = table_figure(table)
    try:
        panels = [ax for ax in fig.axes if ax.lines]
        assert len(panels) == 2                      # ms and GB, not three panels
        assert sorted(line.get_label() for line in panels[0].lines) == ["t_comp", "t_mem"]
        assert [line.get_label() for line in panels[1].lines][0].startswith("_")  # alone: no legend label
        assert panels[0].get_ylabel() == "ms" and panels[1].get_ylabel() == "need [GB]"
        # t_comp = batch * 2 TFLOP / 990 TFLOP/s: 2.02 ms at 1, 8276 ms at 4096; t_mem = 16 GB / 3.35 TB/s
        t_comp = next(line for line in panels[0].lines if line.get_label() == "t_comp")
        assert t_comp.get_ydata()[0] == pytest.approx(2 / 990 * 1000)
        assert t_comp.get_ydata()[-1] == pytest.approx(4096 * 2 / 990 * 1000)
    finally:
        plt.close(fig)


def test_a_panel_spanning_more_than_two_decades_is_logarithmic(tmp_path):
    table = _model(tmp_path, ROOFLINE).table("roof")
    fig, plt = table_figure(table)
    try:
        ms, gb = [ax for ax in fig.axes if ax.lines]
        assert ms.get_yscale() == "log"         # 2.02 ms to 8276 ms: more than three decades
        assert gb.get_yscale() == "log"         # 2 GB to 8192 GB
    finally:
        plt.close(fig)
    narrow = _model(tmp_path, "x = 1 GB\nt = x / (10 GB/s) in ms\ntable n: vary x over [1 GB, 5 GB, 50 GB] show t\n")
    fig, plt = table_figure(narrow.table("n"))
    try:
        assert fig.axes[0].get_yscale() == "linear"   # 100 to 5000 ms: 1.7 decades
    finally:
        plt.close(fig)


def test_bars_of_a_categorical_table_on_a_log_axis(tmp_path):
    text = ("use hardware: a100, h100\ngpu = a100\nbw = gpu.hbm_bandwidth\nt = 1 GB / bw in ms\n"
            "small = 1.5 ms * bw / (1 TB/s)\nbig = 986 ms\n"
            "table g: vary gpu over [a100, h100] show small, big\n")
    fig, plt = table_figure(_model(tmp_path, text).table("g"))
    try:
        ax = fig.axes[0]
        assert len(fig.axes) == 1 and len(ax.patches) == 4      # two cells of one unit, grouped bars
        assert ax.get_yscale() == "log"
        assert sorted(t.get_text() for t in ax.get_legend().get_texts()) == ["big", "small"]
    finally:
        plt.close(fig)


def test_integer_samples_get_integer_bins():
    samples = np.random.default_rng(1).poisson(6.0, 5000).astype(float)
    edges = integer_edges(samples)
    assert edges is not None
    assert np.allclose(edges - 0.5, np.round(edges - 0.5))       # edges halfway between integers
    assert np.allclose(np.diff(edges), 1)
    counts, _ = np.histogram(samples, bins=edges)
    assert counts.sum() == samples.size
    for k in range(int(samples.min()), int(samples.max()) + 1):     # one bar per integer, exactly its count
        assert counts[k - int(samples.min())] == np.count_nonzero(samples == k)
    wide = np.arange(0.0, 1000.0)
    wide_edges = integer_edges(wide)
    assert np.diff(wide_edges)[0] == 17 and np.histogram(wide, wide_edges)[0].sum() == 1000
    assert integer_edges(samples + 0.25) is None


def test_the_histogram_of_an_integer_cell(tmp_path):
    model = _model(tmp_path, "n = 3 to 9\nk = round(n)\n")
    cid = model.cell_id("k")
    fig, plt = histogram_figure("k", "", model.samples(cid), model.summary(cid))
    try:
        ax = fig.axes[0]
        (stairs,) = [p for p in ax.patches]
        edges = stairs.get_data().edges
        samples = model.samples(cid)
        assert np.allclose(np.diff(edges), 1) and edges[0] == pytest.approx(samples.min() - 0.5)
        assert stairs.get_data().values.sum() == samples.size
        assert not any(ch.isdigit() for ch in ax.get_title())    # the numbers are in the legend
        assert any("median" in t.get_text() for t in fig.legends[0].get_texts())
    finally:
        plt.close(fig)


def test_the_tornado_has_two_colours_a_legend_and_its_ends_values(tmp_path):
    model = _model(tmp_path, "size = 1 GB\nlink = 25 GB/s\nunused = 3 GB\nt = size / link + unused * 0 / link in ms\n")
    result = sensitivity(model, "t")
    fig, plt = tornado_figure(result)
    try:
        ax = fig.axes[0]
        colours = {tuple(round(c, 3) for c in bar.get_facecolor()) for bar in ax.patches}
        assert len(colours) == 2
        assert [t.get_text() for t in fig.legends[0].get_texts()] == ["input at its low end",
                                                                       "input at its high end"]
        labels = sorted(t.get_text() for t in ax.texts)
        # size and link 10% down and up: 0.9 and 1.1 GB, 22.5 and 27.5 GB/s
        assert labels == ["0.9 GB", "1.1 GB", "22.5 GB/s", "27.5 GB/s"]
        assert [t.get_text() for t in ax.get_yticklabels()] == ["link", "size"] or \
            [t.get_text() for t in ax.get_yticklabels()] == ["size", "link"]
        assert "unused" in " ".join(t.get_text() for t in fig.texts)   # named, not an empty row
    finally:
        plt.close(fig)


def test_a_condition_has_a_panel_of_its_own_that_reads_false_and_true(tmp_path):
    table = _model(tmp_path, "batch = 64\nkv = batch * 0.4 GB\nfits = kv + 16 GB <= 80 GB\nshare = batch / 128\n"
                             "table t: vary batch over [16, 64, 160, 200] show share, fits\n").table("t")
    fig, plt = table_figure(table)
    try:
        panels = [ax for ax in fig.axes if ax.lines]
        assert len(panels) == 2                 # the unitless share apart from the condition
        share, fits = panels
        assert [t.get_text() for t in fits.get_yticklabels()] == ["false", "true"]
        # 16 + 0.4 * batch GB fits in 80 GB up to batch 160: true, true, true, false
        assert list(fits.lines[0].get_ydata()) == [1, 1, 1, 0]
        assert "true" not in [t.get_text() for t in share.get_yticklabels()]
    finally:
        plt.close(fig)
