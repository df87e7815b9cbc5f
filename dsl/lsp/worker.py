"""The process that runs analyses, so that a slow one can be stopped.

A formula can take minutes (`max(f(n) for n in 1..n_max)` while the user is
typing the digits of `n_max`), and a thread cannot be interrupted; a process
can.  The server sends (path, text, buffers) and receives a Result, which is
plain data.  When a newer text is waiting and the running analysis has
taken longer than ``PATIENCE`` seconds, the server replaces the process.
"""
from __future__ import annotations

import multiprocessing
import os
import sys
import threading
import time

from ifr.lsp.analysis import Result

PATIENCE = 0.5


def _serve(connection) -> None:
    """The worker's loop: analyse each request until the pipe closes."""
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # stdout is the server's channel to the editor
    from ifr.lsp.analysis import analyse
    while True:
        try:
            path, text, buffers = connection.recv()
        except (EOFError, OSError):
            return
        connection.send(analyse(path, text, buffers))


class Stopped(Exception):
    """The analysis was stopped because a newer text is waiting."""


class AnalysisWorker:
    """One analysis process at a time, used from one thread at a time."""

    def __init__(self):
        self.context = multiprocessing.get_context("spawn")
        self.lock = threading.Lock()
        self.started_at: float | None = None    # when the running analysis began, None when idle
        self._start()

    def _start(self) -> None:
        if getattr(self, "process", None) is not None:
            self.process.join(timeout=5)   # reap the stopped one
        self.connection, child = self.context.Pipe()
        self.process = self.context.Process(target=_serve, args=(child,), daemon=True, name="ifr-analysis")
        self.process.start()
        child.close()

    def analyse(self, path: str, text: str, buffers: dict[str, str]) -> Result:
        """Run one analysis in the worker process (blocking); raises Stopped if it was stopped."""
        with self.lock:
            if not self.process.is_alive():
                self._start()
            connection = self.connection
            self.started_at = time.monotonic()
            try:
                connection.send((path, text, buffers))
                return connection.recv()
            except (EOFError, OSError, BrokenPipeError):
                raise Stopped() from None
            finally:
                self.started_at = None

    def stop_if_slow(self) -> bool:
        """Stop the running analysis if it has run longer than PATIENCE; whether it did."""
        started = self.started_at
        if started is None or time.monotonic() - started < PATIENCE:
            return False
        self.process.kill()
        return True

    def close(self) -> None:
        self.process.kill()
