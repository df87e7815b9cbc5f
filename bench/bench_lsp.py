"""Editing latency: from a `didChange` to its `publishDiagnostics`, against a fresh `ifr check`.

On the largest bundled model (by lines), a running `ifr lsp` gets 20 edits,
each a new value of one input and a fresh comment, so that no cache (parsed
files are cached on disk by their text) has seen the text; the time from
sending the change to receiving its diagnostics is measured.  The baseline
is what an editor without a server would do: run `ifr check FILE` in a fresh
process on the same file (unedited, so its parse is cached, and the package's
bytecode written beforehand: the baseline is favoured), as many times,
interleaved with the edits.  Goal: the server's
median at most 0.5x the baseline's.

Then typing: ``--keys`` keystrokes (200) at random intervals of 100-300 ms,
each one character typed at the end of the file as an incremental change
(new lines `typed_N = <a cell> * N`, half-typed most of the time).  For each
keystroke, its latency is the time until diagnostics of its text or a later
one arrive; printed are their median and maximum, the longest gap without
fresh diagnostics while an edit was waiting, whether the final text's
diagnostics arrived (they must, every time), and how many worker processes
were replaced (a stop that is honoured replaces none).

    .venv/bin/python bench/bench_lsp.py [--edits 20] [--keys 200] [--model models/x.ifr]
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import queue
import random
import re
import statistics
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


class Server:
    """`ifr lsp` in a subprocess, spoken to over stdio."""

    def __init__(self, command: list[str]):
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE)
        # its stderr is read as it comes (a full pipe would stop the server), and said if it ends early
        self.stderr: list[bytes] = []
        threading.Thread(target=lambda: self.stderr.extend(self.process.stderr), daemon=True).start()
        self.messages: queue.Queue = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.process.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            self.messages.put((time.perf_counter(), json.loads(out.read(length))))

    def send(self, method: str, params, request: bool = False) -> float:
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        if request:
            self.next_id += 1
            message["id"] = self.next_id
        body = json.dumps(message).encode("utf-8")
        sent = time.perf_counter()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()
        return sent

    def wait(self, accept) -> tuple[float, dict]:
        deadline = time.perf_counter() + 120
        while True:
            try:
                at, message = self.messages.get(timeout=0.5)
            except queue.Empty:
                if self.process.poll() is not None:
                    said = b"".join(self.stderr).decode("utf-8", "replace").strip()
                    sys.exit(f"`ifr lsp` ended (exit code {self.process.returncode}): {said}")
                if time.perf_counter() > deadline:
                    sys.exit("`ifr lsp` did not answer within 120 s")
                continue
            if accept(message):
                return at, message

    def close(self) -> None:
        self.send("shutdown", None, request=True)
        self.wait(lambda m: m.get("id") == self.next_id)
        self.send("exit", None)
        self.process.wait(timeout=10)


def largest_model() -> Path:
    return max((ROOT / "models").glob("*.ifr"), key=lambda p: len(p.read_text(encoding="utf-8").splitlines()))


def edits(text: str, count: int) -> list[str]:
    """``count`` versions of the text, each with another value of its first plain-number input and
    a comment no earlier run wrote (so that no cache has seen the text)."""
    run = uuid.uuid4().hex
    m = re.search(r"^(\w+\s*=\s*)(\d+)(\s)", text, flags=re.M)
    out = []
    for i in range(count):
        edited = text if m is None else text[: m.start(2)] + str(int(m.group(2)) + i + 1) + text[m.end(2):]
        out.append(edited + f"# edit {i} of run {run}\n")
    return out


def type_keys(server: Server, uri: str, text: str, version: int, keys: int) -> tuple[list[float], float, bool, float]:
    """Type ``keys`` characters at the end of the document (its text is ``text``, its version
    ``version - 1``), one every 100-300 ms; (latencies, longest gap, final diagnostics arrived, their delay)."""
    names = re.findall(r"^([^\W\d]\w*)\s*=", text, flags=re.M)
    typed = "".join(f"typed_{i} = {names[i % len(names)]} * {i + 2}\n" for i in range(keys))[:keys]
    server.send("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                           "contentChanges": [{"text": text}]})
    server.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"].get("version") == version)
    line, column = len(text.splitlines()), 0
    sent: list[tuple[int, float]] = []
    arrivals: list[tuple[float, int]] = []
    stop = threading.Event()
    rng = random.Random(33)

    def collect() -> None:
        while not stop.is_set():
            try:
                at, m = server.messages.get(timeout=0.05)
            except queue.Empty:
                continue
            if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri:
                arrivals.append((at, m["params"].get("version") or 0))

    reader = threading.Thread(target=collect, daemon=True)
    reader.start()
    for ch in typed:
        version += 1
        position = {"line": line, "character": column}
        sent.append((version, server.send("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"range": {"start": position, "end": position}, "text": ch}]})))
        line, column = (line + 1, 0) if ch == "\n" else (line, column + 1)
        time.sleep(rng.uniform(0.1, 0.3))
    last = time.perf_counter()
    deadline = last + 60
    while not any(v == version for _at, v in arrivals) and time.perf_counter() < deadline:
        time.sleep(0.02)
    stop.set()
    reader.join()
    final = [at for at, v in arrivals if v == version]
    latencies = []
    for v, at in sent:
        fresh = [a for a, av in arrivals if av >= v and a >= at]
        latencies.append((fresh[0] if fresh else deadline) - at)
    # a gap: from the first moment an edit was waiting to the next diagnostics, or between two diagnostics
    # while one was waiting
    times = [sent[0][1]] + sorted(a for a, _v in arrivals)
    gap = max(b - a for a, b in zip(times, times[1:])) if len(times) > 1 else deadline - sent[0][1]
    return latencies, gap, bool(final), (final[0] - last) if final else float("inf")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--edits", type=int, default=20)
    parser.add_argument("--keys", type=int, default=200)
    parser.add_argument("--model", default=None)
    args = parser.parse_args()
    model = Path(args.model).resolve() if args.model else largest_model()
    ifr = Path(sys.executable).with_name("ifr")
    command = [str(ifr)] if ifr.exists() else [sys.executable, "-m", "ifr.cli"]
    check = command + ["check", str(model), "-q"]
    # the package's bytecode written first: where PYTHONDONTWRITEBYTECODE is set, each fresh check would
    # compile every module again (some 0.3 s on a busy machine), a baseline that flatters the server
    package = importlib.util.find_spec("ifr").submodule_search_locations[0]
    subprocess.run([sys.executable, "-m", "compileall", "-q", package], stdout=subprocess.DEVNULL)
    subprocess.run(check, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # warm the caches once

    server = Server(command + ["lsp"])
    server.send("initialize", {"processId": None, "rootUri": ROOT.as_uri(), "capabilities": {}}, request=True)
    server.wait(lambda m: m.get("id") == 1)
    server.send("initialized", {})
    uri = model.as_uri()
    text = model.read_text(encoding="utf-8")
    is_diagnostics = (lambda m: m.get("method") == "textDocument/publishDiagnostics"
                      and m["params"]["uri"] == uri)
    server.send("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "ifr", "version": 1,
                                                          "text": text}})
    server.wait(is_diagnostics)

    lsp_times, check_times = [], []
    for version, new_text in enumerate(edits(text, args.edits), start=2):
        sent = server.send("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": new_text}]})
        at, message = server.wait(is_diagnostics)
        lsp_times.append(at - sent)
        start = time.perf_counter()
        subprocess.run(check, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        check_times.append(time.perf_counter() - start)
    typing = type_keys(server, uri, edits(text, 1)[0], len(edits(text, args.edits)) + 2, args.keys) \
        if args.keys else None
    server.close()

    s, b = statistics.median(lsp_times), statistics.median(check_times)
    lines = len(text.splitlines())
    print(f"model                         : {model.relative_to(ROOT)} ({lines} lines)")
    print(f"didChange -> publishDiagnostics: median {s * 1000:7.1f} ms over {len(lsp_times)} edits")
    print(f"fresh `ifr check FILE`         : median {b * 1000:7.1f} ms over {len(check_times)} runs")
    print(f"ratio server / fresh check     : {s / b:.2f}x  (goal <= 0.50x)")
    if typing is not None:
        latencies, gap, final, took = typing
        replaced = b"".join(server.stderr).count(b"replaced by a warm one")
        print(f"typing, {len(latencies)} keys at 100-300 ms   : latency median {statistics.median(latencies) * 1000:7.1f} ms,"
              f" max {max(latencies) * 1000:7.1f} ms")
        print(f"longest gap without fresh diagnostics: {gap * 1000:7.1f} ms")
        print(f"final text's diagnostics      : {'arrived' if final else 'NEVER ARRIVED'}"
              f" ({took * 1000:.1f} ms after the last key)")
        print(f"worker processes replaced     : {replaced}")
        if not final:
            sys.exit(1)


if __name__ == "__main__":
    main()
