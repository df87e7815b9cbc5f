"""Every `table` of the models reproduces the rows the documents print.

ifr has no syntax to check one row of a table, so the models check their
rows through functions of the varied value; these tests check the tables
themselves, `ifr.load(...).table(NAME)`, against the printed figures, each
at the precision it is printed with (the figures are the documents', typed
here as text, not ifr's output).
"""
from __future__ import annotations

from pathlib import Path

import pytest

import ifr

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "models"


def half_step(printed: str) -> float:
    """Half a unit in the last printed digit: '13.4' -> 0.05, '216' -> 0.5."""
    decimals = len(printed.split(".")[1]) if "." in printed else 0
    return 0.5 * 10.0 ** -decimals


def assert_printed(actual: float, printed: str, where: str) -> None:
    """``actual`` rounds to ``printed`` at its printed precision (both ends allowed)."""
    tol = half_step(printed) * (1 + 1e-9)
    assert abs(actual - float(printed)) <= tol, f"{where}: {actual:.6g} does not round to {printed}"


def rows_by_key(result, key_format=str) -> dict:
    """The table's rows as {varied value: {column: value}}, each column in its unit."""
    out = {}
    for row in result.rows:
        key = row[0] if isinstance(row[0], str) else key_format(row[0])
        out[key] = dict(zip(result.columns[1:], row[1:]))
    return out


def check_table(path: Path, table: str, units: dict, printed: dict, key_format=str) -> None:
    """Compare every printed cell of ``table`` with the table ifr computes.

    ``units``: column -> the unit the document prints it in (the test fails if
    the model shows the column in another unit, rather than converting silently).
    ``printed``: row key -> {column: printed text}; each row key must be a row.
    """
    result = ifr.load(path).table(table)
    shown = dict(zip(result.columns, result.units))
    for column, unit in units.items():
        assert shown.get(column) == unit, f"{table}.{column} is shown in {shown.get(column)!r}, the document in {unit!r}"
    rows = rows_by_key(result, key_format)
    assert set(printed) <= set(rows), f"{table}: rows {sorted(rows)} lack {sorted(set(printed) - set(rows))}"
    for key, cells in printed.items():
        for column, text in cells.items():
            assert_printed(float(rows[key][column]), text, f"{table}[{key}].{column}")


def test_the_precision_helper_can_fail():
    """A row one printed digit off must fail, or the tests below prove nothing."""
    assert_printed(216.48, "216.5", "ok")
    with pytest.raises(AssertionError):
        assert_printed(216.48, "216.4", "off by one digit")
    with pytest.raises(AssertionError):
        assert_printed(214.75, "216", "3.125 GB/s instead of 3.1")


# --- Document 002 (PD disaggregation) -----------------------------------------

def test_d002_kv_by_model():
    """002 §4.1 table (and the §9 output at one decimal)."""
    units = {"kv_token": "KiB/token", "kv_ctx_128k": "GiB"}
    check_table(MODELS / "d002_kv_size.ifr", "kv_by_model", units, {
        "llama8": {"kv_token": "128", "kv_ctx_128k": "16"},
        "llama70": {"kv_token": "320", "kv_ctx_128k": "40"},
        "ds3_mla": {"kv_token": "68.6", "kv_ctx_128k": "8.6"},
    })
    check_table(MODELS / "d002_kv_size.ifr", "kv_by_model", units, {
        "llama8": {"kv_token": "128.0", "kv_ctx_128k": "16.0"},
        "llama70": {"kv_token": "320.0", "kv_ctx_128k": "40.0"},
    })


def test_d002_transfer_by_link():
    """002 §4.2 table: bandwidth, handoff of 640 MiB, overhead over the 91 ms prefill."""
    units = {"link_bw": "GB/s", "t_transfer": "ms", "overhead_vs_prefill": "%"}
    check_table(MODELS / "d002_kv_transfer.ifr", "transfer_by_link", units, {
        "nvlink": {"link_bw": "900", "t_transfer": "0.7", "overhead_vs_prefill": "1"},
        "ib_ndr_400g": {"link_bw": "50", "t_transfer": "13.4", "overhead_vs_prefill": "15"},
        "pcie5": {"link_bw": "50", "t_transfer": "13.4", "overhead_vs_prefill": "15"},
        "eth_100g": {"link_bw": "12.5", "t_transfer": "53.7", "overhead_vs_prefill": "59"},
        "eth25": {"link_bw": "3.1", "t_transfer": "216", "overhead_vs_prefill": "239"},
    })
    # §9 prints the same rows with one decimal of milliseconds
    check_table(MODELS / "d002_kv_transfer.ifr", "transfer_by_link", units, {
        "nvlink": {"t_transfer": "0.7"},
        "ib_ndr_400g": {"t_transfer": "13.4"},
        "pcie5": {"t_transfer": "13.4"},
        "eth_100g": {"t_transfer": "53.7"},
        "eth25": {"t_transfer": "216.5"},
    })


def test_d002_traffic_vs_qps():
    """002 §9 "QPS q -> x GB/s"."""
    check_table(MODELS / "d002_kv_traffic.ifr", "traffic_vs_qps", {"kv_traffic": "GB/s"}, {
        5: {"kv_traffic": "3.4"},
        10: {"kv_traffic": "6.7"},
        30: {"kv_traffic": "20.1"},
        60: {"kv_traffic": "40.3"},
    }, key_format=lambda v: round(v))


def test_d002_pd_vs_output():
    """002 §5.3 table and §9 output: throughputs, TPOT and P:D per output length."""
    units = {"tpot": "ms", "pre_rps": "request/s", "dec_rps": "request/s", "d_per_p": "", "p_per_d": ""}
    check_table(MODELS / "d002_pd_ratio.ifr", "pd_vs_output", units, {
        256: {"tpot": "12.0", "pre_rps": "11.0", "dec_rps": "20.8", "d_per_p": "0.5", "p_per_d": "1.9"},
        1024: {"tpot": "12.0", "pre_rps": "11.0", "dec_rps": "5.2", "d_per_p": "2.1"},
        4096: {"tpot": "12.0", "pre_rps": "11.0", "dec_rps": "1.3", "d_per_p": "8.5"},
    }, key_format=lambda v: round(v))


def test_d002_exposed_by_link():
    """002 §4.4: streaming layer by layer leaves the last layer's transfer, 13.4/80 ≈ 0.2 ms on IB."""
    check_table(MODELS / "d002_layer_pipelining.ifr", "exposed_by_link",
                {"t_layer_transfer": "ms", "t_exposed": "ms"}, {
        "ib_ndr_400g": {"t_layer_transfer": "0.2", "t_exposed": "0.2"},
    })
