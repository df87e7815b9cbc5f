"""Uncertain inputs: distributions, statistics, reproducible Monte Carlo.

Expected values come from an independent computation: numpy (or the
distribution's closed form) with 10^6 or more samples, so the tolerances
are a few times the spread of a 10,000-sample estimate.
"""
from __future__ import annotations

import json
import re
import textwrap

import numpy as np
import pytest
from helpers import bound_graph, error, errors
from scipy import stats

import ifr
from ifr.cli import main

GIB = 2 ** 30
KV_TIER = """\
    ssd_bw = 4 GB/s to 6.5 GB/s       # SSD read rate
    hit    = uniform(30%, 70%)         # prefix cache hit rate
    t_re   = normal(400 ms, 40 ms)     # recompute time
    tri    = triangular(1 s, 2 s, 6 s)
    prefix = 2 GiB
    t_load = prefix / ssd_bw in ms
    t_exp  = hit * t_load + (1 - hit) * t_re in ms
    p95    = percentile(t_load, 95)
    p95b   = percentile(t_load, 95%)
    win    = prob(t_load < t_re)
    m      = mean(t_exp)
    s      = sd(t_re)
    med    = median(t_load)
"""


def load(tmp_path, text=KV_TIER, name="kv.ifr", samples=None, seed=0):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    analysis = ifr.analyse(path)
    assert not analysis.errors, analysis.errors
    return analysis.evaluate(samples=samples, seed=seed)


@pytest.fixture(scope="module")
def reference():
    """The same quantities from 4 million numpy samples, written from the definitions."""
    rng = np.random.default_rng(12345)
    n = 4_000_000
    z95 = stats.norm.ppf(0.95)
    mu, sigma = (np.log(4e9) + np.log(6.5e9)) / 2, (np.log(6.5e9) - np.log(4e9)) / (2 * z95)
    ssd = rng.lognormal(mu, sigma, n)
    hit = rng.uniform(0.3, 0.7, n)
    t_re = rng.normal(0.4, 0.04, n)
    t_load = 2 * GIB * 8 / (ssd * 8)
    t_exp = hit * t_load + (1 - hit) * t_re
    return {"ssd_p5": np.percentile(ssd, 5), "ssd_p95": np.percentile(ssd, 95),
            "t_load_p95": np.percentile(t_load, 95), "t_load_median": np.median(t_load),
            "win": np.mean(t_load < t_re), "t_exp_mean": np.mean(t_exp), "t_exp_p5": np.percentile(t_exp, 5),
            "t_exp_p95": np.percentile(t_exp, 95)}


def test_a_range_is_a_lognormal_with_its_ends_at_the_5th_and_95th_percentiles(tmp_path, reference):
    m = load(tmp_path)
    s = m.summary("ssd_bw")
    assert m.units[m.cell_id("ssd_bw")] == "GB/s"
    assert s.p5 == pytest.approx(4.0, rel=0.015) and s.p5 == pytest.approx(reference["ssd_p5"] / 1e9, rel=0.015)
    assert s.p95 == pytest.approx(6.5, rel=0.015)
    assert s.median == pytest.approx(np.sqrt(4 * 6.5), rel=0.01)


def test_statistics_agree_with_an_independent_computation(tmp_path, reference):
    m = load(tmp_path)
    assert m.value("p95") == pytest.approx(reference["t_load_p95"] * 1e3, rel=0.015)
    assert m.value("p95b") == m.value("p95")            # 95% means the 95th percentile too
    assert m.value("med") == pytest.approx(reference["t_load_median"] * 1e3, rel=0.01)
    assert m.value("win") == pytest.approx(reference["win"], abs=0.02)
    assert m.value("m") == pytest.approx(reference["t_exp_mean"] * 1e3, rel=0.01)
    assert m.value("s") == pytest.approx(40, rel=0.05)
    t_exp = m.summary("t_exp")
    assert t_exp.p5 == pytest.approx(reference["t_exp_p5"] * 1e3, rel=0.015)
    assert t_exp.p95 == pytest.approx(reference["t_exp_p95"] * 1e3, rel=0.015)
    # the closed forms of the other distributions
    tri = m.summary("tri")
    assert tri.mean == pytest.approx((1 + 2 + 6) / 3, rel=0.02)
    assert m.summary("hit").mean == pytest.approx(50, rel=0.01)
    assert m.summary("t_re").median == pytest.approx(400, rel=0.01)


