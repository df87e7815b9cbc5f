"""The processes that run analyses: one warm at work, one warm in reserve.

A formula can take minutes (`max(f(n) for n in 1..n_max)` while the user is
typing the digits of `n_max`), and a thread cannot be interrupted; a process
can.  The server sends (ticket, path, text, buffers) and receives first
(ticket, DIAGNOSTICS, a Result of only the diagnostics), as soon as the text is checked and
evaluated, then (ticket, RESULT, Result or None): the diagnostics are what an
edit waits for, the rest (cells, symbols, occurrences: a third of the time) is
read only by requests.  A Result is plain data.  When a newer text is waiting
by the time the diagnostics arrive, the server says so (``finish_early``) and
the process skips the rest and answers None: while someone types, each text
costs only its diagnostics, and the latest one its whole result.

Stopping is cooperative first: when a newer text is waiting and the running
analysis has taken longer than its patience (``PATIENCE`` seconds, or twice
the median time of the last analyses if that is longer: an analysis about
to finish is worth its diagnostics, the server publishes them), the server names that
analysis's ticket in a shared value and sends the process SIGINT; the
process's handler raises only if the named ticket is the one it is running
(so a late signal never stops the next analysis), the analysis unwinds, the
process answers None and stays warm, its imports and in-process caches (the
parsed trees of unchanged modules) kept.  Only if it has not answered within
``GRACE`` seconds (stuck in a long C call) is it killed; then the reserve,
started and warmed beforehand, takes its place at once and a new reserve warms
in the background, so an edit never waits for a cold process.
"""
from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import statistics
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable

from ifr.lsp.analysis import Result

logger = logging.getLogger(__name__)

PATIENCE = 0.5
GRACE = 2.0
# What the process sends: (ticket, kind, payload)
READY, DIAGNOSTICS, RESULT = "ready", "diagnostics", "result"
_WARM_TEXT = "use hardware: a100\nx = 2 GB\ny = x / a100.hbm_bandwidth in ms\ncheck y > 0 s\n"


class _Interrupted(BaseException):
    """Raised in the worker by SIGINT when the analysis it runs is the one the server stopped."""


def _serve(connection, cancelled) -> None:
    """The worker's loop: warm up, then analyse each request until the pipe closes."""
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # stdout is the server's channel to the editor
    running = [0]

    def interrupt(_signum, _frame):
        if running[0] and cancelled.value == running[0]:
            running[0] = 0   # once: the unwinding is not interrupted again
            raise _Interrupted()

    signal.signal(signal.SIGINT, interrupt)
    from ifr.lsp.analysis import Staged, analyse, warm_units
    try:   # import the engine and load its tables now, not on the first keystroke
        analyse(os.path.join(tempfile.gettempdir(), "ifr-warm-up.ifr"), _WARM_TEXT, {})
        # and pint's registry, which a name that is no unit needs (`typed_0 = pri`): built here, before
        # the process is ready, it costs no keystroke 1-2 s (built when idle, it delayed the request
        # that came meanwhile)
        warm_units()
    except Exception:   # a warm-up is no request: whatever it meets is met again, and reported, on one
        pass
    connection.send((0, READY, None))
    sympy_started = False
    while True:
        try:
            ticket, path, text, buffers = connection.recv()
        except (EOFError, OSError):
            return
        if not sympy_started:   # a reserve that never works starts none
            # sympy (a solve's closed form) is imported in its own process, seconds on a busy machine:
            # started from a thread, which no stop interrupts (a start cut short was begun again on the
            # next edit, and cut short again while someone typed)
            from ifr.solving import sympy_worker
            sympy_worker.start_in_background()
            sympy_started = True
        running[0] = ticket
        result = None
        try:
            staged = Staged(path, text, buffers)
            running[0] = 0   # a message is not cut in half: a stop asked meanwhile is seen just below
            connection.send((ticket, DIAGNOSTICS, staged.early()))   # what the edit waits for, first
            running[0] = ticket
            if cancelled.value != ticket:   # not if a newer text is waiting: only its diagnostics are
                result = staged.result(stop=lambda: cancelled.value == ticket)
                if cancelled.value == ticket:
                    result = None   # nor sent
        except _Interrupted:
            result = None
        finally:
            running[0] = 0
        connection.send((ticket, RESULT, result))


class Stopped(Exception):
    """The analysis was stopped because a newer text is waiting."""


class _Process:
    """One worker process and its end of the pipe."""

    def __init__(self, context):
        self.cancelled = context.Value("q", 0, lock=False)
        self.connection, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(child, self.cancelled), daemon=True,
                                       name="ifr-analysis")
        self.process.start()
        child.close()
        self.ready = False

    def wait_ready(self, timeout: float | None) -> bool:
        """Whether the process has finished warming up (waits up to ``timeout`` seconds)."""
        if not self.ready and self.connection.poll(timeout):
            try:
                self.connection.recv()
                self.ready = True
            except (EOFError, OSError):
                return False
        return self.ready

    def kill(self) -> None:
        self.process.kill()
        self.process.join(timeout=5)   # reap it: no defunct process is left


