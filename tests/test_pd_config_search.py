"""models/pd_config_search.ifr against a brute force in plain Python: the same
speed-of-light arithmetic, every configuration in the order written."""
from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

import ifr
from ifr.cli import main

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "models" / "pd_config_search.ifr"
BATCHES = [1, 2, 4, 8, 16, 32, 48, 64, 96, 128, 192, 256, 384, 512]

FLOPS, MFU, HBM_BW, BW_EFF, HBM = 989e12, 0.40, 3.35e12, 0.35, 80e9
PARAMS, PROMPT, OUT = 70e9, 2048, 1024
KV_BYTES = 2 * 80 * 8 * 128 * 2 * PROMPT   # K and V, 80 layers, 8 KV heads of 128, BF16: one request


def configuration(tp_p, tp_d, n_p, n_d, batch):
    ttft = 2 * PARAMS * PROMPT / (FLOPS * tp_p * MFU)
    mem_p = (PARAMS + KV_BYTES) / tp_p
    mem_d = (PARAMS + batch * KV_BYTES) / tp_d
    tpot = mem_d / (HBM_BW * BW_EFF)
    rate = min(n_p / ttft, n_d * batch / (tpot * OUT))
    gpus = n_p * tp_p + n_d * tp_d
    return {"ttft": ttft, "tpot": tpot, "mem_p": mem_p, "mem_d": mem_d, "gpus": gpus,
            "tok_per_gpu": rate * OUT / gpus, "tok_per_user": 1 / tpot}


def brute_best():
    best = None
    for key in itertools.product([1, 2, 4, 8], [1, 2, 4, 8], range(1, 33), range(1, 33), BATCHES):
        c = configuration(*key)
        if c["ttft"] <= 0.2 and c["tpot"] <= 0.02 and c["gpus"] <= 32 and c["mem_p"] <= HBM and c["mem_d"] <= HBM:
            if best is None or c["tok_per_gpu"] > best[1]["tok_per_gpu"] * (1 + 1e-11):
                best = (key, c)
    return best


def brute_front():
    points = []
    for key in itertools.product([4, 8], [1, 2, 4, 8], range(1, 9), range(1, 9), BATCHES):
        c = configuration(*key)
        if c["ttft"] <= 0.2 and c["gpus"] <= 32 and c["mem_p"] <= HBM and c["mem_d"] <= HBM:
            points.append((round(c["tok_per_gpu"], 6), round(c["tok_per_user"], 6), key))
    front = set()
    for a, b, _key in points:
        if not any(x >= a and y >= b and (x, y) != (a, b) for x, y, _ in points):
            front.add((a, b))
    return front


@pytest.fixture(scope="module")
def model():
    return ifr.load(MODEL)


def test_the_optimum_is_the_brute_forces(model):
    key, c = brute_best()
    assert key == (4, 8, 3, 2, 128)
    best = model.scenario("best")
    found = tuple(int(best.value(best.cell_id(n))) for n in ("tp_p", "tp_d", "n_p", "n_d", "batch"))
    assert found == key
    assert best["tok_per_gpu"].to("token/s/GPU").magnitude == pytest.approx(c["tok_per_gpu"], rel=1e-12)
    assert best["tpot"].to("s").magnitude == pytest.approx(c["tpot"], rel=1e-12)
    assert all(check.passed for check in model.check())


def test_the_front_is_the_brute_forces(capsys):
    assert main(["search", str(MODEL), "front", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    found = {(round(r[5], 3), round(r[6], 3)) for r in rows}   # tok_per_gpu, tok_per_user after the five varied
    assert found == {(round(a, 3), round(b, 3)) for a, b in brute_front()}