def test_the_same_numbers_on_every_run_and_consistent_ones_with_another_seed(tmp_path):
    a, b = load(tmp_path), load(tmp_path)
    assert np.array_equal(a.values["t_exp"], b.values["t_exp"])
    c = load(tmp_path, seed=7)
    assert not np.array_equal(a.values["t_exp"], c.values["t_exp"])
    assert c.value("p95") == pytest.approx(a.value("p95"), rel=0.02)
    assert c.value("win") == pytest.approx(a.value("win"), abs=0.03)


def test_more_samples_narrow_the_estimate(tmp_path, reference):
    m = load(tmp_path, samples=400_000)
    assert m.value("win") == pytest.approx(reference["win"], abs=0.004)
    assert m.value("p95") == pytest.approx(reference["t_load_p95"] * 1e3, rel=0.003)


def test_adding_an_input_does_not_reshuffle_the_others(tmp_path):
    before = load(tmp_path)
    after = load(tmp_path, "extra = uniform(1 s, 2 s)\n" + textwrap.dedent(KV_TIER), name="kv2.ifr")
    assert np.array_equal(before.values["ssd_bw"], after.values["ssd_bw"])
    assert np.array_equal(before.values["t_exp"], after.values["t_exp"])


def test_independent_inputs_are_uncorrelated(tmp_path):
    m = load(tmp_path)
    assert abs(np.corrcoef(m.values["ssd_bw"], m.values["t_re"])[0, 1]) < 0.05


def test_a_certain_model_stays_certain_and_statistics_of_a_number_are_the_number(tmp_path):
    m = load(tmp_path, "x = 3 GB\ny = mean(x) + percentile(x, 90)\nz = sd(x)\n", name="c.ifr")
    assert m.value("y") == 6 and m.value("z") == 0
    assert not m.is_uncertain("y") and m.summary("y") is None


def test_mistakes(tmp_path):
    e = error(tmp_path, "a = 4 GB/s to 6 s\n")
    assert e.code == "unit-mismatch" and "two ends of a range need one dimension" in e.message
    e = error(tmp_path, "x = 1 s to 2 s\np = percentile(x, 95 ms)\n")
    assert e.code == "unit-mismatch"
    e = error(tmp_path, "x = 1 s to 2 s\np = prob(x)\n")
    assert e.code == "not-a-condition"
    e = error(tmp_path, "x = -1 s to 2 s\n")
    assert e.code == "bad-argument" and "above zero" in e.message
    e = error(tmp_path, "x = 2 s to 1 s\n")
    assert "smaller end first" in e.hint
    e = error(tmp_path, "x = uniform(1 s)\n")
    assert e.code == "wrong-arity" and "lo, hi" in e.message
    e = error(tmp_path, "x = 1 s to 2 s\np = percentile(x, 101)\n")
    assert e.code == "bad-argument" and "from 0 to 1 (a fraction) or above 1 up to 100 (in percent)" in e.message
    e = error(tmp_path, "x = uniform(-1, 1)\ny = sqrt(x)\n")
    assert e.code == "not-a-number" and "% of the samples" in e.message


def test_named_parameters(tmp_path):
    m = load(tmp_path, "x = normal(sd=1 s, mean=10 s)\n", name="n.ifr")
    assert m.summary("x").mean == pytest.approx(10, rel=0.01)


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_run_shows_the_median_and_the_range_json_the_statistics(tmp_path, capsys):
    path = tmp_path / "kv.ifr"
    path.write_text(textwrap.dedent(KV_TIER), encoding="utf-8")
    code, out, _ = run(capsys, "run", path)
    assert code == 0
    line = next(x for x in out.splitlines() if x.strip().startswith("t_load"))
    assert "[" in line and " to " in line
    assert "5th to 95th percentile of" not in out or "10,000" in out
    code, out, _ = run(capsys, "run", path, "--format", "json")
    cells = {c["name"]: c for c in json.loads(out)["cells"]}
    t = cells["t_load"]
    assert t["uncertain"] and t["value"] == t["median"]
    assert t["p5"] < t["median"] < t["p95"] and t["sd"] > 0 and t["mean"] > 0
    assert "uncertain" not in cells["prefix"]
    code, out2, _ = run(capsys, "run", path, "--format", "json", "--seed", "5", "--samples", "2000")
    assert json.loads(out2)["cells"] != json.loads(out)["cells"]


