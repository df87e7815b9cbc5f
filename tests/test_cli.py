"""The command line's outputs: JSON shapes, tables, plots, overrides, exit codes."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ifr.cli import main

ROOT = Path(__file__).resolve().parent.parent
HANDOFF = str(ROOT / "models" / "pd_handoff.ifr")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_run_json_lists_every_cell(capsys):
    code, out, _ = run(capsys, "run", HANDOFF, "--format", "json")
    assert code == 0
    cells = {c["name"]: c for c in json.loads(out)["cells"]}
    t = cells["t_handoff"]
    assert set(t) >= {"name", "value", "unit", "kind", "formula", "description"}
    assert t["unit"] == "ms" and t["value"] == pytest.approx(48.3, abs=0.05)
    assert t["kind"] == "formula" and t["formula"] == "kv_state / link"
    assert cells["context"]["kind"] == "input"
    assert cells["alpha_gqa"]["kind"] == "solve"


def test_set_overrides_and_marks_the_cell(capsys):
    code, out, _ = run(capsys, "run", HANDOFF, "--format", "json", "--set", "link=50GB/s")
    cells = {c["name"]: c for c in json.loads(out)["cells"]}
    assert cells["link"]["kind"] == "override"
    assert cells["t_handoff"]["value"] == pytest.approx(24.16, abs=0.01)
    assert cells["alpha_gqa"]["value"] == pytest.approx(340, abs=0.5)  # 000 §3: 340 µs at 50 GB/s


def test_scenario(capsys):
    code, out, _ = run(capsys, "run", HANDOFF, "--format", "json", "--scenario", "fast_link")
    cells = {c["name"]: c for c in json.loads(out)["cells"]}
    assert cells["alpha_mla"]["value"] == pytest.approx(162, abs=0.5)  # 000 §3


def test_unknown_scenario_is_a_usage_error(capsys):
    code, _, err = run(capsys, "run", HANDOFF, "--scenario", "fats_link")
    assert code == 2 and "did you mean fast_link?" in err


def test_check_json_lists_every_check(capsys):
    code, out, _ = run(capsys, "check", HANDOFF, "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["failed"] == 0
    first = data["checks"][0]
    assert set(first) >= {"file", "line", "source", "expected", "actual", "passed"}
    assert first["expected"] == {"value": 144.0, "unit": "KiB/token"}
    assert first["actual"]["value"] == pytest.approx(144)


def test_a_failing_check_exits_1(capsys, tmp_path):
    f = tmp_path / "bad.ifr"
    f.write_text("x = 2 ms\ncheck x = 3 ms\n")
    code, out, _ = run(capsys, "check", str(f))
    assert code == 1 and "✗" in out


def test_check_of_an_empty_folder_is_an_error(capsys, tmp_path):
    code, _, err = run(capsys, "check", str(tmp_path))
    assert code == 2 and "no .ifr files" in err


def test_table_formats_and_plot(capsys, tmp_path):
    f = tmp_path / "sweep.ifr"
    f.write_text("size = 1 GB\nlink = 25 GB/s\nt = size / link in ms\n"
                 "table by_size: vary size over 1 GB..4 GB by 1 GB show t\n")
    code, out, _ = run(capsys, "table", str(f), "by_size", "--format", "csv", "--plot", str(tmp_path / "t.png"))
    assert code == 0
    lines = out.strip().splitlines()
    assert lines[0] == "size [GB],t [ms]" and len(lines) == 5
    assert [float(v) for v in lines[4].split(",")] == pytest.approx([4, 160])
    assert (tmp_path / "t.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_sensitivity_plots_a_tornado(capsys, tmp_path):
    f = tmp_path / "handoff.ifr"
    f.write_text("size = 1 GB\nlink = 25 GB/s\nt = size / link in ms\n")
    code, out, _ = run(capsys, "sensitivity", str(f), "t", "--plot", str(tmp_path / "t.png"))
    assert code == 0 and "size" in out and "link" in out
    assert (tmp_path / "t.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_csv_table_of_records_and_conditions(capsys, tmp_path):
    f = tmp_path / "gpus.ifr"
    f.write_text("use hardware: a100, h100\ngpu  = a100\nbw   = gpu.hbm_bandwidth\nfast = bw > 2.5 TB/s\n"
                 "table g: vary gpu over [a100, h100] show bw, fast\n", encoding="utf-8")
    code, out, _ = run(capsys, "table", str(f), "g", "--format", "csv")
    assert code == 0
    # the datasheets' HBM bandwidths (stdlib/hardware.ifr): 2039 GB/s and 3.35 TB/s
    assert out.splitlines() == ["gpu,bw [TB/s],fast", "a100,2.039,False", "h100,3.35,True"]


def test_explain_an_input_and_a_formula(capsys):
    code, out, _ = run(capsys, "explain", HANDOFF, "kv_state")
    assert code == 0 and "kv_state = kv_token * context" in out and "1.125 GiB" in out


def test_an_if_reads_in_its_branches_unit_and_explain_writes_it_as_ifr_does(tmp_path, capsys):
    """`big = if t < 1.6 s then 8 GB else 16 GB` showed 14.9 GiB because the
    condition read a GiB cell; and explain printed sympy's Piecewise((...)).
    6 GiB / 4 GB/s is 1.61 s, so the else branch holds: 16 GB."""
    path = tmp_path / "pick.ifr"
    path.write_text("ssd = 4 GB/s\nsize = 6 GiB\nt_read = size / ssd\n"
                    "big = if t_read < 1.6 s and not ssd > 5 GB/s then 8 GB else 16 GB\n"
                    "top = max(ssd, 1 GB/s) ^ 2 / ssd\n")
    code, out, _ = run(capsys, "run", str(path))
    assert code == 0 and "big       16 GB" in out
    code, out, _ = run(capsys, "explain", str(path), "big")
    assert code == 0 and "value:       16 GB" in out
    expanded = next(line for line in out.splitlines() if line.startswith("  expanded:"))
    # 8 GB and 16 GB in bits, 1.6 s as 8/5, 5 GB/s as 4e10 bit/s; sympy orders the conditions
    assert expanded.startswith("  expanded:    if ") and " then 64000000000 else 128000000000 " in expanded
    assert sorted(expanded[18:].split(" then ")[0].split(" and ")) == ["size/ssd < 8/5", "ssd <= 40000000000"]
    assert "Piecewise" not in out and "&" not in out and "~" not in out
    code, out, _ = run(capsys, "explain", str(path), "top")
    assert code == 0 and "max(" in out and "Max" not in out and "**" not in out


def test_explain_of_a_cell_at_the_end_of_a_long_chain_says_why_it_is_not_expanded(tmp_path, capsys):
    """A script's chain of 800 formulas nests too deep for sympy: said as such
    (it printed Python's `RecursionError: maximum recursion depth exceeded`)."""
    path = tmp_path / "chain.ifr"
    path.write_text("x0 = 1 s\n" + "".join(f"x{i} = x{i - 1} + 1 ms\n" for i in range(1, 801)), encoding="utf-8")
    code, out, _ = run(capsys, "explain", str(path), "x800")
    assert code == 0 and "value:       1.8 s" in out
    expanded = next(line for line in out.splitlines() if line.startswith("  expanded:"))
    assert expanded == ("  expanded:    (not printed: it reaches 799 formulas, nested too deep to expand; "
                        "explain a cell nearer its inputs)")
    code, out, _ = run(capsys, "explain", str(path), "x3")
    assert code == 0 and "expanded:    x0 + 3/1000   [base SI units: s]" in out


def test_a_command_run_in_the_same_process_leaves_the_collector_as_it_found_it(capsys):
    """The command line turns the garbage collector off for its one model; a
    caller in the same process (a script, a test run) gets it back, or its
    cycles would pile up for the rest of the process."""
    import gc
    assert gc.isenabled()
    assert main(["run", str(Path(__file__).resolve().parent.parent / "models" / "pd_handoff.ifr")]) == 0
    assert main(["run", "no-such-file.ifr"]) == 2
    assert gc.isenabled()
    gc.disable()
    try:
        main(["run", "no-such-file.ifr"])
        assert not gc.isenabled()
    finally:
        gc.enable()
    capsys.readouterr()


@pytest.mark.parametrize("argv, status, wanted", [
    (["--help"], 0, "usage: ifr"),
    (["run", "--help"], 0, "usage: ifr run"),
    (["run", HANDOFF], 0, "t_handoff"),
    (["run", "no-such-file.ifr"], 2, "no such file"),
    ([], 2, "no command given"),
])
def test_the_command_ends_with_its_status_and_all_its_output(argv, status, wanted, tmp_path):
    """The `ifr` process ends without freeing its model: its exit status and
    every line it wrote (through a pipe, which buffers) still come out."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, IFR_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, "-m", "ifr.cli", *argv], capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.returncode == status, done.stdout + done.stderr
    assert wanted in done.stdout + done.stderr
    if argv == ["run", HANDOFF]:   # the last cell of the listing is there
        listed = [line.split()[0] for line in done.stdout.splitlines() if line.startswith("  ")]
        assert listed[-1] == json.loads(subprocess.run(
            [sys.executable, "-m", "ifr.cli", "run", HANDOFF, "--format", "json"], capture_output=True, text=True,
            env=env, timeout=120).stdout)["cells"][-1]["name"]


def test_the_language_server_runs_with_the_collector_on(monkeypatch):
    """A command turns the collector off for its one model; the language
    server lives for an editing session, dropping each analysis for the next,
    and must collect them."""
    import gc

    import ifr.lsp
    seen = []
    monkeypatch.setattr(ifr.lsp, "main", lambda args: seen.append(gc.isenabled()) or 0)
    gc.disable()
    try:
        assert main(["lsp"]) == 0
    finally:
        gc.enable()
    assert seen == [True]


def test_a_sympy_expression_is_written_back_in_ifr_syntax():
    """What explain and the editor print can be typed back into a .ifr file:
    `and`/`or`/`not` bind as ifr reads them, a Piecewise is an if/else."""
    import sympy as sp

    from ifr.solving.symbolic import ifr_text
    x, y = sp.symbols("x y")
    assert ifr_text(sp.And(sp.Or(x > 1, y > 1), x < 3)) == "x < 3 and (x > 1 or y > 1)"
    assert ifr_text(sp.Not(sp.And(x > 1, y > 1))) == "not (x > 1 and y > 1)"
    assert ifr_text(sp.Piecewise((x, x < y), (sp.log(y), x < 2 * y), (sp.ceiling(y), True))) \
        == "if x < y then x else if x < 2*y then ln(y) else ceil(y)"
    assert ifr_text(2 * sp.Piecewise((x, x < 1), (y, True))) == "2*(if x < 1 then x else y)"
    # undefined past its condition: no if/else says that
    assert ifr_text(sp.Piecewise((x, x < 1))).startswith("Piecewise(")


TABLE_WITH_BAD_ROWS = """\
bw   = 10 GB/s
size = 8 GiB
t    = size / bw
rate = 1 / t
r    = sqrt(bw - 5 GB/s)
ok   = t < 1 s
table by_bw: vary bw over [0 GB/s, 2 GB/s, 10 GB/s] show t, rate, r, ok
"""


def test_a_table_row_without_a_value_says_so_in_every_format(tmp_path, capsys):
    """A sweep is computed on arrays, which divide by zero and take roots of
    negatives without a word: t was `inf` at 0 GB/s, 1/t a plain 0 and the
    root `nan`, with exit 0. Each is an error, as `ifr run --set` says, shown
    as #ERROR (JSON null, an empty CSV field) with why, and exit 2."""
    path = tmp_path / "t.ifr"
    path.write_text(TABLE_WITH_BAD_ROWS)
    code, out, err = run(capsys, "table", str(path), "by_bw")
    assert code == 2
    rows = [line.split() for line in out.splitlines()[1:]]
    assert rows[0] == ["0", "#ERROR", "#ERROR", "#ERROR", "#ERROR"] and rows[1][2:] != ["#ERROR", "#ERROR"]
    assert rows[1][3] == "#ERROR" and "#ERROR" not in rows[2]
    assert [rows[1][4], rows[2][4]] == ["false", "true"]   # 8 GiB at 2 and 10 GB/s: 4.3 s and 0.86 s
    assert ":3:" in err and "error[division-by-zero]: table `by_bw`: `t` has no value where bw = 0 GB/s" in err
    assert "`rate` has no value where bw = 0 GB/s: `t` has none: division by zero" in err
    assert "error[domain]: table `by_bw`: `r` has no value where bw = 0 GB/s; bw = 2 GB/s: sqrt() of a negative" \
        in err
    # the rows that have values are the model's own at those inputs
    code, single, _ = run(capsys, "run", str(path), "--set", "bw=2GB/s", "--format", "json")
    cells = {c["name"]: c for c in json.loads(single)["cells"]}
    code, out, _ = run(capsys, "table", str(path), "by_bw", "--format", "json")
    table = json.loads(out, parse_constant=lambda name: pytest.fail(f"{name} in JSON"))
    assert code == 2 and table["rows"][0] == [0.0, None, None, None, None]
    assert [table["rows"][1][4], table["rows"][2][4]] == [False, True]
    from ifr.display import factor
    for k, name in ((1, "t"), (2, "rate")):   # (each in its own display unit)
        assert table["rows"][1][k] * factor(table["units"][k]) == \
            pytest.approx(cells[name]["value"] * factor(cells[name]["unit"]), rel=1e-12)
    assert table["rows"][1][3] is None
    assert {(e["row"], e["column"], e["code"]) for e in table["errors"]} == {
        (0, "t", "division-by-zero"), (0, "rate", "division-by-zero"), (0, "r", "domain"), (1, "r", "domain"),
        (0, "ok", "division-by-zero")}
    code, out, _ = run(capsys, "table", str(path), "by_bw", "--format", "csv")
    assert code == 2 and out.splitlines()[1] == "0.0,,,," and out.splitlines()[2].endswith(",,False")
    # Markdown: #ERROR in the row, and why below the table
    import ifr
    ifr.load(path).export(tmp_path / "t.md")
    markdown = (tmp_path / "t.md").read_text()
    assert "| 0 | #ERROR | #ERROR | #ERROR | #ERROR |" in markdown
    assert "#ERROR: table `by_bw`: `t` has no value where bw = 0 GB/s: division by zero" in markdown
    # the workbook's table sheet: the row without a value holds #N/A, a condition's too (it held TRUE)
    from openpyxl import load_workbook
    ifr.load(path).export(tmp_path / "t.xlsx")
    sheet = load_workbook(tmp_path / "t.xlsx")["by_bw"]
    row = next(r for r in sheet.iter_rows() if r[0].value == 0)
    assert row[0].row > 1 and [c.value for c in row[1:5]] == ["=NA()"] * 4
    assert row[1].comment.text.startswith("No value in this row: division by zero")
    import zipfile
    xml = zipfile.ZipFile(tmp_path / "t.xlsx").read("xl/worksheets/sheet2.xml").decode()
    cached = {ref: value for ref, value in re.findall(r'<c r="([B-E]\d+)"[^>]*>(?:<f>[^<]*</f>)?<v>([^<]*)</v>', xml)}
    assert [cached[f"{col}{row[0].row}"] for col in "BCDE"] == ["#N/A"] * 4


def test_a_failed_check_says_how_far_off_it_is(tmp_path, capsys):
    """`[48.3184 vs 50 ms (rounds to 50)]` read as if 48.3 rounded to 50: a
    failed check says by how much it misses and what it rounds to instead.
    1.125 GiB / 25 GB/s = 48.3184 ms: 1.682 ms (3.4%) below 50 ms."""
    path = tmp_path / "c.ifr"
    path.write_text("bw = 25 GB/s\nstate = 1.125 GiB\nt = state / bw in ms\nshare = 25%\n"
                    "check t = 50 ms\ncheck t = 49 ms within 1%\ncheck t < 40 ms\ncheck share = 30%\n"
                    "check t = 48.3 ms\n")
    code, out, _ = run(capsys, "check", str(path))
    assert code == 1
    lines = out.splitlines()
    assert lines[0].endswith("[48.3184 vs 50 ms: off by 1.682 ms (3.4%); it rounds to 48, not 50]")
    assert lines[1].endswith("[48.3184 vs 49 ms: off by 0.6816 ms (1.4%), not within 1%]")
    assert lines[2].endswith("[48.3184 ms is not < 40 ms]")
    assert lines[3].endswith("[25 vs 30%: off by 5 percentage points; it rounds to 25, not 30]")
    assert lines[4].endswith("[48.3184 vs 48.3 ms (rounds to 48.3)]")     # a check that passes: the rule it met


# --- output that cannot be written ----------------------------------------------------

def _ifr(argv, **streams):
    import subprocess
    import sys
    return subprocess.run([sys.executable, "-m", "ifr.cli", *argv], stderr=subprocess.PIPE, text=True, timeout=120,
                          **streams)


def _many_cells(tmp_path, cells):
    path = tmp_path / "plan.ifr"
    path.write_text("base = 1 GB\n" + "".join(f"c{i} = base * {i + 1}\n" for i in range(cells)), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("cells", [1, 5000], ids=["a line", "more than a buffer"])
def test_output_to_a_full_disk_is_write_failed(tmp_path, cells):
    with open("/dev/full", "w") as full:
        done = _ifr(["run", _many_cells(tmp_path, cells)], stdout=full)
    assert done.returncode == 2
    assert done.stderr == ("error[write-failed]: could not write the output: No space left on device\n"
                           "  hint: free some space, or send the output elsewhere\n")


def test_output_to_a_closed_stdout_is_write_failed(tmp_path):
    import os
    done = _ifr(["run", _many_cells(tmp_path, 1)], preexec_fn=lambda: os.close(1))   # as `ifr run plan.ifr >&-`
    assert done.returncode == 2
    assert done.stderr == ("error[write-failed]: could not write the output: standard output is closed\n"
                           "  hint: send the output to a file or a pipe that can be written\n")


def test_a_pipe_closed_by_its_reader_ends_the_command_quietly(tmp_path):
    import subprocess
    import sys
    reader = subprocess.Popen([sys.executable, "-m", "ifr.cli", "run", "--format", "json",
                               _many_cells(tmp_path, 5000)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert reader.stdout.readline() == b"{\n"     # as `| head -1`: one line read, then the pipe is closed
    reader.stdout.close()
    assert reader.wait(timeout=120) == 0
    assert reader.stderr.read() == b""


# --- options: a value given is used or refused, never taken for the default ---------------

UNCERTAIN = "bw = 4 GB/s to 6 GB/s\nt = 10 GB / bw in s\n"


@pytest.mark.parametrize("argv, message", [
    (["--samples", "0"], "argument --samples: must be between 2 and 10,000,000, got 0"),
    (["--samples", "1"], "argument --samples: must be between 2 and 10,000,000, got 1"),
    (["--samples", "-5"], "argument --samples: must be between 2 and 10,000,000, got -5"),
    (["--samples", "many"], "argument --samples: must be a whole number, got `many`"),
    (["--seed", "-1"], "argument --seed: must be a whole number >= 0, got -1"),
])
def test_a_monte_carlo_option_out_of_range_is_a_usage_error(tmp_path, capsys, argv, message):
    path = tmp_path / "u.ifr"
    path.write_text(UNCERTAIN, encoding="utf-8")
    code, out, err = run(capsys, "hist", str(path), "t", *argv)
    assert (code, out) == (2, "")
    assert err.splitlines()[0] == f"error[usage]: {message}"


def test_zero_samples_from_python_is_refused_too():
    import ifr
    from ifr.errors import IfrError
    with pytest.raises(IfrError) as info:
        ifr.analyse(Path(HANDOFF)).evaluate(samples=0)
    assert info.value.message == "--samples must be between 2 and 10,000,000, got 0"


@pytest.mark.parametrize("option", ["--plot", "--inputs-from"])
def test_an_empty_path_is_refused_not_ignored(capsys, option):
    code, _, err = run(capsys, "table", str(ROOT / "models" / "d002_kv_size.ifr"), "kv_by_model", option, "")
    assert code == 2
    assert err.startswith("error[unwritable]: cannot write .: it is a folder" if option == "--plot"
                          else "error[no-such-file]: no such workbook: .")


@pytest.mark.parametrize("value, mib", [("inf", 256), ("-inf", 256), ("nan", 256), ("-5", 256), ("lots", 256),
                                        ("0", 0), ("1.5", 1.5), ("1e3", 1000)])
def test_the_cache_cap_falls_back_to_its_default_unless_a_finite_size(monkeypatch, value, mib):
    from ifr.storage import cache
    monkeypatch.setenv("IFR_CACHE_MAX_MB", value)
    assert cache.max_bytes() == int(mib * 2**20)


def test_an_endless_cache_cap_ends_a_run_without_a_traceback(tmp_path):
    import os
    import subprocess
    import sys
    path = tmp_path / "m.ifr"
    path.write_text("x = 1 GB\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "ifr.cli", "run", str(path)], capture_output=True, text=True,
                          env={**os.environ, "IFR_CACHE_MAX_MB": "inf", "IFR_CACHE_DIR": str(tmp_path / "cache")},
                          timeout=120)
    assert (done.returncode, done.stderr) == (0, "")


def _subcommands(parser) -> list[str]:
    import argparse
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return list(sub.choices)


def test_a_command_builds_its_own_parser_only_and_help_lists_every_one():
    """`ifr run FILE` builds the one parser it uses; `ifr --help` and a mistyped
    command still list every command, in the order `COMMANDS` says."""
    from ifr.cli import COMMANDS, _parser
    assert _subcommands(_parser([])) == _subcommands(_parser(["--help"])) == list(COMMANDS)
    assert _subcommands(_parser(["rn", "m.ifr"])) == list(COMMANDS)
    for command in COMMANDS:
        assert _subcommands(_parser([command, "m.ifr"])) == [command]
    assert "export" in _parser([]).format_help() and ".xlsx" in _parser([]).format_help()


def test_a_mistyped_command_is_told_the_commands(capsys):
    assert main(["rn", "m.ifr"]) == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'rn'" in err and "'run'" in err and "'fmt'" in err


@pytest.mark.parametrize("columns", ["", "0", "50", "x", "132"])
def test_help_is_as_wide_as_shutil_says_the_terminal_is(columns, monkeypatch):
    import shutil

    from ifr.cli import _columns
    monkeypatch.setenv("COLUMNS", columns)
    assert _columns() == shutil.get_terminal_size().columns


def test_a_warm_run_imports_only_what_it_uses(tmp_path):
    """`ifr run` of a model without tables or data files, its syntax tree cached: none of
    the modules below is imported (each costs a few milliseconds of every run)."""
    import os
    import subprocess
    import sys
    path = tmp_path / "m.ifr"
    path.write_text("link = 25 GB/s\nstate = 1.125 GiB\nt_move = state / link in ms\ncheck t_move = 48.3 ms\n",
                    encoding="utf-8")
    env = dict(os.environ, IFR_CACHE_DIR=str(tmp_path / "cache"))
    script = ("import sys\nfrom ifr.cli import main\nassert main(['run', sys.argv[1]]) == 0\n"
              "print(' '.join(sorted(sys.modules)), file=sys.stderr)")
    for _ in range(2):   # the first run parses the file and caches its tree
        done = subprocess.run([sys.executable, "-c", script, str(path)], env=env, capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr
    imported = set(done.stderr.split())
    assert "ifr.model" in imported
    assert imported.isdisjoint({"shutil", "statistics", "lark", "numpy", "pint", "sympy"})
