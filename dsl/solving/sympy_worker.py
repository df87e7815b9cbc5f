"""sympy in a separate process, under a time limit that can stop it.

A SIGALRM in the main thread is no such limit: it works only in the main
thread, it runs its handler only where the interpreter checks for signals
(CPython's own big-integer arithmetic does; C extensions such as gmpy2, which
sympy uses when installed, do not), and an exception raised at a random point
inside sympy can leave its caches half-built.  So every sympy call of the
solver and of `explain` runs in a worker process: the parent waits at most
`seconds` for the answer and kills the worker when the time is up.

The worker is started with ``python -c`` rather than through multiprocessing,
whose spawn and forkserver contexts re-import the user's ``__main__`` (a
script that calls ``ifr.load`` at top level would load itself again).  One
worker serves every call of a process; it is started on the first call and
replaced after a time-out.  Requests and answers are pickled over its
stdin/stdout (between two processes of this same program, never to disk).
"""
from __future__ import annotations

import atexit
import os
import pickle
import struct
import subprocess
import sys
import threading

WORKER_MEMORY = 4 * 2 ** 30       # bytes of address space the worker may use
START_SECONDS = 120               # importing sympy on a cold, busy machine


class TimeLimit(Exception):
    """sympy did not answer within the time limit (the worker was stopped)."""


class WorkerFailed(Exception):
    """The worker died, ran out of memory, or could not be started."""


def _functions():
    from ifr.solving import closed_form, symbolic
    return {"closed_forms": closed_form.closed_forms, "pretty_tree": symbolic.pretty_tree,
            "expanded_text": symbolic.expanded_text, "derivatives": symbolic.derivatives}


class Worker:
    """One worker process and the pipe to it."""

    def __init__(self):
        self.process: subprocess.Popen | None = None
        self.starts = 0              # how many workers this process has started
        self.lock = threading.Lock()

    def call(self, function: str, args: tuple, seconds: float):
        """``function(*args)`` in the worker; raises TimeLimit or WorkerFailed."""
        with self.lock:
            process = self._ready()
            try:
                _send(process.stdin, (function, args))
                status, value = _receive(process.stdout, seconds)
            except TimeLimit:
                self.stop()
                raise
            except (OSError, EOFError, pickle.PickleError) as exc:
                self.stop()
                raise WorkerFailed(f"the sympy worker stopped ({type(exc).__name__})") from None
            except BaseException:   # interrupted (an editor's stop): the answer is left unread, so the
                self.stop()         # next call would read it as its own; a new worker answers next
                raise
        if status == "raised":
            raise WorkerFailed(value)
        return value

    def _ready(self) -> subprocess.Popen:
        if self.process is not None and self.process.poll() is None:
            return self.process
        package = __name__.rpartition(".")[0]
        code = f"from {package}.sympy_worker import serve; serve()"
        # sympy iterates over sets of strings and expressions: a fixed hash seed
        # removes most of the run-to-run variation in what it tries first (not
        # all: some of its orderings follow object identity, so the time it
        # takes on a hard equation can still differ between runs)
        from ifr.storage.cache import cache_dir
        # The worker uses this process's cache folder: if that is a private
        # scratch folder, the worker must not make (and leave) one of its own.
        env = dict(os.environ, PYTHONHASHSEED="0", IFR_CACHE_DIR=str(cache_dir()))
        try:
            process = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        except OSError as exc:
            raise WorkerFailed(f"cannot start the sympy worker ({exc})") from None
        self.starts += 1
        try:
            status, _ = _receive(process.stdout, START_SECONDS)
        except (TimeLimit, OSError, EOFError, pickle.PickleError):
            process.kill()
            process.wait()
            raise WorkerFailed("the sympy worker did not start") from None
        except BaseException:   # interrupted while it starts: not left running, unknown to anyone
            process.kill()
            process.wait()
            raise
        if status != "ready":
            process.kill()
            process.wait()
            raise WorkerFailed("the sympy worker did not start")
        self.process = process
        return process

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            for stream in (self.process.stdin, self.process.stdout):
                try:
                    stream.close()
                except OSError:
                    pass
            self.process = None


WORKER = Worker()
atexit.register(WORKER.stop)


def start_in_background() -> threading.Thread:
    """Start the shared worker in a thread (a process that will soon need sympy: the editor's analysis
    process, whose main thread a stop may interrupt, and which should not wait seconds for sympy's
    import on an edit); a call meanwhile waits for it."""
    def start() -> None:
        with WORKER.lock:
            try:
                WORKER._ready()
            except WorkerFailed:
                return   # the call that needs it tries again, and says so
        # The kernel stops the worker when the thread that started it ends (PR_SET_PDEATHSIG follows
        # the thread, not the process): this one lives as long as the process.
        threading.Event().wait()
    thread = threading.Thread(target=start, daemon=True, name="sympy-start")
    thread.start()
    return thread


def call(function: str, *args, seconds: float):
    """``function(*args)`` (a name from the worker's table) in the shared worker."""
    return WORKER.call(function, args, seconds)


def _send(stream, message) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def _receive(stream, seconds: float):
    """One message from the worker, waiting at most ``seconds``.  The read runs in
    a thread (select() does not take pipes on Windows); after a time-out the
    caller kills the worker, which ends the read."""
    answer: dict = {}

    def read():
        try:
            answer["message"] = _read_message(stream)
        except BaseException as exc:  # handed to the waiting thread
            answer["error"] = exc
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(seconds)
    if reader.is_alive():
        raise TimeLimit()
    if "error" in answer:
        raise answer["error"]
    return answer["message"]


def _read_message(stream):
    """One length-prefixed pickled message (blocking)."""
    size = struct.unpack("<Q", _read_exactly(stream, 8))[0]
    return pickle.loads(_read_exactly(stream, size))


def _read_exactly(stream, size: int) -> bytes:
    chunks = []
    while size:
        chunk = stream.read(size)
        if not chunk:
            raise EOFError()
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def serve() -> None:
    """The worker's loop: answer requests from stdin until it closes."""
    _die_with_parent()
    try:
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (WORKER_MEMORY, WORKER_MEMORY))
    except (ImportError, ValueError, OSError):
        pass  # no limit on this platform: the time limit still stops the worker
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but answers may reach the pipe
    functions = _functions()
    # paid before the first request, outside its time limit
    import sympy  # noqa: F401

    from ifr.semantics.units import unit
    unit("s")
    _send(stdout, ("ready", None))
    while True:
        try:
            function, args = _read_message(stdin)
        except EOFError:
            return
        try:
            answer = ("ok", functions[function](*args))
        except MemoryError:
            answer = ("raised", "sympy ran out of memory")
        except RecursionError:
            answer = ("raised", "nested too deep to expand")
        except Exception as exc:  # reported to the parent, which decides
            answer = ("raised", f"{type(exc).__name__}: {exc}"[:300])
        _send(stdout, answer)


def _die_with_parent() -> None:
    """On Linux, have the kernel stop the worker when its parent dies, so that
    a long sympy call does not outlive a killed `ifr`."""
    try:
        import ctypes
        import signal
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