def test_an_uncertain_condition_reads_how_often_it_holds(tmp_path, capsys, reference):
    """Its value, the median of true/false samples, would read 0 or 1: run,
    explain and the editor say how often it holds instead."""
    path = tmp_path / "kv.ifr"
    path.write_text(textwrap.dedent(KV_TIER) + "faster = t_load < t_re\n", encoding="utf-8")
    code, out, _ = run(capsys, "run", path)
    assert code == 0
    line = next(x for x in out.splitlines() if x.strip().startswith("faster"))
    shown = float(line.split("true in ")[1].split("%")[0]) / 100
    assert shown == pytest.approx(reference["win"], abs=0.015)     # 3 standard errors of 10,000 samples
    assert line.split()[1:3] == ["true", "in"] and line.split()[4:6] == ["of", "samples"]
    code, out, _ = run(capsys, "run", path, "--format", "json")
    cell = next(c for c in json.loads(out)["cells"] if c["name"] == "faster")
    assert cell["uncertain"] and cell["mean"] == pytest.approx(shown, abs=5e-5)
    code, out, _ = run(capsys, "explain", path, "faster")
    assert f"value:       true in {line.split('true in ')[1].split('%')[0]}% of samples" in out
    from ifr.lsp.analysis import analyse as analyse_for_editor
    cells = {c.name: c for c in analyse_for_editor(str(path), path.read_text(), {}).cells.values()}
    assert cells["faster"].value_text == f"true in {line.split('true in ')[1].split('%')[0]}% of samples"
    for command in ("hist", "sensitivity"):     # a number's tools: each says why not, rather than show 0s and 1s
        code, out, err = run(capsys, command, path, "faster")
        assert code == 2 and "error[condition]" in err and "Traceback" not in err
    from openpyxl import load_workbook
    ifr.load(path).export(tmp_path / "kv.xlsx")
    sheet = load_workbook(tmp_path / "kv.xlsx")["Model"]
    row = next(r for r in sheet.iter_rows() if r[0].value == "faster" and r[1].comment is not None)
    assert f",{cell['mean']!r},NA())" in row[1].value      # the share, guarded against a stale input
    assert row[1].comment.text.startswith("Uncertain: how often it holds") and "median" not in row[1].comment.text


