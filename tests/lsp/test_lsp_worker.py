"""The analysis worker: a slow analysis of an old text is stopped cooperatively (its process
stays, warm), a process that does not stop is replaced by a warm reserve and reaped, and
the server always analyses the latest text."""
from __future__ import annotations

import threading
import time

import pytest

from ifr.lsp.analysis import analyse
from ifr.lsp.worker import AnalysisWorker, Stopped

SLOW = "n_max = 3000000\nbest = max(n * (n_max - n) + sqrt(n) for n in 1..n_max)\n"
QUICK = "a = 3 GB\nb = a * 2\n"


@pytest.fixture
def worker():
    w = AnalysisWorker()
    yield w
    w.close()


def _value(result, name):
    return next(c.value for c in result.cells.values() if c.name == name)


def test_an_analysis_gives_what_it_gives_in_process(worker, tmp_path):
    path = str(tmp_path / "m.ifr")
    assert _value(worker.analyse(path, QUICK, {}), "b") == _value(analyse(path, QUICK, {}), "b") == 6


def test_a_slow_analysis_is_stopped_and_its_process_stays_warm(worker, tmp_path):
    path = str(tmp_path / "m.ifr")
    worker.analyse(path, QUICK, {})   # warm
    pid = worker.current.process.pid
    outcome = []

    def slow():
        try:
            outcome.append(worker.analyse(path, SLOW, {}))
        except Stopped:
            outcome.append("stopped")

    thread = threading.Thread(target=slow)
    thread.start()
    while worker.started_at is None or time.monotonic() - worker.started_at < 0.6:
        time.sleep(0.05)
    deadline = time.monotonic() + 30
    while thread.is_alive() and time.monotonic() < deadline:
        worker.stop_if_slow()
        time.sleep(0.05)
    thread.join()
    assert outcome == ["stopped"]
    assert worker.stops >= 1
    assert worker.restarts == 0   # stopped by asking, not killed: the same process, warm, answers next
    assert worker.current.process.pid == pid
    assert _value(worker.analyse(path, QUICK.replace("3 GB", "4 GB"), {}), "b") == 8


def test_a_replaced_process_is_reaped_and_the_reserve_answers(worker, tmp_path):
    path = str(tmp_path / "m.ifr")
    worker.analyse(path, QUICK, {})
    old = worker.current.process
    with worker.state:
        worker._ensure_reserve()
        reserve = worker.reserve.process
        worker._replace()
    assert not old.is_alive() and old.exitcode is not None   # killed and joined: no defunct process
    assert worker.current.process is reserve
    assert worker.reserve is not None and worker.reserve.process.is_alive()
    assert _value(worker.analyse(path, QUICK, {}), "b") == 6


def test_the_diagnostics_arrive_before_the_rest_and_are_the_results(worker, tmp_path):
    path = str(tmp_path / "m.ifr")
    text = "a = 3 GB\nb = a + 2 s\nc = nope * 2\n"   # a dimension error and an unknown name
    early = []
    result = worker.analyse(path, text, {}, on_diagnostics=lambda ticket, found: early.append(found))
    assert len(early) == 1
    assert sorted(d.code for d in early[0].diagnostics) == sorted(d.code for d in result.diagnostics)
    assert early[0].diagnostics == result.diagnostics == analyse(path, text, {}).diagnostics
    assert len(result.diagnostics) == 2
    assert early[0].texts == result.texts and early[0].cells == {}   # only what the diagnostics need


def test_an_analysis_told_after_its_diagnostics_skips_the_rest(worker, tmp_path):
    path = str(tmp_path / "m.ifr")
    worker.analyse(path, QUICK, {})
    pid = worker.current.process.pid
    early = []

    def told(ticket, found):
        early.append(found)
        worker.finish_early(ticket)

    many = QUICK + "".join(f"c{i} = b * {i}\n" for i in range(1500))   # its cells take a while to describe
    with pytest.raises(Stopped):
        worker.analyse(path, many, {}, on_diagnostics=told)
    assert len(early) == 1 and early[0].diagnostics == []
    assert worker.restarts == 0 and worker.current.process.pid == pid   # the same process answers next
    assert _value(worker.analyse(path, QUICK.replace("3 GB", "4 GB"), {}), "b") == 8
