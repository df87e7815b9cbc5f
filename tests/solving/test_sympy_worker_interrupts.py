"""The sympy worker under interruption: a call cut short (an editor's stop raises in the main
thread) leaves no answer to be read by the next call, and a worker started from a thread (the
editor's analysis process starts it so) stays up after the start."""
from __future__ import annotations

import time

from ifr.solving import sympy_worker


def _printed(name: str) -> str:
    return sympy_worker.call("pretty_tree", ["sym", "x"], {"x": name}, seconds=120)


def test_a_call_cut_short_leaves_nothing_for_the_next_one(monkeypatch):
    assert _printed("first") == "first"
    receive = sympy_worker._receive

    def cut_short(stream, seconds):
        time.sleep(0.5)   # the answer is on its way
        raise KeyboardInterrupt()

    monkeypatch.setattr(sympy_worker, "_receive", cut_short)
    try:
        _printed("second")
    except KeyboardInterrupt:
        pass
    else:
        raise AssertionError("the call was not cut short")
    monkeypatch.setattr(sympy_worker, "_receive", receive)
    assert _printed("third") == "third"   # not the answer meant for the call cut short


def test_a_worker_started_from_a_thread_outlives_the_start():
    sympy_worker.WORKER.stop()
    thread = sympy_worker.start_in_background()
    deadline = time.monotonic() + 120
    while sympy_worker.WORKER.process is None and time.monotonic() < deadline:
        time.sleep(0.05)
    process = sympy_worker.WORKER.process
    assert process is not None
    time.sleep(0.5)
    assert process.poll() is None and thread.is_alive()   # not stopped when its start was done
    assert _printed("y") == "y" and sympy_worker.WORKER.process is process