def test_a_table_of_an_uncertain_condition_shows_how_often_it_holds(tmp_path, capsys, reference):
    path = tmp_path / "kv.ifr"
    path.write_text(textwrap.dedent(KV_TIER) + "faster = t_load < t_re\n"
                    "table by_prefix: vary prefix over [2 GiB, 4 GiB] show t_load, faster\n", encoding="utf-8")
    code, out, _ = run(capsys, "table", path, "by_prefix", "--format", "json")
    assert code == 0
    table = json.loads(out)
    at = table["columns"].index("prob(faster)")
    shares = [row[at] for row in table["rows"]]
    assert shares[0] == pytest.approx(reference["win"], abs=0.015)    # 3 standard errors of 10,000 samples
    assert 0 <= shares[1] < shares[0] / 10      # twice the prefix: a load faster than a recompute is rare
    ifr.load(path).export(tmp_path / "kv.xlsx")     # the table's sheet too
    from openpyxl import load_workbook
    from openpyxl.utils import get_column_letter
    sheet = load_workbook(tmp_path / "kv.xlsx")["by_prefix"]
    texts = [str(c.value) for row in sheet.iter_rows(max_row=6) for c in row if c.value is not None]
    assert "prob(faster)" in texts and any("how often it holds" in t for t in texts)
    # the note is printed whole: its row holds its wrapped lines, the print area its columns
    from openpyxl.utils import range_boundaries
    note = next(r for r in sheet.merged_cells.ranges if r.min_row == 2)
    width = sum(sheet.column_dimensions[get_column_letter(c)].width or 8.43
                for c in range(note.min_col, note.max_col + 1))
    lines = -(-len(sheet.cell(2, 1).value) // int(width * 1.35))
    assert sheet.row_dimensions[2].height >= 13 * lines - 1     # (a height is kept in whole pixels)
    assert range_boundaries(sheet.print_area.split("!")[1].replace("$", ""))[2] >= note.max_col


def test_a_first_that_some_samples_miss_says_how_many(tmp_path, capsys):
    """`first(n for n in 1..6 if n * 1 GB/s > ssd)` has no n for the samples of
    ssd above 6 GB/s: the error says in what share of them, here the chance
    of a lognormal with 5th and 95th percentiles 4 and 6.5 GB/s exceeding 6."""
    path = tmp_path / "f.ifr"
    path.write_text("ssd = 4 GB/s to 6.5 GB/s\nn_fit = first(n for n in 1..6 if n * 1 GB/s > ssd)\n"
                    "n_all = first(n for n in 1..9 if n * 1 GB/s > ssd)\n", encoding="utf-8")
    code, out, err = run(capsys, "run", path)
    assert code == 2 and err.count("error[no-value]") == 1
    z95 = stats.norm.ppf(0.95)
    mu, sigma = (np.log(4) + np.log(6.5)) / 2, (np.log(6.5) - np.log(4)) / (2 * z95)
    expected = stats.norm.sf((np.log(6) - mu) / sigma)           # about 13.5%
    said = float(re.search(r"in ([\d.]+)% of the samples", err)[1]) / 100
    assert said == pytest.approx(expected, abs=0.011)             # 3 standard errors of 10,000 samples
    assert "n_all" in out and "#ERROR" not in next(x for x in out.splitlines() if x.strip().startswith("n_all"))


def test_checks_of_statistics_and_a_check_of_an_uncertain_value(tmp_path, capsys):
    path = tmp_path / "kv.ifr"
    path.write_text(textwrap.dedent(KV_TIER) + "check percentile(t_load, 95) < 600 ms\n"
                    "check prob(t_load < t_re) = 0.37 within 0.03\n", encoding="utf-8")
    code, out, _ = run(capsys, "check", path)
    assert code == 0, out
    path.write_text(textwrap.dedent(KV_TIER) + "check t_load = 400 ms\n", encoding="utf-8")
    code, out, _ = run(capsys, "check", path)
    assert code == 2 and "uncertain" in out


def test_set_takes_one_number(tmp_path, capsys):
    path = tmp_path / "kv.ifr"
    path.write_text(textwrap.dedent(KV_TIER), encoding="utf-8")
    code, out, err = run(capsys, "run", path, "--set", "ssd_bw=5 GB/s")
    assert code == 0
    assert not any(x.strip().startswith("t_load") and "[" in x for x in out.splitlines())
    code, _, err = run(capsys, "run", path, "--set", "prefix=1 GiB to 2 GiB")
    assert code == 2 and "not a distribution" in err


def test_a_table_over_uncertain_cells_shows_median_and_range(tmp_path):
    m = load(tmp_path, KV_TIER + "table by_prefix: vary prefix over [1 GiB, 2 GiB] show t_load\n", name="t.ifr")
    t = m.table("by_prefix")
    assert t.columns == ["prefix", "t_load", "t_load p5", "t_load p95"]
    row2 = t.rows[1]
    assert row2[1] == pytest.approx(m.value("med"), rel=1e-9)       # the same draws as the model
    assert row2[2] < row2[1] < row2[3]
    assert t.rows[0][1] == pytest.approx(row2[1] / 2, rel=1e-9)


def test_errors_are_all_reported(tmp_path):
    found = errors(tmp_path, "a = 1 GB to 2 s\nb = uniform(1 s)\n")
    assert len(found) == 2


def test_a_threshold_solved_with_uncertain_inputs_is_uncertain(tmp_path):
    m = load(tmp_path, """\
        prefix  = 2 GiB
        t_re    = 300 ms to 500 ms
        bw_even = solve link: prefix / link = t_re in GB/s
        link    = 5 GB/s
        p_ok    = prob(link > bw_even)
    """, name="s.ifr")
    mu, sigma = np.log(0.3 * 0.5) / 2, np.log(0.5 / 0.3) / (2 * stats.norm.ppf(0.95))
    assert m.value("bw_even") == pytest.approx(2 * GIB / np.exp(mu) / 1e9, rel=0.01)
    s = m.summary("bw_even")
    assert s.p5 == pytest.approx(2 * GIB / 0.5 / 1e9, rel=0.015) and s.p95 == pytest.approx(2 * GIB / 0.3 / 1e9, rel=0.015)
    # link > prefix / t_re  <=>  t_re > prefix / link
    expected = stats.norm.sf((np.log(2 * GIB / 5e9) - mu) / sigma)
    assert m.value("p_ok") == pytest.approx(expected, abs=0.02)
    assert m.explain("bw_even")["closed_form"] is not None


def test_sensitivity_ranks_inputs_as_an_independent_computation_does(tmp_path, capsys):
    text = """\
        a = 1 GB to 4 GB
        b = uniform(2 s, 3 s)
        c = normal(10 GB/s, 1 GB/s)
        y = a / c + b / 10 in s
    """
    m = load(tmp_path, text, name="three.ifr")
    from ifr.queries.sensitivity import sensitivity
    result = sensitivity(m, "y")
    # independently: the ends are the distributions' 5th and 95th percentiles, the rest at medians
    z = stats.norm.ppf(0.95)
    ends = {"a": (1e9, 4e9), "b": (2 + 0.05, 2 + 0.95), "c": (10e9 - z * 1e9, 10e9 + z * 1e9)}
    mid = {"a": 2e9, "b": 2.5, "c": 10e9}

    def y(**v):
        x = dict(mid, **v)
        return x["a"] / x["c"] + x["b"] / 10

    swing = {k: abs(y(**{k: hi}) - y(**{k: lo})) for k, (lo, hi) in ends.items()}
    assert [s.input for s in result.swings] == sorted(swing, key=swing.get, reverse=True)
    for s in result.swings:
        assert s.swing == pytest.approx(swing[s.input], rel=0.03)
    by = {s.input: s for s in result.swings}
    assert by["a"].elasticity == pytest.approx(mid["a"] / mid["c"] / y(), rel=0.02)
    assert by["c"].elasticity == pytest.approx(-mid["a"] / mid["c"] / y(), rel=0.02)
    assert by["a"].elasticity_from == "symbolic"
    path = tmp_path / "three.ifr"
    code = main(["sensitivity", str(path), "y", "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and [i["input"] for i in out["inputs"]] == [s.input for s in result.swings]


def test_sensitivity_of_a_certain_model_moves_each_input_ten_percent(tmp_path):
    m = load(tmp_path, "x = 2 s\nw = 3 s^2\nz = 5 s\ny = x * x + w in s^2\n", name="c.ifr")
    from ifr.queries.sensitivity import sensitivity
    result = sensitivity(m, "y")
    assert [s.input for s in result.swings] == ["x", "w"]             # z does not reach y
    assert result.swings[0].swing == pytest.approx(2.2 ** 2 - 1.8 ** 2)
    assert result.swings[0].elasticity == pytest.approx(2 * 4 / 7)


def test_a_solve_that_reads_no_uncertain_cell_stays_one_number(tmp_path):
    m = load(tmp_path, """\
        noise   = uniform(1 s, 2 s)
        prefix  = 2 GiB
        t_re    = 400 ms
        bw_even = solve link: prefix / link = t_re in GB/s
        link    = 5 GB/s
        later   = noise * 2
    """, name="quiet.ifr")
    assert not m.is_uncertain("bw_even") and m.is_uncertain("later")
    assert m.value("bw_even") == pytest.approx(2 * GIB / 0.4 / 1e9)


def test_the_editor_shows_an_uncertain_cell_with_its_range(tmp_path):
    from ifr.lsp.analysis import analyse
    path = tmp_path / "kv.ifr"
    text = textwrap.dedent(KV_TIER)
    path.write_text(text, encoding="utf-8")
    result = analyse(str(path), text, {})
    cells = {c.name: c for c in result.cells.values()}
    assert "90%:" in cells["t_load"].value_text and "90%:" not in cells["prefix"].value_text
    m = load(tmp_path)
    assert cells["p95"].value == pytest.approx(m.value("p95"))       # a statistic, as the command line has it
    assert cells["win"].value == pytest.approx(m.value("win"))


def test_json_and_markdown_exports_give_the_statistics(tmp_path):
    m = load(tmp_path, KV_TIER + "table by_prefix: vary prefix over [1 GiB, 2 GiB] show t_load\n", name="e.ifr")
    m.export(tmp_path / "e.json")
    doc = json.loads((tmp_path / "e.json").read_text())
    t_load = next(c for c in doc["cells"] if c["name"] == "t_load")
    stats = m.summary("t_load")
    assert t_load["uncertain"] and t_load["value"] == pytest.approx(stats.median)
    assert t_load["p5"] == pytest.approx(stats.p5) and t_load["p95"] == pytest.approx(stats.p95)
    assert t_load["si"] == pytest.approx(stats.median / 1e3)
    assert doc["tables"][0]["columns"] == ["prefix", "t_load", "t_load p5", "t_load p95"]
    m.export(tmp_path / "e.md")
    md = (tmp_path / "e.md").read_text()
    from ifr.display import format_number
    assert f"| t_load | {format_number(stats.median)} ({format_number(stats.p5)} to {format_number(stats.p95)}) |" in md


def test_a_scenario_may_make_an_input_uncertain(tmp_path):
    m = load(tmp_path, """\
        ssd    = 5 GB/s
        prefix = 2 GiB
        t_load = prefix / ssd in ms
        p95    = percentile(t_load, 95)
        table by_ssd: vary ssd over [4 GB/s, 8 GB/s] show p95
        scenario wide: ssd = 4 GB/s to 6.5 GB/s
        wide_p95 = wide.p95
    """, name="sc.ifr")
    assert m.value("p95") == pytest.approx(2 * GIB / 5e9 * 1e3)           # certain in the base case
    assert [r[1] for r in m.table("by_ssd").rows] == pytest.approx([2 * GIB / 4e9 * 1e3, 2 * GIB / 8e9 * 1e3])
    wide = m.scenario("wide")
    assert wide.is_uncertain("t_load") and not wide.is_uncertain("p95")
    assert wide.value("p95") == pytest.approx(2 * GIB / 4e9 * 1e3, rel=0.015)   # at the 5th percentile of ssd
    assert m.value("wide_p95") == pytest.approx(wide.value("p95"))


def test_a_solve_through_a_statistic_is_one_number(tmp_path):
    m = load(tmp_path, """\
        noise  = 1 ms to 4 ms
        ssd    = 5 GB/s
        prefix = 2 GiB
        t      = prefix / ssd + median(noise)
        target = solve ssd: t = 1 s in GB/s
    """, name="st.ifr")
    assert not m.is_uncertain("target")
    assert m.value("target") == pytest.approx(2 * GIB / (1 - m.summary("noise").median / 1e3) / 1e9, rel=1e-6)


def test_an_uncertain_input_with_other_parameters_keeps_its_draws(tmp_path):
    m = load(tmp_path)
    wider = m.with_distribution("ssd_bw", "2 GB/s", "13 GB/s")
    s = wider.summary("ssd_bw")
    assert s.p5 == pytest.approx(2, rel=0.04) and s.p95 == pytest.approx(13, rel=0.04)   # ~3 sampling SEs
    # the same standard draws: each sample keeps its rank
    assert np.array_equal(np.argsort(wider.values["ssd_bw"]), np.argsort(m.values["ssd_bw"]))
    assert wider.summary("t_load").median == pytest.approx(2 * GIB / np.sqrt(2e9 * 13e9) * 1e3, rel=0.01)
    with pytest.raises(ifr.IfrError):
        m.with_distribution("prefix", "1 GiB", "2 GiB")
    with pytest.raises(ifr.IfrError):
        m.with_distribution("ssd_bw", "2 s", "3 s")


def test_a_share_of_samples_never_rounds_to_none_or_all():
    """99.995% of 100,000 samples is not all of them: a share that is neither
    none nor all never reads 0% or 100%, in the terminal or in the workbook."""
    from ifr.display import percent_text, share_text
    from ifr.exporters.cells import Share
    from ifr.exporters.xlsx.style import number_format
    assert share_text(0.3725) == "true in 37.25% of samples"
    assert percent_text(0.99995) == "99.995%" and percent_text(1e-5) == "0.001%"
    assert percent_text(1.0) == "100%" and percent_text(0.0) == "0%"
    assert number_format(Share(0.99995)) == "0.000%" and number_format(Share(0.3725)) == "0.00%"


def test_ifr_solve_of_an_equation_that_reads_an_uncertain_cell(tmp_path, capsys, reference):
    """`ifr solve` of an equation through an uncertain cell is solved for each
    sample (it stopped with an internal error): the median and where 90% of
    the solutions fall. prefix = 500 ms * ssd_bw, so its 5th and 95th
    percentiles are 500 ms times ssd_bw's, 4 and 6.5 GB/s by definition."""
    path = tmp_path / "kv.ifr"
    path.write_text(textwrap.dedent(KV_TIER), encoding="utf-8")
    code, out, err = run(capsys, "solve", path, "prefix", "--for", "t_load = 500 ms")
    assert code == 0 and "Traceback" not in err
    line = out.splitlines()[0]
    assert line.startswith("prefix = ") and line.split()[3] == "GiB"
    median, low = float(line.split()[2]), float(line.split("[")[1].split()[0])
    high = float(line.split(" to ")[1].split()[0])
    assert low == pytest.approx(0.5 * 4e9 / GIB, rel=0.02) and high == pytest.approx(0.5 * 6.5e9 / GIB, rel=0.02)
    assert median == pytest.approx(0.5 * np.sqrt(4e9 * 6.5e9) / GIB, rel=0.02)   # a lognormal's median


def test_a_solve_that_fails_for_a_sample_says_which(tmp_path):
    """ceil(a * 400 / per) = 8 holds on a stretch of a for every sample of
    per: the error is the first sample's, and says it is one sample's; its
    stretch runs from 7/400 to 8/400 of that sample's per."""
    e = error(tmp_path, "per = 1800 token/s to 2600 token/s\na = 40 req/s\n"
                        "n = ceil(a * 400 token/req / per)\ngoal = solve a on 1 req/s..100 req/s: n = 8\n")
    assert e.code == "several-solutions" and e.message.endswith("(in Monte Carlo sample 1 of 10,000)")
    lo, hi = (float(x.split()[0]) for x in e.message.split(" from ")[1].split(" (")[0].split(" to "))
    assert hi / lo == pytest.approx(8 / 7, rel=1e-3)


def test_the_uncertainty_analysis_returns_what_it_found_and_leaves_the_nodes_alone(tmp_path):
    from ifr.evaluation.uncertain import annotate
    from ifr.semantics import ir
    path = tmp_path / "m.ifr"
    path.write_text("a = 1 s to 2 s\nb = a * 2 + uniform(1 s, 2 s)\nc = 3 s\nm = mean(b)\n"
                    "check percentile(b, 95) < 10 s\n", encoding="utf-8")
    graph = bound_graph(path)
    found = annotate(graph)
    nodes = [n for cid in graph.order for n in ir.walk(graph.cells[cid].expr)] + list(ir.walk(graph.checks[0].expr))
    dists, stats_ = [n for n in nodes if isinstance(n, ir.Dist)], [n for n in nodes if isinstance(n, ir.Stat)]
    assert found.cells == {"a", "b"} and graph.uncertain == set()
    assert sorted(stream for _n, stream in found.streams.values()) == ["a", "b"]
    assert [over for _n, over in found.over_samples.values()] == [True, True]
    assert not any(n.stream for n in dists) and not any(n.over_samples for n in stats_)
    found.record(graph)
    assert {n.stream for n in dists} == {"a", "b"} and all(n.over_samples for n in stats_)
    assert graph.uncertain == {"a", "b"}


def test_a_comprehension_that_some_samples_keep_no_item_of_says_so(tmp_path):
    """max over a condition no item meets in some samples has no value there: the error says
    which comprehension and in what share (h100's price is uniform on 2..4: under 3 half the
    time), not "not a number"; where a branch not taken holds it, the cell has its value."""
    text = ("h100 = { hbm = 80 GB, price = uniform(2, 4) }\n"
            "b200 = { hbm = 192 GB, price = 5 }\n"
            "gpus = [h100, b200]\n"
            "cheap = max(g.hbm for g in gpus if g.price < 3) in GB\n"
            "k = uniform(1, 10)\n"
            "guarded = if k < 4 then max(i * 1 GB for i in 1..4 if i > k) else 0 GB\n")
    path = tmp_path / "m.ifr"
    path.write_text(text, encoding="utf-8")
    model = ifr.analyse(path).evaluate()
    failed = model.errors[model.cell_id("cheap")]
    assert failed.code == "no-value"
    share = float(re.search(r"in ([\d.]+)% of the samples", failed.message).group(1)) / 100
    assert abs(share - 0.5) < 0.02
    assert "the condition of `max(g.hbm for g in gpus if g.price < 3)` keeps no item" in failed.message
    assert "add to `gpus` an item that meets it" in failed.error.hint
    samples = model.values[model.cell_id("guarded")]
    k = model.values[model.cell_id("k")]
    assert model.cell_id("guarded") not in model.errors
    assert np.array_equal(samples, np.where(k < 4, 4 * 8e9, 0.0))   # 4 GB (i = 4 > k; in bits) below 4, else 0
