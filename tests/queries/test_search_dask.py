"""A search on a two-worker Dask cluster gives what the search in process gives."""
from __future__ import annotations

from pathlib import Path

import pytest

import ifr
from ifr.queries.search import run_search

pytest.importorskip("distributed")

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "models" / "pd_config_search.ifr"


@pytest.fixture(scope="module")
def client():
    from dask.distributed import Client, LocalCluster
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    made = Client(cluster)
    yield made
    made.close()
    cluster.close()


def test_the_search_and_the_front_are_the_same_on_two_workers(client):
    from ifr.search_dask import dask_parts
    model = ifr.load(MODEL)
    parts = dask_parts(client, MODEL, MODEL.read_text(encoding="utf-8"), "best")
    here, there = run_search(model, "best", 20), run_search(model, "best", 20, parts=parts)
    assert there.size == here.size == 4 * 4 * 32 * 32 * 14
    assert there.top == here.top and len(here.top) == 20
    assert [c.excluded for c in there.conditions] == [c.excluded for c in here.conditions]
    assert (there.feasible, there.no_value) == (here.feasible, here.no_value)
    seen = []
    parts_front = dask_parts(client, MODEL, MODEL.read_text(encoding="utf-8"), "front")

    def counted(run, top):   # the front of 7,168 configurations comes back in parts, merged in order
        found = parts_front(run, top)
        seen.append(len(found))
        return found
    front_here, front_there = run_search(model, "front"), run_search(model, "front", parts=counted)
    assert front_there.top == front_here.top and len(front_here.top) == 14
    assert seen == [7]