class AnalysisWorker:
    """The working process and its warm reserve, used from one thread at a time (``analyse``);
    ``stop_if_slow`` may be called from another."""

    def __init__(self):
        self.context = multiprocessing.get_context("spawn")
        self.lock = threading.Lock()        # one analysis at a time
        self.state = threading.Lock()       # guards the fields below
        self.started_at: float | None = None    # when the running analysis began, None when idle
        self.ticket = 0                     # the running analysis's, 0 when idle
        self.diagnosed = 0                  # the last analysis whose diagnostics were taken
        self.interrupted_at: float | None = None
        self.restarts = 0                   # processes killed (a cooperative stop is no restart)
        self.stops = 0                      # analyses stopped cooperatively
        self.durations: deque[float] = deque(maxlen=5)   # of the last analyses that finished
        self.current = _Process(self.context)
        self.reserve: _Process | None = None

    def _ensure_reserve(self) -> None:
        if self.reserve is None or not self.reserve.process.is_alive():
            self.reserve = _Process(self.context)

    def _replace(self) -> None:
        """Kill the working process; the reserve takes its place and a new reserve starts."""
        self.restarts += 1
        logger.warning("an analysis did not stop when asked; its process is replaced by a warm one")
        old = self.current
        self._ensure_reserve()
        self.current, self.reserve = self.reserve, None
        old.kill()
        self._ensure_reserve()

    def analyse(self, path: str, text: str, buffers: dict[str, str],
                on_diagnostics: Callable[[int, Result], None] | None = None) -> Result:
        """Run one analysis in the worker process (blocking); raises Stopped if it was stopped.
        ``on_diagnostics(ticket, diagnostics)`` is called (in this thread) as soon as the
        diagnostics arrive, before the rest of the result (``finish_early(ticket)`` then
        lets the process skip the rest)."""
        with self.lock:
            if not self.current.process.is_alive():
                with self.state:
                    self._replace()
            process = self.current
            try:
                process.wait_ready(None)   # warming up is not the analysis's time: it is not stopped for it
                with self.state:
                    self.ticket += 1
                    ticket = self.ticket
                    self.started_at, self.interrupted_at = time.monotonic(), None
                process.connection.send((ticket, path, text, buffers))
                while True:
                    answer_ticket, kind, result = process.connection.recv()
                    if answer_ticket != ticket:
                        continue   # the end of an analysis stopped before this one
                    if kind == RESULT:
                        break
                    if on_diagnostics is not None:
                        with self.state:
                            self.diagnosed = ticket
                        on_diagnostics(ticket, result)
            except (EOFError, OSError, BrokenPipeError):
                raise Stopped() from None
            finally:
                with self.state:
                    if self.started_at is not None and self.interrupted_at is None:
                        self.durations.append(time.monotonic() - self.started_at)
                    self.started_at = None
            if self.reserve is None:   # after the first analysis, not competing with it
                with self.state:
                    self._ensure_reserve()
            if result is None:
                raise Stopped()
            return result

    def finish_early(self, ticket: int | None = None) -> bool:
        """The analysis ``ticket`` (by default the running one, if its diagnostics were taken) need send
        nothing after its diagnostics (a newer text is waiting): the process skips the rest, at the next
        step (its answer is None, and ``analyse`` raises Stopped); whether it was told now (once: a step
        that runs long is then stopped as any analysis is, by ``stop_if_slow``)."""
        with self.state:
            ticket = self.diagnosed if ticket is None else ticket
            if self.ticket == ticket and self.started_at is not None and self.interrupted_at is None \
                    and self.current.cancelled.value != ticket:
                self.current.cancelled.value = ticket
                return True
            return False

    def patience(self) -> float:
        """How long an analysis of an outdated text may run before it is asked to stop."""
        return max(PATIENCE, 2 * statistics.median(self.durations)) if self.durations else PATIENCE

    def stop_if_slow(self) -> bool:
        """Stop the running analysis if it has run longer than PATIENCE: ask it to stop, and kill its
        process if it has not within GRACE seconds of being asked; whether it did either."""
        with self.state:
            started = self.started_at
            now = time.monotonic()
            if started is None or now - started < self.patience():
                return False
            if self.interrupted_at is None:
                self.interrupted_at = now
                self.stops += 1
                self.current.cancelled.value = self.ticket
                try:
                    os.kill(self.current.process.pid, signal.SIGINT)
                except (ProcessLookupError, TypeError):
                    pass
                return True
            if now - self.interrupted_at >= GRACE:
                self._replace()   # the waiting analyse() sees its pipe closed: Stopped
                self.started_at = None
                return True
            return False

    def close(self) -> None:
        for process in (self.current, self.reserve):
            if process is not None:
                process.kill()
