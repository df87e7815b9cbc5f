"""The unit registry: information and compute are dimensions, the field's spellings work."""
from __future__ import annotations

import pytest
from helpers import error, model

from ifr.semantics.units import Dim, unit


def test_information_is_a_dimension():
    _, gib = unit("GiB")
    assert gib == Dim({"[information]": 1})
    assert not gib.dimensionless


def test_binary_and_decimal_prefixes_differ():
    assert unit("GiB")[0] / unit("GB")[0] == pytest.approx(2 ** 30 / 1e9)
    assert unit("KiB")[0] == 1024 * unit("B")[0]
    assert unit("KB")[0] == 1000 * unit("B")[0]


@pytest.mark.parametrize("text,bits_per_second", [
    ("Gbit/s", 1e9), ("Gb/s", 1e9), ("Gbps", 1e9), ("GB/s", 8e9), ("GBps", 8e9), ("Mbps", 1e6),
])
def test_the_fields_spellings_of_bandwidth(text, bits_per_second):
    f, d = unit(text)
    assert f == pytest.approx(bits_per_second)
    assert d == Dim({"[information]": 1, "[time]": -1})


def test_flops_are_their_own_dimension():
    f, d = unit("TFLOPS")
    assert f == pytest.approx(1e12)
    assert d == unit("TFLOP/s")[1] == Dim({"[compute]": 1, "[time]": -1})
    assert d != unit("GB/s")[1]


@pytest.mark.parametrize("name", ["token", "request", "req", "GPU", "step", "batch", "layer", "expert"])
def test_counting_units_are_dimensions(name):
    assert not unit(name)[1].dimensionless


def test_a_gib_plus_one_is_an_error(tmp_path):
    e = error(tmp_path, "x = 1 GiB + 1\n")
    assert e.code == "unit-mismatch"
    assert "[information]" in e.message and "dimensionless" in e.message


def test_bandwidth_does_not_convert_to_hertz(tmp_path):
    assert error(tmp_path, "x = 25 GB/s in Hz\n").code == "display-unit"


def test_kib_per_token_times_tokens_is_bytes(tmp_path):
    m = model(tmp_path, "kv = 144 KiB/token\nctx = 8192 token\nstate = kv * ctx in GiB\n")
    assert m.value("state") == pytest.approx(1.125)


def test_requests_and_tokens_do_not_add(tmp_path):
    assert error(tmp_path, "x = 3 request/s + 5 token/s\n").code == "unit-mismatch"


def test_only_unit_text_reaches_pint():
    """pint's parser would evaluate `9**9**9` for ever; ifr hands it unit atoms only."""
    from ifr.errors import IfrError
    for text in ("9**9**9", "m**9**9", "2*m", "m+s", "(m"):
        with pytest.raises(IfrError):
            unit(text)


def test_a_power_after_a_unit_is_ifrs_own_arithmetic(tmp_path):
    m = model(tmp_path, "x = (3 m**9)**2\n")  # a power of a quantity literal is bracketed
    assert m.values["x"] == pytest.approx(9.0)
    assert str(m.dims["x"]) == "[length]^18"


def test_cells_shadow_units(tmp_path):
    m = model(tmp_path, "B = 4\nC = B * 2\n")
    assert m.value("C") == 8


def test_a_single_letter_unit_fallback_warns(tmp_path):
    m = model(tmp_path, "x = 3 * B\n")
    assert m.value("x") == 3
    assert m.units["x"] == "B"
    assert [w.code for w in m.warnings] == ["unit-fallback"]


@pytest.mark.parametrize("value,unit_text,expected", [
    ("1.41 GB/s", None, "GB/s"), ("0.0483 s", None, "ms"), ("680e-6 s", None, "µs"),
    ("3.05 request/s", None, "request/s"), ("989e12 FLOP/s", None, "TFLOP/s"),
])
def test_readable_default_units(tmp_path, value, unit_text, expected):
    m = model(tmp_path, f"x = {value}\ny = x * 1\n")
    assert m.units["y"] == expected


def test_binary_inputs_give_binary_display(tmp_path):
    m = model(tmp_path, "kv = 144 KiB/token\nctx = 8192 token\nstate = kv * ctx\n")
    assert m.units["state"] == "GiB"
    assert m.value("state") == pytest.approx(1.125)


def _next_run(monkeypatch, units):
    """The unit lookups as a new process starts them (the cache folder kept)."""
    monkeypatch.setattr(units, "_LOOKUPS", units._Lookups())
    units._digest.cache_clear()


def test_a_warm_run_reads_its_units_from_the_cache_alone(tmp_path, monkeypatch):
    """The first run of a model answers its units from the shipped table and keeps
    them with the digest of the definitions; the next reads neither the shipped
    table (270 kB of JSON) nor pint's definitions (to hash them), and answers the same."""
    from ifr.semantics import units
    from ifr.storage.cache import cache_dir
    monkeypatch.setenv("IFR_CACHE_DIR", str(tmp_path / "cache"))
    cache_dir.cache_clear()
    try:
        _next_run(monkeypatch, units)
        first = units._LOOKUPS.get("GB/s"), units._LOOKUPS.get("ms"), units.is_unit("node")
        assert first == ((8e9, Dim({"[information]": 1, "[time]": -1})), (1e-3, Dim({"[time]": 1})), False)
        units._LOOKUPS.save()
        _next_run(monkeypatch, units)
        monkeypatch.setattr(units, "UNIT_TABLE", tmp_path / "no-such-table.json")
        monkeypatch.setattr(units, "_definitions", lambda: pytest.fail("the definitions were read"))
        assert (units._LOOKUPS.get("GB/s"), units._LOOKUPS.get("ms"), units.is_unit("node")) == first
        assert not units._LOOKUPS.shipped_read
    finally:
        units._digest.cache_clear()
        cache_dir.cache_clear()


def test_the_digest_is_made_again_when_a_definitions_file_changes(tmp_path, monkeypatch):
    from ifr.semantics import units
    from ifr.storage.cache import cache_dir
    monkeypatch.setenv("IFR_CACHE_DIR", str(tmp_path / "cache"))
    cache_dir.cache_clear()
    mine = tmp_path / "units.txt"
    mine.write_text(units._UNITS_FILE.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setattr(units, "_UNITS_FILE", mine)
    try:
        made = []
        real = units._definitions.__wrapped__
        monkeypatch.setattr(units, "_definitions", lambda: made.append(1) or real())
        for _ in range(2):
            units._digest.cache_clear()
            before = units._digest()
        assert len(made) == 1
        mine.write_text(mine.read_text(encoding="utf-8") + "\nglorp = 3 * byte\n", encoding="utf-8")
        units._digest.cache_clear()
        assert units._digest() != before and len(made) == 2
    finally:
        units._digest.cache_clear()
        cache_dir.cache_clear()
