"""Values that do not wait for sympy, and the closed forms found afterwards.

`ifr run` and `ifr check` need a solve's value, not its closed form.  With
`numeric_first()` in force, a solve whose equation has no cached entry takes
its value from the numeric search (the bracketed scan and brentq that also
cross-checks every fresh closed form) instead of waiting for sympy, and the
equation is remembered in `PENDING`.  When the process ends, one background
process asks sympy about the pending equations (under `BACKGROUND_SECONDS`,
in the worker that can be stopped) and writes what it said to the closed-form
cache, time-outs included, for the commands that show a closed form
(`explain`, `export`, the editor's hover) and for the next run.  A command
that needs the closed form and finds none cached asks sympy itself, as before.

The background process is started only when the cache folder is the one the
user asked for (a private scratch folder ends with the run), is its own
session (it outlives the command that started it; its sympy worker does not
outlive it), and receives the equations pickled on its stdin (between two
processes of this same program, never from disk).
"""
from __future__ import annotations

import os
import sys

BACKGROUND_SECONDS = 30   # nobody waits for the background search: it may take longer than a command's

PENDING: dict[str, tuple] = {}   # equation key -> (unknown, lhs, rhs, chain), not yet asked of sympy
_STATE = {"numeric_first": False, "registered": False}


class numeric_first:   # noqa: N801 (used as a function and as a context)
    """Whether a solve without a cached closed form takes the numeric root without
    asking sympy: set by the call, and, used as a context, set back after it."""

    def __init__(self, on: bool = True):
        self.before = _STATE["numeric_first"]
        _STATE["numeric_first"] = on

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        _STATE["numeric_first"] = self.before


def is_numeric_first() -> bool:
    return _STATE["numeric_first"]


def remember(key: str, question: tuple) -> None:
    """An equation whose closed form is to be found after this process."""
    PENDING[key] = question
    if not _STATE["registered"]:
        _STATE["registered"] = True
        import atexit
        atexit.register(fill_in_background)


def fill_in_background() -> bool:
    """Start the background search of the pending equations; whether it was started."""
    if not PENDING or os.environ.get("IFR_NO_BACKGROUND"):
        return False
    from ifr.storage.cache import cache_dir, refused
    folder = cache_dir()
    if refused() is not None:
        return False
    import pickle
    import subprocess
    package = __name__.rpartition(".")[0]
    env = dict(os.environ, IFR_CACHE_DIR=str(folder))
    try:
        child = subprocess.Popen([sys.executable, "-c", f"from {package}.deferral import serve; serve()"],
                                 stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 env=env, start_new_session=True)
        child.stdin.write(pickle.dumps(dict(PENDING), protocol=pickle.HIGHEST_PROTOCOL))
        child.stdin.close()
    except (OSError, pickle.PickleError):
        return False
    PENDING.clear()
    return True


def serve() -> None:
    """The background process: ask sympy about each equation on stdin and cache its answer."""
    import pickle

    from ifr.solving.closed_form_cache import ClosedFormCache, timed_out
    from ifr.solving.sympy_worker import WORKER, TimeLimit, WorkerFailed, call
    try:
        questions = pickle.loads(sys.stdin.buffer.read())
    except (OSError, EOFError, pickle.PickleError):
        return
    cache = ClosedFormCache()
    try:
        for key, (unknown, lhs, rhs, chain) in questions.items():
            entry = cache.get(key)
            if entry is not None and entry.get("timed_out", BACKGROUND_SECONDS) >= BACKGROUND_SECONDS:
                continue   # found meanwhile by a command that asked for it
            try:
                entry = call("closed_forms", unknown, lhs, rhs, chain, seconds=BACKGROUND_SECONDS)
            except TimeLimit:
                entry = timed_out(BACKGROUND_SECONDS)
            except WorkerFailed:
                continue
            cache.put(key, entry)
    finally:
        WORKER.stop()
