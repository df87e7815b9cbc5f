"""A record alias (`gpu = h100`) lists only the fields the model reads, in every output
that lists cells (the run listing, JSON, the workbook), not a second copy of the record."""
from __future__ import annotations

import json

from oracle import cli

MODEL = """\
use hardware: h100
gpu = h100
t = 1 GB / gpu.hbm_bandwidth in ms
check gpu.hbm_capacity > 40 GB
"""


def test_an_alias_lists_the_fields_the_model_reads(tmp_path):
    path = tmp_path / "main.ifr"
    path.write_text(MODEL, encoding="utf-8")
    code, out, err = cli(["run", str(path), "--format", "json"])
    assert code == 0, err
    names = [c["name"] for c in json.loads(out)["cells"]]
    # read by t and by the check; h100 has six fields (tdp, nvlink_bandwidth, ... are not read)
    assert sorted(n for n in names if n.startswith("gpu.")) == ["gpu.hbm_bandwidth", "gpu.hbm_capacity"]
    assert sorted(n for n in names if "h100" in n) == ["hardware.h100.hbm_bandwidth", "hardware.h100.hbm_capacity"]
    assert cli(["check", str(path)])[0] == 0


def test_the_listing_shows_an_aliased_field_once_under_the_alias(tmp_path):
    path = tmp_path / "main.ifr"
    path.write_text(MODEL + "u = h100.tdp * 2\n", encoding="utf-8")
    code, out, err = cli(["run", str(path)])
    assert code == 0, err
    lines = out.splitlines()
    heading = lines.index("gpu = h100 (from hardware)")
    assert lines[heading + 1].split()[:3] == ["gpu.hbm_bandwidth", "3.35", "TB/s"]
    # the capacity an H100 reports, 81559 MiB = 81559 / 1024 GiB = 79.65 GiB
    assert f"{81559 / 1024:.4g}" == "79.65"
    assert lines[heading + 2].split()[:3] == ["gpu.hbm_capacity", "79.65", "GiB"]
    listed = [line.split()[0] for line in lines if line.startswith("  ")]
    # h100's bandwidth and capacity are shown once, as the alias's; its tdp, which u reads
    # itself, under the module it comes from
    assert "hardware.h100.hbm_bandwidth" not in listed and "hardware.h100.hbm_capacity" not in listed
    assert "hardware.h100.tdp" in listed and listed.count("gpu.hbm_bandwidth") == 1
