"""A search's configurations computed on a Dask cluster (`ifr search FILE NAME
--dask ADDRESS`, or `--workers N` for a local one): consecutive ranges of them,
one task each; every worker loads the model from the file once and runs the
same vectorised chunks as the search in process, and the driver merges the
parts in order, so the result is the same configuration for configuration.

Dask is an optional extra (`pip install 'ifr[dask]'`).  The workers read the
file and the modules it uses from their own file system: the same paths must
hold the same files there (a shared file system, or one machine).
"""
from __future__ import annotations

from pathlib import Path

from ifr.errors import IfrError

MIN_PART = 1024      # configurations a task takes at least: fewer cost more to send than to compute
_MODELS: dict = {}   # in a worker: (path, text) -> the model, loaded once for every task of a search


def client_for(address: str | None, workers: int | None):
    """A Dask client of the scheduler at ``address``, or of a new local cluster of ``workers`` processes."""
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise IfrError("missing-dependency", "a search on Dask needs dask and distributed", None,
                       hint="pip install 'ifr[dask]'") from None
    if address is not None:
        try:
            return Client(address, timeout=30)
        except OSError as e:
            raise IfrError("usage", f"no Dask scheduler answers at {address}: {e}", None,
                           hint="start one with `dask scheduler`, or use --workers N for a local cluster") from None
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
    return Client(cluster)


def dask_parts(client, path: Path, text: str, name: str, per_worker: int = 4):
    """The ``parts`` of `run_search` that runs ranges of configurations as Dask tasks."""
    def parts(run, top: int):
        workers = max(1, len(client.scheduler_info().get("workers", {})))
        count = max(1, min(workers * per_worker, run.size // MIN_PART))
        bounds = [run.size * k // count for k in range(count + 1)]
        futures = client.map(search_range, [str(path)] * count, [text] * count, [name] * count, [top] * count,
                             bounds[:-1], bounds[1:], pure=False)
        return client.gather(futures)
    return parts


def search_range(path: str, text: str, name: str, top: int, begin: int, end: int):
    """A worker's task: configurations ``begin`` to ``end`` of search ``name`` of the model in ``path``."""
    from ifr.model import load
    from ifr.queries.search import prepare_search, search_part
    key = (path, text)
    model = _MODELS.get(key)
    if model is None:
        _MODELS.clear()
        model = _MODELS[key] = load(path, text)
    return search_part(prepare_search(model, name), begin, end, top)
