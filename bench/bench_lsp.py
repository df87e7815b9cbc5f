"""Editing latency: from a `didChange` to its `publishDiagnostics`, against a fresh `ifr check`.

On the largest bundled model (by lines), a running `ifr lsp` gets 20 edits,
each a new value of one input and a fresh comment, so that no cache (parsed
files are cached on disk by their text) has seen the text; the time from
sending the change to receiving its diagnostics is measured.  The baseline
is what an editor without a server would do: run `ifr check FILE` in a fresh
process on the same file (unedited, so its parse is cached: the baseline is
favoured), as many times, interleaved with the edits.  Goal: the server's
median at most 0.5x the baseline's.

    .venv/bin/python bench/bench_lsp.py [--edits 20] [--model models/x.ifr]
"""
from __future__ import annotations

import argparse
import json
import queue
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--edits", type=int, default=20)
    parser.add_argument("--model", default=None)
    args = parser.parse_args()
    model = Path(args.model).resolve() if args.model else largest_model()
    ifr = Path(sys.executable).with_name("ifr")
    command = [str(ifr)] if ifr.exists() else [sys.executable, "-m", "ifr.cli"]
    check = command + ["check", str(model), "-q"]
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
    server.close()

    s, b = statistics.median(lsp_times), statistics.median(check_times)
    lines = len(text.splitlines())
    print(f"model                         : {model.relative_to(ROOT)} ({lines} lines)")
    print(f"didChange -> publishDiagnostics: median {s * 1000:7.1f} ms over {len(lsp_times)} edits")
    print(f"fresh `ifr check FILE`         : median {b * 1000:7.1f} ms over {len(check_times)} runs")
    print(f"ratio server / fresh check     : {s / b:.2f}x  (goal <= 0.50x)")


if __name__ == "__main__":
    main()
